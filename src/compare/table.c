/* The rows: per metric and variant the statistics, the change against the base, and the order. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "compare/compare-priv.h"
#include "compare/stats.h"
#include "util/alloc.h"
#include "util/cleanup.h"

static int obs_cmp(const void *pa, const void *pb)
{
	const struct vn_compare_obs *a = pa, *b = pb;
	int d = strcmp(a->metric, b->metric);

	if (d)
		return d;
	return a->variant < b->variant ? -1 : a->variant > b->variant;
}

/* A percentage is compared in points: -1.3 of 12.02% sys, not -10.8%. */
static bool is_percentage(const char *metric)
{
	size_t n = strlen(metric);
	return (n >= 1 && metric[n - 1] == '%') || (n >= 4 && strcmp(metric + n - 4, "_pct") == 0);
}

/* The smallest change cell's noise and the base's would show (the base: against a copy of itself). */
static void cell_detect(const struct vn_compare_cell *base, struct vn_compare_cell *cell)
{
	struct vn_stats a = {.n = base->n, .mean = base->mean, .stddev = base->stddev};
	struct vn_stats b = {.n = cell->n, .mean = cell->mean, .stddev = cell->stddev};
	double d = vn_stats_detectable(&a, &b, VN_COMPARE_ALPHA, VN_COMPARE_POWER);

	if (!isfinite(d))
		return;
	cell->has_detect = true;
	cell->detect_abs = d;
	if (base->mean != 0 && isfinite(d / fabs(base->mean) * 100)) {
		cell->detect_pct_ok = true;
		cell->detect_pct = d / fabs(base->mean) * 100;
	}
}

static void cell_change(const struct vn_compare_cell *base, struct vn_compare_cell *cell)
{
	if (!base->n || !cell->n)
		return;
	cell->has_change = true;
	cell->change_abs = cell->mean - base->mean;
	/* From 0 to anything else has no percentage; 0 to 0 is no change. */
	if (base->mean != 0 || cell->change_abs == 0) {
		cell->has_pct = true;
		cell->change_pct = base->mean != 0 ? cell->change_abs / fabs(base->mean) * 100 : 0;
	}
	/* Past DBL_MAX (1e308 against -1e308, or a change from 1e-300): no figure, so nothing significant either. */
	if (!isfinite(cell->change_abs) || (cell->has_pct && !isfinite(cell->change_pct)))
		return;
	struct vn_stats a = {.n = base->n, .mean = base->mean, .stddev = base->stddev};
	struct vn_stats b = {.n = cell->n, .mean = cell->mean, .stddev = cell->stddev};
	struct vn_welch w;
	vn_stats_welch(&a, &b, &w);
	if (w.defined) {
		cell->has_p = true;
		cell->p_value = w.p;
		cell->significant = w.p < VN_COMPARE_ALPHA;
	}
}

static void row_finish(const struct vn_compare *c, struct vn_compare_row *row)
{
	const struct vn_compare_cell *base = &row->cells[0];

	row->absolute = is_percentage(row->metric);
	cell_detect(base, &row->cells[0]);
	for (size_t v = 1; v < c->nvariants; v++) {
		struct vn_compare_cell *cell = &row->cells[v];
		cell_detect(base, cell);
		cell_change(base, cell);
		row->significant |= cell->significant;
		/* A variant without a complete run has no say in what changed. */
		if (!c->variants[v].complete)
			continue;
		if (!base->n != !cell->n || (cell->has_change && cell->mean != base->mean))
			row->changed = true;
	}
}

/* How far the row moved: its largest change as the table shows it (a change from 0 is the largest). */
static double row_key(const struct vn_compare *c, const struct vn_compare_row *row)
{
	double k = 0;

	for (size_t v = 1; v < c->nvariants; v++) {
		const struct vn_compare_cell *cell = &row->cells[v];
		if (!cell->has_change)
			continue;
		double d = row->absolute ? fabs(cell->change_abs) : cell->has_pct ? fabs(cell->change_pct) : HUGE_VAL;
		k = fmax(k, d);
	}
	return k;
}

/* qsort has no context argument; the sort keys are computed first and sorted with the rows. */
struct keyed {
	double key;
	struct vn_compare_row row;
};

static int keyed_cmp(const void *pa, const void *pb)
{
	const struct keyed *a = pa, *b = pb;

	if (a->row.significant != b->row.significant)
		return a->row.significant ? -1 : 1;
	if (a->key != b->key)
		return a->key > b->key ? -1 : 1;
	return strcmp(a->row.metric, b->row.metric);
}

void vn_compare_rows_build(struct vn_compare *c, struct vn_compare_obs *obs, size_t nobs)
{
	_cleanup_free_ double *vals = vn_xreallocarray(NULL, nobs ? nobs : 1, sizeof(*vals));
	_cleanup_free_ struct keyed *k = NULL;
	size_t nrows = 0, cap = 0;

	/* A group whose runs are all incomplete has no observation, and qsort() wants an array even for none. */
	if (nobs)
		qsort(obs, nobs, sizeof(*obs), obs_cmp);
	for (size_t i = 0; i < nobs;) {
		size_t j = i;
		while (j < nobs && strcmp(obs[j].metric, obs[i].metric) == 0)
			j++;
		if (nrows == cap) {
			cap = cap ? 2 * cap : 64;
			k = vn_xreallocarray(k, cap, sizeof(*k));
		}
		struct vn_compare_row *row = &k[nrows++].row;
		*row = (struct vn_compare_row){.metric = steal_pointer(&obs[i].metric)};
		row->cells = vn_xcalloc(c->nvariants, sizeof(*row->cells));
		for (size_t a = i; a < j;) {
			size_t b = a, n = 0;
			for (; b < j && obs[b].variant == obs[a].variant; b++)
				vals[n++] = obs[b].value;
			struct vn_stats st;
			vn_stats_summarize(vals, n, &st);
			struct vn_compare_cell *cell = &row->cells[obs[a].variant];
			cell->n = (unsigned)st.n;
			cell->mean = st.mean;
			cell->stddev = st.stddev;
			a = b;
		}
		for (size_t a = i; a < j; a++)
			free(steal_pointer(&obs[a].metric));
		row_finish(c, row);
		i = j;
	}
	for (size_t i = 0; i < nrows; i++)
		k[i].key = row_key(c, &k[i].row);
	if (nrows)
		qsort(k, nrows, sizeof(*k), keyed_cmp);
	c->rows = vn_xreallocarray(NULL, nrows ? nrows : 1, sizeof(*c->rows));
	for (size_t i = 0; i < nrows; i++)
		c->rows[i] = k[i].row;
	c->nrows = nrows;
}

const struct vn_compare_cell *vn_compare_find(const struct vn_compare *c, const char *metric, const char *variant)
{
	size_t v = 0;

	while (v < c->nvariants && strcmp(c->variants[v].name, variant) != 0)
		v++;
	if (v == c->nvariants)
		return NULL;
	for (size_t i = 0; i < c->nrows; i++)
		if (strcmp(c->rows[i].metric, metric) == 0)
			return &c->rows[i].cells[v];
	return NULL;
}
