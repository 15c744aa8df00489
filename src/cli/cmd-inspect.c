/* vnuma shell / collect: a running guest's console, and one snapshot of its state. */
#include <getopt.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "cli/args.h"
#include "cli/cli.h"
#include "testbed/agent-session.h"
#include "testbed/collect.h"
#include "testbed/snapshot.h"
#include "testbed/testbed.h"
#include "util/cleanup.h"
#include "virt/virt.h"

static int cmd_shell(int argc, char **argv, struct vn_error *err)
{
	struct vn_cli_args args;
	struct vn_testbed_ctx ctx;
	struct vn_virt *v = NULL;
	const char *name;
	int rc;

	if (vn_cli_guest_args(&args, &vn_cmd_shell, argc, argv, NULL, NULL, &name, err) < 0)
		return args.exit;
	if ((rc = vn_cli_ctx(&args, &ctx, err)) < 0)
		return rc;
	rc = vn_virt_open(ctx.uri, ctx.state_dir, ctx.lock_timeout_ms, &v, err);
	vn_testbed_ctx_clear(&ctx);
	if (rc < 0)
		return rc;
	_cleanup_virt_domain_ struct vn_virt_domain *d = NULL;
	if ((rc = vn_testbed_lookup(v, name, &d, err)) == 0) {
		if (isatty(STDIN_FILENO))
			fprintf(stderr, "Connected to %s's console; Ctrl-] leaves. Press Enter for a prompt.\r\n",
				name);
		rc = vn_virt_console_attach(d, STDIN_FILENO, STDOUT_FILENO, VN_CONSOLE_ESCAPE, err);
	}
	vn_virt_domain_free(steal_pointer(&d));
	vn_virt_close(v);
	return rc < 0 ? rc : VN_EXIT_OK;
}

static int collect_opt(struct vn_cli_args *a, int c, void *data, struct vn_error *err)
{
	if (c == 'o')
		*(const char **)data = optarg;
	return 0;
}

static int cmd_collect(int argc, char **argv, struct vn_error *err)
{
	struct vn_cli_args args;
	const char *name, *outdir = NULL;
	int rc;

	if (vn_cli_guest_args(&args, &vn_cmd_collect, argc, argv, collect_opt, &outdir, &name, err) < 0)
		return args.exit;
	/* Also accept "NAME -o DIR" with the option after the name. */
	if (!outdir && optind + 1 < argc && strcmp(argv[optind], "-o") == 0)
		outdir = argv[optind + 1];
	if (!outdir)
		return vn_input_error(err, "collect needs -o DIR");
	_cleanup_agent_ struct vn_agent *a = NULL;
	_cleanup_(vn_snapshot_clear) struct vn_snapshot snap = {0};
	if ((rc = vn_cli_agent(&args, name, &a, err)) < 0 || (rc = vn_testbed_collect(a, outdir, &snap, err)) < 0)
		return rc;
	fprintf(stderr, "snapshot of %s written to %s (snapshot.json and raw files)\n", name, outdir);
	return VN_EXIT_OK;
}

const struct vn_cmd vn_cmd_shell = {
	.name = "shell",
	.fn = cmd_shell,
	.summary = "interactive root shell on a guest's console (Ctrl-] leaves)",
	.synopsis = "NAME",
	.description = "Attaches to the guest's serial console; Ctrl-] leaves (also inside tmux).",
	.common = VN_CLI_GUEST,
	.operand = VN_VAL_GUEST,
	.stop_at_operand = true,
};

static const struct vn_cli_opt collect_opts[] = {
	{"output", 'o', true, "DIR", VN_VAL_DIR, "where to write the snapshot (required)"},
	VN_CLI_OPT_END,
};

const struct vn_cmd vn_cmd_collect = {
	.name = "collect",
	.fn = cmd_collect,
	.summary = "one snapshot: vmstat, per-node numastat/meminfo, distances, dmesg",
	.synopsis = "NAME -o DIR",
	.description = "Writes /proc/vmstat, per-node numastat, meminfo, vmstat, distance and cpulist,\n"
		       "numactl -H, dmesg, the kernel command line and version, and snapshot.json\n"
		       "holding all of it parsed.",
	.opts = collect_opts,
	.common = VN_CLI_GUEST,
	.operand = VN_VAL_GUEST,
	.stop_at_operand = true,
};
