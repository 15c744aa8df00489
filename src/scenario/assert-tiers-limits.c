/*
 * The tiering assertions about what the kernel must not do (issue 47,
 * docs/tiering.md): demote while demotion_enabled is false, promote faster
 * than kernel.numa_balancing_promote_rate_limit_MBps. Both read a tiermove
 * step's per-phase /proc/vmstat deltas; their rows are in assert.c.
 */
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "scenario/assert-tiers.h"
#include "scenario/run-priv.h"
#include "scenario/schema-priv.h"
#include "topology/tiers.h"
#include "util/alloc.h"
#include "util/cleanup.h"
#include "util/json.h"
#include "util/strbuf.h"

#define RATE_SYSCTL "kernel.numa_balancing_promote_rate_limit_MBps"
#define PMD_PAGES   512 /* a 2M THP of 4K pages: the most one promotion call moves (thp_nr_pages()) */

/* The step named runs tiermove (it reports the per-phase counters); *out is it. */
static int tiermove_step(struct vn_scn_ctx *c, struct json_object *v, const char *p, struct vn_scn_assert *a,
			 const struct vn_scn_step **out)
{
	char kp[VN_JSON_PATH_MAX];
	int r = vn_scn_step_ref(c, v, p, &a->step);

	if (r < 0)
		return r;
	for (unsigned i = 0; i < c->s->nsteps; i++)
		if (strcmp(c->s->steps[i].name, a->step) == 0)
			*out = &c->s->steps[i];
	if (!(*out)->workload || strcmp((*out)->workload, "tiermove") != 0)
		return vn_json_bad(&c->r, vn_json_path_key(kp, p, "step"),
				   "step \"%s\" runs no tiermove workload (it reports the demotion, promotion and "
				   "reclaim counters per phase)",
				   a->step);
	return 0;
}

void vn_assert_emit_step(struct json_object *o, const struct vn_scn_assert *a)
{
	json_object_object_add(o, "step", json_object_new_string(a->step));
}

/* Counter key summed over every phase of every process of the step; false where one is null or missing. */
static bool phases_sum(const struct vn_run_step_data *sd, const char *key, double *sum)
{
	json_object *phases, *vm, *n;

	*sum = 0;
	for (unsigned i = 0; i < sd->nresults; i++) {
		if (!json_object_object_get_ex(sd->results[i], "phases", &phases) ||
		    !json_object_is_type(phases, json_type_array))
			return false;
		for (size_t k = 0; k < json_object_array_length(phases); k++) {
			if (!json_object_object_get_ex(json_object_array_get_idx(phases, k), "vmstat", &vm) ||
			    !json_object_object_get_ex(vm, key, &n) || !json_object_is_type(n, json_type_int))
				return false;
			*sum += (double)json_object_get_int64(n);
		}
	}
	return true;
}

int vn_assert_parse_no_demotion(struct vn_scn_ctx *c, struct json_object *v, const char *p, struct vn_scn_assert *a)
{
	const struct vn_scn_step *st = NULL;

	return tiermove_step(c, v, p, a, &st);
}

/* Some node demotes somewhere in the model: else the question is moot on this topology. */
int vn_assert_validate_no_demotion(const struct vn_scn_assert *a, const struct vn_topology *t, const char *topo,
				   const char *file, const char *p, struct vn_error *err)
{
	struct vn_tiers tr;

	vn_tiers_compute(t, VN_TIER_MODEL_DEFAULT, &tr);
	for (unsigned n = 0; n < tr.nnodes; n++)
		if (tr.npreferred[n])
			return 0;
	(void)a;
	return vn_input_error(err, "%s: %s: no node of %s demotes anywhere in the %s tier model (%s)", file, p, topo,
			      vn_tier_model_name(tr.model), "no memory-kind=\"cxl\" or \"pmem\" node");
}

char *vn_assert_name_no_demotion(const struct vn_scn_assert *a)
{
	return vn_xasprintf("nothing of %s is demoted while demotion_enabled is false", a->step);
}

/* demotion_enabled as every process of the step saw it: 1 true, 0 false, -1 unknown (null, missing). */
static int step_demotion(const struct vn_run_step_data *sd)
{
	json_object *de;
	int seen = 0;

	for (unsigned i = 0; i < sd->nresults; i++) {
		if (!json_object_object_get_ex(sd->results[i], "demotion_enabled", &de) ||
		    !json_object_is_type(de, json_type_boolean))
			return -1;
		seen |= json_object_get_boolean(de);
	}
	return seen;
}

