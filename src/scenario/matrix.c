/*
 * A matrix run: every variant of a scenario, each repeated, interleaved
 * (A B A B ..., so host drift spreads over all variants alike) into one
 * result group (docs/results.md): group.json, one ordinary run directory per
 * run, the comparison and report.html.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "compare/compare.h"
#include "scenario/matrix-priv.h"
#include "scenario/runner.h"
#include "scenario/scenario-limits.h"
#include "util/alloc.h"
#include "util/cleanup.h"
#include "util/clock.h"
#include "util/dir.h"
#include "util/file.h"
#include "util/interrupt.h"
#include "util/name.h"

static const char *kernel_of(const struct group *g, const struct vn_scn_variant *v)
{
	if (v->kernel)
		return v->kernel;
	return g->s->kernel ? g->s->kernel : "stock";
}

void vn_matrix_group_value(const struct group *g, struct vn_result_group *out)
{
	*out = (struct vn_result_group){
		.version = VN_RESULT_GROUP_VERSION,
		.scenario = vn_xstrdup(g->s->name),
		.topology = g->topology ? vn_xstrdup(g->topology) : NULL,
		.host = g->host ? vn_xstrdup(g->host) : NULL,
		.accel = g->accel ? vn_xstrdup(g->accel) : NULL,
		.started_utc = g->started ? vn_xstrdup(g->started) : NULL,
		.repeats = g->repeats,
		.base = vn_xstrdup(g->s->variants[0].name),
		.complete = g->complete,
		.shard = g->shard,
		.keys = VN_GROUP_VERSION | VN_GROUP_HOST | VN_GROUP_ACCEL | VN_GROUP_STARTED | VN_GROUP_REPEATS |
			VN_GROUP_BASE | VN_GROUP_COMPLETE | VN_GROUP_ASSERTIONS,
	};
	out->shard.matrix = g->shard.matrix ? vn_xstrdup(g->shard.matrix) : NULL;
	for (unsigned i = 0; i < g->s->nvariants; i++) {
		const struct vn_scn_variant *v = &g->s->variants[i];
		struct vn_result_group_variant *gv = vn_result_group_add_variant(out, v->name);
		const char *append = v->append ? v->append : g->s->append;
		gv->kernel = vn_xstrdup(kernel_of(g, v));
		gv->append = append ? vn_xstrdup(append) : NULL;
		gv->keys = VN_GROUP_VARIANT_KERNEL | VN_GROUP_VARIANT_APPEND | VN_GROUP_VARIANT_SYSCTLS;
		for (unsigned k = 0; k < g->s->nsysctls; k++)
			vn_result_group_set_sysctl(gv, g->s->sysctls[k].key, g->s->sysctls[k].value);
		for (unsigned k = 0; k < v->nsysctls; k++)
			vn_result_group_set_sysctl(gv, v->sysctls[k].key, v->sysctls[k].value);
	}
	for (unsigned i = 0; i < g->ncells; i++) {
		const struct cell *c = &g->cells[i];
		struct vn_result_group_run *r = vn_result_group_add_run(out, c->variant, c->repeat, c->dir, c->exit);
		r->host = c->host ? vn_xstrdup(c->host) : NULL;
		for (unsigned k = 0; k < c->nattempts; k++)
			vn_result_group_add_attempt(r, c->attempts[k].host, c->attempts[k].error, c->attempts[k].dir);
	}
	for (unsigned i = 0; g->hosts && i < g->nhosts; i++)
		vn_result_group_add_host(out, g->hosts[i].uri, g->hosts[i].capacity, g->hosts[i].runs,
					 g->hosts[i].state);
	if (g->hosts)
		out->keys |= VN_GROUP_HOSTS;
	for (unsigned i = 0; i < g->verdicts.nverdicts; i++) {
		const struct vn_verdict *v = &g->verdicts.verdicts[i];
		out->verdicts = vn_xreallocarray(out->verdicts, out->nverdicts + 1, sizeof(*out->verdicts));
		out->verdicts[out->nverdicts++] =
			(struct vn_verdict){.name = vn_xstrdup(v->name),
					    .pass = v->pass,
					    .undecided = v->undecided,
					    .observed = v->observed ? vn_xstrdup(v->observed) : NULL,
					    .expected = v->expected ? vn_xstrdup(v->expected) : NULL};
	}
}

int vn_matrix_group_write(const struct group *g, struct vn_error *err)
{
	_cleanup_(vn_result_group_clear) struct vn_result_group value = {0};
	_cleanup_free_ char *path = vn_xasprintf("%s/group.json", g->dir);

	vn_matrix_group_value(g, &value);
	_cleanup_free_ char *text = vn_result_group_text(&value);
	return vn_file_write_text(path, text, err);
}

/* The scenario of one cell: loaded afresh, the command line's overrides and then the variant set over it. */
static int cell_scenario(const struct group *g, const struct vn_scn_variant *v, struct vn_scenario **out,
			 struct vn_error *err)
{
	_cleanup_scenario_ struct vn_scenario *loaded = NULL;
	int rc = vn_scenario_load(g->s->path, &loaded, err);

