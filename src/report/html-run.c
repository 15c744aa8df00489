/* report.html for one run directory: the header, the verdicts, the kernel's topology, and samples.jsonl drawn. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "metrics/samples.h"
#include "report/html.h"
#include "report/html-priv.h"
#include "report/result-facts.h"
#include "report/result.h"
#include "report/tiermove.h"
#include "topology/fallback.h"
#include "util/alloc.h"
#include "util/cleanup.h"
#include "util/dir.h"
#include "util/file.h"
#include "util/json.h"

#define DMESG_MAX (16u << 20)
/* A line per node: a few kB even at VN_MAX_NODES. */
#define PROOF_MAX (1u << 20)
/* trace.jsonl: its events' cap (runner-trace.c) plus the header's format files and the end record. */
#define TRACE_MAX (160u << 20)

static void row(struct vn_strbuf *b, const char *key, const char *value)
{
	if (!value)
		return;
	vn_strbuf_printf(b, "<tr><th>%s</th><td>", key);
	vn_html_text(b, value);
	vn_strbuf_printf(b, "</td></tr>\n");
}

static void header(struct vn_strbuf *b, const struct vn_result_run *res)
{
	bool is_passed = res->complete && !vn_result_failures(res) && !vn_result_undecided(res);

	vn_strbuf_printf(b, "<h1>");
	vn_html_text(b, res->scenario ? res->scenario : "vnuma run");
	vn_strbuf_printf(b, "</h1>\n");
	if (!res->complete) {
		vn_strbuf_printf(b, "<div class=\"banner fail\" id=\"status\">INCOMPLETE: ");
		vn_html_text(b, res->error ? res->error : "the run did not end");
	} else {
		vn_strbuf_printf(b, "<div class=\"banner %s\" id=\"status\">%s", is_passed ? "pass" : "fail",
				 is_passed ? "PASSED: every assertion held" : "FAILED: an assertion did not hold");
	}
	vn_strbuf_printf(b, "</div>\n<table class=\"header\">\n");
	/* The facts that have a place on the page (report/result-facts.h), by place. */
	for (const struct vn_result_fact *f = NULL, *next;; f = next) {
		next = NULL;
		for (size_t i = 0; i < vn_result_nfacts; i++)
			if (vn_result_facts[i].page > (f ? f->page : 0) &&
			    (!next || vn_result_facts[i].page < next->page))
				next = &vn_result_facts[i];
		if (!next)
			break;
		_cleanup_free_ char *text = vn_result_fact_text(next, res);
		row(b, next->label, text);
	}
	vn_strbuf_printf(b, "</table>\n");
	if (res->fidelity) {
		vn_strbuf_printf(b, "<h2>Fidelity at boot</h2><pre>");
		vn_html_text(b, res->fidelity);
		vn_strbuf_printf(b, "</pre>\n");
	}
}

struct dist_map {
	const struct vn_html_run_in *in;
	unsigned lo, hi;
};

static void dist_cell(struct vn_strbuf *b, const void *ctx, unsigned i, unsigned j, int x, int y, int px)
{
	const struct dist_map *dm = ctx;
	const unsigned *ids = dm->in->dist_ids;

	if (j >= dm->in->dist_len[i])
		return;
	unsigned d = dm->in->dist_row[i][j];
	double frac = dm->hi > dm->lo ? (double)(d - dm->lo) / (dm->hi - dm->lo) : 0;
	char color[8];
	vn_html_heat_color(frac, color);
	vn_strbuf_printf(b,
			 "<rect x=\"%d\" y=\"%d\" width=\"%d\" height=\"%d\" fill=\"%s\" "
			 "stroke=\"#fff\"><title>node %u to node %u: %u</title></rect>",
			 x, y, px, px, color, ids[i], ids[j], d);
	if (px >= 18)
		vn_strbuf_printf(b, "<text x=\"%d\" y=\"%d\" text-anchor=\"middle\" style=\"fill:%s\">%u</text>",
				 x + px / 2, y + px / 2 + 4, frac > 0.5 ? "#fff" : "#222", d);
}

