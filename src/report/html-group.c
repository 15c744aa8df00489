/* report.html for a result group: the matrix, compare.json's table, and per metric each variant's repeats. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "report/html.h"
#include "report/html-priv.h"
#include "util/alloc.h"
#include "util/cleanup.h"
#include "util/dir.h"
#include "util/json.h"

#define GROUP_MAX (16u << 20)
/* Variants drawn (columns, strip chart groups); a matrix wider than this is not one to read on a page. */
#define MAX_VARIANTS 16
/* compare.json's rows listed in the table (significant ones first); compare.txt has them all. */
#define MAX_ROWS 400
/* compare.json's notes shown beneath the table, and the longest one shown (compare writes 3 of under 400 bytes). */
#define NOTES_MAX 8
#define NOTE_MAX  2000

struct run {
	const char *variant, *dir; /* borrowed from group.json */
	double repeat, exit;
	bool has_exit;
	struct json_object *res; /* its result.json, or NULL */
};

struct group {
	struct json_object *json, *cmp; /* group.json, compare.json (or NULL) */
	const char *variants[MAX_VARIANTS];
	unsigned nvariants, more_variants;
	struct run runs[VN_HTML_MAX_RUNS];
	unsigned nruns, more_runs;
};

static void group_clear(struct group *g)
{
	for (unsigned i = 0; i < g->nruns; i++)
		if (g->runs[i].res)
			json_object_put(g->runs[i].res);
	if (g->cmp)
		json_object_put(g->cmp);
	if (g->json)
		json_object_put(g->json);
}

static int variant_index(const struct group *g, const char *name)
{
	for (unsigned i = 0; name && i < g->nvariants; i++)
		if (strcmp(g->variants[i], name) == 0)
			return (int)i;
	return -1;
}

static void add_variant(struct group *g, const char *name)
{
	if (!name || variant_index(g, name) >= 0)
		return;
	if (g->nvariants == MAX_VARIANTS)
		g->more_variants++;
	else
		g->variants[g->nvariants++] = name;
}

/* group.json's variants and runs, and each run's result.json when it can be read. */
static void load_runs(struct group *g, const char *dir)
{
	struct json_object *vs = vn_json_get(g->json, "variants"), *runs = vn_json_get(g->json, "runs");
	size_t n = json_object_is_type(vs, json_type_array) ? json_object_array_length(vs) : 0;

	for (size_t i = 0; i < n; i++)
		add_variant(g, vn_json_str(json_object_array_get_idx(vs, i), "name"));
	n = json_object_is_type(runs, json_type_array) ? json_object_array_length(runs) : 0;
	for (size_t i = 0; i < n; i++) {
		struct json_object *r = json_object_array_get_idx(runs, i);
		if (g->nruns == VN_HTML_MAX_RUNS) {
			g->more_runs++;
			continue;
		}
		struct run *run = &g->runs[g->nruns++];
		*run = (struct run){.variant = vn_json_str(r, "variant"), .dir = vn_json_str(r, "dir"), .repeat = NAN};
		vn_json_has_finite(r, "repeat", &run->repeat);
		run->has_exit = vn_json_has_finite(r, "exit", &run->exit);
		add_variant(g, run->variant);
		/* Only inside the group: group.json may sit in a reused directory someone else wrote. */
		if (!vn_html_path_ok(run->dir))
			continue;
		_cleanup_free_ char *rel = vn_xasprintf("%s/result.json", run->dir);
		/* Nor through a symlink planted there, to someone else's run. */
		if (vn_path_has_symlink(dir, rel))
			continue;
		_cleanup_free_ char *rdir = vn_xasprintf("%s/%s", dir, run->dir);
		struct vn_error e = {0};
		if (vn_html_read_json(rdir, "result.json", GROUP_MAX, &run->res, &e) < 0)
			run->res = NULL;
		vn_error_clear(&e);
	}
}

