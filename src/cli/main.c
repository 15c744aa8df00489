#include <stdio.h>
#include <string.h>

#include "cli/cli.h"
#include "cli/cmds.h"
#include "util/interrupt.h"

static const struct vn_cmd commands[] = {
	VN_CLI_COMMANDS
	{NULL, NULL, NULL},
};

static void usage(FILE *out)
{
	fprintf(out, "usage: vnuma <command> [options]\n\n"
		     "Virtual NUMA testbeds: boot stock or patched kernels on any node shape under\n"
		     "QEMU/libvirt and check what the kernel does with it.\n\ncommands:\n");
	for (const struct vn_cmd *c = commands; c->name; c++)
		fprintf(out, "  %-10s %s\n", c->name, c->summary);
	fprintf(out, "\nRun 'vnuma <command> --help' for a command's options.\n"
		     "Exit codes: 0 ok, 1 an assertion about the kernel failed, 2 bad input,\n"
		     "3 infrastructure failure (boot, libvirt, timeout).\n");
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

int main(int argc, char **argv)
{
	struct vn_error err = {0};
	int rc;

	if (argc < 2) {
		usage(stderr);
		return VN_EXIT_INPUT;
	}
	if (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0 || strcmp(argv[1], "help") == 0) {
		usage(stdout);
		return VN_EXIT_OK;
	}
	if (strcmp(argv[1], "--version") == 0 || strcmp(argv[1], "version") == 0) {
		printf("vnuma %s\n", VN_VERSION);
		return VN_EXIT_OK;
	}
	for (const struct vn_cmd *c = commands; c->name; c++) {
		if (strcmp(argv[1], c->name) != 0)
			continue;
		vn_interrupt_install();
		rc = c->fn(argc - 1, argv + 1, &err);
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
