#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdlib.h>
#include <errno.h>
#include <string.h>

#include "util/cleanup.h"
#include "util/parse.h"

static void test_cpulist_ok(void **state)
{
	struct vn_cpuset s;
	struct vn_error err = {0};

	assert_int_equal(vn_cpulist_parse("0-3,8,10-11", &s, &err), 0);
	assert_int_equal(vn_cpuset_count(&s), 7);
	assert_true(vn_cpuset_has(&s, 0) && vn_cpuset_has(&s, 3) && vn_cpuset_has(&s, 8) && vn_cpuset_has(&s, 11));
	assert_false(vn_cpuset_has(&s, 4) || vn_cpuset_has(&s, 9));
	_cleanup_free_ char *f = vn_cpulist_format(&s);
	assert_string_equal(f, "0-3,8,10-11");

	assert_int_equal(vn_cpulist_parse("", &s, &err), 0);
	assert_int_equal(vn_cpuset_count(&s), 0);
	assert_int_equal(vn_cpuset_first(&s), -1);
	assert_int_equal(vn_cpulist_parse("5", &s, &err), 0);
	assert_int_equal(vn_cpuset_first(&s), 5);
	assert_int_equal(vn_cpuset_last(&s), 5);
}

static void test_cpulist_bad(void **state)
{
	static const char *const bad[] = {"3-1", "1,,2", "a", "1-", "-1", "1,1", "0-2,2", "4096", "1 2", "1,"};
	for (size_t i = 0; i < VN_ARRAY_SIZE(bad); i++) {
		struct vn_cpuset s;
		struct vn_error err = {0};
		assert_int_not_equal(vn_cpulist_parse(bad[i], &s, &err), 0);
		assert_int_equal(err.kind, VN_ERR_INPUT);
		assert_non_null(strstr(err.msg, bad[i]));
	}
}

static void test_size(void **state)
{
	uint64_t b;
	struct vn_error err = {0};
	char buf[32];

	assert_int_equal(vn_size_parse("512M", &b, &err), 0);
	assert_true(b == 512ull << 20);
	assert_int_equal(vn_size_parse("1G", &b, &err), 0);
	assert_true(b == 1ull << 30);
	assert_int_equal(vn_size_parse("64KiB", &b, &err), 0);
	assert_true(b == 64ull << 10);
	assert_int_equal(vn_size_parse("0", &b, &err), 0);
	assert_true(b == 0);
	assert_string_equal(vn_size_format(1536ull << 20, buf, sizeof(buf)), "1536M");
	assert_string_equal(vn_size_format(2ull << 30, buf, sizeof(buf)), "2G");

	static const char *const bad[] = {"-1M", "12X", "G", "", "1.5G", "99999999999999999999", "17179869184G",
					  "1M junk"};
	for (size_t i = 0; i < VN_ARRAY_SIZE(bad); i++) {
		struct vn_error e = {0};
		assert_int_not_equal(vn_size_parse(bad[i], &b, &e), 0);
		assert_int_equal(e.kind, VN_ERR_INPUT);
	}
}

static void test_error_first_wins(void **state)
{
	struct vn_error err = {0};

	vn_input_error(&err, "first %d", 1);
	vn_infra_error(&err, -EIO, "second");
	assert_string_equal(err.msg, "first 1");
	vn_error_prefix(&err, "ctx");
	assert_string_equal(err.msg, "ctx: first 1");
	assert_int_equal(err.kind, VN_ERR_INPUT);
	vn_error_clear(&err);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_cpulist_ok),
		cmocka_unit_test(test_cpulist_bad),
		cmocka_unit_test(test_size),
		cmocka_unit_test(test_error_first_wins),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
