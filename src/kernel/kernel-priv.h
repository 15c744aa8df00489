/* The kernel layer's internals: shared between its files (the second half) and exposed for unit tests. */
#pragma once

#include <stddef.h>

#include "kernel/build.h"
#include "kernel/recipe.h"
#include "util/error.h"
#include "util/sha256.h"
#include "util/strbuf.h"

/* A git commit hash: 40 hex digits, 64 in a SHA-256 repository. */
#define VN_GIT_HASH_MAX 64

/* Options every vnuma-built kernel of arch must have =y, whatever the recipe says (NULL-terminated). */
const char *const *vn_kernel_required_options(enum vn_arch arch);

/*
 * Hashes of a recipe's inputs: config_hash covers the config base and the
 * fragments' contents (not the require list, which only checks the result) and, for a debug
 * build only, vn_kernel_debug_fragment(); key covers the source identity, config_hash and the
 * patches' contents in order.
 */
int vn_kernel_cache_key(const struct vn_recipe *r, enum vn_arch arch, bool debug, const char *source_id,
			char key[VN_SHA256_HEX_LEN + 1], char config_hash[VN_SHA256_HEX_LEN + 1], struct vn_error *err);

/*
 * The config fragment a debug build merges last: DWARF, not reduced, the gdb
 * scripts; on x86 also what a dump of it needs (pvpanic, VMCOREINFO, sysrq).
 */
const char *vn_kernel_debug_fragment(enum vn_arch arch);

/* Files a unified diff touches, relative to the tree (-p1), deduplicated. */
int vn_kernel_patch_files(const char *patch, char ***files, size_t *n, struct vn_error *err);

/*
 * Apply one patch to tree with patch -p1 --forward --batch, after a dry run
 * so that a patch that does not apply changes nothing. A rejected hunk is an
 * input error naming name (the patch as the recipe wrote it), the file and the
 * hunk, with the hunk's text as detail. Output goes to log_fd when >= 0.
 */
int vn_kernel_patch_apply(const char *tree, const char *patch, const char *name, int log_fd, struct vn_error *err);

/*
 * Check a final .config against what was asked for: wanted holds fragment
 * lines ("CONFIG_X=y", "# CONFIG_X is not set", "CONFIG_X=n"). Returns the
 * number of options that did not survive and lists them, one per line, as
 * "CONFIG_X: wanted y, got not set" in *report (NULL when none).
 */
int vn_kernel_config_verify(const char *final_config, const char *wanted, char **report);

/* ---- shared by the build's files (build.c, source.c, patch.c, config.c, cache.c) ---- */

/* One build in progress: the recipe, the options and its folders. */
struct vn_kernel_work {
	const struct vn_recipe *r;
	const struct vn_recipe_config *cf; /* r's config for o->arch */
	const struct vn_kernel_build_opts *o;
	const char *pristine; /* CACHE/src/<id>/tree (a tarball's; NULL for a git tree) */
	const char *src;      /* the patched hardlink farm, or a git tree's shared checkout */
	const char *obj;      /* make O= */
	const char *dir;      /* CACHE/work/<id>-<config> */
	int log_fd;
	bool debug; /* the recipe's or the caller's: merge the debug fragment, keep vmlinux and the gdb scripts */
};

/* The last nlines lines of the log at path (malloc'd), or NULL when it is empty or cannot be read. */
char *vn_kernel_log_tail(const char *path, int nlines);
/* tool is a program in $PATH (a name without a slash). */
bool vn_kernel_in_path(const char *tool);
/* Report a stage (and optionally a line) to the progress callback. */
void vn_kernel_say(const struct vn_kernel_work *w, const char *stage, const char *line);
/*
 * What a step's output said of why it may fail: the first line saying the
 * disk is full, the first saying a program under it was killed. Lines also go
 * to progress as stage (NULL: not).
 */