	if (rc < 0)
		return rc;
	struct vn_scenario *s = vn_scenario_override(loaded, &g->o->over);
	vn_scenario_apply_variant(s, v);
	*out = s;
	return 0;
}

static void cells_free(struct group *g)
{
	for (unsigned i = 0; i < g->ncells; i++) {
		struct cell *c = &g->cells[i];
		for (unsigned k = 0; k < c->nattempts; k++)
			vn_free_all(c->attempts[k].host, c->attempts[k].error, c->attempts[k].dir);
		vn_free_all(c->variant, c->dir, c->host, c->attempts);
	}
	for (unsigned i = 0; i < g->nhosts; i++)
		vn_free_all(g->hosts[i].uri, g->hosts[i].state);
	free(g->hosts);
	vn_free_all(g->cells, g->topology, g->accel, g->host, g->started, g->shard.matrix);
	vn_result_clear(&g->verdicts);
}

void vn_cell_end_clear(struct vn_cell_end *e)
{
	vn_free_all(e->error, e->topology, e->host, e->started, e->accel);
	memset(e, 0, sizeof(*e));
}

void vn_matrix_cell_run(const struct group *g, unsigned k, const struct vn_testbed_ctx *ctx, struct vn_cell_end *end)
{
	const struct cell *c = &g->cells[k];
	const struct vn_scn_variant *v = NULL;
	for (unsigned i = 0; i < g->s->nvariants; i++)
		if (strcmp(g->s->variants[i].name, c->variant) == 0)
			v = &g->s->variants[i];
	_cleanup_scenario_ struct vn_scenario *cs = NULL;
	_cleanup_free_ char *rdir = vn_xasprintf("%s/%s", g->dir, c->dir), *out = NULL;
	struct vn_run_opts ro = g->o->run;
	struct vn_result_run rep = {0};
	struct vn_error e = {0};
	ro.outdir = rdir;
	ro.variant = c->variant;
	ro.repeat = c->repeat;
	ro.keep = false;
	int r = cell_scenario(g, v, &cs, &e);
	if (r == 0 && (r = vn_mkdir_p(rdir, 0755, &e)) == 0)
		r = vn_scenario_run(ctx, cs, &ro, &rep, &out, &e);
	end->exit = r < 0 ? (e.kind == VN_ERR_INPUT ? 2 : 3) : vn_result_failures(&rep) ? 1 : 0;
	end->error = r < 0 ? vn_xstrdup(e.msg) : NULL;
	end->topology = vn_xstrdup_or_null(rep.topology);
	end->host = vn_xstrdup_or_null(rep.host);
	end->started = vn_xstrdup_or_null(rep.started_utc);
	end->accel = vn_xstrdup_or_null(rep.accel);
	vn_result_clear(&rep);
	vn_error_clear(&e);
}

int vn_matrix_cell_ended(struct group *g, unsigned k, const struct vn_cell_end *end, struct vn_matrix_result *res,
			 struct vn_error *err)
{
	struct cell *c = &g->cells[k];

