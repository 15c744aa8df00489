/*
 * vn_testbed_up and vn_testbed_down do their libvirt work in a child process
 * (util/isolate.h says why: the embedded driver's lock lasts as long as the
 * process that opened it). The boot's result comes back as JSON. Other
 * URIs (a libvirtd, the test driver) hold nothing: their work stays here.
 */
#include <json-c/json.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "testbed/up.h"
#include "testbed/down.h"
#include "testbed/testbed-priv.h"
#include "util/alloc.h"
#include "util/cleanup.h"
#include "util/isolate.h"
#include "util/json.h"

static const struct {
	const char *key;
	size_t off;
} up_strings[] = {
#define S(f)                                         \
	{                                            \
#f, offsetof(struct vn_up_result, f) \
	}
	S(name),
	S(guest_dir),
	S(console_log),
	S(kernel_release),
	S(kernel_version),
	S(kernel_recipe),
	S(kernel_config_sha256),
	S(topology_path),
	S(accel_reason),
	S(fidelity_report),
	S(arch),
	S(snapshot),
	S(icount),
#undef S
};

static char **up_string(struct vn_up_result *r, size_t i)
{
	return (char **)((char *)r + up_strings[i].off);
}

static char *up_to_json(struct vn_up_result *r)
{
	json_object *o = json_object_new_object();

	for (size_t i = 0; i < sizeof(up_strings) / sizeof(up_strings[0]); i++) {
		const char *v = *up_string(r, i);
		json_object_object_add(o, up_strings[i].key, v ? json_object_new_string(v) : NULL);
	}
	if (r->kernel_patches) {
		json_object *p = json_object_new_array();
		for (char **s = r->kernel_patches; *s; s++)
			json_object_array_add(p, json_object_new_string(*s));
		json_object_object_add(o, "kernel_patches", p);
	}
	json_object_object_add(o, "accel", json_object_new_int(r->accel));
	json_object_object_add(o, "boot_s", json_object_new_double(r->boot_s));
	json_object_object_add(o, "fidelity_ok", json_object_new_boolean(r->fidelity_ok));
	json_object_object_add(o, "restored", json_object_new_boolean(r->restored));
	json_object_object_add(o, "clock_step_s", json_object_new_double(r->clock_step_s));
	json_object_object_add(o, "icount_lead_s", json_object_new_double(r->icount_lead_s));
	json_object_object_add(o, "vcpus", json_object_new_int64(r->vcpus));
	json_object_object_add(o, "host_cpus", json_object_new_int64(r->host_cpus));
	char *text = vn_xstrdup(json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN));
	json_object_put(o);
	return text;
}

/* From our own child: trusted in content, still type-checked so a bug cannot crash the parent. */
static void up_from_json(const char *text, struct vn_up_result *r)
{
	json_object *o = json_tokener_parse(text);

	if (!o)
		return;
	for (size_t i = 0; i < sizeof(up_strings) / sizeof(up_strings[0]); i++)
		*up_string(r, i) = vn_xstrdup_or_null(vn_json_str(o, up_strings[i].key));
	json_object *p = vn_json_member(o, "kernel_patches", json_type_array);
	size_t n = 0;
	for (size_t i = 0; p && i < json_object_array_length(p); i++) {
		json_object *s = json_object_array_get_idx(p, i);
		if (json_object_is_type(s, json_type_string))
			vn_strv_push(&r->kernel_patches, &n, json_object_get_string(s));
	}
	r->accel = (enum vn_accel)vn_json_int64(o, "accel");
	r->boot_s = vn_json_double(o, "boot_s");
	r->fidelity_ok = vn_json_bool(o, "fidelity_ok");
	r->restored = vn_json_bool(o, "restored");
	r->clock_step_s = vn_json_double(o, "clock_step_s");
	r->icount_lead_s = vn_json_double(o, "icount_lead_s");
	r->vcpus = (unsigned)vn_json_int64(o, "vcpus");
	r->host_cpus = (unsigned)vn_json_int64(o, "host_cpus");
	json_object_put(o);
}

struct up_call {
	const struct vn_testbed_ctx *ctx;
	const struct vn_up_opts *o;
};

static int up_child(void *arg, char **out, struct vn_error *err)
{
	struct up_call *c = arg;
	struct vn_up_result r = {0};
	int rc = vn_testbed_up_here(c->ctx, c->o, &r, err);

	/* Also on failure: a guest that booted but failed its fidelity check is still up, and named. */
	*out = up_to_json(&r);
	vn_up_result_clear(&r);
	return rc;
}

int vn_testbed_up(const struct vn_testbed_ctx *ctx, const struct vn_up_opts *o, struct vn_up_result *r,
		  struct vn_error *err)
{
	struct up_call c = {ctx, o};
	_cleanup_free_ char *text = NULL;

	memset(r, 0, sizeof(*r));
	if (!vn_virt_uri_is_embedded(ctx->uri))
		return vn_testbed_up_here(ctx, o, r, err);
	int64_t boot_ms = o->timeout_s > 0 ? (int64_t)o->timeout_s * 1000 : VN_TESTBED_BOOT_MS;
	struct vn_isolate_limits lim = vn_testbed_libvirt_limits(ctx, boot_ms + VN_TESTBED_BUILD_ALLOW_MS);
	int rc = vn_isolate(up_child, &c, &lim, &text, err);
	if (text)
		up_from_json(text, r);
	if (rc == 0 && !r->name)
		return vn_infra_error(err, -EPROTO, "the boot's child process answered without the guest's name");
	return rc;
}

struct down_call {
	const struct vn_testbed_ctx *ctx;
	const char *name;
};

static int down_child(void *arg, char **out, struct vn_error *err)
{
	struct down_call *c = arg;
	unsigned n = 0;
	int rc = vn_testbed_down_here(c->ctx, c->name, &n, err);

	*out = vn_xasprintf("%u", n);
	return rc;
}

int vn_testbed_down(const struct vn_testbed_ctx *ctx, const char *name, unsigned *count, struct vn_error *err)
{
	struct down_call c = {ctx, name};
	_cleanup_free_ char *text = NULL;

	if (!vn_virt_uri_is_embedded(ctx->uri))
		return vn_testbed_down_here(ctx, name, count, err);
	struct vn_isolate_limits lim = vn_testbed_libvirt_limits(ctx, VN_TESTBED_LIBVIRT_MS);
	int rc = vn_isolate(down_child, &c, &lim, &text, err);
	*count = text ? (unsigned)strtoul(text, NULL, 10) : 0;
	return rc;
}

static int down_keep_child(void *arg, char **out, struct vn_error *err)
{
	struct down_call *c = arg;

	return vn_testbed_down_keep_here(c->ctx, c->name, out, err);
}

int vn_testbed_down_failed(const struct vn_testbed_ctx *ctx, const char *name, struct vn_error *why,
			   struct vn_error *err)
{
	struct down_call c = {ctx, name};
	_cleanup_free_ char *kept = NULL;
	int rc;

	if (!vn_virt_uri_is_embedded(ctx->uri))
		rc = vn_testbed_down_keep_here(ctx, name, &kept, err);
	else {
		struct vn_isolate_limits lim = vn_testbed_libvirt_limits(ctx, VN_TESTBED_LIBVIRT_MS);
		rc = vn_isolate(down_keep_child, &c, &lim, &kept, err);
	}
	if (kept && *kept) {
		_cleanup_free_ char *detail = vn_xasprintf("%slogs kept in %s\n", why->detail ? why->detail : "", kept);
		vn_error_set_detail(why, detail);
	}
	return rc;
}
