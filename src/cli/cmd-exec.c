/* vnuma exec / shell / collect: reaching into a running guest. */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli/cli.h"
#include "testbed/testbed.h"
#include "util/cleanup.h"
#include "util/interrupt.h"
#include "util/name.h"

/*
 * The command's options and NAME, stopping at the first operand (exec's "--"
 * CMD). 0, or -1 when the command ends with a->exit.
 */
static int guest_args(struct vn_cli_args *a, const struct vn_cmd *cmd, int argc, char **argv, double *timeout,
		      const char **outdir, const char **name, struct vn_error *err)
{
	int c;

	vn_cli_args_init(a, cmd, argc, argv);
	while ((c = vn_cli_next(a, err)) > 0) {
		if (c == 't' && (*timeout = atof(optarg)) <= 0)
			return vn_cli_bad_arg(a, "timeout", "is not a positive number of seconds", err);
		if (c == 'o')
			*outdir = optarg;
	}
	if (c < 0 || vn_cli_operands(a, 1, -1, err) < 0)
		return -1;
	*name = argv[optind++];
	if ((a->exit = vn_guest_name_check(*name, err)) < 0)
		return -1;
	return 0;
}

static int cmd_exec(int argc, char **argv, struct vn_error *err)
{
	struct vn_cli_args args;
	const char *name;
	double timeout = 0;
	int rc, status = 0;

	if (guest_args(&args, &vn_cmd_exec, argc, argv, &timeout, NULL, &name, err) < 0)
		return args.exit;
	if (optind < argc && strcmp(argv[optind], "--") == 0)
		optind++;
	if (optind >= argc)
		return vn_input_error(err, "missing the command to run (see 'vnuma exec --help')");
	_cleanup_agent_ struct vn_agent *a = NULL;
	if ((rc = vn_cli_agent(&args, name, &a, err)) < 0)
		return rc;
	struct vn_agent_exec_opts o = {
		.argv = (const char *const *)argv + optind,
		/* A terminal on stdin means nobody pipes input; don't hold the command on it. */
		.stdin_fd = isatty(STDIN_FILENO) ? -1 : STDIN_FILENO,
		.stdout_fd = STDOUT_FILENO,
		.stderr_fd = STDERR_FILENO,
		.timeout_s = timeout,
		.forward_signal = &vn_interrupted,
	};
	if ((rc = vn_agent_exec(a, &o, &status, err)) < 0)
		return rc;
	return status;
}

static int cmd_shell(int argc, char **argv, struct vn_error *err)
{
	struct vn_cli_args args;
	struct vn_testbed_ctx ctx;
	struct vn_virt *v = NULL;
	const char *name;
	int rc;

	if (guest_args(&args, &vn_cmd_shell, argc, argv, NULL, NULL, &name, err) < 0)
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

static int cmd_collect(int argc, char **argv, struct vn_error *err)
{
	struct vn_cli_args args;
	const char *name, *outdir = NULL;
	int rc;

	if (guest_args(&args, &vn_cmd_collect, argc, argv, NULL, &outdir, &name, err) < 0)
		return args.exit;
	/* Also accept "NAME -o DIR" with the option after the name. */
	if (!outdir && optind + 1 < argc && strcmp(argv[optind], "-o") == 0)
		outdir = argv[optind + 1];
	if (!outdir)
		return vn_input_error(err, "collect needs -o DIR");
	_cleanup_agent_ struct vn_agent *a = NULL;
	if ((rc = vn_cli_agent(&args, name, &a, err)) < 0 || (rc = vn_testbed_collect(a, outdir, err)) < 0)
		return rc;
	fprintf(stderr, "snapshot of %s written to %s (snapshot.json and raw files)\n", name, outdir);
	return VN_EXIT_OK;
}

static const struct vn_cli_opt exec_opts[] = {
	{"timeout", 't', true, "S", VN_VAL_NONE, "kill the command after S seconds (default: no limit)"},
	VN_CLI_OPT_END,
};

const struct vn_cmd vn_cmd_exec = {
	.name = "exec",
	.fn = cmd_exec,
	.summary = "run a command in a guest, mirroring its output and exit code",
	.synopsis = "[--timeout S] NAME -- CMD [ARGS...]",
	.description = "Runs CMD through the guest agent: its stdout and stderr arrive apart, stdin is\n"
		       "forwarded (unless it is a terminal), Ctrl-C is passed on, and vnuma exits with\n"
		       "CMD's exit code. A program the guest does not have is bad input (exit 2).",
	.opts = exec_opts,
	.common = VN_CLI_STATE_DIR,
	.operand = VN_VAL_GUEST,
	.stop_at_operand = true,
};

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
	.common = VN_CLI_STATE_DIR,
	.operand = VN_VAL_GUEST,
	.stop_at_operand = true,
};
