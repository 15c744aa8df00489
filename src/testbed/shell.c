/* vnuma shell: the guest's console, opened through libvirt so that a guest on another host has one too. */
#include "testbed/shell.h"

#include "util/cleanup.h"
#include "virt/virt.h"

int vn_testbed_shell(const struct vn_testbed_ctx *ctx, const char *name, int in, int out, vn_shell_attached_fn attached,
		     void *data, struct vn_error *err)
{
	_cleanup_virt_domain_ struct vn_virt_domain *d = NULL;
	struct vn_virt *v = NULL;
	int rc = vn_virt_open(ctx->uri, ctx->state_dir, ctx->lock_timeout_ms, &v, err);

	if (rc < 0)
		return rc;
	if ((rc = vn_testbed_lookup(v, name, &d, err)) == 0) {
		if (attached)
			attached(data, name);
		rc = vn_virt_console_attach(d, in, out, VN_CONSOLE_ESCAPE, err);
	}
	/* The domain before its connection. */
	vn_virt_domain_free(steal_pointer(&d));
	vn_virt_close(v);
	return rc;
}
