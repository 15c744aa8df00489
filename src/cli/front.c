/*
 * vnuma, the one executable a user runs. It links only what `vnuma exec` on a
 * guest of this host needs (the agent protocol, json-c): a few ms to start,
 * where the libraries of the other commands (libvirt with GnuTLS, libguestfs,
 * libxml2, ~60 in all) took 20 ms on a quiet host and 60 ms on a busy one,
 * most of an exec's round trip. Every other command, and exec on a remote
 * guest, runs in vnuma-core.so (main.c), loaded with the same arguments.
 * /proc/self/exe stays this file, so the layout (util/paths.h) and a start
 * again (cli/connect.c) are as before.
 */
#include <dlfcn.h>
#include <errno.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/args.h"
#include "cli/cli.h"
#include "cli/cmds.h"
#include "testbed/agent-session.h"
#include "testbed/testbed.h"
#include "util/alloc.h"
#include "util/interrupt.h"
#include "util/paths.h"
#include "virt/connect.h"

/* The commands answered here; exec's --help is printed from it. */
const struct vn_cmd *const vn_cli_commands[] = {
	&vn_cmd_exec,
	NULL,
};

/* Set when exec's guest is on another host: libvirt's, so the core's. */
static bool to_core;

int vn_cli_agent(const struct vn_cli_args *a, const char *name, struct vn_agent **out, struct vn_error *err)
{
	struct vn_testbed_ctx ctx;
	int rc;

	if (vn_virt_uri_is_remote(a->uri)) {
		to_core = true;
		return -EREMOTE;
	}
	if ((rc = vn_testbed_ctx_init(&ctx, a->state_dir, a->uri, err)) < 0)
		return rc;
	rc = vn_testbed_agent_local(&ctx, name, VN_TESTBED_AGENT_MS, out, err);
	vn_testbed_ctx_clear(&ctx);
	return rc;
}

static int core_main(int argc, char **argv)
{
	struct vn_error err = {0};
	struct vn_paths p;
	char path[PATH_MAX + 16];

	if (vn_paths_self(&p, &err) < 0) {
		fprintf(stderr, "vnuma: %s\n", err.msg);
		return VN_EXIT_INFRA;
	}
	snprintf(path, sizeof(path), "%s/vnuma-core.so", p.core_dir);
	/* Never closed: vn_cli_main ends the process itself (main.c, quit()). */
	void *core = dlopen(path, RTLD_NOW | RTLD_LOCAL);
	int (*fn)(int, char **) = core ? (int (*)(int, char **))dlsym(core, "vn_cli_main") : NULL;
	if (!fn) {
		fprintf(stderr, "vnuma: cannot load %s: %s (a broken install: reinstall vnuma, or rebuild)\n", path,
			dlerror());
		return VN_EXIT_INFRA;
	}
	return fn(argc, argv);
}

int main(int argc, char **argv)
{
	struct vn_error err = {0};

	if (argc < 2 || strcmp(argv[1], "exec") != 0)
		return core_main(argc, argv);
	/* getopt reorders argv: the core, if exec goes there, gets it as it was given. */
	char **given = vn_xcalloc((size_t)argc + 1, sizeof(*given));
	memcpy(given, argv, (size_t)argc * sizeof(*argv));
	vn_interrupt_install();
	int rc = vn_cli_run(&vn_cmd_exec, argc - 1, argv + 1, &err);
	if (to_core) {
		vn_error_clear(&err);
		return core_main(argc, given);
	}
	free(given);
	return vn_cli_exit(&vn_cmd_exec, rc, &err);
}
