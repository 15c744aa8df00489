/*
 * vnuma cp: files and directory trees between the host and a guest, over
 * the agent's chunked file ops (agent-file.c). Shaped like docker cp: when
 * DST is a directory each SRC goes inside it under its own name, otherwise
 * one SRC becomes DST. Guest paths are absolute (the agent's working
 * directory is nobody's business). Every copy lands at a temporary name
 * beside its target (TARGET.vnuma-tmp in the guest, util/file.h's temp or
 * TARGET.vnuma-tmp.XXXXXX on the host) and is renamed into place only once
 * the guest's own sha256sum of each file equals the host's digest of the
 * bytes that crossed; a failed or interrupted copy is removed. An existing
 * directory target is refused, not merged. Symlinks and special files inside
 * a tree are skipped and counted; the host side never follows a symlink when
 * it writes. Errors: a missing source or a bad destination is VN_ERR_INPUT,
 * a full guest file system VN_ERR_INFRA/-ENOSPC saying so.
 */
#pragma once

#include "guest/agent.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct vn_copy_stats {
	uint64_t bytes; /* file contents copied so far */
	unsigned files, dirs;
	unsigned skipped; /* symlinks and special files inside trees */
};

/* Called after every chunk, with the totals so far. */
typedef void (*vn_copy_progress_fn)(void *data, const struct vn_copy_stats *st);

struct vn_copy_opts {
	bool recursive; /* -r: directories too */
	vn_copy_progress_fn progress;
	void *data;
};

/* Host paths srcs into the guest path dst. */
int vn_copy_in(struct vn_agent *a, const char *const *srcs, size_t n, const char *dst, const struct vn_copy_opts *o,
	       struct vn_copy_stats *st, struct vn_error *err);
/*
 * Guest paths srcs to the host path dst. The guest is not trusted: names
 * are checked by the decoder, depth is bounded, and modes lose their
 * setuid, setgid and sticky bits.
 */
int vn_copy_out(struct vn_agent *a, const char *const *srcs, size_t n, const char *dst, const struct vn_copy_opts *o,
		struct vn_copy_stats *st, struct vn_error *err);
