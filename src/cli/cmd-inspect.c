/* vnuma shell / collect: a running guest's console, and one snapshot of its state. */
#include <getopt.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "cli/args.h"
#include "cli/cli.h"
#include "testbed/agent-session.h"
#include "testbed/collect.h"
#include "testbed/shell.h"
#include "testbed/snapshot.h"
#include "testbed/testbed.h"
#include "util/cleanup.h"

static void shell_attached(void *data, const char *name)
{
	(void)data;
	if (isatty(STDIN_FILENO))
		fprintf(stderr, "Connected to %s's console; Ctrl-] leaves. Press Enter for a prompt.\r\n", name);
}

static int cmd_shell(int argc, char **argv, struct vn_error *err)
{
	struct vn_cli_args args;
	struct vn_testbed_ctx ctx;
	const char *name;
	int rc;

	if (vn_cli_guest_args(&args, &vn_cmd_shell, argc, argv, NULL, NULL, &name, err) < 0)
		return args.exit;
	if ((rc = vn_cli_ctx(&args, &ctx, err)) < 0)
		return rc;
	rc = vn_testbed_shell(&ctx, name, STDIN_FILENO, STDOUT_FILENO, shell_attached, NULL, err);
	vn_testbed_ctx_clear(&ctx);
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
