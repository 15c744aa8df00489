/*
 * Scenario files: JSON (json-c) into struct vn_scenario (schema-emit.c
 * writes it back).
 *
 * json-c's tokener keeps no line numbers for values, so every schema error
 * names the JSON path instead ("x.json: $.steps[1].size: ..."); only
 * malformed JSON, where the tokener stops at a byte offset, gets FILE:LINE:COL.
 * The format is documented in docs/scenarios.md; keep the two in step.
 */
#include "scenario/scenario-limits.h"
#include "scenario/scenario-types.h"
#include "scenario/scenario.h"

#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <json-c/json.h>

#include "scenario/schema-priv.h"
#include "util/alloc.h"
#include "util/arch.h"
#include "util/cleanup.h"
#include "util/json.h"
#include "util/parse.h"
#include "util/paths.h"
#include "util/strbuf.h"
#include "util/file.h"
#include "testbed/hotplug-guest.h"
#include "util/host-spec.h"

/* Bigger files are certainly not hand-written scenarios. */
#define SCN_MAX_FILE (1u << 20)

#define NODE_WHAT VN_SCN_NODE_WHAT

#define VN_STR_(x) #x
#define VN_STR(x)  VN_STR_(x)
/* VN_SCN_RUNNING_MAX's reason, in words, with the numbers it is made of. */
#define RUNNING_WHY                                                                                        \
	"processes running at once: the guest agent runs " VN_STR(VN_AGENT_MAX_JOBS) " commands, " VN_STR( \
		VN_SCN_HELPERS) " of them the runner's own"

static int node_list(struct vn_scn_ctx *c, struct json_object *v, const char *p, unsigned *nodes, unsigned *n)
{
	char ep[VN_JSON_PATH_MAX];
	int r = vn_json_check_type(&c->r, v, json_type_array, p);
	if (r < 0)
		return r;
	size_t len = json_object_array_length(v);
	if (len > VN_MAX_NODES)
		return vn_json_bad(&c->r, p, "%zu nodes listed, at most %d", len, VN_MAX_NODES);
	for (size_t i = 0; i < len; i++) {
		vn_json_path_idx(ep, p, i);
		r = vn_json_uint(&c->r, json_object_array_get_idx(v, i), ep, 0, VN_MAX_NODES - 1, NODE_WHAT, &nodes[i]);
		if (r < 0)
			return r;
		for (size_t j = 0; j < i; j++)
			if (nodes[j] == nodes[i])
				return vn_json_bad(&c->r, ep, "node %u is listed twice", nodes[i]);
	}
	*n = (unsigned)len;
	return 0;
}

static bool sysctl_key_ok(const char *k)
{
	/* Dotted names only: a '/' or ".." would let a key walk out of /proc/sys. */
	bool dot = false;
	size_t seg = 0;

	for (const char *p = k; *p; p++) {
		if (*p == '.') {
			if (!seg)
				return false;
			dot = true;
			seg = 0;
		} else if (isalnum((unsigned char)*p) || *p == '_' || *p == '-') {
			seg++;
		} else {
			return false;
		}
	}
	return dot && seg;
}

static int parse_sysctls(struct vn_scn_ctx *c, struct json_object *v, const char *p, unsigned *n,
			 struct vn_scn_sysctl **out)
{
	char kp[VN_JSON_PATH_MAX];
	int r = vn_json_check_type(&c->r, v, json_type_object, p);
	if (r < 0)
		return r;
	*out = vn_xcalloc((size_t)json_object_object_length(v) + 1, sizeof(**out));
	json_object_object_foreach(v, key, val)
	{
		vn_json_path_key(kp, p, key);
		if (!sysctl_key_ok(key))
			return vn_json_bad(&c->r, kp,
					   "expected a dotted sysctl name like kernel.numa_balancing, got \"%s\"", key);
		char buf[64];
		const char *text;
		switch (json_object_get_type(val)) {
		case json_type_boolean: text = json_object_get_boolean(val) ? "1" : "0"; break;
		case json_type_int:
			snprintf(buf, sizeof(buf), "%" PRId64, json_object_get_int64(val));
			text = buf;
			break;
		case json_type_double:
			if (!isfinite(json_object_get_double(val)))
				return vn_json_expected(&c->r, kp, "a number, string or boolean", val);
			snprintf(buf, sizeof(buf), "%.15g", json_object_get_double(val));
			text = buf;
			break;
		case json_type_string:
			text = json_object_get_string(val);
			/* The value is written to a /proc/sys file in one write(). */
			if (!*text || strpbrk(text, "\n\r"))
				return vn_json_expected(&c->r, kp, "a non-empty one-line value", val);
			break;
		default: return vn_json_expected(&c->r, kp, "a number, string or boolean", val);
		}
		struct vn_scn_sysctl *e = &(*out)[(*n)++];
		e->key = vn_xstrdup(key);
		e->value = vn_xstrdup(text);
	}
	return 0;
}

/* "arch": one of vnuma's architecture names, or absent (the host's). */
static int parse_arch(struct vn_scn_ctx *c, struct json_object *o, const char *p, char **out)
{
	static const char *const names[] = {VN_ARCH_NAMES, NULL};
	struct json_object *v = vn_json_get(o, "arch");
	char kp[VN_JSON_PATH_MAX];
	int m = 0, r;

	if (!v)
		return 0;
	if ((r = vn_json_one_of(&c->r, v, vn_json_path_key(kp, p, "arch"), names, &m)) < 0)
		return r;
	*out = vn_xstrdup(names[m]);
	return 0;
}

