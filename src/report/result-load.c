/*
 * result.json read back (report/result.h): the one reader of a run's
 * result. Result directories may be reused or someone else's
 * (docs/security.md): the file is read bounded and only when regular, every
 * value is type-checked and every list counted before it is kept, and an
 * error names the file and the JSON path.
 */
#include <json-c/json.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "report/result-facts.h"
#include "report/result.h"
#include "report/result-suite.h"
#include "util/alloc.h"
#include "util/cleanup.h"
#include "util/file.h"
#include "util/json.h"

/* A string or null (absent: *out stays NULL). */
static int opt_str(const struct vn_json_reader *r, json_object *o, const char *path, const char *key, char **out)
{
	char p[VN_JSON_PATH_MAX];
	json_object *v = vn_json_get(o, key);

	if (!v || json_object_is_type(v, json_type_null))
		return 0;
	if (!json_object_is_type(v, json_type_string))
		return vn_json_expected(r, vn_json_path_key(p, path, key), "a string or null", v);
	free(*out);
	*out = vn_xstrdup(json_object_get_string(v));
	return 0;
}

/* An array or object of at most max members, or absent (*v NULL). */
static int get_list(const struct vn_json_reader *r, json_object *o, const char *path, const char *key, enum json_type t,
		    size_t max, json_object **v)
{
	char p[VN_JSON_PATH_MAX];
	int rc;

	*v = vn_json_get(o, key);
	if (!*v)
		return 0;
	vn_json_path_key(p, path, key);
	if ((rc = vn_json_check_type(r, *v, t, p)) < 0)
		return rc;
	size_t n = t == json_type_array ? json_object_array_length(*v) : (size_t)json_object_object_length(*v);
	return n > max ? vn_json_bad(r, p, "%zu members, at most %zu are read", n, max) : 0;
}

static int read_assertion(const struct vn_json_reader *r, json_object *a, const char *path, struct vn_result_run *res)
{
	static const char *const words[] = {"pass", "fail", "too noisy", NULL};
	_cleanup_free_ char *name = NULL, *observed = NULL, *expected = NULL, *detail = NULL;
	char p[VN_JSON_PATH_MAX];
	json_object *verdict;
	int rc, word;

	if ((rc = vn_json_check_type(r, a, json_type_object, path)) < 0 ||
	    (rc = vn_json_get_str(r, a, path, "name", VN_JSON_REQUIRED, &name)) < 0)
		return rc;
	if (!(verdict = vn_json_get(a, "verdict")))
		return vn_json_missing(r, path, "verdict");
	if ((rc = vn_json_one_of(r, verdict, vn_json_path_key(p, path, "verdict"), words, &word)) < 0 ||
	    (rc = opt_str(r, a, path, "observed", &observed)) < 0 ||
	    (rc = opt_str(r, a, path, "expected", &expected)) < 0 || (rc = opt_str(r, a, path, "detail", &detail)) < 0)
		return rc;
	res->verdicts = vn_xreallocarray(res->verdicts, res->nverdicts + 1, sizeof(*res->verdicts));
	res->verdicts[res->nverdicts++] = (struct vn_verdict){
		.name = steal_pointer(&name),
		.pass = word == 0,
		.undecided = word == 2,
		.observed = steal_pointer(&observed),
		.expected = steal_pointer(&expected),
		.detail = steal_pointer(&detail),
		.kind = VN_OBSERVED_NONE,
		.value = NAN,
	};
	return 0;
}

static int read_artifact(const struct vn_json_reader *r, json_object *a, const char *path, struct vn_result_run *res)
{
	_cleanup_free_ char *volume = NULL;
	char p[VN_JSON_PATH_MAX];
	json_object *up;
	int rc;

	if ((rc = vn_json_check_type(r, a, json_type_object, path)) < 0 ||
	    (rc = vn_json_get_str(r, a, path, "volume", VN_JSON_REQUIRED, &volume)) < 0)
		return rc;
	if (!(up = vn_json_get(a, "uploaded")))
		return vn_json_missing(r, path, "uploaded");
	if ((rc = vn_json_check_type(r, up, json_type_boolean, vn_json_path_key(p, path, "uploaded"))) < 0)
		return rc;
	vn_result_add_artifact(res, volume, json_object_get_boolean(up));
	return 0;
}

