/* struct vn_scenario back to JSON: every field, defaults included, so a run records what it ran. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <json-c/json.h>

#include "scenario/schema-priv.h"
#include "util/alloc.h"
#include "util/json.h"
#include "util/parse.h"

/* Shortest text that reads back as the same double (json-c would print 17 digits). */
struct json_object *vn_scn_json_num(double d)
{
	char buf[40];

	snprintf(buf, sizeof(buf), "%.15g", d);
	return vn_json_new_double_sig(d, strtod(buf, NULL) == d ? 15 : 17);
}

static void put(struct json_object *o, const char *key, struct json_object *v)
{
	json_object_object_add(o, key, v);
}

static void put_str(struct json_object *o, const char *key, const char *v)
{
	if (v)
		put(o, key, json_object_new_string(v));
}

static struct json_object *strv_json(char *const *v)
{
	struct json_object *a = json_object_new_array();
	for (; v && *v; v++)
		json_object_array_add(a, json_object_new_string(*v));
	return a;
}

static struct json_object *nodes_json(const unsigned *n, unsigned count)
{
	struct json_object *a = json_object_new_array();
	for (unsigned i = 0; i < count; i++)
		json_object_array_add(a, json_object_new_int64(n[i]));
	return a;
}

static struct json_object *hotplug_json(const struct vn_scn_hotplug *h)
{
	struct json_object *o = json_object_new_object();
	char buf[32];

	put(o, "node", json_object_new_int64(h->node));
	if (h->memory) {
		put_str(o, "memory", vn_size_format(h->memory, buf, sizeof(buf)));
		put_str(o, "online", h->online_kernel ? "kernel" : "movable");
		put(o, "remove", json_object_new_boolean(h->remove));
	} else {
		put(o, "cpus", json_object_new_int64(h->cpus));
	}
	return o;
}

static struct json_object *step_json(const struct vn_scn_step *st)
{
	struct json_object *o = json_object_new_object();
	char buf[32];

	put_str(o, "name", st->name);
	if (st->is_hotplug) {
		put(o, "hotplug", hotplug_json(&st->hotplug));
		return o;
	}
	put_str(o, "workload", st->workload);
	if (st->suite)
		put(o, "suite", vn_scn_suite_json(st->suite));
	else
		put(o, strcmp(st->workload, "cmd") == 0 ? "command" : "args", strv_json(st->argv));
	struct json_object *pl = json_object_new_object();
	put_str(pl, "policy", vn_scn_policies[st->placement.policy]);
	if (st->placement.nnodes)
		put(pl, "nodes", nodes_json(st->placement.nodes, st->placement.nnodes));
	if (st->placement.ncpu_nodes)
		put(pl, "cpu_nodes", nodes_json(st->placement.cpu_nodes, st->placement.ncpu_nodes));
	put(o, "placement", pl);
	if (st->suite) {
		/* One process at a time, in the foreground: a suite step takes nothing else (schema-suite.c). */
		put_str(o, "cgroup", st->cgroup);
		return o;
	}
	put(o, "processes", json_object_new_int64(st->processes));
	if (st->threads)
		put(o, "threads", json_object_new_int64(st->threads));
	if (st->size) {
		/* Parsed sizes carry a unit and --quick rounds to MiB, so this never prints bare bytes. */
		put_str(o, "size", vn_size_format(st->size, buf, sizeof(buf)));
	}
	if (st->duration_s > 0)
		put(o, "duration_s", vn_scn_json_num(st->duration_s));
	put_str(o, "cgroup", st->cgroup);
	put(o, "background", json_object_new_boolean(st->background));
	struct json_object *acts = json_object_new_array();
	for (unsigned i = 0; i < st->nactions; i++) {
		struct json_object *a = json_object_new_object();
		put(a, "at_s", vn_scn_json_num(st->actions[i].at_s));
		if (st->actions[i].is_hotplug) {
			put(a, "hotplug", hotplug_json(&st->actions[i].hotplug));
		} else {
			struct json_object *m = json_object_new_object();
			put(m, "fraction", vn_scn_json_num(st->actions[i].fraction));
			put(m, "to_node", json_object_new_int64(st->actions[i].to_node));
			put(a, "move", m);
		}
		json_object_array_add(acts, a);
	}
	put(o, "actions", acts);
	return o;
}

static struct json_object *assert_json(const struct vn_scn_assert *a)
{
	struct json_object *o = json_object_new_object();

	put_str(o, "type", vn_assert_types[a->type].json);
	put_str(o, "name", a->name);
	vn_assert_types[a->type].emit(o, a);
	return o;
}

char *vn_scenario_to_json(const struct vn_scenario *s)
{
	_cleanup_json_ struct json_object *o = json_object_new_object();
	char key[16];

	if (!o)
		vn_oom();
	put_str(o, "name", s->name);
	put_str(o, "description", s->description);
	put_str(o, "topology", s->topology);
	put_str(o, "kernel", s->kernel);
	put_str(o, "append", s->append);
	put_str(o, "arch", s->arch);
	put_str(o, "boot", s->cold ? "cold" : "restore");
	struct json_object *sc = json_object_new_object();
	for (unsigned i = 0; i < s->nsysctls; i++)
		put(sc, s->sysctls[i].key, json_object_new_string(s->sysctls[i].value));
	put(o, "sysctls", sc);
	put_str(o, "thp", s->thp);
	if (s->demotion_enabled)
		put(o, "demotion_enabled", json_object_new_boolean(s->demotion_enabled > 0));
	struct json_object *h = json_object_new_object();
	for (unsigned i = 0; i < s->nhugetlb; i++) {
		snprintf(key, sizeof(key), "%u", s->hugetlb[i].node);
		put(h, key, json_object_new_int64(s->hugetlb[i].pages));
	}
	put(o, "hugetlb", h);
	put(o, "cgroups", strv_json(s->cgroups));
	if (s->with && s->with[0])
		put(o, "with", strv_json(s->with));
	if (s->share && s->share[0])
		put(o, "share", strv_json(s->share));
	if (s->files && s->files[0])
		put(o, "files", strv_json(s->files));
	if (s->tracepoints && s->tracepoints[0])
		put(o, "tracepoints", strv_json(s->tracepoints));
	if (s->image)
		put_str(o, "image", s->image);
	put(o, "sample_interval_s", vn_scn_json_num(s->sample_interval_s));
	put(o, "timeout_s", vn_scn_json_num(s->timeout_s));
	put(o, "repeats", json_object_new_int64(s->repeats));
	put(o, "quick_scale", vn_scn_json_num(s->quick_scale));
	put(o, "virtual_time", json_object_new_boolean(s->virtual_time));
	if (s->locality)
		put(o, "locality", json_object_new_boolean(true));
	struct json_object *steps = json_object_new_array();
	for (unsigned i = 0; i < s->nsteps; i++)
		json_object_array_add(steps, step_json(&s->steps[i]));
	put(o, "steps", steps);
	struct json_object *as = json_object_new_array();
	for (unsigned i = 0; i < s->nasserts; i++)
		json_object_array_add(as, assert_json(&s->asserts[i]));
	put(o, "assertions", as);
	const char *text = json_object_to_json_string_ext(o, JSON_C_TO_STRING_PRETTY | JSON_C_TO_STRING_SPACED |
								     JSON_C_TO_STRING_NOSLASHESCAPE);
	if (!text)
		vn_oom(); /* json-c returns NULL only when it cannot allocate */
	return vn_xasprintf("%s\n", text);
}
