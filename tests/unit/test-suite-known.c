/* The known-failure list: its file, kernel versions and ranges, and what a match does to verdicts. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "suite-testutil.h"
#include "suite/known.h"
#include "suite/suite.h"
#include "util/cleanup.h"

static const char *const list = "{\"known_failures\": [\n"
				" {\"test\": \"move_pages04\", \"kernels\": \">=4.3 <6.12\",\n"
				"  \"reason\": \"status of the zero page is EFAULT, not ENOENT, on >= 4.3 < 6.12\"},\n"
				" {\"test\": \"selftests: vm: *:hugetlb_*\", \"reason\": \"no hugepages\"}\n"
				"]}";

static void test_kver(void **state)
{
	(void)state;
	static const struct {
		const char *s;
		unsigned v[3];
	} good[] = {
		{"6.1.0-28-amd64", {6, 1, 0}}, {"6.12-rc3", {6, 12, 0}},          {"4.3", {4, 3, 0}},
		{"5.15.167", {5, 15, 167}},    {"6.18.44-fc-v1272", {6, 18, 44}}, {"6.1.0.7", {6, 1, 0}},
	};
	for (size_t i = 0; i < sizeof(good) / sizeof(good[0]); i++) {
		struct vn_kver k;
		assert_int_equal(vn_kver_parse(good[i].s, &k), 0);
		assert_memory_equal(k.v, good[i].v, sizeof(k.v));
	}
	static const char *const bad[] = {"", "6", "6.", "v6.1", "x", "6.-1", "99999999999.1", NULL};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		struct vn_kver k;
		assert_int_equal(vn_kver_parse(bad[i], &k), -EINVAL);
	}
	struct vn_kver a, b;
	vn_kver_parse("6.1.0", &a);
	vn_kver_parse("6.12", &b);
	assert_true(vn_kver_cmp(&a, &b) < 0); /* numbers, not strings */
	assert_true(vn_kver_cmp(&b, &a) > 0);
	vn_kver_parse("6.1", &b);
	assert_int_equal(vn_kver_cmp(&a, &b), 0);
}

static void test_match(void **state)
{
	(void)state;
	_cleanup_known_ struct vn_known k = {0};
	struct vn_error err = {0};

	assert_int_equal(vn_known_parse(list, "k.json", &k, &err), 0);
	assert_int_equal(k.n, 2);
	assert_non_null(vn_known_match(&k, "move_pages04", "6.1.0-28-amd64"));
	assert_non_null(vn_known_match(&k, "move_pages04", "4.3.0"));
	assert_null(vn_known_match(&k, "move_pages04", "4.2.8"));
	assert_null(vn_known_match(&k, "move_pages04", "6.12.0"));
	assert_null(vn_known_match(&k, "move_pages04", "6.12-rc1"));
	assert_non_null(vn_known_match(&k, "move_pages04", "6.11.11"));
	assert_null(vn_known_match(&k, "move_pages04", "garbage")); /* a range never matches what does not parse */
	assert_null(vn_known_match(&k, "move_pages041", "6.1.0"));  /* whole names */
	assert_non_null(vn_known_match(&k, "selftests: vm: hugetlb:hugetlb_madvise", "garbage"));
	assert_null(vn_known_match(&k, "selftests: vm: hugetlb:migration", "6.1.0"));
}

static void test_apply(void **state)
{
	(void)state;
	_cleanup_known_ struct vn_known k = {0};
	_cleanup_suite_run_ struct vn_suite_run run = {0};
	struct vn_error err = {0};
	const char *out = "TAP version 13\n1..3\nnot ok 1 move_pages04\nok 2 other\nnot ok 3 third\n";

	assert_int_equal(vn_known_parse(list, "k.json", &k, &err), 0);
	vn_suite_ktap_parse(out, strlen(out), "s", NULL, &run);
	assert_int_equal(vn_suite_run_exit(&run), 1);
	assert_int_equal(vn_known_apply(&k, "6.1.0-28-amd64", &run), 1);
	suite_expect(&run, "move_pages04", VN_SUITE_XFAIL, NULL);
	assert_string_equal(suite_find(&run, "move_pages04")->known, k.e[0].reason);
	suite_expect(&run, "third", VN_SUITE_FAIL, NULL);
	assert_null(suite_find(&run, "third")->known);

	/* The same list on a kernel where it passes, as it should: an unexpected pass, reported, not a failure. */
	vn_suite_run_free(&run);
	const char *fixed = "TAP version 13\n1..1\nok 1 move_pages04\n";
	vn_suite_ktap_parse(fixed, strlen(fixed), "s", NULL, &run);
	assert_int_equal(vn_known_apply(&k, "6.11.0", &run), 1);
	suite_expect(&run, "move_pages04", VN_SUITE_XPASS, NULL);
	assert_int_equal(vn_suite_run_exit(&run), 0);
	/* Outside its kernels the entry does nothing. */
	vn_suite_run_free(&run);
	vn_suite_ktap_parse(out, strlen(out), "s", NULL, &run);
	assert_int_equal(vn_known_apply(&k, "6.12.1", &run), 0);
	assert_int_equal(vn_suite_run_exit(&run), 1);
}