/* An optional boolean: *given says whether it was there. */
static int get_bool(struct vn_scn_ctx *c, struct json_object *o, const char *p, const char *key, bool *out, bool *given)
{
	char kp[VN_JSON_PATH_MAX];
	struct json_object *v = vn_json_get(o, key);
	int r;

	*given = v != NULL;
	if (!v)
		return 0;
	if ((r = vn_json_check_type(&c->r, v, json_type_boolean, vn_json_path_key(kp, p, key))) < 0)
		return r;
	*out = json_object_get_boolean(v);
	return 0;
}

/* The matrix: each variant a name and what it changes (its sysctls merge over the scenario's). */
static int parse_variants(struct vn_scn_ctx *c, struct json_object *v, const char *p)
{
	static const char *const keys[] = {"name",         "kernel", "append",           "arch", "sysctls",
					   "virtual_time", "args",   "demotion_enabled", NULL};
	char ep[VN_JSON_PATH_MAX], kp[VN_JSON_PATH_MAX];
	struct vn_scenario *s = c->s;
	int r;

	if ((r = vn_json_check_type(&c->r, v, json_type_array, p)) < 0)
		return r;
	size_t n = json_object_array_length(v);
	if (!n)
		return vn_json_bad(&c->r, p, "a matrix needs at least one variant (or leave \"variants\" out)");
	s->variants = vn_xcalloc(n, sizeof(*s->variants));
	for (size_t i = 0; i < n; i++) {
		struct json_object *o = json_object_array_get_idx(v, i), *sc;
		struct vn_scn_variant *var = &s->variants[s->nvariants++];
		vn_json_path_idx(ep, p, i);
		if ((r = vn_json_check_type(&c->r, o, json_type_object, ep)) < 0 ||
		    (r = vn_json_check_keys(&c->r, o, ep, keys)) < 0 ||
		    (r = vn_json_get_str(&c->r, o, ep, "name", VN_JSON_REQUIRED | VN_JSON_NAME, &var->name)) < 0 ||
		    (r = vn_json_get_str(&c->r, o, ep, "kernel", 0, &var->kernel)) < 0 ||
		    (r = vn_json_get_str(&c->r, o, ep, "append", 0, &var->append)) < 0 ||
		    (r = parse_arch(c, o, ep, &var->arch)) < 0)
			return r;
		bool vt = false, given = false;
		if ((r = get_bool(c, o, ep, "virtual_time", &vt, &given)) < 0)
			return r;
		var->virtual_time = !given ? 0 : vt ? 1 : -1;
		if ((r = get_bool(c, o, ep, "demotion_enabled", &vt, &given)) < 0)
			return r;
		var->demotion_enabled = !given ? 0 : vt ? 1 : -1;
		if ((sc = vn_json_get(o, "sysctls")) &&
		    (r = parse_sysctls(c, sc, vn_json_path_key(kp, ep, "sysctls"), &var->nsysctls, &var->sysctls)) < 0)
			return r;
		if ((sc = vn_json_get(o, "args"))) {
			char ap[VN_JSON_PATH_MAX];
			vn_json_path_key(kp, ep, "args");
			if ((r = vn_json_check_type(&c->r, sc, json_type_object, kp)) < 0)
				return r;
			var->step_args = vn_xcalloc((size_t)json_object_object_length(sc) + 1, sizeof(*var->step_args));
			json_object_object_foreach(sc, step, argv)
			{
				struct vn_scn_step_args *sa = &var->step_args[var->nstep_args++];
				size_t argc = 0;
				sa->step = vn_xstrdup(step);
				sa->argv = vn_xcalloc(1, sizeof(*sa->argv));
				if ((r = vn_json_strv_append(&c->r, argv, vn_json_path_key(ap, kp, step), 0, &sa->argv,
							     &argc)) < 0)
					return r;
			}
		}
		/* Names are directory names of the result group. */
		for (size_t j = 0; j < i; j++)
			if (strcmp(s->variants[j].name, var->name) == 0)
				return vn_json_bad(&c->r, vn_json_path_key(kp, ep, "name"),
						   "variant name \"%s\" is already used by %s[%zu]", var->name, p, j);
	}
	return 0;
}

static int parse_hugetlb(struct vn_scn_ctx *c, struct json_object *v, const char *p)
{
	char kp[VN_JSON_PATH_MAX];
	struct vn_scenario *s = c->s;
	int r = vn_json_check_type(&c->r, v, json_type_object, p);
	if (r < 0)
		return r;
	s->hugetlb = vn_xcalloc((size_t)json_object_object_length(v) + 1, sizeof(*s->hugetlb));
	json_object_object_foreach(v, key, val)
	{
		struct vn_error e = {0};
		long node;
		vn_json_path_key(kp, p, key);
		if (vn_int_parse(key, 0, VN_MAX_NODES - 1, &node, &e) < 0)
			return vn_json_bad(&c->r, kp, "expected a node number (0-127) as key, got \"%s\"", key);
		struct vn_scn_hugetlb *h = &s->hugetlb[s->nhugetlb];
		h->node = (unsigned)node;
		r = vn_json_uint(&c->r, val, kp, 0, 1 << 24, "a count of 2 MiB pages", &h->pages);
		if (r < 0)
			return r;
		s->nhugetlb++;
	}
	return 0;
}

