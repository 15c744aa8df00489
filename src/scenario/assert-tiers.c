/*
 * The tiering assertion types (issue 47, docs/tiering.md): judged against
 * the memory-tier model (topology/tiers.c) from what a tiermove step saw.
 * Their rows are in assert.c's vn_assert_types; nothing else knows them.
 */
#include <errno.h>
#include <stdarg.h>
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

/* The step's memory bound to node from alone: a page found elsewhere can then only have been moved there. */
int vn_assert_parse_demotion(struct vn_scn_ctx *c, struct json_object *v, const char *p, struct vn_scn_assert *a)
{
	char kp[VN_JSON_PATH_MAX];
	int r;

	struct json_object *fb = vn_json_get(v, "fallback");

	if ((r = vn_scn_step_ref(c, v, p, &a->step)) < 0 ||
	    (r = vn_json_get_uint(&c->r, v, p, "from", true, 0, VN_MAX_NODES - 1, VN_SCN_NODE_WHAT, &a->node)) < 0)
		return r;
	if (fb && !json_object_is_type(fb, json_type_boolean))
		return vn_json_expected(&c->r, vn_json_path_key(kp, p, "fallback"), "true or false", fb);
	a->lower_ok = fb && json_object_get_boolean(fb);
	for (unsigned i = 0; i < c->s->nsteps; i++) {
		const struct vn_scn_step *st = &c->s->steps[i];
		if (strcmp(st->name, a->step) != 0)
			continue;
		if (!st->workload || strcmp(st->workload, "tiermove") != 0)
			return vn_json_bad(&c->r, vn_json_path_key(kp, p, "step"),
					   "step \"%s\" runs no tiermove workload (it reports where its pages went)",
					   a->step);
		if (st->placement.policy != VN_PLACE_MEMBIND || st->placement.nnodes != 1 ||
		    st->placement.nodes[0] != a->node)
			return vn_json_bad(
				&c->r, vn_json_path_key(kp, p, "from"),
				"step \"%s\" must bind its memory to node %u alone (\"placement\": {\"policy\": "
				"\"membind\", \"nodes\": [%u]}): else a page elsewhere was not demoted",
				a->step, a->node, a->node);
	}
	return 0;
}

void vn_assert_emit_demotion(struct json_object *o, const struct vn_scn_assert *a)
{
	json_object_object_add(o, "step", json_object_new_string(a->step));
	json_object_object_add(o, "from", json_object_new_int64(a->node));
	if (a->lower_ok)
		json_object_object_add(o, "fallback", json_object_new_boolean(true));
}

/* Node from exists and the model gives it demotion targets (a node in the lowest tier has none). */
int vn_assert_validate_demotion(const struct vn_scn_assert *a, const struct vn_topology *t, const char *topo,
				const char *file, const char *p, struct vn_error *err)
{
	char np[VN_JSON_PATH_MAX];
	struct vn_tiers tr;
	int r = vn_scn_node_ok(file, t, topo, vn_json_path_key(np, p, "from"), a->node, false, err);

	if (r < 0)
		return r;
	vn_tiers_compute(t, VN_TIER_MODEL_DEFAULT, &tr);
	if (!tr.npreferred[a->node])
		return vn_input_error(err, "%s: %s: node %u of %s demotes nowhere in the %s tier model (%s)", file, np,
				      a->node, topo, vn_tier_model_name(tr.model),
				      tr.tier_of[a->node] < 0 ? "it has no memory" : "it is in the lowest tier");
	return 0;
}

char *vn_assert_name_demotion(const struct vn_scn_assert *a)
{
	return vn_xasprintf("pages of %s demoted from node %u land only on the model's targets%s", a->step, a->node,
			    a->lower_ok ? ", then its lower tiers" : "");
}

