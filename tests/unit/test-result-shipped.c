/*
 * Real runs of shipped scenarios (tests/fixtures/shipped/NAME: the run's
 * result.json and its after/ distances, as `vnuma run` wrote them) go
 * through the typed reader and the writers: result.json written again is
 * the recorded file byte for byte, junit.xml (and kcidb.json) are the files
 * the run wrote (tests/golden/shipped/NAME/), and report.html drawn from the
 * read result is tests/golden/shipped/NAME/report.html. So a change in the
 * result model that alters what users get from these runs fails here.
 * What it does not prove: that the scenarios, run again, give these results.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "report/html.h"
#include "report/report.h"
#include "report/result.h"
#include "util/alloc.h"
#include "util/cleanup.h"
#include "golden.h"
#include "tmpdir.h"

VN_TEST_TMPDIR(tmp, "shipped")

/* Each a real run; kcidb: the run ran a suite step and wrote kcidb.json. */
static const struct {
	const char *name;
	bool kcidb;
} runs[] = {
	{"demotion-4node-cxl", false},
	{"kselftest-mm-4node-amd", true},
	{"promotion-4node-cxl", false},
};

/* tests/TOP/NAME/FILE in the source tree (TOP: fixtures/shipped or golden/shipped). */
static char *src_path(const char *top, const char *name, const char *file)
{
	const char *src = getenv("VN_SOURCE_DIR");

	return vn_xasprintf("%s/tests/%s/%s/%s", src ? src : ".", top, name, file);
}

static char *read_or_fail(const char *path)
{
	char *text = vn_test_read_all(path);

	if (!text)
		fail_msg("cannot read %s", path);
	return text;
}

/* What the writer put in dir/file is the recorded golden/shipped/name/file, byte for byte. */
static void same_as_recorded(const char *dir, const char *name, const char *file)
{
	_cleanup_free_ char *want_path = src_path("golden/shipped", name, file);
	_cleanup_free_ char *got_path = vn_xasprintf("%s/%s", dir, file);
	_cleanup_free_ char *want = read_or_fail(want_path), *got = read_or_fail(got_path);

	if (strcmp(want, got) != 0) {
		fprintf(stderr, "--- %s\n+++ written now\n%s\n", want_path, got);
		fail_msg("%s: %s differs from what the run wrote", name, file);
	}
}

static void copy_file(const char *from, const char *dir, const char *name)
{
	_cleanup_free_ char *text = read_or_fail(from);

	vn_test_put(dir, name, text);
}

static void check_run(const char *name, bool kcidb)
{
	_cleanup_free_ char *result_path = src_path("fixtures/shipped", name, "result.json");
	_cleanup_free_ char *recorded = read_or_fail(result_path);
	_cleanup_free_ char *dir = vn_xasprintf("%s/%s", tmp, name);
	struct vn_result_run r;
	struct vn_error err = {0};

	if (vn_result_load(result_path, &r, &err) < 0)
		fail_msg("%s", err.msg);
	assert_string_equal(r.scenario, name);
	assert_int_equal(vn_mkdir_p(dir, 0755, &err), 0);
	if (vn_report_write(&r, dir, &err) < 0)
		fail_msg("%s: vn_report_write: %s", name, err.msg);
	vn_result_clear(&r);

	/* Nothing masked: the runs were recorded by the writer these fixtures test. */
	_cleanup_free_ char *written_path = vn_xasprintf("%s/result.json", dir);
	_cleanup_free_ char *written = read_or_fail(written_path);
	if (strcmp(recorded, written) != 0) {
		fprintf(stderr, "--- %s\n+++ written again\n%s\n", result_path, written);
		fail_msg("%s: result.json read and written again differs from the recorded run's", name);
	}
	same_as_recorded(dir, name, "junit.xml");
	_cleanup_free_ char *kcidb_path = vn_xasprintf("%s/kcidb.json", dir);
	assert_int_equal(access(kcidb_path, F_OK) == 0, kcidb);
	if (kcidb)
		same_as_recorded(dir, name, "kcidb.json");

	/* The page from the read-back result.json and the run's distances; no samples (kept out for size). */
	for (unsigned node = 0; node < 4; node++) {
		_cleanup_free_ char *file = vn_xasprintf("after/node%u-distance", node);
		_cleanup_free_ char *from = src_path("fixtures/shipped", name, file);
		if (access(from, F_OK) == 0)
			copy_file(from, dir, file);
	}
	/* From inside the scratch directory, so the page's note on the missing samples names no random path. */
	_cleanup_free_ char *cwd = getcwd(NULL, 0);
	assert_non_null(cwd);
	assert_int_equal(chdir(tmp), 0);
	int rc = vn_report_html_write(name, NULL, &err);
	assert_int_equal(chdir(cwd), 0);
	if (rc < 0)
		fail_msg("%s: vn_report_html_write: %s", name, err.msg);
	_cleanup_free_ char *page_path = vn_xasprintf("%s/report.html", dir);
	_cleanup_free_ char *page = read_or_fail(page_path);
	_cleanup_free_ char *golden = vn_xasprintf("%s/report.html", name);
	vn_test_golden("shipped", golden, page, "report.html");
}

static void test_shipped_runs(void **state)
{
	(void)state;
	for (size_t i = 0; i < VN_ARRAY_SIZE(runs); i++)
		check_run(runs[i].name, runs[i].kcidb);
}

/* Each fixture is a run of a scenario that ships: its name is a file in scenarios/. */
static void test_scenarios_shipped(void **state)
{
	(void)state;
	for (size_t i = 0; i < VN_ARRAY_SIZE(runs); i++) {
		const char *root = getenv("VN_SOURCE_DIR");
		_cleanup_free_ char *src = vn_xasprintf("%s/scenarios/%s.json", root ? root : ".", runs[i].name);
		if (access(src, F_OK) != 0)
			fail_msg("%s is not a shipped scenario (no %s)", runs[i].name, src);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_shipped_runs, setup, teardown),
		cmocka_unit_test(test_scenarios_shipped),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