static int parse_placement(struct vn_scn_ctx *c, struct json_object *v, const char *p, struct vn_scn_placement *pl)
{
	static const char *const keys[] = {"policy", "nodes", "cpu_nodes", NULL};
	char kp[VN_JSON_PATH_MAX];
	int policy = 0;
	int r = vn_json_check_type(&c->r, v, json_type_object, p);
	if (r < 0)
		return r;
	r = vn_json_check_keys(&c->r, v, p, keys);
	if (r < 0)
		return r;
	struct json_object *pv = vn_json_get(v, "policy");
	if (!pv)
		return vn_json_missing(&c->r, p, "policy");
	r = vn_json_one_of(&c->r, pv, vn_json_path_key(kp, p, "policy"), vn_scn_policies, &policy);
	if (r < 0)
		return r;
	pl->policy = (enum vn_placement_policy)policy;
	struct json_object *nv = vn_json_get(v, "nodes"), *cv = vn_json_get(v, "cpu_nodes");
	if (nv && (r = node_list(c, nv, vn_json_path_key(kp, p, "nodes"), pl->nodes, &pl->nnodes)) < 0)
		return r;
	if (cv && (r = node_list(c, cv, vn_json_path_key(kp, p, "cpu_nodes"), pl->cpu_nodes, &pl->ncpu_nodes)) < 0)
		return r;
	switch (pl->policy) {
	case VN_PLACE_NONE:
		if (nv || cv)
			return vn_json_bad(&c->r, p, "policy \"none\" takes no nodes");
		break;
	case VN_PLACE_CPUNODEBIND:
		if (cv)
			return vn_json_bad(&c->r, vn_json_path_key(kp, p, "cpu_nodes"),
					   "policy \"cpunodebind\" binds CPUs to \"nodes\"; it takes no \"cpu_nodes\"");
		/* fall through */
	case VN_PLACE_MEMBIND:
	case VN_PLACE_INTERLEAVE:
		if (!nv)
			return vn_json_missing(&c->r, p, "nodes");
		if (!pl->nnodes)
			return vn_json_bad(&c->r, vn_json_path_key(kp, p, "nodes"),
					   "policy \"%s\" needs at least one node", vn_scn_policies[pl->policy]);
		break;
	case VN_PLACE_PREFERRED:
		if (!nv)
			return vn_json_missing(&c->r, p, "nodes");
		if (pl->nnodes != 1)
			return vn_json_bad(&c->r, vn_json_path_key(kp, p, "nodes"),
					   "policy \"preferred\" takes exactly one node, got %u", pl->nnodes);
		break;
	}
	return 0;
}

static int parse_size_value(struct vn_scn_ctx *c, struct json_object *v, const char *p, uint64_t *out);

/* An optional count >= 1 under a limit of scenario.h, refused naming it: never clamped. */
static int get_count(struct vn_scn_ctx *c, struct json_object *o, const char *path, const char *key, unsigned max,
		     const char *why, unsigned *out)
{
	char kp[VN_JSON_PATH_MAX];
	unsigned n = *out;
	int r = vn_json_get_uint(&c->r, o, path, key, false, 1, UINT32_MAX, "an integer >= 1", &n);

	if (r < 0)
		return r;
	if (n > max)
		return vn_json_bad(&c->r, vn_json_path_key(kp, path, key), "%u, at most %u (%s)", n, max, why);
	*out = n;
	return 0;
}

/* {"node": 3, "memory": "512M", "online": "movable"|"kernel", "remove": false} or {"node": 3, "cpus": 1}. */
static int parse_hotplug(struct vn_scn_ctx *c, struct json_object *v, const char *p, struct vn_scn_hotplug *h)
{
	static const char *const keys[] = {"node", "memory", "cpus", "online", "remove", NULL};
	static const char *const zones[] = {"movable", "kernel", NULL};
	char kp[VN_JSON_PATH_MAX];
	int r = vn_json_check_type(&c->r, v, json_type_object, p), zone = 0;

	if (r < 0 || (r = vn_json_check_keys(&c->r, v, p, keys)) < 0 ||
	    (r = vn_json_get_uint(&c->r, v, p, "node", true, 0, VN_MAX_NODES - 1, NODE_WHAT, &h->node)) < 0 ||
	    (r = get_count(c, v, p, "cpus", VN_HOTPLUG_CPUS_MAX, "the most vCPUs one hotplug plugs", &h->cpus)) < 0)
		return r;
	struct json_object *mem = vn_json_get(v, "memory");
	if (mem) {
		if ((r = parse_size_value(c, mem, vn_json_path_key(kp, p, "memory"), &h->memory)) < 0)
			return r;
		if (h->memory % (UINT64_C(128) << 20))
			return vn_json_bad(&c->r, kp, "%s is not a whole number of 128M memory blocks",
					   json_object_get_string(mem));
	}
	if (!h->memory == !h->cpus)
		return vn_json_bad(&c->r, p, "a hotplug takes \"memory\" or \"cpus\" (one of them)");
	struct json_object *zv = vn_json_get(v, "online");
	if (zv && (r = vn_json_one_of(&c->r, zv, vn_json_path_key(kp, p, "online"), zones, &zone)) < 0)
		return r;
	h->online_kernel = zone == 1;
	struct json_object *rv = vn_json_get(v, "remove");
	if (rv) {
		if ((r = vn_json_check_type(&c->r, rv, json_type_boolean, vn_json_path_key(kp, p, "remove"))) < 0)
			return r;
		h->remove = json_object_get_boolean(rv);
	}
	if (h->remove && h->cpus)
		return vn_json_bad(&c->r, p, "vCPUs cannot be unplugged (only memory can be removed)");
	return 0;
}