int vn_assert_unobserved(struct vn_error *err, const struct vn_scn_assert *a, const char *fmt, ...)
{
	char why[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(why, sizeof(why), fmt, ap);
	va_end(ap);
	return vn_infra_error(err, -ENODATA, "assertion \"%s\" could not be judged: %s", a->name ? a->name : "?", why);
}

int vn_assert_tiermove_results(const struct vn_run_data *d, const struct vn_scn_assert *a,
			       const struct vn_run_step_data **out, struct vn_error *err)
{
	const struct vn_run_step_data *sd = NULL;

	for (unsigned i = 0; i < d->s->nsteps; i++)
		if (strcmp(d->s->steps[i].name, a->step) == 0)
			sd = &d->steps[i];
	if (!sd || (!sd->nresults && !sd->nmissing))
		return vn_assert_unobserved(err, a, "no result line from step %s", a->step);
	if (sd->nmissing)
		return vn_assert_unobserved(err, a, "step %s process %u ended without a JSON result line", a->step,
					    sd->missing_first);
	*out = sd;
	return 0;
}

/* Each process's pages_max_per_node summed: the most pages each node held at any of its samples. */
int vn_assert_max_per_node(const struct vn_run_step_data *sd, const struct vn_scn_assert *a, double *pages,
			   struct vn_error *err)
{
	for (unsigned i = 0; i < sd->nresults; i++) {
		json_object *m;
		if (!json_object_object_get_ex(sd->results[i], "pages_max_per_node", &m) ||
		    !json_object_is_type(m, json_type_object))
			return vn_assert_unobserved(err, a, "step %s process %u's result has no pages_max_per_node",
						    a->step, i);
		json_object_object_foreach(m, k, v)
		{
			char *end;
			long n = strtol(k, &end, 10);
			if (*end || n < 0 || n >= VN_MAX_NODES || !json_object_is_type(v, json_type_int))
				return vn_assert_unobserved(err, a, "step %s process %u: pages_max_per_node has \"%s\"",
							    a->step, i, k);
			pages[n] += (double)json_object_get_int64(v);
		}
	}
	return 0;
}

/*
 * Every node but from that held a page of the step is one demotion put it
 * on: it must be one of node_demotion[from].preferred. None at all is not a
 * verdict (nothing was demoted to judge: demotion off, or the step fit).
 */
int vn_assert_check_demotion(const struct vn_run_data *d, const struct vn_scn_assert *a, struct vn_result_run *rep,
			     struct vn_error *err)
{
	const struct vn_run_step_data *sd = NULL;
	double pages[VN_MAX_NODES] = {0}, moved = 0, on_target = 0;
	struct vn_tiers tr;
	struct vn_strbuf obs = VN_STRBUF_INIT, bad = VN_STRBUF_INIT;
	int rc;

	if ((rc = vn_assert_tiermove_results(d, a, &sd, err)) < 0)
		return rc;
	if ((rc = vn_assert_max_per_node(sd, a, pages, err)) < 0)
		return rc;
	vn_tiers_compute(d->t, d->tier_model, &tr);
	const bool *lower_of = tr.tier_of[a->node] >= 0 ? tr.tier[tr.tier_of[a->node]].lower : NULL;
	for (unsigned n = 0; n < VN_MAX_NODES; n++) {
		if (n == a->node || pages[n] <= 0)
			continue;
		moved += pages[n];
		on_target += tr.preferred[a->node][n] ? pages[n] : 0;
		vn_strbuf_printf(&obs, "%snode %u: %.0f pages", obs.len ? ", " : "", n, pages[n]);
		if (a->lower_ok && n < tr.nnodes && lower_of && lower_of[n])
			continue;
		if (!tr.preferred[a->node][n])
			vn_strbuf_printf(
				&bad, "node %u holds %.0f pages: not a target of node %u%s\n", n, pages[n], a->node,
				n < tr.nnodes && tr.tier_of[a->node] >= 0 && tr.tier[tr.tier_of[a->node]].lower[n]
					? " (a lower-tier node: the fallback when the targets are full)"
					: "");
	}
	if (moved == 0) {
		vn_strbuf_free(&obs);
		vn_strbuf_free(&bad);
		return vn_assert_unobserved(
			err, a,
			"no page of step %s left node %u (%.0f pages there): nothing was demoted to judge "
			"(demotion_enabled true, and more memory than node %u holds?)",
			a->step, a->node, pages[a->node], a->node);
	}
	_cleanup_free_ char *want = vn_tiers_nodelist(tr.preferred[a->node], tr.nnodes);
	_cleanup_free_ char *lower = vn_tiers_nodelist(tr.tier[tr.tier_of[a->node]].lower, tr.nnodes);
	char exp[256];
	/* The fallback comes after the targets (alloc_demote_page()): none on a target is not it. */
	if (a->lower_ok && on_target == 0)
		vn_strbuf_printf(&bad, "no page on node %s, the targets: the lower tiers are only their fallback\n",
				 want);
	snprintf(exp, sizeof(exp), "%s node %s (model %s: node %u's targets at distance %d; lower tiers %s)",
		 a->lower_ok ? "first" : "only", want, vn_tier_model_name(tr.model), a->node, tr.distance[a->node],
		 lower);
	if (a->lower_ok)
		snprintf(exp + strlen(exp), sizeof(exp) - strlen(exp), ", then %s", lower);
	vn_result_add_observed(rep, a->name, !bad.len, obs.s, exp, bad.len ? bad.s : NULL, VN_OBSERVED_NONE, 0);
	vn_strbuf_free(&obs);
	vn_strbuf_free(&bad);
	return 0;
}

/*
 * promotion: the step runs tiermove with the default memory policy. NUMA
 * balancing promotes only a page whose policy has MPOL_F_MOF (the default
 * policy's, mpol_misplaced() in 6.1): a page bound with numactl --membind,
 * --preferred or --interleave is never a promotion candidate.
 */
int vn_assert_parse_promotion(struct vn_scn_ctx *c, struct json_object *v, const char *p, struct vn_scn_assert *a)
{
	char kp[VN_JSON_PATH_MAX];
	int r;

	if ((r = vn_scn_step_ref(c, v, p, &a->step)) < 0 ||
	    (r = vn_json_get_num(&c->r, v, p, "fraction", true, VN_JSON_FRACTION, &a->fraction)) < 0 ||
	    (r = vn_json_get_uint(&c->r, v, p, "mode", false, 1, 2,
				  "1 (NUMA balancing) or 2 (memory tiering), the kernel.numa_balancing asked for",
				  &a->mode)) < 0)
		return r;
	for (unsigned i = 0; i < c->s->nsteps; i++) {
		const struct vn_scn_step *st = &c->s->steps[i];
		if (strcmp(st->name, a->step) != 0)
			continue;
		if (!st->workload || strcmp(st->workload, "tiermove") != 0)
			return vn_json_bad(&c->r, vn_json_path_key(kp, p, "step"),
					   "step \"%s\" runs no tiermove workload (it reports where its hot pages are)",
					   a->step);
		if (st->placement.policy != VN_PLACE_NONE && st->placement.policy != VN_PLACE_CPUNODEBIND)
			return vn_json_bad(&c->r, vn_json_path_key(kp, p, "step"),
					   "step \"%s\" binds its memory: NUMA balancing promotes only pages of the "
					   "default policy (\"placement\": {\"policy\": \"cpunodebind\", ...} or none)",
					   a->step);
	}
	return 0;
}

void vn_assert_emit_promotion(struct json_object *o, const struct vn_scn_assert *a)
{
	json_object_object_add(o, "step", json_object_new_string(a->step));
	json_object_object_add(o, "fraction", vn_scn_json_num(a->fraction));
	if (a->mode)
		json_object_object_add(o, "mode", json_object_new_int64(a->mode));
}

/* A lower tier to promote from: some node outside the top tiers in the model. */
int vn_assert_validate_promotion(const struct vn_scn_assert *a, const struct vn_topology *t, const char *topo,
				 const char *file, const char *p, struct vn_error *err)
{
	struct vn_tiers tr;

	vn_tiers_compute(t, VN_TIER_MODEL_DEFAULT, &tr);
	for (unsigned i = 0; i < tr.ntiers; i++)
		if (!tr.tier[i].top)
			return 0;
	return vn_input_error(err, "%s: %s: %s has no memory tier below the top one in the %s tier model (%s)", file, p,
			      topo, vn_tier_model_name(tr.model),
			      "no memory-kind=\"cxl\" or \"pmem\" node: nothing can be promoted");
	(void)a;
}

char *vn_assert_name_promotion(const struct vn_scn_assert *a)
{
	return vn_xasprintf("hot pages of %s on a lower tier are >= %.0f%% on the top tier by each phase's end%s",
			    a->step, a->fraction * 100,
			    a->mode == 2   ? ", promoted by memory tiering mode"
			    : a->mode == 1 ? ", by NUMA balancing mode 1"
					   : "");
}

/* Hot pages of one sample on nodes outside the top tiers; -1 when the sample has no hot_pages_per_node. */
static double hot_on_lower(json_object *sample, const struct vn_tiers *tr)
{
	json_object *m;
	double n = 0;

	if (!json_object_object_get_ex(sample, "hot_pages_per_node", &m) || !json_object_is_type(m, json_type_object))
		return -1;
	json_object_object_foreach(m, k, v)
	{
		char *end;
		long node = strtol(k, &end, 10);
		if (*end || node < 0 || node >= (long)tr->nnodes || !json_object_is_type(v, json_type_int))
			return -1;
		if (tr->tier_of[node] >= 0 && !tr->tier[tr->tier_of[node]].top)
			n += (double)json_object_get_int64(v);
	}
	return n;
}

struct promo_sum {
	unsigned judged;       /* phases that began with hot pages on a lower tier */
	double worst, success; /* the least fraction promoted of a judged phase; pgpromote_success summed */
	double candidate;      /* pgpromote_candidate summed: counted in memory tiering mode alone */
	bool have_success, have_candidate;
};

/* One process's hot phases: each one's first sample (its start) against its last. */
static int promo_phases(json_object *res, const struct vn_scn_assert *a, unsigned proc, const struct vn_tiers *tr,
			struct promo_sum *s, struct vn_strbuf *obs, struct vn_error *err)
{
	json_object *phases, *ph, *smp, *vm, *ps;

	if (!json_object_object_get_ex(res, "phases", &phases) || !json_object_is_type(phases, json_type_array))
		return vn_assert_unobserved(err, a, "step %s process %u's result has no phases", a->step, proc);
	for (size_t k = 1; k < json_object_array_length(phases); k++) {
		ph = json_object_array_get_idx(phases, k);
		if (json_object_object_get_ex(ph, "vmstat", &vm) &&
		    json_object_object_get_ex(vm, "pgpromote_success", &ps) && json_object_is_type(ps, json_type_int)) {
			s->success += (double)json_object_get_int64(ps);
			s->have_success = true;
		}
		if (json_object_object_get_ex(ph, "vmstat", &vm) &&
		    json_object_object_get_ex(vm, "pgpromote_candidate", &ps) &&
		    json_object_is_type(ps, json_type_int)) {
			s->candidate += (double)json_object_get_int64(ps);
			s->have_candidate = true;
		}
		if (!json_object_object_get_ex(ph, "samples", &smp) || !json_object_is_type(smp, json_type_array) ||
		    json_object_array_length(smp) < 2)
			return vn_assert_unobserved(err, a, "step %s process %u phase %zu has fewer than two samples",
						    a->step, proc, k);
		double start = hot_on_lower(json_object_array_get_idx(smp, 0), tr);
		double end = hot_on_lower(json_object_array_get_idx(smp, json_object_array_length(smp) - 1), tr);
		if (start < 0 || end < 0)
			return vn_assert_unobserved(err, a,
						    "step %s process %u phase %zu: a sample without hot_pages_per_node",
						    a->step, proc, k);
		if (start == 0)
			continue;
		/* Counts, not page identities: a hot page demoted in the phase counts against promotion. */
		double f = end >= start ? 0 : 1 - end / start;
		vn_strbuf_printf(obs, "%sphase %zu: %.0f -> %.0f (%.3f)", obs->len ? ", " : "", k, start, end, f);
		if (!s->judged++ || f < s->worst)
			s->worst = f;
	}
	return 0;
}

/* Every process of the step ran under kernel.numa_balancing = want, as tiermove read it when it started. */
static int promo_mode_ran(const struct vn_run_step_data *sd, const struct vn_scn_assert *a, struct vn_error *err)
{
	json_object *nb;

	for (unsigned i = 0; i < sd->nresults; i++) {
		if (!json_object_object_get_ex(sd->results[i], "numa_balancing", &nb) ||
		    !json_object_is_type(nb, json_type_int))
			return vn_assert_unobserved(
				err, a,
				"step %s process %u did not say its kernel.numa_balancing (a kernel "
				"without NUMA balancing, an older tiermove?): mode %u asked",
				a->step, i, a->mode);
		if (json_object_get_int64(nb) != a->mode)
			return vn_assert_unobserved(err, a,
						    "step %s ran with kernel.numa_balancing %lld, not the %u asked",
						    a->step, (long long)json_object_get_int64(nb), a->mode);
	}
	return 0;
}

/*
 * A top-tier node with CPUs the step may use and over 1G of memory: there
 * pgdat_free_space_enough() can hold, and 6.1 promotes in memory tiering
 * mode without counting a candidate (should_numa_migrate_memory()).
 */
static bool promo_target_roomy(const struct vn_run_data *d, const struct vn_scn_assert *a, const struct vn_tiers *tr)
{
	const struct vn_scn_step *st = NULL;

	for (unsigned i = 0; i < d->s->nsteps; i++)
		if (strcmp(d->s->steps[i].name, a->step) == 0)
			st = &d->s->steps[i];
	for (unsigned n = 0; n < tr->nnodes; n++) {
		bool allowed = !st || st->placement.policy != VN_PLACE_CPUNODEBIND;
		for (unsigned k = 0; !allowed && k < st->placement.nnodes; k++)
			allowed = st->placement.nodes[k] == n;
		if (allowed && tr->tier_of[n] >= 0 && tr->tier[tr->tier_of[n]].top &&
		    vn_node_has_cpus(&d->t->nodes[n]) && d->t->nodes[n].memory >= (1ULL << 30))
			return true;
	}
	return false;
}

/*
 * The mode's own evidence, as 6.1 counts it: pgpromote_success counts every
 * NUMA-balancing move from a lower tier to the top one in either mode
 * (migrate_misplaced_page()); pgpromote_candidate only memory tiering
 * mode's hot-page path (numa_promotion_rate_limit(), kernel/sched/fair.c).
 * Mode 2 must have counted candidates, mode 1 none. Appends what failed.
 */
static int promo_mode_judge(const struct vn_run_data *d, const struct vn_scn_assert *a, const struct vn_tiers *tr,
			    const struct promo_sum *s, char *det, size_t len, struct vn_error *err)
{
	if (!a->mode)
		return 0;
	if (!s->have_candidate)
		return vn_assert_unobserved(err, a,
					    "the guest's /proc/vmstat has no pgpromote_candidate (a kernel "
					    "before 6.1?)");
	if (a->mode == 2 && s->candidate == 0 && promo_target_roomy(d, a, tr))
		return vn_assert_unobserved(err, a,
					    "no pgpromote_candidate, but a target node has over 1G: with that much "
					    "free, 6.1 promotes without counting one (pgdat_free_space_enough())");
	if (a->mode == 2 && s->candidate == 0)
		snprintf(det + strlen(det), len - strlen(det),
			 "no pgpromote_candidate: nothing went through memory tiering mode's hot-page path\n");
	if (a->mode == 1 && s->candidate > 0)
		snprintf(det + strlen(det), len - strlen(det),
			 "%.0f pgpromote_candidate in mode 1: only memory tiering mode counts them\n", s->candidate);
	return 0;
}

/*
 * Of the hot window's pages on a lower tier as a phase begins, at least
 * fraction must be on the top tier by its end, in every phase that began
 * with some there, and the kernel must count them as promotions
 * (pgpromote_success: a move from a lower tier to the top one, in mode 1
 * or 2). With a mode, the step must have run under it (else exit 3) and
 * shown that mode's evidence. No such phase, or no counter, is not a
 * verdict: nothing was there to promote.
 */
int vn_assert_check_promotion(const struct vn_run_data *d, const struct vn_scn_assert *a, struct vn_result_run *rep,
			      struct vn_error *err)
{
	const struct vn_run_step_data *sd = NULL;
	struct promo_sum s = {0};
	struct vn_tiers tr;
	struct vn_strbuf obs = VN_STRBUF_INIT;
	char exp[256], det[320] = "";
	int rc = 0;

	if ((rc = vn_assert_tiermove_results(d, a, &sd, err)) < 0)
		return rc;
	if (a->mode && (rc = promo_mode_ran(sd, a, err)) < 0)
		return rc;
	vn_tiers_compute(d->t, d->tier_model, &tr);
	for (unsigned i = 0; i < sd->nresults && rc == 0; i++)
		rc = promo_phases(sd->results[i], a, i, &tr, &s, &obs, err);
	if (rc == 0 && !s.judged)
		rc = vn_assert_unobserved(
			err, a,
			"no hot phase of step %s began with pages on a lower tier: nothing to promote (more "
			"memory than the top tier holds, demotion_enabled true?)",
			a->step);
	if (rc == 0 && !s.have_success)
		rc = vn_assert_unobserved(err, a,
					  "the guest's /proc/vmstat has no pgpromote_success (a kernel before 6.1?)");
	if (rc == 0 && s.worst < a->fraction)
		snprintf(det, sizeof(det), "a phase promoted less than asked\n");
	if (rc == 0 && s.success == 0)
		snprintf(det + strlen(det), sizeof(det) - strlen(det),
			 "the kernel counted no promotion (numa_balancing 2, the hot set hot enough?)\n");
	if (rc == 0)
		rc = promo_mode_judge(d, a, &tr, &s, det, sizeof(det), err);
	if (rc < 0) {
		vn_strbuf_free(&obs);
		return rc;
	}
	vn_strbuf_printf(&obs, "; pgpromote_success %.0f", s.success);
	if (a->mode)
		vn_strbuf_printf(&obs, ", pgpromote_candidate %.0f; numa_balancing %u", s.candidate, a->mode);
	snprintf(exp, sizeof(exp),
		 ">= %.3f of each phase's lower-tier hot pages on the top tier by its end; "
		 "pgpromote_success > 0%s",
		 a->fraction,
		 a->mode == 2   ? "; numa_balancing 2 and pgpromote_candidate > 0 (memory tiering mode)"
		 : a->mode == 1 ? "; numa_balancing 1 and pgpromote_candidate = 0"
				: "");
	bool pass = !*det;
	vn_result_add_observed(rep, a->name, pass, obs.s, exp, pass ? NULL : det, VN_OBSERVED_NONE, 0);
	vn_strbuf_free(&obs);
	return 0;
}