/* Every process of the step ended its first touch with its node below every zone's low watermark. */
static bool step_below_low(const struct vn_run_step_data *sd)
{
	json_object *sl, *reached;

	for (unsigned i = 0; i < sd->nresults; i++)
		if (!json_object_object_get_ex(sd->results[i], "stop_at_low", &sl) ||
		    !json_object_object_get_ex(sl, "reached", &reached) || !json_object_get_boolean(reached))
			return false;
	return sd->nresults > 0;
}

/*
 * Under reclaim (something scanned or demoted, a node reclaim pass that
 * freed nothing, or kswapd on a node below its low watermarks) with
 * demotion_enabled false, pgdemote_kswapd + pgdemote_direct must stay 0,
 * and a step bound by membind must have no page off its nodes (only
 * demotion moves a page out of a membind). No reclaim is not a verdict.
 */
int vn_assert_check_no_demotion(const struct vn_run_data *d, const struct vn_scn_assert *a, struct vn_result_run *rep,
				struct vn_error *err)
{
	static const char *const keys[] = {"pgdemote_kswapd", "pgdemote_direct", "pageoutrun", "pgscan_kswapd",
					   "pgscan_direct"};
	const struct vn_run_step_data *sd = NULL;
	const struct vn_scn_step *st = NULL;
	double v[5], zfail = 0, pages[VN_MAX_NODES] = {0};
	int rc;

	if ((rc = vn_assert_tiermove_results(d, a, &sd, err)) < 0)
		return rc;
	for (unsigned i = 0; i < d->s->nsteps; i++)
		if (strcmp(d->s->steps[i].name, a->step) == 0)
			st = &d->s->steps[i];
	for (unsigned k = 0; k < 5; k++)
		if (!phases_sum(sd, keys[k], &v[k]))
			return vn_assert_unobserved(err, a, "step %s has no %s per phase (a kernel without it?)",
						    a->step, keys[k]);
	/* Evidence only, so one missing (an older tiermove, no CONFIG_NUMA) is none: never a pass by itself. */
	if (!phases_sum(sd, "zone_reclaim_failed", &zfail))
		zfail = 0;
	int de = step_demotion(sd);
	if (de != 0)
		return vn_assert_unobserved(err, a, "step %s ran with demotion_enabled %s: not the question asked",
					    a->step, de > 0 ? "true" : "unknown (no such file: a kernel before 5.15?)");
	/*
	 * Reclaim is a page scanned or demoted; node reclaim (zone_reclaim_mode)
	 * that reclaimed nothing, which on a node of anon alone with demotion off
	 * scans nothing (get_scan_count(): no swap, no demotion, file only) and
	 * lets the allocation fall back; or kswapd on a node the step took below
	 * every zone's low watermark (--stop-at-low). pageoutrun alone is not
	 * enough: balance_pgdat() counts it before it finds the node balanced.
	 */
	if (v[0] + v[1] + v[3] + v[4] + zfail == 0 && !(v[2] > 0 && step_below_low(sd)))
		return vn_assert_unobserved(err, a,
					    "step %s never came under reclaim (nothing scanned or demoted, no failed "
					    "node reclaim, and no kswapd pass on a node it took below its low "
					    "watermarks, --stop-at-low): nothing to judge",
					    a->step);
	_cleanup_strbuf_ struct vn_strbuf obs = VN_STRBUF_INIT, bad = VN_STRBUF_INIT;
	vn_strbuf_printf(&obs,
			 "pgdemote_kswapd %.0f, pgdemote_direct %.0f under reclaim (pageoutrun %.0f, "
			 "pgscan_kswapd %.0f, pgscan_direct %.0f, zone_reclaim_failed %.0f)",
			 v[0], v[1], v[2], v[3], v[4], zfail);
	if (v[0] + v[1] > 0)
		vn_strbuf_printf(&bad, "the kernel demoted %.0f pages with demotion_enabled false\n", v[0] + v[1]);
	/* Demotion ignores the policy (alloc_demote_page()); the allocator's fallback keeps to the set. */
	bool bound = st && st->placement.policy == VN_PLACE_MEMBIND;
	bool in_set[VN_MAX_NODES] = {0};
	for (unsigned k = 0; bound && k < st->placement.nnodes; k++)
		in_set[st->placement.nodes[k]] = true;
	_cleanup_free_ char *set = bound ? vn_tiers_nodelist(in_set, VN_MAX_NODES) : NULL;
	if (bound && (rc = vn_assert_max_per_node(sd, a, pages, err)) < 0)
		return rc;
	for (unsigned n = 0; bound && n < VN_MAX_NODES; n++)
		if (!in_set[n] && pages[n] > 0)
			vn_strbuf_printf(&bad, "node %u held %.0f pages of a step bound to node %s\n", n, pages[n],
					 set);
	if (bound)
		vn_strbuf_printf(&obs, "; pages only on node %s: %s", set,
				 bad.len && strstr(bad.s, "held") ? "no" : "yes");
	char exp[160];
	snprintf(exp, sizeof(exp), "pgdemote_kswapd + pgdemote_direct = 0 (demotion_enabled false)%s",
		 bound ? "; no page off the bound node" : "");
	vn_result_add_observed(rep, a->name, !bad.len, obs.s, exp, bad.len ? bad.s : NULL, VN_OBSERVED_NONE, 0);
	return 0;
}

