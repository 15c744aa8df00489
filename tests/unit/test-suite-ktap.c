/*
 * KTAP/TAP into per-test verdicts: kselftest's recorded output
 * (tests/fixtures/suite), every directive, nesting by spaces and by "# ",
 * broken plans, bail outs, how the process ended, and hostile input.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdlib.h>
#include <string.h>

#include "suite-testutil.h"
#include "suite/suite.h"
#include "util/cleanup.h"

static const struct vn_suite_exit exit0 = {VN_SUITE_EXITED, 0};

static void parse(const char *text, const struct vn_suite_exit *ex, struct vn_suite_run *run)
{
	vn_suite_ktap_parse(text, strlen(text), "suite", ex, run);
}

static void test_recorded_harness(void **state)
{
	(void)state;
	_cleanup_suite_run_ struct vn_suite_run run = {0};
	size_t len;
	_cleanup_free_ char *out = suite_fixture("kselftest-core-close_range.ktap", &len);

	vn_suite_ktap_parse(out, len, "core", &exit0, &run);
	assert_int_equal(run.n, 8);
	suite_expect(&run, "selftests: core: close_range_test:global.core_close_range", VN_SUITE_PASS, NULL);
	suite_expect(&run, "selftests: core: close_range_test:global.close_range_bitmap_corruption", VN_SUITE_PASS,
		     NULL);
	assert_int_equal(vn_suite_run_exit(&run), 0);
}

static void test_recorded_sigaltstack(void **state)
{
	(void)state;
	_cleanup_suite_run_ struct vn_suite_run run = {0};
	size_t len;
	_cleanup_free_ char *out = suite_fixture("kselftest-sigaltstack.ktap", &len);

	vn_suite_ktap_parse(out, len, "sigaltstack", &exit0, &run);
	assert_int_equal(run.n, 3);
	suite_expect(&run, "selftests: sigaltstack: sas:sigaltstack is still SS_AUTODISARM after signal", VN_SUITE_PASS,
		     NULL);
}

/* kcmp_test plans 3 and prints no result line: its Totals line and its parent's "ok" stand for it. */
static void test_recorded_totals_only(void **state)
{
	(void)state;
	_cleanup_suite_run_ struct vn_suite_run run = {0};
	size_t len;
	_cleanup_free_ char *out = suite_fixture("kselftest-kcmp.ktap", &len);

	vn_suite_ktap_parse(out, len, "kcmp", &exit0, &run);
	assert_int_equal(run.n, 1);
	suite_expect(&run, "selftests: kcmp: kcmp_test", VN_SUITE_PASS, NULL);

	/* The same block without its Totals line: a plan of 3 with none reported. */
	vn_suite_run_free(&run);
	parse("TAP version 13\n1..1\n# TAP version 13\n# 1..3\n# PASS: 0\nok 1 kcmp\n", &exit0, &run);
	suite_expect(&run, "kcmp", VN_SUITE_ERROR, "planned 3 tests, 0 reported");
	assert_int_equal(vn_suite_run_exit(&run), 3);
}

static void test_recorded_timeout(void **state)
{
	(void)state;
	_cleanup_suite_run_ struct vn_suite_run run = {0};
	size_t len;
	_cleanup_free_ char *out = suite_fixture("kselftest-timers-timeout.ktap", &len);

	vn_suite_ktap_parse(out, len, "timers", &exit0, &run);
	suite_expect(&run, "selftests: timers: nanosleep:CLOCK_REALTIME", VN_SUITE_PASS, NULL);
	suite_expect(&run, "selftests: timers: nanosleep", VN_SUITE_TIMEOUT, "3 seconds; planned 12 tests, 1 reported");
	suite_expect(&run, "selftests: timers: posix_timers", VN_SUITE_TIMEOUT, "3 seconds");
	assert_int_equal(run.n, 3);
	assert_int_equal(vn_suite_run_exit(&run), 3);
}

