/*
 * group.json written and read back (report/result-group.h): every
 * group.json under tests/fixtures loads, is written again as the same JSON
 * (every key, in its order; the fixtures' spacing is json-c's older one) and
 * is then a fixed point byte for byte; a matrix spread over hosts and a bisection's group are written as
 * tests/golden/result/ says and read back to the same bytes; malformed ones
 * are refused naming the file and the JSON path.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <json-c/json.h>

#include "report/result-group.h"
#include "util/alloc.h"
#include "util/cleanup.h"
#include "util/file.h"
#include "util/json.h"
#include "testutil.h"

static const char *src_dir(void)
{
	const char *s = getenv("VN_SOURCE_DIR");
	return s ? s : ".";
}

static char *slurp(const char *path)
{
	char *text = NULL;
	size_t len;
	struct vn_error err = {0};

	if (vn_file_read(path, 1u << 24, &text, &len, &err) < 0)
		fail_msg("%s", err.msg);
	return text;
}

/* text is read and written back as the same bytes. */
static void same_again(const char *text, const char *name)
{
	struct vn_result_group g;
	struct vn_error err = {0};

	if (vn_result_group_parse(text, name, &g, &err) < 0)
		fail_msg("%s", err.msg);
	_cleanup_free_ char *again = vn_result_group_text(&g);
	vn_result_group_clear(&g);
	if (strcmp(text, again) != 0)
		fail_msg("%s: read and written again differs:\n%s\n---\n%s", name, text, again);
}

/* The fixture at path is written back as the same JSON, which is then written back as the same bytes. */
static void fixture(const char *path)
{
	_cleanup_free_ char *text = slurp(path);
	struct vn_result_group g;
	struct vn_error err = {0};

	if (vn_result_group_parse(text, path, &g, &err) < 0)
		fail_msg("%s", err.msg);
	_cleanup_free_ char *again = vn_result_group_text(&g);
	vn_result_group_clear(&g);
	_cleanup_json_ struct json_object *a = json_tokener_parse(text);
	/* Not json_object_equal, which ignores the keys' order: the fixture's tree as the writer spaces it. */
	_cleanup_free_ char *want = vn_xasprintf(
		"%s\n", json_object_to_json_string_ext(a, JSON_C_TO_STRING_PRETTY | JSON_C_TO_STRING_NOSLASHESCAPE));
	if (strcmp(want, again) != 0)
		fail_msg("%s: written back differs:\n%s\n---\n%s", path, want, again);
	same_again(again, path);
}

static unsigned walk(const char *dir)
{
	DIR *d = opendir(dir);
	unsigned n = 0;

	assert_non_null(d);
	for (struct dirent *e; (e = readdir(d));) {
		if (e->d_name[0] == '.')
			continue;
		_cleanup_free_ char *p = vn_xasprintf("%s/%s", dir, e->d_name);
		struct stat st;
		assert_int_equal(lstat(p, &st), 0);
		if (S_ISDIR(st.st_mode)) {
			n += walk(p);
		} else if (strcmp(e->d_name, "group.json") == 0) {
			fixture(p);
			n++;
		}
	}
	closedir(d);
	return n;
}

static void test_fixtures_identical(void **state)
{
	(void)state;
	_cleanup_free_ char *fx = vn_xasprintf("%s/tests/fixtures", src_dir());

	/* Written by matrices of several vnuma versions, and by hand: some without host, started_utc, append. */
	assert_true(walk(fx) >= 6);
}

/* g's text is the golden's bytes, and reads back to them. */
static void golden(const struct vn_result_group *g, const char *name)
{
	_cleanup_free_ char *path = vn_xasprintf("%s/tests/golden/result/%s", src_dir(), name);
	_cleanup_free_ char *want = slurp(path), *text = vn_result_group_text(g);

	if (strcmp(text, want) != 0)
		fail_msg("%s differs:\n%s", path, text);
	same_again(text, path);
}

