/* A struct to and from JSON through one table of its members (util/json-members.h). */
#include <errno.h>
#include <stdint.h>
#include <string.h>

#include "util/alloc.h"
#include "util/json-members.h"

#define AT(s, m, type) ((type *)((char *)(s) + (m)->off))

struct json_object *vn_json_members_new(const void *s, const struct vn_json_member *members, size_t n)
{
	json_object *o = json_object_new_object();

	for (size_t i = 0; i < n; i++) {
		const struct vn_json_member *m = &members[i];
		json_object *v = NULL;
		switch (m->kind) {
		case VN_JSON_M_STR: v = *AT(s, m, char *) ? json_object_new_string(*AT(s, m, char *)) : NULL; break;
		case VN_JSON_M_NUM: v = json_object_new_double(*AT(s, m, double)); break;
		case VN_JSON_M_UINT: v = json_object_new_int64(*AT(s, m, unsigned)); break;
		case VN_JSON_M_BOOL: v = json_object_new_boolean(*AT(s, m, bool)); break;
		case VN_JSON_M_ENUM: v = json_object_new_int(*AT(s, m, int)); break;
		}
		json_object_object_add(o, m->key, v);
	}
	return o;
}

static int read_member(const struct vn_json_reader *rd, json_object *o, const struct vn_json_member *m, void *s)
{
	char p[VN_JSON_PATH_MAX];
	json_object *v = vn_json_get(o, m->key);
	const char *path = vn_json_path_key(p, "$", m->key);
	unsigned u;

	if (!v && m->kind == VN_JSON_M_STR)
		return 0; /* null: none */
	if (!v && !json_object_object_get_ex(o, m->key, NULL))
		return vn_json_missing(rd, "$", m->key);
	switch (m->kind) {
	case VN_JSON_M_STR: return vn_json_get_str(rd, o, "$", m->key, 0, AT(s, m, char *));
	case VN_JSON_M_NUM: return vn_json_num(rd, v, path, VN_JSON_FINITE, AT(s, m, double));
	case VN_JSON_M_UINT: return vn_json_uint(rd, v, path, 0, UINT32_MAX, "an integer >= 0", AT(s, m, unsigned));
	case VN_JSON_M_BOOL:
		if (!v || !json_object_is_type(v, json_type_boolean))
			return vn_json_expected(rd, path, "true or false", v);
		*AT(s, m, bool) = json_object_get_boolean(v);
		return 0;
	case VN_JSON_M_ENUM:
		if (vn_json_uint(rd, v, path, m->min, m->max, m->what, &u) < 0)
			return -EINVAL;
		*AT(s, m, int) = (int)u;
		return 0;
	}
	return 0;
}

int vn_json_members_parse(const char *text, const char *name, size_t max, const struct vn_json_member *members,
			  size_t n, const char *const *extra, void *s, struct json_object **out, struct vn_error *err)
{
	const struct vn_json_reader rd = {.file = name, .err = err};
	_cleanup_json_ json_object *o = NULL;
	_cleanup_free_ const char **known = NULL;
	size_t nextra = 0;
	int rc;

	if (strnlen(text, max + 1) > max)
		return vn_input_error(err, "%s: over %zu bytes", name, max);
	if ((rc = vn_json_parse(text, name, &o, err)) < 0)
		return rc;
	if ((rc = vn_json_check_type(&rd, o, json_type_object, "$")) < 0)
		goto cleanup;
	while (extra && extra[nextra])
		nextra++;
	known = vn_xcalloc(n + nextra + 1, sizeof(*known));
	for (size_t i = 0; i < n; i++)
		known[i] = members[i].key;
	for (size_t i = 0; i < nextra; i++)
		known[n + i] = extra[i];
	if ((rc = vn_json_check_keys(&rd, o, "$", known)) < 0)
		goto cleanup;
	for (size_t i = 0; i < n && rc == 0; i++)
		rc = read_member(&rd, o, &members[i], s);
cleanup:
	if (out)
		*out = steal_pointer(&o);
	return rc;
}
