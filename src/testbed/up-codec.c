/* struct vn_up_result to and from JSON: the table of its members is the writer's and the reader's. */
#include <errno.h>
#include <json-c/json.h>
#include <string.h>

#include "testbed/up-codec.h"
#include "util/alloc.h"
#include "util/cleanup.h"
#include "util/json-members.h"

/* An enum crosses as the int the table reads and writes. */
_Static_assert(sizeof(enum vn_accel) == sizeof(int), "enum vn_accel is an int");

#define M(f, k) VN_JSON_MEMBER(struct vn_up_result, f, VN_JSON_M_##k)
static const struct vn_json_member members[] = {
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
	VN_JSON_MEMBER_ENUM(struct vn_up_result, accel, VN_ACCEL_TCG, VN_ACCEL_KVM, "0 (tcg) or 1 (kvm)"),
	M(boot_s, NUM),
	M(fidelity_ok, BOOL),
	M(restored, BOOL),
	M(clock_step_s, NUM),
	M(icount_lead_s, NUM),
	M(vcpus, UINT),
	M(host_cpus, UINT),
};
#undef M

char *vn_up_result_text(const struct vn_up_result *r)
{
	_cleanup_json_ json_object *o = vn_json_members_new(r, members, VN_ARRAY_SIZE(members));

	if (r->kernel_patches) {
		json_object *p = json_object_new_array();
		for (char **s = r->kernel_patches; *s; s++)
			json_object_array_add(p, json_object_new_string(*s));
		json_object_object_add(o, "kernel_patches", p);
	}
	return vn_xstrdup(json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN));
}

int vn_up_result_parse(const char *text, const char *name, struct vn_up_result *r, struct vn_error *err)
{
	static const char *const extra[] = {"kernel_patches", NULL};
	const struct vn_json_reader rd = {.file = name, .err = err};
	_cleanup_json_ json_object *o = NULL;
	size_t npatches = 0;
	int rc;

	memset(r, 0, sizeof(*r));
	if ((rc = vn_json_members_parse(text, name, VN_UP_TEXT_MAX, members, VN_ARRAY_SIZE(members), extra, r, &o,
					err)) < 0)
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
