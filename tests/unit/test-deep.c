/*
 * vnuma collect --deep offline: drgn's output recorded from real guests
 * (Debian's 6.1 on 4node-amd and 4node-cxl-tiered, tests/fixtures/deep/)
 * read back and held against the model, the same output changed where the
 * kernel could differ, and outputs of the wrong shape refused.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "testbed/deep.h"
#include "util/alloc.h"
#include "util/cleanup.h"
#include "util/file.h"
#include "util/strbuf.h"

static char *src_path(const char *rel)
{
	const char *src = getenv("VN_SOURCE_DIR");

	return vn_xasprintf("%s/%s", src ? src : ".", rel);
}

/* The recorded line with drgn's chatter before it, as the spawn's output reads. */
static char *recorded(const char *name)
{
	_cleanup_free_ char *path = vn_xasprintf("tests/fixtures/deep/%s.json", name), *full = src_path(path);
	_cleanup_free_ char *json = NULL;
	struct vn_error err = {0};
	size_t len;

	assert_int_equal(vn_file_read(full, 1 << 20, &json, &len, &err), 0);
	return vn_xasprintf("warning: could not get debugging information for: kernel modules\n%s%s", VN_DEEP_MARKER,
			    json);
}

/* s with its first occurrence of from replaced by to. */
static char *edit(const char *s, const char *from, const char *to)
{
	const char *at = strstr(s, from);

	assert_non_null(at);
	return vn_xasprintf("%.*s%s%s", (int)(at - s), s, to, at + strlen(from));
}

/* The report of output against topology file topo with fallback model m; *ok and *observed out. */
static char *judge(const char *output, const char *topo, enum vn_fallback_model m, bool *ok, unsigned *observed)
{
	_cleanup_free_ char *path = src_path(topo);
	_cleanup_topology_ struct vn_topology *t = NULL;
	struct vn_fallback_opts fo = VN_FALLBACK_OPTS_DEFAULT;
	struct vn_error err = {0};
	struct vn_deep *d = NULL;

	assert_int_equal(vn_topology_load(path, &t, &err), 0);
	if (vn_deep_parse(output, &d, &err) < 0)
		fail_msg("%s", err.msg);
	fo.model = m;
	char *rep = vn_deep_compare(d, t, &fo, ok, observed);
	vn_deep_free(d);
	return rep;
}

static void test_recorded_equal(void **state)
{
	_cleanup_free_ char *amd = recorded("4node-amd"), *tiered = recorded("4node-cxl-tiered");
	bool ok;
	unsigned n;

	_cleanup_free_ char *r1 = judge(amd, "topologies/4node-amd.xml", VN_FALLBACK_DEFAULT, &ok, &n);
	assert_true(ok);
	assert_int_equal(n, 5);
	assert_null(strstr(r1, "MISMATCH"));
	assert_non_null(strstr(r1, "zonelists (ZONELIST_FALLBACK, model 5.18): ok\n"));
	_cleanup_free_ char *r2 = judge(tiered, "topologies/4node-cxl-tiered.xml", VN_FALLBACK_DEFAULT, &ok, &n);
	assert_true(ok);
	assert_int_equal(n, 5);
	assert_non_null(strstr(r2, "after kmem onlined every slow node): ok\n"));
	assert_non_null(strstr(r2, "demotion targets (node_demotion[].preferred, model 6.1): ok\n"));
}

/* The AMD report's node 3: pre-5.15 kernels build 3 2 0 1, 6.1 built 3 2 1 0. */
static void test_zonelist_mismatch(void **state)
{
	_cleanup_free_ char *amd = recorded("4node-amd");
	bool ok;
	unsigned n;

	_cleanup_free_ char *r = judge(amd, "topologies/4node-amd.xml", VN_FALLBACK_RESET, &ok, &n);
	assert_false(ok);
	assert_non_null(strstr(r, "zonelists (ZONELIST_FALLBACK, model pre-5.15): MISMATCH\n"
				  "  Node 3: model 3 2 0 1, kernel's zonelist 3 2 1 0\n"));
	assert_non_null(strstr(r, "distances (the kernel's SLIT, numa_distance): ok\n"));
}

/* What a kernel under test could have built otherwise, each section in turn. */
static void test_kernel_differs(void **state)
{
	static const struct {
		const char *from, *to, *line;
	} cases[] = {
		{"{\"node\":1,\"preferred\":[3]}", "{\"node\":1,\"preferred\":[2,3]}",
		 "  Node 1: model demotes to 3, kernel's node_demotion[1].preferred 2-3\n"},
		{"\"adistance_start\":2816", "\"adistance_start\":512",
		 "memory tiers (memory_tiers, model 6.1): MISMATCH\n"},
		{"[14,24,10,26]", "[14,24,10,20]", "  node 2: model 14 24 10 26, kernel 14 24 10 20\n"},
		{"\"distances\":[10,21]", "\"distances\":[10,14]",
		 "  levels (distances): model 10 21, kernel's sched_domains_numa_distance 10 14\n"},
		{"{\"node\":1,\"cpus\":[2,3]}", "{\"node\":1,\"cpus\":[2]}",
		 "  level 0 (distance 10), node 1: model 2-3, kernel's mask 2\n"},
		{"{\"node\":3,\"order\":[3,1,0,2]}", "{\"node\":3,\"order\":[3,1,2]}",
		 "  Node 3: model 3 1 0 2, kernel's zonelist 3 1 2\n"},
	};
	_cleanup_free_ char *tiered = recorded("4node-cxl-tiered");

	for (size_t i = 0; i < VN_ARRAY_SIZE(cases); i++) {
		_cleanup_free_ char *out = edit(tiered, cases[i].from, cases[i].to);
		bool ok;
		unsigned n;
		_cleanup_free_ char *r = judge(out, "topologies/4node-cxl-tiered.xml", VN_FALLBACK_DEFAULT, &ok, &n);
		assert_false(ok);
		if (!strstr(r, cases[i].line))
			fail_msg("case %zu: no '%s' in:\n%s", i, cases[i].line, r);
	}
}

