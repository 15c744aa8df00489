/*
 * kcidb.json (report/kcidb.h): a golden file, and every file the writer
 * gives checked against KCIDB v4.2's rules as kernelci/kcidb-io's schema
 * states them (required members, the members each object may have, the
 * id, origin, path and architecture patterns, the status words, no null
 * anywhere, log_excerpt's bound, tests pointing at a build and builds at
 * a checkout), over hostile names and a run cut short.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <json-c/json.h>
#include <regex.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "report/kcidb.h"
#include "report/report.h"
#include "report/result-suite.h"
#include "util/cleanup.h"
#include "golden.h"

static bool matches(const char *pattern, const char *s)
{
	regex_t re;
	assert_int_equal(regcomp(&re, pattern, REG_EXTENDED | REG_NOSUB), 0);
	bool ok = regexec(&re, s, 0, NULL, 0) == 0;
	regfree(&re);
	return ok;
}

static bool in_list(const char *const *list, const char *s)
{
	for (; *list; list++)
		if (strcmp(*list, s) == 0)
			return true;
	return false;
}

/* No member anywhere is null: the schema allows none. */
static void no_null(json_object *o)
{
	if (json_object_is_type(o, json_type_array)) {
		for (size_t i = 0; i < json_object_array_length(o); i++) {
			assert_non_null(json_object_array_get_idx(o, i));
			no_null(json_object_array_get_idx(o, i));
		}
	} else if (json_object_is_type(o, json_type_object)) {
		json_object_object_foreach(o, k, v)
		{
			if (!v)
				fail_msg("member %s is null", k);
			no_null(v);
		}
	}
}

static const char *str_member(json_object *o, const char *key)
{
	json_object *v;
	if (!json_object_object_get_ex(o, key, &v) || !json_object_is_type(v, json_type_string))
		fail_msg("member %s is not a string", key);
	return json_object_get_string(v);
}

/* One object: its required members, no member the schema does not name, id and origin by their patterns. */
static void check_object(json_object *o, const char *const *required, const char *const *allowed)
{
	assert_true(json_object_is_type(o, json_type_object));
	for (const char *const *k = required; *k; k++)
		assert_non_null(json_object_object_get(o, *k));
	json_object_object_foreach(o, key, v)
	{
		(void)v;
		if (!in_list(allowed, key))
			fail_msg("member %s is not in the schema", key);
	}
	assert_true(matches("^[a-z0-9_]+$", str_member(o, "origin")));
	assert_true(matches("^[a-z0-9_]+:.*$", str_member(o, "id")));
}

static bool has_id(json_object *list, const char *id)
{
	for (size_t i = 0; i < json_object_array_length(list); i++)
		if (strcmp(str_member(json_object_array_get_idx(list, i), "id"), id) == 0)
			return true;
	return false;
}

static void check_tests(json_object *tests, json_object *builds)
{
	static const char *const req[] = {"build_id", "id", "origin", NULL};
	static const char *const allowed[] = {
		"build_id", "id",     "origin", "environment", "path",     "comment",      "log_url", "log_excerpt",
		"status",   "number", "waived", "start_time",  "duration", "output_files", "misc",    NULL};
	static const char *const status[] = {"FAIL", "ERROR", "MISS", "PASS", "DONE", "SKIP", NULL};
	static const char *const env[] = {"compatible", "comment", "misc", NULL};

	for (size_t i = 0; i < json_object_array_length(tests); i++) {
		json_object *t = json_object_array_get_idx(tests, i), *e;
		check_object(t, req, allowed);
		assert_true(has_id(builds, str_member(t, "build_id")));
		assert_true(matches("^[.a-zA-Z0-9_-]*$", str_member(t, "path")));
		assert_true(in_list(status, str_member(t, "status")));
		if (json_object_object_get_ex(t, "log_excerpt", &e))
			assert_true(json_object_get_string_len(e) <= 16384);
		if (json_object_object_get_ex(t, "environment", &e)) {
			json_object_object_foreach(e, key, v)
			{
				(void)v;
				assert_true(in_list(env, key));
			}
		}
		for (size_t j = 0; j < i; j++)
			assert_string_not_equal(str_member(json_object_array_get_idx(tests, j), "id"),
						str_member(t, "id"));
	}
}

