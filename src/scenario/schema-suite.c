/*
 * A "suite" step's "suite" object (docs/suites.md): the suite's format,
 * what it runs, each run's timeout and its known-failure list, every bound
 * checked here, before anything boots. A suite that names no program is
 * refused with what to install: it never passes by running nothing.
 */
#include <ctype.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "scenario/schema-priv.h"
#include "suite/known.h"
#include "util/alloc.h"
#include "util/cleanup.h"

static const char *const formats[] = {"ktap", "ltp", "exit", NULL};

/* Default for "timeout_s": long enough for one LTP test or kselftest under TCG. */
#define SUITE_TIMEOUT_DEFAULT 300
#define SUITE_NAME_MAX        128
#define SUITE_PATH_MAX        1024

/* A test's name is a file name in steps/ and an argument: letters, digits, "._+:-", not starting with '-' or '.'. */
static bool test_name_ok(const char *s)
{
	size_t n = strlen(s);

	if (!n || n > SUITE_NAME_MAX || *s == '-' || *s == '.')
		return false;
	for (; *s; s++)
		if (!isalnum((unsigned char)*s) && !strchr("._+:-", *s))
			return false;
	return true;
}

static int parse_tests(struct vn_scn_ctx *c, struct json_object *v, const char *p, struct vn_scn_suite *su)
{
	char ep[VN_JSON_PATH_MAX];
	size_t n = 0;
	int r;

	if ((r = vn_json_check_type(&c->r, v, json_type_array, p)) < 0)
		return r;
	if (json_object_array_length(v) > VN_SCN_SUITE_TESTS_MAX)
		return vn_json_bad(&c->r, p, "%zu tests, at most %d", json_object_array_length(v),
				   VN_SCN_SUITE_TESTS_MAX);
	if ((r = vn_json_strv_append(&c->r, v, p, VN_JSON_NONEMPTY, &su->tests, &n)) < 0)
		return r;
	if (!n)
		return vn_json_bad(&c->r, p, "no tests: name at least one, or leave \"tests\" out");
	su->ntests = (unsigned)n;
	for (size_t i = 0; i < n; i++) {
		vn_json_path_idx(ep, p, i);
		if (!test_name_ok(su->tests[i]))
			return vn_json_expected(&c->r, ep,
						"a test's name (letters, digits, \"._+:-\", at most 128, "
						"not starting with '-' or '.')",
						json_object_array_get_idx(v, i));
		for (size_t j = 0; j < i; j++)
			if (strcmp(su->tests[i], su->tests[j]) == 0)
				return vn_json_bad(&c->r, ep, "\"%s\" is listed twice", su->tests[i]);
	}
	return 0;
}

/* The program: a command for KTAP and exit-status suites, LTP's install directory for LTP. */
static int parse_program(struct vn_scn_ctx *c, struct json_object *v, const char *p, struct vn_scn_suite *su)
{
	char kp[VN_JSON_PATH_MAX];
	struct json_object *cmd = vn_json_get(v, "command"), *ltp = vn_json_get(v, "ltp");
	size_t n = 0;
	int r;

	if (su->format == VN_SCN_SUITE_LTP) {
		if (cmd)
			return vn_json_bad(&c->r, vn_json_path_key(kp, p, "command"),
					   "LTP's tests run by name from \"ltp\"'s testcases/bin: give \"tests\", "
					   "not a command");
		if (!ltp)
			return vn_json_bad(&c->r, p,
					   "LTP's install directory in the guest is not given: build and install "
					   "LTP (docs/suites.md, \"LTP\") and name it, e.g. \"ltp\": \"/opt/ltp\"");
		if (!su->tests)
			return vn_json_bad(&c->r, p, "no \"tests\": name the LTP tests to run, e.g. [\"mbind01\"]");
		if ((r = vn_json_get_str(&c->r, v, p, "ltp", VN_JSON_NONEMPTY, &su->ltp)) < 0)
			return r;
		if (su->ltp[0] != '/' || strstr(su->ltp, "/..") || strlen(su->ltp) > SUITE_PATH_MAX)
			return vn_json_expected(
				&c->r, vn_json_path_key(kp, p, "ltp"),
				"an absolute directory in the guest without \"..\" (at most 1024 bytes)", ltp);
		return 0;
	}
	if (ltp)
		return vn_json_bad(&c->r, vn_json_path_key(kp, p, "ltp"),
				   "only an \"ltp\" suite takes LTP's directory");
	if (!cmd)
		return vn_json_bad(&c->r, p,
				   "no \"command\": name the suite's program in the guest, e.g. kselftest's "
				   "[\"/opt/kselftest/run_kselftest.sh\"] (docs/suites.md says how to install it)");
	if ((r = vn_json_strv_append(&c->r, cmd, vn_json_path_key(kp, p, "command"), 0, &su->command, &n)) < 0)
		return r;
	if (!n || !su->command[0][0])
		return vn_json_bad(&c->r, kp, "the command is empty");
	return 0;
}