/* A kernel without memory tiers (before 6.1): not observed, which is no mismatch. */
static void test_section_absent(void **state)
{
	_cleanup_free_ char *amd = recorded("4node-amd");
	_cleanup_free_ char *a = edit(amd, "\"tiers\":[{\"adistance_start\":512,\"nodes\":[0,1,2,3]}]",
				      "\"tiers\":{\"absent\":\"KeyError: 'memory_tiers'\"}");
	bool ok;
	unsigned n;

	_cleanup_free_ char *r = judge(a, "topologies/4node-amd.xml", VN_FALLBACK_DEFAULT, &ok, &n);
	assert_true(ok);
	assert_int_equal(n, 4);
	assert_non_null(strstr(r, "memory tiers (memory_tiers, model 6.1): not observed (KeyError: 'memory_tiers')\n"));
}

/* The script's reading of the guest's memory is trusted for nothing. */
static void test_bad_output(void **state)
{
	static const struct {
		const char *from, *to;
	} cases[] = {
		{"\"version\":1", "\"version\":2"},
		{"{\"node\":0,\"order\":[0,1,2,3]}", "{\"node\":128,\"order\":[0,1,2,3]}"},
		{"{\"node\":0,\"order\":[0,1,2,3]}", "{\"node\":0,\"order\":[0,1,1,3]}"},
		{"{\"node\":0,\"order\":[0,1,2,3]}", "{\"node\":0,\"order\":\"0 1 2 3\"}"},
		{"{\"node\":1,\"order\":[1,0,3,2]}", "{\"node\":0,\"order\":[1,0,3,2]}"},
		{"[12,10,32,32]", "[12,10,32]"},
		{"[12,10,32,32]", "[12,10,-1,32]"},
		{"\"distances\":[10,12,32]", "\"distances\":[10,12]"},
		{"\"cpus\":[0]", "\"cpus\":[4096]"},
		{"\"preferred\":[]", "\"preferred\":[1.5]"},
		{",\"sched_numa\":", ",\"sched\":"},
		{"{\"version\":1,", "[{\"version\":1,"},
	};
	_cleanup_free_ char *amd = recorded("4node-amd");
	struct vn_error err = {0};
	struct vn_deep *d = NULL;

	for (size_t i = 0; i < VN_ARRAY_SIZE(cases); i++) {
		_cleanup_free_ char *out = edit(amd, cases[i].from, cases[i].to);
		if (vn_deep_parse(out, &d, &err) != -EBADMSG)
			fail_msg("case %zu parsed", i);
		assert_null(d);
		assert_int_equal(err.kind, VN_ERR_INFRA);
		vn_error_clear(&err);
	}
	/* No marker at a line's start: drgn's error is quoted. */
	assert_int_equal(vn_deep_parse("Traceback: KeyError: 'node_data' VNUMA-DEEP {}\n", &d, &err), -EBADMSG);
	assert_non_null(strstr(err.msg, "no VNUMA-DEEP line"));
	assert_non_null(strstr(err.msg, "KeyError"));
	vn_error_clear(&err);
	/* Over the bound: refused unread. */
	struct vn_strbuf big = VN_STRBUF_INIT;
	vn_strbuf_printf(&big, VN_DEEP_MARKER "{\"version\":1,\"pad\":\"");
	for (int i = 0; i < (VN_DEEP_LINE_MAX >> 10) + 1; i++)
		vn_strbuf_printf(&big, "%01024d", 0);
	vn_strbuf_printf(&big, "\"}\n");
	assert_int_equal(vn_deep_parse(big.s, &d, &err), -EBADMSG);
	assert_non_null(strstr(err.msg, "over 1 MiB"));
	vn_error_clear(&err);
	vn_strbuf_free(&big);
}

/* The last marker line wins: drgn's own output cannot stand in front of the script's. */
static void test_last_marker(void **state)
{
	_cleanup_free_ char *amd = recorded("4node-amd");
	_cleanup_free_ char *two = vn_xasprintf(VN_DEEP_MARKER "{\"version\":1}\n%s", amd);
	struct vn_error err = {0};
	struct vn_deep *d = NULL;

	assert_int_equal(vn_deep_parse(two, &d, &err), 0);
	assert_int_equal(d->nnodes, 4);
	assert_int_equal(d->zonelists.len[3], 4);
	assert_int_equal(d->nlevels, 3);
	assert_string_equal(d->level_cpus[1][2], "2-3");
	vn_deep_free(d);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_recorded_equal), cmocka_unit_test(test_zonelist_mismatch),
		cmocka_unit_test(test_kernel_differs), cmocka_unit_test(test_section_absent),
		cmocka_unit_test(test_bad_output),     cmocka_unit_test(test_last_marker),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
