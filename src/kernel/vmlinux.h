/*
 * The vmlinux with symbols that belongs to a booted kernel, for gdb, crash
 * and drgn: a recipe build's (kept beside its bzImage when the build has
 * one), or for Debian's stock kernel the linux-image-RELEASE-dbg package's.
 */
#pragma once

#include "util/error.h"

struct vn_vmlinux {
	char *path;     /* the vmlinux with symbols, or NULL: none found */
	char *gdb_py;   /* the kernel's gdb scripts (vmlinux-gdb.py beside it), or NULL */
	char *build_id; /* its GNU build id, hex, or NULL */
	char *hint;     /* when path is NULL: what to install or build to get one */
};

/* Where Debian's -dbg packages put the vmlinux of release (root: "" for /, a test's tree otherwise). */
char *vn_vmlinux_debian_dbg(const char *root, const char *release);

/*
 * Find the vmlinux of the kernel booted from image (a bzImage, or the PVH
 * ELF vnuma extracted from one, which has no symbols), release its release
 * (may be NULL). Not finding one is no error: out->hint says how to get it.
 * Errors only for a found file that is not an ELF vmlinux.
 */
int vn_vmlinux_find(const char *root, const char *image, const char *release, struct vn_vmlinux *out,
		    struct vn_error *err);
void vn_vmlinux_clear(struct vn_vmlinux *v);

/*
 * When image is a recipe's kernel in the cache (kernel.json beside it): what
 * to say of its missing debug info, with the exact `vnuma kernel build
 * --debug` command; NULL for any other image.
 */
char *vn_vmlinux_recipe_hint(const char *image, const char *release);

/* The GNU build id of an ELF file, as hex; NULL in *out when it has none. */
int vn_elf_build_id(const char *path, char **out, struct vn_error *err);

/*
 * The value of KEY in an ELF core's VMCOREINFO note (the guest kernel's
 * words: "BUILD-ID", "OSRELEASE"), or NULL in *out: no such note (a guest
 * without qemu_fw_cfg, a kdump-format dump) or no such key. The caller
 * checks what the value may be.
 */
int vn_elf_vmcoreinfo(const char *path, const char *key, char **out, struct vn_error *err);
