#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "cli/args.h"
#include "cli/cli.h"
#include "cli/cmds.h"
#include "util/alloc.h"
#include "util/interrupt.h"

const struct vn_cmd *const vn_cli_commands[] = {
	VN_CLI_COMMANDS NULL,
};

static const struct vn_cmd *find_cmd(const char *name)
{
	for (const struct vn_cmd *const *c = vn_cli_commands; *c; c++)
		if (strcmp(name, (*c)->name) == 0)
			return *c;
	return NULL;
}

/* vnuma help [COMMAND] | --man */
static int cmd_help(int argc, char **argv, struct vn_error *err)
{
	const struct vn_cmd *c;

	if (argc == 1) {
		vn_cli_main_usage(stdout);
		return VN_EXIT_OK;
	}
	if (argc == 2 && strcmp(argv[1], "--man") == 0) {
		vn_cli_man(stdout);
		return ferror(stdout) ? vn_infra_error(err, -EIO, "writing the man page failed") : VN_EXIT_OK;
	}
	if (argc == 2 && (c = find_cmd(argv[1]))) {
		vn_cli_usage(stdout, c);
		return VN_EXIT_OK;
	}
	if (argc == 2 && (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0)) {
		vn_cli_usage(stdout, &vn_cmd_help);
		return VN_EXIT_OK;
	}
	return vn_input_error(err, "no command '%s' (see 'vnuma --help')", argv[argc - 1]);
}

const struct vn_cmd vn_cmd_help = {
	.name = "help",
	.fn = cmd_help,
	.summary = "this list, one command's help, or the man page (--man)",
	.synopsis = "[COMMAND]\n--man",
	.description = "'vnuma help COMMAND' is 'vnuma COMMAND --help'; 'vnuma help --man' writes\n"
		       "vnuma(1), made from the same command table as every --help.",
	.operand = VN_VAL_COMMAND,
};

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

int main(int argc, char **argv)
{
	struct vn_error err = {0};
	int rc;

	if (argc < 2) {
		vn_cli_main_usage(stderr);
		return VN_EXIT_INPUT;
	}
	if (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0) {
		vn_cli_main_usage(stdout);
		return VN_EXIT_OK;
	}
	if (strcmp(argv[1], "--version") == 0 || strcmp(argv[1], "version") == 0) {
		printf("vnuma %s\n", VN_VERSION);
		return VN_EXIT_OK;
	}
	const struct vn_cmd *c = find_cmd(argv[1]);
	if (c) {
		vn_cli_argv = vn_xcalloc((size_t)argc + 1, sizeof(*vn_cli_argv));
		memcpy(vn_cli_argv, argv, (size_t)argc * sizeof(*argv));
		vn_interrupt_install();
		rc = vn_cli_run(c, argc - 1, argv + 1, &err);
		if (rc >= 0)
			return rc;
		fprintf(stderr, "vnuma %s: %s\n", c->name, err.msg[0] ? err.msg : strerror(-rc));
		if (err.detail)
			fprintf(stderr, "%s%s", err.detail,
				err.detail[0] && err.detail[strlen(err.detail) - 1] == '\n' ? "" : "\n");
		rc = err.kind == VN_ERR_NONE ? VN_EXIT_INFRA : (int)err.kind;
		vn_error_clear(&err);
		return rc;
	}
	fprintf(stderr, "vnuma: unknown command '%s' (see 'vnuma --help')\n", argv[1]);
	return VN_EXIT_INPUT;
}
