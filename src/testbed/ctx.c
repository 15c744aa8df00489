/* The testbed context: the state dir (checked as ours) and how libvirt is reached. */
#include "testbed/testbed.h"
#include "testbed/testbed-priv.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "util/cleanup.h"
#include "util/dir.h"
#include "util/state.h"
#include "virt/connect.h"

/*
 * The state dir holds guest sockets, console logs and libvirt's config (which
 * says what QEMU runs as). One another user can write to, or that someone
 * else owns, could hand us their guests or their qemu.conf: refuse it, as
 * bad input (exit 2): retrying cannot help, the user has to fix the setting.
 */
static int state_dir_check(const char *dir, struct vn_error *err)
{
	struct stat st;

	if (lstat(dir, &st) < 0)
		return vn_infra_error(err, -errno, "state directory %s: %s", dir, strerror(errno));
	if (!S_ISDIR(st.st_mode))
		return vn_input_error(err, "state directory %s is not a directory", dir);
	if (st.st_uid != geteuid())
		return vn_input_error(err,
				      "state directory %s belongs to uid %u, not to you (uid %u); use your own "
				      "(--state-dir or VNUMA_STATE_DIR)",
				      dir, (unsigned)st.st_uid, (unsigned)geteuid());
	if (st.st_mode & (S_IWGRP | S_IWOTH))
		return vn_input_error(err,
				      "state directory %s is writable by %s (mode %04o): others could plant guests, "
				      "sockets or libvirt config there; chmod 700 it or use another",
				      dir, st.st_mode & S_IWOTH ? "everyone" : "its group",
				      (unsigned)(st.st_mode & 07777));
	return 0;
}

int vn_testbed_ctx_init(struct vn_testbed_ctx *ctx, const char *state_dir, const char *uri, struct vn_error *err)
{
	_cleanup_free_ char *buf = NULL;
	int rc;

	memset(ctx, 0, sizeof(*ctx));
	if ((rc = vn_state_locate(state_dir, &buf, err)) < 0)
		return rc;
	if ((rc = vn_mkdir_p(buf, 0700, err)) < 0)
		return rc;
	ctx->state_dir = realpath(buf, NULL);
	ctx->uri = uri;
	ctx->lock_timeout_ms = VN_TESTBED_LOCK_WAIT_MS;
	if (!ctx->state_dir)
		return vn_infra_error(err, -errno, "state directory %s: %s", buf, strerror(errno));
	if ((rc = state_dir_check(ctx->state_dir, err)) < 0) {
		vn_testbed_ctx_clear(ctx);
		return rc;
	}
	return 0;
}

void vn_testbed_ctx_clear(struct vn_testbed_ctx *ctx)
{
	free(ctx->state_dir);
	ctx->state_dir = NULL;
}

bool vn_testbed_uri_is_remote(const char *uri)
{
	return vn_virt_uri_is_remote(uri);
}
