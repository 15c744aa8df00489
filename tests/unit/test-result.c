/*
 * result.json read back (vn_result_load): every result.json under
 * tests/fixtures and the writer's goldens load, and what is written again
 * from them is a fixed point, byte for byte; the writer's own files come
 * back as they were; malformed ones are refused naming the file and the
 * JSON path.
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

#include "report/result-facts.h"
#include "report/result.h"
#include "util/alloc.h"
#include "util/cleanup.h"
#include "util/strbuf.h"
#include "testutil.h"

static const char *src_dir(void)
{
	const char *s = getenv("VN_SOURCE_DIR");
	return s ? s : ".";
}

/* path loads, and what is written from it loads and writes the same bytes again; returns the first text. */
static char *round_trip(const char *path)
{
	struct vn_result_run a, b;
	struct vn_error err = {0};

	if (vn_result_load(path, &a, &err) < 0)
		fail_msg("%s", err.msg);
	char *text = vn_result_text(&a);
	if (vn_result_parse(text, "again", &b, &err) < 0)
		fail_msg("%s written again does not load: %s", path, err.msg);
	_cleanup_free_ char *again = vn_result_text(&b);
	if (strcmp(text, again) != 0)
		fail_msg("%s: written, read back and written again differs:\n%s\n---\n%s", path, text, again);
	vn_result_clear(&a);
	vn_result_clear(&b);
	return text;
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
		} else if (strcmp(e->d_name, "result.json") == 0 && !strstr(p, "/bad-")) {
			free(round_trip(p));
			n++;
		}
	}
	closedir(d);
	return n;
}

static void test_fixtures_round_trip(void **state)
{
	(void)state;
	_cleanup_free_ char *fx = vn_xasprintf("%s/tests/fixtures", src_dir());

	/* Written by hand over the years, from before "time", "arch" and "vcpus" were: all still load. */
	assert_true(walk(fx) >= 30);
}

/* The writer's goldens (test-report.c) read back are written again as they were: nothing lost. */
static void test_goldens_identical(void **state)
{
	(void)state;
	static const char *const files[] = {"every-key.json", "incomplete.json", "suite.json"};

	for (size_t i = 0; i < VN_ARRAY_SIZE(files); i++) {
		_cleanup_free_ char *p = vn_xasprintf("%s/tests/golden/result/%s", src_dir(), files[i]);
		_cleanup_free_ char *want = vn_test_read_all(p);
		_cleanup_free_ char *got = round_trip(p);
		assert_non_null(want);
		if (strcmp(want, got) != 0)
			fail_msg("%s read back and written again:\n%s", p, got);
	}
}

static void test_typed(void **state)
{
	(void)state;
	_cleanup_free_ char *p = vn_xasprintf("%s/tests/golden/result/every-key.json", src_dir());
	struct vn_result_run r;
	struct vn_error err = {0};

	assert_int_equal(vn_result_load(p, &r, &err), 0);
	assert_int_equal(r.nverdicts, 3);
	assert_true(r.verdicts[0].pass && !r.verdicts[1].pass && r.verdicts[2].undecided);
	assert_int_equal(vn_result_failures(&r), 1);
	assert_true(vn_result_virtual_time(&r));
	assert_int_equal(r.vcpus, 4);
	assert_int_equal(r.node_memory_mib.n, 3);
	assert_int_equal(r.node_memory_mib.v[1], 2048);
	assert_int_equal(r.node_memory_mib.v[2], 0);
	assert_int_equal(r.nartifacts, 2);
	assert_false(r.artifacts[1].uploaded);
	assert_string_equal(r.kernel_patches[1], "0002-sched-numa.patch");
	assert_int_equal(r.nmetrics, 5); /* run.duration_s and run.boot_s as the file has them */
	assert_string_equal(r.metrics[3].name, "run.duration_s");
	vn_result_clear(&r);
}

static void refused(const char *text, const char *want)
{
	struct vn_result_run r;
	struct vn_error err = {0};

	assert_true(vn_result_parse(text, "result.json", &r, &err) < 0);
	vn_result_clear(&r);
	assert_int_equal(err.kind, VN_ERR_INPUT);
	if (strcmp(err.msg, want) != 0)
		fail_msg("%s\n  gave: %s\n  want: %s", text, err.msg, want);
}

