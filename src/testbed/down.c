/* vnuma down, in the process that holds libvirt: one guest or all, logs kept or not. */
#include "testbed/testbed.h"
#include "testbed/testbed-priv.h"

int vn_testbed_down_here(const struct vn_testbed_ctx *ctx, const char *name, unsigned *count, struct vn_error *err)
{
	struct vn_virt *v = NULL;
	int rc;

	*count = 0;
	if (name && vn_testbed_remote_held(name)) {
		rc = vn_testbed_remote_release(name, true, err);
		*count = rc == 0;
		return rc;
	}
	if ((rc = vn_virt_open_within(ctx->uri, ctx->state_dir, ctx->lock_timeout_ms, ctx->connect_timeout_ms, &v,
				      err)) < 0)
		return rc;
	if (name) {
		struct vn_virt_domain *d = NULL;
		if ((rc = vn_testbed_lookup(v, name, &d, err)) == 0) {
			rc = vn_virt_domain_destroy(d, err);
			vn_virt_domain_free(d);
			*count += rc == 0;
		}
	} else {
		struct vn_virt_domain_info *list = NULL;
		size_t n = 0;
		rc = vn_virt_domain_list(v, &list, &n, err);
		for (size_t i = 0; rc == 0 && i < n; i++) {
			struct vn_virt_domain *d = NULL;
			if ((rc = vn_virt_domain_lookup(v, list[i].name, &d, err)) < 0)
				break;
			rc = vn_virt_domain_destroy(d, err);
			vn_virt_domain_free(d);
			*count += rc == 0;
		}
		vn_virt_domain_info_free(list, n);
	}
	vn_virt_close(v);
	return rc;
}

int vn_testbed_down_keep_here(const struct vn_testbed_ctx *ctx, const char *name, char **kept, struct vn_error *err)
{
	_cleanup_virt_domain_ struct vn_virt_domain *d = NULL;
	struct vn_virt *v = NULL;
	int rc;

	*kept = NULL;
	struct vn_virt_domain *held = vn_testbed_remote_held(name);
	if (held) {
		struct vn_error e = {0};
		if ((rc = vn_virt_domain_destroy_keep(held, kept, err)) < 0)
			vn_virt_domain_destroy(held, &e);
		vn_error_clear(&e);
		vn_testbed_remote_release(name, false, &e);
		vn_error_clear(&e);
		return rc;
	}
	if ((rc = vn_virt_open_within(ctx->uri, ctx->state_dir, ctx->lock_timeout_ms, ctx->connect_timeout_ms, &v,
				      err)) < 0)
		return rc;
	if ((rc = vn_testbed_lookup(v, name, &d, err)) == 0 && (rc = vn_virt_domain_destroy_keep(d, kept, err)) < 0) {
		/* Keeping the logs failed; still leave nothing running. */
		struct vn_error e = {0};
		vn_virt_domain_destroy(d, &e);
		vn_error_clear(&e);
	}
	vn_virt_close(v);
	return rc;
}
