/*
 * Kernel recipes (kernels/NAME.json): where a guest kernel comes from.
 *   {"type": "stock"}
 *   {"type": "prebuilt", "image": PATH, "modules": DIR, "config": PATH}
 *   {"type": "source", "tree": "linux-source-6.1" | GIT_CHECKOUT,
 *    "patches": ["x.patch", ...], "debug": true,
 *    "config": {"base": "tinyconfig", "fragments": ["numa.config"], "selftests": ["vm"],
 *               "require": ["CONFIG_NUMA"],
 *               "arch": {"arm64": {"fragments": ["numa-arm64.config"], "require": [...]}}}}
 * Relative paths (image, patches, fragments) are read beside the recipe: a
 * recipe kernels/NAME.json keeps its files in kernels/NAME/.
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>

#include "util/arch.h"
#include "util/cleanup.h"
#include "util/error.h"
#include "util/strbuf.h"

enum vn_recipe_type {
	VN_RECIPE_STOCK,
	VN_RECIPE_PREBUILT,
	VN_RECIPE_SOURCE,
};

enum vn_tree_kind {
	VN_TREE_TARBALL, /* Debian's /usr/src/linux-source-X.tar.xz */
	VN_TREE_GIT,     /* a git checkout: HEAD plus its uncommitted diff */
};

/*
 * A config: the base target, the fragments over it, the options the result
 * must have. A recipe has one, and may give another architecture its own
 * (a fragment names options of one architecture: x86's 8250 serial, arm64's
 * PL011), which replaces it whole for that architecture.
 */
struct vn_recipe_config {
	char *base; /* make target: tinyconfig, x86_64_defconfig, ... */
	size_t nfragments;
	char **fragment_names; /* as written */
	/* Beside the recipe when it exists there; otherwise NULL and looked up
	 * in the kernel tree (arch/ARCH/configs, kernel/configs) at build time,
	 * so "kvm_guest.config" works without a copy. */
	char **fragments;
	/* "vm", "mm": the tree's tools/testing/selftests/NAME/config, merged after the fragments. */
	size_t nselftests;
	char **selftests;
	size_t nrequire;
	char **require; /* "CONFIG_X" */
};

struct vn_recipe {
	char *path; /* the recipe file, absolute */
	char *name; /* basename without .json */
	char *dir;  /* where relative files are looked up: <dir of recipe>/<name>/ */
	char *description;
	enum vn_recipe_type type;

	/* prebuilt */
	char *image, *modules, *config;

	/* source */
	enum vn_tree_kind tree_kind;
	char *tree;      /* as written */
	char *tree_path; /* tarball or checkout, absolute */
	size_t npatches;
	char **patches;                  /* absolute paths, in order */
	char **patch_names;              /* as written */
	struct vn_recipe_config kconfig; /* $.config */
	/* config.arch.NAME: that architecture's own config; base NULL where none is given. */
	struct vn_recipe_config arch_config[VN_ARCH_COUNT];
	/* $.debug: DWARF and the gdb scripts, kept with the image (a cache entry of its own). */
	bool debug;
};

/* Parse a recipe file; errors name the file and the JSON path ($.config.base). */
int vn_recipe_load(const char *path, struct vn_recipe **out, struct vn_error *err);

/*
 * Is spec a recipe? "NAME" (NAME.json in $VNUMA_KERNELS_DIR, ./kernels or the
 * installed kernels/, see util/paths.h) or a path ending in .json. Returns 1
 * with *path set, 0 when spec names no recipe (tried, if not NULL, gets the
 * directories searched).
 */
int vn_recipe_find(const char *spec, char **path, struct vn_strbuf *tried);

/*
 * Build the recipe's config and patches over a git checkout instead of its
 * tree (bisect's --repo, kernel build's --repo): the recipe must be a source
 * one, repo a git checkout. Errors are input errors that name --repo or the
 * recipe.
 */
int vn_recipe_use_repo(struct vn_recipe *r, const char *repo, struct vn_error *err);

/* The config a build for arch uses: its own where the recipe gives one, else the recipe's. */
const struct vn_recipe_config *vn_recipe_config_for(const struct vn_recipe *r, enum vn_arch arch);

void vn_recipe_free(struct vn_recipe *r);
VN_DEFINE_CLEANUP(struct vn_recipe *, vn_recipe_free);
#define _cleanup_recipe_ _cleanup_(vn_recipe_freep)
