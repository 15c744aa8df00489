/*
 * group.json read back (report/result-group.h): the one reader of a result
 * group. Result directories may be reused or someone else's
 * (docs/security.md): the file is read bounded and only when regular, every
 * value is type-checked and every list counted before it is kept, and an
 * error names the file and the JSON path.
 */
#include <json-c/json.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "report/result-group.h"
#include "util/alloc.h"
#include "util/cleanup.h"
#include "util/file.h"
#include "util/json.h"

#define COUNT_MAX  (1 << 20)
#define COUNT_WHAT "an integer from 0 to 1048576"

/* Whether o has key, null or not (vn_json_get says NULL for both). */
static bool has(json_object *o, const char *key)
{
	return json_object_object_get_ex(o, key, NULL);
}

/* key's string or null into *out, setting bit in *keys when the key is there (absent: both left alone). */
static int opt_str(const struct vn_json_reader *r, json_object *o, const char *path, const char *key, unsigned bit,
		   unsigned *keys, char **out)
{
	char p[VN_JSON_PATH_MAX];
	json_object *v = vn_json_get(o, key);

	if (!has(o, key))
		return 0;
	*keys |= bit;
	if (!v)
		return 0;
	if (!json_object_is_type(v, json_type_string))
		return vn_json_expected(r, vn_json_path_key(p, path, key), "a string or null", v);
	*out = vn_xstrdup(json_object_get_string(v));
	return 0;
}

/* An array or object of at most VN_RESULT_GROUP_LIST_MAX members, or absent (*v NULL). */
static int get_list(const struct vn_json_reader *r, json_object *o, const char *path, const char *key, enum json_type t,
		    bool required, json_object **v)
{
	char p[VN_JSON_PATH_MAX];
	int rc;

	*v = vn_json_get(o, key);
	if (!*v)
		return required ? vn_json_missing(r, path, key) : 0;
	vn_json_path_key(p, path, key);
	if ((rc = vn_json_check_type(r, *v, t, p)) < 0)
		return rc;
	size_t n = t == json_type_array ? json_object_array_length(*v) : (size_t)json_object_object_length(*v);
	return n > VN_RESULT_GROUP_LIST_MAX
		       ? vn_json_bad(r, p, "%zu members, at most %u are read", n, VN_RESULT_GROUP_LIST_MAX)
		       : 0;
}

static int read_variant(const struct vn_json_reader *r, json_object *o, const char *path, struct vn_result_group *g)
{
	_cleanup_free_ char *name = NULL;
	char p[VN_JSON_PATH_MAX], pk[VN_JSON_PATH_MAX];
	json_object *sc;
	int rc;

	if ((rc = vn_json_check_type(r, o, json_type_object, path)) < 0 ||
	    (rc = vn_json_get_str(r, o, path, "name", VN_JSON_REQUIRED | VN_JSON_NAME, &name)) < 0)
		return rc;
	struct vn_result_group_variant *v = vn_result_group_add_variant(g, name);
	if ((rc = opt_str(r, o, path, "kernel", VN_GROUP_VARIANT_KERNEL, &v->keys, &v->kernel)) < 0 ||
	    (rc = opt_str(r, o, path, "append", VN_GROUP_VARIANT_APPEND, &v->keys, &v->append)) < 0 ||
	    (rc = vn_json_get_str(r, o, path, "commit", 0, &v->commit)) < 0 ||
	    (rc = vn_json_get_str(r, o, path, "mark", 0, &v->mark)) < 0 ||
	    (rc = get_list(r, o, path, "sysctls", json_type_object, false, &sc)) < 0 || !sc)
		return rc;
	v->keys |= VN_GROUP_VARIANT_SYSCTLS;
	vn_json_path_key(p, path, "sysctls");
	json_object_object_foreach(sc, key, val)
	{
		if ((rc = vn_json_check_type(r, val, json_type_string, vn_json_path_key(pk, p, key))) < 0)
			return rc;
		vn_result_group_set_sysctl(v, key, json_object_get_string(val));
	}
	return 0;
}

