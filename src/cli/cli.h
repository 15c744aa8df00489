/* The thin CLI: argument parsing and printing only; the work is in the layers. */
#pragma once

#include <getopt.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
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

/* Options the parser adds to a command's own (struct vn_cmd .common). */
enum {
	VN_CLI_STATE_DIR = 1 << 0, /* --state-dir DIR (getopt code 'S') */
	VN_CLI_CONNECT = 1 << 1,   /* --connect URI ('C') */
	VN_CLI_GUEST = VN_CLI_STATE_DIR | VN_CLI_CONNECT,
};

struct vn_cmd {
	const char *name;
	vn_cmd_fn fn;                     /* NULL for a group: its subcommand runs */
	const char *summary;              /* one line, in the command list */
	const char *synopsis;             /* what follows "vnuma NAME", one form per line */
	const char *description;          /* paragraphs separated by blank lines, wrapped at 80 columns */
	const struct vn_cli_opt *opts;    /* NULL or VN_CLI_OPT_END-terminated; --help/-h is implied */
	unsigned common;                  /* VN_CLI_STATE_DIR, VN_CLI_CONNECT: options every such command takes */
	enum vn_cli_value operand;        /* what the positional arguments are */
	const struct vn_cmd *const *subs; /* subcommands, NULL-terminated (topo, kernel) */
	bool hidden;                      /* left out of the command list and the man page */
	bool stop_at_operand;             /* options end at the first operand (exec CMD ARGS...) */
};

/* Every command, NULL-terminated, in the order `vnuma --help` lists them. */
extern const struct vn_cmd *const vn_cli_commands[];

/* Option i of a command: its own, then its common ones; NULL past the last. */
const struct vn_cli_opt *vn_cli_opt_at(const struct vn_cmd *cmd, size_t i);

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
/* Run a command (argv[0] is its name); a group runs its subcommand argv[1]. */
int vn_cli_run(const struct vn_cmd *cmd, int argc, char **argv, struct vn_error *err);

/* One record per command, each in its cmd-*.c beside its parser. */
extern const struct vn_cmd vn_cmd_up, vn_cmd_list, vn_cmd_status, vn_cmd_down, vn_cmd_exec, vn_cmd_cp, vn_cmd_hotplug,
	vn_cmd_shell, vn_cmd_collect, vn_cmd_run, vn_cmd_compare, vn_cmd_report, vn_cmd_scenario, vn_cmd_topo,
	vn_cmd_kernel, vn_cmd_image, vn_cmd_doctor, vn_cmd_hosts, vn_cmd_help, vn_cmd_complete;

/* Ends every option table. */
#define VN_CLI_OPT_END                                  \
	{                                               \
		NULL, 0, false, NULL, VN_VAL_NONE, NULL \
	}

/* Kernel build progress on stderr (a vn_kernel_progress_fn and its state). */
struct vn_cli_progress {
	bool tty, used;
	double t0;
	char stage[32];
	int width;
	char prefix[160]; /* before each boot status line: the matrix's "run k/n ..." */
	char what[16];    /* what vn_cli_progress's lines are about: "kernel" (default), "image" */
};
void vn_cli_progress_init(struct vn_cli_progress *p);
void vn_cli_progress(void *data, const char *stage, const char *line);
void vn_cli_progress_done(struct vn_cli_progress *p);
/* A vn_up_progress_fn: defining, booting, kernel started, agent answered, fidelity checked. */
void vn_cli_boot_progress(void *data, const char *stage, const char *detail);
double vn_cli_progress_elapsed(const struct vn_cli_progress *p);
struct vn_up_progress;
/* Both printers above, on p, for vnuma up and vnuma run. */
struct vn_up_progress vn_cli_progress_up(struct vn_cli_progress *p);

/*
 * A command's arguments, parsed the one way every command parses them:
 *
 *	struct vn_cli_args a;
 *	vn_cli_args_init(&a, &vn_cmd_run, argc, argv);
 *	while ((c = vn_cli_next(&a, err)) > 0)
 *		switch (c) { case 'o': ...; }
 *	if (c < 0 || vn_cli_operands(&a, 1, 1, err) < 0)
 *		return a.exit;
 *
 * vn_cli_next() handles the common options (into a.state_dir, a.uri) and
 * --help, and returns only the command's own option codes (optarg set).
 */
struct vn_cli_args {
	const struct vn_cmd *cmd;
	int argc;
	char **argv;
	struct vn_cli_getopt g;
	const char *state_dir, *uri; /* --state-dir, --connect (the first); NULL when not given */
	const char *uris[16];        /* every --connect (a matrix spreads over them), in order */
	unsigned nuris;
	int exit; /* when parsing ends the command: its exit code, or a negative errno */
};
void vn_cli_args_init(struct vn_cli_args *a, const struct vn_cmd *cmd, int argc, char **argv);
/*
 * The next option of the command's own: its code; 0 after the last option
 * (operands start at argv[optind]); -1 when the command ends now with
 * a->exit: after --help (usage printed, 0), or a bad option (an input error
 * in err naming the command).
 */
int vn_cli_next(struct vn_cli_args *a, struct vn_error *err);
/* Between min and max operands (max -1: any number); else -1, a->exit an input error. */
int vn_cli_operands(struct vn_cli_args *a, int min, int max, struct vn_error *err);
/* An option's argument that is not what it should be: an input error naming the option (also in a->exit). */
int vn_cli_bad_arg(struct vn_cli_args *a, const char *option, const char *why, struct vn_error *err);
/*
 * An option's number, through util/parse.h's one parser of its kind and the
 * option's own bounds; an input error "--OPTION: ..." (also in a->exit). text
 * is optarg, or a piece of it (UID:GID, MIN-MAX).
 */
int vn_cli_duration(struct vn_cli_args *a, const char *option, const char *text, double max_s, double *out,
		    struct vn_error *err);
int vn_cli_count(struct vn_cli_args *a, const char *option, const char *text, uint64_t min, uint64_t max, uint64_t *out,
		 struct vn_error *err);
int vn_cli_size(struct vn_cli_args *a, const char *option, const char *text, uint64_t min, uint64_t max, uint64_t *out,
		struct vn_error *err);

/* --with PKG,PKG: each package appended to *with (NULL-terminated, *n entries). */
void vn_cli_with(const char *arg, char ***with, size_t *n);

struct vn_testbed_ctx;
/* main's argv as it was given (getopt reorders argv), for vn_cli_ctx to start vnuma again with. */
extern char **vn_cli_argv;
/*
 * The testbed context of --state-dir and --connect. Where the environment
 * does not say where libvirt logs, it is set to the state dir's libvirt.log
 * and vnuma starts again with the same arguments (exec: it does not return),
 * so call it before anything the command does.
 */
int vn_cli_ctx(const struct vn_cli_args *a, struct vn_testbed_ctx *ctx, struct vn_error *err);

struct vn_agent;
/* The agent of guest name, through --state-dir (exec, collect, cp). */
int vn_cli_agent(const struct vn_cli_args *a, const char *name, struct vn_agent **out, struct vn_error *err);

/* True when argv holds -h/--help before any "--". */
int vn_cli_wants_help(int argc, char **argv);
