/* report.html for a result group: the matrix, its comparison's table, and per metric each variant's repeats. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "report/html.h"
#include "report/comparison.h"
#include "report/html-priv.h"
#include "report/result-group.h"
#include "report/result.h"
#include "util/alloc.h"
#include "util/cleanup.h"
#include "util/dir.h"

/* Variants drawn (columns, strip chart groups); a matrix wider than this is not one to read on a page. */
#define MAX_VARIANTS 16
/* The comparison's rows listed in the table (significant ones first); compare.txt has them all. */
#define MAX_ROWS 400

struct run {
	const struct vn_result_group_run *in; /* group.json's */
	unsigned src;                         /* the directory of the group, or slice, it is in */
	bool has_res;
	struct vn_result_run res; /* its result.json, when has_res */
};

struct group {
	struct vn_result_group g;
	const struct vn_compare *cmp; /* NULL: none */
	const char *variants[MAX_VARIANTS];
	unsigned nvariants, more_variants;
	struct run *runs; /* VN_HTML_MAX_RUNS */
	unsigned nruns, more_runs;
	/* Where the group is: one directory, or the slices of one matrix in slice order. */
	const char *const *src;
	size_t nsrc;
	unsigned *run_src; /* g.runs[i]'s index in src */
	char **link;       /* per src: the runs' links' prefix from the page ("" for one group) */
};

static void group_clear(struct group *g)
{
	for (unsigned i = 0; g->runs && i < g->nruns; i++)
		if (g->runs[i].has_res)
			vn_result_clear(&g->runs[i].res);
	free(g->runs);
	for (size_t i = 0; g->link && i < g->nsrc; i++)
		free(g->link[i]);
	vn_free_all(g->link, g->run_src, (void *)g->src);
	vn_result_group_clear(&g->g);
}

/* The path from the directory from to to, ending in '/' ("" when they are one); to as given when unresolved. */
static char *relative(const char *from, const char *to)
{
	_cleanup_free_ char *a = realpath(from, NULL), *b = realpath(to, NULL);
	_cleanup_strbuf_ struct vn_strbuf s = VN_STRBUF_INIT;
	size_t i = 0;

	if (!a || !b)
		return vn_xasprintf("%s/", to);
	while (a[i] && a[i] == b[i])
		i++;
	/* Back to where both paths' common components end. */
	if (!((a[i] == '\0' || a[i] == '/') && (b[i] == '\0' || b[i] == '/')))
		while (i > 0 && a[i - 1] != '/')
			i--;
	for (const char *p = a + i; *p; p++)
		if (*p != '/' && (p == a + i || p[-1] == '/'))
			vn_strbuf_printf(&s, "../");
	const char *rest = b + i + strspn(b + i, "/");
	if (*rest)
		vn_strbuf_printf(&s, "%s/", rest);
	return s.len ? vn_strbuf_steal(&s) : vn_xstrdup("");
}

