/* The thin CLI: argument parsing and printing only; the work is in the layers. */
#pragma once

#include <getopt.h>
#include <stdbool.h>
#include <stdio.h>

#include "util/error.h"

enum {
	VN_EXIT_OK = 0,
	VN_EXIT_ASSERT = 1, /* an assertion about the kernel failed */
	VN_EXIT_INPUT = 2,  /* bad input */
	VN_EXIT_INFRA = 3,  /* could not boot, libvirt error, timeout */
};

/*
 * A command returns an exit code (>= 0) or a negative errno with err filled;
 * main() prints err once and maps its kind to the exit code.
 */
typedef int (*vn_cmd_fn)(int argc, char **argv, struct vn_error *err);

/*
 * The one source of every command's interface: the parser's getopt tables,
 * `vnuma CMD --help`, the man page vnuma(1) (`vnuma help --man`) and bash
 * completion (`vnuma complete`) are all made from these records.
 */

/* What an operand or an option's argument is, so completion can offer values. */
enum vn_cli_value {
	VN_VAL_NONE,     /* free text: nothing to offer */
	VN_VAL_FILE,     /* a file name */
	VN_VAL_DIR,      /* a directory name */
	VN_VAL_TOPOLOGY, /* a shipped topology name, or a file */
	VN_VAL_SCENARIO, /* a shipped scenario name, or a file */
	VN_VAL_KERNEL,   /* 'stock', a kernel recipe name, or a file */
	VN_VAL_GUEST,    /* a guest's name */
	VN_VAL_MODEL,    /* a fallback-order model name (listed in the help) */
	VN_VAL_COMMAND,  /* a vnuma command name */
};

struct vn_cli_opt {
	const char *name; /* long name, without "--" */
	int val;          /* getopt code the command's switch sees */
	bool has_short;   /* val is also the short option -val */
	const char *arg;  /* metavariable of the argument; NULL: a flag */
	enum vn_cli_value value;
	const char *help; /* lines are joined in the man page */
};

#define VN_CLI_MAX_OPTS 16

struct vn_cmd {
	const char *name;
	vn_cmd_fn fn;
	const char *summary;              /* one line, in the command list */
	const char *synopsis;             /* what follows "vnuma NAME", one form per line */
	const char *description;          /* paragraphs separated by blank lines, wrapped at 80 columns */
	const struct vn_cli_opt *opts;    /* NULL or {NULL}-terminated; --help/-h is implied */
	enum vn_cli_value operand;        /* what the positional arguments are */
	const struct vn_cmd *const *subs; /* subcommands, NULL-terminated (topo, kernel) */
	bool hidden;                      /* left out of the command list and the man page */
	bool stop_at_operand;             /* options end at the first operand (exec CMD ARGS...) */
};

/* Every command, NULL-terminated, in the order `vnuma --help` lists them. */
extern const struct vn_cmd *const vn_cli_commands[];

/* getopt_long tables built from a command's options, plus --help/-h. */
struct vn_cli_getopt {
	struct option lo[VN_CLI_MAX_OPTS + 2];
	char so[3 * VN_CLI_MAX_OPTS + 8];
};
void vn_cli_getopt_init(struct vn_cli_getopt *g, const struct vn_cmd *cmd);

/* `vnuma CMD --help` text; for a command group, every subcommand's. */
void vn_cli_usage(FILE *out, const struct vn_cmd *cmd);
/* `vnuma --help`. */
void vn_cli_main_usage(FILE *out);
/* vnuma(1) in man(7) format. */
void vn_cli_man(FILE *out);
/* Run the subcommand argv[1] of a command group (argv[0] is the group). */
int vn_cli_dispatch_sub(const struct vn_cmd *group, int argc, char **argv, struct vn_error *err);

/* One record per command, each in its cmd-*.c beside its parser. */
extern const struct vn_cmd vn_cmd_up, vn_cmd_list, vn_cmd_status, vn_cmd_down, vn_cmd_exec, vn_cmd_shell,
	vn_cmd_collect, vn_cmd_run, vn_cmd_report, vn_cmd_scenario, vn_cmd_topo, vn_cmd_kernel, vn_cmd_doctor,
	vn_cmd_help, vn_cmd_complete;

/* Ends every option table. */
#define VN_CLI_OPT_END                                  \
	{                                               \
		NULL, 0, false, NULL, VN_VAL_NONE, NULL \
	}

/* --connect and --state-dir alone: the options of list, status and shell. */
extern const struct vn_cli_opt vn_cli_guest_opts[];

/* Options shared by the guest commands (their getopt codes are 'C' and 'S'). */
#define VN_CLI_OPT_CONNECT                                                                                        \
	{                                                                                                         \
		"connect", 'C', false, "URI", VN_VAL_NONE, "libvirt URI (default $VNUMA_URI, else qemu:///embed)" \
	}
#define VN_CLI_OPT_STATE_DIR                                                                   \
	{                                                                                      \
		"state-dir", 'S', false, "DIR", VN_VAL_DIR,                                    \
			"state directory (default $VNUMA_STATE_DIR, else\n"                    \
			"$XDG_STATE_HOME/vnuma, /var/lib/vnuma as root, ~/.local/state/vnuma)" \
	}

/* Kernel build progress on stderr (a vn_kernel_progress_fn and its state). */
struct vn_cli_progress {
	bool tty, used;
	double t0;
	char stage[32];
	int width;
};
void vn_cli_progress_init(struct vn_cli_progress *p);
void vn_cli_progress(void *data, const char *stage, const char *line);
void vn_cli_progress_done(struct vn_cli_progress *p);
/* A vn_up_progress_fn: defining, booting, kernel started, agent answered, fidelity checked. */
void vn_cli_boot_progress(void *data, const char *stage, const char *detail);
double vn_cli_progress_elapsed(const struct vn_cli_progress *p);

/* --state-dir (getopt code 'S') and --connect ('C'), shared by the guest commands. */
struct vn_cli_common {
	const char *state_dir, *uri;
};
struct vn_testbed_ctx;
int vn_cli_common_opt(int c, const char *arg, struct vn_cli_common *co);
int vn_cli_ctx(const struct vn_cli_common *co, struct vn_testbed_ctx *ctx, struct vn_error *err);

/* True when argv holds -h/--help before any "--". */
int vn_cli_wants_help(int argc, char **argv);
