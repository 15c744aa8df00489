/* report.html from the fixtures in tests/fixtures/report/ and from hostile, huge and cut-short runs made here. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <json-c/json.h>

#include "compare/compare.h"
#include "report/html.h"
#include "report/html-priv.h"
#include "report/result.h"
#include "util/alloc.h"
#include "util/cleanup.h"
#include "util/dir.h"
#include "util/file.h"
#include "util/strbuf.h"
#include "golden.h"
#include "tmpdir.h"

static char *fixture(const char *rel)
{
	const char *src = getenv("VN_SOURCE_DIR");

	return vn_xasprintf("%s/tests/fixtures/report/%s", src ? src : ".", rel);
}

static char *slurp(const char *path)
{
	struct vn_error err = {0};
	char *text = NULL;
	size_t len;

	assert_int_equal(vn_file_read(path, 64u << 20, &text, &len, &err), 0);
	return text;
}

/* The fixture's file, with every from replaced by to (from NULL: as it is), into dir/name. */
static void copy_fixture(const char *rel, const char *dir, const char *name, const char *from, const char *to)
{
	_cleanup_free_ char *path = fixture(rel), *text = slurp(path);
	struct vn_strbuf b = VN_STRBUF_INIT;

	for (const char *p = text, *hit; *p; p = hit + strlen(from)) {
		hit = from ? strstr(p, from) : NULL;
		if (!hit) {
			vn_strbuf_append(&b, p, strlen(p));
			break;
		}
		vn_strbuf_append(&b, p, (size_t)(hit - p));
		vn_strbuf_append(&b, to, strlen(to));
	}
	_cleanup_free_ char *out = vn_strbuf_steal(&b);
	vn_test_put(dir, name, out);
}

/* Writes the report of dir into dir/report.html and returns its text. */
static char *report(const char *dir)
{
	_cleanup_free_ char *out = vn_xasprintf("%s/report.html", dir);
	struct vn_error err = {0};

	if (vn_compare_html_write(dir, NULL, NULL, &err) < 0)
		fail_msg("vn_compare_html_write(%s): %s", dir, err.msg);
	return slurp(out);
}

static char *slurp_report(const char *dir)
{
	_cleanup_free_ char *out = vn_xasprintf("%s/report.html", dir);

	return slurp(out);
}

/* The same without a comparison: a group's page as vn_report_html_write draws it. */
static char *plain(const char *dir)
{
	_cleanup_free_ char *out = vn_xasprintf("%s/report.html", dir);
	struct vn_error err = {0};

	if (vn_report_html_write(dir, NULL, &err) < 0)
		fail_msg("vn_report_html_write(%s): %s", dir, err.msg);
	return slurp(out);
}

static int count(const char *s, const char *needle)
{
	int n = 0;

	for (const char *p = s; (p = strstr(p, needle)); p++)
		n++;
	return n;
}

static char *tmpdir(void)
{
	char *d = vn_xstrdup("/tmp/vn-html-XXXXXX");

	assert_non_null(mkdtemp(d));
	return d;
}

/* Nothing that runs or loads: the page is one self-contained file. */
static void assert_inert(const char *html)
{
	assert_null(strstr(html, "<script"));
	assert_null(strstr(html, "<img"));
	assert_null(strstr(html, "<iframe"));
	assert_null(strstr(html, "src="));
	assert_null(strstr(html, " onerror"));
}

static void test_run_fixture(void **state)
{
	_cleanup_free_ char *dir = tmpdir();
	static const char *const files[] = {"result.json", "samples.jsonl", "after/dmesg", "after/node0-distance",
					    "after/node1-distance"};
	(void)state;

	for (size_t i = 0; i < VN_ARRAY_SIZE(files); i++) {
		_cleanup_free_ char *rel = vn_xasprintf("run/%s", files[i]);
		copy_fixture(rel, dir, files[i], NULL, NULL);
	}
	_cleanup_free_ char *html = report(dir);
	assert_non_null(strstr(html, "<!DOCTYPE html>"));
	assert_non_null(strstr(html, "PASSED"));
	assert_non_null(strstr(html, "<h1>memfollow-2node</h1>"));
	assert_non_null(strstr(html, "<th>variant</th><td>default</td>"));
	assert_non_null(strstr(html, "<th>repeat</th><td>1</td>"));
	assert_non_null(strstr(html, "6.1.0-57-amd64"));
	assert_non_null(strstr(html, "console=ttyS0 panic=-1"));
	assert_non_null(strstr(html, "tcg (forced by VNUMA_ACCEL=tcg)"));
	assert_int_equal(count(html, "<td class=\"pass\">pass</td>"), 2);
	/* 2x2 heatmap, the kernel's 10/21 */
	assert_int_equal(count(html, "<svg class=\"heatmap\""), 1);
	assert_int_equal(count(html, "<title>node "), 4);
	assert_non_null(strstr(html, "<title>node 0 to node 1: 21</title>"));
	assert_non_null(strstr(html, "From after/"));
	/* Fallback: node 1 allocates from 1 then 0 */
	assert_non_null(strstr(html, "<tr><th>1</th><td><span class=\"chip\" style=\"background:#ff7f0e\">1</span>"
				     "<span class=\"chip\" style=\"background:#1f77b4\">0</span>"));
	/* all processes + 2 processes (stacked), migrations, hint faults, running */
	assert_int_equal(count(html, "<svg class=\"chart\""), 6);
	assert_int_equal(count(html, "<polygon class=\"area\""), 3 * 2);
	assert_int_equal(count(html, "<polyline class=\"line\""), 2 + 3 + 2);
	assert_non_null(strstr(html, "pid 151 vnuma-wl-memfol: MiB per node"));
	assert_non_null(strstr(html, "12 samples drawn of 12 lines"));
	assert_inert(html);
	vn_rm_rf(dir);
}

/*
 * A tiered run (tests/fixtures/report/tiers: promotion-4node-cxl's result.json
 * and tiermove's output, recorded 2026-12-06 on 6.1): its memory tiers by the
 * model and the guest, the hot window per tier by phase, and each phase's
 * promotions, as the recorded line has them.
 */