/* The step runs on the default policy: only that is promoted. */
int vn_assert_parse_promotion_rate(struct vn_scn_ctx *c, struct json_object *v, const char *p, struct vn_scn_assert *a)
{
	char kp[VN_JSON_PATH_MAX];
	const struct vn_scn_step *st = NULL;
	int r = tiermove_step(c, v, p, a, &st);

	if (r < 0)
		return r;
	if (st->placement.policy != VN_PLACE_NONE && st->placement.policy != VN_PLACE_CPUNODEBIND)
		return vn_json_bad(&c->r, vn_json_path_key(kp, p, "step"),
				   "step \"%s\" binds its memory: NUMA balancing promotes only pages of the default "
				   "policy (\"placement\": {\"policy\": \"cpunodebind\", ...} or none)",
				   a->step);
	return 0;
}

char *vn_assert_name_promotion_rate(const struct vn_scn_assert *a)
{
	return vn_xasprintf("promotion during %s stays under " RATE_SYSCTL, a->step);
}

/* Top-tier nodes with CPUs the step may run on: each is a promotion target with its own rate window. */
static unsigned promotion_targets(const struct vn_run_data *d, const struct vn_scn_assert *a)
{
	struct vn_tiers tr;
	const struct vn_scn_step *st = NULL;
	unsigned n = 0;

	vn_tiers_compute(d->t, d->tier_model, &tr);
	for (unsigned i = 0; i < d->s->nsteps; i++)
		if (strcmp(d->s->steps[i].name, a->step) == 0)
			st = &d->s->steps[i];
	for (unsigned node = 0; node < tr.nnodes; node++) {
		bool allowed = !st || st->placement.policy != VN_PLACE_CPUNODEBIND;
		for (unsigned k = 0; !allowed && k < st->placement.nnodes; k++)
			allowed = st->placement.nodes[k] == node;
		if (allowed && tr.tier_of[node] >= 0 && tr.tier[tr.tier_of[node]].top &&
		    vn_node_has_cpus(&d->t->nodes[node]))
			n++;
	}
	return n ? n : 1;
}

/* One phase: its pgpromote_success against what the kernel's windows allow in its duration. */
struct rate_ctx {
	double window_pages, pages_per_mb;
	unsigned targets;
	double success, worst_mbps;
	struct vn_strbuf obs, bad;
};

static int rate_phase(struct rate_ctx *x, json_object *ph, const struct vn_scn_assert *a, unsigned proc,
		      struct vn_error *err)
{
	json_object *vm, *ps, *s0, *s1;

