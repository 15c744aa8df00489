/*
 * Judging a finished run: every assertion becomes a verdict with what was
 * seen and what was asked, or, where what it asks about could not be seen,
 * an infrastructure error saying why (run-priv.h).
 */
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "metrics/kv.h"
#include "scenario/run-priv.h"
#include "topology/fallback.h"
#include "util/alloc.h"
#include "util/cleanup.h"
#include "util/strbuf.h"

static void verdict(struct vn_report *rep, const struct vn_scn_assert *a, const char *fallback_name, bool pass,
		    const char *observed, const char *expected, const char *detail)
{
	vn_report_add(rep, a->name ? a->name : fallback_name, pass, observed, expected, detail);
}

/* What the assertion asks about was not observed: exit 3 with the reason, not a failed verdict. */
static int __attribute__((format(printf, 3, 4)))
unobserved(struct vn_error *err, const struct vn_scn_assert *a, const char *fmt, ...)
{
	char why[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(why, sizeof(why), fmt, ap);
	va_end(ap);
	return vn_infra_error(err, -ENODATA, "assertion \"%s\" could not be judged: %s", a->name ? a->name : "?", why);
}

static int step_index(const struct vn_run_data *d, const char *name)
{
	for (unsigned i = 0; i < d->s->nsteps; i++)
		if (strcmp(d->s->steps[i].name, name) == 0)
			return (int)i;
	return -1;
}

/*
 * 0 and the delta; 1 when neither snapshot has the counter: a kernel fact
 * (built without it, or it was renamed), judged. A counter in one snapshot
 * only is no kernel's doing: the set of counters is fixed at build time.
 */
static int counter_delta(const struct vn_run_data *d, const struct vn_scn_assert *as, const char *key, double *out,
			 struct vn_error *err)
{
	if (!d->vmstat_before || !d->vmstat_after)
		return unobserved(err, as, "no %s snapshot of /proc/vmstat", !d->vmstat_before ? "before" : "after");
	enum vn_counter_delta r = vn_metrics_counter_delta(d->vmstat_before, d->vmstat_after, key, out);
	if (r == VN_DELTA_NEITHER)
		return 1;
	if (r == VN_DELTA_BEFORE_ONLY || r == VN_DELTA_AFTER_ONLY)
		return unobserved(err, as, "counter %s is in the %s snapshot of /proc/vmstat only", key,
				  r == VN_DELTA_BEFORE_ONLY ? "before" : "after");
	if (r == VN_DELTA_NOT_INT)
		return unobserved(err, as, "counter %s of /proc/vmstat is not an integer in both snapshots", key);
	return 0;
}

/* "0: 0 1 2 3 | 1: 1 0 3 2 | ..." — one line, for tables and JUnit messages. */
static char *compact(const struct vn_fallback *f)
{
	struct vn_strbuf b = VN_STRBUF_INIT;

	for (unsigned n = 0; n < f->nnodes; n++) {
		if (!f->present[n])
			continue;
		vn_strbuf_printf(&b, "%s%u:", b.len ? " | " : "", n);
		vn_fallback_put_list(&b, f, n);
	}
	return vn_strbuf_steal(&b);
}

/* One build the model expects: the boot's, or a rebuild some hotplug made the kernel print. */
struct expected_build {
	char label[160];
	struct vn_fallback f;
};

static unsigned expected_builds(const struct vn_run_data *d, const struct vn_fallback_opts *o,
				struct expected_build *out, unsigned max)
{
	unsigned n = 1, k = 0;
	char sz[32];

	snprintf(out[0].label, sizeof(out[0].label), "boot");
	vn_fallback_compute(d->t, o, &out[0].f);
	for (unsigned i = 0; i < d->nhotplugs; i++) {
		const struct vn_run_hotplug *h = &d->hotplugs[i];
		for (unsigned j = 0; j < h->rebuilds && n < max; j++, n++) {
			_cleanup_free_ char *st = vn_fallback_state_format(d->t, &h->seen);
			if (h->what.memory)
				snprintf(out[n].label, sizeof(out[n].label),
					 "rebuild #%u (%s%s node %u in step %s; %s)", ++k, h->what.remove ? "-" : "+",
					 vn_size_format(h->what.memory, sz, sizeof(sz)), h->what.node,
					 d->s->steps[h->step].name, st);
			else
				snprintf(out[n].label, sizeof(out[n].label),
					 "rebuild #%u (+%u vCPUs node %u in step %s; %s)", ++k, h->what.cpus,
					 h->what.node, d->s->steps[h->step].name, st);
			vn_fallback_compute_state(d->t, o, &h->seen, &out[n].f);
		}
	}
	return n;
}

/*
 * The boot-time lists, and every list the kernel rebuilt at run time (memory
 * hotplug), against the model for the state each build saw. The guest's
 * dmesg is split into builds; each is compared with the one expected in its
 * place, and a difference names the build.
 */
static int check_fallback(const struct vn_run_data *d, const struct vn_scn_assert *a, struct vn_report *rep,
			  struct vn_error *err)
{
	struct vn_fallback_opts o = VN_FALLBACK_OPTS_DEFAULT;
	struct vn_fallback got[VN_FALLBACK_BUILDS_MAX];
	struct expected_build want[VN_FALLBACK_BUILDS_MAX];
	struct vn_error perr = {0};
	struct vn_strbuf diff = VN_STRBUF_INIT, expected = VN_STRBUF_INIT, observed = VN_STRBUF_INIT;
	unsigned ngot = 0;
	char name[128];

	snprintf(name, sizeof(name), "fallback order equals model %s", vn_fallback_model_name(a->model));
	o.model = a->model;
	unsigned nwant = expected_builds(d, &o, want, VN_FALLBACK_BUILDS_MAX);
	if (!d->dmesg)
		return unobserved(err, a, "the guest's dmesg was not collected");
	if (vn_fallback_parse_builds(d->dmesg, got, VN_FALLBACK_BUILDS_MAX, &ngot, &perr) < 0) {
		int rc = unobserved(err, a, "the guest's dmesg: %s", perr.msg);
		vn_error_clear(&perr);
		return rc;
	}
	/* A dmesg read whole without the lines: the kernel did not print them. */
	if (ngot == 0) {
		verdict(rep, a, name, false, "no 'Fallback order' lines in the guest's dmesg", "one line per node",
			NULL);
		return 0;
	}
	if (ngot != nwant)
		vn_strbuf_printf(&diff,
				 "the kernel printed %u build%s of its lists, the model expects %u (the boot's%s)\n",
				 ngot, ngot == 1 ? "" : "s", nwant,
				 nwant > 1 ? " and one for each hotplug that populated a zone" : "");
	for (unsigned i = 0; i < nwant && i < ngot && i < VN_FALLBACK_BUILDS_MAX; i++) {
		_cleanup_free_ char *dd = vn_fallback_diff(&want[i].f, &got[i]);
		_cleanup_free_ char *e = compact(&want[i].f), *g = compact(&got[i]);
		if (nwant > 1) {
			vn_strbuf_printf(&expected, "%s%s: %s", i ? "; " : "", i ? "rebuild" : "boot", e);
			vn_strbuf_printf(&observed, "%s%s: %s", i ? "; " : "", i ? "rebuild" : "boot", g);
		} else {
			vn_strbuf_printf(&expected, "%s", e);
			vn_strbuf_printf(&observed, "%s", g);
		}
		for (char *line = dd ? strtok(dd, "\n") : NULL; line; line = strtok(NULL, "\n"))
			vn_strbuf_printf(&diff, "%s: %s\n", want[i].label, line);
	}
	verdict(rep, a, name, !diff.len, observed.s ? observed.s : "", expected.s ? expected.s : "",
		diff.len ? diff.s : NULL);
	vn_strbuf_free(&diff);
	vn_strbuf_free(&expected);
	vn_strbuf_free(&observed);
	return 0;
}

static int check_distances(const struct vn_run_data *d, const struct vn_scn_assert *a, struct vn_report *rep,
			   struct vn_error *err)
{
	struct vn_strbuf diff = VN_STRBUF_INIT;

	for (unsigned i = 0; i < d->t->nnodes; i++)
		if (!d->distances[i])
			return unobserved(err, a, "node %u's distances were not collected", i);
	for (unsigned i = 0; i < d->t->nnodes; i++) {
		struct vn_strbuf want = VN_STRBUF_INIT;
		for (unsigned j = 0; j < d->t->nnodes; j++)
			vn_strbuf_printf(&want, "%s%u", j ? " " : "", d->t->distance[i][j]);
		const char *g = d->distances[i];
		if (strncmp(g, want.s, want.len) != 0 || (g[want.len] != '\n' && g[want.len] != '\0'))
			vn_strbuf_printf(&diff, "node %u: expected %s, guest %.*s\n", i, want.s, (int)strcspn(g, "\n"),
					 g);
		vn_strbuf_free(&want);
	}
	verdict(rep, a, "guest distances equal the topology", !diff.len, diff.len ? "differ" : "equal", "equal",
		diff.s);
	vn_strbuf_free(&diff);
	return 0;
}

static int check_counter(const struct vn_run_data *d, const struct vn_scn_assert *a, struct vn_report *rep,
			 struct vn_error *err)
{
	char name[256], obs[128], exp[128];
	double num = 0, den = 1;
	int rn = counter_delta(d, a, a->counter, &num, err);
	if (rn < 0)
		return rn;
	int rd = a->type == VN_ASSERT_RATIO ? counter_delta(d, a, a->denominator, &den, err) : 0;
	if (rd < 0)
		return rd;

	if (a->type == VN_ASSERT_RATIO)
		snprintf(name, sizeof(name), "delta %s / delta %s %s %g", a->counter, a->denominator,
			 vn_scn_op_name(a->op), a->value);
	else
		snprintf(name, sizeof(name), "delta %s %s %g", a->counter, vn_scn_op_name(a->op), a->value);
	snprintf(exp, sizeof(exp), "%s %g", vn_scn_op_name(a->op), a->value);
	if (rn || rd) {
		snprintf(obs, sizeof(obs), "counter %s not in /proc/vmstat", rn ? a->counter : a->denominator);
		verdict(rep, a, name, false, obs, exp, NULL);
		return 0;
	}
	if (a->type == VN_ASSERT_RATIO && den == 0) {
		snprintf(obs, sizeof(obs), "%s did not change (ratio undefined); %s changed by %.0f", a->denominator,
			 a->counter, num);
		verdict(rep, a, name, false, obs, exp, NULL);
		return 0;
	}
	double v = num / den;
	if (a->type == VN_ASSERT_RATIO)
		snprintf(obs, sizeof(obs), "%.4f (%.0f / %.0f)", v, num, den);
	else
		snprintf(obs, sizeof(obs), "%.0f", v);
	verdict(rep, a, name, vn_scn_op_eval(a->op, v, a->value), obs, exp, NULL);
	return 0;
}

/* Moved processes' memory on the node they were moved to, within the window after the move. */
static int check_follows(const struct vn_run_data *d, const struct vn_scn_assert *a, struct vn_report *rep,
			 struct vn_error *err)
{
	char name[256], obs[256], exp[128];
	int si = step_index(d, a->step);
	const struct vn_run_move *mv = NULL;

	snprintf(name, sizeof(name), "memory of %s follows its tasks: >= %.0f%% local within %g s", a->step,
		 100 * a->fraction, a->within_s);
	snprintf(exp, sizeof(exp), ">= %.2f within %g s", a->fraction, a->within_s);
	for (unsigned i = 0; i < d->nmoves; i++)
		if ((int)d->moves[i].step == si)
			mv = &d->moves[i];
	if (!mv)
		return unobserved(err, a, "step %s has no move", a->step);
	if (!mv->npids)
		return unobserved(err, a, "the move of step %s moved none of its processes", a->step);
	if (!d->samples.n)
		return unobserved(err, a, "samples.jsonl holds no sample");
	struct vn_strbuf series = VN_STRBUF_INIT;
	double best = NAN, reached = NAN;
	for (unsigned i = 0; i < d->samples.n; i++) {
		const struct vn_sample *s = &d->samples.v[i];
		double dt = s->uptime - mv->uptime;
		if (dt < 0)
			continue;
		double f = vn_samples_fraction_on_node(s, mv->pids, mv->npids, mv->to_node);
		if (isnan(f))
			continue;
		vn_strbuf_printf(&series, "t+%.1fs: %.3f on node %u\n", dt, f, mv->to_node);
		if (dt > a->within_s)
			continue;
		if (isnan(best) || f > best)
			best = f;
		if (isnan(reached) && f >= a->fraction)
			reached = dt;
	}
	if (isnan(best)) {
		vn_strbuf_free(&series);
		return unobserved(err, a, "no sample within %g s of the move saw the moved processes' memory",
				  a->within_s);
	}
	if (!isnan(reached))
		snprintf(obs, sizeof(obs), "%.3f on node %u after %.1f s (best %.3f)", a->fraction, mv->to_node,
			 reached, best);
	else
		snprintf(obs, sizeof(obs), "at most %.3f on node %u within %g s", best, mv->to_node, a->within_s);
	verdict(rep, a, name, !isnan(reached), obs, exp, series.s);
	vn_strbuf_free(&series);
	return 0;
}

static int check_running(const struct vn_run_data *d, const struct vn_scn_assert *a, struct vn_report *rep,
			 struct vn_error *err)
{
	double avg[VN_MAX_NODES] = {0};
	char name[256], obs[512] = "", exp[128];
	bool pass = true;
	unsigned n = d->t->nnodes < VN_MAX_NODES ? d->t->nnodes : VN_MAX_NODES;

	snprintf(name, sizeof(name), "running threads of %s per node <= node CPUs + %g", a->step, a->tolerance);
	snprintf(exp, sizeof(exp), "<= CPUs + %g on every node", a->tolerance);
	if (!d->samples.n)
		return unobserved(err, a, "samples.jsonl holds no sample");
	vn_samples_avg_running(&d->samples, avg, n);
	size_t used = 0;
	for (unsigned i = 0; i < n; i++) {
		bool ok = avg[i] <= d->t->nodes[i].ncpus + a->tolerance;
		pass &= ok;
		used += (size_t)snprintf(obs + used, used < sizeof(obs) ? sizeof(obs) - used : 0,
					 "%snode %u: %.2f/%u%s", i ? ", " : "", i, avg[i], d->t->nodes[i].ncpus,
					 ok ? "" : " (over)");
		if (used >= sizeof(obs))
			break;
	}
	verdict(rep, a, name, pass, obs, exp, NULL);
	return 0;
}

/* A dotted path ("kernels.triad.best_mbps") into a workload's result line. */
static bool json_path_number(json_object *o, const char *path, double *out)
{
	_cleanup_free_ char *copy = vn_xstrdup(path);
	char *save = NULL;

	for (char *k = strtok_r(copy, ".", &save); k; k = strtok_r(NULL, ".", &save)) {
		json_object *next;
		if (json_object_is_type(o, json_type_array)) {
			char *end;
			long idx = strtol(k, &end, 10);
			if (*end || idx < 0 || (size_t)idx >= json_object_array_length(o))
				return false;
			o = json_object_array_get_idx(o, (size_t)idx);
			continue;
		}
		if (!json_object_object_get_ex(o, k, &next))
			return false;
		o = next;
	}
	if (!json_object_is_type(o, json_type_double) && !json_object_is_type(o, json_type_int))
		return false;
	*out = json_object_get_double(o);
	return true;
}

/* A workload's result line is our program's output: one that is missing, or lacks the number, is not the kernel's. */
static int check_metric(const struct vn_run_data *d, const struct vn_scn_assert *a, struct vn_report *rep,
			struct vn_error *err)
{
	char name[256], exp[128];
	struct vn_strbuf obs = VN_STRBUF_INIT;
	int si = step_index(d, a->step);
	const struct vn_run_step_data *sd = si >= 0 ? &d->steps[si] : NULL;
	bool pass = true;

	if (!sd || (!sd->nresults && !sd->nmissing))
		return unobserved(err, a, "no result line from step %s", a->step);
	if (sd->nmissing)
		return unobserved(err, a, "step %s process %u ended without a JSON result line", a->step,
				  sd->missing_first);
	snprintf(name, sizeof(name), "%s %s %s %g", a->step, a->path, vn_scn_op_name(a->op), a->value);
	snprintf(exp, sizeof(exp), "%s %g in every process's result", vn_scn_op_name(a->op), a->value);
	for (unsigned i = 0; i < sd->nresults; i++) {
		double v;
		if (!json_path_number(sd->results[i], a->path, &v)) {
			vn_strbuf_free(&obs);
			return unobserved(err, a, "step %s process %u's result has no number at %s", a->step, i,
					  a->path);
		}
		pass &= vn_scn_op_eval(a->op, v, a->value);
		vn_strbuf_printf(&obs, "%s%g", i ? ", " : "", v);
	}
	verdict(rep, a, name, pass, obs.s, exp, NULL);
	vn_strbuf_free(&obs);
	return 0;
}

/* Where the step's memory was at the last sample that still saw its processes. */
static int check_on_node(const struct vn_run_data *d, const struct vn_scn_assert *a, struct vn_report *rep,
			 struct vn_error *err)
{
	char name[256], obs[256], exp[128];
	int si = step_index(d, a->step);
	const struct vn_run_step_data *sd = si >= 0 ? &d->steps[si] : NULL;
	double f = NAN;
	struct vn_strbuf detail = VN_STRBUF_INIT;

	snprintf(name, sizeof(name), ">= %.0f%% of %s's memory on node %u", 100 * a->fraction, a->step, a->node);
	snprintf(exp, sizeof(exp), ">= %.2f on node %u", a->fraction, a->node);
	if (!sd || !sd->npids)
		return unobserved(err, a, "the processes of step %s were not found", a->step);
	if (!d->samples.n)
		return unobserved(err, a, "samples.jsonl holds no sample");
	for (unsigned i = d->samples.n; i-- > 0;) {
		f = vn_samples_fraction_on_node(&d->samples.v[i], sd->pids, sd->npids, a->node);
		if (isnan(f))
			continue;
		const struct vn_sample *s = &d->samples.v[i];
		for (unsigned k = 0; k < sd->npids; k++) {
			const struct vn_sample_proc *p = vn_sample_proc_find(s, sd->pids[k]);
			if (!p)
				continue;
			vn_strbuf_printf(&detail, "pid %d:", p->pid);
			for (unsigned n = 0; n < s->nnodes; n++)
				if (p->mem_kb[n] > 0)
					vn_strbuf_printf(&detail, " node %u %.0f kB", n, p->mem_kb[n]);
			vn_strbuf_printf(&detail, "\n");
		}
		break;
	}
	if (isnan(f)) {
		vn_strbuf_free(&detail);
		return unobserved(err, a, "no sample saw the memory of step %s", a->step);
	}
	snprintf(obs, sizeof(obs), "%.3f on node %u", f, a->node);
	verdict(rep, a, name, f >= a->fraction, obs, exp, detail.s);
	vn_strbuf_free(&detail);
	return 0;
}

int vn_scenario_assert(const struct vn_run_data *d, struct vn_report *rep, struct vn_error *err)
{
	int rc = 0;

	for (unsigned i = 0; i < d->s->nasserts && rc == 0; i++) {
		const struct vn_scn_assert *a = &d->s->asserts[i];
		switch (a->type) {
		case VN_ASSERT_FALLBACK: rc = check_fallback(d, a, rep, err); break;
		case VN_ASSERT_DISTANCES: rc = check_distances(d, a, rep, err); break;
		case VN_ASSERT_COUNTER:
		case VN_ASSERT_RATIO: rc = check_counter(d, a, rep, err); break;
		case VN_ASSERT_MEMORY_FOLLOWS: rc = check_follows(d, a, rep, err); break;
		case VN_ASSERT_RUNNING_PER_NODE: rc = check_running(d, a, rep, err); break;
		case VN_ASSERT_METRIC: rc = check_metric(d, a, rep, err); break;
		case VN_ASSERT_MEMORY_ON_NODE: rc = check_on_node(d, a, rep, err); break;
		case VN_ASSERT_CHANGE: break; /* a group's, judged by the matrix against its base (matrix.c) */
		}
	}
	return rc;
}
