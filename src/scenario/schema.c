/*
 * Scenario files: JSON (json-c) into struct vn_scenario, and back.
 *
 * json-c's tokener keeps no line numbers for values, so every schema error
 * names the JSON path instead ("x.json: $.steps[1].size: ..."); only
 * malformed JSON, where the tokener stops at a byte offset, gets FILE:LINE:COL.
 * The format is documented in docs/scenarios.md; keep the two in step.
 */
#include "scenario/scenario.h"

#include <ctype.h>
#include <errno.h>
#include <float.h>
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <json-c/json.h>

#include "util/cleanup.h"
#include "util/file.h"
#include "util/parse.h"
#include "util/strbuf.h"

/* Bigger files are certainly not hand-written scenarios. */
#define SCN_MAX_FILE (1u << 20)
#define PATH_MAX_LEN 256

static const char *const workloads[] = {"stream", "memfollow", "anon-cow-rand", "groupfair", "multi-instance", "cmd", NULL};
static const char *const thp_modes[] = {"always", "madvise", "never", NULL};
static const char *const policies[] = {"none", "cpunodebind", "membind", "preferred", "interleave", NULL};
static const char *const op_names[] = {"<", "<=", ">", ">=", "==", "!=", NULL};
static const char *const assert_types[] = {"fallback", "distances", "counter", "ratio", "memory_follows",
					   "running_per_node", "metric", "memory_on_node", NULL};

struct ctx {
	const char *file;
	struct vn_error *err;
	struct vn_scenario *s;
};

