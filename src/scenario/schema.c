/*
 * The scenario schema's shared parts: the names its enums have in JSON, and
 * struct vn_scenario's life (free, --quick scaling, operators). Reading is
 * schema-parse.c, writing schema-emit.c; the format is docs/scenarios.md.
 */
#include "scenario/schema-priv.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "topology/topology.h"
#include "util/alloc.h"
#include "util/cleanup.h"

/* Indexed by the enums in scenario.h; NULL-terminated for vn_json_one_of. */
const char *const vn_scn_workloads[] = {"stream",   "memfollow", "anon-cow-rand", "groupfair", "multi-instance",
					"tiermove", "cmd",       "suite",         NULL};
const char *const vn_scn_thp_modes[] = {"always", "madvise", "never", NULL};
const char *const vn_scn_boot_modes[] = {"restore", "cold", NULL};
const char *const vn_scn_policies[] = {"none", "cpunodebind", "membind", "preferred", "interleave", NULL};
const char *const vn_scn_op_names[] = {"<", "<=", ">", ">=", "==", "!=", NULL};

int vn_scn_node_ok(const char *file, const struct vn_topology *t, const char *topo, const char *p, unsigned n,
		   bool need_cpus, struct vn_error *err)
{
	if (n >= t->nnodes)
		return vn_input_error(err, "%s: %s: node %u does not exist in %s (%u nodes: 0-%u)", file, p, n, topo,
				      t->nnodes, t->nnodes - 1);
	if (need_cpus && !t->nodes[n].ncpus)
		return vn_input_error(err, "%s: %s: node %u has no CPUs in %s, so nothing can move there", file, p, n,
				      topo);
	return 0;
}

void vn_scenario_free(struct vn_scenario *s)
{
	if (!s)
		return;
	vn_free_all(s->path, s->name, s->description, s->topology, s->kernel, s->append, s->arch);
	for (unsigned i = 0; i < s->nsysctls; i++) {
		free(s->sysctls[i].key);
		free(s->sysctls[i].value);
	}
	free(s->sysctls);
	vn_scenario_set_variants(s, NULL, 0);
	vn_free_all(s->thp, s->hugetlb, s->image);
	vn_strv_free(s->cgroups);
	vn_strv_free(s->with);
	vn_strv_free(s->share);
	vn_strv_free(s->files);
	vn_strv_free(s->tracepoints);
	for (unsigned i = 0; i < s->nsteps; i++) {
		struct vn_scn_step *st = &s->steps[i];
		vn_free_all(st->name, st->workload, st->cgroup, st->actions);
		vn_strv_free(st->argv);
		vn_scn_suite_free(st->suite);
	}
	free(s->steps);
	for (unsigned i = 0; i < s->nasserts; i++) {
		struct vn_scn_assert *a = &s->asserts[i];
		vn_free_all(a->name, a->counter, a->denominator, a->step, a->path, a->metric, a->variant);
	}
	free(s->asserts);
	free(s);
}

/* Scaled durations stay long enough to sample, but never grow. */
static double quick_seconds(double d, double q)
{
	double floor_s = d < 2 ? d : 2;
	return d * q < floor_s ? floor_s : d * q;
}

void vn_scenario_apply_quick(struct vn_scenario *s)
{
	const double q = s->quick_scale;
	const uint64_t mib = 1 << 20, min_size = 16 * mib;

	for (unsigned i = 0; i < s->nsteps; i++) {
		struct vn_scn_step *st = &s->steps[i];
		if (st->duration_s > 0)
			st->duration_s = quick_seconds(st->duration_s, q);
		for (unsigned j = 0; j < st->nactions; j++)
			st->actions[j].at_s *= q;
		if (st->size) {
			uint64_t sz = (uint64_t)llround((double)st->size * q / (double)mib) * mib;
			uint64_t lo = st->size < min_size ? st->size : min_size;
			st->size = sz < lo ? lo : sz;
		}
	}
	for (unsigned i = 0; i < s->nasserts; i++) {
		struct vn_scn_assert *a = &s->asserts[i];
		if (a->type != VN_ASSERT_MEMORY_FOLLOWS)
			continue;
		/* A name of our making states the window, so it must state the one judged; the user's is theirs. */
		_cleanup_free_ char *unscaled = vn_scn_assert_default_name(a);
		a->within_s = quick_seconds(a->within_s, q);
		if (a->name && strcmp(a->name, unscaled) == 0) {
			free(a->name);
			a->name = vn_scn_assert_default_name(a);
		}
	}
}