static void test_directives(void **state)
{
	(void)state;
	_cleanup_suite_run_ struct vn_suite_run run = {0};

	parse("KTAP version 1\n1..9\nok 1 plain\nnot ok 2 broken_thing\nok 3 skipped # SKIP no NUMA\n"
	      "not ok 4 - todo_fail # TODO not yet\nok 5 todo_pass # TODO not yet\nok 6 xf # XFAIL known\n"
	      "not ok 7 slow # TIMEOUT 45 seconds\nnot ok 8 err # error could not open\n"
	      "not ok 9 odd # exit=1\n",
	      NULL, &run);
	assert_int_equal(run.n, 9);
	suite_expect(&run, "plain", VN_SUITE_PASS, NULL);
	suite_expect(&run, "broken_thing", VN_SUITE_FAIL, NULL);
	suite_expect(&run, "skipped", VN_SUITE_SKIP, "no NUMA");
	suite_expect(&run, "todo_fail", VN_SUITE_XFAIL, "not yet");
	suite_expect(&run, "todo_pass", VN_SUITE_XPASS, "not yet");
	suite_expect(&run, "xf", VN_SUITE_XFAIL, "known");
	suite_expect(&run, "slow", VN_SUITE_TIMEOUT, "45 seconds");
	suite_expect(&run, "err", VN_SUITE_ERROR, "could not open");
	suite_expect(&run, "odd", VN_SUITE_FAIL, "exit=1");
}

/* kselftest.h's own lines: a skip with no description, ksft_exit_skip's "1..0 # SKIP". */
static void test_kselftest_forms(void **state)
{
	(void)state;
	_cleanup_suite_run_ struct vn_suite_run run = {0};

	parse("TAP version 13\n1..2\nok 1 # SKIP needs 2 nodes\nnot ok 2 # error mmap failed\n", NULL, &run);
	suite_expect(&run, "test 1", VN_SUITE_SKIP, "needs 2 nodes");
	suite_expect(&run, "test 2", VN_SUITE_ERROR, "mmap failed");

	vn_suite_run_free(&run);
	parse("TAP version 13\n1..0 # SKIP must be run as root\n", &(struct vn_suite_exit){VN_SUITE_EXITED, 4}, &run);
	assert_int_equal(run.n, 1);
	suite_expect(&run, "suite", VN_SUITE_SKIP, "must be run as root");

	vn_suite_run_free(&run);
	parse("TAP version 13\n1..1\n# selftests: vm: migration\n# 1..0 # SKIP Not enough threads or NUMA nodes\n"
	      "ok 1 selftests: vm: migration # SKIP\n",
	      &exit0, &run);
	suite_expect(&run, "selftests: vm: migration", VN_SUITE_SKIP, "Not enough threads");
}

/* ktap.rst's own example: two-space levels, three deep; only leaves are tests. */
static void test_nested_spaces(void **state)
{
	(void)state;
	_cleanup_suite_run_ struct vn_suite_run run = {0};

	parse("KTAP version 1\n1..1\n  KTAP version 1\n  1..3\n    KTAP version 1\n    1..1\n"
	      "    # test_1: initializing test_1\n    ok 1 test_1\n  ok 1 example_test_1\n"
	      "    KTAP version 1\n    1..2\n    ok 1 test_1 # SKIP test_1 skipped\n    ok 2 test_2\n"
	      "  ok 2 example_test_2\n    KTAP version 1\n    1..3\n    ok 1 test_1\n    # test_2: FAIL\n"
	      "    not ok 2 test_2\n    ok 3 test_3 # SKIP test_3 skipped\n  not ok 3 example_test_3\n"
	      "not ok 1 main_test\n",
	      &(struct vn_suite_exit){VN_SUITE_EXITED, 1}, &run);
	assert_int_equal(run.n, 6);
	suite_expect(&run, "main_test:example_test_1:test_1", VN_SUITE_PASS, NULL);
	suite_expect(&run, "main_test:example_test_2:test_1", VN_SUITE_SKIP, "test_1 skipped");
	suite_expect(&run, "main_test:example_test_3:test_2", VN_SUITE_FAIL, NULL);
	assert_string_equal(suite_find(&run, "main_test:example_test_3:test_2")->detail, "test_2: FAIL");
	assert_int_equal(vn_suite_run_exit(&run), 1);
}

