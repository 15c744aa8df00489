/*
 * Which guest kernel boots: Debian's stock kernel by default, any bzImage,
 * or a recipe (kernels/NAME.json) that may build a patched kernel from
 * source on first use. All resolve to the same struct.
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>

#include "kernel/build.h"
#include "util/cleanup.h"
#include "util/error.h"

struct vn_kernel {
	char *image;       /* bzImage path */
	char *release;     /* "6.1.0-57-amd64", read from the bzImage header */
	char *version;     /* the full banner-ish string from the header */
	char *modules_dir; /* /lib/modules/<release>, or NULL when the kernel needs none */
	char *config;      /* the kernel's .config, when known */
	char *recipe;      /* "stock", "prebuilt", or a recipe name */
	/* Recipes only (NULL/0 otherwise), so that results can say what was built: */
	char *recipe_path; /* the recipe file, absolute */
	size_t npatches;
	char **patches;    /* patch names in the order applied, NULL-terminated */
	char *config_hash; /* sha256 of the config inputs (base, fragment contents) */
	char *build_key;   /* the cache key: source identity + config inputs + patches */
	char *source_id;   /* sha256 of the tarball, or of git HEAD's tree + uncommitted diff */
	bool built_now;    /* true when resolving it ran a build (not a cache hit) */
};

struct vn_kernel_resolve_opts {
	const char *cache_dir; /* NULL: STATE/cache/kernels of the default state dir */
	int jobs;              /* make -j for builds; 0: all CPUs */
	vn_kernel_progress_fn progress;
	void *progress_data;
	/*
	 * Another architecture's Debian packages unpacked here (testbed/arch-root.h):
	 * "stock" is ROOT/boot/vmlinu[xz]-RELEASE with ROOT/lib/modules/RELEASE, its
	 * release read from the file name (only x86 has a bzImage header). NULL: /boot.
	 */
	const char *root;
	/* The guest's architecture (zero: x86_64): a source recipe cross-builds for it. */
	enum vn_arch arch;
};

/*
 * spec: NULL or "stock" for Debian's newest installed linux-image; a recipe
 * ("NAME" for kernels/NAME.json, or a path ending in .json), built into the
 * cache on first use; otherwise a bzImage path. modules_dir overrides the
 * modules folder (NULL: look in /lib/modules/<release> and use it when it
 * exists; kernels built from recipes have none).
 */
/* o: a cache directory and a progress callback for builds (may be NULL). */
int vn_kernel_resolve_with(const char *spec, const char *modules_dir, const struct vn_kernel_resolve_opts *o,
			   struct vn_kernel **out, struct vn_error *err);

/* Read the release string embedded in an x86 bzImage's setup header. */
int vn_kernel_image_release(const char *image, char **release, char **version, struct vn_error *err);

/*
 * The fast boot path (pvh.c): the ELF vmlinux inside bzimage, when it has a
 * PVH entry, extracted once into CACHE_DIR/vmlinux/<sha256 of the bzImage>.elf.
 * Returns 1 with *out its path, 0 when the bzImage has no PVH vmlinux to give
 * (boot the bzImage), or a negative errno.
 */
int vn_kernel_pvh_image(const char *bzimage, const char *cache_dir, char **out, struct vn_error *err);
/* An x86_64 ELF with a XEN_ELFNOTE_PHYS32_ENTRY note (every read bounded by len). */
bool vn_kernel_elf_has_pvh(const char *elf, size_t len);

void vn_kernel_free(struct vn_kernel *k);
VN_DEFINE_CLEANUP(struct vn_kernel *, vn_kernel_free);
#define _cleanup_kernel_ _cleanup_(vn_kernel_freep)
