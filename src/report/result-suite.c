/*
 * A run's suite tests (result-suite.h): their own list in the result, so
 * that the assertions' verdicts and the scalar facts keep their code.
 */
#include "report/result-suite.h"

#include <json-c/json.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "util/alloc.h"
#include "util/cleanup.h"
#include "util/json.h"
#include "util/strbuf.h"

static const char *const words[] = {"pass", "fail", "skip", "xfail", "xpass", "error", "timeout", NULL};

const char *vn_test_verdict_word(enum vn_test_verdict v)
{
	return (unsigned)v < VN_ARRAY_SIZE(words) - 1 ? words[v] : "error";
}

int vn_test_verdict_parse(const char *word)
{
	for (int i = 0; words[i]; i++)
		if (strcmp(words[i], word) == 0)
			return i;
	return -1;
}

static char *clean_or_null(const char *s)
{
	return s ? vn_text_dup(s, SIZE_MAX, VN_TEXT_LINES) : NULL;
}

bool vn_result_add_test(struct vn_result_run *r, const char *step, const char *name, enum vn_test_verdict v,
			const char *reason, const char *detail, const char *known)
{
	if (r->ntests >= VN_RESULT_TESTS_MAX)
		return false;
	r->tests = vn_xreallocarray(r->tests, r->ntests + 1, sizeof(*r->tests));
	r->tests[r->ntests++] = (struct vn_result_test){
		.step = clean_or_null(step ? step : ""),
		.name = clean_or_null(name ? name : ""),
		.verdict = v,
		.reason = clean_or_null(reason),
		.detail = clean_or_null(detail),
		.known = clean_or_null(known),
	};
	return true;
}

void vn_result_tests_clear(struct vn_result_run *r)
{
	for (unsigned i = 0; i < r->ntests; i++)
		vn_free_all(r->tests[i].step, r->tests[i].name, r->tests[i].reason, r->tests[i].detail,
			    r->tests[i].known);
	free(r->tests);
	r->tests = NULL;
	r->ntests = 0;
}

unsigned vn_result_tests_count(const struct vn_result_run *r, enum vn_test_verdict v)
{
	unsigned n = 0;

	for (unsigned i = 0; i < r->ntests; i++)
		n += r->tests[i].verdict == v;
	return n;
}

void vn_result_tests_json(struct json_object *o, const struct vn_result_run *r)
{
	if (!r->ntests)
		return;
	json_object *a = json_object_new_array();
	for (unsigned i = 0; i < r->ntests; i++) {
		const struct vn_result_test *t = &r->tests[i];
		json_object *j = json_object_new_object();
		vn_json_add_str(j, "step", t->step);
		vn_json_add_str(j, "name", t->name);
		vn_json_add_str(j, "verdict", vn_test_verdict_word(t->verdict));
		vn_json_add_str(j, "reason", t->reason);
		vn_json_add_str(j, "detail", t->detail);
		vn_json_add_str(j, "known", t->known);
		json_object_array_add(a, j);
	}
	json_object_object_add(o, "tests", a);
}

/* A string, null or absent (*out NULL). */
static int opt_str(const struct vn_json_reader *rd, json_object *o, const char *path, const char *key, char **out)
{
	char p[VN_JSON_PATH_MAX];
	json_object *v = vn_json_get(o, key);

	if (!v || json_object_is_type(v, json_type_null))
		return 0;
	if (!json_object_is_type(v, json_type_string))
		return vn_json_expected(rd, vn_json_path_key(p, path, key), "a string or null", v);
	*out = vn_xstrdup(json_object_get_string(v));
	return 0;
}

static int read_test(const struct vn_json_reader *rd, json_object *t, const char *path, struct vn_result_run *res)
{
	static const char *const keys[] = {"step", "name", "verdict", "reason", "detail", "known", NULL};
	_cleanup_free_ char *step = NULL, *name = NULL, *reason = NULL, *detail = NULL, *known = NULL;
	char p[VN_JSON_PATH_MAX];
	json_object *verdict;
	int rc, word;

	if ((rc = vn_json_check_type(rd, t, json_type_object, path)) < 0 ||
	    (rc = vn_json_check_keys(rd, t, path, keys)) < 0 ||
	    (rc = vn_json_get_str(rd, t, path, "step", VN_JSON_REQUIRED | VN_JSON_NONEMPTY, &step)) < 0 ||
	    (rc = vn_json_get_str(rd, t, path, "name", VN_JSON_REQUIRED | VN_JSON_NONEMPTY, &name)) < 0)
		return rc;
	if (!(verdict = vn_json_get(t, "verdict")))
		return vn_json_missing(rd, path, "verdict");
	if ((rc = vn_json_one_of(rd, verdict, vn_json_path_key(p, path, "verdict"), words, &word)) < 0 ||
	    (rc = opt_str(rd, t, path, "reason", &reason)) < 0 || (rc = opt_str(rd, t, path, "detail", &detail)) < 0 ||
	    (rc = opt_str(rd, t, path, "known", &known)) < 0)
		return rc;
	vn_result_add_test(res, step, name, (enum vn_test_verdict)word, reason, detail, known);
	return 0;
}

int vn_result_tests_read(const struct vn_json_reader *rd, struct json_object *root, struct vn_result_run *res)
{
	char p[VN_JSON_PATH_MAX];
	json_object *a = vn_json_get(root, "tests");
	int rc;

	if (!a)
		return 0;
	if ((rc = vn_json_check_type(rd, a, json_type_array, "$.tests")) < 0)
		return rc;
	size_t n = json_object_array_length(a);
	if (n > VN_RESULT_TESTS_MAX)
		return vn_json_bad(rd, "$.tests", "%zu tests, at most %d are read", n, VN_RESULT_TESTS_MAX);
	for (size_t i = 0; i < n; i++)
		if ((rc = read_test(rd, json_object_array_get_idx(a, i), vn_json_path_idx(p, "$.tests", i), res)) < 0)
			return rc;
	return 0;
}