static void header(struct vn_strbuf *b, const struct group *g)
{
	struct json_object *o = g->json;
	const char *keys[] = {"topology", "accelerator", "base", "host"};
	double repeats;

	vn_strbuf_printf(b, "<h1>");
	vn_html_text(b, vn_json_str(o, "scenario") ? vn_json_str(o, "scenario") : "vnuma result group");
	vn_strbuf_printf(b, " (result group)</h1>\n");
	if (!vn_json_bool(o, "complete"))
		vn_strbuf_printf(
			b, "<div class=\"banner fail\" id=\"status\">INCOMPLETE: not every run has ended</div>\n");
	vn_strbuf_printf(b, "<table class=\"header\">\n");
	for (size_t i = 0; i < VN_ARRAY_SIZE(keys); i++) {
		const char *v = vn_json_str(o, keys[i]);
		if (!v)
			continue;
		vn_strbuf_printf(b, "<tr><th>%s</th><td>", keys[i]);
		vn_html_text(b, v);
		vn_strbuf_printf(b, "</td></tr>\n");
	}
	if (vn_json_has_finite(o, "repeats", &repeats))
		vn_strbuf_printf(b, "<tr><th>repeats</th><td>%.0f</td></tr>\n", repeats);
	vn_strbuf_printf(b, "<tr><th>variants</th><td>");
	for (unsigned i = 0; i < g->nvariants; i++) {
		vn_strbuf_printf(b, "%s<span class=\"chip\" style=\"background:%s\">", i ? " " : "", vn_html_color(i));
		vn_html_text(b, g->variants[i]);
		vn_strbuf_printf(b, "</span>");
	}
	if (g->more_variants)
		vn_strbuf_printf(b, " and %u more (not drawn)", g->more_variants);
	vn_strbuf_printf(b, "</td></tr>\n</table>\n");
}

static void runs_table(struct vn_strbuf *b, const struct group *g, const char *dir)
{
	vn_strbuf_printf(b, "<h2>Runs</h2>\n<table class=\"runs\"><tr><th>variant</th><th>repeat</th><th>exit</th>"
			    "<th>verdict</th><th>report</th></tr>\n");
	for (unsigned i = 0; i < g->nruns; i++) {
		const struct run *r = &g->runs[i];
		const char *verdict = !r->res                             ? "no result.json"
				      : !vn_json_bool(r->res, "complete") ? "INCOMPLETE"
				      : vn_json_bool(r->res, "passed")    ? "pass"
									  : "fail";
		vn_strbuf_printf(b, "<tr><td>");
		vn_html_text(b, r->variant ? r->variant : "?");
		vn_strbuf_printf(b, "</td><td class=\"n\">");
		vn_html_num(b, r->repeat);
		vn_strbuf_printf(b, "</td><td class=\"n\">");
		if (r->has_exit)
			vn_html_num(b, r->exit);
		else
			vn_strbuf_printf(b, "running");
		vn_strbuf_printf(b, "</td><td class=\"%s\">%s</td><td>", strcmp(verdict, "pass") == 0 ? "pass" : "fail",
				 verdict);
		if (vn_html_path_ok(r->dir)) {
			_cleanup_free_ char *page = vn_xasprintf("%s/%s/report.html", dir, r->dir);
			vn_strbuf_printf(b, "<a href=\"");
			vn_html_text(b, r->dir);
			vn_strbuf_printf(b, "/report.html\">");
			vn_html_text(b, r->dir);
			vn_strbuf_printf(b, "/report.html</a>");
			/* vnuma run writes it; a run copied in from elsewhere may lack one. */
			if (!vn_is_file(page))
				vn_strbuf_printf(b, " <span class=\"note\">(not made yet)</span>");
		}
		vn_strbuf_printf(b, "</td></tr>\n");
	}
	vn_strbuf_printf(b, "</table>\n");
	if (g->more_runs)
		vn_strbuf_printf(b, "<p class=\"note\">%u more runs in group.json, not read (at most %d).</p>\n",
				 g->more_runs, VN_HTML_MAX_RUNS);
}

