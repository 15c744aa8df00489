/*
 * vnuma debug's testbed half: the gdbstub through libvirt's monitor (in a
 * child, so the embedded driver's lock is held only while it starts or
 * stops, never while gdb runs), and the gdb that goes with it.
 */
#include "testbed/debug.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "testbed/testbed-priv.h"
#include "util/alloc.h"
#include "util/cleanup.h"

void vn_gdbstub_clear(struct vn_gdbstub *g)
{
	free(g->kernel);
	free(g->kernel_id);
	free(g->release);
	vn_vmlinux_clear(&g->vmlinux);
	memset(g, 0, sizeof(*g));
}

char *vn_testbed_kernel_release(const char *kernel_id)
{
	const char *sp = kernel_id ? strchr(kernel_id, ' ') : NULL;

	if (!sp || !sp[1] || sp[1] == ' ')
		return NULL;
	return vn_xstrndup(sp + 1, strcspn(sp + 1, " "));
}

struct stub_call {
	const struct vn_testbed_ctx *ctx;
	const char *name;
	bool stop;
};

/* In the child: start the stub and say where, and what booted; or stop it and say whether the guest was resumed. */
static int stub_start(struct vn_virt_domain *d, char **out, struct vn_error *err)
{
	struct vn_domain_meta m = {0};
	unsigned port = 0;
	int rc = -EADDRINUSE;

	for (int i = 0; i < VN_GDBSTUB_TRIES && rc == -EADDRINUSE; i++) {
		vn_error_clear(err);
		if ((rc = vn_virt_free_port(&port, err)) < 0)
			return rc;
		rc = vn_virt_domain_gdbstub(d, port, err);
	}
	if (rc < 0 || (rc = vn_virt_domain_metadata(d, &m, err)) < 0)
		return rc;
	*out = vn_xasprintf("%u\n%s\n%s\n", port, m.kernel ? m.kernel : "", m.kernel_id ? m.kernel_id : "");
	vn_domain_meta_clear(&m);
	return 0;
}

static int stub_child(void *arg, char **out, struct vn_error *err)
{
	const struct stub_call *c = arg;
	struct vn_virt *v = NULL;
	struct vn_virt_domain *d = NULL;
	bool resumed = false;
	const char *state = NULL;
	int rc;

	if ((rc = vn_virt_open_within(c->ctx->uri, c->ctx->state_dir, c->ctx->lock_timeout_ms,
				      c->ctx->connect_timeout_ms, &v, err)) < 0)
		return rc;
	if ((rc = vn_testbed_lookup(v, c->name, &d, err)) < 0 && c->stop) {
		/* Gone since: its QEMU, and the stub with it, went too. */
		vn_error_clear(err);
		rc = 0;
	} else if (rc == 0 && (rc = vn_virt_domain_state_name(d, &state, err)) == 0) {
		/* A panicked guest ("crashed": paused by pvpanic) is as open to gdb as a running one. */
		bool running = strcmp(state, "shutoff") != 0 && strcmp(state, "nostate") != 0;
		if (!running && !c->stop)
			rc = vn_input_error(err, "guest '%s' is not running", c->name);
		else if (running && !c->stop)
			rc = stub_start(d, out, err);
		else if (running && (rc = vn_virt_domain_gdbstub(d, 0, err)) == 0 &&
			 (rc = vn_virt_domain_resume_paused(d, &resumed, err)) == 0)
			*out = vn_xstrdup(resumed ? "resumed\n" : "running\n");
	}
	vn_virt_domain_free(d);
	vn_virt_close(v);
	return rc;
}

