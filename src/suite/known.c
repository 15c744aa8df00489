/*
 * The known-failure list: its JSON file, kernel version ranges, and what
 * a match does to a run's verdicts.
 */
#include "suite/known.h"

#include <ctype.h>
#include <errno.h>
#include <fnmatch.h>
#include <stdlib.h>
#include <string.h>

#include "util/alloc.h"
#include "util/cleanup.h"
#include "util/file.h"
#include "util/json.h"

/* Bigger files are certainly not hand-written lists. */
#define KNOWN_MAX_FILE (1u << 20)
#define KVER_PART_MAX  99999ul

void vn_known_free(struct vn_known *k)
{
	for (size_t i = 0; i < k->n; i++)
		vn_free_all(k->e[i].test, k->e[i].reason);
	free(k->e);
	*k = (struct vn_known){0};
}

/* MAJOR.MINOR[.PATCH] at s; *end after it. */
static int kver_prefix(const char *s, struct vn_kver *out, const char **end)
{
	int i = 0;

	*out = (struct vn_kver){0};
	for (;;) {
		if (!isdigit((unsigned char)*s))
			return -EINVAL;
		char *e;
		errno = 0;
		unsigned long v = strtoul(s, &e, 10);
		if (errno || v > KVER_PART_MAX)
			return -EINVAL;
		out->v[i++] = (unsigned)v;
		s = e;
		if (i == 3 || s[0] != '.' || !isdigit((unsigned char)s[1]))
			break;
		s++;
	}
	if (i < 2)
		return -EINVAL;
	*end = s;
	return 0;
}

int vn_kver_parse(const char *s, struct vn_kver *out)
{
	const char *end;
	return s ? kver_prefix(s, out, &end) : -EINVAL;
}

int vn_kver_cmp(const struct vn_kver *a, const struct vn_kver *b)
{
	for (int i = 0; i < 3; i++)
		if (a->v[i] != b->v[i])
			return a->v[i] < b->v[i] ? -1 : 1;
	return 0;
}

bool vn_kver_in(const struct vn_kver_bound *b, size_t n, const struct vn_kver *ver)
{
	for (size_t i = 0; i < n; i++) {
		int c = vn_kver_cmp(ver, &b[i].ver);
		bool ok = b[i].op == VN_KVER_LT   ? c < 0
			  : b[i].op == VN_KVER_LE ? c <= 0
			  : b[i].op == VN_KVER_GT ? c > 0
			  : b[i].op == VN_KVER_GE ? c >= 0
						  : c == 0;
		if (!ok)
			return false;
	}
	return true;
}

/* ">=4.3 <6.12": bounds separated by spaces, each an operator and MAJOR.MINOR[.PATCH]. */
static int range_parse(const char *s, struct vn_kver_bound *b, size_t *n)
{
	*n = 0;
	for (;;) {
		s += strspn(s, " ");
		if (!*s)
			return *n ? 0 : -EINVAL;
		if (*n == VN_KNOWN_MAX_BOUNDS)
			return -E2BIG;
		struct vn_kver_bound *x = &b[(*n)++];
		if (s[0] == '<' || s[0] == '>') {
			bool eq = s[1] == '=';
			x->op = s[0] == '<' ? (eq ? VN_KVER_LE : VN_KVER_LT) : (eq ? VN_KVER_GE : VN_KVER_GT);
			s += eq ? 2 : 1;
		} else if (s[0] == '=') {
			x->op = VN_KVER_EQ;
			s++;
		} else {
			return -EINVAL;
		}
		const char *end;
		if (kver_prefix(s, &x->ver, &end) < 0 || (*end && *end != ' '))
			return -EINVAL;
		s = end;
	}
}