/* The first object in o's array key whose member field is value, or NULL: compare.json's rows and variants by name. */
static struct json_object *find_by(struct json_object *o, const char *key, const char *field, const char *value)
{
	struct json_object *a = vn_json_get(o, key);
	size_t n = json_object_is_type(a, json_type_array) ? json_object_array_length(a) : 0;

	for (size_t i = 0; i < n; i++) {
		const char *v = vn_json_str(json_object_array_get_idx(a, i), field);
		if (v && strcmp(v, value) == 0)
			return json_object_array_get_idx(a, i);
	}
	return NULL;
}

/* compare.json's rows in the order shown: the significant ones first, each half in file order. */
static unsigned ordered_rows(struct json_object *rows, struct json_object **out, unsigned max)
{
	size_t n = json_object_is_type(rows, json_type_array) ? json_object_array_length(rows) : 0;
	unsigned k = 0;

	for (int pass = 0; pass < 2; pass++)
		for (size_t i = 0; i < n && k < max; i++) {
			struct json_object *r = json_object_array_get_idx(rows, i);
			if (vn_json_str(r, "metric") && vn_json_bool(r, "significant") == (pass == 0))
				out[k++] = r;
		}
	return k;
}

static void compare_cell(struct vn_strbuf *b, struct json_object *v)
{
	double mean, sd, change, p, n;

	if (!v) {
		vn_strbuf_printf(b, "<td>-</td>");
		return;
	}
	vn_strbuf_printf(b, "<td class=\"n%s\">", vn_json_bool(v, "significant") ? " sig" : "");
	if (vn_json_has_finite(v, "mean", &mean)) {
		vn_html_num(b, mean);
		if (vn_json_has_finite(v, "stddev", &sd) && mean != 0)
			vn_strbuf_printf(b, " &plusmn;%.1f%%", fabs(sd / mean) * 100);
	} else {
		vn_strbuf_printf(b, "-");
	}
	if (vn_json_has_finite(v, "n", &n))
		vn_strbuf_printf(b, " <span class=\"note\">n=%.0f</span>", n);
	if (vn_json_has_finite(v, "change_pct", &change))
		vn_strbuf_printf(b, "<br>%+.1f%%", change);
	if (vn_json_has_finite(v, "p_value", &p))
		vn_strbuf_printf(b, " <span class=\"note\">p=%.3g</span>", p);
	vn_strbuf_printf(b, "</td>");
}

static void compare_table(struct vn_strbuf *b, const struct group *g)
{
	struct json_object *rows = vn_json_get(g->cmp, "rows");
	_cleanup_free_ struct json_object **order = vn_xcalloc(MAX_ROWS, sizeof(*order));
	unsigned n = ordered_rows(rows, order, MAX_ROWS);
	size_t total = json_object_is_type(rows, json_type_array) ? json_object_array_length(rows) : 0;

	vn_strbuf_printf(b, "<h2>Comparison (compare.json)</h2>\n");
	if (!n) {
		vn_html_note(b, "compare.json holds no rows.");
		return;
	}
	vn_strbuf_printf(b, "<table class=\"compare\"><tr><th>metric</th>");
	for (unsigned v = 0; v < g->nvariants; v++) {
		vn_strbuf_printf(b, "<th>");
		vn_html_text(b, g->variants[v]);
		vn_strbuf_printf(b, "</th>");
	}
	vn_strbuf_printf(b, "</tr>\n");
	for (unsigned i = 0; i < n; i++) {
		bool sig = vn_json_bool(order[i], "significant");
		vn_strbuf_printf(b, "<tr><td%s>", sig ? " class=\"sig\"" : "");
		vn_html_text(b, vn_json_str(order[i], "metric"));
		vn_strbuf_printf(b, "</td>");
		for (unsigned v = 0; v < g->nvariants; v++)
			compare_cell(b, find_by(order[i], "variants", "name", g->variants[v]));
		vn_strbuf_printf(b, "</tr>\n");
	}
	vn_strbuf_printf(b, "</table>\n<p class=\"note\">mean &plusmn;stddev%% (n), then %%change against the base "
			    "and Welch's p; highlighted: significant.");
	if (total > n)
		vn_strbuf_printf(b, " %zu more rows in compare.json.", total - n);
	vn_strbuf_printf(b, "</p>\n");
	/* What compare says beneath its table, said here too (someone's file: strings only, bounded). */
	json_object *notes = vn_json_member(g->cmp, "notes", json_type_array);
	size_t nnotes = notes ? json_object_array_length(notes) : 0;
	for (size_t i = 0; i < nnotes && i < NOTES_MAX; i++) {
		json_object *note = json_object_array_get_idx(notes, i);
		if (json_object_is_type(note, json_type_string) && json_object_get_string_len(note) <= NOTE_MAX)
			vn_html_note(b, json_object_get_string(note));
	}
}

