/*
 * vn_testbed_up and vn_testbed_down do their libvirt work in a child process
 * (util/isolate.h says why: the embedded driver's lock lasts as long as the
 * process that opened it). The boot's result comes back as text through
 * one writer and reader (testbed/up-codec.h). Other URIs (a libvirtd, the
 * test driver) hold nothing: their work stays here.
 */
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "testbed/up.h"
#include "testbed/up-codec.h"
#include "testbed/down.h"
#include "testbed/testbed-priv.h"
#include "util/alloc.h"
#include "util/cleanup.h"
#include "util/isolate.h"

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
	*out = vn_up_result_text(&r);
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
	struct vn_error e = {0};
	/* The child's own error says more than what it could still answer. */
	if (text && vn_up_result_parse(text, "the boot's child process's answer", r, &e) < 0 && rc == 0)
		rc = vn_infra_error(err, -EPROTO, "%s", e.msg);
	vn_error_clear(&e);
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