static void test_tiers_fixture(void **state)
{
	_cleanup_free_ char *dir = tmpdir(), *steps = vn_xasprintf("%s/steps", dir);
	struct vn_error err = {0};
	(void)state;

	assert_int_equal(vn_mkdir_p(steps, 0755, &err), 0);
	copy_fixture("tiers/result.json", dir, "result.json", NULL, NULL);
	copy_fixture("tiers/steps/tiermove.r0.p0.out", dir, "steps/tiermove.r0.p0.out", NULL, NULL);
	/* Another workload's output, and a tiermove line that is not the last, are not tiermove's results. */
	vn_test_put(dir, "steps/a.r0.p0.out", "{\"workload\":\"stream\",\"phases\":[]}\n");
	vn_test_put(dir, "steps/b.r0.p0.out", "{\"workload\":\"tiermove\",\"phases\":[]}\nbye\n");
	_cleanup_free_ char *html = report(dir);
	assert_non_null(strstr(html, "<h2 id=\"tiers\">Memory tiers</h2>"));
	assert_non_null(strstr(html, "<th>memory tier per node (model)</th><td>4, 4, 22, 22</td>"));
	assert_non_null(strstr(html, "<tr><td class=\"n\">0</td><td>memory_tier4</td><td>memory_tier4</td></tr>"));
	assert_non_null(strstr(html, "<tr><td class=\"n\">3</td><td>memory_tier22</td><td>memory_tier22</td></tr>"));
	assert_non_null(strstr(html, "The guest&#39;s tiers (tiermove&#39;s, from sysfs) are the model&#39;s."));
	assert_non_null(strstr(html, "hot pages per tier (tiermove.r0.p0.out)"));
	assert_null(strstr(html, "<h3>a.r0.p0.out"));
	assert_null(strstr(html, "<h3>b.r0.p0.out"));
	/* Fastest tier first; the first touch put the hot window on CXL. */
	assert_non_null(strstr(html, "<th>hot pages on memory_tier4, first &rarr; last sample</th>"
				     "<th>hot pages on memory_tier22, first &rarr; last sample</th>"));
	assert_non_null(strstr(html, "<tr><td>0 (first touch)</td><td class=\"n\">0 &rarr; 0</td>"
				     "<td class=\"n\">8192 &rarr; 8192</td><td class=\"n\">1.418e+05</td>"
				     "<td class=\"n\">0</td><td class=\"n\">0</td><td class=\"n\">0</td>"));
	/* Phase 1: the window promoted whole, 8192 pages counted as promotions and migrations. */
	assert_non_null(strstr(html,
			       "<tr><td>1</td><td class=\"n\">0 &rarr; 8192</td><td class=\"n\">8192 &rarr; 0"
			       "</td><td class=\"n\">5.042e+06</td><td class=\"n\">0</td><td class=\"n\">0</td>"
			       "<td class=\"n\">8192</td><td class=\"n\">8192</td><td class=\"n\">8192</td></tr>"));
	assert_non_null(strstr(html, "<tr><td>4</td><td class=\"n\">0 &rarr; 8192</td><td class=\"n\">8192 &rarr; 0"));
	/* Without tiermove's output, the model's tiers alone. */
	_cleanup_free_ char *out = vn_xasprintf("%s/tiermove.r0.p0.out", steps);
	assert_int_equal(unlink(out), 0);
	_cleanup_free_ char *html2 = report(dir);
	assert_non_null(strstr(html2, "No tiermove step reported the guest&#39;s tiers."));
	assert_null(strstr(html2, "tier-phases"));
	vn_rm_rf(dir);
}

static void test_hostile(void **state)
{
	_cleanup_free_ char *dir = tmpdir();
	(void)state;

	copy_fixture("run/result.json", dir, "result.json", "memfollow-2node", "<script>alert(1)</script>\\\"'&");
	copy_fixture("run/samples.jsonl", dir, "samples.jsonl", "vnuma-wl-memfol", "<script>x</script>");
	_cleanup_free_ char *html = report(dir);
	assert_inert(html);
	assert_non_null(strstr(html, "<h1>&lt;script&gt;alert(1)&lt;/script&gt;&quot;&#39;&amp;</h1>"));
	assert_non_null(strstr(html, "pid 151 &lt;script&gt;x&lt;/script&gt;: MiB per node"));
	vn_rm_rf(dir);
}

static void test_escape(void **state)
{
	struct vn_strbuf b = VN_STRBUF_INIT;
	(void)state;

	vn_html_text(&b, "<a href=\"x\">'&'</a>\x01\x1b[31m\n");
	assert_string_equal(b.s, "&lt;a href=&quot;x&quot;&gt;&#39;&amp;&#39;&lt;/a&gt;??[31m\n");
	vn_strbuf_free(&b);
	/* Cleaned as result.json's writer cleans it: a runner's page from memory is its file's page. */
	vn_html_text(&b, "a\xff\xc2\x9b\xe2\x80\xae\xc3\xa9");
	assert_string_equal(b.s, "a???\xc3\xa9");
	vn_strbuf_free(&b);

	/* Cut at VN_HTML_MAX_TEXT, not inside a UTF-8 sequence. */
	_cleanup_free_ char *big = vn_xmalloc(3 * VN_HTML_MAX_TEXT + 1);
	for (size_t i = 0; i < VN_HTML_MAX_TEXT; i++)
		memcpy(big + 3 * i, "\xe2\x80\xa6", 3);
	big[3 * VN_HTML_MAX_TEXT] = '\0';
	vn_html_text(&b, big);
	assert_true(b.len < VN_HTML_MAX_TEXT + 64);
	assert_non_null(strstr(b.s, "(12288 bytes)"));
	assert_int_equal(strstr(b.s, "\xe2\x80\xa6 (") - b.s, VN_HTML_MAX_TEXT - VN_HTML_MAX_TEXT % 3);
	vn_strbuf_free(&b);

	assert_true(vn_html_path_ok("balancing-on/1"));
	assert_false(vn_html_path_ok("../x"));
	assert_false(vn_html_path_ok("a/../../x"));
	assert_false(vn_html_path_ok("/etc"));
	assert_false(vn_html_path_ok("a\"onclick=x"));
	assert_false(vn_html_path_ok(""));
	assert_true(vn_html_path_ok("a/..b"));
}

static void test_pick_lines(void **state)
{
	unsigned total;
	(void)state;

	_cleanup_free_ char *few = vn_html_pick_lines("a\nb\nc", 4, &total);
	assert_string_equal(few, "a\nb\nc");
	assert_int_equal(total, 3);
	/* 10 lines, 4 kept: 0, 3, 6, 9; the others stay as blank lines, so line numbers hold. */
	_cleanup_free_ char *some = vn_html_pick_lines("0\n1\n2\n3\n4\n5\n6\n7\n8\n9\n", 4, &total);
	assert_string_equal(some, "0\n\n\n3\n\n\n6\n\n\n9\n");
	assert_int_equal(total, 10);
	_cleanup_free_ char *cut = vn_html_pick_lines("0\n1\n2\n3\n4\n5\n6\n7\n8\n{\"t\":", 4, &total);
	assert_string_equal(cut, "0\n\n\n3\n\n\n6\n\n\n{\"t\":");
}

static void test_downsampled(void **state)
{
	_cleanup_free_ char *dir = tmpdir();
	struct vn_strbuf b = VN_STRBUF_INIT;
	enum { LINES = 20000 };
	(void)state;

	copy_fixture("run/result.json", dir, "result.json", NULL, NULL);
	for (unsigned i = 0; i < LINES; i++)
		vn_strbuf_printf(
			&b,
			"{\"seq\":%u,\"t\":%u,\"vmstat\":{\"numa_pages_migrated\":%u,\"numa_hint_faults\":%u},"
			"\"nodes\":[{\"node\":0},{\"node\":1}],\"procs\":[{\"pid\":7,\"comm\":\"vnuma-wl-x\","
			"\"mem_kb_per_node\":{\"0\":%u,\"1\":%u},\"threads\":[{\"tid\":7,\"cpu\":0,\"node\":0,"
			"\"state\":\"R\"}]}],\"running_per_node\":{\"0\":1,\"1\":0},\"cost\":{\"cpu_s\":0.001}}\n",
			i, i, i, 2 * i, i, LINES - i);
	_cleanup_free_ char *samples = vn_strbuf_steal(&b);
	vn_test_put(dir, "samples.jsonl", samples);
	_cleanup_free_ char *html = report(dir);
	assert_non_null(strstr(html, "300 samples drawn of 20000 lines, t = 0.0 .. 19999.0 s"));
	/* Every series holds at most VN_HTML_MAX_POINTS points (a stacked area twice that: top and bottom). */
	for (const char *p = html; (p = strstr(p, "points=\"")); p++) {
		const char *end = strchr(p + 8, '"');
		int pts = 0;
		for (const char *q = p + 8; q < end; q++)
			pts += *q == ',';
		assert_true(pts <= 2 * VN_HTML_MAX_POINTS);
	}
	/* 2 MB of samples, a page a fraction of that */
	assert_true(strlen(samples) > (2u << 20));
	assert_true(strlen(html) < (200u << 10));
	vn_rm_rf(dir);
}