/* The runs' values of metric, per variant (the caller frees values[v]). */
static void metric_values(const struct group *g, const char *metric, double **values, unsigned *count)
{
	for (unsigned v = 0; v < g->nvariants; v++) {
		values[v] = vn_xcalloc(g->nruns ? g->nruns : 1, sizeof(double));
		count[v] = 0;
	}
	for (unsigned i = 0; i < g->nruns; i++) {
		int v = variant_index(g, g->runs[i].variant);
		double x;
		if (v >= 0 && vn_json_has_finite(vn_json_get(g->runs[i].res, "metrics"), metric, &x))
			values[v][count[v]++] = x;
	}
}

struct scored {
	const char *metric;
	double score;
};

static int by_score(const void *a, const void *b)
{
	const struct scored *x = a, *y = b;

	return x->score < y->score ? 1 : x->score > y->score ? -1 : strcmp(x->metric, y->metric);
}

/* Without compare.json: every metric some run recorded, the ones whose variant means differ most first. */
static unsigned metrics_by_spread(const struct group *g, struct json_object *seen, const char **out, unsigned max)
{
	unsigned n = 0, k = 0;

	for (unsigned i = 0; i < g->nruns; i++) {
		struct json_object *m = vn_json_get(g->runs[i].res, "metrics");
		if (!json_object_is_type(m, json_type_object))
			continue;
		json_object_object_foreach(m, key, val)
		{
			(void)val;
			if (!vn_json_get(seen, key))
				json_object_object_add(seen, key, json_object_new_boolean(1));
		}
	}
	_cleanup_free_ struct scored *all = vn_xcalloc((size_t)json_object_object_length(seen) + 1, sizeof(*all));
	json_object_object_foreach(seen, key, val)
	{
		double *values[MAX_VARIANTS];
		unsigned count[MAX_VARIANTS];
		double lo = INFINITY, hi = -INFINITY, scale = 0;
		(void)val;
		metric_values(g, key, values, count);
		for (unsigned v = 0; v < g->nvariants; v++) {
			double sum = 0;
			for (unsigned i = 0; i < count[v]; i++)
				sum += values[v][i];
			if (count[v]) {
				lo = fmin(lo, sum / count[v]);
				hi = fmax(hi, sum / count[v]);
				scale = fmax(scale, fabs(sum / count[v]));
			}
			free(values[v]);
		}
		all[n++] = (struct scored){key, isfinite(lo) && scale > 0 ? (hi - lo) / scale : 0};
	}
	qsort(all, n, sizeof(*all), by_score);
	for (; k < n && k < max; k++)
		out[k] = all[k].metric; /* a key of seen: the caller keeps it */
	return k;
}

