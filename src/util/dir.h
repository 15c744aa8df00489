/*
 * Directories and whole files, after systemd's fileio.h and crun's utils.c.
 * (Atomic replacement of a file lives with its own helper, not here.)
 * Every function returns 0 or a negative errno.
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include "util/error.h"

/*
 * mkdir -p: create path and its missing parents with mode (an existing
 * directory is fine). On failure err, when not NULL, gets an infrastructure
 * error naming the component that could not be created.
 */
int vn_mkdir_p(const char *path, mode_t mode, struct vn_error *err);

/* rm -rf, without a shell or a child process; a missing path is fine. Symlinks are removed, never followed. */
int vn_rm_rf(const char *path);

bool vn_is_dir(const char *path);
bool vn_is_file(const char *path); /* a regular file (after symlinks) */

/* The whole file, NUL-terminated, in *out (caller frees); *len (if not NULL) without the NUL. */
int vn_file_read(const char *path, char **out, size_t *len);

/* Create or truncate path and write s (not atomic: readers may see a partial file). */
int vn_file_write(const char *path, const char *s);

/* Copy from's bytes and permissions to a fresh file at to (new inode and mtime, so make sees a change). */
int vn_file_copy(const char *from, const char *to);
