/*
 * Guest image recipes (guest-images/NAME.json): what userland a guest boots.
 *
 *   {"kind": "initramfs", "with": ["bash-static"]}
 *       the default busybox initramfs, plus host Debian packages' files
 *   {"kind": "disk", "root": "busybox", "size": "128M", "with": [...]}
 *       that same root on an ext4 qcow2 disk
 *   {"kind": "disk", "root": "debootstrap", "suite": "bookworm", "size": "4G",
 *    "mirror": "http://deb.debian.org/debian", "packages": ["numactl", ...]}
 *       a Debian root from Debian's archive, with the agent as a service
 *
 * Errors are input errors naming the file and the JSON path.
 */
#pragma once

#include <stddef.h>
#include <stdint.h>

#include "util/cleanup.h"
#include "util/error.h"

enum vn_image_kind { VN_IMAGE_INITRAMFS, VN_IMAGE_DISK };
enum vn_image_root { VN_IMAGE_ROOT_BUSYBOX, VN_IMAGE_ROOT_DEBOOTSTRAP };

/* Disk sizes a recipe may ask for. */
#define VN_IMAGE_SIZE_MIN (UINT64_C(32) << 20)
#define VN_IMAGE_SIZE_MAX (UINT64_C(64) << 30)
/* Packages a recipe may list (with or packages). */
#define VN_IMAGE_PACKAGES_MAX 64

struct vn_image_recipe {
	char *path; /* as given */
	char *name; /* the file name without .json: the name `up --image` takes */
	char *description;
	enum vn_image_kind kind;
	enum vn_image_root root; /* disk only */
	uint64_t size;           /* disk only */
	char **with;             /* host packages (NULL-terminated, never NULL) */
	size_t nwith;
	char *suite, *mirror; /* debootstrap only */
	char **packages;      /* debootstrap only: Debian packages from the archive (never NULL) */
	size_t npackages;
	char *sha256; /* of the file's bytes: part of the cache key */
};

/* Parse text as a recipe; path names it in messages and gives the name. */
int vn_image_recipe_parse(const char *text, size_t len, const char *path, struct vn_image_recipe **out,
			  struct vn_error *err);
int vn_image_recipe_load(const char *path, struct vn_image_recipe **out, struct vn_error *err);
/*
 * A recipe argument: a .json file, or NAME looked up as NAME.json in
 * ./guest-images and the installed guest-images; not found is an input error.
 */
int vn_image_recipe_find(const char *arg, char **path, struct vn_error *err);
void vn_image_recipe_free(struct vn_image_recipe *r);
VN_DEFINE_CLEANUP(struct vn_image_recipe *, vn_image_recipe_free);
#define _cleanup_image_recipe_ _cleanup_(vn_image_recipe_freep)

const char *vn_image_kind_name(enum vn_image_kind k);
