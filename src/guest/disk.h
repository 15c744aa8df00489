/*
 * Disk images through libguestfs (its C API; the only includer of
 * <guestfs.h>): files into and out of any qcow2 or raw image with a Linux
 * filesystem, and a fresh ext4 root made from a tar archive. Each call is one
 * appliance launch (about 20-25 s under TCG), so callers batch their work.
 *
 * Errors: the environment (no appliance, QEMU fails, no space) is
 * VN_ERR_INFRA; what the caller asked for (a path missing in the image, a
 * host file missing, an image without a Linux filesystem) is VN_ERR_INPUT
 * naming the path.
 */
#pragma once

#include <stdbool.h>
#include <stdint.h>

#include "util/error.h"

struct vn_disk_opts {
	/* LIBGUESTFS_BACKEND_SETTINGS=force_tcg: where KVM does not work, the appliance's QEMU aborts on it. */
	bool force_tcg;
	/* libguestfs's own messages (and the appliance's when a launch fails) appended here; NULL: dropped. */
	const char *log;
};

/* qcow2 or raw, from the file's first bytes (never guessed by libguestfs). */
const char *vn_disk_format(const char *image);

/*
 * Into image: first every dir of mkdirs (mkdir -p), then every "SRC:DST" of
 * files (regular host files; DST's directory must exist in the image, or be
 * made by mkdirs; the host file's permission bits are kept). Both lists are
 * NULL-terminated and may be NULL.
 */
int vn_disk_inject(const char *image, const char *const *files, const char *const *mkdirs, const struct vn_disk_opts *o,
		   struct vn_error *err);

/*
 * Out of image into dir: every absolute PATH (a file or a directory tree) to
 * DIR/PATH, so that several paths cannot collide. The image is opened read
 * only; a tree is unpacked refusing absolute names, '..' and writes through
 * symlinks (the image may come from a guest that misbehaved). Symlinks are
 * kept as symlinks, absolute ones too, but never followed: every output
 * path is reached from DIR's descriptor one component at a time
 * (vn_dir_beneath), so a later PATH, or a later extract into DIR, that meets
 * one is VN_ERR_INPUT naming it, and files are downloaded into a descriptor
 * of our own fresh file. DIR itself, the caller's, may be a symlink. missing_ok:
 * a missing PATH is skipped and counted in *missing instead of being an error.
 */
int vn_disk_extract(const char *image, const char *const *paths, const char *dir, bool missing_ok, unsigned *missing,
		    const struct vn_disk_opts *o, struct vn_error *err);

/*
 * A new qcow2 image of size bytes holding one ext4 filesystem (no partition
 * table, so the guest's root is /dev/vda) labelled label, filled from the
 * tar archive root_tar and given /etc/fstab mounting it on /.
 */
int vn_disk_create(const char *image, uint64_t size, const char *label, const char *root_tar,
		   const struct vn_disk_opts *o, struct vn_error *err);

/* Any archive libarchive reads (the initramfs's cpio) rewritten as a pax tar at tar_path. */
int vn_archive_to_tar(const char *src, const char *tar_path, struct vn_error *err);

/*
 * A qcow2 overlay at path over backing (the backing file is never written:
 * a guest boots on its own overlay). Uses qemu-img.
 */
int vn_disk_overlay(const char *backing, const char *path, struct vn_error *err);