/* Four-space levels (older KUnit), and a parent whose failure its subtests do not explain. */
static void test_nested_four_and_parent(void **state)
{
	(void)state;
	_cleanup_suite_run_ struct vn_suite_run run = {0};

	parse("TAP version 14\n1..2\n    # Subtest: a\n    1..2\n    ok 1 x\n    ok 2 y\nnot ok 1 a\n"
	      "    1..1\n    ok 1 z\nok 2 b\n",
	      NULL, &run);
	assert_int_equal(run.n, 4);
	suite_expect(&run, "a:x", VN_SUITE_PASS, NULL);
	suite_expect(&run, "a", VN_SUITE_FAIL, NULL);
	suite_expect(&run, "b:z", VN_SUITE_PASS, NULL);
}

static void test_broken_plans(void **state)
{
	(void)state;
	_cleanup_suite_run_ struct vn_suite_run run = {0};

	parse("KTAP version 1\n1..5\nok 1 a\nok 2 b\nnot ok 3 c\n", NULL, &run);
	suite_expect(&run, "c", VN_SUITE_FAIL, NULL);
	suite_expect(&run, "suite", VN_SUITE_ERROR, "planned 5 tests, 3 reported");
	assert_int_equal(vn_suite_run_exit(&run), 3);

	/* A trailing plan that its results keep is fine; no output at all is no pass. */
	vn_suite_run_free(&run);
	parse("ok 1 a\nok 2 b\n1..2\n", &exit0, &run);
	assert_int_equal(run.n, 2);
	assert_int_equal(vn_suite_run_exit(&run), 0);
	vn_suite_run_free(&run);
	parse("Segmentation fault\n", &exit0, &run);
	suite_expect(&run, "suite", VN_SUITE_ERROR, "no KTAP or TAP results");

	/* Subtests whose parent's result line never came: the output was cut. */
	vn_suite_run_free(&run);
	parse("TAP version 13\n1..2\nok 1 first\n# 1..2\n# ok 1 half\n", &(struct vn_suite_exit){VN_SUITE_SIGNALED, 9},
	      &run);
	suite_expect(&run, "test 2:half", VN_SUITE_PASS, NULL);
	suite_expect(&run, "test 2", VN_SUITE_ERROR, "planned 2 tests, 1 reported");
	suite_expect(&run, "suite", VN_SUITE_ERROR, "killed by signal 9");
}

static void test_bail_out(void **state)
{
	(void)state;
	_cleanup_suite_run_ struct vn_suite_run run = {0};

	/* In a nested block (ksft_exit_fail_msg under runner.sh): that block broke, the next test runs. */
	parse("TAP version 13\n1..2\n# 1..3\n# ok 1 one\n# Bail out! cannot mmap\nnot ok 1 t1 # exit=1\n"
	      "# 1..1\n# ok 1 fine\nok 2 t2\n",
	      &exit0, &run);
	suite_expect(&run, "t1:one", VN_SUITE_PASS, NULL);
	suite_expect(&run, "t1", VN_SUITE_ERROR, "Bail out! cannot mmap");
	suite_expect(&run, "t2:fine", VN_SUITE_PASS, NULL);

	/* At the top: nothing after it is read. */
	vn_suite_run_free(&run);
	parse("TAP version 13\n1..3\nok 1 a\nBail out! no disk\nok 2 b\nok 3 c\n", &exit0, &run);
	assert_int_equal(run.n, 2);
	suite_expect(&run, "suite", VN_SUITE_ERROR, "Bail out! no disk");
}

/* How the process ended, where its results do not say it. */
static void test_exit_status(void **state)
{
	(void)state;
	_cleanup_suite_run_ struct vn_suite_run run = {0};
	const char *all_ok = "TAP version 13\n1..1\nok 1 a\n";

	parse(all_ok, &(struct vn_suite_exit){VN_SUITE_EXITED, 1}, &run);
	suite_expect(&run, "suite", VN_SUITE_ERROR, "exited with 1, though no test failed");
	vn_suite_run_free(&run);
	parse(all_ok, &(struct vn_suite_exit){VN_SUITE_TIMED_OUT, 0}, &run);
	suite_expect(&run, "suite", VN_SUITE_TIMEOUT, "after 1 results");
	vn_suite_run_free(&run);
	parse("", &(struct vn_suite_exit){VN_SUITE_NOT_STARTED, 127}, &run);
	assert_int_equal(run.n, 1);
	suite_expect(&run, "suite", VN_SUITE_ERROR, "could not start (127)");
	vn_suite_run_free(&run);
	parse("TAP version 13\n1..1\nnot ok 1 a\n", &(struct vn_suite_exit){VN_SUITE_EXITED, 1}, &run);
	assert_int_equal(run.n, 1);
	assert_int_equal(vn_suite_run_exit(&run), 1);
}

