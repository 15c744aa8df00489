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
	double d = -1;
	assert_int_equal(vn_metrics_counter_delta(ns, ns2, "numa_hit", &d), VN_DELTA_OK);
	assert_float_equal(d, 5, 0);
	assert_int_equal(vn_metrics_counter_delta(ns, ns2, "numa_miss", &d), VN_DELTA_OK);
	assert_float_equal(d, 0, 0);
	json_object_put(vm);
	json_object_put(mi);
	json_object_put(ns);
	json_object_put(ns2);
}

static struct json_object *kv(const char *text)
{
	struct json_object *o;
	struct vn_error err = {0};

	assert_int_equal(vn_metrics_parse_kv(text, &o, &err), 0);
	return o;
}

/* The one delta the judge (scenario/assert.c) and the recorded metrics (scenario/observe.c) both take. */
static void test_counter_delta_edges(void **state)
{
	struct json_object *b = kv("up 10\nback 100\nonly_before 1\nbig 9007199254740993\n");
	struct json_object *a = kv("up 15\nback 40\nonly_after 2\nbig 9007199254740995\n");
	double d = 42;

	/* A counter that went back (a wrap, or a kernel resetting it) is a negative delta, not skipped. */
	assert_int_equal(vn_metrics_counter_delta(b, a, "back", &d), VN_DELTA_OK);
	assert_float_equal(d, -60, 0);
	assert_int_equal(vn_metrics_counter_delta(b, a, "up", &d), VN_DELTA_OK);
	assert_float_equal(d, 5, 0);
	/* Beyond 2^53 a difference of doubles would say 4: the int64 one is exact. */
	assert_int_equal(vn_metrics_counter_delta(b, a, "big", &d), VN_DELTA_OK);
	assert_float_equal(d, 2, 0);
	/* An int64 difference that overflows is a rounded double, never undefined. */
	json_object_object_add(b, "max", json_object_new_int64(INT64_MIN));
	json_object_object_add(a, "max", json_object_new_int64(INT64_MAX));
	assert_int_equal(vn_metrics_counter_delta(b, a, "max", &d), VN_DELTA_OK);
	assert_float_equal(d, 18446744073709551616.0, 0);

	/* Missing on one side or both: said which, *out untouched. */
	d = 42;
	assert_int_equal(vn_metrics_counter_delta(b, a, "only_before", &d), VN_DELTA_BEFORE_ONLY);
	assert_int_equal(vn_metrics_counter_delta(b, a, "only_after", &d), VN_DELTA_AFTER_ONLY);
	assert_int_equal(vn_metrics_counter_delta(b, a, "nowhere", &d), VN_DELTA_NEITHER);
	assert_int_equal(vn_metrics_counter_delta(NULL, a, "up", &d), VN_DELTA_AFTER_ONLY);
	assert_int_equal(vn_metrics_counter_delta(b, NULL, "up", &d), VN_DELTA_BEFORE_ONLY);
	assert_int_equal(vn_metrics_counter_delta(NULL, NULL, "up", &d), VN_DELTA_NEITHER);

	/* Not an integer on either side (no snapshot of ours makes one): refused, not read as 0. */
	json_object_object_add(a, "text", json_object_new_string("12"));
	json_object_object_add(b, "text", json_object_new_int(1));
	json_object_object_add(a, "real", json_object_new_int(3));
	json_object_object_add(b, "real", json_object_new_double(1.5));
	assert_int_equal(vn_metrics_counter_delta(b, a, "text", &d), VN_DELTA_NOT_INT);
	assert_int_equal(vn_metrics_counter_delta(b, a, "real", &d), VN_DELTA_NOT_INT);
	assert_float_equal(d, 42, 0);
	json_object_put(a);
	json_object_put(b);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_vmstat_meminfo_numastat),
		cmocka_unit_test(test_counter_delta_edges),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
