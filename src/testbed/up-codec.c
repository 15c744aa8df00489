/* struct vn_up_result to and from JSON: the table of its members is the writer's and the reader's. */
#include <errno.h>
#include <json-c/json.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "testbed/up-codec.h"
#include "util/alloc.h"
#include "util/cleanup.h"
#include "util/json.h"

enum kind { STR, NUM, UINT, BOOL, ACCEL };

static const struct member {
	const char *key;
	enum kind kind;
	size_t off;
} members[] = {
#define M(f, k)                                         \
	{                                               \
#f, k, offsetof(struct vn_up_result, f) \
	}
	M(name, STR),
	M(guest_dir, STR),
	M(console_log, STR),
	M(kernel_release, STR),
	M(kernel_version, STR),
	M(kernel_recipe, STR),
	M(kernel_config_sha256, STR),
	M(topology_path, STR),
	M(accel_reason, STR),
	M(fidelity_report, STR),
	M(arch, STR),
	M(snapshot, STR),
	M(icount, STR),
	M(accel, ACCEL),
	M(boot_s, NUM),
	M(fidelity_ok, BOOL),
	M(restored, BOOL),
	M(clock_step_s, NUM),
	M(icount_lead_s, NUM),
	M(vcpus, UINT),
	M(host_cpus, UINT),
#undef M
};

#define AT(r, m, type) ((type *)((char *)(r) + (m)->off))

char *vn_up_result_text(const struct vn_up_result *r)
{
	_cleanup_json_ json_object *o = json_object_new_object();

	for (size_t i = 0; i < VN_ARRAY_SIZE(members); i++) {
		const struct member *m = &members[i];
		json_object *v = NULL;
		switch (m->kind) {
		case STR: v = *AT(r, m, char *) ? json_object_new_string(*AT(r, m, char *)) : NULL; break;
		case NUM: v = json_object_new_double(*AT(r, m, double)); break;
		case UINT: v = json_object_new_int64(*AT(r, m, unsigned)); break;
		case BOOL: v = json_object_new_boolean(*AT(r, m, bool)); break;
		case ACCEL: v = json_object_new_int(*AT(r, m, enum vn_accel)); break;
		}
		json_object_object_add(o, m->key, v);
	}
	if (r->kernel_patches) {
		json_object *p = json_object_new_array();
		for (char **s = r->kernel_patches; *s; s++)
			json_object_array_add(p, json_object_new_string(*s));
		json_object_object_add(o, "kernel_patches", p);
	}
	return vn_xstrdup(json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN));
}

static int read_member(const struct vn_json_reader *rd, json_object *o, const struct member *m, struct vn_up_result *r)
{
	char p[VN_JSON_PATH_MAX];
	json_object *v = vn_json_get(o, m->key);
	const char *path = vn_json_path_key(p, "$", m->key);
	unsigned u;

	if (!v && m->kind == STR)
		return 0; /* null: none */
	if (!v && !json_object_object_get_ex(o, m->key, NULL))
		return vn_json_missing(rd, "$", m->key);
	switch (m->kind) {
	case STR: return vn_json_get_str(rd, o, "$", m->key, 0, AT(r, m, char *));
	case NUM: return vn_json_num(rd, v, path, VN_JSON_FINITE, AT(r, m, double));
	case UINT: return vn_json_uint(rd, v, path, 0, UINT32_MAX, "an integer >= 0", AT(r, m, unsigned));
	case BOOL:
		if (!v || !json_object_is_type(v, json_type_boolean))
			return vn_json_expected(rd, path, "true or false", v);
		*AT(r, m, bool) = json_object_get_boolean(v);
		return 0;
	case ACCEL:
		if (vn_json_uint(rd, v, path, VN_ACCEL_TCG, VN_ACCEL_KVM, "0 (tcg) or 1 (kvm)", &u) < 0)
			return -EINVAL;
		*AT(r, m, enum vn_accel) = (enum vn_accel)u;
		return 0;
	}
	return 0;
}

int vn_up_result_parse(const char *text, const char *name, struct vn_up_result *r, struct vn_error *err)
{
	const char *known[VN_ARRAY_SIZE(members) + 2] = {0};
	const struct vn_json_reader rd = {.file = name, .err = err};
	_cleanup_json_ json_object *o = NULL;
	size_t npatches = 0;
	int rc;

	memset(r, 0, sizeof(*r));
	if (strnlen(text, VN_UP_TEXT_MAX + 1) > VN_UP_TEXT_MAX)
		return vn_input_error(err, "%s: over %u bytes", name, VN_UP_TEXT_MAX);
	if ((rc = vn_json_parse(text, name, &o, err)) < 0)
		return rc;
	if ((rc = vn_json_check_type(&rd, o, json_type_object, "$")) < 0)
		return rc;
	for (size_t i = 0; i < VN_ARRAY_SIZE(members); i++)
		known[i] = members[i].key;
	known[VN_ARRAY_SIZE(members)] = "kernel_patches";
	if ((rc = vn_json_check_keys(&rd, o, "$", known)) < 0)
		return rc;
	for (size_t i = 0; i < VN_ARRAY_SIZE(members); i++)
		if ((rc = read_member(&rd, o, &members[i], r)) < 0)
			return rc;
	json_object *p = vn_json_get(o, "kernel_patches");
	if (!p)
		return 0;
	if ((rc = vn_json_check_type(&rd, p, json_type_array, "$.kernel_patches")) < 0)
		return rc;
	if (json_object_array_length(p) > VN_UP_PATCHES_MAX)
		return vn_json_bad(&rd, "$.kernel_patches", "more than %d patches", VN_UP_PATCHES_MAX);
	if ((rc = vn_json_strv_append(&rd, p, "$.kernel_patches", 0, &r->kernel_patches, &npatches)) < 0)
		return rc;
	/* An empty list is written as one, not as no list. */
	if (!r->kernel_patches)
		r->kernel_patches = vn_xcalloc(1, sizeof(char *));
	return 0;
}
