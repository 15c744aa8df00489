/*
 * Which guest kernel boots: Debian's stock kernel by default, or any bzImage.
 * Recipes that build patched kernels from source plug in here later: they
 * resolve to the same struct.
 */
#pragma once

#include "util/error.h"

struct vn_kernel {
	char *image;       /* bzImage path */
	char *release;     /* "6.1.0-57-amd64", read from the bzImage header */
	char *version;     /* the full banner-ish string from the header */
	char *modules_dir; /* /lib/modules/<release>, or NULL when the kernel needs none */
	char *config;      /* the kernel's .config, when known */
	char *recipe;      /* "stock", "prebuilt", or a recipe name */
};

/*
 * spec: NULL or "stock" for Debian's newest installed linux-image; otherwise
 * a bzImage path. modules_dir overrides the modules folder (NULL: look in
 * /lib/modules/<release> and use it when it exists).
 */
int vn_kernel_resolve(const char *spec, const char *modules_dir, struct vn_kernel **out, struct vn_error *err);

/* Read the release string embedded in an x86 bzImage's setup header. */
int vn_kernel_image_release(const char *image, char **release, char **version, struct vn_error *err);

void vn_kernel_free(struct vn_kernel *k);
static inline void vn_kernel_freep(struct vn_kernel **k)
{
	if (*k)
		vn_kernel_free(*k);
}
#define _cleanup_kernel_ __attribute__((cleanup(vn_kernel_freep)))