static int read_attempts(const struct vn_json_reader *r, json_object *o, const char *path,
			 struct vn_result_group_run *run)
{
	char pa[VN_JSON_PATH_MAX], p[VN_JSON_PATH_MAX];
	json_object *as;
	int rc;

	if ((rc = get_list(r, o, path, "failed_attempts", json_type_array, false, &as)) < 0 || !as)
		return rc;
	vn_json_path_key(pa, path, "failed_attempts");
	for (size_t i = 0; i < json_object_array_length(as); i++) {
		json_object *a = json_object_array_get_idx(as, i);
		_cleanup_free_ char *host = NULL, *error = NULL, *dir = NULL;
		unsigned keys = 0;
		vn_json_path_idx(p, pa, i);
		if ((rc = vn_json_check_type(r, a, json_type_object, p)) < 0 ||
		    (rc = vn_json_get_str(r, a, p, "host", VN_JSON_REQUIRED, &host)) < 0 ||
		    (rc = vn_json_get_str(r, a, p, "error", VN_JSON_REQUIRED, &error)) < 0 ||
		    (rc = opt_str(r, a, p, "dir", 1, &keys, &dir)) < 0)
			return rc;
		vn_result_group_add_attempt(run, host, error, dir);
	}
	return 0;
}

static int read_run(const struct vn_json_reader *r, json_object *o, const char *path, struct vn_result_group *g)
{
	_cleanup_free_ char *variant = NULL, *dir = NULL;
	char p[VN_JSON_PATH_MAX];
	int rc;

	if ((rc = vn_json_check_type(r, o, json_type_object, path)) < 0 ||
	    (rc = vn_json_get_str(r, o, path, "variant", VN_JSON_REQUIRED, &variant)) < 0 ||
	    (rc = vn_json_get_str(r, o, path, "dir", VN_JSON_REQUIRED, &dir)) < 0)
		return rc;
	struct vn_result_group_run *run = vn_result_group_add_run(g, variant, 0, dir, -1);
	run->keys = 0;
	json_object *v = vn_json_get(o, "repeat");
	if (v) {
		run->keys |= VN_GROUP_RUN_REPEAT;
		if ((rc = vn_json_uint(r, v, vn_json_path_key(p, path, "repeat"), 0, COUNT_MAX, COUNT_WHAT,
				       &run->repeat)) < 0)
			return rc;
	}
	if (has(o, "exit")) {
		unsigned code;
		run->keys |= VN_GROUP_RUN_EXIT;
		if ((v = vn_json_get(o, "exit"))) {
			if ((rc = vn_json_uint(r, v, vn_json_path_key(p, path, "exit"), 0, 255,
					       "an exit code from 0 to 255, or null", &code)) < 0)
				return rc;
			run->exit = (int)code;
		}
	}
	if ((rc = vn_json_get_str(r, o, path, "host", 0, &run->host)) < 0)
		return rc;
	return read_attempts(r, o, path, run);
}

static int read_host(const struct vn_json_reader *r, json_object *o, const char *path, struct vn_result_group *g)
{
	_cleanup_free_ char *uri = NULL, *state = NULL;
	unsigned capacity, runs;
	int rc;

	if ((rc = vn_json_check_type(r, o, json_type_object, path)) < 0 ||
	    (rc = vn_json_get_str(r, o, path, "uri", VN_JSON_REQUIRED, &uri)) < 0 ||
	    (rc = vn_json_get_str(r, o, path, "state", VN_JSON_REQUIRED, &state)) < 0 ||
	    (rc = vn_json_get_uint(r, o, path, "capacity", true, 0, COUNT_MAX, COUNT_WHAT, &capacity)) < 0 ||
	    (rc = vn_json_get_uint(r, o, path, "runs", true, 0, COUNT_MAX, COUNT_WHAT, &runs)) < 0)
		return rc;
	vn_result_group_add_host(g, uri, capacity, runs, state);
	return 0;
}