static void test_spread(void **state)
{
	(void)state;
	_cleanup_(vn_result_group_clear) struct vn_result_group g = {
		.version = VN_RESULT_GROUP_VERSION,
		.scenario = vn_xstrdup("memfollow-2node"),
		.topology = vn_xstrdup("2node"),
		.accel = vn_xstrdup("mixed: tcg and kvm"),
		.started_utc = vn_xstrdup("2026-01-02T03:04:05Z"),
		.repeats = 1,
		.base = vn_xstrdup("on"),
		.keys = VN_GROUP_VERSION | VN_GROUP_HOST | VN_GROUP_ACCEL | VN_GROUP_STARTED | VN_GROUP_REPEATS |
			VN_GROUP_BASE | VN_GROUP_COMPLETE | VN_GROUP_ASSERTIONS,
	};
	const char *names[] = {"on", "off"};
	for (unsigned i = 0; i < 2; i++) {
		struct vn_result_group_variant *v = vn_result_group_add_variant(&g, names[i]);
		v->kernel = vn_xstrdup("stock");
		v->keys = VN_GROUP_VARIANT_KERNEL | VN_GROUP_VARIANT_APPEND | VN_GROUP_VARIANT_SYSCTLS;
		vn_result_group_set_sysctl(v, "kernel.numa_balancing", "1");
		vn_result_group_set_sysctl(v, "vm.swappiness", "10");
		/* A variant's own replaces the scenario's where it stands. */
		vn_result_group_set_sysctl(v, "kernel.numa_balancing", i ? "0" : "1");
	}
	struct vn_result_group_run *r = vn_result_group_add_run(&g, "on", 1, "on/1", 0);
	r->host = vn_xstrdup("qemu+ssh://b/system");
	vn_result_group_add_attempt(r, "qemu+ssh://a/system", "cannot boot: \"x\"", "attempts/on-1-1");
	vn_result_group_add_attempt(r, "qemu+ssh://c/system", "gone", NULL);
	vn_result_group_add_run(&g, "off", 1, "off/1", -1)->host = vn_xstrdup("qemu+ssh://b/system");
	vn_result_group_add_host(&g, "qemu+ssh://a/system", 2, 0, "failed during the matrix: gone");
	vn_result_group_add_host(&g, "qemu+ssh://b/system", 1, 1, "ok");
	g.verdicts = vn_xcalloc(2, sizeof(*g.verdicts));
	g.verdicts[0] =
		(struct vn_verdict){.name = vn_xstrdup("change a"), .undecided = true, .observed = vn_xstrdup("x")};
	g.verdicts[1] = (struct vn_verdict){.name = vn_xstrdup("change b"), .pass = true, .expected = vn_xstrdup("y")};
	g.nverdicts = 2;
	golden(&g, "group-spread.json");
}

static void test_bisect(void **state)
{
	(void)state;
	_cleanup_(vn_result_group_clear) struct vn_result_group g = {
		.version = VN_RESULT_GROUP_VERSION,
		.scenario = vn_xstrdup("memfollow-2node"),
		.base = vn_xstrdup("0123456789ab"),
		.complete = true,
		.keys = VN_GROUP_VERSION | VN_GROUP_ACCEL | VN_GROUP_BASE | VN_GROUP_COMPLETE,
	};
	struct vn_result_group_variant *v = vn_result_group_add_variant(&g, "0123456789ab");
	v->kernel = vn_xstrdup("");
	v->keys = VN_GROUP_VARIANT_KERNEL;
	v->commit = vn_xstrdup("0123456789abcdef0123456789abcdef01234567");
	v->mark = vn_xstrdup("good");
	vn_result_group_add_run(&g, "0123456789ab", 1, "0123456789ab/run-1", 0);
	vn_result_group_add_run(&g, "0123456789ab", 2, "0123456789ab/run-2", 3);
	golden(&g, "group-bisect.json");
}

#define SHA "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"

/* One slice of a matrix (vnuma run --shard 2/3): which, of which matrix, of how many runs. */
static void test_shard(void **state)
{
	(void)state;
	_cleanup_(vn_result_group_clear) struct vn_result_group g = {
		.version = VN_RESULT_GROUP_VERSION,
		.scenario = vn_xstrdup("grid"),
		.topology = vn_xstrdup("host"),
		.repeats = 3,
		.base = vn_xstrdup("a"),
		.complete = true,
		.shard = {.index = 2, .count = 3, .runs = 6, .matrix = vn_xstrdup(SHA)},
		.keys = VN_GROUP_VERSION | VN_GROUP_REPEATS | VN_GROUP_BASE | VN_GROUP_COMPLETE,
	};
	vn_result_group_add_variant(&g, "a");
	vn_result_group_add_variant(&g, "b");
	vn_result_group_add_run(&g, "a", 2, "a/2", 0);
	vn_result_group_add_run(&g, "b", 2, "b/2", 1);
	golden(&g, "group-shard.json");
}