static void distance_map(struct vn_strbuf *b, const struct vn_html_run_in *in)
{
	unsigned n = in->ndist;
	const unsigned *const *m = in->dist_row;
	const unsigned *ids = in->dist_ids, *len = in->dist_len;
	const char *snap = in->dist_from;
	struct dist_map dm = {.in = in, .lo = 255, .hi = 0};

	if (!n) {
		vn_html_note(b, "No nodeN-distance files in after/ or before/.");
		return;
	}
	for (unsigned i = 0; i < n; i++)
		for (unsigned j = 0; j < len[i]; j++) {
			dm.lo = m[i][j] < dm.lo ? m[i][j] : dm.lo;
			dm.hi = m[i][j] > dm.hi ? m[i][j] : dm.hi;
		}
	struct vn_html_heatmap h = {
		.n = n,
		.px = 36,
		.ids = ids,
		.cell = dist_cell,
		.ctx = &dm,
	};
	vn_html_heatmap(b, &h);
	vn_strbuf_printf(b, "<p class=\"note\">From %s/ (nodeN-distance, as the guest kernel reports the SLIT).", snap);
	for (unsigned i = 0; i < n; i++)
		if (len[i] != n) {
			vn_strbuf_printf(b, " Node %u's row has %u entries for %u nodes.", ids[i], len[i], n);
			break;
		}
	vn_strbuf_printf(b, "</p>\n");
}

/* The kernel's distances, and beside them where the emulator counted them the accesses by node pair. */
static void distances(struct vn_strbuf *b, const struct vn_html_run_in *in, const struct vn_html_loc *loc)
{
	if (!loc->on) {
		vn_strbuf_printf(b, "<h2>Distances (the kernel's view)</h2>\n");
		distance_map(b, in);
		return;
	}
	vn_strbuf_printf(b, "<h2 id=\"locality\">Distances (the kernel's view) and accesses (the emulator's "
			    "count)</h2>\n<div class=\"charts\"><div class=\"side\">\n");
	distance_map(b, in);
	vn_strbuf_printf(b, "</div><div class=\"side\">\n");
	vn_html_loc_heatmap(b, loc);
	vn_strbuf_printf(b, "</div></div>\n");
}

static void fallback(struct vn_strbuf *b, const struct vn_html_run_in *in)
{
	const struct vn_fallback *f = in->fallback;

	vn_strbuf_printf(b, "<h2>Fallback order (the kernel's lists)</h2>\n");
	if (!f) {
		vn_html_note(b, in->fallback_why ? in->fallback_why : "No dmesg in after/ or before/.");
		return;
	}
	if (!f->nnodes) {
		vn_html_note(b, "dmesg holds no \"Fallback order for Node N:\" line.");
		return;
	}
	vn_strbuf_printf(b, "<table class=\"fallback\"><tr><th>node</th><th>allocates from, in order</th></tr>\n");
	for (unsigned n = 0; n < f->nnodes; n++) {
		if (!f->present[n])
			continue;
		vn_strbuf_printf(b, "<tr><th>%u</th><td>", n);
		for (unsigned i = 0; i < f->len[n]; i++)
			vn_strbuf_printf(b, "<span class=\"chip\" style=\"background:%s\">%u</span>",
					 vn_html_color(f->order[n][i]), f->order[n][i]);
		vn_strbuf_printf(b, "</td></tr>\n");
	}
	vn_strbuf_printf(b, "</table>\n<p class=\"note\">From %s/dmesg (the boot-time lists).</p>\n",
			 in->fallback_from);
}

/* The samples as the charts take them: a common x axis and per-series y arrays. */
struct series_set {
	unsigned n;
	double *x;
	unsigned nseries;
	struct vn_html_series s[VN_MAX_NODES];
	char names[VN_MAX_NODES][136]; /* a node, a counter, or a tracepoint (at most 128 bytes) */
	double *y[VN_MAX_NODES];
};

