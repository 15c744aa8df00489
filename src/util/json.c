#include "util/json.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/alloc.h"
#include "util/cleanup.h"
#include "util/strbuf.h"

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

int vn_json_parse(const char *text, const char *name, struct json_object **out, struct vn_error *err)
{
	_cleanup_(json_tokener_freep) struct json_tokener *tok = json_tokener_new();
	_cleanup_json_ struct json_object *root = NULL;
	size_t len = strlen(text);
	unsigned line, col;

	if (!tok)
		vn_oom();
	if (len > INT32_MAX)
		return vn_input_error(err, "%s: too large", name);
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
		return vn_input_error(err, "%s:%u:%u: malformed JSON: %s", name, line, col,
				      json_tokener_error_desc(jerr));
	}
	while (end < len && isspace((unsigned char)text[end]))
		end++;
	if (end < len) {
		line_col(text, end, &line, &col);
		return vn_input_error(err, "%s:%u:%u: malformed JSON: trailing content after the top-level value", name,
				      line, col);
	}
	*out = steal_pointer(&root);
	return 0;
}

int vn_json_bad(const struct vn_json_reader *r, const char *path, const char *fmt, ...)
{
	char msg[1024];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	return vn_input_error(r->err, "%s: %s: %s", r->file, path, msg);
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

int vn_json_expected(const struct vn_json_reader *r, const char *path, const char *what, struct json_object *v)
{
	char b[128];
	return vn_json_bad(r, path, "expected %s, got %s", what, show(v, b, sizeof(b)));
}

int vn_json_missing(const struct vn_json_reader *r, const char *path, const char *key)
{
	return vn_json_bad(r, path, "missing required key \"%s\"", key);
}

static const char *mark_truncated(char *buf, int n)
{
	if (n >= VN_JSON_PATH_MAX)
		memcpy(buf + VN_JSON_PATH_MAX - 4, "...", 4);
	return buf;
}

const char *vn_json_path_key(char buf[VN_JSON_PATH_MAX], const char *parent, const char *key)
{
	bool plain = *key && !isdigit((unsigned char)*key);

	for (const char *p = key; *p && plain; p++)
		plain = isalnum((unsigned char)*p) || *p == '_';
	int n = plain ? snprintf(buf, VN_JSON_PATH_MAX, "%s.%s", parent, key)
		      : snprintf(buf, VN_JSON_PATH_MAX, "%s[\"%s\"]", parent, key);
	return mark_truncated(buf, n);
}

const char *vn_json_path_idx(char buf[VN_JSON_PATH_MAX], const char *parent, size_t i)
{
	return mark_truncated(buf, snprintf(buf, VN_JSON_PATH_MAX, "%s[%zu]", parent, i));
}

struct json_object *vn_json_get(struct json_object *o, const char *key)
{
	struct json_object *v = NULL;
	return json_object_object_get_ex(o, key, &v) ? v : NULL;
}

int vn_json_check_type(const struct vn_json_reader *r, struct json_object *v, enum json_type t, const char *path)
{
	/* An integer is a number too; the reverse is checked where it matters. */
	if (json_object_is_type(v, t) || (t == json_type_double && json_object_is_type(v, json_type_int)))
		return 0;
	switch (t) {
	case json_type_object: return vn_json_expected(r, path, "an object", v);
	case json_type_array: return vn_json_expected(r, path, "an array", v);
	case json_type_string: return vn_json_expected(r, path, "a string", v);
	case json_type_boolean: return vn_json_expected(r, path, "true or false", v);
	case json_type_double: return vn_json_expected(r, path, "a number", v);
	case json_type_int: return vn_json_expected(r, path, "an integer", v);
	default: return vn_json_expected(r, path, "something else", v);
	}
}

int vn_json_check_keys(const struct vn_json_reader *r, struct json_object *o, const char *path,
		       const char *const *known)
{
	json_object_object_foreach(o, key, val)
	{
		(void)val;
		bool ok = false;
		for (const char *const *k = known; *k && !ok; k++)
			ok = strcmp(*k, key) == 0;
		if (ok)
			continue;
		_cleanup_strbuf_ struct vn_strbuf list = VN_STRBUF_INIT;
		for (const char *const *k = known; *k; k++)
			vn_strbuf_printf(&list, "%s%s", k == known ? "" : ", ", *k);
		return vn_json_bad(r, path, "unknown key \"%s\" (known: %s)", key, list.s ? list.s : "none");
	}
	return 0;
}

int vn_json_one_of(const struct vn_json_reader *r, struct json_object *v, const char *path, const char *const *names,
		   int *out)
{
	int rc = vn_json_check_type(r, v, json_type_string, path);
	if (rc < 0)
		return rc;
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
	return vn_json_expected(r, path, list.s, v);
}

bool vn_json_name_ok(const char *s)
{
	if (!*s || *s == '.')
		return false;
	for (; *s; s++)
		if (!isalnum((unsigned char)*s) && !strchr("-_.", *s))
			return false;
	return true;
}

#define NAME_WHAT "a name of letters, digits, '-', '_' and '.' (not starting with '.')"

int vn_json_get_str(const struct vn_json_reader *r, struct json_object *o, const char *path, const char *key,
		    unsigned flags, char **out)
{
	char p[VN_JSON_PATH_MAX];
	struct json_object *v = vn_json_get(o, key);

	if (!v)
		return flags & VN_JSON_REQUIRED ? vn_json_missing(r, path, key) : 0;
	vn_json_path_key(p, path, key);
	int rc = vn_json_check_type(r, v, json_type_string, p);
	if (rc < 0)
		return rc;
	const char *s = json_object_get_string(v);
	if ((flags & VN_JSON_NAME) && !vn_json_name_ok(s))
		return vn_json_expected(r, p, NAME_WHAT, v);
	if ((flags & VN_JSON_NONEMPTY) && !*s)
		return vn_json_expected(r, p, "a non-empty string", v);
	free(*out);
	*out = vn_xstrdup(s);
	return 0;
}

int vn_json_strv_append(const struct vn_json_reader *r, struct json_object *v, const char *path, unsigned flags,
			char ***vec, size_t *n)
{
	char ep[VN_JSON_PATH_MAX];
	int rc = vn_json_check_type(r, v, json_type_array, path);
	if (rc < 0)
		return rc;
	size_t len = json_object_array_length(v);
	char **nv = *vec = vn_xreallocarray(*vec, *n + len + 1, sizeof(*nv));
	nv[*n] = NULL;
	for (size_t i = 0; i < len; i++) {
		struct json_object *e = json_object_array_get_idx(v, i);
		vn_json_path_idx(ep, path, i);
		if (flags & VN_JSON_NONEMPTY) {
			if (!json_object_is_type(e, json_type_string) || !*json_object_get_string(e))
				return vn_json_expected(r, ep, "a non-empty string", e);
		} else if ((rc = vn_json_check_type(r, e, json_type_string, ep)) < 0) {
			return rc;
		}
		const char *s = json_object_get_string(e);
		if ((flags & VN_JSON_NAME) && !vn_json_name_ok(s))
			return vn_json_expected(r, ep, NAME_WHAT, e);
		for (size_t j = 0; (flags & VN_JSON_NAME) && j < *n; j++)
			if (strcmp(nv[j], s) == 0)
				return vn_json_bad(r, ep, "\"%s\" is listed twice", s);
		nv[*n] = vn_xstrdup(s);
		nv[++*n] = NULL;
	}
	return 0;
}

int vn_json_num(const struct vn_json_reader *r, struct json_object *v, const char *path, enum vn_json_range range,
		double *out)
{
	static const char *const what[] = {
		[VN_JSON_POSITIVE] = "a number > 0",
		[VN_JSON_NONNEG] = "a number >= 0",
		[VN_JSON_FRACTION] = "a fraction in (0, 1]",
		[VN_JSON_FINITE] = "a number",
	};
	if (!json_object_is_type(v, json_type_double) && !json_object_is_type(v, json_type_int))
		return vn_json_expected(r, path, what[range], v);
	double d = json_object_get_double(v);
	bool ok = isfinite(d);
	if (range == VN_JSON_POSITIVE || range == VN_JSON_FRACTION)
		ok = ok && d > 0;
	if (range == VN_JSON_NONNEG)
		ok = ok && d >= 0;
	if (range == VN_JSON_FRACTION)
		ok = ok && d <= 1;
	if (!ok)
		return vn_json_expected(r, path, what[range], v);
	*out = d;
	return 0;
}

int vn_json_get_num(const struct vn_json_reader *r, struct json_object *o, const char *path, const char *key,
		    bool required, enum vn_json_range range, double *out)
{
	char p[VN_JSON_PATH_MAX];
	struct json_object *v = vn_json_get(o, key);

	if (!v)
		return required ? vn_json_missing(r, path, key) : 0;
	return vn_json_num(r, v, vn_json_path_key(p, path, key), range, out);
}

int vn_json_uint(const struct vn_json_reader *r, struct json_object *v, const char *path, int64_t min, int64_t max,
		 const char *what, unsigned *out)
{
	if (!json_object_is_type(v, json_type_int))
		return vn_json_expected(r, path, what, v);
	int64_t n = json_object_get_int64(v);
	if (n < min || n > max)
		return vn_json_expected(r, path, what, v);
	*out = (unsigned)n;
	return 0;
}

int vn_json_get_uint(const struct vn_json_reader *r, struct json_object *o, const char *path, const char *key,
		     bool required, int64_t min, int64_t max, const char *what, unsigned *out)
{
	char p[VN_JSON_PATH_MAX];
	struct json_object *v = vn_json_get(o, key);

	if (!v)
		return required ? vn_json_missing(r, path, key) : 0;
	return vn_json_uint(r, v, vn_json_path_key(p, path, key), min, max, what, out);
}

void vn_json_add_str(struct json_object *o, const char *key, const char *s)
{
	json_object_object_add(o, key, s ? json_object_new_string(s) : NULL);
}

void vn_json_add_strs(struct json_object *o, const char *const members[][2], size_t n)
{
	for (size_t i = 0; i < n; i++)
		vn_json_add_str(o, members[i][0], members[i][1]);
}

struct json_object *vn_json_new_double_sig(double v, int digits)
{
	char text[64];

	snprintf(text, sizeof(text), "%.*g", digits, v);
	return json_object_new_double_s(v, text);
}

struct json_object *vn_json_new_double_fixed(double v, int decimals)
{
	char text[64];

	/* Large values would not fit: json-c's own text then (it still reads back as v). */
	if (snprintf(text, sizeof(text), "%.*f", decimals, v) >= (int)sizeof(text))
		return json_object_new_double(v);
	return json_object_new_double_s(v, text);
}

static struct json_object *member_of_type(struct json_object *o, const char *key, enum json_type t)
{
	struct json_object *v;

	return json_object_object_get_ex(o, key, &v) && json_object_is_type(v, t) ? v : NULL;
}

const char *vn_json_str(struct json_object *o, const char *key)
{
	struct json_object *v = member_of_type(o, key, json_type_string);

	return v ? json_object_get_string(v) : NULL;
}

int64_t vn_json_int64(struct json_object *o, const char *key)
{
	struct json_object *v = member_of_type(o, key, json_type_int);

	return v ? json_object_get_int64(v) : 0;
}

double vn_json_double(struct json_object *o, const char *key)
{
	struct json_object *v = member_of_type(o, key, json_type_double);

	return v ? json_object_get_double(v) : 0;
}

bool vn_json_bool(struct json_object *o, const char *key)
{
	struct json_object *v = member_of_type(o, key, json_type_boolean);

	return v && json_object_get_boolean(v);
}

bool vn_json_has_int64(struct json_object *o, const char *key, int64_t *out)
{
	struct json_object *v = member_of_type(o, key, json_type_int);

	if (v)
		*out = json_object_get_int64(v);
	return v != NULL;
}

bool vn_json_has_number(struct json_object *o, const char *key, double *out)
{
	struct json_object *v = vn_json_get(o, key);

	if (!json_object_is_type(v, json_type_int) && !json_object_is_type(v, json_type_double))
		return false;
	*out = json_object_get_double(v);
	return true;
}

bool vn_json_has_finite(struct json_object *o, const char *key, double *out)
{
	double x;

	if (!vn_json_has_number(o, key, &x) || !isfinite(x))
		return false;
	*out = x;
	return true;
}

struct json_object *vn_json_member(struct json_object *o, const char *key, enum json_type t)
{
	return member_of_type(o, key, t);
}