const char *vn_scn_op_name(enum vn_scn_op op)
{
	return (unsigned)op < VN_ARRAY_SIZE(vn_scn_op_names) - 1 ? vn_scn_op_names[op] : "?";
}

bool vn_scn_op_eval(enum vn_scn_op op, double observed, double value)
{
	/* A missing observation (NaN) must not pass any assertion, "!=" included. */
	if (isnan(observed) || isnan(value))
		return false;
	switch (op) {
	case VN_OP_LT: return observed < value;
	case VN_OP_LE: return observed <= value;
	case VN_OP_GT: return observed > value;
	case VN_OP_GE: return observed >= value;
	case VN_OP_EQ: return observed == value;
	case VN_OP_NE: return observed != value;
	}
	return false;
}

static void sysctl_set(struct vn_scn_sysctl **list, unsigned *n, const char *key, const char *value)
{
	for (unsigned i = 0; i < *n; i++)
		if (strcmp((*list)[i].key, key) == 0) {
			free((*list)[i].value);
			(*list)[i].value = vn_xstrdup(value);
			return;
		}
	*list = vn_xreallocarray(*list, *n + 1, sizeof(**list));
	(*list)[(*n)++] = (struct vn_scn_sysctl){vn_xstrdup(key), vn_xstrdup(value)};
}

void vn_scenario_set_variants(struct vn_scenario *s, const struct vn_scn_variant *v, unsigned n)
{
	for (unsigned i = 0; i < s->nvariants; i++) {
		struct vn_scn_variant *x = &s->variants[i];
		vn_free_all(x->name, x->kernel, x->append, x->arch);
		for (unsigned j = 0; j < x->nsysctls; j++) {
			free(x->sysctls[j].key);
			free(x->sysctls[j].value);
		}
		free(x->sysctls);
		for (unsigned j = 0; j < x->nstep_args; j++) {
			free(x->step_args[j].step);
			vn_strv_free(x->step_args[j].argv);
		}
		free(x->step_args);
	}
	free(s->variants);
	s->variants = n ? vn_xcalloc(n, sizeof(*s->variants)) : NULL;
	s->nvariants = n;
	for (unsigned i = 0; i < n; i++) {
		struct vn_scn_variant *x = &s->variants[i];
		x->name = vn_xstrdup(v[i].name);
		x->kernel = vn_xstrdup_or_null(v[i].kernel);
		x->arch = vn_xstrdup_or_null(v[i].arch);
		x->append = vn_xstrdup_or_null(v[i].append);
		x->virtual_time = v[i].virtual_time;
		x->demotion_enabled = v[i].demotion_enabled;
		for (unsigned j = 0; j < v[i].nsysctls; j++)
			sysctl_set(&x->sysctls, &x->nsysctls, v[i].sysctls[j].key, v[i].sysctls[j].value);
		x->step_args = vn_xcalloc(v[i].nstep_args + 1, sizeof(*x->step_args));
		for (unsigned j = 0; j < v[i].nstep_args; j++)
			x->step_args[x->nstep_args++] = (struct vn_scn_step_args){vn_xstrdup(v[i].step_args[j].step),
										  vn_strv_copy(v[i].step_args[j].argv)};
	}
}

void vn_scenario_apply_variant(struct vn_scenario *s, const struct vn_scn_variant *v)
{
	if (v && v->kernel) {
		free(s->kernel);
		s->kernel = vn_xstrdup(v->kernel);
	}
	if (v && v->arch) {
		free(s->arch);
		s->arch = vn_xstrdup(v->arch);
	}
	if (v && v->append) {
		free(s->append);
		s->append = vn_xstrdup(v->append);
	}
	if (v && v->virtual_time)
		s->virtual_time = v->virtual_time > 0;
	if (v && v->demotion_enabled)
		s->demotion_enabled = v->demotion_enabled;
	for (unsigned i = 0; v && i < v->nsysctls; i++)
		sysctl_set(&s->sysctls, &s->nsysctls, v->sysctls[i].key, v->sysctls[i].value);
	for (unsigned i = 0; v && i < v->nstep_args; i++)
		for (unsigned k = 0; k < s->nsteps; k++)
			if (strcmp(s->steps[k].name, v->step_args[i].step) == 0) {
				vn_strv_free(s->steps[k].argv);
				s->steps[k].argv = vn_strv_copy(v->step_args[i].argv);
			}
	vn_scenario_set_variants(s, NULL, 0);
	s->repeats = 1;
}
