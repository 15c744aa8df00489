/*
 * Building a kernel from a source recipe, into a content-addressed cache.
 *
 * CACHE/src/<source-id>/tree          pristine extracted tarball, one per source identity
 * CACHE/work/<source-id>-<config>/    an incremental build per (tarball, config):
 *     src/   hardlink farm of the pristine tree with this build's patches applied
 *            (patch writes new files, so the pristine inodes stay untouched)
 *     obj/   make O= directory, reused by every patch set on this (source, config)
 * CACHE/work/git-<tree>-<config>/     the same per (git tree, config), whatever the
 *     commit: src/ is a clone sharing the tree's objects, checked out at each
 *     build's commit, so the next commit recompiles only what changed
 * CACHE/kernels/<key>/                bzImage, config, build.log, kernel.json; a debug
 *     build also vmlinux (with DWARF), vmlinux-gdb.py and scripts/gdb/linux/ *.py
 *
 * key = sha256(source identity, config inputs, patch contents in order), so
 * a second build of the same inputs is a lookup, and a kernel that differs
 * only in patches recompiles only the files those patches touch.
 */
#pragma once

#include <stdbool.h>

#include "kernel/recipe.h"
#include "util/arch.h"
#include "util/cleanup.h"
#include "util/error.h"
#include "util/sha256.h"

/* stage: "extract", "patch", "config", "build", "install"; line: the latest make output line or NULL. */
typedef void (*vn_kernel_progress_fn)(void *data, const char *stage, const char *line);

struct vn_kernel_build_opts {
	const char *cache_dir; /* e.g. STATE/cache/kernels */
	int jobs;              /* make -j; 0: the number of online CPUs */
	/* The kernel's architecture (zero: x86_64); another than the host's cross-builds
	 * with Debian's gcc-TRIPLET and the recipe's config.arch entry where it has one. */
	enum vn_arch arch;
	/* A git tree's commit (any name git knows) to build instead of its HEAD and uncommitted changes. */
	const char *rev;
	/* With debug info (and the gdb scripts) even where the recipe does not ask for it: --debug. */
	bool debug;
	vn_kernel_progress_fn progress;
	void *progress_data;
};

/* What a cached kernel is; also what kernel.json in its cache folder holds. */
struct vn_kernel_built {
	char *dir;         /* CACHE/kernels/<key> */
	char *image;       /* .../bzImage (arm64: Image, ppc64le: vmlinux) */
	char *config;      /* .../config (the final .config) */
	char *log;         /* .../build.log */
	char *key;         /* hex cache key */
	char *config_hash; /* hex hash of the config inputs (base, fragment contents) */
	char *source_id;   /* hex source identity */
	char *commit;      /* a git tree's commit hash, or NULL */
	bool commit_only;  /* built from the commit alone (--rev), not HEAD plus the uncommitted diff */
	char *tree_path;   /* the tarball or checkout built, absolute (NULL in entries older than it) */
	char *release, *version;
	char *recipe; /* recipe name */
	char *recipe_path;
	size_t npatches;
	char **patches; /* patch names as written in the recipe */
	long long size; /* bzImage bytes */
	double build_s; /* how long the build took (0 when unknown) */
	bool cached;    /* true when this call found it in the cache */
	enum vn_arch arch;
	bool debug;    /* built with debug info: */
	char *vmlinux; /* .../vmlinux with DWARF, or NULL */
	char *gdb_py;  /* .../vmlinux-gdb.py (lx-symbols, lx-dmesg; its modules in scripts/gdb/), or NULL */
};

/* Build (or find in the cache) the kernel a source recipe describes. */
int vn_kernel_build(const struct vn_recipe *r, const struct vn_kernel_build_opts *o, struct vn_kernel_built **out,
		    struct vn_error *err);

/* Every kernel in the cache (kernel.json files), newest first. */
int vn_kernel_cache_list(const char *cache_dir, struct vn_kernel_built ***out, size_t *n, struct vn_error *err);

/* STATE/cache/kernels for the default state dir (--state-dir's fallbacks: $VNUMA_STATE_DIR, ...). */
int vn_kernel_cache_dir_default(char **out, struct vn_error *err);

void vn_kernel_built_free(struct vn_kernel_built *b);
VN_DEFINE_CLEANUP(struct vn_kernel_built *, vn_kernel_built_free);
#define _cleanup_kernel_built_ _cleanup_(vn_kernel_built_freep)