	c->exit = end->exit;
	if (!g->topology && end->topology) {
		g->topology = vn_xstrdup(end->topology);
		g->host = vn_xstrdup_or_null(end->host);
		g->started = vn_xstrdup_or_null(end->started);
	}
	/* Runs on other accelerators are not comparable: the group says so, and compare refuses them unless forced. */
	if (end->accel && !g->accel)
		g->accel = vn_xstrdup(end->accel);
	else if (end->accel && strcmp(g->accel, end->accel) != 0 && strncmp(g->accel, "mixed", 5) != 0) {
		char *m = vn_xasprintf("mixed: %s and %s", g->accel, end->accel);
		free(g->accel);
		g->accel = m;
	}
	res->runs++;
	res->failed += c->exit == 1;
	res->broken += c->exit > 1;
	if (c->exit > 1 && !res->first_error[0])
		snprintf(res->first_error, sizeof(res->first_error), "%s: %.3900s", c->dir,
			 end->error ? end->error : "");
	if (g->o->run_done)
		g->o->run_done(g->o->run_start_data, k, g->ncells, c->dir, c->exit, NULL, end->error);
	return vn_matrix_group_write(g, err);
}

/* One change assertion for one variant, from the comparison. */
static void judge_change(const struct vn_scenario *s, const struct vn_compare *cmp, const struct vn_scn_assert *a,
			 const char *variant, bool several, struct vn_result_run *out)
{
	const struct vn_compare_cell *base = vn_compare_find(cmp, a->metric, s->variants[0].name);
	const struct vn_compare_cell *c = vn_compare_find(cmp, a->metric, variant);
	_cleanup_free_ char *name = several ? vn_xasprintf("%s [%s]", a->name, variant) : vn_xstrdup(a->name);
	_cleanup_free_ char *expected = vn_xasprintf("%s %s %g%s against %s", a->metric, vn_scn_op_name(a->op),
						     a->value, c && c->has_pct ? "%" : "", s->variants[0].name);
	_cleanup_free_ char *observed = NULL;
	bool pass = false, undecided = false;
	/* Already in virtual time, that is no way out; and it is none for what placement costs (docs/noise.md). */
	bool virtual_time = vn_compare_virtual_time(cmp);

	if (!base || !base->n || !c || !c->n) {
		observed = vn_xasprintf("no value of %s in the complete runs of %s", a->metric,
					!base || !base->n ? s->variants[0].name : variant);
	} else if (!isfinite(c->has_pct ? c->change_pct : c->change_abs)) {
		/* No number to hold against the bound, and never significant: only a significant-only bound holds. */
		pass = a->significant;
		observed = vn_xasprintf("the change is past the largest double (%s: %g, %s: %g)%s", s->variants[0].name,
					base->mean, variant, c->mean,
					a->significant ? ": passes, since the change is not significant" : "");
	} else {
		/* A percentage metric changes in points; one whose base mean is 0 has no %change either. */
		double x = c->has_pct ? c->change_pct : c->change_abs;
		double dx = c->has_pct ? c->detect_pct : c->detect_abs;
		bool seen = c->has_pct ? c->detect_pct_ok : c->has_detect;
		pass = vn_scn_op_eval(a->op, x, a->value) || (a->significant && !c->significant);
		/*
		 * A change that is not significant, where the noise hides one of the
		 * bound's size, says nothing about the bound: neither a pass (a
		 * significant-only bound could never fail) nor a failure of the kernel.
		 */
		undecided = !c->significant && (!seen || dx > fabs(a->value));
		_cleanup_free_ char *noise =
			seen ? vn_xasprintf("; the noise shows changes from %.2f%s", dx, c->has_pct ? "%" : "")
			     : vn_xstrdup("; no noise figure (fewer than 2 runs a side)");
		observed = vn_xasprintf(
			"%+.2f%s (%s: %g, %s: %g)%s%s%s", x, c->has_pct ? "%" : " (absolute)", s->variants[0].name,
			base->mean, variant, c->mean,
			c->has_p ? (c->significant ? ", significant" : ", not significant") : "", noise,
			undecided
				? (virtual_time ? ": too noisy to tell, since a change as large as the bound would not "
						  "show (more repeats, or --repeats auto: docs/noise.md)"
						: ": too noisy to tell, since a change as large as the bound would not "
						  "show (more repeats, --repeats auto, or --virtual-time for a rate "
						  "that placement does not decide: docs/noise.md)")
			: a->significant && !c->significant ? ": passes, since the change is not significant"
							    : "");
		pass = pass && !undecided;
	}
	vn_result_add(out, name, pass, observed, expected, NULL);
	out->verdicts[out->nverdicts - 1].undecided = undecided;
}