static int read_lists(const struct vn_json_reader *r, json_object *root, struct vn_result_run *res)
{
	char p[VN_JSON_PATH_MAX];
	json_object *as, *ar, *sc;
	int rc;

	if ((rc = get_list(r, root, "$", "assertions", json_type_array, VN_RESULT_ASSERTIONS_MAX, &as)) < 0 ||
	    (rc = get_list(r, root, "$", "artifacts", json_type_array, VN_RESULT_LIST_MAX, &ar)) < 0 ||
	    (rc = get_list(r, root, "$", "sysctls", json_type_object, VN_RESULT_LIST_MAX, &sc)) < 0)
		return rc;
	for (size_t i = 0; as && i < json_object_array_length(as); i++)
		if ((rc = read_assertion(r, json_object_array_get_idx(as, i), vn_json_path_idx(p, "$.assertions", i),
					 res)) < 0)
			return rc;
	for (size_t i = 0; ar && i < json_object_array_length(ar); i++)
		if ((rc = read_artifact(r, json_object_array_get_idx(ar, i), vn_json_path_idx(p, "$.artifacts", i),
					res)) < 0)
			return rc;
	if (!sc)
		return 0;
	json_object_object_foreach(sc, key, val)
	{
		if ((rc = vn_json_check_type(r, val, json_type_string, vn_json_path_key(p, "$.sysctls", key))) < 0)
			return rc;
		vn_result_add_sysctl(res, key, json_object_get_string(val));
	}
	return 0;
}

/* Every value as written, run.duration_s and run.boot_s too: a reader compares what the file says. */
static int read_metrics(const struct vn_json_reader *r, json_object *root, struct vn_result_run *res)
{
	char p[VN_JSON_PATH_MAX];
	json_object *m;
	int rc;

	/* The writer adds run.duration_s and run.boot_s to what the runner recorded. */
	if ((rc = get_list(r, root, "$", "metrics", json_type_object, VN_RESULT_METRICS_MAX + 2, &m)) < 0)
		return rc;
	if (!m)
		return 0;
	res->metrics = vn_xreallocarray(NULL, (size_t)json_object_object_length(m) + 1, sizeof(*res->metrics));
	json_object_object_foreach(m, key, val)
	{
		double d;
		if ((rc = vn_json_num(r, val, vn_json_path_key(p, "$.metrics", key), VN_JSON_FINITE, &d)) < 0)
			return rc;
		res->metrics[res->nmetrics++] = (struct vn_metric){vn_xstrdup(key), d};
	}
	return 0;
}

int vn_result_parse(const char *text, const char *name, struct vn_result_run *out, struct vn_error *err)
{
	_cleanup_json_ json_object *root = NULL;
	const struct vn_json_reader r = {.file = name, .err = err};
	int rc;

	memset(out, 0, sizeof(*out));
	if ((rc = vn_json_parse(text, name, &root, err)) < 0 ||
	    (rc = vn_json_check_type(&r, root, json_type_object, "$")) < 0 ||
	    (rc = vn_result_facts_read(&r, root, out)) < 0 || (rc = read_lists(&r, root, out)) < 0 ||
	    (rc = vn_result_tests_read(&r, root, out)) < 0 || (rc = read_metrics(&r, root, out)) < 0)
		return rc;
	if (!out->complete)
		return 0;
	/* What compares a run: a complete one says what ran, on what, and what it measured. */
	json_object *scenario = vn_json_get(root, "scenario");
	if (!scenario)
		return vn_json_missing(&r, "$", "scenario");
	if (!out->scenario)
		return vn_json_check_type(&r, scenario, json_type_string, "$.scenario");
	if (!vn_json_get(root, "topology"))
		return vn_json_missing(&r, "$", "topology");
	if (!vn_json_get(root, "metrics"))
		return vn_json_missing(&r, "$", "metrics");
	return 0;
}

int vn_result_load(const char *path, struct vn_result_run *out, struct vn_error *err)
{
	_cleanup_free_ char *text = NULL;
	size_t len;
	int rc;

	memset(out, 0, sizeof(*out));
	if ((rc = vn_file_read(path, VN_RESULT_FILE_MAX, &text, &len, err)) < 0)
		return rc;
	return vn_result_parse(text, path, out, err);
}
