/* An agent session with a running guest on any host, by name, watched for its death; a command run through it. */
#include "testbed/agent-session.h"
#include "testbed/testbed.h"
#include "testbed/testbed-priv.h"

#include <errno.h>
#include <sys/stat.h>

#include "util/cleanup.h"
#include "util/name.h"
#include "util/state.h"
#include "util/strbuf.h"

int vn_testbed_agent(const struct vn_testbed_ctx *ctx, const char *name, int timeout_ms, struct vn_agent **out,
		     struct vn_error *err)
{
	struct vn_virt_domain *d = NULL;
	int rc;

	if (!vn_virt_uri_is_remote(ctx->uri))
		return vn_testbed_agent_local(ctx, name, timeout_ms, out, err);
	if ((rc = vn_guest_name_check(name, err)) < 0 || (rc = vn_testbed_remote_lookup(ctx, name, &d, err)) < 0 ||
	    (rc = vn_testbed_remote_agent(d, name, out, err)) < 0)
		return rc;
	/* The connection held for the remote guest: its loss is the guest's host's death. */
	struct vn_virt_watch *w = vn_testbed_agent_watch(ctx, name);
	struct vn_virt *held = vn_testbed_remote_conn(name);
	if (held)
		vn_virt_watch_connection(w, held);
	return vn_testbed_agent_greet(out, w, timeout_ms, err);
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