struct vn_kernel_watch {
	const struct vn_kernel_work *w;
	const char *stage;
	char nospace[160], killed[160];
};
void vn_kernel_watch_line(void *data, const char *line);
/*
 * A step (what: "make bzImage") that exited status: an infrastructure error
 * when the disk is full (the log says so, or w->obj's filesystem is) or a
 * program under it was killed, so the commit is not blamed; else an input error.
 */
int vn_kernel_step_failed(const struct vn_kernel_watch *m, const char *what, int status, struct vn_error *err);
/* make O=obj -jN target in the worktree, output lines to progress as stage; a failure as vn_kernel_step_failed. */
int vn_kernel_make(const struct vn_kernel_work *w, const char *stage, const char *target, int jobs,
		   struct vn_error *err);

/*
 * source.c: the source identity: sha256 of the tarball, or of a git tree's
 * HEAD and uncommitted diff (in *diff), or of its commit rev alone (rev not
 * NULL); commit gets a git tree's full commit hash ("" for a tarball).
 */
int vn_kernel_source_id(const struct vn_recipe *r, const char *rev, const char *cache, char id[VN_SHA256_HEX_LEN + 1],
			char **diff, char commit[VN_GIT_HASH_MAX + 1], struct vn_error *err);
/* source.c: CACHE/src/<id>/tree, a tarball extracted once per identity; *tree gets its path. */
int vn_kernel_source_extract(const struct vn_kernel_work *w, const char *id, char **tree, struct vn_error *err);
/* source.c: a git tree's commit (and diff, when not NULL) in w->src, the tree's shared checkout. */
int vn_kernel_source_checkout(const struct vn_kernel_work *w, const char *commit, const char *diff,
			      struct vn_error *err);
/* source.c: the worktree w->src as a hardlink farm of w->pristine, unless it exists. */
int vn_kernel_source_worktree(const struct vn_kernel_work *w, struct vn_error *err);

/* patch.c: bring w->src from the last patch set to the recipe's (phash: patches' hash). */
int vn_kernel_patches_sync(const struct vn_kernel_work *w, const char *phash, struct vn_error *err);

/* config.c: base config + fragments + olddefconfig in w->obj, unless chash says it is current. */
int vn_kernel_configure(const struct vn_kernel_work *w, const char *chash, int jobs, struct vn_error *err);
/* config.c: every option asked for survived into w->obj/.config (input error listing those that did not). */
int vn_kernel_config_check(const struct vn_kernel_work *w, struct vn_error *err);

/* cache.c: length-prefixed string and file contents into a hash. */
void vn_kernel_hash_str(struct vn_sha256 *c, const char *s);
int vn_kernel_hash_file(struct vn_sha256 *c, const char *path, struct vn_error *err);
/* cache.c: the hash of the recipe's patches' contents, in order. */
int vn_kernel_patches_hash(const struct vn_recipe *r, char out[VN_SHA256_HEX_LEN + 1], struct vn_error *err);
/* cache.c: a vn_kernel_built for r (recipe name, patch names). */
struct vn_kernel_built *vn_kernel_built_new(const struct vn_recipe *r);
/*
 * cache.c: CACHE/kernels/<key>/kernel.json into *out; -ENOENT when it is not
 * there, -EINVAL when it is not whole (kernel.json without its fields, an
 * image empty or without its architecture's magic).
 */
int vn_kernel_cache_load(const char *dir, struct vn_kernel_built **out);
/* cache.c: the entry final when it is whole and key's; else -ENOENT, a broken one moved to kernels/.bad/ (*why). */
int vn_kernel_cache_get(const char *final, const char *key, struct vn_kernel_built **out, char **why);
/* cache.c: bzImage, config and kernel.json into staging, then staging renamed to final. */
int vn_kernel_cache_install(const struct vn_kernel_work *w, const char *staging, const char *final,
			    struct vn_kernel_built *b, struct vn_error *err);
/* cache.c: remove the staging folders of builds whose process is gone. */
void vn_kernel_cache_sweep(const char *kdir);