static int parse_action(struct vn_scn_ctx *c, struct json_object *v, const char *p, struct vn_scn_action *a)
{
	static const char *const keys[] = {"at_s", "move", "hotplug", NULL};
	static const char *const move_keys[] = {"fraction", "to_node", NULL};
	char mp[VN_JSON_PATH_MAX];
	int r = vn_json_check_type(&c->r, v, json_type_object, p);
	if (r < 0 || (r = vn_json_check_keys(&c->r, v, p, keys)) < 0)
		return r;
	if ((r = vn_json_get_num(&c->r, v, p, "at_s", true, VN_JSON_NONNEG, &a->at_s)) < 0)
		return r;
	struct json_object *m = vn_json_get(v, "move"), *h = vn_json_get(v, "hotplug");
	if (m && h)
		return vn_json_bad(&c->r, p, "an action is a \"move\" or a \"hotplug\", not both");
	if (h) {
		a->is_hotplug = true;
		return parse_hotplug(c, h, vn_json_path_key(mp, p, "hotplug"), &a->hotplug);
	}
	if (!m)
		return vn_json_missing(&c->r, p, "move");
	vn_json_path_key(mp, p, "move");
	if ((r = vn_json_check_type(&c->r, m, json_type_object, mp)) < 0 ||
	    (r = vn_json_check_keys(&c->r, m, mp, move_keys)) < 0)
		return r;
	a->fraction = 1;
	if ((r = vn_json_get_num(&c->r, m, mp, "fraction", false, VN_JSON_FRACTION, &a->fraction)) < 0)
		return r;
	return vn_json_get_uint(&c->r, m, mp, "to_node", true, 0, VN_MAX_NODES - 1, NODE_WHAT, &a->to_node);
}

static int parse_size(struct vn_scn_ctx *c, struct json_object *o, const char *path, uint64_t *out)
{
	char p[VN_JSON_PATH_MAX];
	struct json_object *v = vn_json_get(o, "size");

	if (!v)
		return 0;
	return parse_size_value(c, v, vn_json_path_key(p, path, "size"), out);
}

static int parse_size_value(struct vn_scn_ctx *c, struct json_object *v, const char *p, uint64_t *out)
{
	struct vn_error e = {0};

	if (!json_object_is_type(v, json_type_string))
		return vn_json_expected(&c->r, p, "a size string like \"64M\"", v);
	const char *t = json_object_get_string(v);
	if (vn_size_parse(t, out, &e) < 0)
		return vn_json_bad(&c->r, p, "%s", e.msg);
	/* Workloads read a bare number as MiB, vn_size_parse as bytes: insist on a unit. */
	size_t n = strlen(t);
	while (n && t[n - 1] == ' ')
		n--;
	if (!n || !isalpha((unsigned char)t[n - 1]))
		return vn_json_bad(&c->r, p, "size '%s' needs a unit (K, M, G or T)", t);
	if (*out == 0)
		return vn_json_bad(&c->r, p, "size '%s' is zero", t);
	return 0;
}

