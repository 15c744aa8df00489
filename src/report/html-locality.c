/*
 * A run's locality figures on its page (docs/locality.md): the access matrix
 * as a heatmap beside the distance heatmap, and the remote fraction over time
 * beside memory per node. Both files are read as hostile: every number is
 * type-checked and bounded, every text escaped.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "report/html.h"
#include "report/html-priv.h"
#include "report/result.h"
#include "util/alloc.h"
#include "util/cleanup.h"
#include "util/json.h"

/* Above any uint64_t the runner can print: a count past it is not one. */
#define COUNT_MAX 1.8446744073709552e19

static const char *const modes[] = {"user", "kernel", "all"};

/* "DIGITS" of at most three, below VN_MAX_NODES, at *p; advances *p past it. */
static bool node_id(const char **p, unsigned *out)
{
	unsigned v = 0, k = 0;

	while (k < 4 && **p >= '0' && **p <= '9') {
		v = v * 10 + (unsigned)(**p - '0');
		(*p)++, k++;
	}
	*out = v;
	return k >= 1 && k <= 3 && v < VN_MAX_NODES;
}

/* A count: finite, from 0 to a uint64_t's top. */
static bool count_fits(double v)
{
	return isfinite(v) && v >= 0 && v < COUNT_MAX;
}

/* A count as JSON gives it: a number, integer or not. */
static bool count_ok(struct json_object *v, double *out)
{
	if (!json_object_is_type(v, json_type_int) && !json_object_is_type(v, json_type_double))
		return false;
	*out = json_object_get_double(v);
	return count_fits(*out);
}

/* The run's value of key (the last recorded, as result.json keeps it); NAN: none, or outside lo..hi. */
static double metric(const struct vn_result_run *r, const char *key, double lo, double hi)
{
	for (unsigned i = r->nmetrics; i-- > 0;)
		if (strcmp(r->metrics[i].name, key) == 0)
			return isfinite(r->metrics[i].value) && r->metrics[i].value >= lo && r->metrics[i].value <= hi
				       ? r->metrics[i].value
				       : NAN;
	return NAN;
}

/*
 * The steps' matrix from result.json's metrics, not summed from
 * samples.jsonl: the metrics cover exactly the steps' window (from the map's
 * proof to the last step's end), while the sample lines miss the tail after
 * the last one and any line dropped or cut off, and tell user from kernel
 * only in the run's totals.
 */
static void load_matrix(struct vn_html_loc *l, const struct vn_result_run *r)
{
	_cleanup_free_ double *all = vn_xcalloc((size_t)VN_MAX_NODES * VN_MAX_NODES, sizeof(double));
	_cleanup_free_ bool *have = vn_xcalloc((size_t)VN_MAX_NODES * VN_MAX_NODES, sizeof(bool));
	unsigned side = 0;

	for (unsigned k = 0; k < r->nmetrics; k++) {
		const char *p = r->metrics[k].name;
		double v = r->metrics[k].value;
		unsigned i, j;
		if (strncmp(p, "locality.", 9) == 0)
			l->on = true;
		if (strncmp(p, "locality.matrix.cpu", 19) != 0)
			continue;
		p += 19;
		if (!node_id(&p, &i) || strncmp(p, ".mem", 4) != 0)
			continue;
		p += 4;
		if (!node_id(&p, &j) || *p || !count_fits(v))
			continue;
		all[i * VN_MAX_NODES + j] = v;
		have[i * VN_MAX_NODES + j] = true;
		side = i + 1 > side ? i + 1 : side;
		side = j + 1 > side ? j + 1 : side;
	}
	if (!side)
		return;
	l->nnodes = side;
	l->matrix = vn_xcalloc((size_t)side * side, sizeof(double));
	for (unsigned i = 0; i < side; i++)
		for (unsigned j = 0; j < side; j++)
			l->matrix[i * side + j] = have[i * VN_MAX_NODES + j] ? all[i * VN_MAX_NODES + j] : NAN;
}

