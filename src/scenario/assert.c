/*
 * The assertion types, each whole in one place: how its JSON reads and
 * writes, what it checks before a boot, its default name, and how a
 * finished run is judged: a verdict with what was seen (as text, and as a
 * number where it is one) and what was asked, or, where what it asks about
 * could not be seen, an infrastructure error saying why (run-priv.h).
 * vn_assert_types at the end is the one table of them.
 */
#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "metrics/kv.h"
#include "scenario/assert-tiers.h"
#include "scenario/run-priv.h"
#include "scenario/schema-priv.h"
#include "topology/arch.h"
#include "topology/fallback.h"
#include "topology/tiers.h"
#include "util/alloc.h"
#include "util/cleanup.h"
#include "util/json.h"
#include "util/strbuf.h"

/* number: the observation as its type's kind of number (vn_assert_types), NaN where there is none. */
static void verdict(struct vn_result_run *rep, const struct vn_scn_assert *a, bool pass, double number,
		    const char *observed, const char *expected, const char *detail)
{
	vn_result_add_observed(rep, a->name, pass, observed, expected, detail, vn_assert_types[a->type].observed,
			       number);
}

static void put_str(struct json_object *o, const char *key, const char *v)
{
	json_object_object_add(o, key, json_object_new_string(v));
}

static void put_num(struct json_object *o, const char *key, double v)
{
	json_object_object_add(o, key, vn_scn_json_num(v));
}

static void emit_op(struct json_object *o, const struct vn_scn_assert *a)
{
	put_str(o, "op", vn_scn_op_name(a->op));
	put_num(o, "value", a->value);
}

static int parse_op_value(struct vn_scn_ctx *c, struct json_object *v, const char *p, struct vn_scn_assert *a)
{
	int r = vn_scn_parse_op(c, v, p, &a->op);
	return r < 0 ? r : vn_json_get_num(&c->r, v, p, "value", true, VN_JSON_FINITE, &a->value);
}

/* Most types name no node. */
static int validate_none(const struct vn_scn_assert *a, const struct vn_topology *t, const char *topo, const char *file,
			 const char *p, struct vn_error *err)
{
	(void)a, (void)t, (void)topo, (void)file, (void)p, (void)err;
	return 0;
}

/*
 * An assertion no kernel can fail checks nothing. /proc/vmstat's event
 * counters (all but the nr_* gauges) only grow, so their change (or a ratio
 * of two) is never negative: ">= 0" or "> -1" holds for every kernel. Such
 * a value belongs in the metrics, which every run records (vmstat.KEY).
 */