static int parse_step(struct vn_scn_ctx *c, struct json_object *v, const char *p, struct vn_scn_step *st)
{
	static const char *const keys[] = {"name",       "workload", "args",    "command",    "placement",
					   "processes",  "threads",  "size",    "duration_s", "cgroup",
					   "background", "actions",  "hotplug", "suite",      NULL};
	static const char *const hotplug_keys[] = {"name", "hotplug", NULL};
	char kp[VN_JSON_PATH_MAX], ap[VN_JSON_PATH_MAX];
	int wl = 0;
	int r = vn_json_check_type(&c->r, v, json_type_object, p);
	if (r < 0 || (r = vn_json_check_keys(&c->r, v, p, keys)) < 0)
		return r;
	if ((r = vn_json_get_str(&c->r, v, p, "name", VN_JSON_REQUIRED | VN_JSON_NAME, &st->name)) < 0)
		return r;
	struct json_object *hv = vn_json_get(v, "hotplug");
	if (hv) {
		/* A hotplug step runs nothing else: every other key would be ignored, so refuse them. */
		if ((r = vn_json_check_keys(&c->r, v, p, hotplug_keys)) < 0)
			return r;
		st->is_hotplug = true;
		st->processes = 1;
		return parse_hotplug(c, hv, vn_json_path_key(kp, p, "hotplug"), &st->hotplug);
	}
	struct json_object *wv = vn_json_get(v, "workload");
	if (!wv)
		return vn_json_missing(&c->r, p, "workload");
	if ((r = vn_json_one_of(&c->r, wv, vn_json_path_key(kp, p, "workload"), vn_scn_workloads, &wl)) < 0)
		return r;
	st->workload = vn_xstrdup(vn_scn_workloads[wl]);
	if ((r = vn_scn_suite_parse(c, v, p, st)) < 0)
		return r;

	bool is_cmd = strcmp(st->workload, "cmd") == 0;
	struct json_object *cmd = vn_json_get(v, "command"), *args = vn_json_get(v, "args");
	size_t argc = 0;
	st->argv = vn_xcalloc(1, sizeof(*st->argv));
	if (cmd && !is_cmd)
		return vn_json_bad(&c->r, vn_json_path_key(kp, p, "command"),
				   "only a \"cmd\" step takes a command (this one runs %s; use \"args\")",
				   st->workload);
	if (is_cmd && !cmd)
		return vn_json_missing(&c->r, p, "command");
	if (cmd) {
		if ((r = vn_json_strv_append(&c->r, cmd, vn_json_path_key(kp, p, "command"), 0, &st->argv, &argc)) < 0)
			return r;
		if (!argc)
			return vn_json_bad(&c->r, kp, "the command is empty");
	}
	if (args && (r = vn_json_strv_append(&c->r, args, vn_json_path_key(kp, p, "args"), 0, &st->argv, &argc)) < 0)
		return r;

	struct json_object *pv = vn_json_get(v, "placement");
	if (pv && (r = parse_placement(c, pv, vn_json_path_key(kp, p, "placement"), &st->placement)) < 0)
		return r;
	st->processes = 1;
	if ((r = get_count(c, v, p, "processes", VN_SCN_RUNNING_MAX, RUNNING_WHY, &st->processes)) < 0 ||
	    (r = get_count(c, v, p, "threads", VN_SCN_THREADS_MAX, "the most a workload's --threads takes",
			   &st->threads)) < 0 ||
	    (r = parse_size(c, v, p, &st->size)) < 0 ||
	    (r = vn_json_get_num(&c->r, v, p, "duration_s", false, VN_JSON_POSITIVE, &st->duration_s)) < 0 ||
	    (r = vn_json_get_str(&c->r, v, p, "cgroup", 0, &st->cgroup)) < 0)
		return r;
	if (st->cgroup) {
		bool found = false;
		for (char **g = c->s->cgroups; g && *g && !found; g++)
			found = strcmp(*g, st->cgroup) == 0;
		if (!found)
			return vn_json_bad(&c->r, vn_json_path_key(kp, p, "cgroup"),
					   "\"%s\" is not declared in $.cgroups", st->cgroup);
	}
	struct json_object *bv = vn_json_get(v, "background");
	if (bv) {
		if ((r = vn_json_check_type(&c->r, bv, json_type_boolean, vn_json_path_key(kp, p, "background"))) < 0)
			return r;
		st->background = json_object_get_boolean(bv);
	}
	struct json_object *acts = vn_json_get(v, "actions");
	if (acts) {
		vn_json_path_key(kp, p, "actions");
		if ((r = vn_json_check_type(&c->r, acts, json_type_array, kp)) < 0)
			return r;
		size_t n = json_object_array_length(acts);
		st->actions = vn_xcalloc(n + 1, sizeof(*st->actions));
		for (size_t i = 0; i < n; i++) {
			r = parse_action(c, json_object_array_get_idx(acts, i), vn_json_path_idx(ap, kp, i),
					 &st->actions[i]);
			if (r < 0)
				return r;
			st->nactions++;
		}
	}
	return 0;
}

int vn_scn_step_ref(struct vn_scn_ctx *c, struct json_object *o, const char *path, char **out)
{
	char p[VN_JSON_PATH_MAX];
	int r = vn_json_get_str(&c->r, o, path, "step", VN_JSON_REQUIRED | VN_JSON_NONEMPTY, out);
	if (r < 0)
		return r;
	for (unsigned i = 0; i < c->s->nsteps; i++)
		if (strcmp(c->s->steps[i].name, *out) == 0)
			return 0;
	_cleanup_strbuf_ struct vn_strbuf list = VN_STRBUF_INIT;
	for (unsigned i = 0; i < c->s->nsteps; i++)
		vn_strbuf_printf(&list, "%s%s", i ? ", " : "", c->s->steps[i].name);
	return vn_json_bad(&c->r, vn_json_path_key(p, path, "step"), "no step named \"%s\" (steps: %s)", *out, list.s);
}

int vn_scn_counter_name(struct vn_scn_ctx *c, struct json_object *o, const char *path, const char *key, char **out)
{
	char p[VN_JSON_PATH_MAX];
	int r = vn_json_get_str(&c->r, o, path, key, VN_JSON_REQUIRED | VN_JSON_NONEMPTY, out);
	if (r < 0)
		return r;
	/* /proc/vmstat field names. */
	for (const char *q = *out; *q; q++)
		if (!islower((unsigned char)*q) && !isdigit((unsigned char)*q) && *q != '_')
			return vn_json_expected(&c->r, vn_json_path_key(p, path, key), "a /proc/vmstat counter name",
						vn_json_get(o, key));
	return 0;
}

int vn_scn_parse_op(struct vn_scn_ctx *c, struct json_object *o, const char *path, enum vn_scn_op *op)
{
	char p[VN_JSON_PATH_MAX];
	struct json_object *v = vn_json_get(o, "op");
	int i = 0;

	if (!v)
		return vn_json_missing(&c->r, path, "op");
	int r = vn_json_one_of(&c->r, v, vn_json_path_key(p, path, "op"), vn_scn_op_names, &i);
	*op = (enum vn_scn_op)i;
	return r;
}

