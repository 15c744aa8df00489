/*
 * Patches: which files a unified diff touches, applying one with a dry run
 * first and naming a rejected hunk, and moving a worktree from one patch set
 * to the next without touching the files no patch touches.
 */
#include <errno.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "kernel/kernel-priv.h"
#include "util/alloc.h"
#include "util/cleanup.h"
#include "util/dir.h"
#include "util/spawn.h"
#include "util/file.h"

static bool safe_rel(const char *p)
{
	return *p && *p != '/' && !strstr(p, "..");
}

int vn_kernel_patch_files(const char *patch, char ***files, size_t *n, struct vn_error *err)
{
	_cleanup_fclose_ FILE *f = fopen(patch, "re");
	_cleanup_free_ char *line = NULL;
	size_t cap = 0;

	*files = NULL;
	*n = 0;
	if (!f)
		return vn_input_error(err, "%s: %s", patch, strerror(errno));
	char **v = vn_xcalloc(1, sizeof(char *));
	while (getline(&line, &cap, f) > 0) {
		if (strncmp(line, "+++ ", 4) != 0 && strncmp(line, "--- ", 4) != 0)
			continue;
		char *p = line + 4;
		p[strcspn(p, "\t\n")] = '\0';
		if (strcmp(p, "/dev/null") == 0 || !strchr(p, '/'))
			continue;
		p = strchr(p, '/') + 1; /* -p1 */
		if (!safe_rel(p))
			continue;
		bool dup = false;
		for (size_t i = 0; i < *n && !dup; i++)
			dup = strcmp(v[i], p) == 0;
		if (dup)
			continue;
		v = vn_xreallocarray(v, *n + 2, sizeof(char *));
		v[(*n)++] = vn_xstrdup(p);
		v[*n] = NULL;
	}
	*files = v;
	return 0;
}

/* Hunk number `want` (1-based) of `file` in a unified diff, for the error message. */
static char *find_hunk(const char *patch, const char *file, int want)
{
	_cleanup_fclose_ FILE *f = fopen(patch, "re");
	_cleanup_free_ char *line = NULL;
	struct vn_strbuf b = VN_STRBUF_INIT;
	size_t cap = 0;
	bool in_file = false, grab = false;
	int hunk = 0;

	if (!f)
		return NULL;
	while (getline(&line, &cap, f) > 0) {
		if (strncmp(line, "+++ ", 4) == 0) {
			char *p = line + 4;
			p[strcspn(p, "\t\n")] = '\0';
			char *rel = strchr(p, '/') ? strchr(p, '/') + 1 : p;
			in_file = strcmp(rel, file) == 0;
			hunk = 0;
			grab = false;
			continue;
		}
		if (!in_file)
			continue;
		if (strncmp(line, "@@", 2) == 0) {
			grab = ++hunk == want;
			if (hunk > want)
				break;
		} else if (strncmp(line, "diff ", 5) == 0 || strncmp(line, "--- ", 4) == 0) {
			grab = false;
		}
		if (grab)
			vn_strbuf_append(&b, line, strlen(line));
	}
	return b.len ? vn_strbuf_steal(&b) : NULL;
}

