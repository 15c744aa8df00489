/* The kernel layer's internals, exposed for unit tests only. */
#pragma once

#include <stddef.h>

#include "kernel/build.h"
#include "kernel/recipe.h"
#include "util/error.h"
#include "util/strbuf.h"

/* Options every vnuma-built kernel must have =y, whatever the recipe says. */
extern const char *const vn_kernel_required_options[];

/*
 * Hashes of a recipe's inputs: config_hash covers the config base and the
 * fragments' contents (not the require list, which only checks the result); key covers the
 * source identity, config_hash and the patches' contents in order.
 */
int vn_kernel_cache_key(const struct vn_recipe *r, const char *source_id, char key[VN_SHA256_HEX_LEN + 1],
			char config_hash[VN_SHA256_HEX_LEN + 1], struct vn_error *err);

/* Files a unified diff touches, relative to the tree (-p1), deduplicated. */
int vn_kernel_patch_files(const char *patch, char ***files, size_t *n, struct vn_error *err);

/*
 * Apply one patch to tree with patch -p1 --forward --batch, after a dry run
 * so that a patch that does not apply changes nothing. A rejected hunk is an
 * input error naming name (the patch as the recipe wrote it), the file and the
 * hunk, with the hunk's text as detail. Output goes to log_fd when >= 0.
 */
int vn_kernel_patch_apply(const char *tree, const char *patch, const char *name, int log_fd,
			  struct vn_error *err);

/*
 * Check a final .config against what was asked for: wanted holds fragment
 * lines ("CONFIG_X=y", "# CONFIG_X is not set", "CONFIG_X=n"). Returns the
 * number of options that did not survive and lists them, one per line, as
 * "CONFIG_X: wanted y, got not set" in *report (NULL when none).
 */
int vn_kernel_config_verify(const char *final_config, const char *wanted, char **report);

/*
 * Run argv (no shell) in cwd with LC_ALL=C; stdout+stderr go to log_fd (if
 * >= 0), into capture (if not NULL) and line by line to progress. Returns the
 * exit status (>= 0) or a negative errno (spawn failure, interrupted).
 */
int vn_kernel_run(const char *const *argv, const char *cwd, int log_fd, struct vn_strbuf *capture,
		  vn_kernel_progress_fn progress, void *progress_data, const char *stage, struct vn_error *err);
