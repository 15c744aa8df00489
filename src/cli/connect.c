/* How a command reaches its testbed: the state dir and libvirt (started again for libvirt's log settings), a guest's agent. */
#include <stdio.h>
#include <unistd.h>

#include "cli/args.h"
#include "testbed/agent-session.h"
#include "testbed/testbed.h"
#include "virt/connect.h"

int vn_cli_ctx(const struct vn_cli_args *a, struct vn_testbed_ctx *ctx, struct vn_error *err)
{
	int rc = vn_testbed_ctx_init(ctx, a->state_dir, a->uri, err);

	/*
	 * libvirt's log settings reach it only in a process started with them
	 * (virt.h), so vnuma starts again, once, before it has done anything:
	 * else libvirt writes its info and warning lines to the terminal. If
	 * that fails, they do, and the command goes on.
	 */
	if (rc == 0 && vn_virt_log_setup(ctx->state_dir) && vn_cli_argv) {
		fflush(stdout);
		fflush(stderr);
		execv("/proc/self/exe", vn_cli_argv);
	}
	return rc;
}

int vn_cli_agent(const struct vn_cli_args *a, const char *name, struct vn_agent **out, struct vn_error *err)
{
	struct vn_testbed_ctx ctx;
	/*
	 * A local guest's agent is a socket in its guest dir, reached without
	 * libvirt: no start again for libvirt's log settings, which was half
	 * of a `vnuma exec NAME -- true` (the second load of every library).
	 */
	int rc = vn_virt_uri_is_remote(a->uri) ? vn_cli_ctx(a, &ctx, err)
					       : vn_testbed_ctx_init(&ctx, a->state_dir, a->uri, err);

	if (rc < 0)
		return rc;
	rc = vn_testbed_agent(&ctx, name, VN_TESTBED_AGENT_MS, out, err);
	vn_testbed_ctx_clear(&ctx);
	return rc;
}