/* The slices' groups merged into g->g, their runs in slice order: merged as compare merges them, refused alike. */
static int load_slices(struct group *g, const struct vn_html_group_in *in, struct vn_error *err)
{
	size_t n = in->ndirs;
	struct vn_result_group *gs = vn_xcalloc(n, sizeof(*gs));
	_cleanup_free_ size_t *order = vn_xcalloc(n, sizeof(*order));
	int rc = 0;

	for (size_t i = 0; i < n && rc == 0; i++) {
		_cleanup_free_ char *path = vn_xasprintf("%s/group.json", in->dirs[i]);
		if (!vn_is_file(path))
			rc = vn_input_error(err,
					    "%s: no group.json: several directories make one page when they are the "
					    "slices of one matrix (vnuma run --shard I/N)",
					    in->dirs[i]);
		else
			rc = vn_result_group_load(path, &gs[i], err);
	}
	if (rc == 0 && (rc = vn_result_group_shards(in->dirs, n, gs, order, err)) == 0)
		rc = vn_input_error(err,
				    "%s, %s...: no slice of a matrix (vnuma run --shard I/N): report draws one result "
				    "group or run directory, or the slices of one matrix",
				    in->dirs[0], in->dirs[1]);
	if (rc >= 0) {
		const char **src = vn_xcalloc(n, sizeof(*src));
		g->g = gs[order[0]];
		memset(&gs[order[0]], 0, sizeof(gs[0]));
		g->run_src = vn_xcalloc(g->g.nruns + 1, sizeof(*g->run_src));
		for (size_t k = 0; k < n; k++) {
			struct vn_result_group *s = &gs[order[k]];
			src[k] = in->dirs[order[k]];
			for (unsigned i = 0; k && i < s->nruns; i++) {
				g->g.runs = vn_xreallocarray(g->g.runs, g->g.nruns + 1, sizeof(*g->g.runs));
				g->run_src = vn_xreallocarray(g->run_src, g->g.nruns + 1, sizeof(*g->run_src));
				g->g.runs[g->g.nruns] = s->runs[i];
				g->run_src[g->g.nruns++] = (unsigned)k;
			}
			if (k) {
				/* Moved: the slice keeps no runs of its own to free. */
				free(s->runs);
				s->runs = NULL;
				s->nruns = 0;
				g->g.complete = g->g.complete && (s->keys & VN_GROUP_COMPLETE) && s->complete;
			}
		}
		g->src = src;
		g->nsrc = n;
		g->link = vn_xcalloc(n, sizeof(*g->link));
		for (size_t k = 0; k < n; k++)
			g->link[k] = relative(in->page_dir ? in->page_dir : ".", src[k]);
		rc = 0;
	}
	for (size_t i = 0; i < n; i++)
		vn_result_group_clear(&gs[i]);
	free(gs);
	return rc;
}