/* The guest is hostile: lines, names, nesting, counts and bytes are all bounded. */
static void test_hostile(void **state)
{
	(void)state;
	_cleanup_suite_run_ struct vn_suite_run run = {0};

	/* A 1 MB name and a NUL and an escape sequence in another. */
	size_t big = 1 << 20;
	_cleanup_free_ char *out = malloc(big + 64);
	memcpy(out, "ok 1 ", 5);
	memset(out + 5, 'a', big);
	size_t len = 5 + big;
	const char tail[] = "\nok 2 nul\0here\033]0;title\a\n";
	memcpy(out + len, tail, sizeof(tail) - 1);
	len += sizeof(tail) - 1;
	vn_suite_ktap_parse(out, len, "suite", NULL, &run);
	assert_int_equal(run.n, 2);
	assert_true(strlen(run.tests[0].name) <= VN_SUITE_NAME_MAX + 3);
	assert_string_equal(run.tests[1].name, "nul?here?]0;title?");
	assert_int_equal(run.nnotes, 1);

	/* Nesting past the limit: read as diagnostics, and the deepest block is broken. */
	vn_suite_run_free(&run);
	char deep[4096] = "", *p = deep;
	for (int i = 0; i < 12; i++)
		p += sprintf(p, "%*s1..1\n", 2 * i, "");
	p += sprintf(p, "%*sok 1 leaf\n", 24, "");
	for (int i = 11; i >= 0; i--)
		p += sprintf(p, "%*sok 1 l%d\n", 2 * i, "", i);
	parse(deep, NULL, &run);
	suite_expect(&run, "l0:l1:l2:l3:l4:l5:l6", VN_SUITE_ERROR, "nested deeper than 8 levels");
	assert_int_equal(vn_suite_run_exit(&run), 3);

	/* More results than a run holds: the rest are not read, and the run says so. */
	vn_suite_run_free(&run);
	_cleanup_free_ char *many = malloc(20 * (VN_SUITE_TESTS_MAX + 100));
	p = many;
	for (int i = 1; i <= VN_SUITE_TESTS_MAX + 50; i++)
		p += sprintf(p, "ok %d t%d\n", i, i);
	parse(many, NULL, &run);
	assert_int_equal(run.n, VN_SUITE_TESTS_MAX + 1);
	suite_expect(&run, "(too many tests)", VN_SUITE_ERROR, "more than 4096 results");
}

/* The diagnostics kept for a failure are the last few lines, each bounded. */
static void test_detail_bounded(void **state)
{
	(void)state;
	_cleanup_suite_run_ struct vn_suite_run run = {0};
	char out[8192], *p = out;

	for (int i = 0; i < 20; i++)
		p += sprintf(p, "# line %d %0300d\n", i, 0);
	sprintf(p, "not ok 1 x\n");
	parse(out, NULL, &run);
	const char *d = suite_find(&run, "x")->detail;
	assert_non_null(d);
	assert_null(strstr(d, "line 11 "));
	assert_non_null(strstr(d, "line 12 "));
	assert_true(strlen(d) <= VN_SUITE_DETAIL_LINES * (VN_SUITE_DETAIL_LINE_MAX + 4));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_recorded_harness),     cmocka_unit_test(test_recorded_sigaltstack),
		cmocka_unit_test(test_recorded_totals_only), cmocka_unit_test(test_recorded_timeout),
		cmocka_unit_test(test_directives),           cmocka_unit_test(test_kselftest_forms),
		cmocka_unit_test(test_nested_spaces),        cmocka_unit_test(test_nested_four_and_parent),
		cmocka_unit_test(test_broken_plans),         cmocka_unit_test(test_bail_out),
		cmocka_unit_test(test_exit_status),          cmocka_unit_test(test_hostile),
		cmocka_unit_test(test_detail_bounded),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