static void check_shape(const char *text)
{
	static const char *const top[] = {"version", "checkouts", "builds", "tests", "issues", "incidents", NULL};
	static const char *const co_req[] = {"id", "origin", NULL};
	static const char *const co[] = {"id",
					 "origin",
					 "tree_name",
					 "git_repository_url",
					 "git_commit_hash",
					 "git_commit_name",
					 "git_repository_branch",
					 "patchset_files",
					 "patchset_hash",
					 "message_id",
					 "comment",
					 "start_time",
					 "contacts",
					 "log_url",
					 "log_excerpt",
					 "valid",
					 "misc",
					 NULL};
	static const char *const b_req[] = {"checkout_id", "id", "origin", NULL};
	static const char *const b[] = {"checkout_id",  "id",           "origin",     "comment",  "start_time",
					"duration",     "architecture", "command",    "compiler", "input_files",
					"output_files", "config_name",  "config_url", "log_url",  "log_excerpt",
					"valid",        "misc",         NULL};
	_cleanup_json_ json_object *o = json_tokener_parse(text);
	json_object *v, *checkouts, *builds, *tests;

	assert_non_null(o);
	no_null(o);
	json_object_object_foreach(o, key, val)
	{
		(void)val;
		assert_true(in_list(top, key));
	}
	assert_true(json_object_object_get_ex(o, "version", &v));
	assert_int_equal(json_object_get_int(json_object_object_get(v, "major")), 4);
	assert_true(json_object_get_int(json_object_object_get(v, "minor")) <= 5);
	assert_true(json_object_object_get_ex(o, "checkouts", &checkouts));
	assert_true(json_object_object_get_ex(o, "builds", &builds));
	assert_true(json_object_object_get_ex(o, "tests", &tests));
	for (size_t i = 0; i < json_object_array_length(checkouts); i++)
		check_object(json_object_array_get_idx(checkouts, i), co_req, co);
	for (size_t i = 0; i < json_object_array_length(builds); i++) {
		json_object *bo = json_object_array_get_idx(builds, i), *arch;
		check_object(bo, b_req, b);
		assert_true(has_id(checkouts, str_member(bo, "checkout_id")));
		if (json_object_object_get_ex(bo, "architecture", &arch))
			assert_true(matches("^[a-z0-9_]*$", json_object_get_string(arch)));
	}
	check_tests(tests, builds);
}

static void fill(struct vn_result_run *r)
{
	*r = (struct vn_result_run){.scenario = strdup("ltp-numa-2node"),
				    .variant = strdup("default"),
				    .repeat = 1,
				    .started_utc = strdup("2026-12-01T11:16:00Z"),
				    .duration_s = 61.5,
				    .complete = true,
				    .arch = strdup("x86_64"),
				    .guest = strdup("scn-ltp-numa-2node"),
				    .host = strdup("qemu:///embed"),
				    .accel = strdup("tcg"),
				    .kernel_release = strdup("6.1.0-28-amd64"),
				    .kernel_version = strdup("#1 SMP PREEMPT_DYNAMIC Debian 6.1.119-1"),
				    .kernel_config_sha256 = strdup("f75010e906eac59e85ab3fab9de8f197"),
				    .vcpus = 4,
				    .topology = strdup("2node")};
	r->node_memory_mib = (struct vn_result_nodes){2, calloc(2, sizeof(unsigned))};
	r->node_memory_mib.v[0] = r->node_memory_mib.v[1] = 256;
	vn_result_add(r, "suite ltp", false, "7 tests: 1 passed, 1 failed", "no test fails", NULL);
	assert_true(vn_result_add_test(r, "ltp", "get_mempolicy01", VN_TEST_PASS, NULL, NULL, NULL));
	assert_true(vn_result_add_test(r, "ltp", "move_pages12", VN_TEST_FAIL,
				       "move_pages12.c:259: TFAIL: \x1b[1mx\xff", "line 1\nline 2", NULL));
	assert_true(
		vn_result_add_test(r, "ltp", "mbind01", VN_TEST_SKIP, "mbind01.c:1: TCONF: needs 2 nodes", NULL, NULL));
	assert_true(vn_result_add_test(r, "ltp", "move_pages04", VN_TEST_XFAIL, "TFAIL: status[1] is EFAULT", NULL,
				       "EFAULT on kernels >= 4.3 and < 6.12"));
	assert_true(vn_result_add_test(r, "ltp", "set_mempolicy04", VN_TEST_XPASS, NULL, NULL, "fails on 256M nodes"));
	assert_true(vn_result_add_test(r, "kself", "selftests: mm: migration:shared_anon", VN_TEST_ERROR,
				       "planned 12 tests, 1 reported", NULL, NULL));
	assert_true(vn_result_add_test(r, "kself", "selftests: mm: ksm_tests", VN_TEST_TIMEOUT, NULL, NULL, NULL));
}

