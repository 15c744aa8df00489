/*
 * LTP's output into one verdict per test binary, on output written from
 * LTP's own format strings (tests/fixtures/suite/README.md says how), and
 * the plain exit-code mode.
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

static void ltp_file(const char *file, const char *name, int code, enum vn_suite_verdict v, const char *why)
{
	_cleanup_suite_run_ struct vn_suite_run run = {0};
	size_t len;
	_cleanup_free_ char *out = suite_fixture(file, &len);

	vn_suite_ltp_parse(out, len, name, &(struct vn_suite_exit){VN_SUITE_EXITED, code}, &run);
	assert_int_equal(run.n, 1);
	suite_expect(&run, name, v, why);
	assert_int_equal(run.nnotes, 0);
}

static void test_fixtures(void **state)
{
	(void)state;
	ltp_file("ltp-move_pages04-fail.txt", "move_pages04", 1, VN_SUITE_FAIL,
		 "move_pages04.c:113: TFAIL: status[1] is EFAULT, expected ENOENT");
	ltp_file("ltp-get_mempolicy01-pass.txt", "get_mempolicy01", 0, VN_SUITE_PASS, NULL);
	ltp_file("ltp-set_mempolicy01-tbrok.txt", "set_mempolicy01", 2, VN_SUITE_ERROR,
		 "TBROK: Cannot parse kernel .config");
	ltp_file("ltp-mbind01-tconf.txt", "mbind01", 32, VN_SUITE_SKIP, "Test requires at least 2 NUMA memory nodes");
	ltp_file("ltp-move_pages12-timeout.txt", "move_pages12", 2, VN_SUITE_TIMEOUT, "Test timeouted");
	ltp_file("ltp-migrate_pages01-colour.txt", "migrate_pages01", 1, VN_SUITE_FAIL,
		 "migrate_pages01.c:190: TFAIL: migrate_pages() with an invalid node: expected EINVAL, got EFAULT");
	ltp_file("ltp-oldapi-getpid.txt", "getpid01", 1, VN_SUITE_FAIL, "TFAIL  :  getpid01.c:40");
	ltp_file("ltp-shellapi-numa01.txt", "numa01", 32, VN_SUITE_SKIP, "'memhog' not found");
}

/*
 * What LTP 20260529 really printed in vnuma's guests (Debian's 6.1.0-57,
 * 2026-12-06; tests/fixtures/suite/README.md), each with the exit status
 * LTP's do_exit() gives its counts: the HINT block, a TWARN beside a TBROK,
 * a TCONF before any Summary, the shell API's Summary.
 */
static void test_recorded(void **state)
{
	(void)state;
	ltp_file("ltp-recorded-move_pages04-fail.txt", "move_pages04", 1, VN_SUITE_FAIL,
		 "move_pages04.c:117: TFAIL: status[1] is EFAULT, expected ENOENT");
	ltp_file("ltp-recorded-set_mempolicy03-tbrok.txt", "set_mempolicy03", 6, VN_SUITE_ERROR,
		 "tst_device.c:450: TBROK: Failed to acquire device");
	ltp_file("ltp-recorded-set_mempolicy04-fail.txt", "set_mempolicy04", 1, VN_SUITE_FAIL,
		 "set_mempolicy04.c:88: TFAIL: Node 0 allocated 0");
	ltp_file("ltp-recorded-set_mempolicy05-tconf.txt", "set_mempolicy05", 32, VN_SUITE_SKIP,
		 "TCONF: This arch 'x86_64' is not supported for test!");
	ltp_file("ltp-recorded-numa01-fail.txt", "numa01.sh", 33, VN_SUITE_FAIL,
		 "numa01 4 TFAIL: Process running on cpu0 but expected to run on cpu2");
	ltp_file("ltp-recorded-mbind01-pass.txt", "mbind01", 0, VN_SUITE_PASS, NULL);
}

/* The failure's context: the lines before it but the passes. */
static void test_detail(void **state)
{
	(void)state;
	_cleanup_suite_run_ struct vn_suite_run run = {0};
	size_t len;
	_cleanup_free_ char *out = suite_fixture("ltp-move_pages04-fail.txt", &len);

	vn_suite_ltp_parse(out, len, "move_pages04", &(struct vn_suite_exit){VN_SUITE_EXITED, 1}, &run);
	const char *d = run.tests[0].detail;
	assert_non_null(d);
	assert_non_null(strstr(d, "Tested kernel: 6.1.0-28-amd64"));
	assert_null(strstr(d, "TPASS"));
}

static enum vn_suite_verdict verdict(const char *out, const struct vn_suite_exit *ex, struct vn_suite_run *run)
{
	vn_suite_run_free(run);
	vn_suite_ltp_parse(out, strlen(out), "t", ex, run);
	assert_int_equal(run->n, 1);
	return run->tests[0].verdict;
}

