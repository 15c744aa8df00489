/* A scenario copied whole, and the command line's overrides set over a copy (scenario.h). */
#include <stdlib.h>
#include <string.h>

#include "scenario/scenario.h"
#include "scenario/schema-priv.h"
#include "util/alloc.h"
#include "util/cleanup.h"

static char **strv_dup(char *const *v)
{
	return v ? vn_strv_copy(v) : NULL;
}

static void *mem_dup(const void *p, size_t n, size_t size)
{
	if (!p || !n)
		return NULL;
	void *q = vn_xcalloc(n, size);
	memcpy(q, p, n * size);
	return q;
}

static void copy_steps(struct vn_scenario *c, const struct vn_scenario *s)
{
	c->steps = mem_dup(s->steps, s->nsteps, sizeof(*s->steps));
	for (unsigned i = 0; i < s->nsteps; i++) {
		struct vn_scn_step *st = &c->steps[i];
		st->name = vn_xstrdup_or_null(st->name);
		st->workload = vn_xstrdup_or_null(st->workload);
		st->cgroup = vn_xstrdup_or_null(st->cgroup);
		st->argv = strv_dup(st->argv);
		st->suite = vn_scn_suite_copy(st->suite);
		st->actions = mem_dup(st->actions, st->nactions, sizeof(*st->actions));
	}
	c->asserts = mem_dup(s->asserts, s->nasserts, sizeof(*s->asserts));
	for (unsigned i = 0; i < s->nasserts; i++) {
		struct vn_scn_assert *a = &c->asserts[i];
		a->name = vn_xstrdup_or_null(a->name);
		a->counter = vn_xstrdup_or_null(a->counter);
		a->denominator = vn_xstrdup_or_null(a->denominator);
		a->step = vn_xstrdup_or_null(a->step);
		a->path = vn_xstrdup_or_null(a->path);
		a->metric = vn_xstrdup_or_null(a->metric);
		a->variant = vn_xstrdup_or_null(a->variant);
	}
}

struct vn_scenario *vn_scenario_copy(const struct vn_scenario *s)
{
	struct vn_scenario *c = vn_xcalloc(1, sizeof(*c));

	*c = *s;
	c->path = vn_xstrdup_or_null(s->path);
	c->name = vn_xstrdup_or_null(s->name);
	c->description = vn_xstrdup_or_null(s->description);
	c->topology = vn_xstrdup_or_null(s->topology);
	c->kernel = vn_xstrdup_or_null(s->kernel);
	c->append = vn_xstrdup_or_null(s->append);
	c->arch = vn_xstrdup_or_null(s->arch);
	c->thp = vn_xstrdup_or_null(s->thp);
	c->image = vn_xstrdup_or_null(s->image);
	c->sysctls = mem_dup(s->sysctls, s->nsysctls, sizeof(*s->sysctls));
	for (unsigned i = 0; i < s->nsysctls; i++) {
		c->sysctls[i].key = vn_xstrdup(s->sysctls[i].key);
		c->sysctls[i].value = vn_xstrdup(s->sysctls[i].value);
	}
	c->hugetlb = mem_dup(s->hugetlb, s->nhugetlb, sizeof(*s->hugetlb));
	c->cgroups = strv_dup(s->cgroups);
	c->with = strv_dup(s->with);
	c->tracepoints = strv_dup(s->tracepoints);
	c->share = strv_dup(s->share);
	c->files = strv_dup(s->files);
	c->variants = NULL;
	c->nvariants = 0;
	vn_scenario_set_variants(c, s->variants, s->nvariants);
	copy_steps(c, s);
	return c;
}

static void append_specs(char ***to, char *const *specs)
{
	size_t n = 0;

	while (*to && (*to)[n])
		n++;
	for (char *const *p = specs; p && *p; p++)
		vn_strv_push(to, &n, *p);
}

struct vn_scenario *vn_scenario_override(const struct vn_scenario *s, const struct vn_scn_overrides *o)
{
	struct vn_scenario *c = vn_scenario_copy(s);

	if (o->arch) {
		free(c->arch);
		c->arch = vn_xstrdup(o->arch);
	}
	/* As the scenario's own key, so that its checks (an architecture that cannot count) see it. */
	c->locality |= o->locality;
	if (o->quick)
		vn_scenario_apply_quick(c);
	append_specs(&c->share, o->share);
	append_specs(&c->files, o->files);
	if (o->ltp) {
		/* The share mechanism's own spec, so up mounts it as any share; the steps then look there. */
		_cleanup_free_ char *spec = vn_xasprintf("%s:" VN_SCN_LTP_GUEST_DIR ":ro", o->ltp);
		char *const one[] = {spec, NULL};
		append_specs(&c->share, one);
		for (unsigned i = 0; i < c->nsteps; i++) {
			struct vn_scn_suite *su = c->steps[i].suite;
			if (su && su->format == VN_SCN_SUITE_LTP) {
				free(su->ltp);
				su->ltp = vn_xstrdup(VN_SCN_LTP_GUEST_DIR);
			}
		}
	}
	return c;
}