int vn_html_loc_line(const char *line, size_t n, double *m, unsigned *side)
{
	static const char head[] = "{\"host_t\":", key[] = ",\"locality\":";
	size_t at = sizeof(head) - 1;

	/*
	 * Only the runner's own head of the line, before the sampler's part: the
	 * guest writes the rest, and a "locality" key of its own there would win
	 * in a parser that keeps a duplicate key's last value.
	 */
	if (n < at || memcmp(line, head, at) != 0)
		return 0;
	while (at < n && at < 32 && line[at] && strchr("0123456789.-", line[at]))
		at++;
	if (n - at < sizeof(key) - 1 || memcmp(line + at, key, sizeof(key) - 1) != 0)
		return 0;
	at += sizeof(key) - 1;
	/*
	 * The runner's object holds no object and no string with a brace: it ends
	 * at the first '}', and the sampler's part follows after a comma. Strict
	 * parsing takes no trailing text, so it gets that much and no more.
	 */
	const char *end = memchr(line + at, '}', n - at);
	size_t len = end ? (size_t)(end - (line + at)) + 1 : 0;
	if (!end || at + len >= n || line[at + len] != ',' || len > (size_t)1 << 30)
		return -1;
	json_tokener *tok = json_tokener_new_ex(4);
	if (!tok)
		vn_oom();
	json_tokener_set_flags(tok, JSON_TOKENER_STRICT);
	_cleanup_json_ json_object *o = json_tokener_parse_ex(tok, line + at, (int)len);
	bool whole = json_tokener_get_error(tok) == json_tokener_success && json_tokener_get_parse_end(tok) == len;
	json_tokener_free(tok);
	struct json_object *rows = whole ? vn_json_member(o, "matrix", json_type_array) : NULL;
	size_t k = rows ? json_object_array_length(rows) : 0;
	if (!k || k > VN_MAX_NODES)
		return -1;
	for (size_t i = 0; i < k; i++) {
		struct json_object *r = json_object_array_get_idx(rows, i);
		if (!json_object_is_type(r, json_type_array) || json_object_array_length(r) != k)
			return -1;
		for (size_t j = 0; j < k; j++)
			if (!count_ok(json_object_array_get_idx(r, j), &m[i * k + j]))
				return -1;
	}
	*side = (unsigned)k;
	return 1;
}

/* remote / all over row i's cells (over every row when i == side); NAN without accesses. */
static double remote_share(const double *m, unsigned side, unsigned i)
{
	double all = 0, remote = 0;

	for (unsigned r = i < side ? i : 0; r < (i < side ? i + 1 : side); r++)
		for (unsigned j = 0; j < side; j++) {
			all += m[r * side + j];
			remote += r != j ? m[r * side + j] : 0;
		}
	return all > 0 ? remote / all : NAN;
}

/* The sample's time as the memory charts take it: the sampler's "t" of a line that parses. */
static bool sample_t(const char *line, size_t n, double *t)
{
	_cleanup_json_ json_object *o = n ? vn_html_parse_line(line, n) : NULL;

	return o && vn_json_has_finite(o, "t", t) && *t >= 0 && *t < 1e9;
}

/*
 * Every line's matrix is read (the runner's head is cheap to read), summed
 * until the next line the page draws, and that sum gives the point: so the
 * points cover every interval even when the page draws 300 of many more.
 */
static void load_series(struct vn_html_loc *l, const char *samples)
{
	unsigned total, side = 0;
	_cleanup_free_ char *picked = vn_html_pick_lines(samples, VN_HTML_MAX_POINTS, &total);
	_cleanup_free_ double *m = vn_xcalloc((size_t)VN_MAX_NODES * VN_MAX_NODES, sizeof(double));
	_cleanup_free_ double *sum = NULL;
	bool have = false;

	for (const char *p = samples, *q = picked; *p;) {
		size_t np = strcspn(p, "\n"), nq = strcspn(q, "\n");
		unsigned s = 0;
		int rc = vn_html_loc_line(p, np, m, &s);
		if (rc > 0 && !side) {
			side = s;
			sum = vn_xcalloc((size_t)side * side, sizeof(double));
			l->nrows = side <= VN_HTML_LOC_ROWS ? side : 0;
			l->t = vn_xcalloc(VN_HTML_MAX_POINTS, sizeof(double));
			l->all = vn_xcalloc(VN_HTML_MAX_POINTS, sizeof(double));
			for (unsigned i = 0; i < l->nrows; i++)
				l->row[i] = vn_xcalloc(VN_HTML_MAX_POINTS, sizeof(double));
		}
		if (rc < 0 || (rc > 0 && s != side)) {
			l->bad++;
		} else if (rc > 0) {
			l->lines++;
			have = true;
			for (size_t k = 0; k < (size_t)side * side; k++)
				sum[k] += m[k];
		}
		double t;
		if (have && l->npoints < VN_HTML_MAX_POINTS && sample_t(q, nq, &t)) {
			l->t[l->npoints] = t;
			l->all[l->npoints] = remote_share(sum, side, side);
			for (unsigned i = 0; i < l->nrows; i++)
				l->row[i][l->npoints] = remote_share(sum, side, i);
			l->npoints++;
			memset(sum, 0, (size_t)side * side * sizeof(double));
			have = false;
		}
		p += np + (p[np] == '\n');
		q += nq + (q[nq] == '\n');
	}
	l->on |= l->lines || l->bad;
}