static int can_fail(struct vn_scn_ctx *c, const char *p, const struct vn_scn_assert *a, const char *counter)
{
	bool never_negative = strncmp(counter, "nr_", 3) != 0;

	if (never_negative && ((a->op == VN_OP_GE && a->value <= 0) || (a->op == VN_OP_GT && a->value < 0)))
		return vn_json_bad(&c->r, p,
				   "%s %s %g holds for every kernel (an event counter's change is never negative), "
				   "so it cannot fail: compare records it anyway as vmstat.%s",
				   a->counter, vn_scn_op_name(a->op), a->value, a->counter);
	return 0;
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

static int parse_fallback(struct vn_scn_ctx *c, struct json_object *v, const char *p, struct vn_scn_assert *a)
{
	_cleanup_free_ char *model = NULL;
	char kp[VN_JSON_PATH_MAX];
	struct vn_error e = {0};
	int r;

	a->model = VN_FALLBACK_DEFAULT;
	if ((r = vn_json_get_str(&c->r, v, p, "model", 0, &model)) < 0)
		return r;
	if (model && vn_fallback_model_lookup(model, &a->model, &e) < 0) {
		r = vn_json_bad(&c->r, vn_json_path_key(kp, p, "model"), "%s", e.msg);
		vn_error_clear(&e);
		return r;
	}
	return 0;
}

static void emit_fallback(struct json_object *o, const struct vn_scn_assert *a)
{
	put_str(o, "model", vn_fallback_model_name(a->model));
}

static char *name_fallback(const struct vn_scn_assert *a)
{
	return vn_xasprintf("fallback order matches model %s", vn_fallback_model_name(a->model));
}

/*
 * The boot-time lists, and every list the kernel rebuilt at run time (memory
 * hotplug), against the model for the state each build saw. The guest's
 * dmesg is split into builds; each is compared with the one expected in its
 * place, and a difference names the build.
 */
static int check_fallback(const struct vn_run_data *d, const struct vn_scn_assert *a, struct vn_result_run *rep,
			  struct vn_error *err)
{
	struct vn_fallback_opts o = VN_FALLBACK_OPTS_DEFAULT;
	struct vn_fallback got[VN_FALLBACK_BUILDS_MAX];
	struct expected_build want[VN_FALLBACK_BUILDS_MAX];
	struct vn_error perr = {0};
	struct vn_strbuf diff = VN_STRBUF_INIT, expected = VN_STRBUF_INIT, observed = VN_STRBUF_INIT;
	unsigned ngot = 0;

	o.model = a->model;
	/* The scenario's arch was checked when it was read; the host's when it has none. */
	enum vn_arch arch = vn_arch_host();
	struct vn_error aerr = {0};
	if (d->s->arch && vn_arch_parse(d->s->arch, "$.arch", &arch, &aerr) < 0)
		vn_error_clear(&aerr);
	vn_topology_arch_fallback(arch, &o);
	unsigned nwant = expected_builds(d, &o, want, VN_FALLBACK_BUILDS_MAX);
	if (!d->dmesg)
		return unobserved(err, a, "the guest's dmesg was not collected");
	if (vn_fallback_parse_builds(d->dmesg, got, VN_FALLBACK_BUILDS_MAX, &ngot, &perr) < 0) {
		int rc = unobserved(err, a, "the guest's dmesg: %s", perr.msg);
		vn_error_clear(&perr);
		return rc;
	}
	/* A tiered boot's kmem builds (topology/tiers-builds.c); with hotplug steps too, not modelled together. */
	if (ngot && vn_topology_has_slow_memory(d->t) && !d->nhotplugs) {
		_cleanup_free_ char *td = NULL;
		if (vn_tiers_fallback_check(d->dmesg, d->t, &o, &td, &perr) < 0) {
			int rc = unobserved(err, a, "the guest's dmesg: %s", perr.msg);
			vn_error_clear(&perr);
			return rc;
		}
		_cleanup_free_ char *g = compact(&got[ngot - 1]);
		verdict(rep, a, !td, NAN, g,
			"each build as the model's: the boot's, then two per slow node kmem onlines", td);
		return 0;
	}
	/* A dmesg read whole without the lines: the kernel did not print them. */
	if (ngot == 0) {
		verdict(rep, a, false, NAN, "no 'Fallback order' lines in the guest's dmesg", "one line per node",
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
	verdict(rep, a, !diff.len, NAN, observed.s ? observed.s : "", expected.s ? expected.s : "",
		diff.len ? diff.s : NULL);
	vn_strbuf_free(&diff);
	vn_strbuf_free(&expected);
	vn_strbuf_free(&observed);
	return 0;
}

/* For a type that takes no keys of its own. */
static int parse_none(struct vn_scn_ctx *c, struct json_object *v, const char *p, struct vn_scn_assert *a)
{
	(void)c, (void)v, (void)p, (void)a;
	return 0;
}

static void emit_none(struct json_object *o, const struct vn_scn_assert *a)
{
	(void)o, (void)a;
}

static char *name_distances(const struct vn_scn_assert *a)
{
	(void)a;
	return vn_xstrdup("guest distances match the topology");
}

static int check_distances(const struct vn_run_data *d, const struct vn_scn_assert *a, struct vn_result_run *rep,
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
		char shown[96];
		if (strncmp(g, want.s, want.len) != 0 || (g[want.len] != '\n' && g[want.len] != '\0'))
			vn_strbuf_printf(&diff, "node %u: expected %s, guest %s\n", i, want.s,
					 vn_excerpt(g, strcspn(g, "\n"), 80, shown));
		vn_strbuf_free(&want);
	}
	verdict(rep, a, !diff.len, NAN, diff.len ? "differ" : "equal", "equal", diff.s);
	vn_strbuf_free(&diff);
	return 0;
}

static int parse_counter(struct vn_scn_ctx *c, struct json_object *v, const char *p, struct vn_scn_assert *a)
{
	int r;

	if ((r = vn_scn_counter_name(c, v, p, "counter", &a->counter)) < 0 || (r = parse_op_value(c, v, p, a)) < 0)
		return r;
	return can_fail(c, p, a, a->counter);
}

static void emit_counter(struct json_object *o, const struct vn_scn_assert *a)
{
	put_str(o, "counter", a->counter);
	emit_op(o, a);
}

static char *name_counter(const struct vn_scn_assert *a)
{
	return vn_xasprintf("counter %s %s %g", a->counter, vn_scn_op_name(a->op), a->value);
}

static int parse_ratio(struct vn_scn_ctx *c, struct json_object *v, const char *p, struct vn_scn_assert *a)
{
	int r;

	if ((r = vn_scn_counter_name(c, v, p, "numerator", &a->counter)) < 0 ||
	    (r = vn_scn_counter_name(c, v, p, "denominator", &a->denominator)) < 0 ||
	    (r = parse_op_value(c, v, p, a)) < 0)
		return r;
	return can_fail(c, p, a, strncmp(a->denominator, "nr_", 3) ? a->counter : a->denominator);
}

static void emit_ratio(struct json_object *o, const struct vn_scn_assert *a)
{
	put_str(o, "numerator", a->counter);
	put_str(o, "denominator", a->denominator);
	emit_op(o, a);
}

static char *name_ratio(const struct vn_scn_assert *a)
{
	return vn_xasprintf("ratio %s / %s %s %g", a->counter, a->denominator, vn_scn_op_name(a->op), a->value);
}

static int check_counter(const struct vn_run_data *d, const struct vn_scn_assert *a, struct vn_result_run *rep,
			 struct vn_error *err)
{
	char obs[128], exp[128];
	double num = 0, den = 1;
	int rn = counter_delta(d, a, a->counter, &num, err);
	if (rn < 0)
		return rn;
	int rd = a->type == VN_ASSERT_RATIO ? counter_delta(d, a, a->denominator, &den, err) : 0;
	if (rd < 0)
		return rd;

	snprintf(exp, sizeof(exp), "%s %g", vn_scn_op_name(a->op), a->value);
	if (rn || rd) {
		snprintf(obs, sizeof(obs), "counter %s not in /proc/vmstat", rn ? a->counter : a->denominator);
		verdict(rep, a, false, NAN, obs, exp, NULL);
		return 0;
	}
	if (a->type == VN_ASSERT_RATIO && den == 0) {
		snprintf(obs, sizeof(obs), "%s did not change (ratio undefined); %s changed by %.0f", a->denominator,
			 a->counter, num);
		verdict(rep, a, false, NAN, obs, exp, NULL);
		return 0;
	}
	double v = num / den;
	if (a->type == VN_ASSERT_RATIO)
		snprintf(obs, sizeof(obs), "%.4f (%.0f / %.0f)", v, num, den);
	else
		snprintf(obs, sizeof(obs), "%.0f", v);
	verdict(rep, a, vn_scn_op_eval(a->op, v, a->value), v, obs, exp, NULL);
	return 0;
}

static int parse_follows(struct vn_scn_ctx *c, struct json_object *v, const char *p, struct vn_scn_assert *a)
{
	int r;

	if ((r = vn_scn_step_ref(c, v, p, &a->step)) < 0 ||
	    (r = vn_json_get_num(&c->r, v, p, "fraction", true, VN_JSON_FRACTION, &a->fraction)) < 0)
		return r;
	return vn_json_get_num(&c->r, v, p, "within_s", true, VN_JSON_POSITIVE, &a->within_s);
}

static void emit_follows(struct json_object *o, const struct vn_scn_assert *a)
{
	put_str(o, "step", a->step);
	put_num(o, "fraction", a->fraction);
	put_num(o, "within_s", a->within_s);
}

static char *name_follows(const struct vn_scn_assert *a)
{
	return vn_xasprintf("memory of %s follows its CPUs: >= %g within %g s", a->step, a->fraction, a->within_s);
}

/* Moved processes' memory on the node they were moved to, within the window after the move. */
static int check_follows(const struct vn_run_data *d, const struct vn_scn_assert *a, struct vn_result_run *rep,
			 struct vn_error *err)
{
	char obs[256], exp[128];
	int si = step_index(d, a->step);
	const struct vn_run_move *mv = NULL;

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
	/* reached: the first sample at or above the fraction, its time after the move and what it saw. */
	double best = NAN, reached = NAN, at_reached = NAN;
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
		if (isnan(reached) && f >= a->fraction) {
			reached = dt;
			at_reached = f;
		}
	}
	if (isnan(best)) {
		vn_strbuf_free(&series);
		return unobserved(err, a, "no sample within %g s of the move saw the moved processes' memory",
				  a->within_s);
	}
	if (!isnan(reached))
		snprintf(obs, sizeof(obs), "%.3f on node %u after %.1f s (best %.3f within %g s)", at_reached,
			 mv->to_node, reached, best, a->within_s);
	else
		snprintf(obs, sizeof(obs), "at most %.3f on node %u within %g s", best, mv->to_node, a->within_s);
	verdict(rep, a, !isnan(reached), NAN, obs, exp, series.s);
	vn_strbuf_free(&series);
	return 0;
}

static int parse_running(struct vn_scn_ctx *c, struct json_object *v, const char *p, struct vn_scn_assert *a)
{
	int r = vn_scn_step_ref(c, v, p, &a->step);
	return r < 0 ? r : vn_json_get_num(&c->r, v, p, "tolerance", false, VN_JSON_NONNEG, &a->tolerance);
}

static void emit_running(struct json_object *o, const struct vn_scn_assert *a)
{
	put_str(o, "step", a->step);
	put_num(o, "tolerance", a->tolerance);
}

static char *name_running(const struct vn_scn_assert *a)
{
	return vn_xasprintf("running threads of %s per node <= node CPUs + %g", a->step, a->tolerance);
}

static int check_running(const struct vn_run_data *d, const struct vn_scn_assert *a, struct vn_result_run *rep,
			 struct vn_error *err)
{
	double avg[VN_MAX_NODES] = {0};
	char obs[512] = "", exp[128];
	bool pass = true;
	unsigned n = d->t->nnodes < VN_MAX_NODES ? d->t->nnodes : VN_MAX_NODES;

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
	verdict(rep, a, pass, NAN, obs, exp, NULL);
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

static int parse_metric(struct vn_scn_ctx *c, struct json_object *v, const char *p, struct vn_scn_assert *a)
{
	char kp[VN_JSON_PATH_MAX];
	int r;

	if ((r = vn_scn_step_ref(c, v, p, &a->step)) < 0 ||
	    (r = vn_json_get_str(&c->r, v, p, "path", VN_JSON_REQUIRED | VN_JSON_NONEMPTY, &a->path)) < 0)
		return r;
	for (const char *q = a->path, *seg = q;; q++) {
		if (*q == '.' || !*q) {
			if (q == seg)
				return vn_json_expected(
					&c->r, vn_json_path_key(kp, p, "path"),
					"a dotted path into the step's result, like kernels.triad.best_mbps",
					vn_json_get(v, "path"));
			if (!*q)
				break;
			seg = q + 1;
		} else if (!isalnum((unsigned char)*q) && *q != '_' && *q != '-') {
			return vn_json_expected(&c->r, vn_json_path_key(kp, p, "path"),
						"a dotted path into the step's result, like kernels.triad.best_mbps",
						vn_json_get(v, "path"));
		}
	}
	return parse_op_value(c, v, p, a);
}

static void emit_metric(struct json_object *o, const struct vn_scn_assert *a)
{
	put_str(o, "step", a->step);
	put_str(o, "path", a->path);
	emit_op(o, a);
}

static char *name_metric(const struct vn_scn_assert *a)
{
	return vn_xasprintf("metric %s %s %s %g", a->step, a->path, vn_scn_op_name(a->op), a->value);
}

/* A workload's result line is our program's output: one that is missing, or lacks the number, is not the kernel's. */
static int check_metric(const struct vn_run_data *d, const struct vn_scn_assert *a, struct vn_result_run *rep,
			struct vn_error *err)
{
	char exp[128];
	struct vn_strbuf obs = VN_STRBUF_INIT;
	int si = step_index(d, a->step);
	const struct vn_run_step_data *sd = si >= 0 ? &d->steps[si] : NULL;
	bool pass = true;
	double one = NAN;

	if (!sd || (!sd->nresults && !sd->nmissing))
		return unobserved(err, a, "no result line from step %s", a->step);
	if (sd->nmissing)
		return unobserved(err, a, "step %s process %u ended without a JSON result line", a->step,
				  sd->missing_first);
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
		one = v;
	}
	/* One process's number is the step's; of several, each is what the text lists. */
	verdict(rep, a, pass, sd->nresults == 1 ? one : NAN, obs.s, exp, NULL);
	vn_strbuf_free(&obs);
	return 0;
}

static int parse_on_node(struct vn_scn_ctx *c, struct json_object *v, const char *p, struct vn_scn_assert *a)
{
	int r;

	if ((r = vn_scn_step_ref(c, v, p, &a->step)) < 0 ||
	    (r = vn_json_get_uint(&c->r, v, p, "node", true, 0, VN_MAX_NODES - 1, VN_SCN_NODE_WHAT, &a->node)) < 0)
		return r;
	return vn_json_get_num(&c->r, v, p, "fraction", true, VN_JSON_FRACTION, &a->fraction);
}

static void emit_on_node(struct json_object *o, const struct vn_scn_assert *a)
{
	put_str(o, "step", a->step);
	json_object_object_add(o, "node", json_object_new_int64(a->node));
	put_num(o, "fraction", a->fraction);
}

static int validate_on_node(const struct vn_scn_assert *a, const struct vn_topology *t, const char *topo,
			    const char *file, const char *p, struct vn_error *err)
{
	char np[VN_JSON_PATH_MAX];
	return vn_scn_node_ok(file, t, topo, vn_json_path_key(np, p, "node"), a->node, false, err);
}

static char *name_on_node(const struct vn_scn_assert *a)
{
	return vn_xasprintf("memory of %s on node %u >= %g", a->step, a->node, a->fraction);
}

/* Where the step's memory was at the last sample that still saw its processes. */
static int check_on_node(const struct vn_run_data *d, const struct vn_scn_assert *a, struct vn_result_run *rep,
			 struct vn_error *err)
{
	char obs[256], exp[128];
	int si = step_index(d, a->step);
	const struct vn_run_step_data *sd = si >= 0 ? &d->steps[si] : NULL;
	double f = NAN;
	struct vn_strbuf detail = VN_STRBUF_INIT;

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
	verdict(rep, a, f >= a->fraction, NAN, obs, exp, detail.s);
	vn_strbuf_free(&detail);
	return 0;
}

static int parse_change(struct vn_scn_ctx *c, struct json_object *v, const char *p, struct vn_scn_assert *a)
{
	struct json_object *sg = vn_json_get(v, "significant");
	char kp[VN_JSON_PATH_MAX];
	int r;

	if ((r = vn_json_get_str(&c->r, v, p, "metric", VN_JSON_REQUIRED | VN_JSON_NONEMPTY, &a->metric)) < 0 ||
	    (r = vn_json_get_str(&c->r, v, p, "variant", VN_JSON_NAME, &a->variant)) < 0 ||
	    (r = parse_op_value(c, v, p, a)) < 0)
		return r;
	if (sg && !json_object_is_type(sg, json_type_boolean))
		return vn_json_expected(&c->r, vn_json_path_key(kp, p, "significant"), "true or false", sg);
	a->significant = sg && json_object_get_boolean(sg);
	/* The variants come before the assertions in a scenario's parse. */
	const struct vn_scenario *s = c->s;
	if (a->variant && s->nvariants) {
		unsigned k = 0;
		while (k < s->nvariants && strcmp(s->variants[k].name, a->variant) != 0)
			k++;
		if (k == s->nvariants || k == 0)
			return vn_json_bad(&c->r, vn_json_path_key(kp, p, "variant"),
					   k ? "\"%s\" is not one of $.variants"
					     : "\"%s\" is the base: it is what the others are compared with",
					   a->variant);
	}
	return 0;
}

static void emit_change(struct json_object *o, const struct vn_scn_assert *a)
{
	put_str(o, "metric", a->metric);
	if (a->variant)
		put_str(o, "variant", a->variant);
	json_object_object_add(o, "significant", json_object_new_boolean(a->significant));
	emit_op(o, a);
}

static char *name_change(const struct vn_scn_assert *a)
{
	return vn_xasprintf("%%change of %s against the base %s %g", a->metric, vn_scn_op_name(a->op), a->value);
}

/* A group's, judged by the matrix against its base variant (matrix.c), not by one run. */
static int check_change(const struct vn_run_data *d, const struct vn_scn_assert *a, struct vn_result_run *rep,
			struct vn_error *err)
{
	(void)d, (void)a, (void)rep, (void)err;
	return 0;
}

/* The one table of assertion types, indexed by enum vn_scn_assert_type. */
/* What a locality assertion can judge: the metrics of the same names, locality.MEASURE (observe.c). */
static const char *const locality_measures[] = {"remote_fraction.user", "remote_fraction.kernel", "remote_fraction.all",
						"model_s", NULL};

static int parse_locality(struct vn_scn_ctx *c, struct json_object *v, const char *p, struct vn_scn_assert *a)
{
	char kp[VN_JSON_PATH_MAX];
	struct json_object *m = vn_json_get(v, "measure");
	int r;

	if (!m)
		return vn_json_missing(&c->r, p, "measure");
	if ((r = vn_json_one_of(&c->r, m, vn_json_path_key(kp, p, "measure"), locality_measures, &a->measure)) < 0)
		return r;
	a->cpu_node = -1;
	if (vn_json_get(v, "step") && (r = vn_scn_step_ref(c, v, p, &a->step)) < 0)
		return r;
	if (vn_json_get(v, "cpu_node")) {
		unsigned n;
		if ((r = vn_json_get_uint(&c->r, v, p, "cpu_node", true, 0, VN_MAX_NODES - 1, VN_SCN_NODE_WHAT, &n)) <
		    0)
			return r;
		if (a->measure == 3)
			return vn_json_bad(&c->r, vn_json_path_key(kp, p, "cpu_node"),
					   "cpu_node goes with a remote_fraction measure, not model_s");
		a->cpu_node = (int)n;
	}
	return parse_op_value(c, v, p, a);
}

/* A cpu_node must be a node of the topology with CPUs. */
static int validate_locality(const struct vn_scn_assert *a, const struct vn_topology *t, const char *topo,
			     const char *file, const char *p, struct vn_error *err)
{
	char kp[VN_JSON_PATH_MAX];
	if (a->cpu_node < 0)
		return 0;
	return vn_scn_node_ok(file, t, topo, vn_json_path_key(kp, p, "cpu_node"), (unsigned)a->cpu_node, true, err);
}

static void emit_locality(struct json_object *o, const struct vn_scn_assert *a)
{
	if (a->step)
		put_str(o, "step", a->step);
	put_str(o, "measure", locality_measures[a->measure]);
	if (a->cpu_node >= 0)
		json_object_object_add(o, "cpu_node", json_object_new_int(a->cpu_node));
	emit_op(o, a);
}

static char *name_locality(const struct vn_scn_assert *a)
{
	char row[32] = "";
	if (a->cpu_node >= 0)
		snprintf(row, sizeof(row), " cpu_node %d", a->cpu_node);
	return vn_xasprintf("locality %s%s %s%s %s %g", a->step ? "step " : "run", a->step ? a->step : "",
			    locality_measures[a->measure], row, vn_scn_op_name(a->op), a->value);
}

/* The emulator's counts of the steps' accesses; a run without them (locality off, map unproven) is not judged. */
static int check_locality(const struct vn_run_data *d, const struct vn_scn_assert *a, struct vn_result_run *rep,
			  struct vn_error *err)
{
	char obs[64], exp[64];
	const struct vn_loc_counts *c = &d->loc;
	if (!d->loc_have)
		return unobserved(err, a, "no locality counts: run with --locality or \"locality\": true");
	if (a->step) {
		int si = step_index(d, a->step);
		c = si >= 0 && d->loc_steps ? &d->loc_steps[si] : NULL;
		if (!c || !c->ram)
			return unobserved(err, a,
					  "step %s has no locality counts of its own (it ran beside a background step)",
					  a->step);
	}
	double v = a->measure == 3 ? vn_loc_model_s(c, d->loc_lat_ns)
		   : a->cpu_node < 0
			   ? vn_loc_remote_fraction(c, (enum vn_loc_mode)a->measure)
			   : vn_loc_remote_fraction_row(c, (enum vn_loc_mode)a->measure, (unsigned)a->cpu_node);
	if (v != v)
		return unobserved(err, a, "no access was counted for %s", locality_measures[a->measure]);
	snprintf(obs, sizeof(obs), "%.4g", v);
	snprintf(exp, sizeof(exp), "%s %g", vn_scn_op_name(a->op), a->value);
	verdict(rep, a, vn_scn_op_eval(a->op, v, a->value), v, obs, exp, NULL);
	return 0;
}

const struct vn_assert_type vn_assert_types[VN_ASSERT_NTYPES] = {
	[VN_ASSERT_FALLBACK] = {.json = "fallback",
				.keys = {"type", "name", "model", NULL},
				.parse = parse_fallback,
				.emit = emit_fallback,
				.validate = validate_none,
				.judge = check_fallback,
				.name = name_fallback,
				.observed = VN_OBSERVED_NONE},
	[VN_ASSERT_DISTANCES] = {.json = "distances",
				 .keys = {"type", "name", NULL},
				 .parse = parse_none,
				 .emit = emit_none,
				 .validate = validate_none,
				 .judge = check_distances,
				 .name = name_distances,
				 .observed = VN_OBSERVED_NONE},
	[VN_ASSERT_COUNTER] = {.json = "counter",
			       .keys = {"type", "name", "counter", "op", "value", NULL},
			       .parse = parse_counter,
			       .emit = emit_counter,
			       .validate = validate_none,
			       .judge = check_counter,
			       .name = name_counter,
			       .observed = VN_OBSERVED_COUNT},
	[VN_ASSERT_RATIO] = {.json = "ratio",
			     .keys = {"type", "name", "numerator", "denominator", "op", "value", NULL},
			     .parse = parse_ratio,
			     .emit = emit_ratio,
			     .validate = validate_none,
			     .judge = check_counter,
			     .name = name_ratio,
			     .observed = VN_OBSERVED_RATIO},
	[VN_ASSERT_MEMORY_FOLLOWS] = {.json = "memory_follows",
				      .keys = {"type", "name", "step", "fraction", "within_s", NULL},
				      .parse = parse_follows,
				      .emit = emit_follows,
				      .validate = validate_none,
				      .judge = check_follows,
				      .name = name_follows,
				      .observed = VN_OBSERVED_NONE},
	[VN_ASSERT_RUNNING_PER_NODE] = {.json = "running_per_node",
					.keys = {"type", "name", "step", "tolerance", NULL},
					.parse = parse_running,
					.emit = emit_running,
					.validate = validate_none,
					.judge = check_running,
					.name = name_running,
					.observed = VN_OBSERVED_NONE},
	[VN_ASSERT_METRIC] = {.json = "metric",
			      .keys = {"type", "name", "step", "path", "op", "value", NULL},
			      .parse = parse_metric,
			      .emit = emit_metric,
			      .validate = validate_none,
			      .judge = check_metric,
			      .name = name_metric,
			      .observed = VN_OBSERVED_VALUE},
	[VN_ASSERT_MEMORY_ON_NODE] = {.json = "memory_on_node",
				      .keys = {"type", "name", "step", "node", "fraction", NULL},
				      .parse = parse_on_node,
				      .emit = emit_on_node,
				      .validate = validate_on_node,
				      .judge = check_on_node,
				      .name = name_on_node,
				      .observed = VN_OBSERVED_NONE},
	[VN_ASSERT_CHANGE] = {.json = "change",
			      .keys = {"type", "name", "metric", "variant", "op", "value", "significant", NULL},
			      .parse = parse_change,
			      .emit = emit_change,
			      .validate = validate_none,
			      .judge = check_change,
			      .name = name_change,
			      .observed = VN_OBSERVED_NONE},
	[VN_ASSERT_LOCALITY] = {.json = "locality",
				.keys = {"type", "name", "step", "measure", "cpu_node", "op", "value", NULL},
				.parse = parse_locality,
				.emit = emit_locality,
				.validate = validate_locality,
				.judge = check_locality,
				.name = name_locality,
				.observed = VN_OBSERVED_VALUE},
	[VN_ASSERT_DEMOTION_TARGETS] = {.json = "demotion_targets",
					.keys = {"type", "name", "step", "from", "fallback", NULL},
					.parse = vn_assert_parse_demotion,
					.emit = vn_assert_emit_demotion,
					.validate = vn_assert_validate_demotion,
					.judge = vn_assert_check_demotion,
					.name = vn_assert_name_demotion,
					.observed = VN_OBSERVED_NONE},
	[VN_ASSERT_PROMOTION] = {.json = "promotion",
				 .keys = {"type", "name", "step", "fraction", "mode", NULL},
				 .parse = vn_assert_parse_promotion,
				 .emit = vn_assert_emit_promotion,
				 .validate = vn_assert_validate_promotion,
				 .judge = vn_assert_check_promotion,
				 .name = vn_assert_name_promotion,
				 .observed = VN_OBSERVED_NONE},
	[VN_ASSERT_NO_DEMOTION] = {.json = "no_demotion",
				   .keys = {"type", "name", "step", NULL},
				   .parse = vn_assert_parse_no_demotion,
				   .emit = vn_assert_emit_step,
				   .validate = vn_assert_validate_no_demotion,
				   .judge = vn_assert_check_no_demotion,
				   .name = vn_assert_name_no_demotion,
				   .observed = VN_OBSERVED_NONE},
	[VN_ASSERT_PROMOTION_RATE] = {.json = "promotion_rate",
				      .keys = {"type", "name", "step", NULL},
				      .parse = vn_assert_parse_promotion_rate,
				      .emit = vn_assert_emit_step,
				      .validate = vn_assert_validate_promotion,
				      .judge = vn_assert_check_promotion_rate,
				      .name = vn_assert_name_promotion_rate,
				      .observed = VN_OBSERVED_NONE},
};

char *vn_scn_assert_default_name(const struct vn_scn_assert *a)
{
	return vn_assert_types[a->type].name(a);
}

int vn_scenario_assert(const struct vn_run_data *d, struct vn_result_run *rep, struct vn_error *err)
{
	int rc = 0;

	for (unsigned i = 0; i < d->s->nasserts && rc == 0; i++)
		rc = vn_assert_types[d->s->asserts[i].type].judge(d, &d->s->asserts[i], rep, err);
	return rc;
}