static void test_incomplete(void **state)
{
	_cleanup_free_ char *dir = tmpdir();
	(void)state;

	/* Cut short before after/ was collected: the snapshot is before/'s; samples.jsonl ends mid-line. */
	copy_fixture("run/result.json", dir, "result.json", "\"complete\": true,\n  \"error\": null",
		     "\"complete\": false,\n  \"error\": \"guest <b>crashed</b>: kernel panic\"");
	copy_fixture("run/after/node0-distance", dir, "before/node0-distance", NULL, NULL);
	copy_fixture("run/after/node1-distance", dir, "before/node1-distance", NULL, NULL);
	vn_test_put(
		dir, "samples.jsonl",
		"{\"seq\":0,\"t\":0,\"vmstat\":{},\"nodes\":[{\"node\":0}],\"procs\":[],\"running_per_node\":{\"0\":0},"
		"\"cost\":{\"cpu_s\":0.001}}\n{\"seq\":1,\"t\":1,\"vms");
	_cleanup_free_ char *html = report(dir);
	assert_non_null(strstr(html, "INCOMPLETE: guest &lt;b&gt;crashed&lt;/b&gt;: kernel panic"));
	assert_null(strstr(html, "PASSED"));
	assert_non_null(strstr(html, "From before/"));
	assert_non_null(strstr(html, "No dmesg in after/ or before/."));
	assert_non_null(strstr(html, "the last line was cut off mid-write"));
	assert_non_null(strstr(html, "No workload process in the samples."));
	vn_rm_rf(dir);

	/* No samples at all, and a samples.jsonl that is not JSON: notes, not errors. */
	_cleanup_free_ char *dir2 = tmpdir();
	copy_fixture("run/result.json", dir2, "result.json", NULL, NULL);
	_cleanup_free_ char *none = report(dir2);
	assert_non_null(strstr(none, "samples.jsonl: cannot open"));
	vn_test_put(dir2, "samples.jsonl", "<html>\n");
	_cleanup_free_ char *bad = report(dir2);
	assert_non_null(strstr(bad, "samples.jsonl:1:"));
	vn_rm_rf(dir2);
}

/* trace.jsonl drawn: each tracepoint's cumulative count; a hostile or cut-short one gives notes, escaped. */
static void test_trace(void **state)
{
	_cleanup_free_ char *dir = tmpdir();
	(void)state;

	copy_fixture("run/result.json", dir, "result.json", NULL, NULL);
	vn_test_put(dir, "trace.jsonl",
		    "{\"type\":\"header\",\"version\":1,\"events\":[{\"event\":\"migrate:mm_migrate_pages\"},"
		    "{\"event\":\"sched:<script>x</script>\"}]}\n"
		    "{\"t\":0.5,\"event\":\"migrate:mm_migrate_pages\",\"fields\":{}}\n"
		    "{\"t\":1.5,\"event\":\"migrate:mm_migrate_pages\",\"fields\":{}}\n"
		    "{\"t\":2,\"event\":\"sched:<script>x</script>\",\"fields\":{},\"from_node\":1,\"to_node\":0}\n"
		    "{\"t\":2.5,\"event\":\"sched:<script>x</script>\",\"fields\":{},\"from_node\":1,\"to_node\":1}\n"
		    "{\"t\":-1,\"event\":\"migrate:mm_migrate_pages\"}\n"
		    "{\"t\":1,\"event\":\"not:in_the_header\"}\n"
		    "{\"type\":\"end\",\"complete\":true}\n");
	_cleanup_free_ char *html = report(dir);
	assert_non_null(strstr(html, "<h2 id=\"trace\">Tracepoints</h2>"));
	assert_non_null(strstr(html, "4 events of 2 tracepoints in trace.jsonl.</p>"));
	/* The event with from_node/to_node gets a second series: those that crossed. */
	assert_non_null(strstr(html, "sched:&lt;script&gt;x&lt;/script&gt; across nodes"));
	assert_null(strstr(html, "mm_migrate_pages across nodes"));
	assert_non_null(strstr(html, "trace events (cumulative count) since the capture began"));
	assert_non_null(strstr(html, "sched:&lt;script&gt;x&lt;/script&gt;"));
	assert_inert(html);

	/* Cut short (no end record), with lines that are not JSON. */
	vn_test_put(dir, "trace.jsonl",
		    "{\"type\":\"header\",\"events\":[{\"event\":\"a:b\"}]}\n{\"t\":1,\"event\":\"a:b\"}\n<b>\n{\"t\":"
		    "2,\"ev");
	_cleanup_free_ char *cut = report(dir);
	assert_non_null(strstr(cut,
			       "1 events of 1 tracepoints in trace.jsonl; it has no end record: the capture did not "
			       "finish; some lines are not JSON."));
	/* No trace.jsonl: no section. */
	_cleanup_free_ char *path = vn_xasprintf("%s/trace.jsonl", dir);
	unlink(path);
	_cleanup_free_ char *none = report(dir);
	assert_null(strstr(none, "Tracepoints"));
	vn_rm_rf(dir);
}

/*
 * The runner's own copy of the capture draws the same section as trace.jsonl
 * read back: its times as the file prints them, the same series, the same
 * notes (no end record yet, then a complete one).
 */