static int entry_parse(const struct vn_json_reader *r, struct json_object *o, const char *p, struct vn_known_entry *e)
{
	static const char *const keys[] = {"test", "reason", "kernels", NULL};
	_cleanup_free_ char *kernels = NULL;
	char kp[VN_JSON_PATH_MAX];
	int rc;

	if ((rc = vn_json_check_type(r, o, json_type_object, p)) < 0 || (rc = vn_json_check_keys(r, o, p, keys)) < 0)
		return rc;
	if ((rc = vn_json_get_str(r, o, p, "test", VN_JSON_REQUIRED | VN_JSON_NONEMPTY, &e->test)) < 0 ||
	    (rc = vn_json_get_str(r, o, p, "reason", VN_JSON_REQUIRED | VN_JSON_NONEMPTY, &e->reason)) < 0 ||
	    (rc = vn_json_get_str(r, o, p, "kernels", VN_JSON_NONEMPTY, &kernels)) < 0)
		return rc;
	if (strlen(e->test) > VN_SUITE_NAME_MAX)
		return vn_json_bad(r, vn_json_path_key(kp, p, "test"), "longer than %d bytes", VN_SUITE_NAME_MAX);
	if (strlen(e->reason) > VN_SUITE_REASON_MAX)
		return vn_json_bad(r, vn_json_path_key(kp, p, "reason"), "longer than %d bytes", VN_SUITE_REASON_MAX);
	if (kernels && (rc = range_parse(kernels, e->bounds, &e->nbounds)) < 0) {
		vn_json_path_key(kp, p, "kernels");
		return vn_json_expected(r, kp, "kernel versions such as \">=4.3 <6.12\" (at most 4 bounds)",
					vn_json_get(o, "kernels"));
	}
	return 0;
}

int vn_known_parse(const char *text, const char *file, struct vn_known *out, struct vn_error *err)
{
	static const char *const keys[] = {"known_failures", NULL};
	_cleanup_json_ struct json_object *root = NULL;
	_cleanup_known_ struct vn_known k = {0};
	struct vn_json_reader r = {.file = file, .err = err};
	char p[VN_JSON_PATH_MAX];
	int rc;

	if ((rc = vn_json_parse(text, file, &root, err)) < 0 ||
	    (rc = vn_json_check_type(&r, root, json_type_object, "$")) < 0 ||
	    (rc = vn_json_check_keys(&r, root, "$", keys)) < 0)
		return rc;
	struct json_object *list = vn_json_get(root, "known_failures");
	if (!list)
		return vn_json_missing(&r, "$", "known_failures");
	if ((rc = vn_json_check_type(&r, list, json_type_array, "$.known_failures")) < 0)
		return rc;
	size_t n = json_object_array_length(list);
	if (n > VN_KNOWN_MAX_ENTRIES)
		return vn_json_bad(&r, "$.known_failures", "%zu entries, at most %d", n, VN_KNOWN_MAX_ENTRIES);
	k.e = vn_xcalloc(n ? n : 1, sizeof(*k.e));
	for (; k.n < n; k.n++) {
		vn_json_path_idx(p, "$.known_failures", k.n);
		if ((rc = entry_parse(&r, json_object_array_get_idx(list, k.n), p, &k.e[k.n])) < 0) {
			k.n++; /* its strings, whatever was read */
			return rc;
		}
	}
	*out = k;
	k = (struct vn_known){0};
	return 0;
}

int vn_known_load(const char *path, struct vn_known *out, struct vn_error *err)
{
	_cleanup_free_ char *text = NULL;
	size_t len;
	int rc = vn_file_read(path, KNOWN_MAX_FILE, &text, &len, err);

	if (rc < 0)
		return rc;
	if (strlen(text) != len)
		return vn_input_error(err, "%s: holds a NUL byte: not a JSON text", path);
	return vn_known_parse(text, path, out, err);
}

const struct vn_known_entry *vn_known_match(const struct vn_known *k, const char *test, const char *release)
{
	struct vn_kver ver;
	bool have = vn_kver_parse(release, &ver) == 0;

	for (size_t i = 0; i < k->n; i++) {
		const struct vn_known_entry *e = &k->e[i];
		if (fnmatch(e->test, test, 0) != 0)
			continue;
		if (!e->nbounds || (have && vn_kver_in(e->bounds, e->nbounds, &ver)))
			return e;
	}
	return NULL;
}

size_t vn_known_apply(const struct vn_known *k, const char *release, struct vn_suite_run *run)
{
	size_t changed = 0;

	for (size_t i = 0; i < run->n; i++) {
		struct vn_suite_test *t = &run->tests[i];
		if (t->verdict != VN_SUITE_FAIL && t->verdict != VN_SUITE_PASS)
			continue;
		const struct vn_known_entry *e = vn_known_match(k, t->name, release);
		if (!e)
			continue;
		t->verdict = t->verdict == VN_SUITE_FAIL ? VN_SUITE_XFAIL : VN_SUITE_XPASS;
		free(t->known);
		t->known = vn_xstrdup(e->reason);
		changed++;
	}
	return changed;
}