static void strips(struct vn_strbuf *b, const struct group *g)
{
	const char *metrics[VN_HTML_MAX_METRICS];
	bool sig[VN_HTML_MAX_METRICS] = {false};
	_cleanup_json_ struct json_object *seen = json_object_new_object();
	unsigned n;

	if (g->cmp) {
		struct json_object *order[VN_HTML_MAX_METRICS];
		n = ordered_rows(vn_json_get(g->cmp, "rows"), order, VN_HTML_MAX_METRICS);
		for (unsigned i = 0; i < n; i++) {
			metrics[i] = vn_json_str(order[i], "metric");
			sig[i] = vn_json_bool(order[i], "significant");
		}
	} else {
		n = metrics_by_spread(g, seen, metrics, VN_HTML_MAX_METRICS);
	}
	vn_strbuf_printf(b, "<h2>Metrics: each variant's repeats</h2>\n");
	if (!n)
		vn_html_note(b, "No run recorded any metric.");
	else if (!g->cmp)
		vn_html_note(b, "No compare.json (vnuma compare DIR --json writes it): the metrics whose variant means "
				"differ most come first.");
	vn_strbuf_printf(b, "<div class=\"charts\">\n");
	for (unsigned i = 0; i < n; i++) {
		double *values[MAX_VARIANTS];
		unsigned count[MAX_VARIANTS];
		metric_values(g, metrics[i], values, count);
		_cleanup_free_ char *title = vn_xasprintf("%s%s", metrics[i], sig[i] ? " (significant)" : "");
		struct vn_html_strip s = {
			.title = title,
			.ngroups = g->nvariants,
			.names = g->variants,
			.count = count,
			.values = (const double *const *)values,
		};
		vn_html_strip(b, &s);
		for (unsigned v = 0; v < g->nvariants; v++)
			free(values[v]);
	}
	vn_strbuf_printf(b, "</div>\n");
}

/* Remote fractions shown in the group's locality section: the run's three, then lone steps'. */
#define MAX_LOC_METRICS 12

/* The run's or a lone step's remote fraction (docs/results.md): what a locality comparison is about. */
static bool remote_metric(const char *m)
{
	return m && strncmp(m, "locality.", 9) == 0 && strstr(m, ".remote_fraction.") && strlen(m) < 256;
}

static void add_loc_metric(struct json_object *seen, const char *m)
{
	if (remote_metric(m) && !vn_json_get(seen, m))
		json_object_object_add(seen, m, json_object_new_boolean(1));
}

/* The remote fractions compare.json (or else some run) holds, the run's first; names are keys of seen. */
static unsigned loc_metrics(const struct group *g, struct json_object *seen, const char **out)
{
	struct json_object *rows = vn_json_get(g->cmp, "rows");
	size_t nrows = json_object_is_type(rows, json_type_array) ? json_object_array_length(rows) : 0;
	unsigned n = 0;

	for (size_t i = 0; i < nrows; i++)
		add_loc_metric(seen, vn_json_str(json_object_array_get_idx(rows, i), "metric"));
	for (unsigned i = 0; !g->cmp && i < g->nruns; i++) {
		struct json_object *m = vn_json_get(g->runs[i].res, "metrics");
		if (!json_object_is_type(m, json_type_object))
			continue;
		json_object_object_foreach(m, key, val)
		{
			(void)val;
			add_loc_metric(seen, key);
		}
	}
	for (int steps = 0; steps < 2; steps++) {
		json_object_object_foreach(seen, key, val)
		{
			(void)val;
			if ((strncmp(key, "locality.step.", 14) == 0) == steps && n < MAX_LOC_METRICS)
				out[n++] = key;
		}
	}
	return n;
}