/* in's group, or its slices merged. */
static int load_group(struct group *g, const struct vn_html_group_in *in, struct vn_error *err)
{
	if (in->ndirs > 1)
		return load_slices(g, in, err);
	_cleanup_free_ char *path = vn_xasprintf("%s/group.json", in->dir);
	int rc = vn_result_group_load(path, &g->g, err);
	if (rc < 0)
		return rc;
	const char **src = vn_xcalloc(1, sizeof(*src));
	src[0] = in->dir;
	g->src = src;
	g->nsrc = 1;
	g->run_src = vn_xcalloc(g->g.nruns + 1, sizeof(*g->run_src));
	g->link = vn_xcalloc(1, sizeof(*g->link));
	g->link[0] = vn_xstrdup("");
	return 0;
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

/* A run's recorded value of metric, if it has one. */
static bool run_metric(const struct run *r, const char *metric, double *out)
{
	for (unsigned i = 0; r->has_res && i < r->res.nmetrics; i++)
		if (strcmp(r->res.metrics[i].name, metric) == 0) {
			*out = r->res.metrics[i].value;
			return true;
		}
	return false;
}

/* group.json's variants and runs, and each run's result.json when it can be read. */
static void load_runs(struct group *g)
{
	g->runs = vn_xcalloc(VN_HTML_MAX_RUNS, sizeof(*g->runs));
	for (unsigned i = 0; i < g->g.nvariants; i++)
		add_variant(g, g->g.variants[i].name);
	for (unsigned i = 0; i < g->g.nruns; i++) {
		if (g->nruns == VN_HTML_MAX_RUNS) {
			g->more_runs++;
			continue;
		}
		struct run *run = &g->runs[g->nruns++];
		run->in = &g->g.runs[i];
		run->src = g->run_src[i];
		const char *dir = g->src[run->src];
		add_variant(g, run->in->variant);
		/* Only inside the group: group.json may sit in a reused directory someone else wrote. */
		if (!vn_html_path_ok(run->in->dir))
			continue;
		_cleanup_free_ char *rel = vn_xasprintf("%s/result.json", run->in->dir);
		/* Nor through a symlink planted there, to someone else's run. */
		if (vn_path_has_symlink(dir, rel))
			continue;
		_cleanup_free_ char *path = vn_xasprintf("%s/%s", dir, rel);
		struct vn_error e = {0};
		run->has_res = vn_result_load(path, &run->res, &e) == 0;
		if (!run->has_res)
			vn_result_clear(&run->res);
		vn_error_clear(&e);
	}
}

static void header(struct vn_strbuf *b, const struct group *gr)
{
	const struct vn_result_group *g = &gr->g;
	const char *const keys[][2] = {
		{"topology", g->topology}, {"accelerator", g->accel}, {"base", g->base}, {"host", g->host}};

	vn_strbuf_printf(b, "<h1>");
	vn_html_text(b, g->scenario ? g->scenario : "vnuma result group");
	vn_strbuf_printf(b, " (result group)</h1>\n");
	/* A group.json without "complete" is read as complete (compare's view); the page says what it was told. */
	if (!(g->keys & VN_GROUP_COMPLETE) || !g->complete)
		vn_strbuf_printf(
			b, "<div class=\"banner fail\" id=\"status\">INCOMPLETE: not every run has ended</div>\n");
	vn_strbuf_printf(b, "<table class=\"header\">\n");
	for (size_t i = 0; i < VN_ARRAY_SIZE(keys); i++) {
		if (!keys[i][1])
			continue;
		vn_strbuf_printf(b, "<tr><th>%s</th><td>", keys[i][0]);
		vn_html_text(b, keys[i][1]);
		vn_strbuf_printf(b, "</td></tr>\n");
	}
	if (g->keys & VN_GROUP_REPEATS)
		vn_strbuf_printf(b, "<tr><th>repeats</th><td>%u</td></tr>\n", g->repeats);
	if (gr->nsrc > 1) {
		vn_strbuf_printf(b, "<tr><th>slices</th><td>%zu merged:", gr->nsrc);
		for (size_t i = 0; i < gr->nsrc; i++) {
			vn_strbuf_printf(b, "%s ", i ? "," : "");
			vn_html_text(b, gr->src[i]);
		}
		vn_strbuf_printf(b, "</td></tr>\n");
	}
	vn_strbuf_printf(b, "<tr><th>variants</th><td>");
	for (unsigned i = 0; i < gr->nvariants; i++) {
		vn_strbuf_printf(b, "%s<span class=\"chip\" style=\"background:%s\">", i ? " " : "", vn_html_color(i));
		vn_html_text(b, gr->variants[i]);
		vn_strbuf_printf(b, "</span>");
	}
	if (gr->more_variants)
		vn_strbuf_printf(b, " and %u more (not drawn)", gr->more_variants);
	vn_strbuf_printf(b, "</td></tr>\n</table>\n");
}

static const char *run_verdict(const struct run *r)
{
	if (!r->has_res)
		return "no result.json";
	if (!r->res.complete)
		return "INCOMPLETE";
	return vn_result_failures(&r->res) || vn_result_undecided(&r->res) ? "fail" : "pass";
}

static void runs_table(struct vn_strbuf *b, const struct group *g)
{
	vn_strbuf_printf(b, "<h2>Runs</h2>\n<table class=\"runs\"><tr><th>variant</th><th>repeat</th><th>exit</th>"
			    "<th>verdict</th><th>report</th></tr>\n");
	for (unsigned i = 0; i < g->nruns; i++) {
		const struct vn_result_group_run *r = g->runs[i].in;
		const char *verdict = run_verdict(&g->runs[i]);
		vn_strbuf_printf(b, "<tr><td>");
		vn_html_text(b, r->variant ? r->variant : "?");
		vn_strbuf_printf(b, "</td><td class=\"n\">");
		vn_html_num(b, r->keys & VN_GROUP_RUN_REPEAT ? r->repeat : NAN);
		vn_strbuf_printf(b, "</td><td class=\"n\">");
		if (r->exit >= 0)
			vn_html_num(b, r->exit);
		else
			vn_strbuf_printf(b, "running");
		vn_strbuf_printf(b, "</td><td class=\"%s\">%s</td><td>", strcmp(verdict, "pass") == 0 ? "pass" : "fail",
				 verdict);
		if (vn_html_path_ok(r->dir)) {
			const char *link = g->link[g->runs[i].src];
			_cleanup_free_ char *page = vn_xasprintf("%s/%s/report.html", g->src[g->runs[i].src], r->dir);
			vn_strbuf_printf(b, "<a href=\"");
			vn_html_text(b, link);
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

/* The comparison's row of metric, or NULL. */
static const struct vn_compare_row *find_row(const struct vn_compare *c, const char *metric)
{
	for (size_t i = 0; c && i < c->nrows; i++)
		if (strcmp(c->rows[i].metric, metric) == 0)
			return &c->rows[i];
	return NULL;
}

/* row's cell of the variant named name (the comparison's variants may not be the group's), or NULL. */
static const struct vn_compare_cell *find_cell(const struct vn_compare *c, const struct vn_compare_row *row,
					       const char *name)
{
	for (size_t v = 0; row && v < c->nvariants; v++)
		if (strcmp(c->variants[v].name, name) == 0)
			return &row->cells[v];
	return NULL;
}

/* The comparison's rows in the order shown: the significant ones first, each half in its order. */
static unsigned ordered_rows(const struct vn_compare *c, const struct vn_compare_row **out, unsigned max)
{
	unsigned k = 0;

	for (int pass = 0; pass < 2; pass++)
		for (size_t i = 0; c && i < c->nrows && k < max; i++)
			if (c->rows[i].significant == (pass == 0))
				out[k++] = &c->rows[i];
	return k;
}

static void compare_cell(struct vn_strbuf *b, const struct vn_compare_cell *c)
{
	if (!c) {
		vn_strbuf_printf(b, "<td>-</td>");
		return;
	}
	vn_strbuf_printf(b, "<td class=\"n%s\">", c->significant ? " sig" : "");
	if (c->n > 0 && isfinite(c->mean)) {
		vn_html_num(b, c->mean);
		if (c->n >= 2 && isfinite(c->stddev) && c->mean != 0)
			vn_strbuf_printf(b, " &plusmn;%.1f%%", fabs(c->stddev / c->mean) * 100);
	} else {
		vn_strbuf_printf(b, "-");
	}
	vn_strbuf_printf(b, " <span class=\"note\">n=%u</span>", c->n);
	if (c->has_pct && isfinite(c->change_pct))
		vn_strbuf_printf(b, "<br>%+.1f%%", c->change_pct);
	if (c->has_p && isfinite(c->p_value))
		vn_strbuf_printf(b, " <span class=\"note\">p=%.3g</span>", c->p_value);
	vn_strbuf_printf(b, "</td>");
}

/* A table of rows, one column per variant drawn. */
static void rows_table(struct vn_strbuf *b, const struct group *g, const char *cls, const struct vn_compare_row **rows,
		       const char *const *names, unsigned n)
{
	vn_strbuf_printf(b, "<table class=\"%s\"><tr><th>metric</th>", cls);
	for (unsigned v = 0; v < g->nvariants; v++) {
		vn_strbuf_printf(b, "<th>");
		vn_html_text(b, g->variants[v]);
		vn_strbuf_printf(b, "</th>");
	}
	vn_strbuf_printf(b, "</tr>\n");
	for (unsigned i = 0; i < n; i++) {
		vn_strbuf_printf(b, "<tr><td%s>", rows[i] && rows[i]->significant ? " class=\"sig\"" : "");
		vn_html_text(b, names[i]);
		vn_strbuf_printf(b, "</td>");
		for (unsigned v = 0; v < g->nvariants; v++)
			compare_cell(b, find_cell(g->cmp, rows[i], g->variants[v]));
		vn_strbuf_printf(b, "</tr>\n");
	}
	vn_strbuf_printf(b, "</table>\n");
}

static void compare_table(struct vn_strbuf *b, const struct group *g, const struct vn_html_group_in *in)
{
	_cleanup_free_ const struct vn_compare_row **order = vn_xcalloc(MAX_ROWS, sizeof(*order));
	_cleanup_free_ const char **names = vn_xcalloc(MAX_ROWS, sizeof(*names));
	unsigned n = ordered_rows(g->cmp, order, MAX_ROWS);

	vn_strbuf_printf(b, "<h2>Comparison (compare.json)</h2>\n");
	if (!n) {
		vn_html_note(b, "compare.json holds no rows.");
		return;
	}
	for (unsigned i = 0; i < n; i++)
		names[i] = order[i]->metric;
	rows_table(b, g, "compare", order, names, n);
	vn_strbuf_printf(b, "<p class=\"note\">mean &plusmn;stddev%% (n), then %%change against the base "
			    "and Welch's p; highlighted: significant.");
	if (g->cmp->nrows > n)
		vn_strbuf_printf(b, " %zu more rows in compare.json.", g->cmp->nrows - n);
	vn_strbuf_printf(b, "</p>\n");
	/* What compare says beneath its table, said here too. */
	for (size_t i = 0; i < in->nnotes; i++)
		vn_html_note(b, in->notes[i]);
}

/* The runs' values of metric, per variant (the caller frees values[v]). */
static void metric_values(const struct group *g, const char *metric, double **values, unsigned *count)
{
	for (unsigned v = 0; v < g->nvariants; v++) {
		values[v] = vn_xcalloc(g->nruns ? g->nruns : 1, sizeof(double));
		count[v] = 0;
	}
	for (unsigned i = 0; i < g->nruns; i++) {
		int v = variant_index(g, g->runs[i].in->variant);
		double x;
		if (v >= 0 && run_metric(&g->runs[i], metric, &x))
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

/* Every metric some run recorded, each once, in the order first seen; the names are the runs'. */
static unsigned all_metrics(const struct group *g, const char ***out)
{
	unsigned n = 0, cap = 0;

	*out = NULL;
	for (unsigned i = 0; i < g->nruns; i++)
		for (unsigned m = 0; g->runs[i].has_res && m < g->runs[i].res.nmetrics; m++) {
			const char *name = g->runs[i].res.metrics[m].name;
			unsigned k = 0;
			while (k < n && strcmp((*out)[k], name) != 0)
				k++;
			if (k < n)
				continue;
			if (n == cap)
				*out = vn_xreallocarray(*out, cap = cap ? cap * 2 : 64, sizeof(**out));
			(*out)[n++] = name;
		}
	return n;
}

/* Without a comparison: every metric some run recorded, the ones whose variant means differ most first. */
static unsigned metrics_by_spread(const struct group *g, const char **out, unsigned max)
{
	_cleanup_free_ const char **seen = NULL;
	unsigned n = all_metrics(g, &seen), k = 0;
	_cleanup_free_ struct scored *all = vn_xcalloc((size_t)n + 1, sizeof(*all));

	for (unsigned m = 0; m < n; m++) {
		double *values[MAX_VARIANTS];
		unsigned count[MAX_VARIANTS];
		double lo = INFINITY, hi = -INFINITY, scale = 0;
		metric_values(g, seen[m], values, count);
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
		all[m] = (struct scored){seen[m], isfinite(lo) && scale > 0 ? (hi - lo) / scale : 0};
	}
	qsort(all, n, sizeof(*all), by_score);
	for (; k < n && k < max; k++)
		out[k] = all[k].metric; /* a run's name: the group keeps it */
	return k;
}

/* One strip chart per metric: each variant's runs as points. */
static void strip_charts(struct vn_strbuf *b, const struct group *g, const char *const *metrics, const bool *sig,
			 unsigned n)
{
	vn_strbuf_printf(b, "<div class=\"charts\">\n");
	for (unsigned i = 0; i < n; i++) {
		double *values[MAX_VARIANTS];
		unsigned count[MAX_VARIANTS];
		metric_values(g, metrics[i], values, count);
		_cleanup_free_ char *title = vn_xasprintf("%s%s", metrics[i], sig && sig[i] ? " (significant)" : "");
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

static void strips(struct vn_strbuf *b, const struct group *g)
{
	const char *metrics[VN_HTML_MAX_METRICS];
	bool sig[VN_HTML_MAX_METRICS] = {false};
	unsigned n;

	if (g->cmp) {
		const struct vn_compare_row *order[VN_HTML_MAX_METRICS];
		n = ordered_rows(g->cmp, order, VN_HTML_MAX_METRICS);
		for (unsigned i = 0; i < n; i++) {
			metrics[i] = order[i]->metric;
			sig[i] = order[i]->significant;
		}
	} else {
		n = metrics_by_spread(g, metrics, VN_HTML_MAX_METRICS);
	}
	vn_strbuf_printf(b, "<h2>Metrics: each variant's repeats</h2>\n");
	if (!n)
		vn_html_note(b, "No run recorded any metric.");
	else if (!g->cmp)
		vn_html_note(b, "No comparison (vnuma compare DIR --json makes one): the metrics whose variant means "
				"differ most come first.");
	strip_charts(b, g, metrics, sig, n);
}

/* Remote fractions shown in the group's locality section: the run's three, then lone steps'. */
#define MAX_LOC_METRICS 12

/* The run's or a lone step's remote fraction (docs/results.md): what a locality comparison is about. */
static bool remote_metric(const char *m)
{
	return m && strncmp(m, "locality.", 9) == 0 && strstr(m, ".remote_fraction.") && strlen(m) < 256;
}

/* The remote fractions the comparison (or else some run) holds, the run's first, each in the order first seen. */
static unsigned loc_metrics(const struct group *g, const char **out)
{
	_cleanup_free_ const char **seen = NULL;
	unsigned nseen = 0, n = 0;

	if (g->cmp) {
		seen = vn_xcalloc(g->cmp->nrows + 1, sizeof(*seen));
		for (size_t i = 0; i < g->cmp->nrows; i++)
			seen[nseen++] = g->cmp->rows[i].metric;
	} else {
		nseen = all_metrics(g, &seen);
	}
	for (int steps = 0; steps < 2; steps++)
		for (unsigned i = 0; i < nseen && n < MAX_LOC_METRICS; i++)
			if (remote_metric(seen[i]) && (strncmp(seen[i], "locality.step.", 14) == 0) == steps)
				out[n++] = seen[i];
	return n;
}

/* Where the variants' runs counted accesses: their remote fractions side by side, whatever their rank above. */
static void locality(struct vn_strbuf *b, const struct group *g)
{
	const char *metrics[MAX_LOC_METRICS];
	unsigned n = loc_metrics(g, metrics);

	if (!n)
		return;
	vn_strbuf_printf(b, "<h2 id=\"locality\">Locality: remote fraction per variant (the emulator's count)</h2>\n");
	if (g->cmp) {
		const struct vn_compare_row *rows[MAX_LOC_METRICS];
		for (unsigned i = 0; i < n; i++)
			rows[i] = find_row(g->cmp, metrics[i]);
		rows_table(b, g, "compare locality", rows, metrics, n);
	}
	strip_charts(b, g, metrics, NULL, n);
	vn_strbuf_printf(b, "<p class=\"note\">The share of the guest's memory accesses that reached "
			    "another node's memory, user, kernel and all (docs/locality.md); each variant's runs as "
			    "points.</p>\n");
}

int vn_html_group(struct vn_strbuf *b, const struct vn_html_group_in *in, struct vn_error *err)
{
	_cleanup_(group_clear) struct group g = {.cmp = in->cmp};
	int rc;

	if ((rc = load_group(&g, in, err)) < 0)
		return rc;
	load_runs(&g);
	_cleanup_free_ char *title = vn_xasprintf("vnuma: %s (group)", g.g.scenario ? g.g.scenario : g.src[0]);
	vn_html_page_begin(b, title);
	header(b, &g);
	vn_strbuf_printf(b, "<h2>Group assertions</h2>\n");
	vn_html_verdicts_run(b, g.g.verdicts, g.g.nverdicts);
	/* Before the whole table, which runs to hundreds of rows. */
	locality(b, &g);
	if (!g.cmp && in->cmp_why) {
		vn_strbuf_printf(b, "<h2>Comparison</h2>\n");
		vn_html_note(b, in->cmp_why);
	} else if (g.cmp) {
		compare_table(b, &g, in);
	}
	strips(b, &g);
	runs_table(b, &g);
	vn_html_page_end(b);
	return 0;
}