/* Bad lists: exit 2, naming the file, the JSON path and the value. */
static void test_bad(void **state)
{
	(void)state;
	static const struct {
		const char *text, *want;
	} bad[] = {
		{"[]", "k.json: $: expected"},
		{"{}", "k.json: $: missing required key \"known_failures\""},
		{"{\"known_failures\": [], \"x\": 1}", "k.json: $"},
		{"{\"known_failures\": {}}", "k.json: $.known_failures: expected"},
		{"{\"known_failures\": [{\"test\": \"a\"}]}", "$.known_failures[0]: missing required key \"reason\""},
		{"{\"known_failures\": [{\"test\": \"\", \"reason\": \"r\"}]}", "$.known_failures[0].test"},
		{"{\"known_failures\": [{\"test\": \"a\", \"reason\": \"r\", \"kernel\": \"6.1\"}]}",
		 "$.known_failures[0]"},
		{"{\"known_failures\": [{\"test\": \"a\", \"reason\": \"r\"}, {\"test\": \"b\", \"reason\": \"r\", "
		 "\"kernels\": \">=4.3 <6.x\"}]}",
		 "k.json: $.known_failures[1].kernels: expected kernel versions such as \">=4.3 <6.12\" (at most 4 "
		 "bounds), got \">=4.3 <6.x\""},
		{"{\"known_failures\": [{\"test\": \"a\", \"reason\": \"r\", \"kernels\": \"6.1\"}]}", "got \"6.1\""},
		{"{\"known_failures\": [{\"test\": \"a\", \"reason\": \"r\", \"kernels\": \">1.1 >1.2 >1.3 >1.4 "
		 ">1.5\"}]}",
		 ".kernels: expected"},
		{"{\"known_failures\": [{\"test\": \"a\", \"reason\": \"r\", \"kernels\": 6.1}]}",
		 ".kernels: expected"},
		{"{\"known_failures\": [", "k.json:1:"},
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		_cleanup_known_ struct vn_known k = {0};
		struct vn_error err = {0};
		assert_true(vn_known_parse(bad[i].text, "k.json", &k, &err) < 0);
		assert_int_equal(err.kind, VN_ERR_INPUT);
		if (!strstr(err.msg, bad[i].want))
			fail_msg("[%zu] \"%s\" lacks \"%s\"", i, err.msg, bad[i].want);
		assert_int_equal(k.n, 0);
		vn_error_clear(&err);
	}
}

static void test_load(void **state)
{
	(void)state;
	char path[] = "/tmp/vn-known-XXXXXX";
	int fd = mkstemp(path);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, list, strlen(list)), (ssize_t)strlen(list));
	close(fd);
	_cleanup_known_ struct vn_known k = {0};
	struct vn_error err = {0};
	assert_int_equal(vn_known_load(path, &k, &err), 0);
	assert_int_equal(k.n, 2);
	unlink(path);
	assert_true(vn_known_load(path, &k, &err) < 0);
	assert_int_equal(err.kind, VN_ERR_INPUT);
	vn_error_clear(&err);
}

/* The shipped list (scenarios/known/ltp-6.1.json): move_pages04 is known on Debian's 6.1 and 6.11, not on 6.12 or 4.2. */
static void test_shipped_ltp(void **state)
{
	(void)state;
	const char *src = getenv("VN_SOURCE_DIR");
	char path[4096];
	_cleanup_known_ struct vn_known k = {0};
	struct vn_error err = {0};

	snprintf(path, sizeof(path), "%s/scenarios/known/ltp-6.1.json", src ? src : ".");
	if (vn_known_load(path, &k, &err) < 0)
		fail_msg("%s", err.msg);
	assert_non_null(vn_known_match(&k, "move_pages04", "6.1.0-28-amd64"));
	assert_non_null(vn_known_match(&k, "move_pages04", "6.11.9"));
	assert_null(vn_known_match(&k, "move_pages04", "6.12.0"));
	assert_null(vn_known_match(&k, "move_pages04", "4.2.8"));
	assert_null(vn_known_match(&k, "move_pages03", "6.1.0-28-amd64"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_kver), cmocka_unit_test(test_match), cmocka_unit_test(test_apply),
		cmocka_unit_test(test_bad),  cmocka_unit_test(test_load),  cmocka_unit_test(test_shipped_ltp),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