static int read_assertion(const struct vn_json_reader *r, json_object *o, const char *path, struct vn_result_group *g)
{
	static const char *const words[] = {"pass", "fail", "too noisy", NULL};
	_cleanup_free_ char *name = NULL, *verdict = NULL;
	char p[VN_JSON_PATH_MAX];
	int rc, word;

	if ((rc = vn_json_check_type(r, o, json_type_object, path)) < 0 ||
	    (rc = vn_json_get_str(r, o, path, "name", VN_JSON_REQUIRED, &name)) < 0 ||
	    (rc = vn_json_get_str(r, o, path, "verdict", VN_JSON_REQUIRED, &verdict)) < 0 ||
	    (rc = vn_json_one_of(r, vn_json_get(o, "verdict"), vn_json_path_key(p, path, "verdict"), words, &word)) < 0)
		return rc;
	g->verdicts = vn_xreallocarray(g->verdicts, g->nverdicts + 1, sizeof(*g->verdicts));
	struct vn_verdict *v = &g->verdicts[g->nverdicts++];
	*v = (struct vn_verdict){.name = steal_pointer(&name), .pass = word == 0, .undecided = word == 2};
	if ((rc = vn_json_get_str(r, o, path, "observed", VN_JSON_REQUIRED, &v->observed)) < 0 ||
	    (rc = vn_json_get_str(r, o, path, "expected", VN_JSON_REQUIRED, &v->expected)) < 0)
		return rc;
	return 0;
}

typedef int read_fn(const struct vn_json_reader *r, json_object *o, const char *path, struct vn_result_group *g);

/* Each member of root's array key through fn; a missing one is an error when required. */
static int read_array(const struct vn_json_reader *r, json_object *root, const char *key, unsigned bit, bool required,
		      read_fn *fn, struct vn_result_group *g)
{
	char p[VN_JSON_PATH_MAX], pi[VN_JSON_PATH_MAX];
	json_object *a;
	int rc;

	if ((rc = get_list(r, root, "$", key, json_type_array, required, &a)) < 0 || !a)
		return rc;
	g->keys |= bit;
	vn_json_path_key(p, "$", key);
	for (size_t i = 0; i < json_object_array_length(a); i++)
		if ((rc = fn(r, json_object_array_get_idx(a, i), vn_json_path_idx(pi, p, i), g)) < 0)
			return rc;
	return 0;
}

static int read_version(const struct vn_json_reader *r, json_object *root, struct vn_result_group *g)
{
	json_object *v = vn_json_get(root, "version");
	int rc;

	g->version = 1;
	if (!v)
		return 0;
	g->keys |= VN_GROUP_VERSION;
	if ((rc = vn_json_uint(r, v, "$.version", 1, INT32_MAX, "an integer >= 1", &g->version)) < 0)
		return rc;
	if (g->version > VN_RESULT_GROUP_VERSION)
		return vn_json_bad(r, "$.version",
				   "%u: written by a newer vnuma (this one reads group.json up to version %u)",
				   g->version, VN_RESULT_GROUP_VERSION);
	return 0;
}

/* "shard": which slice of which matrix; what slices there are is the merge's to judge (compare). */
static int read_shard(const struct vn_json_reader *r, json_object *root, struct vn_result_group *g)
{
	struct vn_result_group_shard *sh = &g->shard;
	json_object *o = vn_json_get(root, "shard"), *v;
	int rc;

	if (!o)
		return 0;
	if ((rc = vn_json_check_type(r, o, json_type_object, "$.shard")) < 0)
		return rc;
	const struct {
		const char *key, *path;
		unsigned *out;
	} nums[] = {{"count", "$.shard.count", &sh->count},
		    {"index", "$.shard.index", &sh->index},
		    {"runs", "$.shard.runs", &sh->runs}};
	for (size_t i = 0; i < VN_ARRAY_SIZE(nums); i++) {
		if (!(v = vn_json_get(o, nums[i].key)))
			return vn_json_missing(r, "$.shard", nums[i].key);
		if ((rc = vn_json_uint(r, v, nums[i].path, 1, COUNT_MAX, "an integer from 1 to 1048576", nums[i].out)) <
		    0)
			return rc;
	}
	if (sh->index > sh->count)
		return vn_json_bad(r, "$.shard.index", "%u, but there are %u slices", sh->index, sh->count);
	if ((rc = vn_json_get_str(r, o, "$.shard", "matrix", VN_JSON_REQUIRED, &sh->matrix)) < 0)
		return rc;
	if (strlen(sh->matrix) != 64 || strspn(sh->matrix, "0123456789abcdef") != 64)
		return vn_json_bad(r, "$.shard.matrix", "expected a sha256 in lowercase hex");
	return 0;
}