static void set_init(struct series_set *set, unsigned n, unsigned nseries)
{
	memset(set, 0, sizeof(*set));
	set->n = 0;
	set->x = vn_xcalloc(n ? n : 1, sizeof(double));
	set->nseries = nseries;
	for (unsigned i = 0; i < nseries; i++) {
		set->y[i] = vn_xcalloc(n ? n : 1, sizeof(double));
		set->s[i].y = set->y[i];
		set->s[i].name = set->names[i];
		set->s[i].color = vn_html_color(i);
	}
}

static void set_free(struct series_set *set)
{
	free(set->x);
	for (unsigned i = 0; i < set->nseries; i++)
		free(set->y[i]);
}

static void set_draw(struct vn_strbuf *b, struct series_set *set, const char *title, bool stacked, double x0, double x1)
{
	struct vn_html_chart c = {
		.title = title,
		.n = set->n,
		.x = set->x,
		.fixed_x = true,
		.xmin = x0,
		.xmax = x1,
		.xlabel = "t (s)",
		.nseries = set->nseries,
		.series = set->s,
		.stacked = stacked,
	};
	vn_html_chart(b, &c);
}

/* Memory per node of the process pid (every workload process: pid -1), stacked, in MiB. */
static void memory_chart(struct vn_strbuf *b, const struct vn_samples *ss, int pid, const char *title, unsigned nnodes)
{
	_cleanup_(set_free) struct series_set set;
	bool used[VN_MAX_NODES] = {false};
	unsigned map[VN_MAX_NODES], k = 0;

	/* Only the nodes that ever held some of its memory get a band (and a legend entry). */
	for (unsigned i = 0; i < ss->n; i++)
		for (unsigned p = 0; p < ss->v[i].nprocs; p++)
			for (unsigned n = 0; n < nnodes; n++)
				if ((pid < 0 || ss->v[i].procs[p].pid == pid) && ss->v[i].procs[p].mem_kb[n] > 0)
					used[n] = true;
	for (unsigned n = 0; n < nnodes; n++)
		if (used[n])
			map[k++] = n;
	set_init(&set, ss->n, k);
	for (unsigned j = 0; j < k; j++) {
		snprintf(set.names[j], sizeof(set.names[j]), "node %u", map[j]);
		set.s[j].color = vn_html_color(map[j]);
	}
	for (unsigned i = 0; i < ss->n; i++) {
		const struct vn_sample *s = &ss->v[i];
		bool have = false;
		for (unsigned j = 0; j < k; j++)
			set.y[j][set.n] = 0;
		for (unsigned p = 0; p < s->nprocs; p++) {
			if ((pid >= 0 && s->procs[p].pid != pid) || !s->procs[p].have_mem)
				continue;
			have = true;
			for (unsigned j = 0; j < k; j++)
				set.y[j][set.n] += s->procs[p].mem_kb[map[j]] / 1024;
		}
		/* A line without its memory (--mem-every, or it had not started) is left out, not drawn as 0. */
		if (have)
			set.x[set.n++] = s->t;
	}
	set_draw(b, &set, title, true, ss->v[0].t, ss->v[ss->n - 1].t);
}

/* What the remote fraction chart shows, under the charts it sits among. */
static void loc_note(struct vn_strbuf *b, const struct vn_html_loc *loc)
{
	if (!loc->npoints && !loc->bad)
		return;
	vn_strbuf_printf(b,
			 "<p class=\"note\">Remote fraction: the share of the accesses counted since the sample "
			 "drawn before that went to another node's memory, from samples.jsonl's per-sample "
			 "matrices (%u lines), which count user and kernel together; the steps' user and kernel "
			 "fractions are under the access heatmap.",
			 loc->lines);
	if (loc->bad)
		vn_strbuf_printf(b, " %u lines' locality could not be read and are left out.", loc->bad);
	vn_strbuf_printf(b, "</p>\n");
}