static int stub_call(struct stub_call *c, char **out, struct vn_error *err)
{
	struct vn_isolate_limits lim = vn_testbed_libvirt_limits(c->ctx, VN_TESTBED_LIBVIRT_MS);

	*out = NULL;
	if (vn_testbed_uri_is_remote(c->ctx->uri))
		return vn_input_error(err,
				      "vnuma debug reaches this host's guests only (its gdbstub listens on "
				      "127.0.0.1), not '%s''s",
				      c->name);
	return vn_virt_uri_is_embedded(c->ctx->uri) ? vn_isolate(stub_child, c, &lim, out, err)
						    : stub_child(c, out, err);
}

/* The child's three lines: port, kernel image, kernel identity. */
static int stub_parse(char *text, struct vn_gdbstub *g, struct vn_error *err)
{
	/* strsep, not strtok: an empty line is a field the guest did not say, not one to skip. */
	char *rest = text, *port = rest ? strsep(&rest, "\n") : NULL;
	char *kernel = rest ? strsep(&rest, "\n") : NULL, *id = rest ? strsep(&rest, "\n") : NULL;
	char *end = NULL;
	unsigned long p = port ? strtoul(port, &end, 10) : 0;

	if (!port || *end || p == 0 || p > 65535)
		return vn_infra_error(err, -EPROTO, "the gdbstub's port did not come back from its child");
	g->port = (unsigned)p;
	g->kernel = kernel && *kernel ? vn_xstrdup(kernel) : NULL;
	g->kernel_id = id && *id ? vn_xstrdup(id) : NULL;
	g->release = vn_testbed_kernel_release(g->kernel_id);
	return 0;
}

int vn_testbed_gdbstub_start(const struct vn_testbed_ctx *ctx, const char *name, const char *debug_root,
			     struct vn_gdbstub *g, struct vn_error *err)
{
	struct stub_call c = {.ctx = ctx, .name = name};
	_cleanup_free_ char *out = NULL;
	struct vn_error e = {0};
	bool resumed;
	int rc;

	memset(g, 0, sizeof(*g));
	if ((rc = stub_call(&c, &out, err)) < 0 || (rc = stub_parse(out, g, err)) < 0 ||
	    (rc = vn_vmlinux_find(debug_root, g->kernel, g->release, &g->vmlinux, err)) < 0) {
		/* Nothing left behind: a stub we started is stopped again. */
		if (g->port)
			vn_testbed_gdbstub_stop(ctx, name, &resumed, &e);
		vn_error_clear(&e);
		vn_gdbstub_clear(g);
		return rc;
	}
	return 0;
}

int vn_testbed_gdbstub_stop(const struct vn_testbed_ctx *ctx, const char *name, bool *resumed, struct vn_error *err)
{
	struct stub_call c = {.ctx = ctx, .name = name, .stop = true};
	_cleanup_free_ char *out = NULL;
	int rc = stub_call(&c, &out, err);

	*resumed = rc == 0 && out && strcmp(out, "resumed\n") == 0;
	return rc;
}

char *vn_gdbstub_target(const struct vn_gdbstub *g)
{
	return vn_xasprintf("target remote 127.0.0.1:%u", g->port);
}

char **vn_gdbstub_gdb_argv(const struct vn_gdbstub *g)
{
	const char *py = g->vmlinux.gdb_py, *slash = py ? strrchr(py, '/') : NULL;
	char **argv = vn_xcalloc(10, sizeof(char *));
	size_t n = 0;

	argv[n++] = vn_xstrdup("gdb");
	argv[n++] = vn_xstrdup("-q");
	/*
	 * gdb loads vmlinux-gdb.py (lx-symbols, lx-dmesg) with the vmlinux beside
	 * it, but only from a safe path: the build's own dir is ours to trust.
	 */
	if (slash) {
		argv[n++] = vn_xstrdup("-iex");
		argv[n++] = vn_xasprintf("add-auto-load-safe-path %.*s", (int)(slash - py), py);
	}
	if (g->vmlinux.path)
		argv[n++] = vn_xstrdup(g->vmlinux.path);
	argv[n++] = vn_xstrdup("-ex");
	argv[n++] = vn_gdbstub_target(g);
	return argv;
}