static void test_trace_from_memory(void **state)
{
	_cleanup_free_ char *dir = tmpdir();
	(void)state;

	copy_fixture("run/result.json", dir, "result.json", NULL, NULL);
	vn_test_put(dir, "trace.jsonl",
		    "{\"type\":\"header\",\"version\":1,\"events\":[{\"event\":\"migrate:mm_migrate_pages\"},"
		    "{\"event\":\"sched:sched_move_numa\"}]}\n"
		    "{\"t\":0.000001,\"event\":\"migrate:mm_migrate_pages\",\"fields\":{}}\n"
		    "{\"t\":1.333333,\"event\":\"sched:sched_move_numa\",\"fields\":{},\"from_node\":1,\"to_node\":0}\n"
		    "{\"t\":2.5,\"event\":\"sched:sched_move_numa\",\"fields\":{},\"from_node\":-1,\"to_node\":0}\n"
		    "{\"t\":3.75,\"event\":\"migrate:mm_migrate_pages\",\"fields\":{}}\n");
	struct vn_html_trace tr = {.nnames = 2};
	snprintf(tr.names[0], sizeof(tr.names[0]), "migrate:mm_migrate_pages");
	snprintf(tr.names[1], sizeof(tr.names[1]), "sched:sched_move_numa");
	tr.moves[1] = true;
	vn_html_trace_add(&tr, 0.000001, 0, false);
	vn_html_trace_add(&tr, 1.333333, 1, true);
	vn_html_trace_add(&tr, 2.5, 1, false);
	vn_html_trace_add(&tr, 3.75, 0, false);
	vn_html_trace_add(&tr, -1, 0, false); /* before the capture: left out, as the loader leaves it */
	vn_html_trace_add(&tr, 1, 7, false);  /* no such tracepoint */
	assert_int_equal(tr.n, 4);

	_cleanup_free_ char *path = vn_xasprintf("%s/result.json", dir);
	_cleanup_free_ char *trace_path = vn_xasprintf("%s/trace.jsonl", dir);
	struct vn_result_run res;
	struct vn_error err = {0};
	assert_int_equal(vn_result_load(path, &res, &err), 0);
	for (int ended = 0; ended < 2; ended++) {
		if (ended) {
			FILE *f = fopen(trace_path, "a");
			assert_non_null(f);
			fputs("{\"type\":\"end\",\"complete\":true}\n", f);
			fclose(f);
			tr.ended = tr.complete = true;
		}
		_cleanup_free_ char *file = report(dir);
		struct vn_strbuf mem = VN_STRBUF_INIT;
		struct vn_html_run_in in = {.dir = dir, .result = &res, .samples_why = "none", .trace = &tr};
		vn_html_run_page(&mem, &in);
		const char *a = strstr(file, "<h2 id=\"trace\">"), *b = strstr(mem.s, "<h2 id=\"trace\">");
		assert_non_null(a);
		assert_non_null(b);
		assert_non_null(strstr(a, "sched:sched_move_numa across nodes"));
		assert_string_equal(a, b);
		vn_strbuf_free(&mem);
	}
	vn_result_clear(&res);
	vn_html_trace_clear(&tr);
	vn_rm_rf(dir);
}

static void test_group_fixture(void **state)
{
	_cleanup_free_ char *dir = fixture("group");
	_cleanup_free_ char *out = vn_xasprintf("/tmp/vn-html-group-%ld.html", (long)getpid());
	struct vn_error err = {0};
	(void)state;

	assert_int_equal(vn_compare_html_write(dir, out, NULL, &err), 0);
	_cleanup_free_ char *html = slurp(out);
	unlink(out);
	assert_inert(html);
	assert_non_null(strstr(html, "memfollow-2node (result group)"));
	assert_non_null(strstr(html, "<table class=\"compare\">"));
	/* The significant rows first: run.duration_s is first in compare.json, and not significant. */
	assert_int_equal(count(html, "<svg class=\"strip\""), 4);
	assert_int_equal(count(html, "<circle class=\"point\""), 4 * 6);
	assert_int_equal(count(html, "<line class=\"mean\""), 4 * 2);
	assert_true(strstr(html, "run.duration_s</text>") > strstr(html, "memfollow.local_fraction_end (significant)"));
	assert_non_null(strstr(html, "-100.0%"));
	assert_non_null(strstr(html, "<a href=\"balancing-off/3/report.html\">"));
	assert_int_equal(count(html, "<a href="), 6);
	assert_int_equal(count(html, "<td class=\"fail\">fail</td>"), 3);
}

static void test_group_no_compare(void **state)
{
	_cleanup_free_ char *dir = tmpdir();
	(void)state;

	vn_test_put(dir, "group.json",
		    "{\"scenario\":\"s\",\"topology\":\"t\",\"variants\":[{\"name\":\"a\"},{\"name\":\"b\"}],\"runs\":["
		    "{\"variant\":\"a\",\"repeat\":1,\"dir\":\"a/1\",\"exit\":0},"
		    "{\"variant\":\"b\",\"repeat\":1,\"dir\":\"b/1\",\"exit\":0},"
		    "{\"variant\":\"b\",\"repeat\":2,\"dir\":\"../../etc\",\"exit\":null}],\"complete\":false}");
	vn_test_put(dir, "a/1/result.json",
		    "{\"complete\":true,\"passed\":true,\"scenario\":\"s\",\"topology\":\"t\",\"metrics\":{\"flat\":5,"
		    "\"moves\":10}}");
	vn_test_put(dir, "b/1/result.json",
		    "{\"complete\":true,\"passed\":true,\"scenario\":\"s\",\"topology\":\"t\",\"metrics\":{\"flat\":5,"
		    "\"moves\":20,\"x<y\":1}}");
	vn_test_put(dir, "a/1/report.html", "");
	_cleanup_free_ char *html = plain(dir);
	assert_inert(html);
	assert_non_null(strstr(html, "INCOMPLETE"));
	assert_null(strstr(html, "<table class=\"compare\">"));
	assert_non_null(strstr(html, "No comparison"));
	/* The union of the metrics, the one whose means differ most first. */
	assert_int_equal(count(html, "<svg class=\"strip\""), 3);
	assert_true(strstr(html, ">moves</text>") < strstr(html, ">flat</text>"));
	assert_non_null(strstr(html, ">x&lt;y</text>"));
	/* The run outside the group gets no link and is not read. */
	assert_null(strstr(html, "../../etc"));
	assert_int_equal(count(html, "<a href="), 2);
	assert_int_equal(count(html, "(not made yet)"), 1);
	assert_non_null(strstr(html, "running"));

	/* Compared (compare refuses a run outside the group: without it): the table, one run a side, no p. */
	vn_test_put(dir, "group.json",
		    "{\"scenario\":\"s\",\"topology\":\"t\",\"variants\":[{\"name\":\"a\"},{\"name\":\"b\"}],"
		    "\"runs\":[{\"variant\":\"a\",\"repeat\":1,\"dir\":\"a/1\",\"exit\":0},"
		    "{\"variant\":\"b\",\"repeat\":1,\"dir\":\"b/1\",\"exit\":0}],\"complete\":true}");
	_cleanup_free_ char *cmp = report(dir);
	assert_inert(cmp);
	assert_non_null(strstr(cmp, "<table class=\"compare\">"));
	assert_non_null(strstr(cmp, "<td class=\"n\">20 <span class=\"note\">n=1</span><br>+100.0%</td>"));
	assert_null(strstr(cmp, "No comparison"));
	/* A group that cannot be compared (its one run has a result.json that is not one) says why. */
	vn_test_put(dir, "group.json",
		    "{\"scenario\":\"s\",\"topology\":\"t\",\"variants\":[{\"name\":\"a\"}],\"runs\":["
		    "{\"variant\":\"a\",\"repeat\":1,\"dir\":\"a/1\",\"exit\":0}],\"complete\":true}");
	vn_test_put(dir, "a/1/result.json", "{\"complete\":true,\"metrics\":{}}");
	_cleanup_free_ char *bad = report(dir);
	assert_non_null(strstr(bad, "<h2>Comparison</h2>\n<p class=\"note\">"));
	assert_non_null(strstr(bad, "scenario"));
	assert_non_null(strstr(bad, "no result.json"));
	vn_rm_rf(dir);
}