/* The remote fraction where no memory chart is drawn: under its own heading, on its own time axis. */
static void loc_alone(struct vn_strbuf *b, const struct vn_html_loc *loc)
{
	if (!loc->npoints && !loc->bad)
		return;
	vn_strbuf_printf(b, "<h2>Remote fraction over time (the emulator's count)</h2>\n<div class=\"charts\">\n");
	vn_html_loc_chart(b, loc, false, 0, 0);
	vn_strbuf_printf(b, "</div>\n");
	loc_note(b, loc);
}

static void memory(struct vn_strbuf *b, const struct vn_samples *ss, unsigned nnodes, const struct vn_html_loc *loc)
{
	int pids[VN_HTML_MAX_PROCS];
	char comms[VN_HTML_MAX_PROCS][32];
	unsigned np = 0, more = 0;

	for (unsigned i = 0; i < ss->n; i++)
		for (unsigned p = 0; p < ss->v[i].nprocs; p++) {
			const struct vn_sample_proc *pr = &ss->v[i].procs[p];
			unsigned j = 0;
			while (j < np && pids[j] != pr->pid)
				j++;
			if (j < np)
				continue;
			if (np == VN_HTML_MAX_PROCS) {
				more++;
				continue;
			}
			pids[np] = pr->pid;
			snprintf(comms[np++], sizeof(comms[0]), "%s", pr->comm);
		}
	vn_strbuf_printf(b, "<h2>Workload memory per node (numa_maps)%s</h2>\n",
			 loc->npoints ? " and remote fraction (the emulator's count)" : "");
	if (!np)
		vn_html_note(b, "No workload process in the samples.");
	if (!np && !loc->npoints)
		return;
	vn_strbuf_printf(b, "<div class=\"charts\">\n");
	if (np > 1)
		memory_chart(b, ss, -1, "all workload processes: MiB per node", nnodes);
	for (unsigned j = 0; j <= np; j++) {
		/* Beside the first memory chart, on the same time axis. */
		if (j == (np == 1 ? 1u : 0u))
			vn_html_loc_chart(b, loc, true, ss->v[0].t, ss->v[ss->n - 1].t);
		if (j == np)
			break;
		char title[96];
		snprintf(title, sizeof(title), "pid %d %.40s: MiB per node", pids[j], comms[j]);
		memory_chart(b, ss, pids[j], title, nnodes);
	}
	vn_strbuf_printf(b, "</div>\n");
	loc_note(b, loc);
	if (more)
		vn_strbuf_printf(b, "<p class=\"note\">%u more processes not drawn (at most %d).</p>\n", more,
				 VN_HTML_MAX_PROCS);
}

/* vmstat counters as deltas from the first sample that has them. */
static void counters(struct vn_strbuf *b, const struct vn_samples *ss, const char *title, const char *const *keys,
		     unsigned nkeys)
{
	_cleanup_(set_free) struct series_set set;

	set_init(&set, ss->n, nkeys);
	for (unsigned k = 0; k < nkeys; k++) {
		double first = NAN;
		snprintf(set.names[k], sizeof(set.names[k]), "%s", keys[k]);
		for (unsigned i = 0; i < ss->n; i++) {
			double v;
			set.y[k][i] = NAN;
			if (!vn_json_has_finite(ss->v[i].vmstat, keys[k], &v))
				continue;
			if (isnan(first))
				first = v;
			set.y[k][i] = v - first;
		}
	}
	for (unsigned i = 0; i < ss->n; i++)
		set.x[i] = ss->v[i].t;
	set.n = ss->n;
	set_draw(b, &set, title, false, ss->v[0].t, ss->v[ss->n - 1].t);
}