void vn_scenario_judge_changes(const struct vn_scenario *s, const struct vn_compare *cmp, struct vn_result_run *out)
{
	for (unsigned i = 0; i < s->nasserts; i++) {
		const struct vn_scn_assert *a = &s->asserts[i];
		if (a->type != VN_ASSERT_CHANGE)
			continue;
		for (unsigned k = 1; k < s->nvariants; k++)
			if (!a->variant || strcmp(a->variant, s->variants[k].name) == 0)
				judge_change(s, cmp, a, s->variants[k].name, !a->variant && s->nvariants > 2, out);
	}
}

/* --kernel A --kernel B: one variant per kernel, named after it, in place of the scenario's. */
static void kernel_variants(struct vn_scenario *s, const char *const *kernels, unsigned n)
{
	vn_scenario_set_variants(s, NULL, 0);
	s->variants = vn_xcalloc(n, sizeof(*s->variants));
	/* Filled in place: names made unique against the ones before. */
	for (unsigned i = 0; i < n; i++) {
		const char *base = strrchr(kernels[i], '/');
		_cleanup_free_ char *name = vn_xstrdup(base ? base + 1 : kernels[i]);
		for (char *p = name; *p; p++)
			if (!strchr("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._-", *p))
				*p = '_';
		/* Two kernels of one name (a/bzImage, b/bzImage) still need two directories. */
		for (unsigned j = 0; j < i; j++)
			if (strcmp(s->variants[j].name, name) == 0) {
				char *n2 = vn_xasprintf("%s-%u", name, i + 1);
				free(name);
				name = n2;
			}
		s->variants[i].name = steal_pointer(&name);
		s->variants[i].kernel = vn_xstrdup(kernels[i]);
		s->nvariants++;
	}
}

/* --repeats auto: whether the group so far leaves some change assertion too noisy to tell. */
static bool needs_more(struct group *g)
{
	struct vn_error e = {0};
	struct vn_compare *cmp = NULL;
	struct vn_result_run rep = {0};

	if (g->repeats >= VN_SCN_AUTO_REPEATS_MAX || vn_compare_write_group(g->dir, &cmp, &e) < 0) {
		vn_error_clear(&e);
		return false;
	}
	vn_scenario_judge_changes(g->s, cmp, &rep);
	bool more = vn_result_undecided(&rep) > 0;
	vn_result_clear(&rep);
	vn_compare_free(cmp);
	return more;
}

/* One more run of every variant, in the scenario's order, at the end of the cells. */
static void add_round(struct group *g)
{
	unsigned r = ++g->repeats;

	g->cells = vn_xreallocarray(g->cells, g->ncells + g->s->nvariants, sizeof(*g->cells));
	for (unsigned i = 0; i < g->s->nvariants; i++)
		g->cells[g->ncells++] = (struct cell){.variant = vn_xstrdup(g->s->variants[i].name),
						      .repeat = r,
						      .dir = vn_xasprintf("%s/%u", g->s->variants[i].name, r),
						      .exit = -1};
}

/* The cells one after the other on this host; with --repeats auto, more rounds while the noise hides the bounds. */
static int run_here(struct group *g, const struct vn_testbed_ctx *ctx, struct vn_matrix_result *res,
		    struct vn_error *err)
{
	int rc = 0;

	for (unsigned k = 0; !vn_was_interrupted() && rc == 0; k++) {
		if (k == g->ncells && !(g->o->repeats_auto && needs_more(g)))
			break;
		if (k == g->ncells)
			add_round(g);
		struct vn_cell_end end = {0};
		if (g->o->run_start)
			g->o->run_start(g->o->run_start_data, k, g->ncells, g->cells[k].variant, g->cells[k].repeat,
					vn_now_s() - g->t0);
		vn_matrix_cell_run(g, k, ctx, &end);
		rc = vn_matrix_cell_ended(g, k, &end, res, err);
		vn_cell_end_clear(&end);
	}
	return rc;
}