static char *write_and_read(const struct vn_result_run *r, const char *dir)
{
	char path[128];
	struct vn_error err = {0};

	assert_int_equal(vn_report_write(r, dir, &err), 0);
	snprintf(path, sizeof(path), "%s/kcidb.json", dir);
	char *text = vn_test_read_all(path);
	assert_non_null(text);
	unlink(path);
	snprintf(path, sizeof(path), "%s/result.json", dir);
	unlink(path);
	snprintf(path, sizeof(path), "%s/junit.xml", dir);
	unlink(path);
	return text;
}

/* Each verdict's status (an xfail a waived FAIL, a timeout an ERROR), against tests/golden/result/kcidb.json. */
static void test_golden(void **state)
{
	(void)state;
	char dir[] = "/tmp/vn-kcidb-XXXXXX";
	struct vn_result_run r;

	assert_non_null(mkdtemp(dir));
	fill(&r);
	_cleanup_free_ char *text = write_and_read(&r, dir);
	check_shape(text);
	vn_test_golden("result", "kcidb.json", text, "kcidb.json");
	rmdir(dir);
	vn_result_clear(&r);
}

/* Cut short: a MISS for what did not run; nothing known of the kernel: no null members. */
static void test_incomplete_and_unknown(void **state)
{
	(void)state;
	char dir[] = "/tmp/vn-kcidb-XXXXXX";
	struct vn_result_run r = {.complete = false, .error = strdup("guest died: \x07panic")};

	assert_non_null(mkdtemp(dir));
	assert_true(vn_result_add_test(&r, "s t\xff", ":::\x1b[31m", VN_TEST_PASS, NULL, NULL, NULL));
	_cleanup_free_ char *text = write_and_read(&r, dir);
	check_shape(text);
	assert_non_null(strstr(text, "\"MISS\""));
	vn_result_clear(&r);

	/* No tests: no kcidb.json (KCIDB has no words for the assertions), not even an earlier run's. */
	struct vn_error err = {0};
	char path[128];
	r = (struct vn_result_run){.complete = true, .scenario = strdup("fallback-4node")};
	snprintf(path, sizeof(path), "%s/kcidb.json", dir);
	FILE *stale = fopen(path, "w");
	assert_non_null(stale);
	fputs("{\"version\": {\"major\": 4}}\n", stale);
	fclose(stale);
	assert_int_equal(vn_report_write(&r, dir, &err), 0);
	assert_int_not_equal(access(path, F_OK), 0);
	snprintf(path, sizeof(path), "%s/result.json", dir);
	unlink(path);
	snprintf(path, sizeof(path), "%s/junit.xml", dir);
	unlink(path);
	rmdir(dir);
	vn_result_clear(&r);
}

static void test_path(void **state)
{
	(void)state;
	static const char *const cases[][3] = {
		{"kself", "selftests: mm: migration:shared_anon", "kself.selftests.mm.migration.shared_anon"},
		/* kselftest_harness names its tests FIXTURE.TEST: the dot is the name's, not a level of the tree. */
		{"migration", "migration.shared_anon", "migration.migration_shared_anon"},
		{"ltp", "fs_bind01.sh", "ltp.fs_bind01_sh"},
		{"ltp", ".hidden..x.", "ltp.hidden_x"},
		{"a.b", "c", "a_b.c"},
		{"ltp", "move_pages04", "ltp.move_pages04"},
		{"ltp", "a b++c", "ltp.a_b_c"},
		{"s t", "::", "s_t._._._"},
		{"x", "\xc3\xa9t\xc3\xa9", "x.t"},
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		_cleanup_free_ char *p = vn_kcidb_path(cases[i][0], cases[i][1]);
		assert_string_equal(p, cases[i][2]);
		assert_true(matches("^[.a-zA-Z0-9_-]*$", p));
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_golden),
		cmocka_unit_test(test_incomplete_and_unknown),
		cmocka_unit_test(test_path),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