static void running(struct vn_strbuf *b, const struct vn_samples *ss, unsigned nnodes)
{
	_cleanup_(set_free) struct series_set set;

	set_init(&set, ss->n, nnodes);
	for (unsigned n = 0; n < nnodes; n++)
		snprintf(set.names[n], sizeof(set.names[n]), "node %u", n);
	for (unsigned i = 0; i < ss->n; i++) {
		set.x[i] = ss->v[i].t;
		for (unsigned n = 0; n < nnodes; n++)
			set.y[n][i] = ss->v[i].node_online[n] || ss->v[i].running_per_node[n]
					      ? ss->v[i].running_per_node[n]
					      : NAN;
	}
	set.n = ss->n;
	set_draw(b, &set, "running workload threads per node", false, ss->v[0].t, ss->v[ss->n - 1].t);
}

static void samples(struct vn_strbuf *b, const struct vn_html_run_in *in, const struct vn_html_loc *loc)
{
	_cleanup_free_ char *picked = NULL;
	struct vn_samples ss = {0};
	struct vn_error e = {0};
	unsigned total, nnodes = 0;

	vn_strbuf_printf(b, "<h2 id=\"samples\">Samples</h2>\n");
	if (!in->samples) {
		vn_html_note(b, in->samples_why ? in->samples_why : "no samples.jsonl");
		return;
	}
	picked = vn_html_pick_lines(in->samples, VN_HTML_MAX_POINTS, &total);
	if (vn_samples_parse(picked, "samples.jsonl", &ss, &e) < 0) {
		vn_html_note(b, e.msg);
		vn_error_clear(&e);
		loc_alone(b, loc);
		return;
	}
	if (!ss.n) {
		vn_html_note(b, "samples.jsonl holds no sample.");
		vn_samples_free(&ss);
		loc_alone(b, loc);
		return;
	}
	for (unsigned i = 0; i < ss.n; i++)
		nnodes = ss.v[i].nnodes > nnodes ? ss.v[i].nnodes : nnodes;
	vn_strbuf_printf(b, "<p class=\"note\">%u samples drawn of %u lines, t = %.1f .. %.1f s%s.</p>\n", ss.n, total,
			 ss.v[0].t, ss.v[ss.n - 1].t, ss.truncated ? "; the last line was cut off mid-write" : "");
	memory(b, &ss, nnodes, loc);
	vn_strbuf_printf(b, "<h2>Migrations and NUMA hint faults (vmstat, from the first sample)</h2>\n"
			    "<div class=\"charts\">\n");
	static const char *const migr[] = {"numa_pages_migrated", "pgmigrate_success"};
	static const char *const hint[] = {"numa_hint_faults", "numa_hint_faults_local", "numa_pte_updates"};
	counters(b, &ss, "pages migrated", migr, VN_ARRAY_SIZE(migr));
	counters(b, &ss, "hint faults and PTE updates", hint, VN_ARRAY_SIZE(hint));
	vn_strbuf_printf(b, "</div>\n<h2>Where the workload runs</h2>\n");
	running(b, &ss, nnodes);
	vn_samples_free(&ss);
}

void vn_html_trace_add(struct vn_html_trace *tr, double t, unsigned k, bool crossed)
{
	if (!(t >= 0 && t < 1e9) || k >= tr->nnames)
		return;
	if (tr->n == tr->cap) {
		tr->cap = tr->cap ? 2 * tr->cap : 4096;
		tr->v = vn_xreallocarray(tr->v, tr->cap, sizeof(*tr->v));
	}
	tr->v[tr->n++] = (struct vn_html_trace_event){t, k, crossed};
}

void vn_html_trace_clear(struct vn_html_trace *tr)
{
	free(tr->why);
	free(tr->v);
	memset(tr, 0, sizeof(*tr));
}