void vn_html_loc_load(struct vn_html_loc *l, const struct vn_result_run *result, const char *samples, const char *proof)
{
	/* An incomplete run's result.json has no metrics: its page shows none either. */
	static const struct vn_result_run none = {0};
	const struct vn_result_run *r = result->complete ? result : &none;

	memset(l, 0, sizeof(*l));
	l->proof = proof;
	l->on = proof != NULL;
	l->error = result->error;
	for (unsigned k = 0; k < 3; k++) {
		char key[64];
		snprintf(key, sizeof(key), "locality.remote_fraction.%s", modes[k]);
		l->remote[k] = metric(r, key, 0, 1);
	}
	l->accesses = metric(r, "locality.accesses", 0, COUNT_MAX);
	l->outside = metric(r, "locality.accesses_outside", 0, COUNT_MAX);
	l->model_s = metric(r, "locality.model_s", 0, 1e12);
	load_matrix(l, r);
	if (samples)
		load_series(l, samples);
}

void vn_html_loc_clear(struct vn_html_loc *l)
{
	free(l->matrix);
	free(l->t);
	free(l->all);
	for (unsigned i = 0; i < VN_HTML_LOC_ROWS; i++)
		free(l->row[i]);
	memset(l, 0, sizeof(*l));
}

/* A count in at most four characters and a unit: 950, 9.5k, 95M, 1.2G. */
static void count_short(char *out, size_t size, double v)
{
	static const char units[] = "kMGTPE";
	unsigned u = 0;

	if (!isfinite(v)) {
		snprintf(out, size, "-");
		return;
	}
	if (v < 999.5) {
		snprintf(out, size, "%.0f", v);
		return;
	}
	v /= 1000;
	while (v >= 999.5 && u + 1 < sizeof(units) - 1) {
		v /= 1000;
		u++;
	}
	snprintf(out, size, v < 9.95 ? "%.1f%c" : "%.0f%c", v, units[u]);
}

struct loc_map {
	const struct vn_html_loc *l;
	const double *rowsum;
};

static void cell(struct vn_strbuf *b, const void *ctx, unsigned i, unsigned j, int x, int y, int px)
{
	const struct loc_map *lm = ctx;
	const double *rowsum = lm->rowsum;
	double v = lm->l->matrix[i * lm->l->nnodes + j], share = rowsum[i] > 0 ? v / rowsum[i] : NAN;
	char color[8], n[16];

	if (isfinite(share))
		vn_html_heat_color(share, color);
	else
		snprintf(color, sizeof(color), "#eeeeee");
	count_short(n, sizeof(n), v);
	/* Local cells outlined: the diagonal reads at a glance whatever the colours. */
	vn_strbuf_printf(b, "<rect x=\"%d\" y=\"%d\" width=\"%d\" height=\"%d\" fill=\"%s\" %s>", x, y, px, px, color,
			 i == j ? "stroke=\"#222\" stroke-width=\"3\" class=\"local\"" : "stroke=\"#fff\"");
	vn_strbuf_printf(b, "<title>CPUs of node %u to memory of node %u (%s): ", i, j, i == j ? "local" : "remote");
	if (isfinite(v))
		vn_strbuf_printf(b, "%.0f", v);
	else
		vn_strbuf_printf(b, "no count");
	vn_strbuf_printf(b, " accesses, ");
	vn_html_num(b, share * 100);
	vn_strbuf_printf(b, "%% of node %u's</title></rect>", i);
	const char *ink = share > 0.5 ? "#fff" : "#222";
	if (px >= 48) {
		vn_strbuf_printf(b, "<text x=\"%d\" y=\"%d\" text-anchor=\"middle\" style=\"fill:%s\">%s</text>",
				 x + px / 2, y + px / 2 - 3, ink, n);
		vn_strbuf_printf(b, "<text x=\"%d\" y=\"%d\" text-anchor=\"middle\" style=\"fill:%s\">", x + px / 2,
				 y + px / 2 + 11, ink);
	} else if (px >= 30) {
		vn_strbuf_printf(b, "<text x=\"%d\" y=\"%d\" text-anchor=\"middle\" style=\"fill:%s\">", x + px / 2,
				 y + px / 2 + 4, ink);
	} else {
		return;
	}
	if (isfinite(share))
		vn_strbuf_printf(b, "%.*f%%</text>", share < 0.1 ? 1 : 0, share * 100);
	else
		vn_strbuf_printf(b, "-</text>");
}