static void refused(const char *text, const char *want)
{
	struct vn_result_group g;
	struct vn_error err = {0};

	assert_true(vn_result_group_parse(text, "group.json", &g, &err) < 0);
	vn_result_group_clear(&g);
	assert_int_equal(err.kind, VN_ERR_INPUT);
	if (strcmp(err.msg, want) != 0)
		fail_msg("%s\n  gave: %s\n  want: %s", text, err.msg, want);
}

#define HEAD "{\"scenario\": \"s\", \"topology\": null, \"variants\": [{\"name\": \"a\"}], "

static void test_malformed(void **state)
{
	(void)state;
	refused("[]", "group.json: $: expected an object, got an array");
	refused("{\"topology\": \"2node\"}", "group.json: $: missing required key \"scenario\"");

	refused("{\"scenario\": \"s\", \"topology\": 2}", "group.json: $.topology: expected a string or null, got 2");
	refused("{\"scenario\": \"s\", \"topology\": null, \"runs\": []}",
		"group.json: $: missing required key \"variants\"");
	refused("{\"scenario\": \"s\", \"runs\": []}", "group.json: $: missing required key \"topology\"");
	refused(HEAD "\"runs\": {}}", "group.json: $.runs: expected an array, got an object");
	refused(HEAD "\"runs\": [{\"variant\": \"a\"}]}", "group.json: $.runs[0]: missing required key \"dir\"");
	refused(HEAD "\"runs\": [{\"variant\": \"a\", \"dir\": \"a/1\", \"exit\": -1}]}",
		"group.json: $.runs[0].exit: expected an exit code from 0 to 255, or null, got -1");
	refused(HEAD "\"runs\": [{\"variant\": \"a\", \"dir\": \"a/1\", \"failed_attempts\": [{\"host\": \"h\"}]}]}",
		"group.json: $.runs[0].failed_attempts[0]: missing required key \"error\"");
	refused(HEAD "\"runs\": [], \"complete\": 1}", "group.json: $.complete: expected true or false, got 1");
	refused(HEAD "\"runs\": [], \"assertions\": [{\"name\": \"c\", \"verdict\": \"maybe\", \"observed\": \"\", "
		     "\"expected\": \"\"}]}",
		"group.json: $.assertions[0].verdict: expected one of \"pass\", \"fail\", \"too noisy\", got "
		"\"maybe\"");
	refused("{\"scenario\": \"s\", \"topology\": null, \"variants\": [{\"name\": \"a\", \"sysctls\": {\"vm.x\": "
		"1}}]}",
		"group.json: $.variants[0].sysctls[\"vm.x\"]: expected a string, got 1");
	refused("{\"version\": 3, \"scenario\": \"s\", \"topology\": null}",
		"group.json: $.version: 3: written by a newer vnuma (this one reads group.json up to version 2)");
	refused(HEAD "\"runs\": [], \"shard\": {\"index\": 4, \"count\": 3, \"runs\": 6, \"matrix\": \"" SHA "\"}}",
		"group.json: $.shard.index: 4, but there are 3 slices");
	refused(HEAD "\"runs\": [], \"shard\": {\"index\": 0, \"count\": 3, \"runs\": 6, \"matrix\": \"" SHA "\"}}",
		"group.json: $.shard.index: expected an integer from 1 to 1048576, got 0");
	refused(HEAD "\"runs\": [], \"shard\": {\"index\": 1, \"count\": 3, \"runs\": 6, \"matrix\": \"x\"}}",
		"group.json: $.shard.matrix: expected a sha256 in lowercase hex");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_fixtures_identical),
		cmocka_unit_test(test_spread),
		cmocka_unit_test(test_bisect),
		cmocka_unit_test(test_shard),
		cmocka_unit_test(test_malformed),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
