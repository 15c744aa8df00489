/* The one argument loop of every command: common options, --help, bad options, operand counts. */
#include <getopt.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "cli/args.h"
#include "cli/cli.h"
#include "testbed/agent-session.h"
#include "testbed/testbed.h"
#include "util/alloc.h"
#include "util/cleanup.h"
#include "util/parse.h"
#include "virt/connect.h"

void vn_cli_args_init(struct vn_cli_args *a, const struct vn_cmd *cmd, int argc, char **argv)
{
	*a = (struct vn_cli_args){.cmd = cmd, .argc = argc, .argv = argv};
	vn_cli_getopt_init(&a->g, cmd);
	optind = 1;
}

int vn_cli_next(struct vn_cli_args *a, struct vn_error *err)
{
	for (;;) {
		int c = getopt_long(a->argc, a->argv, a->g.so, a->g.lo, NULL);
		switch (c) {
		case -1: return 0;
		case 'h':
			vn_cli_usage(stdout, a->cmd);
			a->exit = VN_EXIT_OK;
			return -1;
		case '?':
		case ':':
			/* getopt said which option, on stderr. */
			a->exit = vn_input_error(err, "bad option (see 'vnuma %s --help')", a->cmd->name);
			return -1;
		case 'S':
			if (a->cmd->common & VN_CLI_STATE_DIR) {
				a->state_dir = optarg;
				continue;
			}
			return c;
		case 'C':
			if (a->cmd->common & VN_CLI_CONNECT) {
				if (!a->uri)
					a->uri = optarg;
				if (a->nuris == VN_ARRAY_SIZE(a->uris)) {
					a->exit = vn_cli_bad_arg(a, "connect",
								 "is one too many (16 at most; use --hosts)", err);
					return -1;
				}
				a->uris[a->nuris++] = optarg;
				continue;
			}
			return c;
		default: return c;
		}
	}
}

int vn_cli_operands(struct vn_cli_args *a, int min, int max, struct vn_error *err)
{
	int n = a->argc - optind;

	if (n >= min && (max < 0 || n <= max))
		return 0;
	if (max == 0)
		a->exit =
			vn_input_error(err, "%s takes no operands (see 'vnuma %s --help')", a->cmd->name, a->cmd->name);
	else
		a->exit = vn_input_error(err, "%s operands (usage: vnuma %s %s)", n < min ? "missing" : "too many",
					 a->cmd->name, a->cmd->synopsis ? a->cmd->synopsis : "");
	return -1;
}

int vn_cli_bad_arg(struct vn_cli_args *a, const char *option, const char *why, struct vn_error *err)
{
	return a->exit = vn_input_error(err, "--%s: '%s' %s", option, optarg ? optarg : "", why);
}

char **vn_cli_argv;

int vn_cli_duration(struct vn_cli_args *a, const char *option, const char *text, double max_s, double *out,
		    struct vn_error *err)
{
	if (vn_duration_parse(text, max_s, out, err) < 0)
		return a->exit = vn_error_prefix(err, "--%s", option);
	return 0;
}

int vn_cli_count(struct vn_cli_args *a, const char *option, const char *text, uint64_t min, uint64_t max, uint64_t *out,
		 struct vn_error *err)
{
	if (vn_count_parse(text, min, max, out, err) < 0)
		return a->exit = vn_error_prefix(err, "--%s", option);
	return 0;
}

int vn_cli_size(struct vn_cli_args *a, const char *option, const char *text, uint64_t min, uint64_t max, uint64_t *out,
		struct vn_error *err)
{
	if (vn_size_parse_range(text, min, max, out, err) < 0)
		return a->exit = vn_error_prefix(err, "--%s", option);
	return 0;
}

int vn_cli_ctx(const struct vn_cli_args *a, struct vn_testbed_ctx *ctx, struct vn_error *err)
{
	int rc = vn_testbed_ctx_init(ctx, a->state_dir, a->uri, err);

	/*
	 * libvirt's log settings reach it only in a process started with them
	 * (virt.h), so vnuma starts again, once, before it has done anything:
	 * else libvirt writes its info and warning lines to the terminal. If
	 * that fails, they do, and the command goes on.
	 */
	if (rc == 0 && vn_virt_log_setup(ctx->state_dir) && vn_cli_argv) {
		fflush(stdout);
		fflush(stderr);
		execv("/proc/self/exe", vn_cli_argv);
	}
	return rc;
}

void vn_cli_with(const char *arg, char ***with, size_t *n)
{
	_cleanup_free_ char *copy = vn_xstrdup(arg);
	char *save = NULL;

	for (char *p = strtok_r(copy, ",", &save); p; p = strtok_r(NULL, ",", &save))
		vn_strv_push(with, n, p);
}

int vn_cli_agent(const struct vn_cli_args *a, const char *name, struct vn_agent **out, struct vn_error *err)
{
	struct vn_testbed_ctx ctx;
	/*
	 * A local guest's agent is a socket in its guest dir, reached without
	 * libvirt: no start again for libvirt's log settings, which was half
	 * of a `vnuma exec NAME -- true` (the second load of every library).
	 */
	int rc = vn_virt_uri_is_remote(a->uri) ? vn_cli_ctx(a, &ctx, err)
					       : vn_testbed_ctx_init(&ctx, a->state_dir, a->uri, err);

	if (rc < 0)
		return rc;
	rc = vn_testbed_agent(&ctx, name, VN_TESTBED_AGENT_MS, out, err);
	vn_testbed_ctx_clear(&ctx);
	return rc;
}
