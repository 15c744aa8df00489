/* A command's arguments parsed the one way (args.c), and what they lead to: the testbed context, a guest's agent. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "cli/cli.h"
#include "util/error.h"

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
/* --node-memory SIZE: 128M or more, whole MiB (the host's memory is up's to check). */
int vn_cli_node_memory(struct vn_cli_args *a, const char *text, uint64_t *out, struct vn_error *err);

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
/* The agent of guest name, through --state-dir (exec, collect, cp): cli/connect.c; cli/front.c's for local guests only. */
int vn_cli_agent(const struct vn_cli_args *a, const char *name, struct vn_agent **out, struct vn_error *err);

/*
 * The options of a command on one guest (exec, shell, collect), each given
 * to opt (with data) when not NULL, then NAME, checked: 0 with optind past
 * NAME, or -1 when the command ends with a->exit.
 */
int vn_cli_guest_args(struct vn_cli_args *a, const struct vn_cmd *cmd, int argc, char **argv,
		      int (*opt)(struct vn_cli_args *, int, void *, struct vn_error *), void *data, const char **name,
		      struct vn_error *err);

/* A command's exit code from its rc: an error printed once, as "vnuma CMD: why" and its detail. */
int vn_cli_exit(const struct vn_cmd *c, int rc, struct vn_error *err);

/* True when argv holds -h/--help before any "--". */
int vn_cli_wants_help(int argc, char **argv);