/* A run directory planted in a group as a symlink to a run elsewhere is not read into the report. */
static void test_group_symlinked_run(void **state)
{
	_cleanup_free_ char *dir = tmpdir(), *elsewhere = tmpdir();
	(void)state;

	vn_test_put(dir, "group.json",
		    "{\"scenario\":\"s\",\"topology\":\"t\",\"variants\":[{\"name\":\"a\"},{\"name\":\"b\"}],\"runs\":["
		    "{\"variant\":\"a\",\"repeat\":1,\"dir\":\"a/1\",\"exit\":0},"
		    "{\"variant\":\"b\",\"repeat\":1,\"dir\":\"b/1\",\"exit\":0}],\"complete\":true}");
	vn_test_put(
		dir, "a/1/result.json",
		"{\"complete\":true,\"passed\":true,\"scenario\":\"s\",\"topology\":\"t\",\"metrics\":{\"flat\":5}}");
	vn_test_put(elsewhere, "run/result.json",
		    "{\"complete\":true,\"passed\":true,\"scenario\":\"s\",\"topology\":\"t\",\"metrics\":{\"planted\":"
		    "1}}");
	_cleanup_free_ char *b = vn_xasprintf("%s/b", dir), *link = vn_xasprintf("%s/b/1", dir);
	_cleanup_free_ char *target = vn_xasprintf("%s/run", elsewhere);
	assert_int_equal(mkdir(b, 0755), 0);
	assert_int_equal(symlink(target, link), 0);
	_cleanup_free_ char *html = report(dir);
	assert_non_null(strstr(html, ">flat</text>"));
	assert_null(strstr(html, "planted"));
	vn_rm_rf(dir);
	vn_rm_rf(elsewhere);
}

/* The locality fixture (a real memfollow-balancing-2node run with locality, trimmed) into a temp dir. */
static char *locality_run(void)
{
	char *dir = tmpdir();
	static const char *const files[] = {"result.json", "samples.jsonl", "locality-proof.txt",
					    "after/node0-distance", "after/node1-distance"};

	for (size_t i = 0; i < VN_ARRAY_SIZE(files); i++) {
		_cleanup_free_ char *rel = vn_xasprintf("locality/%s", files[i]);
		copy_fixture(rel, dir, files[i], NULL, NULL);
	}
	return dir;
}

/* The access matrix beside the distances, its cells' counts and row shares, the local diagonal outlined. */
static void test_locality_heatmap(void **state)
{
	_cleanup_free_ char *dir = locality_run();
	(void)state;

	_cleanup_free_ char *html = report(dir);
	assert_inert(html);
	const char *sec = strstr(html, "<h2 id=\"locality\">Distances (the kernel's view) and accesses");
	assert_non_null(sec);
	/* The distance heatmap first, the access heatmap beside it, both before the fallback lists. */
	assert_int_equal(count(html, "<svg class=\"heatmap\""), 2);
	const char *dist = strstr(sec, "<title>node 0 to node 1: 21</title>"), *acc = strstr(sec, "CPU\\mem");
	assert_non_null(dist);
	assert_non_null(acc);
	assert_true(dist < acc && acc < strstr(html, "Fallback order"));
	/* result.json's locality.matrix.cpuI.memJ: 74138288 6264912 / 13245929 89206329 */
	assert_non_null(strstr(acc, "<title>CPUs of node 0 to memory of node 0 (local): 74138288 accesses, 92.21% "
				    "of node 0's</title>"));
	assert_non_null(strstr(acc, "<title>CPUs of node 0 to memory of node 1 (remote): 6264912 accesses, 7.792% "
				    "of node 0's</title>"));
	assert_non_null(strstr(acc, "<title>CPUs of node 1 to memory of node 0 (remote): 13245929 accesses, 12.93% "
				    "of node 1's</title>"));
	assert_non_null(strstr(acc, "<title>CPUs of node 1 to memory of node 1 (local): 89206329 accesses, 87.07% "
				    "of node 1's</title>"));
	static const char *const cells[] = {">74M</text>", ">92%</text>", ">6.3M</text>", ">7.8%</text>",
					    ">13M</text>", ">13%</text>", ">89M</text>",  ">87%</text>"};
	for (size_t i = 0; i < VN_ARRAY_SIZE(cells); i++)
		assert_non_null(strstr(acc, cells[i]));
	/* Exactly the diagonal is outlined. */
	assert_int_equal(count(html, "class=\"local\""), 2);
	for (const char *p = html; (p = strstr(p, "class=\"local\"")); p++)
		assert_true(strstr(p, "(local)") < strstr(p, "</rect>"));
	/* The run's remote fractions, user, kernel, all; the totals; the proof. */
	assert_non_null(strstr(acc, "<th>over the steps</th><td class=\"n\">0.0155</td><td class=\"n\">0.169</td>"
				    "<td class=\"n\">0.1067</td>"));
	assert_non_null(strstr(acc, "183M accesses in the matrix, 119k outside it"));
	assert_non_null(strstr(acc, "modeled memory time 20.43 s"));
	assert_non_null(strstr(acc, "node 1 bound: user stores node0=35009 node1=5287141"));
	vn_rm_rf(dir);
}

/* The remote fraction per sample beside memory per node: every line's matrix, on the memory charts' time axis. */
static void test_locality_series(void **state)
{
	_cleanup_free_ char *dir = locality_run();
	_cleanup_free_ char *rpath = vn_xasprintf("%s/result.json", dir),
			    *spath = vn_xasprintf("%s/samples.jsonl", dir);
	_cleanup_free_ char *samples = slurp(spath);
	(void)state;

	_cleanup_free_ char *html = report(dir);
	const char *mem = strstr(html, "<h2>Workload memory per node (numa_maps) and remote fraction");
	assert_non_null(mem);
	const char *chart = strstr(mem, "remote fraction of accesses per sample (user and kernel)");
	/* Second in the row: after the all-processes chart, before the first process's. */
	assert_non_null(chart);
	assert_true(strstr(mem, "all workload processes: MiB per node") < chart);
	assert_true(chart < strstr(mem, "pid 160 vnuma-wl-memfol: MiB per node"));
	assert_true(chart < strstr(html, "<h2>Migrations"));
	assert_int_equal(count(html, "remote fraction of accesses per sample"), 1);
	assert_non_null(strstr(chart, ">all CPUs</text>"));
	assert_non_null(strstr(chart, ">CPUs of node 1</text>"));
	assert_non_null(strstr(html, "per-sample matrices (15 lines)"));

	struct vn_result_run res;
	struct vn_error err = {0};
	assert_int_equal(vn_result_load(rpath, &res, &err), 0);
	struct vn_html_loc l;
	vn_html_loc_load(&l, &res, samples, "proof");
	assert_true(l.on);
	assert_int_equal(l.nnodes, 2);
	assert_int_equal(l.lines, 15);
	assert_int_equal(l.bad, 0);
	assert_int_equal(l.npoints, 15);
	assert_int_equal(l.nrows, 2);
	/* The first line: [[4167039,1614954],[1428014,2925519]], at t = 0.014063 */
	assert_float_equal(l.t[0], 0.014063, 1e-9);
	assert_float_equal(l.all[0], 0.300228, 1e-6);
	assert_float_equal(l.row[0][0], 1614954.0 / (4167039 + 1614954), 1e-12);
	assert_float_equal(l.row[1][0], 1428014.0 / (1428014 + 2925519), 1e-12);
	assert_float_equal(l.remote[0], 0.015498321890785571, 1e-15);
	assert_float_equal(l.matrix[1 * 2 + 0], 13245929, 0);
	vn_html_loc_clear(&l);

	/* 300 of 600 lines drawn: each point sums the lines since the one drawn before, so none is lost. */
	struct vn_strbuf b = VN_STRBUF_INIT;
	for (unsigned i = 0; i < 600; i++) {
		vn_strbuf_printf(&b,
				 "{\"host_t\":%u.5,\"locality\":{\"accesses\":4,\"matrix\":[[%u,1],[0,%u]]},"
				 "\"seq\":%u,\"t\":%u}\n",
				 i, i, 2, i, i);
	}
	vn_html_loc_load(&l, &res, b.s, NULL);
	assert_int_equal(l.lines, 600);
	assert_int_equal(l.npoints, 300);
	double sum_t = 0;
	for (unsigned i = 1; i < l.npoints; i++)
		sum_t += l.t[i] - l.t[i - 1];
	assert_float_equal(sum_t, 599, 0);
	/* Point 1 covers lines 1 and 2 (line 2 is drawn), [[1,1],[0,2]] and [[2,1],[0,2]]: 2 of 9 remote. */
	assert_float_equal(l.t[1], 2, 0);
	assert_float_equal(l.all[1], 2.0 / 9, 1e-12);
	assert_float_equal(l.row[0][1], 2.0 / 5, 1e-12);
	assert_float_equal(l.row[1][1], 0, 0);
	vn_html_loc_clear(&l);
	vn_strbuf_free(&b);
	vn_result_clear(&res);
	vn_rm_rf(dir);
}

