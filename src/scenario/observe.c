/*
 * What a finished run observed and records for compare (docs/results.md, "Metric
 * names"): counter deltas, the workloads' numbers and the assertions'
 * observations. Recorded, not judged: an assertion is what can fail.
 */
#include <errno.h>
#include <json-c/json.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "metrics/kv.h"
#include "scenario/run-priv.h"
#include "util/alloc.h"
#include "util/cleanup.h"

/* Guest numbers are bounded like everything else it sends: a workload printing thousands of fields is cut. */
#define STEP_METRICS_MAX 200
#define METRIC_NAME_MAX  160

static void deltas(struct vn_result_run *rep, const char *prefix, json_object *before, json_object *after)
{
	if (!json_object_is_type(after, json_type_object))
		return;
	json_object_object_foreach(after, key, v)
	{
		double delta;
		(void)v;
		if (strlen(key) > METRIC_NAME_MAX ||
		    vn_metrics_counter_delta(before, after, key, &delta) != VN_DELTA_OK)
			continue;
		_cleanup_free_ char *name = vn_xasprintf("%s%s", prefix, key);
		vn_result_metric(rep, name, delta);
	}
}

/* Sums of one step's numbers, by dotted path, over its processes (arrays are per-process detail: skipped). */
struct step_sums {
	unsigned n;
	char *name[STEP_METRICS_MAX];
	double sum[STEP_METRICS_MAX];
	unsigned count[STEP_METRICS_MAX];
};

static void walk(struct step_sums *s, const char *path, json_object *o)
{
	if (json_object_is_type(o, json_type_object)) {
		json_object_object_foreach(o, key, v)
		{
			if (strlen(path) + strlen(key) + 1 > METRIC_NAME_MAX)
				continue;
			_cleanup_free_ char *sub = vn_xasprintf("%s.%s", path, key);
			walk(s, sub, v);
		}
		return;
	}
	if (!json_object_is_type(o, json_type_int) && !json_object_is_type(o, json_type_double))
		return;
	unsigned i = 0;
	while (i < s->n && strcmp(s->name[i], path) != 0)
		i++;
	if (i == s->n) {
		if (s->n == STEP_METRICS_MAX)
			return;
		s->name[s->n++] = vn_xstrdup(path);
	}
	s->sum[i] += json_object_get_double(o);
	s->count[i]++;
}

static void step_metrics(struct vn_result_run *rep, const struct vn_scn_step *st, const struct vn_run_step_data *sd)
{
	struct step_sums *s = vn_xcalloc(1, sizeof(*s));

	for (unsigned p = 0; p < sd->nresults; p++)
		if (sd->results[p])
			walk(s, st->name, sd->results[p]);
	for (unsigned i = 0; i < s->n; i++) {
		/* The header's pid and version are not measurements. */
		/* A scalar result is named by its step alone, with no '.'. */
		const char *dot = strrchr(s->name[i], '.'), *leaf = dot ? dot + 1 : s->name[i];
		if (strcmp(leaf, "pid") != 0 && strcmp(leaf, "version") != 0)
			vn_result_metric(rep, s->name[i], s->sum[i] / s->count[i]);
		free(s->name[i]);
	}
	free(s);
}

/* Node n's counters in a snapshot, or why the run cannot be judged without them. */
static int node_counters(const struct vn_snapshot *s, unsigned n, enum vn_snap_nodefile file, json_object **out,
			 struct vn_error *err)
{
	const struct vn_snap_part *p = vn_snapshot_node_part(s, n, file);

	if (!p)
		return vn_infra_error(err, -ENODATA, "cannot read a snapshot the run took: %s has no node %u",
				      s->dir ? s->dir : "the snapshot", n);
	return vn_snapshot_counters(p, out, err);
}

/* One metric named by a prefix and a printf-style rest. */
static void __attribute__((format(printf, 4, 5)))
metric(struct vn_result_run *rep, double value, const char *prefix, const char *fmt, ...)
{
	char name[METRIC_NAME_MAX + 64];
	int n = snprintf(name, sizeof(name), "%s", prefix);
	va_list ap;

	if (n < 0 || (size_t)n >= sizeof(name))
		return;
	va_start(ap, fmt);
	vsnprintf(name + n, sizeof(name) - (size_t)n, fmt, ap);
	va_end(ap);
	vn_result_metric(rep, name, value);
}

/*
 * The shares of one set of counts (docs/locality.md, docs/results.md "Metric
 * names"): the run's under "locality.", each lone step's under
 * "locality.step.NAME.". The run's own counts sit between its accesses and
 * these in result.json, so the accesses are the callers'.
 */
