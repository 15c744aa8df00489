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
 *
 * Out of a guest, nothing the guest says is believed: a file's claimed size
 * is checked against the host's free space and the copy's byte budget
 * before a byte is asked for, files and directories are counted against
 * their budget as they arrive, and modes go through the umask (docs/security.md).
 */
#pragma once

#include "guest/agent-client.h"
#include "guest/agent-file.h"

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

/* What one copy out of a guest may bring at most unless raised (--max-bytes, --max-files). */
#define VN_COPY_MAX_BYTES (4ull << 30)
#define VN_COPY_MAX_FILES 100000u

struct vn_copy_opts {
	bool recursive; /* -r: directories too */
	/* Out of a guest: modes as the guest has them, not through the umask (setuid and setgid still go). */
	bool preserve_mode;
	uint64_t max_bytes; /* out of a guest: file contents at most (0: VN_COPY_MAX_BYTES) */
	unsigned max_files; /* out of a guest: files and directories at most (0: VN_COPY_MAX_FILES) */
	vn_copy_progress_fn progress;
	void *data;
};

/* Host paths srcs into the guest path dst. */
int vn_copy_in(struct vn_agent *a, const char *const *srcs, size_t n, const char *dst, const struct vn_copy_opts *o,
	       struct vn_copy_stats *st, struct vn_error *err);
/*
 * Guest paths srcs to the host path dst. The guest is not trusted: names
 * are checked by the decoder, depth is bounded, sizes and counts are
 * budgeted (over a budget, or over the host's free space, is
 * VN_ERR_INFRA/-EFBIG or -ENOSPC, and the copy is removed), and modes lose
 * their setuid and setgid bits and pass through the umask unless
 * preserve_mode. A tree stays 0700 at its temporary name until it is
 * verified and renamed; only then does its top get its own mode.
 */
int vn_copy_out(struct vn_agent *a, const char *const *srcs, size_t n, const char *dst, const struct vn_copy_opts *o,
		struct vn_copy_stats *st, struct vn_error *err);