static void figures(struct vn_strbuf *b, const struct vn_html_loc *l)
{
	vn_strbuf_printf(b, "<p class=\"note\">Accesses by the steps, as the emulator counted them (result.json's "
			    "locality.matrix.cpuI.memJ): a row per CPU node, a column per memory node, each cell "
			    "its count and its share of the row (the colour); outlined: local.</p>\n");
	vn_strbuf_printf(b, "<table class=\"locality\"><tr><th>remote fraction</th><th>user</th><th>kernel</th>"
			    "<th>all</th></tr>\n<tr><th>over the steps</th>");
	for (unsigned k = 0; k < 3; k++) {
		vn_strbuf_printf(b, "<td class=\"n\">");
		vn_html_num(b, l->remote[k]);
		vn_strbuf_printf(b, "</td>");
	}
	char in[16], out[16];
	count_short(in, sizeof(in), l->accesses);
	count_short(out, sizeof(out), l->outside);
	vn_strbuf_printf(b,
			 "</tr></table>\n<p class=\"note\">%s accesses in the matrix, %s outside it (device, "
			 "unmapped, unplaced); modeled memory time ",
			 in, out);
	vn_html_num(b, l->model_s);
	vn_strbuf_printf(b, " s.</p>\n");
}

static void proof(struct vn_strbuf *b, const struct vn_html_loc *l)
{
	if (!l->proof)
		return;
	vn_strbuf_printf(b, "<details><summary>The address map's proof (locality-proof.txt)</summary><pre>");
	vn_html_text(b, l->proof);
	vn_strbuf_printf(b, "</pre></details>\n");
}

void vn_html_loc_heatmap(struct vn_strbuf *b, const struct vn_html_loc *l)
{
	unsigned n = l->nnodes;

	if (!n) {
		/* A proof that failed ends the run: its error says why, and no figure was given. */
		_cleanup_free_ char *why = vn_xasprintf("No locality figures in result.json%s%s", l->error ? ": " : ".",
							l->error ? l->error : "");
		vn_html_note(b, why);
		proof(b, l);
		return;
	}
	_cleanup_free_ double *rowsum = vn_xcalloc(n, sizeof(double));
	int px = n <= 4 ? 72 : n <= 8 ? 56 : 36;
	for (unsigned i = 0; i < n; i++)
		for (unsigned j = 0; j < n; j++)
			rowsum[i] += isfinite(l->matrix[i * n + j]) ? l->matrix[i * n + j] : 0;
	struct loc_map lm = {.l = l, .rowsum = rowsum};
	struct vn_html_heatmap h = {
		.n = n,
		.px = px,
		.corner = "CPU\\mem",
		.cell = cell,
		.ctx = &lm,
	};
	vn_html_heatmap(b, &h);
	figures(b, l);
	proof(b, l);
}

void vn_html_loc_chart(struct vn_strbuf *b, const struct vn_html_loc *l, bool fixed, double x0, double x1)
{
	struct vn_html_series s[1 + VN_HTML_LOC_ROWS];
	char names[VN_HTML_LOC_ROWS][32];

	if (!l->npoints)
		return;
	s[0] = (struct vn_html_series){.name = "all CPUs", .color = "#222", .y = l->all};
	for (unsigned i = 0; i < l->nrows; i++) {
		snprintf(names[i], sizeof(names[i]), "CPUs of node %u", i);
		s[1 + i] = (struct vn_html_series){.name = names[i], .color = vn_html_color(i), .y = l->row[i]};
	}
	struct vn_html_chart c = {
		.title = "remote fraction of accesses per sample (user and kernel)",
		.n = l->npoints,
		.x = l->t,
		.fixed_x = fixed,
		.xmin = x0,
		.xmax = x1,
		.xlabel = "t (s)",
		.nseries = 1 + l->nrows,
		.series = s,
	};
	vn_html_chart(b, &c);
}