/* The comparison, the group's change assertions judged from it, and the page. */
static int group_compare(struct group *g, struct vn_matrix_result *res, struct vn_error *err)
{
	/* The comparison and the page are for people: a failure to make them is said, not fatal to the group. */
	struct vn_error ce = {0};
	struct vn_compare *cmp = NULL;
	int rc = 0;

	if (vn_compare_write_group(g->dir, &cmp, &ce) < 0)
		snprintf(res->compare_error, sizeof(res->compare_error), "%s", ce.msg);
	res->compare = cmp;
	vn_error_clear(&ce);
	if (cmp && g->complete) {
		vn_scenario_judge_changes(g->s, cmp, &g->verdicts);
		if ((rc = vn_matrix_group_write(g, err)) < 0)
			return rc;
		res->verdicts = g->verdicts;
		memset(&g->verdicts, 0, sizeof(g->verdicts));
	}
	if (vn_compare_html_write(g->dir, NULL, cmp, &ce) < 0 && !res->compare_error[0])
		snprintf(res->compare_error, sizeof(res->compare_error), "report.html: %.3900s", ce.msg);
	vn_error_clear(&ce);
	return 0;
}

int vn_scenario_run_matrix(const struct vn_testbed_ctx *ctx, struct vn_scenario *s, const struct vn_matrix_opts *o,
			   struct vn_matrix_result *res, char **dirp, struct vn_error *err)
{
	struct group g = {.s = s, .o = o};
	_cleanup_free_ char *dir = NULL;
	int rc;

	memset(res, 0, sizeof(*res));
	if (o->nkernels)
		kernel_variants(s, o->kernels, o->nkernels);
	if (!s->nvariants) {
		s->variants = vn_xcalloc(1, sizeof(*s->variants));
		s->variants[0].name = vn_xstrdup("default");
		s->nvariants = 1;
	}
	g.repeats = o->repeats ? o->repeats : s->repeats;
	if (o->repeats_auto && o->nhosts)
		return vn_input_error(err, "--repeats auto runs on this host only, not spread over hosts");
	if ((rc = vn_scenario_check(s, NULL, NULL, err)) < 0 ||
	    (rc = vn_scenario_check_hosts(s, o->run.locality, ctx->uri, o->hosts, o->nhosts, err)) < 0)
		return rc;
	for (unsigned i = 0; i < s->nvariants; i++) {
		_cleanup_scenario_ struct vn_scenario *cs = NULL;
		if ((rc = cell_scenario(&g, &s->variants[i], &cs, err)) < 0 ||
		    (rc = vn_scenario_check(cs, NULL, NULL, err)) < 0)
			return vn_error_prefix(err, "variant %s", s->variants[i].name);
	}

	g.ncells = s->nvariants * g.repeats;
	g.cells = vn_xcalloc(g.ncells, sizeof(*g.cells));
	for (unsigned r = 0, k = 0; r < g.repeats; r++)
		for (unsigned i = 0; i < s->nvariants; i++, k++)
			g.cells[k] = (struct cell){.variant = vn_xstrdup(s->variants[i].name),
						   .repeat = r + 1,
						   .dir = vn_xasprintf("%s/%u", s->variants[i].name, r + 1),
						   .exit = -1};
	if ((rc = vn_matrix_shard(&g, err)) < 0)
		goto out;
	dir = o->run.outdir ? vn_xstrdup(o->run.outdir) : vn_run_default_dir(s->name);
	if ((rc = vn_run_dir_refuse(dir, o->run.force, NULL, err)) < 0 || (rc = vn_mkdir_p(dir, 0755, err)) < 0)
		goto out;
	g.dir = dir;
	*dirp = vn_xstrdup(dir);
	if ((rc = vn_matrix_group_write(&g, err)) < 0)
		goto out;
	g.t0 = vn_now_s();
	rc = o->nhosts ? vn_matrix_spread(&g, ctx, res, err) : run_here(&g, ctx, res, err);
	if (rc < 0)
		goto out;
	g.complete = !vn_was_interrupted();
	if ((rc = vn_matrix_group_write(&g, err)) < 0)
		goto out;
	/* A slice's table would be a fraction of the matrix's: vnuma compare (or report) merges the slices' groups. */
	res->files = g.shard.count ? "group.json" : "group.json, compare.txt, compare.json, report.html";
	if (!g.shard.count && (rc = group_compare(&g, res, err)) < 0)
		goto out;
	if (vn_was_interrupted())
		rc = vn_infra_error(err, -EINTR, "interrupted after %u of %u runs; %s/group.json says incomplete",
				    res->runs, g.ncells, dir);
out:
	cells_free(&g);
	return rc;
}

bool vn_scenario_is_matrix(const struct vn_scenario *s, const struct vn_matrix_opts *o)
{
	return s->nvariants || o->nkernels > 1 || o->repeats_auto || (o->repeats ? o->repeats : s->repeats) > 1;
}