/* trace.jsonl read back into what the runner keeps as it writes it (`vnuma report DIR`); false: there is none. */
static bool trace_load(const char *dir, struct vn_html_trace *tr)
{
	_cleanup_free_ char *path = vn_xasprintf("%s/trace.jsonl", dir), *text = NULL;
	size_t len;
	struct vn_error e = {0};

	if (access(path, F_OK) != 0)
		return false;
	if (vn_file_read(path, TRACE_MAX, &text, &len, &e) < 0) {
		tr->why = vn_xstrdup(e.msg);
		vn_error_clear(&e);
		return true;
	}
	for (char *line = text; line < text + len;) {
		char *nl = memchr(line, '\n', (size_t)(text + len - line));
		size_t ln = (size_t)((nl ? nl : text + len) - line);
		json_object *o = vn_html_parse_line(line, ln), *v;
		const char *type = o ? vn_json_str(o, "type") : NULL, *name = o ? vn_json_str(o, "event") : NULL;
		double x;
		line += ln + 1;
		if (!o) {
			tr->bad++;
		} else if (type && strcmp(type, "header") == 0 && !tr->nnames &&
			   json_object_object_get_ex(o, "events", &v) && json_object_is_type(v, json_type_array)) {
			for (size_t i = 0; i < json_object_array_length(v) && tr->nnames < VN_HTML_TRACE_NAMES_MAX;
			     i++) {
				const char *en = vn_json_str(json_object_array_get_idx(v, i), "event");
				if (en && strlen(en) < sizeof(tr->names[0]))
					snprintf(tr->names[tr->nnames++], sizeof(tr->names[0]), "%s", en);
			}
		} else if (type && strcmp(type, "end") == 0) {
			tr->ended = true;
			tr->complete = json_object_object_get_ex(o, "complete", &v) && json_object_get_boolean(v);
		} else if (name && vn_json_has_finite(o, "t", &x)) {
			unsigned k = 0;
			while (k < tr->nnames && strcmp(tr->names[k], name) != 0)
				k++;
			double from, to;
			bool crossed = vn_json_has_finite(o, "from_node", &from) &&
				       vn_json_has_finite(o, "to_node", &to) && from >= 0 && to >= 0 && from != to;
			if (k < tr->nnames && x >= 0 && x < 1e9)
				tr->moves[k] |= json_object_object_get_ex(o, "from_node", &v);
			vn_html_trace_add(tr, x, k, crossed);
		}
		json_object_put(o);
	}
	return true;
}

/* The tracepoints' events over time: each tracepoint's cumulative count, binned to the chart's points. */
static void trace(struct vn_strbuf *b, const struct vn_html_trace *tr)
{
	double tmax = 0;

	if (!tr)
		return;
	vn_strbuf_printf(b, "<h2 id=\"trace\">Tracepoints</h2>\n");
	if (tr->why) {
		vn_html_note(b, tr->why);
		return;
	}
	for (size_t i = 0; i < tr->n; i++)
		tmax = tr->v[i].t > tmax ? tr->v[i].t : tmax;
	vn_strbuf_printf(b, "<p class=\"note\">%zu events of %u tracepoints in trace.jsonl%s%s.</p>\n", tr->n,
			 tr->nnames,
			 !tr->ended     ? "; it has no end record: the capture did not finish"
			 : tr->complete ? ""
					: "; its end record says it is incomplete",
			 tr->bad ? "; some lines are not JSON" : "");
	if (!tr->nnames || !tr->n)
		return;
	_cleanup_(set_free) struct series_set set;
	unsigned np = VN_HTML_MAX_POINTS, series[2 * VN_HTML_TRACE_NAMES_MAX], ns = 0;
	/* Crossing events also count in their tracepoint's "across nodes" series. */
	for (unsigned k = 0; k < tr->nnames; k++)
		series[k] = ns++;
	for (unsigned k = 0; k < tr->nnames; k++)
		series[VN_HTML_TRACE_NAMES_MAX + k] = tr->moves[k] ? ns++ : series[k];
	set_init(&set, np, ns);
	for (unsigned k = 0; k < tr->nnames; k++) {
		memcpy(set.names[series[k]], tr->names[k], sizeof(tr->names[k]));
		if (tr->moves[k])
			snprintf(set.names[series[VN_HTML_TRACE_NAMES_MAX + k]], sizeof(set.names[0]),
				 "%.120s across nodes", tr->names[k]);
	}
	for (unsigned i = 0; i < np; i++)
		set.x[i] = tmax * i / (np - 1);
	/* Each event counted at the first point at or after its time, then summed up. */
	for (size_t i = 0; i < tr->n; i++) {
		unsigned p = tmax > 0 ? (unsigned)ceil(tr->v[i].t / tmax * (np - 1)) : 0, k = tr->v[i].k;
		p = p < np ? p : np - 1;
		set.y[series[k]][p]++;
		if (tr->v[i].crossed)
			set.y[series[VN_HTML_TRACE_NAMES_MAX + k]][p]++;
	}
	for (unsigned k = 0; k < ns; k++)
		for (unsigned i = 1; i < np; i++)
			set.y[k][i] += set.y[k][i - 1];
	set.n = np;
	set_draw(b, &set, "trace events (cumulative count) since the capture began", false, 0, tmax);
}