static void test_malformed(void **state)
{
	(void)state;
	refused("[]", "result.json: $: expected an object, got an array");
	refused("{}", "result.json: $: missing required key \"complete\"");
	refused("{\"complete\": \"yes\"}", "result.json: $.complete: expected true or false, got \"yes\"");
	/* A suite's tests: each verdict a known word, each entry with its step and name, the list bounded. */
	refused("{\"complete\": false, \"tests\": {}}", "result.json: $.tests: expected an array, got an object");
	refused("{\"complete\": false, \"tests\": [{\"step\": \"s\", \"name\": \"t\", \"verdict\": \"maybe\"}]}",
		"result.json: $.tests[0].verdict: expected one of \"pass\", \"fail\", \"skip\", \"xfail\", \"xpass\", "
		"\"error\", \"timeout\", got \"maybe\"");
	refused("{\"complete\": false, \"tests\": [{\"step\": \"s\", \"verdict\": \"pass\"}]}",
		"result.json: $.tests[0]: missing required key \"name\"");
	refused("{\"complete\": false, \"tests\": [{\"step\": \"s\", \"name\": \"t\", \"verdict\": \"pass\", \"x\": "
		"1}]}",
		"result.json: $.tests[0]: unknown key \"x\" (known: step, name, verdict, reason, detail, known)");
	refused("{\"complete\": false, \"version\": 2}",
		"result.json: $.version: 2: written by a newer vnuma (this one reads result.json up to version 1)");
	refused("{\"complete\": false, \"version\": 0}", "result.json: $.version: expected an integer >= 1, got 0");
	refused("{\"complete\": false, \"assertions\": [{\"name\": \"a\", \"verdict\": \"pass\"}, {\"name\": \"b\", "
		"\"verdict\": true}]}",
		"result.json: $.assertions[1].verdict: expected a string, got true");
	refused("{\"complete\": false, \"assertions\": [{\"verdict\": \"pass\"}]}",
		"result.json: $.assertions[0]: missing required key \"name\"");
	refused("{\"complete\": false, \"variant\": \"../x\"}",
		"result.json: $.variant: expected a name of letters, digits, '-', '_' and '.' (not starting with '.'), "
		"got \"../x\"");
	refused("{\"complete\": false, \"time\": \"host\"}",
		"result.json: $.time: expected one of \"real\", \"virtual\", got \"host\"");
	refused("{\"complete\": false, \"kernel\": {\"patches\": [1]}}",
		"result.json: $.kernel.patches[0]: expected a string, got 1");
	refused("{\"complete\": false, \"sysctls\": {\"vm.x\": 1}}",
		"result.json: $.sysctls[\"vm.x\"]: expected a string, got 1");
	refused("{\"complete\": false, \"artifacts\": [{\"volume\": \"v\"}]}",
		"result.json: $.artifacts[0]: missing required key \"uploaded\"");
	refused("{\"complete\": false, \"metrics\": {\"a\": \"lots\"}}",
		"result.json: $.metrics.a: expected a number, got \"lots\"");
	refused("{\"complete\": false, \"vcpus\": 0}",
		"result.json: $.vcpus: expected an integer from 1 to 1048576, got 0");
	refused("{\"complete\": false, \"duration_s\": -1}",
		"result.json: $.duration_s: expected a number >= 0, got -1");
	refused("{\"complete\": false, \"error\": 3}", "result.json: $.error: expected a string or null, got 3");
	refused("{\"complete\": true, \"topology\": \"2node\", \"metrics\": {}}",
		"result.json: $: missing required key \"scenario\"");
	refused("{\"complete\": true, \"scenario\": \"s\", \"metrics\": {}}",
		"result.json: $: missing required key \"topology\"");
	refused("{\"complete\": true, \"scenario\": \"s\", \"topology\": \"2node\"}",
		"result.json: $: missing required key \"metrics\"");
}

/* Lists are counted before they are kept. */
static void test_bounded(void **state)
{
	(void)state;
	_cleanup_strbuf_ struct vn_strbuf b = VN_STRBUF_INIT;

	vn_strbuf_printf(&b, "{\"complete\": false, \"assertions\": [");
	for (int i = 0; i <= VN_RESULT_ASSERTIONS_MAX; i++)
		vn_strbuf_printf(&b, "%s{\"name\": \"a\", \"verdict\": \"pass\"}", i ? ", " : "");
	vn_strbuf_printf(&b, "]}");
	refused(b.s, "result.json: $.assertions: 4097 members, at most 4096 are read");
}

/* The facts table as its walkers need it: one row per key, one per place on the page, a name where shown. */
static void test_facts_table(void **state)
{
	(void)state;
	for (size_t i = 0; i < vn_result_nfacts; i++) {
		const struct vn_result_fact *f = &vn_result_facts[i];
		if (f->page || (f->flags & VN_FACT_COMPARE))
			assert_non_null(f->label);
		if (f->type == VN_FACT_OWN)
			assert_true(f->get && f->set);
		else
			assert_true(f->offset < offsetof(struct vn_result_run, nverdicts));
		for (size_t j = 0; j < i; j++) {
			if (strcmp(vn_result_facts[j].key, f->key) == 0)
				fail_msg("\"%s\" has two rows", f->key);
			if (f->page && vn_result_facts[j].page == f->page)
				fail_msg("\"%s\" and \"%s\" share place %u", vn_result_facts[j].key, f->key, f->page);
		}
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_fixtures_round_trip),
		cmocka_unit_test(test_goldens_identical),
		cmocka_unit_test(test_typed),
		cmocka_unit_test(test_malformed),
		cmocka_unit_test(test_bounded),
		cmocka_unit_test(test_facts_table),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