/* The same section from the runner's memory as from the directory. */
static void test_locality_from_memory(void **state)
{
	_cleanup_free_ char *dir = locality_run();
	_cleanup_free_ char *rpath = vn_xasprintf("%s/result.json", dir),
			    *spath = vn_xasprintf("%s/samples.jsonl", dir);
	_cleanup_free_ char *ppath = vn_xasprintf("%s/locality-proof.txt", dir);
	_cleanup_free_ char *samples = slurp(spath), *proof = slurp(ppath), *file = report(dir);
	struct vn_result_run res;
	struct vn_error err = {0};
	struct vn_strbuf mem = VN_STRBUF_INIT;
	(void)state;

	assert_int_equal(vn_result_load(rpath, &res, &err), 0);
	struct vn_html_run_in in = {.dir = dir, .result = &res, .samples = samples, .loc_proof = proof};
	vn_html_run_page(&mem, &in);
	const char *a = strstr(file,
			       "<div class=\"side\">\n<svg class=\"heatmap\" xmlns=\"http://www.w3.org/2000/svg\" "
			       "width=\"192\""),
		   *b = strstr(mem.s,
			       "<div class=\"side\">\n<svg class=\"heatmap\" xmlns=\"http://www.w3.org/2000/svg\" "
			       "width=\"192\"");
	assert_non_null(a);
	assert_non_null(b);
	/* The access heatmap, its figures and the proof; then the remote fraction chart. */
	assert_memory_equal(a, b, (size_t)(strstr(a, "</details>") - a));
	a = strstr(file, "<svg class=\"chart\""), b = strstr(mem.s, "<svg class=\"chart\"");
	a = strstr(a + 1, "<svg class=\"chart\""), b = strstr(b + 1, "<svg class=\"chart\"");
	assert_non_null(strstr(a, "remote fraction of accesses per sample"));
	assert_memory_equal(a, b, (size_t)(strstr(a, "</svg>") - a));
	vn_result_clear(&res);
	vn_strbuf_free(&mem);
	vn_rm_rf(dir);
}

/*
 * Whole pages, byte for byte, against tests/golden/report/: the run fixture
 * with a trace, and the locality fixture (VN_UPDATE_GOLDEN=1 rewrites them).
 */
static void test_run_golden(void **state)
{
	_cleanup_free_ char *dir = tmpdir(), *loc = locality_run();
	static const char *const files[] = {"result.json", "samples.jsonl", "after/dmesg", "after/node0-distance",
					    "after/node1-distance"};
	(void)state;

	for (size_t i = 0; i < VN_ARRAY_SIZE(files); i++) {
		_cleanup_free_ char *rel = vn_xasprintf("run/%s", files[i]);
		copy_fixture(rel, dir, files[i], NULL, NULL);
	}
	vn_test_put(dir, "trace.jsonl",
		    "{\"type\":\"header\",\"version\":1,\"events\":[{\"event\":\"migrate:mm_migrate_pages\"},"
		    "{\"event\":\"sched:sched_move_numa\"}]}\n"
		    "{\"t\":0.5,\"event\":\"migrate:mm_migrate_pages\",\"fields\":{}}\n"
		    "{\"t\":2,\"event\":\"sched:sched_move_numa\",\"fields\":{},\"from_node\":1,\"to_node\":0}\n"
		    "{\"type\":\"end\",\"complete\":true}\n");
	_cleanup_free_ char *run = report(dir), *locality = report(loc);
	vn_test_golden("report", "run.html", run, "report.html");
	vn_test_golden("report", "locality.html", locality, "report.html");
	vn_rm_rf(dir);
	vn_rm_rf(loc);
}

/* Without locality, neither; with a proof that failed, its reason and what it saw, escaped. */
static void test_locality_absent_or_failed(void **state)
{
	_cleanup_free_ char *dir = tmpdir();
	static const char *const files[] = {"result.json", "samples.jsonl", "after/node0-distance",
					    "after/node1-distance"};
	(void)state;

	for (size_t i = 0; i < VN_ARRAY_SIZE(files); i++) {
		_cleanup_free_ char *rel = vn_xasprintf("run/%s", files[i]);
		copy_fixture(rel, dir, files[i], NULL, NULL);
	}
	_cleanup_free_ char *off = report(dir);
	assert_int_equal(count(off, "<svg class=\"heatmap\""), 1);
	assert_null(strstr(off, "id=\"locality\""));
	assert_null(strstr(off, "remote fraction"));
	assert_null(strstr(off, "locality"));

	copy_fixture("run/result.json", dir, "result.json", "\"complete\": true,\n  \"error\": null",
		     "\"complete\": false,\n  \"error\": \"locality map not proven: memory bound to node 1 took 12 of "
		     "5300000 user stores\"");
	vn_test_put(dir, "locality-proof.txt",
		    "node 0 bound: user stores node0=5283801 node1=44336 unmapped=0 unplaced=0 io=0\n"
		    "node 1 bound: user stores node0=5287141 node1=12 unmapped=0 unplaced=0 io=0 <script>\n");
	_cleanup_free_ char *failed = report(dir);
	assert_inert(failed);
	assert_int_equal(count(failed, "<svg class=\"heatmap\""), 1);
	assert_non_null(strstr(failed, "<p class=\"note\">No locality figures in result.json: locality map not "
				       "proven: memory bound to node 1 took 12 of 5300000 user stores</p>"));
	assert_non_null(strstr(failed, "node1=12 unmapped=0 unplaced=0 io=0 &lt;script&gt;"));
	assert_null(strstr(failed, "remote fraction of accesses"));
	vn_rm_rf(dir);
}

