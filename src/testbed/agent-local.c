/*
 * The agent of a guest on this host, reached without libvirt: its channel's
 * socket is in the guest dir. Nothing here links libvirt, so that the light
 * `vnuma exec` (cli/front.c) starts in a few ms (agent-session.c adds remote
 * guests).
 */
#include "testbed/agent-session.h"
#include "testbed/testbed-priv.h"

#include <errno.h>
#include <sys/stat.h>

#include "util/cleanup.h"
#include "util/name.h"
#include "util/state.h"
#include "virt/connect.h"
#include "virt/console.h"

/* The watch of a connection to a guest (vn_agent_set_watch): virt/watch.c. */
static int watch_check(void *data, struct vn_error *err)
{
	return vn_virt_watch_check(data, err);
}

static void watch_free(void *data)
{
	vn_virt_watch_free(data);
}

struct vn_virt_watch *vn_testbed_agent_watch(const struct vn_testbed_ctx *ctx, const char *name)
{
	_cleanup_free_ char *log = vn_state_guest_file(ctx->state_dir, name, VN_GUEST_CONSOLE_LOG);
	/* QEMU's pid file is the embedded driver's; a daemon's is not ours (a remote guest's console is streamed into the same local log). */
	const char *pid_root = vn_virt_uri_is_embedded(ctx->uri) ? ctx->state_dir : NULL;

	return vn_virt_watch_new(pid_root, name, log);
}

int vn_testbed_agent_greet(struct vn_agent **a, struct vn_virt_watch *w, int timeout_ms, struct vn_error *err)
{
	/* Before hello, so that a guest that is already dead is named so at once. */
	vn_agent_set_watch(*a, watch_check, w, watch_free);
	int rc = vn_agent_hello(*a, timeout_ms, NULL, err);
	if (rc < 0) {
		vn_agent_close(*a);
		*a = NULL;
	}
	return rc;
}

int vn_testbed_agent_local(const struct vn_testbed_ctx *ctx, const char *name, int timeout_ms, struct vn_agent **out,
			   struct vn_error *err)
{
	_cleanup_free_ char *dir = NULL, *sock = NULL;
	struct stat st;
	int rc;

	if ((rc = vn_guest_name_check(name, err)) < 0)
		return rc;
	/* The same layout vn_virt_guest_dir() creates. */
	dir = vn_state_guest_dir(ctx->state_dir, name);
	sock = vn_state_guest_file(ctx->state_dir, name, VN_GUEST_AGENT_SOCK);
	if (stat(dir, &st) != 0)
		return vn_input_error(err, "no guest named '%s' (see 'vnuma list')", name);
	if ((rc = vn_agent_connect(sock, timeout_ms, out, err)) < 0)
		return rc;
	return vn_testbed_agent_greet(out, vn_testbed_agent_watch(ctx, name), timeout_ms, err);
}