/* Where the variants' runs counted accesses: their remote fractions side by side, whatever their rank above. */
static void locality(struct vn_strbuf *b, const struct group *g)
{
	_cleanup_json_ struct json_object *seen = json_object_new_object();
	const char *metrics[MAX_LOC_METRICS];
	unsigned n = loc_metrics(g, seen, metrics);

	if (!n)
		return;
	vn_strbuf_printf(b, "<h2 id=\"locality\">Locality: remote fraction per variant (the emulator's count)</h2>\n");
	if (g->cmp) {
		vn_strbuf_printf(b, "<table class=\"compare locality\"><tr><th>metric</th>");
		for (unsigned v = 0; v < g->nvariants; v++) {
			vn_strbuf_printf(b, "<th>");
			vn_html_text(b, g->variants[v]);
			vn_strbuf_printf(b, "</th>");
		}
		vn_strbuf_printf(b, "</tr>\n");
		for (unsigned i = 0; i < n; i++) {
			struct json_object *row = find_by(g->cmp, "rows", "metric", metrics[i]);
			vn_strbuf_printf(b, "<tr><td%s>", vn_json_bool(row, "significant") ? " class=\"sig\"" : "");
			vn_html_text(b, metrics[i]);
			vn_strbuf_printf(b, "</td>");
			for (unsigned v = 0; v < g->nvariants; v++)
				compare_cell(b, find_by(row, "variants", "name", g->variants[v]));
			vn_strbuf_printf(b, "</tr>\n");
		}
		vn_strbuf_printf(b, "</table>\n");
	}
	vn_strbuf_printf(b, "<div class=\"charts\">\n");
	for (unsigned i = 0; i < n; i++) {
		double *values[MAX_VARIANTS];
		unsigned count[MAX_VARIANTS];
		metric_values(g, metrics[i], values, count);
		struct vn_html_strip st = {
			.title = metrics[i],
			.ngroups = g->nvariants,
			.names = g->variants,
			.count = count,
			.values = (const double *const *)values,
		};
		vn_html_strip(b, &st);
		for (unsigned v = 0; v < g->nvariants; v++)
			free(values[v]);
	}
	vn_strbuf_printf(b, "</div>\n<p class=\"note\">The share of the guest's memory accesses that reached "
			    "another node's memory, user, kernel and all (docs/locality.md); each variant's runs as "
			    "points.</p>\n");
}

int vn_html_group(struct vn_strbuf *b, const char *dir, struct vn_error *err)
{
	_cleanup_(group_clear) struct group g = {0};
	_cleanup_free_ char *cmp = vn_xasprintf("%s/compare.json", dir);
	int rc;

	if ((rc = vn_html_read_json(dir, "group.json", GROUP_MAX, &g.json, err)) < 0)
		return rc;
	if (!json_object_is_type(g.json, json_type_object))
		return vn_input_error(err, "%s/group.json: not a JSON object", dir);
	load_runs(&g, dir);
	const char *scenario = vn_json_str(g.json, "scenario");
	_cleanup_free_ char *title = vn_xasprintf("vnuma: %s (group)", scenario ? scenario : dir);
	vn_html_page_begin(b, title);
	header(b, &g);
	vn_strbuf_printf(b, "<h2>Group assertions</h2>\n");
	vn_html_verdicts(b, vn_json_get(g.json, "assertions"));
	_cleanup_free_ char *cmp_why = NULL;
	if (vn_is_file(cmp)) {
		struct vn_error e = {0};
		/* Another command writes it: a bad one costs the table, not the page. */
		if (vn_html_read_json(dir, "compare.json", GROUP_MAX, &g.cmp, &e) < 0 ||
		    !json_object_is_type(g.cmp, json_type_object)) {
			cmp_why = vn_xstrdup(e.msg[0] ? e.msg : "compare.json: not a JSON object");
			if (g.cmp)
				json_object_put(steal_pointer(&g.cmp));
		}
		vn_error_clear(&e);
	}
	/* Before the whole table, which runs to hundreds of rows. */
	locality(b, &g);
	if (cmp_why) {
		vn_strbuf_printf(b, "<h2>Comparison</h2>\n");
		vn_html_note(b, cmp_why);
	} else if (g.cmp) {
		compare_table(b, &g);
	}
	strips(b, &g);
	runs_table(b, &g, dir);
	vn_html_page_end(b);
	return 0;
}