/* A known-failure list is read now, so that a bad one is refused before booting; kept by its real path. */
static int parse_known(struct vn_scn_ctx *c, struct json_object *v, const char *p, struct vn_scn_suite *su)
{
	char kp[VN_JSON_PATH_MAX];
	_cleanup_free_ char *rel = NULL, *path = NULL;
	_cleanup_known_ struct vn_known k = {0};
	int r;

	if ((r = vn_json_get_str(&c->r, v, p, "known_failures", VN_JSON_NONEMPTY, &rel)) < 0 || !rel)
		return r;
	const char *slash = strrchr(c->r.file, '/');
	path = rel[0] == '/' || !slash ? vn_xstrdup(rel)
				       : vn_xasprintf("%.*s/%s", (int)(slash - c->r.file), c->r.file, rel);
	if ((r = vn_known_load(path, &k, c->r.err)) < 0)
		return vn_error_prefix(c->r.err, "%s: %s", c->r.file, vn_json_path_key(kp, p, "known_failures"));
	char real[PATH_MAX];
	su->known = vn_xstrdup(realpath(path, real) ? real : path);
	return 0;
}

int vn_scn_suite_parse(struct vn_scn_ctx *c, struct json_object *step, const char *sp, struct vn_scn_step *st)
{
	static const char *const step_keys[] = {"name", "workload", "suite", "placement", "cgroup", NULL};
	static const char *const keys[] = {"format", "tests", "command", "ltp", "timeout_s", "known_failures", NULL};
	char p[VN_JSON_PATH_MAX], kp[VN_JSON_PATH_MAX];
	struct json_object *v = vn_json_get(step, "suite"), *fv, *tv;
	int r, f = 0;

	vn_json_path_key(p, sp, "suite");
	if (strcmp(st->workload, "suite") != 0)
		return v ? vn_json_bad(&c->r, p, "only a \"suite\" step takes a suite (this one runs %s)", st->workload)
			 : 0;
	/* One test runs at a time, in the foreground: what else a step takes would be ignored, so it is refused. */
	if ((r = vn_json_check_keys(&c->r, step, sp, step_keys)) < 0)
		return r;
	if (!v)
		return vn_json_missing(&c->r, sp, "suite");
	if ((r = vn_json_check_type(&c->r, v, json_type_object, p)) < 0 ||
	    (r = vn_json_check_keys(&c->r, v, p, keys)) < 0)
		return r;
	struct vn_scn_suite *su = st->suite = vn_xcalloc(1, sizeof(*su));
	if (!(fv = vn_json_get(v, "format")))
		return vn_json_missing(&c->r, p, "format");
	if ((r = vn_json_one_of(&c->r, fv, vn_json_path_key(kp, p, "format"), formats, &f)) < 0)
		return r;
	su->format = (enum vn_scn_suite_format)f;
	if ((tv = vn_json_get(v, "tests")) && (r = parse_tests(c, tv, vn_json_path_key(kp, p, "tests"), su)) < 0)
		return r;
	su->timeout_s = SUITE_TIMEOUT_DEFAULT;
	if ((r = parse_program(c, v, p, su)) < 0 ||
	    (r = vn_json_get_num(&c->r, v, p, "timeout_s", false, VN_JSON_POSITIVE, &su->timeout_s)) < 0)
		return r;
	if (su->timeout_s > VN_SCN_SUITE_TIMEOUT_MAX)
		return vn_json_bad(&c->r, vn_json_path_key(kp, p, "timeout_s"), "%g seconds, at most %d (a day)",
				   su->timeout_s, VN_SCN_SUITE_TIMEOUT_MAX);
	return parse_known(c, v, p, su);
}

struct json_object *vn_scn_suite_json(const struct vn_scn_suite *su)
{
	struct json_object *o = json_object_new_object(), *t = json_object_new_array(), *cmd = json_object_new_array();

	json_object_object_add(o, "format", json_object_new_string(formats[su->format]));
	for (char **a = su->command; a && *a; a++)
		json_object_array_add(cmd, json_object_new_string(*a));
	json_object_object_add(o, su->command ? "command" : "ltp",
			       su->command ? cmd : json_object_new_string(su->ltp ? su->ltp : ""));
	if (!su->command)
		json_object_put(cmd);
	for (char **a = su->tests; a && *a; a++)
		json_object_array_add(t, json_object_new_string(*a));
	if (su->tests)
		json_object_object_add(o, "tests", t);
	else
		json_object_put(t);
	json_object_object_add(o, "timeout_s", vn_scn_json_num(su->timeout_s));
	if (su->known)
		json_object_object_add(o, "known_failures", json_object_new_string(su->known));
	return o;
}

void vn_scn_suite_free(struct vn_scn_suite *su)
{
	if (!su)
		return;
	vn_strv_free(su->command);
	vn_strv_free(su->tests);
	vn_free_all(su->ltp, su->known);
	free(su);
}

struct vn_scn_suite *vn_scn_suite_copy(const struct vn_scn_suite *su)
{
	if (!su)
		return NULL;
	struct vn_scn_suite *c = vn_xcalloc(1, sizeof(*c));
	*c = *su;
	c->command = su->command ? vn_strv_copy(su->command) : NULL;
	c->tests = su->tests ? vn_strv_copy(su->tests) : NULL;
	c->ltp = vn_xstrdup_or_null(su->ltp);
	c->known = vn_xstrdup_or_null(su->known);
	return c;
}
