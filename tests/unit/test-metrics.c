#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <string.h>

#include "metrics/kv.h"

static int64_t get(struct json_object *o, const char *k)
{
	struct json_object *v;
	if (!json_object_object_get_ex(o, k, &v))
		fail_msg("missing key %s", k);
	return json_object_get_int64(v);
}

static void test_vmstat_meminfo_numastat(void **state)
{
	struct json_object *vm, *mi, *ns;
	struct vn_error err = {0};

	assert_int_equal(vn_metrics_parse_kv("nr_free_pages 1234\nnuma_pages_migrated 51203\nbogus\n", &vm, &err), 0);
	assert_int_equal(get(vm, "numa_pages_migrated"), 51203);
	assert_int_equal(get(vm, "nr_free_pages"), 1234);
	assert_int_equal(json_object_object_length(vm), 2);
	assert_int_equal(
		vn_metrics_parse_kv("Node 1 MemTotal:         262144 kB\nNode 1 HugePages_Total:     0\n", &mi, &err),
		0);
	assert_int_equal(get(mi, "MemTotal_kB"), 262144);
	assert_int_equal(get(mi, "HugePages_Total"), 0);
	assert_int_equal(vn_metrics_parse_kv("numa_hit 10\nnuma_miss 2\n", &ns, &err), 0);
	struct json_object *ns2;
	assert_int_equal(vn_metrics_parse_kv("numa_hit 15\nnuma_miss 2\nother 1\n", &ns2, &err), 0);
	struct json_object *d = vn_metrics_delta(ns, ns2);
	assert_int_equal(get(d, "numa_hit"), 5);
	assert_int_equal(get(d, "numa_miss"), 0);
	assert_int_equal(json_object_object_length(d), 2);
	json_object_put(vm);
	json_object_put(mi);
	json_object_put(ns);
	json_object_put(ns2);
	json_object_put(d);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_vmstat_meminfo_numastat),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
