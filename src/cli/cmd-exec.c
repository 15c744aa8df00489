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

/* Parses [--state-dir D] [--connect U] [--timeout S] [-o DIR] NAME, stopping at "--". */
static int guest_args(int argc, char **argv, const char *usage, struct vn_cli_common *co, double *timeout,
		      const char **outdir, const char **name, struct vn_error *err)
{
	static const struct option opts[] = {
		{"connect", required_argument, NULL, 'C'}, {"state-dir", required_argument, NULL, 'S'},
		{"timeout", required_argument, NULL, 't'}, {"output", required_argument, NULL, 'o'},
		{"help", no_argument, NULL, 'h'},	   {NULL, 0, NULL, 0},
	};
	int c;

	optind = 1;
	/* '+': stop at the first non-option so the guest command keeps its own options. */
	while ((c = getopt_long(argc, argv, "+t:o:h", opts, NULL)) != -1) {
		if (vn_cli_common_opt(c, optarg, co))
			continue;
		switch (c) {
		case 't':
			if (!timeout || (*timeout = atof(optarg)) <= 0)
				return vn_input_error(err, "--timeout: '%s' is not a positive number of seconds", optarg);
			break;
		case 'o':
			if (!outdir)
				return vn_input_error(err, "-o is not an option of this command");
			*outdir = optarg;
			break;
		case 'h': printf("%s", usage); return 1;
		default: return vn_input_error(err, "bad option; %s", usage);
		}
	}
	if (optind >= argc)
		return vn_input_error(err, "missing guest NAME; %s", usage);
	*name = argv[optind++];
	return vn_guest_name_check(*name, err);
}

int cmd_exec(int argc, char **argv, struct vn_error *err)
{
	static const char usage[] = "usage: vnuma exec [--timeout S] NAME -- CMD [ARGS...]\n";
	struct vn_cli_common co = {0};
	struct vn_testbed_ctx ctx;
	const char *name;
	double timeout = 0;
	int rc, status = 0;

	if ((rc = guest_args(argc, argv, usage, &co, &timeout, NULL, &name, err)) != 0)
		return rc < 0 ? rc : VN_EXIT_OK;
	if (optind < argc && strcmp(argv[optind], "--") == 0)
		optind++;
	if (optind >= argc)
		return vn_input_error(err, "missing command; %s", usage);
	if ((rc = vn_cli_ctx(&co, &ctx, err)) < 0)
		return rc;

	_cleanup_agent_ struct vn_agent *a = NULL;
	rc = vn_testbed_agent(&ctx, name, 10000, &a, err);
	vn_testbed_ctx_clear(&ctx);
	if (rc < 0)
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

int cmd_shell(int argc, char **argv, struct vn_error *err)
{
	static const char usage[] = "usage: vnuma shell NAME\n  Attaches to the guest's serial console; Ctrl-] leaves.\n";
	struct vn_cli_common co = {0};
	struct vn_testbed_ctx ctx;
	struct vn_virt *v = NULL;
	const char *name;
	int rc;

	if ((rc = guest_args(argc, argv, usage, &co, NULL, NULL, &name, err)) != 0)
		return rc < 0 ? rc : VN_EXIT_OK;
	if ((rc = vn_cli_ctx(&co, &ctx, err)) < 0)
		return rc;
	rc = vn_virt_open(ctx.uri, ctx.state_dir, ctx.lock_timeout_ms, &v, err);
	vn_testbed_ctx_clear(&ctx);
	if (rc < 0)
		return rc;
	_cleanup_virt_domain_ struct vn_virt_domain *d = NULL;
	if ((rc = vn_testbed_lookup(v, name, &d, err)) == 0) {
		if (isatty(STDIN_FILENO))
			fprintf(stderr, "Connected to %s's console; Ctrl-] leaves. Press Enter for a prompt.\r\n", name);
		rc = vn_virt_console_attach(d, STDIN_FILENO, STDOUT_FILENO, VN_CONSOLE_ESCAPE, err);
	}
	vn_virt_domain_free(steal_pointer(&d));
	vn_virt_close(v);
	return rc < 0 ? rc : VN_EXIT_OK;
}

int cmd_collect(int argc, char **argv, struct vn_error *err)
{
	static const char usage[] = "usage: vnuma collect NAME -o DIR\n";
	struct vn_cli_common co = {0};
	struct vn_testbed_ctx ctx;
	const char *name, *outdir = NULL;
	int rc;

	if ((rc = guest_args(argc, argv, usage, &co, NULL, &outdir, &name, err)) != 0)
		return rc < 0 ? rc : VN_EXIT_OK;
	/* Also accept "NAME -o DIR" with the option after the name. */
	if (!outdir && optind + 1 < argc && strcmp(argv[optind], "-o") == 0)
		outdir = argv[optind + 1];
	if (!outdir)
		return vn_input_error(err, "collect needs -o DIR");
	if ((rc = vn_cli_ctx(&co, &ctx, err)) < 0)
		return rc;
	_cleanup_agent_ struct vn_agent *a = NULL;
	rc = vn_testbed_agent(&ctx, name, 10000, &a, err);
	vn_testbed_ctx_clear(&ctx);
	if (rc < 0 || (rc = vn_testbed_collect(a, outdir, err)) < 0)
		return rc;
	fprintf(stderr, "snapshot of %s written to %s (snapshot.json and raw files)\n", name, outdir);
	return VN_EXIT_OK;
}