static int parse_assert(struct vn_scn_ctx *c, struct json_object *v, const char *p, struct vn_scn_assert *a)
{
	const char *names[VN_ASSERT_NTYPES + 1] = {NULL};
	char kp[VN_JSON_PATH_MAX];
	int type = 0;
	int r = vn_json_check_type(&c->r, v, json_type_object, p);
	if (r < 0)
		return r;
	struct json_object *tv = vn_json_get(v, "type");
	if (!tv)
		return vn_json_missing(&c->r, p, "type");
	for (unsigned i = 0; i < VN_ASSERT_NTYPES; i++)
		names[i] = vn_assert_types[i].json;
	if ((r = vn_json_one_of(&c->r, tv, vn_json_path_key(kp, p, "type"), names, &type)) < 0)
		return r;
	a->type = (enum vn_scn_assert_type)type;
	const struct vn_assert_type *at = &vn_assert_types[type];
	if ((r = vn_json_check_keys(&c->r, v, p, at->keys)) < 0)
		return r;
	if ((r = vn_json_get_str(&c->r, v, p, "name", 0, &a->name)) < 0)
		return r;
	if (a->name && !*a->name)
		return vn_json_expected(&c->r, vn_json_path_key(kp, p, "name"), "a non-empty string",
					vn_json_get(v, "name"));
	if ((r = at->parse(c, v, p, a)) < 0)
		return r;
	if (!a->name)
		a->name = at->name(a);
	return 0;
}

