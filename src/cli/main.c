/*
 * vnuma-core.so: the command table and its dispatch. The vnuma executable
 * (front.c) loads it for every command but an exec on a local guest.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

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

/* Every command, as `vnuma ARGS...` runs it; called by front.c's main once this module is loaded. Does not return. */
__attribute__((visibility("default"))) int vn_cli_main(int argc, char **argv);

/*
 * The end of every command, without exit()'s destructors. Opening the
 * embedded driver starts a thread per running guest that reconnects to its
 * QEMU (seconds, under TCG with the locality plugin), and libvirt has no call
 * that waits for them: exit() ran libnuma's destructor under such a thread,
 * which crashed in numa_bitmask_isbitset (`vnuma list` while two runs boot,
 * integration-faults). Every file of ours is closed by now; stdio is flushed
 * here. A reconnect cut short is redone by the driver's next opener.
 */
static _Noreturn void quit(int rc)
{
	fflush(NULL);
	_exit(rc);
}

int vn_cli_main(int argc, char **argv)
{
	struct vn_error err = {0};

	if (argc < 2) {
		vn_cli_main_usage(stderr);
		quit(VN_EXIT_INPUT);
	}
	if (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0) {
		vn_cli_main_usage(stdout);
		quit(VN_EXIT_OK);
	}
	if (strcmp(argv[1], "--version") == 0 || strcmp(argv[1], "version") == 0) {
		printf("vnuma %s\n", VN_VERSION);
		quit(VN_EXIT_OK);
	}
	const struct vn_cmd *c = find_cmd(argv[1]);
	if (!c) {
		fprintf(stderr, "vnuma: unknown command '%s' (see 'vnuma --help')\n", argv[1]);
		quit(VN_EXIT_INPUT);
	}
	vn_cli_argv = vn_xcalloc((size_t)argc + 1, sizeof(*vn_cli_argv));
	memcpy(vn_cli_argv, argv, (size_t)argc * sizeof(*argv));
	vn_interrupt_install();
	quit(vn_cli_exit(c, vn_cli_run(c, argc - 1, argv + 1, &err), &err));
}