/* One line's matrix: only the runner's head of the line, every value checked. */
static void test_locality_line(void **state)
{
	double m[VN_MAX_NODES * VN_MAX_NODES];
	unsigned side = 0;
	(void)state;

#define LINE(s) vn_html_loc_line(s, strlen(s), m, &side)
	assert_int_equal(LINE("{\"host_t\":1.5,\"locality\":{\"accesses\":10,\"matrix\":[[1,2],[3,4]]},\"t\":1}"), 1);
	assert_int_equal(side, 2);
	assert_float_equal(m[0] + m[1] + m[2] + m[3], 10, 0);
	assert_float_equal(m[2], 3, 0);
	/* No matrix at the head: none, whatever the guest's part holds. */
	assert_int_equal(LINE("{\"host_t\":1.5,\"t\":1,\"locality\":{\"matrix\":[[9,9],[9,9]]}}"), 0);
	assert_int_equal(LINE("{\"seq\":0,\"t\":1}"), 0);
	assert_int_equal(LINE(""), 0);
	/* Not one the runner writes. */
	static const char *const bad[] = {
		"{\"host_t\":1.5,\"locality\":{\"matrix\":[[1,2],[3]]},\"t\":1}",
		"{\"host_t\":1.5,\"locality\":{\"matrix\":[[1,-2],[3,4]]},\"t\":1}",
		"{\"host_t\":1.5,\"locality\":{\"matrix\":[[1,\"2\"],[3,4]]},\"t\":1}",
		"{\"host_t\":1.5,\"locality\":{\"matrix\":[[1e999,2],[3,4]]},\"t\":1}",
		"{\"host_t\":1.5,\"locality\":{\"matrix\":[[1,2],[3,4]]}}",
		"{\"host_t\":1.5,\"locality\":{\"matrix\":[[[1]]]},\"t\":1}",
		"{\"host_t\":1.5,\"locality\":{\"matrix\":[]},\"t\":1}",
		"{\"host_t\":1.5,\"locality\":{\"matrix\":7},\"t\":1}",
		"{\"host_t\":1.5,\"locality\":{\"x\":{\"matrix\":[[1]]}},\"t\":1}",
		"{\"host_t\":1.5,\"locality\":{\"matrix\":[[1]],\"matrix\":[[1",
		"{\"host_t\":1.5,\"locality\":[[1]],\"t\":1}",
		"{\"host_t\":1.5,\"locality\":{\"matrix\":[[18446744073709551616]]},\"t\":1}",
	};
	for (size_t i = 0; i < VN_ARRAY_SIZE(bad); i++)
		if (LINE(bad[i]) != -1)
			fail_msg("accepted: %s", bad[i]);
	/* The widest the model has, and one wider. */
	struct vn_strbuf b = VN_STRBUF_INIT;
	for (unsigned wide = VN_MAX_NODES; wide <= VN_MAX_NODES + 1; wide++) {
		b.len = 0;
		vn_strbuf_printf(&b, "{\"host_t\":1,\"locality\":{\"matrix\":[");
		for (unsigned i = 0; i < wide; i++) {
			vn_strbuf_printf(&b, "%s[", i ? "," : "");
			for (unsigned j = 0; j < wide; j++)
				vn_strbuf_printf(&b, "%s%u", j ? "," : "", i == j);
			vn_strbuf_printf(&b, "]");
		}
		vn_strbuf_printf(&b, "]},\"t\":0}");
		assert_int_equal(LINE(b.s), wide == VN_MAX_NODES ? 1 : -1);
	}
	vn_strbuf_free(&b);
#undef LINE
}

/* samples.jsonl with lines that are not the runner's: the chart still drawn from the others, and says so. */
static void test_locality_bad_samples(void **state)
{
	_cleanup_free_ char *dir = locality_run();
	(void)state;

	vn_test_put(dir, "samples.jsonl",
		    "{\"host_t\":1,\"locality\":{\"matrix\":[[3,1],[0,4]]},\"seq\":0,\"t\":0}\n"
		    "<html><script>\n"
		    "{\"host_t\":2,\"locality\":{\"matrix\":[[1,2,3]]},\"seq\":1,\"t\":1}\n"
		    "{\"host_t\":3,\"locality\":{\"matrix\":[[1,1],[1,1]]},\"seq\":2,\"t\":2}\n"
		    "{\"host_t\":4,\"locality\":{\"matrix\":[[1,1],[1,1]]},\"seq\":3,\"t\":3,\"vms");
	_cleanup_free_ char *html = report(dir);
	assert_inert(html);
	/* The samples' own charts cannot be drawn (their parser refuses the file); the remote fraction can. */
	assert_non_null(strstr(html, "samples.jsonl:1:"));
	assert_non_null(strstr(html, "<h2>Remote fraction over time (the emulator's count)</h2>"));
	assert_non_null(strstr(html, "remote fraction of accesses per sample"));
	/* Lines 1, 4 and 5 (its head is whole); line 3 is not square; line 2 has no head: not a locality line. */
	assert_non_null(strstr(html, "(3 lines)"));
	assert_non_null(strstr(html, "1 lines' locality could not be read"));
	vn_rm_rf(dir);
}

