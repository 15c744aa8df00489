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

#define VN_CLI_MAX_OPTS 32

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
	vn_cmd_kernel, vn_cmd_image, vn_cmd_cache, vn_cmd_doctor, vn_cmd_hosts, vn_cmd_help, vn_cmd_complete,
	vn_cmd_bisect, vn_cmd_debug, vn_cmd_dump;

/* Ends every option table. */
#define VN_CLI_OPT_END                                  \
	{                                               \
		NULL, 0, false, NULL, VN_VAL_NONE, NULL \
	}