void vn_html_run_page(struct vn_strbuf *b, const struct vn_html_run_in *in)
{
	const char *scenario = in->result->scenario;
	_cleanup_free_ char *title = vn_xasprintf("vnuma: %s", scenario ? scenario : in->dir);

	vn_html_page_begin(b, title);
	_cleanup_(vn_html_loc_clear) struct vn_html_loc loc;
	vn_html_loc_load(&loc, in->result, in->samples, in->loc_proof);
	header(b, in->result);
	vn_strbuf_printf(b, "<h2>Assertions</h2>\n");
	vn_html_verdicts_run(b, in->result->verdicts, in->result->nverdicts);
	distances(b, in, &loc);
	fallback(b, in);
	samples(b, in, &loc);
	vn_html_tiers(b, in);
	trace(b, in->trace);
	vn_html_page_end(b);
}

/* What a run directory holds for its page, read as `vnuma report DIR` finds it. */
struct loaded {
	struct vn_result_run res;
	char *samples, *samples_why, *fallback_why, *loc_proof;
	struct vn_fallback fallback;
	unsigned rows[VN_MAX_NODES][VN_MAX_NODES];
	struct vn_html_trace trace;
	struct vn_tiermove tiermove[VN_TM_FILES_MAX];
	unsigned ntiermove;
};

static void loaded_free(struct loaded **lp)
{
	struct loaded *l = *lp;

	if (!l)
		return;
	vn_result_clear(&l->res);
	free(l->samples);
	free(l->samples_why);
	free(l->fallback_why);
	free(l->loc_proof);
	vn_html_trace_clear(&l->trace);
	for (unsigned i = 0; i < l->ntiermove; i++)
		vn_tiermove_clear(&l->tiermove[i]);
	free(l);
}

/* The snapshot to read: after/ when it holds the file, else before/ (a run cut short has no after/). */
static char *snapshot_file(const char *dir, const char *name, const char **which)
{
	static const char *const snaps[] = {"after", "before"};

	for (size_t i = 0; i < VN_ARRAY_SIZE(snaps); i++) {
		char *path = vn_xasprintf("%s/%s/%s", dir, snaps[i], name);
		if (vn_is_file(path)) {
			*which = snaps[i];
			return path;
		}
		free(path);
	}
	return NULL;
}

/* Node n's row of the distance matrix from a snapshot: nodeN-distance (vnuma collect), or nodeN/distance. */
static unsigned read_distances(const char *path, unsigned *row, unsigned max)
{
	_cleanup_free_ char *text = NULL;
	struct vn_error e = {0};
	size_t len;
	unsigned n = 0;

	if (vn_file_read(path, 64 << 10, &text, &len, &e) < 0) {
		vn_error_clear(&e);
		return 0;
	}
	for (char *p = text, *end; n < max; p = end) {
		unsigned long v = strtoul(p, &end, 10);
		if (end == p || v > 255)
			break;
		row[n++] = (unsigned)v;
	}
	return n;
}