static int bad(struct ctx *c, const char *path, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static int bad(struct ctx *c, const char *path, const char *fmt, ...)
{
	char msg[1024];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	return vn_input_error(c->err, "%s: %s: %s", c->file, path, msg);
}

/* Paths are for messages only: a silly long key just shows as cut short. */
static const char *mark_truncated(char *buf, int n)
{
	if (n >= PATH_MAX_LEN)
		memcpy(buf + PATH_MAX_LEN - 4, "...", 4);
	return buf;
}

static const char *path_key(char *buf, const char *parent, const char *key)
{
	bool plain = *key && !isdigit((unsigned char)*key);

	for (const char *p = key; *p && plain; p++)
		plain = isalnum((unsigned char)*p) || *p == '_';
	int n = plain ? snprintf(buf, PATH_MAX_LEN, "%s.%s", parent, key)
		      : snprintf(buf, PATH_MAX_LEN, "%s[\"%s\"]", parent, key);
	return mark_truncated(buf, n);
}

static const char *path_idx(char *buf, const char *parent, size_t i)
{
	return mark_truncated(buf, snprintf(buf, PATH_MAX_LEN, "%s[%zu]", parent, i));
}

/* The offending value as the user wrote it, short enough for one line. */
static const char *show(struct json_object *v, char *buf, size_t len)
{
	switch (json_object_get_type(v)) {
	case json_type_null: return "null";
	case json_type_object: return "an object";
	case json_type_array: return "an array";
	default: break;
	}
	const char *s = json_object_to_json_string_ext(v, JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE);
	size_t n = strlen(s);
	if (n < len)
		return s;
	memcpy(buf, s, len - 4);
	memcpy(buf + len - 4, "...", 4);
	return buf;
}

static int expected(struct ctx *c, const char *path, const char *what, struct json_object *v)
{
	char b[128];
	return bad(c, path, "expected %s, got %s", what, show(v, b, sizeof(b)));
}

static int check_type(struct ctx *c, struct json_object *v, enum json_type t, const char *path)
{
	/* An integer is a number too; the reverse is checked where it matters. */
	if (json_object_is_type(v, t) || (t == json_type_double && json_object_is_type(v, json_type_int)))
		return 0;
	switch (t) {
	case json_type_object: return expected(c, path, "an object", v);
	case json_type_array: return expected(c, path, "an array", v);
	case json_type_string: return expected(c, path, "a string", v);
	case json_type_boolean: return expected(c, path, "true or false", v);
	case json_type_double: return expected(c, path, "a number", v);
	case json_type_int: return expected(c, path, "an integer", v);
	default: return expected(c, path, "something else", v);
	}
}

static int check_keys(struct ctx *c, struct json_object *o, const char *path, const char *const *known)
{
	json_object_object_foreach(o, key, val) {
		(void)val;
		bool ok = false;
		for (const char *const *k = known; *k && !ok; k++)
			ok = strcmp(*k, key) == 0;
		if (ok)
			continue;
		_cleanup_strbuf_ struct vn_strbuf list = VN_STRBUF_INIT;
		for (const char *const *k = known; *k; k++)
			vn_strbuf_printf(&list, "%s%s", k == known ? "" : ", ", *k);
		return bad(c, path, "unknown key \"%s\" (known: %s)", key, list.s ? list.s : "none");
	}
	return 0;
}

static struct json_object *get(struct json_object *o, const char *key)
{
	struct json_object *v = NULL;
	return json_object_object_get_ex(o, key, &v) ? v : NULL;
}

static int missing(struct ctx *c, const char *path, const char *key)
{
	return bad(c, path, "missing required key \"%s\"", key);
}

static int one_of(struct ctx *c, struct json_object *v, const char *path, const char *const *names, int *out)
{
	int r = check_type(c, v, json_type_string, path);
	if (r < 0)
		return r;
	const char *s = json_object_get_string(v);
	for (int i = 0; names[i]; i++)
		if (strcmp(names[i], s) == 0) {
			*out = i;
			return 0;
		}
	_cleanup_strbuf_ struct vn_strbuf list = VN_STRBUF_INIT;
	vn_strbuf_printf(&list, "one of");
	for (int i = 0; names[i]; i++)
		vn_strbuf_printf(&list, "%s \"%s\"", i ? "," : "", names[i]);
	return expected(c, path, list.s, v);
}

static bool name_ok(const char *s)
{
	if (!*s || *s == '.')
		return false;
	for (; *s; s++)
		if (!isalnum((unsigned char)*s) && !strchr("-_.", *s))
			return false;
	return true;
}

/* A string field; absent leaves *out alone. want_name: a file-name-safe name. */
static int opt_str(struct ctx *c, struct json_object *o, const char *path, const char *key, bool required,
		   bool want_name, char **out)
{
	char p[PATH_MAX_LEN];
	struct json_object *v = get(o, key);

	if (!v)
		return required ? missing(c, path, key) : 0;
	path_key(p, path, key);
	int r = check_type(c, v, json_type_string, p);
	if (r < 0)
		return r;
	const char *s = json_object_get_string(v);
	if (want_name && !name_ok(s))
		return expected(c, p, "a name of letters, digits, '-', '_' and '.' (not starting with '.')", v);
	if (!want_name && required && !*s)
		return expected(c, p, "a non-empty string", v);
	free(*out);
	*out = strdup(s);
	return *out ? 0 : -ENOMEM;
}

enum range { R_POSITIVE, R_NONNEG, R_FRACTION };

static int num_value(struct ctx *c, struct json_object *v, const char *p, enum range rg, double *out)
{
	static const char *const what[] = {"a number > 0", "a number >= 0", "a fraction in (0, 1]"};
	if (!json_object_is_type(v, json_type_double) && !json_object_is_type(v, json_type_int))
		return expected(c, p, what[rg], v);
	double d = json_object_get_double(v);
	bool ok = isfinite(d) && (rg == R_NONNEG ? d >= 0 : d > 0) && (rg != R_FRACTION || d <= 1);
	if (!ok)
		return expected(c, p, what[rg], v);
	*out = d;
	return 0;
}

static int opt_num(struct ctx *c, struct json_object *o, const char *path, const char *key, bool required,
		   enum range rg, double *out)
{
	char p[PATH_MAX_LEN];
	struct json_object *v = get(o, key);

	if (!v)
		return required ? missing(c, path, key) : 0;
	return num_value(c, v, path_key(p, path, key), rg, out);
}

/* Any finite number, for thresholds. */
static int opt_threshold(struct ctx *c, struct json_object *o, const char *path, const char *key, double *out)
{
	char p[PATH_MAX_LEN];
	struct json_object *v = get(o, key);

	if (!v)
		return missing(c, path, key);
	path_key(p, path, key);
	if ((!json_object_is_type(v, json_type_double) && !json_object_is_type(v, json_type_int)) ||
	    !isfinite(json_object_get_double(v)))
		return expected(c, p, "a number", v);
	*out = json_object_get_double(v);
	return 0;
}

static int uint_value(struct ctx *c, struct json_object *v, const char *p, int64_t min, int64_t max,
		      const char *what, unsigned *out)
{
	if (!json_object_is_type(v, json_type_int))
		return expected(c, p, what, v);
	int64_t n = json_object_get_int64(v);
	if (n < min || n > max)
		return expected(c, p, what, v);
	*out = (unsigned)n;
	return 0;
}

static int opt_uint(struct ctx *c, struct json_object *o, const char *path, const char *key, bool required,
		    int64_t min, int64_t max, const char *what, unsigned *out)
{
	char p[PATH_MAX_LEN];
	struct json_object *v = get(o, key);

	if (!v)
		return required ? missing(c, path, key) : 0;
	return uint_value(c, v, path_key(p, path, key), min, max, what, out);
}

#define NODE_WHAT "a node number (0-127)"

static int node_list(struct ctx *c, struct json_object *v, const char *p, unsigned *nodes, unsigned *n)
{
	char ep[PATH_MAX_LEN];
	int r = check_type(c, v, json_type_array, p);
	if (r < 0)
		return r;
	size_t len = json_object_array_length(v);
	if (len > VN_SCN_MAX_NODES)
		return bad(c, p, "%zu nodes listed, at most %d", len, VN_SCN_MAX_NODES);
	for (size_t i = 0; i < len; i++) {
		path_idx(ep, p, i);
		r = uint_value(c, json_object_array_get_idx(v, i), ep, 0, VN_SCN_MAX_NODES - 1, NODE_WHAT, &nodes[i]);
		if (r < 0)
			return r;
		for (size_t j = 0; j < i; j++)
			if (nodes[j] == nodes[i])
				return bad(c, ep, "node %u is listed twice", nodes[i]);
	}
	*n = (unsigned)len;
	return 0;
}

/* Appends the array's strings to *vec (NULL-terminated, *n entries). */
static int str_array(struct ctx *c, struct json_object *v, const char *p, bool names, char ***vec, size_t *n)
{
	char ep[PATH_MAX_LEN];
	int r = check_type(c, v, json_type_array, p);
	if (r < 0)
		return r;
	size_t len = json_object_array_length(v);
	char **nv = realloc(*vec, (*n + len + 1) * sizeof(*nv));
	if (!nv)
		return -ENOMEM;
	*vec = nv;
	for (size_t i = 0; i < len; i++) {
		struct json_object *e = json_object_array_get_idx(v, i);
		path_idx(ep, p, i);
		r = check_type(c, e, json_type_string, ep);
		if (r < 0)
			return r;
		const char *s = json_object_get_string(e);
		if (names && (!name_ok(s)))
			return expected(c, ep, "a name of letters, digits, '-', '_' and '.' (not starting with '.')", e);
		for (size_t j = 0; names && j < *n; j++)
			if (strcmp(nv[j], s) == 0)
				return bad(c, ep, "\"%s\" is listed twice", s);
		nv[*n] = strdup(s);
		if (!nv[*n])
			return -ENOMEM;
		nv[++*n] = NULL;
	}
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

static int parse_sysctls(struct ctx *c, struct json_object *v, const char *p)
{
	char kp[PATH_MAX_LEN];
	struct vn_scenario *s = c->s;
	int r = check_type(c, v, json_type_object, p);
	if (r < 0)
		return r;
	s->sysctls = calloc((size_t)json_object_object_length(v) + 1, sizeof(*s->sysctls));
	if (!s->sysctls)
		return -ENOMEM;
	json_object_object_foreach(v, key, val) {
		path_key(kp, p, key);
		if (!sysctl_key_ok(key))
			return bad(c, kp, "expected a dotted sysctl name like kernel.numa_balancing, got \"%s\"", key);
		char buf[64];
		const char *text;
		switch (json_object_get_type(val)) {
		case json_type_boolean:
			text = json_object_get_boolean(val) ? "1" : "0";
			break;
		case json_type_int:
			snprintf(buf, sizeof(buf), "%" PRId64, json_object_get_int64(val));
			text = buf;
			break;
		case json_type_double:
			if (!isfinite(json_object_get_double(val)))
				return expected(c, kp, "a number, string or boolean", val);
			snprintf(buf, sizeof(buf), "%.15g", json_object_get_double(val));
			text = buf;
			break;
		case json_type_string:
			text = json_object_get_string(val);
			/* The value is written to a /proc/sys file in one write(). */
			if (!*text || strpbrk(text, "\n\r"))
				return expected(c, kp, "a non-empty one-line value", val);
			break;
		default:
			return expected(c, kp, "a number, string or boolean", val);
		}
		struct vn_scn_sysctl *e = &s->sysctls[s->nsysctls++];
		e->key = strdup(key);
		e->value = strdup(text);
		if (!e->key || !e->value)
			return -ENOMEM;
	}
	return 0;
}

static int parse_hugetlb(struct ctx *c, struct json_object *v, const char *p)
{
	char kp[PATH_MAX_LEN];
	struct vn_scenario *s = c->s;
	int r = check_type(c, v, json_type_object, p);
	if (r < 0)
		return r;
	s->hugetlb = calloc((size_t)json_object_object_length(v) + 1, sizeof(*s->hugetlb));
	if (!s->hugetlb)
		return -ENOMEM;
	json_object_object_foreach(v, key, val) {
		struct vn_error e = {0};
		long node;
		path_key(kp, p, key);
		if (vn_int_parse(key, 0, VN_SCN_MAX_NODES - 1, &node, &e) < 0)
			return bad(c, kp, "expected a node number (0-127) as key, got \"%s\"", key);
		struct vn_scn_hugetlb *h = &s->hugetlb[s->nhugetlb];
		h->node = (unsigned)node;
		r = uint_value(c, val, kp, 0, 1 << 24, "a count of 2 MiB pages", &h->pages);
		if (r < 0)
			return r;
		s->nhugetlb++;
	}
	return 0;
}

static int parse_placement(struct ctx *c, struct json_object *v, const char *p, struct vn_scn_placement *pl)
{
	static const char *const keys[] = {"policy", "nodes", "cpu_nodes", NULL};
	char kp[PATH_MAX_LEN];
	int policy = 0;
	int r = check_type(c, v, json_type_object, p);
	if (r < 0)
		return r;
	r = check_keys(c, v, p, keys);
	if (r < 0)
		return r;
	struct json_object *pv = get(v, "policy");
	if (!pv)
		return missing(c, p, "policy");
	r = one_of(c, pv, path_key(kp, p, "policy"), policies, &policy);
	if (r < 0)
		return r;
	pl->policy = (enum vn_placement_policy)policy;
	struct json_object *nv = get(v, "nodes"), *cv = get(v, "cpu_nodes");
	if (nv && (r = node_list(c, nv, path_key(kp, p, "nodes"), pl->nodes, &pl->nnodes)) < 0)
		return r;
	if (cv && (r = node_list(c, cv, path_key(kp, p, "cpu_nodes"), pl->cpu_nodes, &pl->ncpu_nodes)) < 0)
		return r;
	switch (pl->policy) {
	case VN_PLACE_NONE:
		if (nv || cv)
			return bad(c, p, "policy \"none\" takes no nodes");
		break;
	case VN_PLACE_CPUNODEBIND:
		if (cv)
			return bad(c, path_key(kp, p, "cpu_nodes"),
				   "policy \"cpunodebind\" binds CPUs to \"nodes\"; it takes no \"cpu_nodes\"");
		/* fall through */
	case VN_PLACE_MEMBIND:
	case VN_PLACE_INTERLEAVE:
		if (!nv)
			return missing(c, p, "nodes");
		if (!pl->nnodes)
			return bad(c, path_key(kp, p, "nodes"), "policy \"%s\" needs at least one node",
				   policies[pl->policy]);
		break;
	case VN_PLACE_PREFERRED:
		if (!nv)
			return missing(c, p, "nodes");
		if (pl->nnodes != 1)
			return bad(c, path_key(kp, p, "nodes"), "policy \"preferred\" takes exactly one node, got %u",
				   pl->nnodes);
		break;
	}
	return 0;
}

static int parse_action(struct ctx *c, struct json_object *v, const char *p, struct vn_scn_action *a)
{
	static const char *const keys[] = {"at_s", "move", NULL};
	static const char *const move_keys[] = {"fraction", "to_node", NULL};
	char mp[PATH_MAX_LEN];
	int r = check_type(c, v, json_type_object, p);
	if (r < 0 || (r = check_keys(c, v, p, keys)) < 0)
		return r;
	if ((r = opt_num(c, v, p, "at_s", true, R_NONNEG, &a->at_s)) < 0)
		return r;
	struct json_object *m = get(v, "move");
	if (!m)
		return missing(c, p, "move");
	path_key(mp, p, "move");
	if ((r = check_type(c, m, json_type_object, mp)) < 0 || (r = check_keys(c, m, mp, move_keys)) < 0)
		return r;
	a->fraction = 1;
	if ((r = opt_num(c, m, mp, "fraction", false, R_FRACTION, &a->fraction)) < 0)
		return r;
	return opt_uint(c, m, mp, "to_node", true, 0, VN_SCN_MAX_NODES - 1, NODE_WHAT, &a->to_node);
}

static int parse_size(struct ctx *c, struct json_object *o, const char *path, uint64_t *out)
{
	char p[PATH_MAX_LEN];
	struct json_object *v = get(o, "size");
	struct vn_error e = {0};

	if (!v)
		return 0;
	path_key(p, path, "size");
	if (!json_object_is_type(v, json_type_string))
		return expected(c, p, "a size string like \"64M\"", v);
	const char *t = json_object_get_string(v);
	if (vn_size_parse(t, out, &e) < 0)
		return bad(c, p, "%s", e.msg);
	/* Workloads read a bare number as MiB, vn_size_parse as bytes: insist on a unit. */
	size_t n = strlen(t);
	while (n && t[n - 1] == ' ')
		n--;
	if (!n || !isalpha((unsigned char)t[n - 1]))
		return bad(c, p, "size '%s' needs a unit (K, M, G or T)", t);
	if (*out == 0)
		return bad(c, p, "size '%s' is zero", t);
	return 0;
}

static int parse_step(struct ctx *c, struct json_object *v, const char *p, struct vn_scn_step *st)
{
	static const char *const keys[] = {"name", "workload", "args", "command", "placement", "processes",
					   "threads", "size", "duration_s", "cgroup", "background", "actions", NULL};
	char kp[PATH_MAX_LEN], ap[PATH_MAX_LEN];
	int wl = 0;
	int r = check_type(c, v, json_type_object, p);
	if (r < 0 || (r = check_keys(c, v, p, keys)) < 0)
		return r;
	if ((r = opt_str(c, v, p, "name", true, true, &st->name)) < 0)
		return r;
	struct json_object *wv = get(v, "workload");
	if (!wv)
		return missing(c, p, "workload");
	if ((r = one_of(c, wv, path_key(kp, p, "workload"), workloads, &wl)) < 0)
		return r;
	st->workload = strdup(workloads[wl]);
	if (!st->workload)
		return -ENOMEM;

	bool is_cmd = strcmp(st->workload, "cmd") == 0;
	struct json_object *cmd = get(v, "command"), *args = get(v, "args");
	size_t argc = 0;
	st->argv = calloc(1, sizeof(*st->argv));
	if (!st->argv)
		return -ENOMEM;
	if (cmd && !is_cmd)
		return bad(c, path_key(kp, p, "command"), "only a \"cmd\" step takes a command (this one runs %s; use \"args\")",
			   st->workload);
	if (is_cmd && !cmd)
		return missing(c, p, "command");
	if (cmd) {
		if ((r = str_array(c, cmd, path_key(kp, p, "command"), false, &st->argv, &argc)) < 0)
			return r;
		if (!argc)
			return bad(c, kp, "the command is empty");
	}
	if (args && (r = str_array(c, args, path_key(kp, p, "args"), false, &st->argv, &argc)) < 0)
		return r;

	struct json_object *pv = get(v, "placement");
	if (pv && (r = parse_placement(c, pv, path_key(kp, p, "placement"), &st->placement)) < 0)
		return r;
	st->processes = 1;
	if ((r = opt_uint(c, v, p, "processes", false, 1, 4096, "an integer >= 1", &st->processes)) < 0 ||
	    (r = opt_uint(c, v, p, "threads", false, 1, 4096, "an integer >= 1", &st->threads)) < 0 ||
	    (r = parse_size(c, v, p, &st->size)) < 0 ||
	    (r = opt_num(c, v, p, "duration_s", false, R_POSITIVE, &st->duration_s)) < 0 ||
	    (r = opt_str(c, v, p, "cgroup", false, false, &st->cgroup)) < 0)
		return r;
	if (st->cgroup) {
		bool found = false;
		for (char **g = c->s->cgroups; g && *g && !found; g++)
			found = strcmp(*g, st->cgroup) == 0;
		if (!found)
			return bad(c, path_key(kp, p, "cgroup"), "\"%s\" is not declared in $.cgroups", st->cgroup);
	}
	struct json_object *bv = get(v, "background");
	if (bv) {
		if ((r = check_type(c, bv, json_type_boolean, path_key(kp, p, "background"))) < 0)
			return r;
		st->background = json_object_get_boolean(bv);
	}
	struct json_object *acts = get(v, "actions");
	if (acts) {
		path_key(kp, p, "actions");
		if ((r = check_type(c, acts, json_type_array, kp)) < 0)
			return r;
		size_t n = json_object_array_length(acts);
		st->actions = calloc(n + 1, sizeof(*st->actions));
		if (!st->actions)
			return -ENOMEM;
		for (size_t i = 0; i < n; i++) {
			r = parse_action(c, json_object_array_get_idx(acts, i), path_idx(ap, kp, i), &st->actions[i]);
			if (r < 0)
				return r;
			st->nactions++;
		}
	}
	return 0;
}

static int step_ref(struct ctx *c, struct json_object *o, const char *path, char **out)
{
	char p[PATH_MAX_LEN];
	int r = opt_str(c, o, path, "step", true, false, out);
	if (r < 0)
		return r;
	for (unsigned i = 0; i < c->s->nsteps; i++)
		if (strcmp(c->s->steps[i].name, *out) == 0)
			return 0;
	_cleanup_strbuf_ struct vn_strbuf list = VN_STRBUF_INIT;
	for (unsigned i = 0; i < c->s->nsteps; i++)
		vn_strbuf_printf(&list, "%s%s", i ? ", " : "", c->s->steps[i].name);
	return bad(c, path_key(p, path, "step"), "no step named \"%s\" (steps: %s)", *out, list.s);
}

static int counter_name(struct ctx *c, struct json_object *o, const char *path, const char *key, char **out)
{
	char p[PATH_MAX_LEN];
	int r = opt_str(c, o, path, key, true, false, out);
	if (r < 0)
		return r;
	/* /proc/vmstat field names. */
	for (const char *q = *out; *q; q++)
		if (!islower((unsigned char)*q) && !isdigit((unsigned char)*q) && *q != '_')
			return expected(c, path_key(p, path, key), "a /proc/vmstat counter name", get(o, key));
	return 0;
}

static int parse_op(struct ctx *c, struct json_object *o, const char *path, enum vn_scn_op *op)
{
	char p[PATH_MAX_LEN];
	struct json_object *v = get(o, "op");
	int i = 0;

	if (!v)
		return missing(c, path, "op");
	int r = one_of(c, v, path_key(p, path, "op"), op_names, &i);
	*op = (enum vn_scn_op)i;
	return r;
}

static char *default_name(const struct vn_scn_assert *a)
{
	char *n = NULL;
	int r = -1;

	switch (a->type) {
	case VN_ASSERT_FALLBACK:
		r = asprintf(&n, "fallback order matches model %s", vn_fallback_model_name(a->model));
		break;
	case VN_ASSERT_DISTANCES:
		r = asprintf(&n, "guest distances match the topology");
		break;
	case VN_ASSERT_COUNTER:
		r = asprintf(&n, "counter %s %s %g", a->counter, vn_scn_op_name(a->op), a->value);
		break;
	case VN_ASSERT_RATIO:
		r = asprintf(&n, "ratio %s / %s %s %g", a->counter, a->denominator, vn_scn_op_name(a->op), a->value);
		break;
	case VN_ASSERT_MEMORY_FOLLOWS:
		r = asprintf(&n, "memory of %s follows its CPUs: >= %g within %g s", a->step, a->fraction, a->within_s);
		break;
	case VN_ASSERT_RUNNING_PER_NODE:
		r = asprintf(&n, "running threads of %s per node <= node CPUs + %g", a->step, a->tolerance);
		break;
	case VN_ASSERT_METRIC:
		r = asprintf(&n, "metric %s %s %s %g", a->step, a->path, vn_scn_op_name(a->op), a->value);
		break;
	case VN_ASSERT_MEMORY_ON_NODE:
		r = asprintf(&n, "memory of %s on node %u >= %g", a->step, a->node, a->fraction);
		break;
	}
	return r < 0 ? NULL : n;
}

static int parse_assert(struct ctx *c, struct json_object *v, const char *p, struct vn_scn_assert *a)
{
	static const char *const keys[][8] = {
		[VN_ASSERT_FALLBACK] = {"type", "name", "model", NULL},
		[VN_ASSERT_DISTANCES] = {"type", "name", NULL},
		[VN_ASSERT_COUNTER] = {"type", "name", "counter", "op", "value", NULL},
		[VN_ASSERT_RATIO] = {"type", "name", "numerator", "denominator", "op", "value", NULL},
		[VN_ASSERT_MEMORY_FOLLOWS] = {"type", "name", "step", "fraction", "within_s", NULL},
		[VN_ASSERT_RUNNING_PER_NODE] = {"type", "name", "step", "tolerance", NULL},
		[VN_ASSERT_METRIC] = {"type", "name", "step", "path", "op", "value", NULL},
		[VN_ASSERT_MEMORY_ON_NODE] = {"type", "name", "step", "node", "fraction", NULL},
	};
	char kp[PATH_MAX_LEN];
	int type = 0;
	int r = check_type(c, v, json_type_object, p);
	if (r < 0)
		return r;
	struct json_object *tv = get(v, "type");
	if (!tv)
		return missing(c, p, "type");
	if ((r = one_of(c, tv, path_key(kp, p, "type"), assert_types, &type)) < 0)
		return r;
	a->type = (enum vn_scn_assert_type)type;
	if ((r = check_keys(c, v, p, keys[type])) < 0)
		return r;
	if ((r = opt_str(c, v, p, "name", false, false, &a->name)) < 0)
		return r;
	if (a->name && !*a->name)
		return expected(c, path_key(kp, p, "name"), "a non-empty string", get(v, "name"));

	switch (a->type) {
	case VN_ASSERT_FALLBACK: {
		_cleanup_free_ char *model = NULL;
		a->model = VN_FALLBACK_DEFAULT;
		if ((r = opt_str(c, v, p, "model", false, false, &model)) < 0)
			return r;
		struct vn_error e = {0};
		if (model && vn_fallback_model_lookup(model, &a->model, &e) < 0)
			return bad(c, path_key(kp, p, "model"), "%s", e.msg);
		break;
	}
	case VN_ASSERT_DISTANCES:
		break;
	case VN_ASSERT_COUNTER:
		if ((r = counter_name(c, v, p, "counter", &a->counter)) < 0 || (r = parse_op(c, v, p, &a->op)) < 0 ||
		    (r = opt_threshold(c, v, p, "value", &a->value)) < 0)
			return r;
		break;
	case VN_ASSERT_RATIO:
		if ((r = counter_name(c, v, p, "numerator", &a->counter)) < 0 ||
		    (r = counter_name(c, v, p, "denominator", &a->denominator)) < 0 ||
		    (r = parse_op(c, v, p, &a->op)) < 0 || (r = opt_threshold(c, v, p, "value", &a->value)) < 0)
			return r;
		break;
	case VN_ASSERT_MEMORY_FOLLOWS:
		if ((r = step_ref(c, v, p, &a->step)) < 0 ||
		    (r = opt_num(c, v, p, "fraction", true, R_FRACTION, &a->fraction)) < 0 ||
		    (r = opt_num(c, v, p, "within_s", true, R_POSITIVE, &a->within_s)) < 0)
			return r;
		break;
	case VN_ASSERT_RUNNING_PER_NODE:
		if ((r = step_ref(c, v, p, &a->step)) < 0 ||
		    (r = opt_num(c, v, p, "tolerance", false, R_NONNEG, &a->tolerance)) < 0)
			return r;
		break;
	case VN_ASSERT_METRIC:
		if ((r = step_ref(c, v, p, &a->step)) < 0 || (r = opt_str(c, v, p, "path", true, false, &a->path)) < 0)
			return r;
		for (const char *q = a->path, *seg = q;; q++) {
			if (*q == '.' || !*q) {
				if (q == seg)
					return expected(c, path_key(kp, p, "path"),
							"a dotted path into the step's result, like kernels.triad.best_mbps",
							get(v, "path"));
				if (!*q)
					break;
				seg = q + 1;
			} else if (!isalnum((unsigned char)*q) && *q != '_' && *q != '-') {
				return expected(c, path_key(kp, p, "path"),
						"a dotted path into the step's result, like kernels.triad.best_mbps",
						get(v, "path"));
			}
		}
		if ((r = parse_op(c, v, p, &a->op)) < 0 || (r = opt_threshold(c, v, p, "value", &a->value)) < 0)
			return r;
		break;
	case VN_ASSERT_MEMORY_ON_NODE:
		if ((r = step_ref(c, v, p, &a->step)) < 0 ||
		    (r = opt_uint(c, v, p, "node", true, 0, VN_SCN_MAX_NODES - 1, NODE_WHAT, &a->node)) < 0 ||
		    (r = opt_num(c, v, p, "fraction", true, R_FRACTION, &a->fraction)) < 0)
			return r;
		break;
	}
	if (!a->name && !(a->name = default_name(a)))
		return -ENOMEM;
	return 0;
}

static int parse_top(struct ctx *c, struct json_object *root)
{
	static const char *const keys[] = {"name", "description", "topology", "kernel", "append", "sysctls",
					   "thp", "hugetlb", "cgroups", "sample_interval_s", "timeout_s", "repeats",
					   "quick_scale", "steps", "assertions", NULL};
	struct vn_scenario *s = c->s;
	char kp[PATH_MAX_LEN], ep[PATH_MAX_LEN];
	struct json_object *v;
	int r;

	if ((r = check_type(c, root, json_type_object, "$")) < 0 || (r = check_keys(c, root, "$", keys)) < 0)
		return r;
	if ((r = opt_str(c, root, "$", "name", true, true, &s->name)) < 0 ||
	    (r = opt_str(c, root, "$", "description", false, false, &s->description)) < 0 ||
	    (r = opt_str(c, root, "$", "topology", true, false, &s->topology)) < 0 ||
	    (r = opt_str(c, root, "$", "kernel", false, false, &s->kernel)) < 0 ||
	    (r = opt_str(c, root, "$", "append", false, false, &s->append)) < 0)
		return r;
	if ((v = get(root, "sysctls")) && (r = parse_sysctls(c, v, "$.sysctls")) < 0)
		return r;
	if ((v = get(root, "thp"))) {
		int m = 0;
		if ((r = one_of(c, v, "$.thp", thp_modes, &m)) < 0)
			return r;
		if (!(s->thp = strdup(thp_modes[m])))
			return -ENOMEM;
	}
	if ((v = get(root, "hugetlb")) && (r = parse_hugetlb(c, v, "$.hugetlb")) < 0)
		return r;
	size_t ncg = 0;
	s->cgroups = calloc(1, sizeof(*s->cgroups));
	if (!s->cgroups)
		return -ENOMEM;
	if ((v = get(root, "cgroups")) && (r = str_array(c, v, "$.cgroups", true, &s->cgroups, &ncg)) < 0)
		return r;
	s->sample_interval_s = 1;
	s->timeout_s = 900;
	s->repeats = 1;
	s->quick_scale = 0.25;
	if ((r = opt_num(c, root, "$", "sample_interval_s", false, R_POSITIVE, &s->sample_interval_s)) < 0 ||
	    (r = opt_num(c, root, "$", "timeout_s", false, R_POSITIVE, &s->timeout_s)) < 0 ||
	    (r = opt_uint(c, root, "$", "repeats", false, 1, 1000, "an integer >= 1", &s->repeats)) < 0 ||
	    (r = opt_num(c, root, "$", "quick_scale", false, R_FRACTION, &s->quick_scale)) < 0)
		return r;

	if (!(v = get(root, "steps")))
		return missing(c, "$", "steps");
	if ((r = check_type(c, v, json_type_array, "$.steps")) < 0)
		return r;
	size_t n = json_object_array_length(v);
	if (!n)
		return bad(c, "$.steps", "a scenario needs at least one step");
	s->steps = calloc(n, sizeof(*s->steps));
	if (!s->steps)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++) {
		path_idx(ep, "$.steps", i);
		/* Counted before parsing so that free() sees a half-filled step. */
		s->nsteps++;
		if ((r = parse_step(c, json_object_array_get_idx(v, i), ep, &s->steps[i])) < 0)
			return r;
		for (size_t j = 0; j < i; j++)
			if (strcmp(s->steps[j].name, s->steps[i].name) == 0)
				return bad(c, path_key(kp, ep, "name"), "step name \"%s\" is already used by $.steps[%zu]",
					   s->steps[i].name, j);
	}

	if ((v = get(root, "assertions"))) {
		if ((r = check_type(c, v, json_type_array, "$.assertions")) < 0)
			return r;
		n = json_object_array_length(v);
		s->asserts = calloc(n + 1, sizeof(*s->asserts));
		if (!s->asserts)
			return -ENOMEM;
		for (size_t i = 0; i < n; i++) {
			path_idx(ep, "$.assertions", i);
			s->nasserts++;
			if ((r = parse_assert(c, json_object_array_get_idx(v, i), ep, &s->asserts[i])) < 0)
				return r;
			/* Names become JUnit testcase names, which CI systems key on. */
			for (size_t j = 0; j < i; j++)
				if (strcmp(s->asserts[j].name, s->asserts[i].name) == 0)
					return bad(c, ep, "assertion name \"%s\" is already used by $.assertions[%zu]",
						   s->asserts[i].name, j);
		}
	}
	return 0;
}

static void line_col(const char *text, size_t off, unsigned *line, unsigned *col)
{
	*line = 1;
	*col = 1;
	for (size_t i = 0; i < off && text[i]; i++) {
		if (text[i] == '\n') {
			++*line;
			*col = 1;
		} else {
			++*col;
		}
	}
}

static void tokener_freep(struct json_tokener **t)
{
	if (*t)
		json_tokener_free(*t);
}

static void json_putp(struct json_object **o)
{
	if (*o)
		json_object_put(*o);
}

int vn_scenario_parse(const char *text, const char *name, struct vn_scenario **out, struct vn_error *err)
{
	__attribute__((cleanup(tokener_freep))) struct json_tokener *tok = json_tokener_new();
	__attribute__((cleanup(json_putp))) struct json_object *root = NULL;
	_cleanup_scenario_ struct vn_scenario *s = calloc(1, sizeof(*s));
	size_t len = strlen(text);
	unsigned line, col;

	if (!tok || !s)
		return vn_error_set(err, VN_ERR_INFRA, -ENOMEM, "%s: out of memory", name);
	if (len > INT32_MAX)
		return vn_input_error(err, "%s: too large for a scenario", name);
	/* Strict: no trailing commas or single quotes, which other JSON readers refuse. */
	json_tokener_set_flags(tok, JSON_TOKENER_STRICT);
	root = json_tokener_parse_ex(tok, text, (int)len);
	enum json_tokener_error jerr = json_tokener_get_error(tok);
	size_t end = json_tokener_get_parse_end(tok);
	if (jerr == json_tokener_continue) {
		line_col(text, len, &line, &col);
		return vn_input_error(err, "%s:%u:%u: malformed JSON: unexpected end of file", name, line, col);
	}
	if (jerr != json_tokener_success) {
		/* The tokener stops at the byte it choked on. */
		line_col(text, end, &line, &col);
		return vn_input_error(err, "%s:%u:%u: malformed JSON: %s", name, line, col, json_tokener_error_desc(jerr));
	}
	while (end < len && isspace((unsigned char)text[end]))
		end++;
	if (end < len) {
		line_col(text, end, &line, &col);
		return vn_input_error(err, "%s:%u:%u: malformed JSON: trailing content after the top-level value", name,
				      line, col);
	}

	struct ctx c = {.file = name, .err = err, .s = s};
	s->path = strdup(name);
	if (!s->path)
		return vn_error_set(err, VN_ERR_INFRA, -ENOMEM, "%s: out of memory", name);
	int r = parse_top(&c, root);
	if (r == -ENOMEM)
		return vn_error_set(err, VN_ERR_INFRA, -ENOMEM, "%s: out of memory", name);
	if (r < 0)
		return r;
	*out = steal_pointer(&s);
	return 0;
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

static void strv_free(char **v)
{
	for (char **p = v; p && *p; p++)
		free(*p);
	free(v);
}

void vn_scenario_free(struct vn_scenario *s)
{
	if (!s)
		return;
	free(s->path);
	free(s->name);
	free(s->description);
	free(s->topology);
	free(s->kernel);
	free(s->append);
	for (unsigned i = 0; i < s->nsysctls; i++) {
		free(s->sysctls[i].key);
		free(s->sysctls[i].value);
	}
	free(s->sysctls);
	free(s->thp);
	free(s->hugetlb);
	strv_free(s->cgroups);
	for (unsigned i = 0; i < s->nsteps; i++) {
		struct vn_scn_step *st = &s->steps[i];
		free(st->name);
		free(st->workload);
		strv_free(st->argv);
		free(st->cgroup);
		free(st->actions);
	}
	free(s->steps);
	for (unsigned i = 0; i < s->nasserts; i++) {
		struct vn_scn_assert *a = &s->asserts[i];
		free(a->name);
		free(a->counter);
		free(a->denominator);
		free(a->step);
		free(a->path);
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
	for (unsigned i = 0; i < s->nasserts; i++)
		if (s->asserts[i].type == VN_ASSERT_MEMORY_FOLLOWS)
			s->asserts[i].within_s = quick_seconds(s->asserts[i].within_s, q);
}

/* Shortest text that reads back as the same double (json-c would print 17 digits). */
static struct json_object *num(double d)
{
	char buf[40];

	snprintf(buf, sizeof(buf), "%.15g", d);
	if (strtod(buf, NULL) != d)
		snprintf(buf, sizeof(buf), "%.17g", d);
	return json_object_new_double_s(d, buf);
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

static struct json_object *step_json(const struct vn_scn_step *st)
{
	struct json_object *o = json_object_new_object();
	char buf[32];

	put_str(o, "name", st->name);
	put_str(o, "workload", st->workload);
	put(o, strcmp(st->workload, "cmd") == 0 ? "command" : "args", strv_json(st->argv));
	struct json_object *pl = json_object_new_object();
	put_str(pl, "policy", policies[st->placement.policy]);
	if (st->placement.nnodes)
		put(pl, "nodes", nodes_json(st->placement.nodes, st->placement.nnodes));
	if (st->placement.ncpu_nodes)
		put(pl, "cpu_nodes", nodes_json(st->placement.cpu_nodes, st->placement.ncpu_nodes));
	put(o, "placement", pl);
	put(o, "processes", json_object_new_int64(st->processes));
	if (st->threads)
		put(o, "threads", json_object_new_int64(st->threads));
	if (st->size) {
		/* Parsed sizes carry a unit and --quick rounds to MiB, so this never prints bare bytes. */
		put_str(o, "size", vn_size_format(st->size, buf, sizeof(buf)));
	}
	if (st->duration_s > 0)
		put(o, "duration_s", num(st->duration_s));
	put_str(o, "cgroup", st->cgroup);
	put(o, "background", json_object_new_boolean(st->background));
	struct json_object *acts = json_object_new_array();
	for (unsigned i = 0; i < st->nactions; i++) {
		struct json_object *a = json_object_new_object(), *m = json_object_new_object();
		put(a, "at_s", num(st->actions[i].at_s));
		put(m, "fraction", num(st->actions[i].fraction));
		put(m, "to_node", json_object_new_int64(st->actions[i].to_node));
		put(a, "move", m);
		json_object_array_add(acts, a);
	}
	put(o, "actions", acts);
	return o;
}

static struct json_object *assert_json(const struct vn_scn_assert *a)
{
	struct json_object *o = json_object_new_object();

	put_str(o, "type", assert_types[a->type]);
	put_str(o, "name", a->name);
	switch (a->type) {
	case VN_ASSERT_FALLBACK:
		put_str(o, "model", vn_fallback_model_name(a->model));
		break;
	case VN_ASSERT_DISTANCES:
		break;
	case VN_ASSERT_COUNTER:
		put_str(o, "counter", a->counter);
		break;
	case VN_ASSERT_RATIO:
		put_str(o, "numerator", a->counter);
		put_str(o, "denominator", a->denominator);
		break;
	case VN_ASSERT_MEMORY_FOLLOWS:
		put_str(o, "step", a->step);
		put(o, "fraction", num(a->fraction));
		put(o, "within_s", num(a->within_s));
		break;
	case VN_ASSERT_RUNNING_PER_NODE:
		put_str(o, "step", a->step);
		put(o, "tolerance", num(a->tolerance));
		break;
	case VN_ASSERT_METRIC:
		put_str(o, "step", a->step);
		put_str(o, "path", a->path);
		break;
	case VN_ASSERT_MEMORY_ON_NODE:
		put_str(o, "step", a->step);
		put(o, "node", json_object_new_int64(a->node));
		put(o, "fraction", num(a->fraction));
		break;
	}
	if (a->type == VN_ASSERT_COUNTER || a->type == VN_ASSERT_RATIO || a->type == VN_ASSERT_METRIC) {
		put_str(o, "op", vn_scn_op_name(a->op));
		put(o, "value", num(a->value));
	}
	return o;
}

char *vn_scenario_to_json(const struct vn_scenario *s)
{
	__attribute__((cleanup(json_putp))) struct json_object *o = json_object_new_object();
	char key[16];

	if (!o)
		return NULL;
	put_str(o, "name", s->name);
	put_str(o, "description", s->description);
	put_str(o, "topology", s->topology);
	put_str(o, "kernel", s->kernel);
	put_str(o, "append", s->append);
	struct json_object *sc = json_object_new_object();
	for (unsigned i = 0; i < s->nsysctls; i++)
		put(sc, s->sysctls[i].key, json_object_new_string(s->sysctls[i].value));
	put(o, "sysctls", sc);
	put_str(o, "thp", s->thp);
	struct json_object *h = json_object_new_object();
	for (unsigned i = 0; i < s->nhugetlb; i++) {
		snprintf(key, sizeof(key), "%u", s->hugetlb[i].node);
		put(h, key, json_object_new_int64(s->hugetlb[i].pages));
	}
	put(o, "hugetlb", h);
	put(o, "cgroups", strv_json(s->cgroups));
	put(o, "sample_interval_s", num(s->sample_interval_s));
	put(o, "timeout_s", num(s->timeout_s));
	put(o, "repeats", json_object_new_int64(s->repeats));
	put(o, "quick_scale", num(s->quick_scale));
	struct json_object *steps = json_object_new_array();
	for (unsigned i = 0; i < s->nsteps; i++)
		json_object_array_add(steps, step_json(&s->steps[i]));
	put(o, "steps", steps);
	struct json_object *as = json_object_new_array();
	for (unsigned i = 0; i < s->nasserts; i++)
		json_object_array_add(as, assert_json(&s->asserts[i]));
	put(o, "assertions", as);
	const char *text = json_object_to_json_string_ext(
		o, JSON_C_TO_STRING_PRETTY | JSON_C_TO_STRING_SPACED | JSON_C_TO_STRING_NOSLASHESCAPE);
	if (!text)
		return NULL;
	size_t n = strlen(text);
	char *copy = malloc(n + 2);
	if (copy) {
		memcpy(copy, text, n);
		copy[n] = '\n';
		copy[n + 1] = '\0';
	}
	return copy;
}

const char *vn_scn_op_name(enum vn_scn_op op)
{
	return (unsigned)op < VN_ARRAY_SIZE(op_names) - 1 ? op_names[op] : "?";
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
