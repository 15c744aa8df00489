/*
 * Directories, after systemd's and crun's helpers. Files (reading them,
 * writing them atomically or not) are util/file.h's.
 * Every function returns 0 or a negative errno.
 */
#pragma once

#include <stdint.h>

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

/*
 * rm -rf, without a shell or a child process; a missing path is fine.
 * Symlinks are removed, never followed, and it never crosses into another
 * file system (a chroot's /proc, a bind-mounted /dev): what is mounted
 * below path stays, and so does the directory it is mounted on. Below
 * path's last component every step is openat/unlinkat relative to its
 * directory's descriptor (O_NOFOLLOW), never a path resolved again: a
 * directory swapped for a symlink during the walk is removed as a symlink,
 * and what it points to stays. -EINVAL for a path ending in "." or "..".
 */
int vn_rm_rf(const char *path);

/* The bytes path takes on disk, everything beneath it counted (du -s, links not followed); 0 when it is not there. */
uint64_t vn_dir_usage(const char *path);

/*
 * The directory rel names beneath the directory open at dirfd (dir: its
 * name, for messages), walked one component at a time with O_NOFOLLOW: a
 * symlink anywhere in rel is never followed (VN_ERR_INPUT/-ELOOP naming
 * it), nor is "..". create: missing components are made with mode. Returns
 * an O_PATH descriptor (for openat, mkdirat, unlinkat, fchmodat) or -errno
 * with err filled.
 */
int vn_dir_beneath(int dirfd, const char *dir, const char *rel, bool create, mode_t mode, struct vn_error *err);

/*
 * Whether rel beneath dir is a symlink or passes through one (a missing
 * component, or a file that is not one, is not): a run directory planted in
 * a shared results tree as a symlink to someone else's.
 */
bool vn_path_has_symlink(const char *dir, const char *rel);

bool vn_is_dir(const char *path);
bool vn_is_file(const char *path); /* a regular file (after symlinks) */