/* "subsys:event", as tracefs names them (events/SUBSYS/EVENT): a path component each, nothing else. */
static bool tracepoint_ok(const char *s)
{
	size_t sub = strspn(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_");

	if (!sub || s[sub] != ':' || strlen(s) > VN_SCN_TRACEPOINT_LEN)
		return false;
	size_t ev = strspn(s + sub + 1, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_");
	return ev && !s[sub + 1 + ev];
}

static int parse_tracepoints(struct vn_scn_ctx *c, struct json_object *v, const char *p)
{
	char ep[VN_JSON_PATH_MAX];
	size_t n = 0;
	int r;

	c->s->tracepoints = vn_xcalloc(1, sizeof(*c->s->tracepoints));
	if (!v)
		return 0;
	if ((r = vn_json_strv_append(&c->r, v, p, 0, &c->s->tracepoints, &n)) < 0)
		return r;
	if (n > VN_SCN_TRACEPOINTS_MAX)
		return vn_json_bad(&c->r, p, "%zu tracepoints, at most %d", n, VN_SCN_TRACEPOINTS_MAX);
	for (size_t i = 0; i < n; i++) {
		vn_json_path_idx(ep, p, i);
		if (!tracepoint_ok(c->s->tracepoints[i]))
			return vn_json_expected(&c->r, ep,
						"a tracepoint \"SUBSYS:EVENT\" (e.g. \"sched:sched_move_numa\")",
						json_object_array_get_idx(v, i));
		for (size_t j = 0; j < i; j++)
			if (strcmp(c->s->tracepoints[j], c->s->tracepoints[i]) == 0)
				return vn_json_bad(&c->r, ep, "\"%s\" is listed twice", c->s->tracepoints[i]);
	}
	return 0;
}

/*
 * The runner never waits for a background step: when a step starts, its own
 * processes run with those of every background step started before it.
 * (Repeats are runs of their own, each in a guest of its own.)
 */
static int check_running(struct vn_scn_ctx *c)
{
	const struct vn_scenario *s = c->s;
	char ep[VN_JSON_PATH_MAX], kp[VN_JSON_PATH_MAX];
	unsigned earlier = 0;

	for (unsigned i = 0; i < s->nsteps; i++) {
		const struct vn_scn_step *st = &s->steps[i];
		if (!st->workload)
			continue;
		if (earlier + st->processes > VN_SCN_RUNNING_MAX)
			return vn_json_bad(&c->r, vn_json_path_key(kp, vn_json_path_idx(ep, "$.steps", i), "processes"),
					   "%u, and %u of the background steps before it still running: %u, at most %d "
					   "(" RUNNING_WHY ")",
					   st->processes, earlier, earlier + st->processes, VN_SCN_RUNNING_MAX);
		if (st->background)
			earlier += st->processes;
	}
	return 0;
}

/* "boot": "restore" (the default: a booted snapshot where one fits) or "cold". */
static int parse_boot(struct vn_scn_ctx *c, struct json_object *root)
{
	struct json_object *v = vn_json_get(root, "boot");
	int m = 0, r;

	if (v && (r = vn_json_one_of(&c->r, v, "$.boot", vn_scn_boot_modes, &m)) < 0)
		return r;
	c->s->cold = m == 1;
	return 0;
}

/* A variant's args replace a workload step's: the step must be one, and not a command. */
static int check_variant_args(struct vn_scn_ctx *c)
{
	const struct vn_scenario *s = c->s;
	char kp[VN_JSON_PATH_MAX], ep[VN_JSON_PATH_MAX];

	for (unsigned i = 0; i < s->nvariants; i++)
		for (unsigned j = 0; j < s->variants[i].nstep_args; j++) {
			const char *name = s->variants[i].step_args[j].step;
			unsigned k = 0;
			while (k < s->nsteps && strcmp(s->steps[k].name, name) != 0)
				k++;
			vn_json_path_idx(ep, "$.variants", i);
			vn_json_path_key(kp, vn_json_path_key(kp, ep, "args"), name);
			if (k == s->nsteps)
				return vn_json_bad(&c->r, kp, "no step is named \"%s\"", name);
			if (!s->steps[k].workload || strcmp(s->steps[k].workload, "cmd") == 0 || s->steps[k].suite)
				return vn_json_bad(&c->r, kp, "step \"%s\" runs a command: a variant cannot change it",
						   name);
		}
	return 0;
}

/* The run's timing and counts, defaults filled in. */
static int parse_numbers(struct vn_scn_ctx *c, struct json_object *root)
{
	struct vn_scenario *s = c->s;
	int r;

	s->sample_interval_s = 1;
	s->timeout_s = 900;
	s->repeats = 1;
	s->quick_scale = 0.25;
	if ((r = vn_json_get_num(&c->r, root, "$", "sample_interval_s", false, VN_JSON_POSITIVE,
				 &s->sample_interval_s)) < 0 ||
	    (r = vn_json_get_num(&c->r, root, "$", "timeout_s", false, VN_JSON_POSITIVE, &s->timeout_s)) < 0 ||
	    (r = get_count(c, root, "$", "repeats", VN_SCN_REPEATS_MAX, "each one a guest booted", &s->repeats)) < 0 ||
	    (r = vn_json_get_num(&c->r, root, "$", "quick_scale", false, VN_JSON_FRACTION, &s->quick_scale)) < 0)
		return r;
	return 0;
}

/*
 * "share" and "files": --share and --file specs, their syntax and count
 * checked here with the JSON path; the host paths exist when up resolves them.
 */
static int parse_host_strv(struct vn_scn_ctx *c, struct json_object *root, const char *key, unsigned max, char ***out)
{
	char path[VN_JSON_PATH_MAX], ep[VN_JSON_PATH_MAX];
	struct json_object *v = vn_json_get(root, key);
	size_t n = 0;
	int r;

	if (!v)
		return 0;
	snprintf(path, sizeof(path), "$.%s", key);
	if ((r = vn_json_strv_append(&c->r, v, path, VN_JSON_NONEMPTY, out, &n)) < 0)
		return r;
	if (n > max)
		return vn_json_bad(&c->r, path, "%zu entries, at most %u", n, max);
	for (size_t i = 0; i < n; i++) {
		struct vn_error e = {0};
		size_t hlen;
		bool rw;
		_cleanup_free_ char *guest = NULL;
		r = key[0] == 's' ? vn_share_split((*out)[i], &hlen, &guest, &rw, &e)
				  : vn_file_spec_check((*out)[i], &e);
		if (r < 0) {
			vn_json_path_idx(ep, path, i);
			r = vn_json_bad(&c->r, ep, "%s", e.msg);
			vn_error_clear(&e);
			return r;
		}
	}
	return 0;
}

/* Everything but the steps and the assertions: the guest, its kernel, what the run sets and watches. */
static int parse_settings(struct vn_scn_ctx *c, struct json_object *root)
{
	struct vn_scenario *s = c->s;
	struct json_object *v;
	int r;

	if ((r = vn_json_get_str(&c->r, root, "$", "name", VN_JSON_REQUIRED | VN_JSON_NAME, &s->name)) < 0 ||
	    (r = vn_json_get_str(&c->r, root, "$", "description", 0, &s->description)) < 0 ||
	    (r = vn_json_get_str(&c->r, root, "$", "topology", VN_JSON_REQUIRED | VN_JSON_NONEMPTY, &s->topology)) <
		    0 ||
	    (r = vn_json_get_str(&c->r, root, "$", "kernel", 0, &s->kernel)) < 0 ||
	    (r = vn_json_get_str(&c->r, root, "$", "append", 0, &s->append)) < 0 ||
	    (r = vn_json_get_str(&c->r, root, "$", "image", VN_JSON_NAME, &s->image)) < 0 ||
	    (r = parse_arch(c, root, "$", &s->arch)) < 0)
		return r;
	if ((v = vn_json_get(root, "sysctls")) && (r = parse_sysctls(c, v, "$.sysctls", &s->nsysctls, &s->sysctls)) < 0)
		return r;
	bool given;
	if ((r = get_bool(c, root, "$", "virtual_time", &s->virtual_time, &given)) < 0)
		return r;
	bool demote = false;
	if ((r = get_bool(c, root, "$", "demotion_enabled", &demote, &given)) < 0)
		return r;
	s->demotion_enabled = !given ? 0 : demote ? 1 : -1;
	if ((v = vn_json_get(root, "variants")) && (r = parse_variants(c, v, "$.variants")) < 0)
		return r;
	if ((v = vn_json_get(root, "thp"))) {
		int m = 0;
		if ((r = vn_json_one_of(&c->r, v, "$.thp", vn_scn_thp_modes, &m)) < 0)
			return r;
		s->thp = vn_xstrdup(vn_scn_thp_modes[m]);
	}
	if ((r = parse_boot(c, root)) < 0)
		return r;
	if ((v = vn_json_get(root, "hugetlb")) && (r = parse_hugetlb(c, v, "$.hugetlb")) < 0)
		return r;
	size_t ncg = 0;
	s->cgroups = vn_xcalloc(1, sizeof(*s->cgroups));
	if ((v = vn_json_get(root, "cgroups")) &&
	    (r = vn_json_strv_append(&c->r, v, "$.cgroups", VN_JSON_NAME, &s->cgroups, &ncg)) < 0)
		return r;
	size_t nwith = 0;
	s->with = vn_xcalloc(1, sizeof(*s->with));
	if ((v = vn_json_get(root, "with")) &&
	    (r = vn_json_strv_append(&c->r, v, "$.with", VN_JSON_NAME, &s->with, &nwith)) < 0)
		return r;
	if ((r = parse_host_strv(c, root, "share", VN_SHARES_MAX, &s->share)) < 0 ||
	    (r = parse_host_strv(c, root, "files", VN_FILES_MAX, &s->files)) < 0)
		return r;
	if ((r = parse_tracepoints(c, vn_json_get(root, "tracepoints"), "$.tracepoints")) < 0)
		return r;
	if ((r = get_bool(c, root, "$", "locality", &s->locality, &given)) < 0)
		return r;
	return parse_numbers(c, root);
}

/* "steps", at least one, their names unique. */
static int parse_steps(struct vn_scn_ctx *c, struct json_object *root)
{
	struct vn_scenario *s = c->s;
	char kp[VN_JSON_PATH_MAX], ep[VN_JSON_PATH_MAX];
	struct json_object *v;
	int r;

	if (!(v = vn_json_get(root, "steps")))
		return vn_json_missing(&c->r, "$", "steps");
	if ((r = vn_json_check_type(&c->r, v, json_type_array, "$.steps")) < 0)
		return r;
	size_t n = json_object_array_length(v);
	if (!n)
		return vn_json_bad(&c->r, "$.steps", "a scenario needs at least one step");
	s->steps = vn_xcalloc(n, sizeof(*s->steps));
	for (size_t i = 0; i < n; i++) {
		vn_json_path_idx(ep, "$.steps", i);
		/* Counted before parsing so that free() sees a half-filled step. */
		s->nsteps++;
		if ((r = parse_step(c, json_object_array_get_idx(v, i), ep, &s->steps[i])) < 0)
			return r;
		for (size_t j = 0; j < i; j++)
			if (strcmp(s->steps[j].name, s->steps[i].name) == 0)
				return vn_json_bad(&c->r, vn_json_path_key(kp, ep, "name"),
						   "step name \"%s\" is already used by $.steps[%zu]", s->steps[i].name,
						   j);
	}
	return 0;
}

/* "assertions", each parsed by its type; their names are unique. */
static int parse_asserts(struct vn_scn_ctx *c, struct json_object *root)
{
	struct vn_scenario *s = c->s;
	char ep[VN_JSON_PATH_MAX];
	struct json_object *v = vn_json_get(root, "assertions");
	int r;

	if (!v)
		return 0;
	if ((r = vn_json_check_type(&c->r, v, json_type_array, "$.assertions")) < 0)
		return r;
	size_t n = json_object_array_length(v);
	s->asserts = vn_xcalloc(n + 1, sizeof(*s->asserts));
	for (size_t i = 0; i < n; i++) {
		vn_json_path_idx(ep, "$.assertions", i);
		s->nasserts++;
		if ((r = parse_assert(c, json_object_array_get_idx(v, i), ep, &s->asserts[i])) < 0)
			return r;
		/* Names become JUnit testcase names, which CI systems key on. */
		for (size_t j = 0; j < i; j++)
			if (strcmp(s->asserts[j].name, s->asserts[i].name) == 0)
				return vn_json_bad(&c->r, ep,
						   "assertion name \"%s\" is already used by $.assertions[%zu]",
						   s->asserts[i].name, j);
	}
	return 0;
}

static int parse_top(struct vn_scn_ctx *c, struct json_object *root)
{
	static const char *const keys[] = {"name",        "description",
					   "topology",    "kernel",
					   "append",      "sysctls",
					   "thp",         "hugetlb",
					   "cgroups",     "sample_interval_s",
					   "timeout_s",   "repeats",
					   "quick_scale", "steps",
					   "assertions",  "variants",
					   "with",        "tracepoints",
					   "image",       "arch",
					   "boot",        "virtual_time",
					   "locality",    "share",
					   "files",       "demotion_enabled",
					   NULL};
	int r;

	if ((r = vn_json_check_type(&c->r, root, json_type_object, "$")) < 0 ||
	    (r = vn_json_check_keys(&c->r, root, "$", keys)) < 0 || (r = parse_settings(c, root)) < 0 ||
	    (r = parse_steps(c, root)) < 0 || (r = check_running(c)) < 0 || (r = check_variant_args(c)) < 0)
		return r;
	return parse_asserts(c, root);
}

int vn_scenario_parse(const char *text, const char *name, struct vn_scenario **out, struct vn_error *err)
{
	_cleanup_json_ struct json_object *root = NULL;
	int r;

	if (strlen(text) > INT32_MAX)
		return vn_input_error(err, "%s: too large for a scenario", name);
	if ((r = vn_json_parse(text, name, &root, err)) < 0)
		return r;
	_cleanup_scenario_ struct vn_scenario *s = vn_xcalloc(1, sizeof(*s));
	struct vn_scn_ctx c = {.r = {.file = name, .err = err}, .s = s};
	s->path = vn_xstrdup(name);
	if ((r = parse_top(&c, root)) < 0)
		return r;
	*out = steal_pointer(&s);
	return 0;
}

int vn_scenario_find(const char *arg, char **path, struct vn_error *err)
{
	return vn_paths_find(arg, "scenario", "scenarios", ".json", NULL, path, err);
}

int vn_scenario_load(const char *path, struct vn_scenario **out, struct vn_error *err)
{
	_cleanup_free_ char *text = NULL;
	size_t n;
	int rc;

	/* A regular file only: a FIFO or device named by mistake must not block or stream forever. */
	if ((rc = vn_file_read(path, SCN_MAX_FILE, &text, &n, err)) == -EFBIG) {
		vn_error_clear(err);
		return vn_input_error(err, "%s: larger than %u bytes, not a scenario", path, SCN_MAX_FILE);
	}
	if (rc < 0)
		return rc;
	if (memchr(text, '\0', n))
		return vn_input_error(err, "%s: contains a NUL byte, not a JSON text", path);
	return vn_scenario_parse(text, path, out, err);
}
