/*
 * Running git so that neither the user's environment nor a hung repository
 * can take it elsewhere: vn_spawn_run drops the variables that point git at
 * a repository, core.fsmonitor is off (its hook could hang or lie), and every
 * run has a deadline.
 */
#pragma once

#include <stdbool.h>

#include "util/spawn.h"

/*
 * How long a git run may take before it is stopped as stuck (a hook or a
 * disk that hangs; a stale index.lock fails at once). Each is ten times what
 * a Linux tree takes on a slow disk with a cold cache: VN_GIT_TREE writes or
 * deletes up to a whole tree (clone, checkout, clean: ~80,000 files, 1.5 GB,
 * about a minute); VN_GIT_READ reads history or stats the work tree
 * (rev-parse, log, rev-list, diff-index: under 20 s). VNUMA_GIT_DEADLINE
 * (seconds) overrides both.
 */
enum vn_git_span {
	VN_GIT_READ = 180,
	VN_GIT_TREE = 600,
};

/*
 * git ARGS ("git" itself is added) with o's sinks (o may be NULL). Returns
 * git's exit status, or a negative errno with err set; past the deadline,
 * -ETIMEDOUT with a message naming the git command.
 */
int vn_git_run(const char *const *args, enum vn_git_span span, const struct vn_spawn_opts *o, struct vn_error *err);

/* A full object name and nothing else: 40 (SHA-1) or 64 (SHA-256) lowercase hex digits. */
bool vn_git_hash_ok(const char *s);