/* A group whose runs counted: the remote fractions per variant, however many metrics rank above them. */
static void test_locality_group(void **state)
{
	_cleanup_free_ char *dir = tmpdir();
	(void)state;

	vn_test_put(
		dir, "group.json",
		"{\"scenario\":\"s\",\"topology\":\"t\",\"variants\":[{\"name\":\"on\"},{\"name\":\"off\"}],\"runs\":["
		"{\"variant\":\"on\",\"repeat\":1,\"dir\":\"on/1\",\"exit\":0},"
		"{\"variant\":\"off\",\"repeat\":1,\"dir\":\"off/1\",\"exit\":0}],\"complete\":true}");
	vn_test_put(dir, "on/1/result.json",
		    "{\"complete\":true,\"passed\":true,\"scenario\":\"s\",\"topology\":\"t\",\"metrics\":{\"locality."
		    "remote_fraction.user\":0.02,"
		    "\"locality.step.mf.remote_fraction.user\":0.01,\"locality.matrix.cpu0.mem0\":5}}");
	vn_test_put(dir, "off/1/result.json",
		    "{\"complete\":true,\"passed\":true,\"scenario\":\"s\",\"topology\":\"t\",\"metrics\":{\"locality."
		    "remote_fraction.user\":0.24,"
		    "\"locality.step.mf.remote_fraction.user\":0.25,\"locality.matrix.cpu0.mem0\":6}}");
	_cleanup_free_ char *plain_page = plain(dir);
	const char *sec = strstr(plain_page, "<h2 id=\"locality\">Locality: remote fraction per variant");
	assert_non_null(sec);
	assert_null(strstr(sec, "<table class=\"compare locality\">"));
	/* The run's first, then the step's; the matrix is not a fraction. */
	const char *run = strstr(sec, ">locality.remote_fraction.user</text>"),
		   *step = strstr(sec, ">locality.step.mf.remote_fraction.user</text>");
	assert_non_null(run);
	assert_non_null(step);
	assert_true(run < step && step < strstr(sec, "<h2>Metrics"));
	assert_true(strstr(plain_page, "<h2>Group assertions") < sec);
	_cleanup_free_ char *section = vn_xstrndup(sec, (size_t)(strstr(sec, "<h2>Metrics") - sec));
	assert_null(strstr(section, "locality.matrix"));

	/* 80 significant rows rank above the fractions: the strips stop at 60, the section does not. */
	struct vn_compare_variant vars[2] = {{.name = (char *)"on"}, {.name = (char *)"off"}};
	struct vn_compare_row rows[81];
	struct vn_compare_cell cells[81][2];
	char names[80][16];
	for (unsigned i = 0; i < 81; i++) {
		cells[i][0] = (struct vn_compare_cell){.n = 1, .mean = 1};
		cells[i][1] = (struct vn_compare_cell){
			.n = 1, .mean = 2, .has_change = true, .has_pct = true, .change_pct = 100};
		snprintf(names[i % 80], sizeof(names[0]), "vmstat.c%u", i);
		rows[i] = (struct vn_compare_row){.metric = names[i % 80], .significant = true, .cells = cells[i]};
	}
	cells[80][0].mean = 0.02, cells[80][1].mean = 0.24, cells[80][1].change_pct = 1100;
	cells[80][1].has_p = true, cells[80][1].p_value = 0.087;
	rows[80].metric = (char *)"locality.remote_fraction.user", rows[80].significant = false;
	struct vn_compare c = {.nvariants = 2, .variants = vars, .nrows = 81, .rows = rows};
	struct vn_html_group_in in = {.dir = dir, .cmp = &c};
	struct vn_error e = {0};
	assert_int_equal(vn_report_html_write_group(&in, NULL, &e), 0);
	_cleanup_free_ char *html = slurp_report(dir);
	assert_inert(html);
	sec = strstr(html, "<h2 id=\"locality\">");
	assert_non_null(sec);
	assert_non_null(strstr(sec, "<table class=\"compare locality\">"));
	/* Before the whole table. */
	assert_true(sec < strstr(html, "<h2>Comparison (compare.json)</h2>"));
	assert_non_null(strstr(sec, "<tr><td>locality.remote_fraction.user</td><td class=\"n\">0.02 <span "
				    "class=\"note\">n=1</span></td><td class=\"n\">0.24 <span class=\"note\">n=1</span>"
				    "<br>+1100.0% <span class=\"note\">p=0.087</span></td></tr>"));
	assert_non_null(strstr(sec, ">locality.remote_fraction.user</text>"));
	/* Among the strips below (60 of 81 rows), the fraction is not. */
	assert_null(strstr(strstr(html, "<h2>Metrics"), ">locality.remote_fraction.user</text>"));

	/* Without locality metrics: no section. */
	_cleanup_free_ char *gdir = fixture("group");
	_cleanup_free_ char *out = vn_xasprintf("/tmp/vn-html-group-loc-%ld.html", (long)getpid());
	struct vn_error err = {0};
	assert_int_equal(vn_compare_html_write(gdir, out, NULL, &err), 0);
	_cleanup_free_ char *none = slurp(out);
	unlink(out);
	assert_null(strstr(none, "Locality"));
	vn_rm_rf(dir);
}

static void test_neither(void **state)
{
	_cleanup_free_ char *dir = tmpdir();
	struct vn_error err = {0};
	(void)state;

	assert_true(vn_report_html_write(dir, NULL, &err) < 0);
	assert_int_equal(err.kind, VN_ERR_INPUT);
	assert_non_null(strstr(err.msg, "neither a run directory"));
	vn_error_clear(&err);

	vn_test_put(dir, "result.json", "{\"complete\":");
	assert_true(vn_report_html_write(dir, NULL, &err) < 0);
	assert_int_equal(err.kind, VN_ERR_INPUT);
	assert_non_null(strstr(err.msg, "result.json:1:"));
	vn_error_clear(&err);
	vn_rm_rf(dir);
}

/* A bisection's page: subjects are the user's (or anyone's) text, escaped; by metric a strip per commit. */
static void test_bisect_page(void **state)
{
	_cleanup_free_ char *dir = tmpdir();
	_cleanup_free_ char *path = vn_xasprintf("%s/report.html", dir);
	struct vn_error err = {0};
	static const double good[] = {10, 11, 9}, bad[] = {20, 21};
	const struct vn_html_bisect_commit c[] = {
		{.position = 0,
		 .hash = "aaaa",
		 .subject = "base",
		 .mark = "good",
		 .why = "like good",
		 .mean = 10,
		 .sd = 1,
		 .nvalues = 3,
		 .values = good},
		{.position = 4,
		 .hash = "bbbb",
		 .subject = "<script>alert(1)</script>",
		 .mark = "bad",
		 .why = "w&w",
		 .first_bad = true,
		 .mean = 20.5,
		 .sd = 0.7071,
		 .nvalues = 2,
		 .values = bad,
		 .failed = 2},
	};
	struct vn_html_bisect in = {.path = path,
				    .title = "bisect <x>",
				    .outcome = "the first bad commit is bbbb",
				    .metric = "vmstat.numa_pages_migrated",
				    .ncommits = 2,
				    .commits = c};
	(void)state;

	assert_int_equal(vn_report_html_write_bisect(&in, &err), 0);
	_cleanup_free_ char *html = slurp(path);
	assert_null(strstr(html, "<script>"));
	assert_non_null(strstr(html, "&lt;script&gt;alert(1)"));
	assert_non_null(strstr(html, "bisect &lt;x&gt;"));
	assert_non_null(strstr(html, "w&amp;w"));
	assert_non_null(strstr(html, "<svg"));
	assert_non_null(strstr(html, "(first bad)"));
	assert_non_null(strstr(html, "10 ± 1 (3)"));
	assert_non_null(strstr(html, "20.5 ± 0.7071 (2)"));
	/* By verdict: the runs' outcomes instead of figures, and no chart. */
	in.metric = NULL;
	assert_int_equal(vn_report_html_write_bisect(&in, &err), 0);
	free(html);
	html = slurp(path);
	assert_null(strstr(html, "<svg"));
	assert_non_null(strstr(html, "0 passed, 2 failed"));
	vn_rm_rf(dir);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_run_fixture),
		cmocka_unit_test(test_tiers_fixture),
		cmocka_unit_test(test_hostile),
		cmocka_unit_test(test_escape),
		cmocka_unit_test(test_pick_lines),
		cmocka_unit_test(test_downsampled),
		cmocka_unit_test(test_incomplete),
		cmocka_unit_test(test_trace),
		cmocka_unit_test(test_trace_from_memory),
		cmocka_unit_test(test_group_fixture),
		cmocka_unit_test(test_group_no_compare),
		cmocka_unit_test(test_group_symlinked_run),
		cmocka_unit_test(test_neither),
		cmocka_unit_test(test_bisect_page),
		cmocka_unit_test(test_locality_heatmap),
		cmocka_unit_test(test_locality_series),
		cmocka_unit_test(test_locality_from_memory),
		cmocka_unit_test(test_locality_absent_or_failed),
		cmocka_unit_test(test_run_golden),
		cmocka_unit_test(test_locality_line),
		cmocka_unit_test(test_locality_bad_samples),
		cmocka_unit_test(test_locality_group),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