/* The worst result wins: TBROK > TFAIL > TWARN > all-TCONF > TPASS; the exit bits count too. */
static void test_worst_wins(void **state)
{
	(void)state;
	_cleanup_suite_run_ struct vn_suite_run run = {0};
	const struct vn_suite_exit e0 = {VN_SUITE_EXITED, 0};

	assert_int_equal(verdict("a.c:1: TPASS: x\na.c:2: TCONF: y\n", &e0, &run), VN_SUITE_PASS);
	assert_int_equal(
		verdict("a.c:1: TPASS: x\na.c:2: TWARN: y\n", &(struct vn_suite_exit){VN_SUITE_EXITED, 4}, &run),
		VN_SUITE_ERROR);
	suite_expect(&run, "t", VN_SUITE_ERROR, "TWARN: y");
	assert_int_equal(
		verdict("a.c:1: TFAIL: x\na.c:2: TBROK: y\n", &(struct vn_suite_exit){VN_SUITE_EXITED, 3}, &run),
		VN_SUITE_ERROR);
	assert_int_equal(
		verdict("a.c:1: TFAIL: x\na.c:2: TWARN: y\n", &(struct vn_suite_exit){VN_SUITE_EXITED, 5}, &run),
		VN_SUITE_FAIL);
	/* Lines lost (a child's, or a cut stream): the exit status still says it failed. */
	assert_int_equal(verdict("a.c:1: TPASS: x\n", &(struct vn_suite_exit){VN_SUITE_EXITED, 1}, &run),
			 VN_SUITE_FAIL);
	suite_expect(&run, "t", VN_SUITE_FAIL, "exited with 1");
	/* The Summary counts what the lines did not show. */
	assert_int_equal(verdict("a.c:1: TPASS: x\n\nSummary:\npassed   1\nfailed   2\n", &e0, &run), VN_SUITE_FAIL);
	assert_int_equal(run.nnotes, 1);
	assert_non_null(strstr(run.notes[0], "its Summary says failed 2, 0 such lines were read"));
	/* Not LTP's lines: "TPASS" in a message, or a type without its colon. */
	assert_int_equal(verdict("echo TPASS: fake\nfoo.c:12 TPASS: x\nfoo.c:x: TPASS: y\n", &e0, &run),
			 VN_SUITE_ERROR);
	suite_expect(&run, "t", VN_SUITE_ERROR, "no LTP result line");
}

static void test_process_end(void **state)
{
	(void)state;
	_cleanup_suite_run_ struct vn_suite_run run = {0};
	const char *ok = "a.c:1: TPASS: x\n";

	assert_int_equal(verdict(ok, &(struct vn_suite_exit){VN_SUITE_NOT_STARTED, 127}, &run), VN_SUITE_ERROR);
	suite_expect(&run, "t", VN_SUITE_ERROR, "could not start (127)");
	assert_int_equal(verdict(ok, &(struct vn_suite_exit){VN_SUITE_SIGNALED, 11}, &run), VN_SUITE_ERROR);
	assert_int_equal(verdict(ok, &(struct vn_suite_exit){VN_SUITE_TIMED_OUT, 0}, &run), VN_SUITE_TIMEOUT);
	assert_int_equal(verdict(ok, &(struct vn_suite_exit){VN_SUITE_EXITED, 126}, &run), VN_SUITE_ERROR);
	assert_int_equal(verdict(ok, NULL, &run), VN_SUITE_PASS);
}

static void test_exit_mode(void **state)
{
	(void)state;
	static const struct {
		struct vn_suite_exit ex;
		enum vn_suite_verdict v;
		const char *why;
	} cases[] = {
		{{VN_SUITE_EXITED, 0}, VN_SUITE_PASS, NULL},
		{{VN_SUITE_EXITED, 4}, VN_SUITE_SKIP, "exited with 4"},
		{{VN_SUITE_EXITED, 1}, VN_SUITE_FAIL, "exited with 1"},
		{{VN_SUITE_EXITED, 2}, VN_SUITE_FAIL, "exited with 2"},
		{{VN_SUITE_EXITED, 126}, VN_SUITE_ERROR, "exited with 126"},
		{{VN_SUITE_EXITED, 127}, VN_SUITE_ERROR, "exited with 127"},
		{{VN_SUITE_NOT_STARTED, 2}, VN_SUITE_ERROR, "could not start"},
		{{VN_SUITE_SIGNALED, 9}, VN_SUITE_ERROR, "killed by signal 9"},
		{{VN_SUITE_TIMED_OUT, 0}, VN_SUITE_TIMEOUT, "timed out"},
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		_cleanup_suite_run_ struct vn_suite_run run = {0};
		vn_suite_exit_parse("prog", &cases[i].ex, &run);
		assert_int_equal(run.n, 1);
		suite_expect(&run, "prog", cases[i].v, cases[i].why);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_fixtures),   cmocka_unit_test(test_recorded),    cmocka_unit_test(test_detail),
		cmocka_unit_test(test_worst_wins), cmocka_unit_test(test_process_end), cmocka_unit_test(test_exit_mode),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