	if (!json_object_object_get_ex(ph, "vmstat", &vm) || !json_object_object_get_ex(vm, "pgpromote_success", &ps) ||
	    !json_object_is_type(ps, json_type_int) || !json_object_object_get_ex(ph, "start_s", &s0) ||
	    !json_object_object_get_ex(ph, "end_s", &s1))
		return vn_assert_unobserved(err, a, "step %s process %u: a phase without pgpromote_success or times",
					    a->step, proc);
	double pages = (double)json_object_get_int64(ps);
	double dur = json_object_get_double(s1) - json_object_get_double(s0);
	if (dur <= 0)
		return 0;
	/* Windows last > 1 s each (now - start > MSEC_PER_SEC): a phase meets at most floor(dur) + 2. */
	double allowed = x->targets * (floor(dur) + 2) * x->window_pages;
	double mbps = pages / x->pages_per_mb / dur;
	x->success += pages;
	x->worst_mbps = mbps > x->worst_mbps ? mbps : x->worst_mbps;
	vn_strbuf_printf(&x->obs, "%s%.0f pages in %.1f s (%.2f MB/s)", x->obs.len ? ", " : "", pages, dur, mbps);
	if (pages > allowed)
		vn_strbuf_printf(&x->bad,
				 "%.0f pages promoted in a %.1f s phase: more than the %.0f the limit allows\n", pages,
				 dur, allowed);
	return 0;
}

/*
 * numa_promotion_rate_limit() (kernel/sched/fair.c, 6.1) lets candidates
 * through per destination node while fewer than limit << (20 - PAGE_SHIFT)
 * pages were candidates in the current window, which a call renews once it
 * is over 1000 ms old: the call that crosses the limit is refused, but a
 * THP counts its 512 pages in one call, so a window passes at most
 * limit + 511 pages (limit where THP is never). pgpromote_success of a
 * phase of d s must stay under that for each of floor(d) + 2 windows.
 */
int vn_assert_check_promotion_rate(const struct vn_run_data *d, const struct vn_scn_assert *a,
				   struct vn_result_run *rep, struct vn_error *err)
{
	const struct vn_run_step_data *sd = NULL;
	json_object *phases, *lim, *thp;
	int rc;

	if ((rc = vn_assert_tiermove_results(d, a, &sd, err)) < 0)
		return rc;
	struct rate_ctx x = {
		.pages_per_mb = 256, .targets = promotion_targets(d, a), .obs = VN_STRBUF_INIT, .bad = VN_STRBUF_INIT};
	double limit = 0;
	bool thp_never = true;
	for (unsigned i = 0; i < sd->nresults && rc == 0; i++) {
		json_object *res = sd->results[i];
		/* The limit and THP mode the kernel had as the step began, not what a file asked for. */
		if (!json_object_object_get_ex(res, "promote_rate_limit_MBps", &lim) ||
		    !json_object_is_type(lim, json_type_int))
			rc = vn_assert_unobserved(
				err, a, "step %s process %u saw no " RATE_SYSCTL " (a kernel before 6.1?)", a->step, i);
		else if (!json_object_object_get_ex(res, "phases", &phases) ||
			 !json_object_is_type(phases, json_type_array))
			rc = vn_assert_unobserved(err, a, "step %s process %u's result has no phases", a->step, i);
		if (rc < 0)
			break;
		limit = (double)json_object_get_int64(lim);
		thp_never = json_object_object_get_ex(res, "thp", &thp) && json_object_is_type(thp, json_type_string) &&
			    strcmp(json_object_get_string(thp), "never") == 0;
		x.window_pages = limit * x.pages_per_mb + (thp_never ? 0 : PMD_PAGES - 1);
		for (size_t k = 0; rc == 0 && k < json_object_array_length(phases); k++)
			rc = rate_phase(&x, json_object_array_get_idx(phases, k), a, i, err);
	}
	if (rc == 0 && x.success == 0)
		rc = vn_assert_unobserved(err, a, "step %s promoted nothing (pgpromote_success 0): nothing to judge",
					  a->step);
	if (rc == 0) {
		char exp[320];
		snprintf(exp, sizeof(exp),
			 "<= %.0f MB/s per target node (%u): at most %.0f pages per > 1 s window (%s), "
			 "floor(d) + 2 windows in a phase of d s",
			 limit, x.targets, x.window_pages, thp_never ? "thp never" : "the limit + a THP's 511");
		vn_strbuf_printf(&x.obs, "; highest %.2f MB/s", x.worst_mbps);
		vn_result_add_observed(rep, a->name, !x.bad.len, x.obs.s, exp, x.bad.len ? x.bad.s : NULL,
				       VN_OBSERVED_NONE, 0);
	}
	vn_strbuf_free(&x.obs);
	vn_strbuf_free(&x.bad);
	return rc;
}