static void locality_shares(const struct vn_run_data *d, struct vn_result_run *rep, const char *prefix,
			    const struct vn_loc_counts *c)
{
	static const char *const modes[] = {"user", "kernel", "all"};

	for (unsigned m = 0; m < 3; m++)
		metric(rep, vn_loc_remote_fraction(c, (enum vn_loc_mode)m), prefix, "remote_fraction.%s", modes[m]);
	metric(rep, vn_loc_model_s(c, d->loc_lat_ns), prefix, "model_s");
	/* Per memory tier of the model: what placement on it cost (docs/locality.md, "By tier"). */
	struct vn_loc_group g[VN_MAX_NODES];
	uint64_t all = vn_loc_sum(c, VN_LOC_ALL, NULL);
	vn_loc_by_group(c, d->loc_lat_ns, d->loc_tier_of, d->loc_ntiers, g, NULL);
	for (unsigned i = 0; i < d->loc_ntiers; i++) {
		metric(rep, (double)g[i].accesses, prefix, "memory_tier%d.accesses", d->loc_tier_id[i]);
		metric(rep, all ? (double)g[i].accesses / (double)all : NAN, prefix, "memory_tier%d.share",
		       d->loc_tier_id[i]);
		metric(rep, g[i].model_s, prefix, "memory_tier%d.model_s", d->loc_tier_id[i]);
	}
	/* Per CPU node, user only: a workload placed on a node is judged by its own CPUs' accesses. */
	for (unsigned n = 0; n < c->nnodes; n++)
		metric(rep, vn_loc_remote_fraction_row(c, VN_LOC_USER, n), prefix, "cpu%u.remote_fraction.user", n);
}

static void locality_metrics(const struct vn_run_data *d, struct vn_result_run *rep)
{
	const struct vn_loc_counts *c = &d->loc;
	uint64_t outside = 0;

	for (unsigned i = 0; d->loc_steps && i < d->s->nsteps; i++) {
		if (!d->loc_steps[i].ram)
			continue;
		_cleanup_free_ char *prefix = vn_xasprintf("locality.step.%s.", d->s->steps[i].name);
		metric(rep, (double)vn_loc_sum(&d->loc_steps[i], VN_LOC_ALL, NULL), prefix, "accesses");
		locality_shares(d, rep, prefix, &d->loc_steps[i]);
	}
	for (unsigned k = 0; k < VN_LOC_NKINDS; k++)
		outside += c->unmapped[k] + c->io[k] + c->unplaced[k];
	vn_result_metric(rep, "locality.accesses", (double)vn_loc_sum(c, VN_LOC_ALL, NULL));
	vn_result_metric(rep, "locality.accesses_outside", (double)outside);
	/* Hot-plugged DIMMs: proven and in the map, or unmapped (locality-proof.txt says why). */
	vn_result_metric(rep, "locality.dimms_counted", (double)d->loc_dimms_counted);
	vn_result_metric(rep, "locality.dimms_unmapped", (double)d->loc_dimms_unmapped);
	locality_shares(d, rep, "locality.", c);
	for (unsigned i = 0; i < c->nnodes; i++)
		for (unsigned j = 0; j < c->nnodes; j++) {
			uint64_t s = 0;
			for (unsigned k = 0; k < VN_LOC_NKINDS; k++)
				s += *vn_loc_at(c, i, j, k);
			metric(rep, (double)s, "locality.", "matrix.cpu%u.mem%u", i, j);
		}
}

int vn_run_metrics(const struct vn_run_data *d, struct vn_result_run *rep, struct vn_error *err)
{
	if (d->loc_have)
		locality_metrics(d, rep);
	deltas(rep, "vmstat.", d->vmstat_before, d->vmstat_after);
	for (unsigned n = 0; n < d->t->nnodes; n++) {
		char prefix[48];
		json_object *b, *a;
		int rc;
		snprintf(prefix, sizeof(prefix), "numastat.node%u.", n);
		/* A metric missing from one run would make compare judge a group on the runs that have it. */
		if ((rc = node_counters(&d->before, n, VN_SNAP_NUMASTAT, &b, err)) < 0 ||
		    (rc = node_counters(&d->after, n, VN_SNAP_NUMASTAT, &a, err)) < 0)
			return rc;
		deltas(rep, prefix, b, a);
	}
	for (unsigned i = 0; i < d->s->nsteps; i++)
		step_metrics(rep, &d->s->steps[i], &d->steps[i]);
	for (unsigned i = 0; i < rep->nverdicts; i++) {
		const struct vn_verdict *v = &rep->verdicts[i];
		/* The number the judge saw, as it saw it; the observed text is for people. */
		if (v->kind == VN_OBSERVED_NONE || !isfinite(v->value) || strlen(v->name) > METRIC_NAME_MAX)
			continue;
		_cleanup_free_ char *name = vn_xasprintf("assert.%s", v->name);
		/* An assertion's name is prose ("counter numa_pages_migrated > 0"); a metric's is one printable word. */
		for (char *p = name; *p; p++)
			if (*p <= ' ' || *p > '~')
				*p = '_';
		vn_result_metric(rep, name, v->value);
	}
	return 0;
}
