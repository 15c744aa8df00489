/*
 * Running a program: posix_spawnp with an explicit argv, never a shell, so
 * paths from input files cannot become commands.
 */
#pragma once

#include "util/error.h"
#include "util/strbuf.h"

/* Longest line given to a line callback: a longer run without a newline comes as several. */
#define VN_SPAWN_LINE_MAX 65536

/* One line of the child's output, without its newline. */
typedef void (*vn_spawn_line_fn)(void *data, const char *line);

struct vn_spawn_opts {
	const char *cwd;           /* NULL: the caller's */
	int log_fd;                /* output is copied here when >= 0 (VN_SPAWN_OPTS_INIT sets -1) */
	struct vn_strbuf *capture; /* output is appended here when not NULL */
	vn_spawn_line_fn line;     /* called per output line when not NULL */
	void *line_data;
	unsigned deadline_s; /* 0: none; else the group is stopped after this long, an infra error */
};

#define VN_SPAWN_OPTS_INIT   \
	{                    \
		.log_fd = -1 \
	}

/*
 * Run argv[0] (looked up in PATH) with stdin from /dev/null, stdout and
 * stderr together into o's sinks (o may be NULL: output is dropped), in its
 * own process group with LC_ALL=C (messages are parsed, so untranslated) and
 * without the variables that point git at a repository (GIT_DIR and the rest
 * of `git rev-parse --local-env-vars`): a hook's or a linked worktree's
 * GIT_DIR would otherwise turn a git run on a build's clone onto the user's
 * checkout. Ctrl-C (vn_was_interrupted) stops the whole group, and so does
 * o->deadline_s (SIGTERM, then SIGKILL). Returns the exit status (>= 0), or
 * a negative errno with err set: cannot start, killed by a signal,
 * interrupted, past its deadline (-ETIMEDOUT).
 */
int vn_spawn_run(const char *const *argv, const struct vn_spawn_opts *o, struct vn_error *err);

/*
 * Run an interactive program (gdb) on the caller's terminal: stdin, stdout
 * and stderr inherited, in the caller's process group, so that Ctrl-C at
 * the terminal reaches it; a SIGINT that reaches us meanwhile was its, and
 * is forgotten when it ends. Returns its exit status, or a negative
 * errno with err set (cannot start, killed by a signal).
 */
int vn_spawn_foreground(const char *const *argv, struct vn_error *err);