static int read_head(const struct vn_json_reader *r, json_object *root, struct vn_result_group *g)
{
	json_object *v;
	int rc;

	if ((rc = vn_json_get_str(r, root, "$", "scenario", VN_JSON_REQUIRED, &g->scenario)) < 0)
		return rc;
	if (!has(root, "topology"))
		return vn_json_missing(r, "$", "topology");
	unsigned topology = 0;
	if ((rc = opt_str(r, root, "$", "topology", 1, &topology, &g->topology)) < 0 ||
	    (rc = opt_str(r, root, "$", "host", VN_GROUP_HOST, &g->keys, &g->host)) < 0 ||
	    (rc = opt_str(r, root, "$", "accelerator", VN_GROUP_ACCEL, &g->keys, &g->accel)) < 0 ||
	    (rc = opt_str(r, root, "$", "arch", VN_GROUP_ARCH, &g->keys, &g->arch)) < 0 ||
	    (rc = opt_str(r, root, "$", "started_utc", VN_GROUP_STARTED, &g->keys, &g->started_utc)) < 0 ||
	    (rc = opt_str(r, root, "$", "base", VN_GROUP_BASE, &g->keys, &g->base)) < 0)
		return rc;
	if ((v = vn_json_get(root, "repeats"))) {
		g->keys |= VN_GROUP_REPEATS;
		if ((rc = vn_json_uint(r, v, "$.repeats", 0, COUNT_MAX, COUNT_WHAT, &g->repeats)) < 0)
			return rc;
	}
	g->complete = true; /* a group from before "complete" was written had ended */
	if ((v = vn_json_get(root, "complete"))) {
		g->keys |= VN_GROUP_COMPLETE;
		if ((rc = vn_json_check_type(r, v, json_type_boolean, "$.complete")) < 0)
			return rc;
		g->complete = json_object_get_boolean(v);
	}
	return 0;
}

int vn_result_group_parse(const char *text, const char *name, struct vn_result_group *out, struct vn_error *err)
{
	_cleanup_json_ json_object *root = NULL;
	const struct vn_json_reader r = {.file = name, .err = err};
	int rc;

	memset(out, 0, sizeof(*out));
	if ((rc = vn_json_parse(text, name, &root, err)) < 0 ||
	    (rc = vn_json_check_type(&r, root, json_type_object, "$")) < 0 || (rc = read_version(&r, root, out)) < 0 ||
	    (rc = read_head(&r, root, out)) < 0 ||
	    (rc = read_array(&r, root, "variants", 0, true, read_variant, out)) < 0 ||
	    (rc = read_array(&r, root, "runs", 0, true, read_run, out)) < 0 ||
	    (rc = read_array(&r, root, "hosts", VN_GROUP_HOSTS, false, read_host, out)) < 0 ||
	    (rc = read_array(&r, root, "assertions", VN_GROUP_ASSERTIONS, false, read_assertion, out)) < 0 ||
	    (rc = read_shard(&r, root, out)) < 0)
		return rc;
	return 0;
}

int vn_result_group_load(const char *path, struct vn_result_group *out, struct vn_error *err)
{
	_cleanup_free_ char *text = NULL;
	size_t len;
	int rc;

	memset(out, 0, sizeof(*out));
	if ((rc = vn_file_read(path, VN_RESULT_GROUP_FILE_MAX, &text, &len, err)) < 0)
		return rc;
	return vn_result_group_parse(text, path, out, err);
}
