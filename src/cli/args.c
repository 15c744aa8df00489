/* The one argument loop of every command: common options, --help, bad options, operand counts. */
#include <getopt.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "cli/args.h"
#include "cli/cli.h"
#include "topology/node-memory.h"
#include "util/alloc.h"
#include "util/cleanup.h"
#include "util/name.h"
#include "util/parse.h"

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

int vn_cli_node_memory(struct vn_cli_args *a, const char *text, uint64_t *out, struct vn_error *err)
{
	if (vn_cli_size(a, "node-memory", text, 1, UINT64_C(1) << 50, out, err) < 0)
		return a->exit;
	if (*out < VN_NODE_MEMORY_MIN || *out % (UINT64_C(1) << 20))
		return a->exit = vn_input_error(err, "--node-memory %s: %s", text,
						*out < VN_NODE_MEMORY_MIN ? "under 128M, too small for a node to boot"
									  : "not a whole number of MiB");
	return 0;
}

void vn_cli_with(const char *arg, char ***with, size_t *n)
{
	_cleanup_free_ char *copy = vn_xstrdup(arg);
	char *save = NULL;

	for (char *p = strtok_r(copy, ",", &save); p; p = strtok_r(NULL, ",", &save))
		vn_strv_push(with, n, p);
}

int vn_cli_guest_args(struct vn_cli_args *a, const struct vn_cmd *cmd, int argc, char **argv,
		      int (*opt)(struct vn_cli_args *, int, void *, struct vn_error *), void *data, const char **name,
		      struct vn_error *err)
{
	int c;

	vn_cli_args_init(a, cmd, argc, argv);
	while ((c = vn_cli_next(a, err)) > 0)
		if (opt && opt(a, c, data, err) < 0)
			return -1;
	if (c < 0 || vn_cli_operands(a, 1, -1, err) < 0)
		return -1;
	*name = argv[optind++];
	if ((a->exit = vn_guest_name_check(*name, err)) < 0)
		return -1;
	return 0;
}

int vn_cli_exit(const struct vn_cmd *c, int rc, struct vn_error *err)
{
	if (rc >= 0)
		return rc;
	fprintf(stderr, "vnuma %s: %s\n", c->name, err->msg[0] ? err->msg : strerror(-rc));
	if (err->detail)
		fprintf(stderr, "%s%s", err->detail,
			err->detail[0] && err->detail[strlen(err->detail) - 1] == '\n' ? "" : "\n");
	rc = err->kind == VN_ERR_NONE ? VN_EXIT_INFRA : (int)err->kind;
	vn_error_clear(err);
	return rc;
}

int vn_cli_wants_help(int argc, char **argv)
{
	for (int i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--") == 0)
			return 0;
		if (strcmp(argv[i], "-h") == 0 || strcmp(argv[i], "--help") == 0)
			return 1;
	}
	return 0;
}
