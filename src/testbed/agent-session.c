/* An agent session with a running guest, by name, watched for its death; a command run through it. */
#include "testbed/agent-session.h"
#include "testbed/testbed.h"
#include "testbed/testbed-priv.h"

#include <errno.h>
#include <sys/stat.h>

#include "util/cleanup.h"
#include "util/name.h"
#include "util/state.h"
#include "util/strbuf.h"

/* The same layout vn_virt_guest_dir() creates; computed here so exec needs no libvirt. */
static void guest_paths(const struct vn_testbed_ctx *ctx, const char *name, char **dir, char **sock)
{
	*dir = vn_state_guest_dir(ctx->state_dir, name);
	*sock = vn_state_guest_file(ctx->state_dir, name, VN_GUEST_AGENT_SOCK);
}

/* The watch of a connection to a guest (vn_agent_set_watch): virt/watch.c. */
static int watch_check(void *data, struct vn_error *err)
{
	return vn_virt_watch_check(data, err);
}

static void watch_free(void *data)
{
	vn_virt_watch_free(data);
}

int vn_testbed_agent(const struct vn_testbed_ctx *ctx, const char *name, int timeout_ms, struct vn_agent **out,
		     struct vn_error *err)
{
	_cleanup_free_ char *dir = NULL, *sock = NULL;
	struct stat st;
	int rc;

	if ((rc = vn_guest_name_check(name, err)) < 0)
		return rc;
	guest_paths(ctx, name, &dir, &sock);
	if (vn_virt_uri_is_remote(ctx->uri)) {
		struct vn_virt_domain *d = NULL;
		if ((rc = vn_testbed_remote_lookup(ctx, name, &d, err)) < 0 ||
		    (rc = vn_testbed_remote_agent(d, name, out, err)) < 0)
			return rc;
	} else {
		if (stat(dir, &st) != 0)
			return vn_input_error(err, "no guest named '%s' (see 'vnuma list')", name);
		if ((rc = vn_agent_connect(sock, timeout_ms, out, err)) < 0)
			return rc;
	}
	/*
	 * Before hello, so that a guest that is already dead is named so at
	 * once. QEMU's pid file is the embedded driver's; a daemon's is not ours
	 * (a remote guest's console is streamed into the same local log).
	 */
	_cleanup_free_ char *log = vn_guest_dir_file(dir, VN_GUEST_CONSOLE_LOG);
	const char *pid_root = vn_virt_uri_is_embedded(ctx->uri) ? ctx->state_dir : NULL;
	struct vn_virt_watch *w = vn_virt_watch_new(pid_root, name, log);
	struct vn_virt *held = vn_testbed_remote_conn(name);
	if (held)
		vn_virt_watch_connection(w, held);
	vn_agent_set_watch(*out, watch_check, w, watch_free);
	rc = vn_agent_hello(*out, timeout_ms, NULL, err);
	if (rc < 0) {
		vn_agent_close(*out);
		*out = NULL;
	}
	return rc;
}

int vn_testbed_run(struct vn_agent *a, const char *const *argv, double timeout_s, char **out, struct vn_error *err)
{
	struct vn_strbuf so = VN_STRBUF_INIT, se = VN_STRBUF_INIT;
	bool cut = false;
	struct vn_agent_exec_opts o = {
		.argv = argv,
		.stdin_fd = -1,
		.stdout_fd = -1,
		.stderr_fd = -1,
		.stdout_buf = &so,
		.stderr_buf = &se,
		.timeout_s = timeout_s,
		.truncated = &cut,
	};
	int status = -1;
	int rc = vn_agent_exec(a, &o, &status, err);

	/* Capped by the guest layer; whoever reads the output (dmesg in a snapshot) is told. */
	if (cut)
		vn_strbuf_printf(&so, "\n[vnuma: output of '%s' truncated at %u MiB]\n", argv[0],
				 VN_AGENT_EXEC_BUF_MAX >> 20);

	if (rc == 0 && status != 0) {
		char tail[200 + 4];
		/* The start of what it said on stderr, made safe for one line. */
		rc = vn_infra_error(err, -EIO, "guest command '%s' exited with %d: %s", argv[0], status,
				    vn_excerpt(se.s ? se.s : "", se.len, 200, tail));
	}
	vn_strbuf_free(&se);
	if (rc < 0) {
		vn_strbuf_free(&so);
		return rc;
	}
	*out = vn_strbuf_steal(&so);
	return 0;
}
