/*
 * Files vnuma reads as input and writes as results, in one place.
 *
 * Input files (topologies, scenarios) are the user's and trusted, but a path
 * may name a FIFO or a device by mistake: vn_file_read() never blocks on one.
 * Result files are written so that a crash or a kill leaves either the old
 * complete file, or the new complete one, never a torn one, and never through
 * a symlink planted where a result goes (see docs/security.md).
 */
#pragma once

#include <stddef.h>
#include <stdio.h>
#include <sys/types.h>

#include "util/error.h"

/*
 * Reads all of the regular file path, at most max bytes, into *data
 * (NUL-terminated; *len excludes the NUL). Opens with O_NONBLOCK and checks
 * fstat() before reading, so a FIFO, socket, device or directory is refused
 * at once. Errors are VN_ERR_INPUT ("PATH: ..."); too large is -EFBIG.
 */
int vn_file_read(const char *path, size_t max, char **data, size_t *len, struct vn_error *err);

/* vnuma's own state and cache files: none is near this; bigger is refused by vn_file_read. */
#define VN_FILE_STATE_MAX (64u << 20)

/*
 * Writes path atomically: a new file beside it (O_CREAT|O_EXCL|O_NOFOLLOW),
 * the data, fsync, then rename() over path. rename() replaces a symlink at
 * path rather than following it, so nothing outside the directory is
 * touched. On any failure the temporary file is removed and path is as it
 * was. Errors are VN_ERR_INFRA naming path and the cause (e.g. ENOSPC).
 */
int vn_file_write_atomic(const char *path, const void *data, size_t len, mode_t mode, struct vn_error *err);

/*
 * The same, streamed: vn_file_tmp_open() creates the temporary file beside
 * path (O_EXCL|O_NOFOLLOW, mode), the caller writes t->fd, then
 * vn_file_tmp_commit() fsyncs and renames it over path, or
 * vn_file_tmp_abort() removes it. Both close t->fd. Errors as above.
 */
struct vn_file_tmp {
	int fd;
	char *tmp;
	const char *path;
};
int vn_file_tmp_open(const char *path, mode_t mode, struct vn_file_tmp *t, struct vn_error *err);
int vn_file_tmp_commit(struct vn_file_tmp *t, struct vn_error *err);
void vn_file_tmp_abort(struct vn_file_tmp *t);

/* write() all of p (retrying short writes and EINTR): 0 or -errno. Async-signal-safe (the console keeper relies on it). */
int vn_write_all(int fd, const void *p, size_t len);

/* The same for a string. */
int vn_file_write_text(const char *path, const char *text, struct vn_error *err);

/* Copies the regular file from to path atomically (as above), streaming. */
int vn_file_copy_atomic(const char *from, const char *path, struct vn_error *err);

/*
 * Creates path for a file that grows while a run goes on (samples.jsonl, a
 * step's output), so that what was written survives a kill: whatever sits
 * at path (a stale file, a symlink) is unlinked first, and the new file is
 * created with O_EXCL|O_NOFOLLOW. Returns a stdio stream.
 */
int vn_file_create_stream(const char *path, FILE **out, struct vn_error *err);

/*
 * For vnuma's own cache files (kernel build markers, copies into a build
 * tree), where a torn file is harmless because its marker is written last:
 * create or truncate path and write s, not atomically.
 */
int vn_file_write(const char *path, const char *s);

/* Copy from's bytes and permissions to a fresh file at to (new inode and mtime, so make sees a change). */
int vn_file_copy(const char *from, const char *to);

/*
 * mkdir -p for a results directory: each missing component is created
 * (mode 0755); the last one, if it exists, must be a real directory, not a
 * symlink to somewhere else. Errors are VN_ERR_INFRA naming path.
 */
int vn_dir_create(const char *path, struct vn_error *err);

/* 1 if dir exists and holds any entry, 0 if it is missing or empty, or a negative errno. */
int vn_dir_nonempty(const char *dir);