int vn_kernel_patch_apply(const char *tree, const char *patch, const char *name, int log_fd, struct vn_error *err)
{
	_cleanup_strbuf_ struct vn_strbuf out = VN_STRBUF_INIT;
	const char *dry[] = {"patch", "-p1", "--forward", "--batch", "--dry-run", "-i", patch, NULL};
	const char *real[] = {"patch", "-p1", "--forward", "--batch", "--no-backup-if-mismatch", "-i", patch, NULL};
	/* A patch applies in about a second; one still running after 5 minutes hangs (a disk, a FUSE tree). */
	struct vn_spawn_opts so = {.cwd = tree, .log_fd = log_fd, .capture = &out, .deadline_s = 300};
	int rc;

	if ((rc = vn_spawn_run(dry, &so, err)) < 0)
		return rc;
	if (rc == 0) {
		vn_strbuf_free(&out);
		if ((rc = vn_spawn_run(real, &so, err)) < 0)
			return rc;
		if (rc == 0)
			return 0;
	}
	/* Name the first failure the way a developer would look for it: file and hunk. */
	char file[PATH_MAX] = "";
	const char *text = out.s ? out.s : "";
	for (const char *l = text; *l;) {
		const char *e = strchr(l, '\n');
		size_t len = e ? (size_t)(e - l) : strlen(l);
		int hunk, at;
		char what[64];
		if ((len > 14 && strncmp(l, "checking file ", 14) == 0) ||
		    (len > 14 && strncmp(l, "patching file ", 14) == 0))
			snprintf(file, sizeof(file), "%.*s", (int)(len - 14), l + 14);
		if (sscanf(l, "Hunk #%d %63s at %d", &hunk, what, &at) == 3 && strcmp(what, "FAILED") == 0) {
			_cleanup_free_ char *h = find_hunk(patch, file, hunk);
			vn_input_error(err, "patch %s does not apply: %s: hunk #%d FAILED at line %d", name, file, hunk,
				       at);
			if (h) {
				_cleanup_free_ char *d =
					vn_xasprintf("rejected hunk (%s, hunk #%d):\n%s", file, hunk, h);
				vn_error_set_detail(err, d);
			}
			return err ? err->code : -EINVAL;
		}
		if (len >= 8 && strncmp(l, "Reversed", 8) == 0)
			return vn_input_error(err,
					      "patch %s does not apply: %s: already applied (reversed patch detected)",
					      name, file[0] ? file : "?");
		if (len > 26 && strncmp(l, "can't find file to patch", 24) == 0)
			return vn_input_error(
				err, "patch %s does not apply: a file it patches does not exist in the tree", name);
		l += len + (e ? 1 : 0);
	}
	vn_input_error(err, "patch %s does not apply (patch exited %d)", name, rc);
	vn_error_set_detail(err, text);
	return -EINVAL;
}

/*
 * Bring the worktree from the last patch set to this one: restore every file
 * the last set touched from the pristine tree (a fresh copy, so make sees it
 * change), then apply this set. Files no patch touches keep their objects.
 */
int vn_kernel_patches_sync(const struct vn_kernel_work *w, const char *phash, struct vn_error *err)
{
	_cleanup_free_ char *touched_path = vn_xasprintf("%s/touched", w->dir);
	_cleanup_free_ char *phash_path = vn_xasprintf("%s/patches.sha256", w->dir);
	_cleanup_free_ char *old = NULL, *last = NULL;
	_cleanup_strbuf_ struct vn_strbuf list = VN_STRBUF_INIT;
	int rc = 0;

	if (vn_file_read(phash_path, VN_FILE_STATE_MAX, &last, &(size_t){0}, NULL) == 0 &&
	    strncmp(last, phash, VN_SHA256_HEX_LEN) == 0)
		return 0;
	unlink(phash_path);
	if (vn_file_read(touched_path, VN_FILE_STATE_MAX, &old, &(size_t){0}, NULL) == 0) {
		for (char *save = NULL, *f = strtok_r(old, "\n", &save); f; f = strtok_r(NULL, "\n", &save)) {
			char a[PATH_MAX], b[PATH_MAX];
			if (!safe_rel(f))
				continue;
			snprintf(a, sizeof(a), "%s/%s", w->pristine, f);
			snprintf(b, sizeof(b), "%s/%s", w->src, f);
			unlink(b);
			if (access(a, F_OK) == 0 && (rc = vn_file_copy(a, b)) < 0)
				return vn_infra_error(err, rc, "restoring %s: %s", b, strerror(-rc));
		}
	}
	for (size_t i = 0; i < w->r->npatches; i++) {
		_cleanup_strv_ char **files = NULL;
		size_t n;
		if ((rc = vn_kernel_patch_files(w->r->patches[i], &files, &n, err)) < 0)
			return rc;
		for (size_t j = 0; j < n; j++)
			vn_strbuf_printf(&list, "%s\n", files[j]);
	}
	/* Written before patching, so a failed or interrupted patch is undone next time. */
	if ((rc = vn_file_write(touched_path, list.s ? list.s : "")) < 0)
		return vn_infra_error(err, rc, "%s: %s", touched_path, strerror(-rc));
	for (size_t i = 0; i < w->r->npatches; i++) {
		vn_kernel_say(w, "patch", w->r->patch_names[i]);
		if ((rc = vn_kernel_patch_apply(w->src, w->r->patches[i], w->r->patch_names[i], w->log_fd, err)) < 0)
			return rc;
	}
	return vn_file_write(phash_path, phash);
}