/* Every node's row from one snapshot (nodeN-distance, as vnuma collect saves it, or nodeN/distance). */
static void load_distances(const char *dir, struct loaded *l, struct vn_html_run_in *in)
{
	const char *which = NULL;

	for (unsigned node = 0; node < VN_MAX_NODES; node++) {
		char flat[64], nested[64];
		snprintf(flat, sizeof(flat), "node%u-distance", node);
		snprintf(nested, sizeof(nested), "node%u/distance", node);
		_cleanup_free_ char *path = snapshot_file(dir, flat, &which);
		if (!path)
			path = snapshot_file(dir, nested, &which);
		/* One snapshot for the whole matrix: rows from after/ and before/ are not mixed. */
		if (!path || (in->dist_from && strcmp(in->dist_from, which) != 0))
			continue;
		in->dist_from = which;
		in->dist_len[in->ndist] = read_distances(path, l->rows[in->ndist], VN_MAX_NODES);
		in->dist_row[in->ndist] = l->rows[in->ndist];
		in->dist_ids[in->ndist++] = node;
	}
}

static void load_fallback(const char *dir, struct loaded *l, struct vn_html_run_in *in)
{
	const char *which = NULL;
	_cleanup_free_ char *path = snapshot_file(dir, "dmesg", &which), *text = NULL;
	struct vn_error e = {0};
	size_t len;

	if (!path)
		return;
	if (vn_file_read(path, DMESG_MAX, &text, &len, &e) < 0 || vn_fallback_parse_log(text, &l->fallback, &e) < 0) {
		l->fallback_why = vn_xstrdup(e.msg);
		in->fallback_why = l->fallback_why;
		vn_error_clear(&e);
		return;
	}
	in->fallback = &l->fallback;
	in->fallback_from = which;
}

/* locality-proof.txt: a run with locality wrote it, proven or not; one that cannot be read says why instead. */
static void load_proof(const char *dir, struct loaded *l, struct vn_html_run_in *in)
{
	_cleanup_free_ char *path = vn_xasprintf("%s/locality-proof.txt", dir);
	struct vn_error e = {0};
	size_t len;

	if (access(path, F_OK) != 0)
		return;
	if (vn_file_read(path, PROOF_MAX, &l->loc_proof, &len, &e) < 0)
		l->loc_proof = vn_xasprintf("%s", e.msg);
	vn_error_clear(&e);
	in->loc_proof = l->loc_proof;
}

int vn_html_run(struct vn_strbuf *b, const char *dir, struct vn_error *err)
{
	_cleanup_(loaded_free) struct loaded *l = vn_xcalloc(1, sizeof(*l));
	_cleanup_free_ char *path = vn_xasprintf("%s/samples.jsonl", dir), *rpath = vn_xasprintf("%s/result.json", dir);
	struct vn_html_run_in in = {.dir = dir, .result = &l->res};
	struct vn_error e = {0};
	size_t len;
	int rc;

	if ((rc = vn_result_load(rpath, &l->res, err)) < 0)
		return rc;
	if (vn_file_read(path, VN_SAMPLES_MAX, &l->samples, &len, &e) < 0) {
		l->samples_why = vn_xstrdup(e.msg);
		vn_error_clear(&e);
	}
	in.samples = l->samples;
	in.samples_why = l->samples_why;
	load_distances(dir, l, &in);
	load_proof(dir, l, &in);
	load_fallback(dir, l, &in);
	if (trace_load(dir, &l->trace))
		in.trace = &l->trace;
	l->ntiermove = vn_tiermove_load_dir(dir, l->tiermove, VN_TM_FILES_MAX);
	in.tiermove = l->tiermove;
	in.ntiermove = l->ntiermove;
	vn_html_run_page(b, &in);
	return 0;
}
