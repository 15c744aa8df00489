/*
 * Kernel sources: the identity of a tarball or a git checkout, the pristine
 * tree extracted once per identity, and a build's hardlink farm of it.
 */
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "kernel/kernel-priv.h"
#include "util/alloc.h"
#include "util/cleanup.h"
#include "util/dir.h"
#include "util/file.h"
#include "util/git.h"
#include "util/spawn.h"

/* Program output goes to the build log only. */
static int run_logged(const char *const *argv, const char *cwd, int log_fd, struct vn_error *err)
{
	struct vn_spawn_opts so = {.cwd = cwd, .log_fd = log_fd};
	return vn_spawn_run(argv, &so, err);
}

/*
 * Hashing a 130 MB tarball takes a second; remember the digest per
 * (path, size, mtime) so that a cache hit stays instant.
 */
static int tarball_id(const char *cache, const char *tarball, char id[VN_SHA256_HEX_LEN + 1], struct vn_error *err)
{
	char memo[PATH_MAX], line[256];
	uint8_t d[VN_SHA256_LEN];
	struct stat st;
	int rc;

	if (stat(tarball, &st) < 0)
		return vn_input_error(err, "%s: %s", tarball, strerror(errno));
	struct vn_sha256 c;
	vn_sha256_init(&c);
	vn_kernel_hash_str(&c, tarball);
	vn_sha256_final(&c, d);
	char ph[VN_SHA256_HEX_LEN + 1];
	vn_sha256_hex(d, ph);
	snprintf(memo, sizeof(memo), "%s/src/tarball-%.16s.id", cache, ph);
	snprintf(line, sizeof(line), "%lld %lld.%09ld ", (long long)st.st_size, (long long)st.st_mtim.tv_sec,
		 st.st_mtim.tv_nsec);
	_cleanup_free_ char *old = NULL;
	if (vn_file_read(memo, VN_FILE_STATE_MAX, &old, &(size_t){0}, NULL) == 0 &&
	    strncmp(old, line, strlen(line)) == 0 && strlen(old + strlen(line)) >= VN_SHA256_HEX_LEN) {
		memcpy(id, old + strlen(line), VN_SHA256_HEX_LEN);
		id[VN_SHA256_HEX_LEN] = '\0';
		return 0;
	}
	if ((rc = vn_sha256_file(tarball, d, err)) < 0)
		return rc;
	vn_sha256_hex(d, id);
	_cleanup_free_ char *content = vn_xasprintf("%s%s\n", line, id);
	(void)vn_file_write(memo, content);
	return 0;
}

/* REV's object (REV^{commit}, HASH^{tree}): one full hash, or an input error (a range, a name git lacks). */
static int git_object(const char *tree, const char *spec, const char *rev, char out[VN_GIT_HASH_MAX + 1],
		      struct vn_error *err)
{
	_cleanup_strbuf_ struct vn_strbuf o = VN_STRBUF_INIT;
	const char *a[] = {"-C", tree, "rev-parse", "--verify", "-q", "--end-of-options", spec, NULL};
	struct vn_spawn_opts so = {.log_fd = -1, .capture = &o};
	int rc = vn_git_run(a, VN_GIT_READ, &so, err);

	if (rc < 0)
		return rc;
	if (o.s && o.len > 0 && o.s[o.len - 1] == '\n')
		o.s[--o.len] = '\0';
	if (rc > 0 || !o.s || !vn_git_hash_ok(o.s))
		return vn_input_error(err, "%s: no commit %s in this git tree (one commit: a hash, tag or branch)",
				      tree, rev);
	snprintf(out, VN_GIT_HASH_MAX + 1, "%s", o.s);
	return 0;
}

/*
 * A checkout's identity: the tree HEAD has and its uncommitted diff, or (rev)
 * that commit's tree alone. By tree, not commit: commits with the same
 * content (a revert of a revert, a rebase that changed only messages) are
 * one kernel, and a clean checkout of REV and REV built by name are one too.
 * commit gets the commit's full hash, for the checkout. The diff is
 * plumbing's, every knob pinned: porcelain's follows the user's config
 * (diff.noprefix, color.ui=always, diff.external) into a patch that does not
 * apply, or is another tool's.
 */
static int git_id(const char *tree, const char *rev, char id[VN_SHA256_HEX_LEN + 1], char **diff,
		  char commit[VN_GIT_HASH_MAX + 1], struct vn_error *err)
{
	_cleanup_strbuf_ struct vn_strbuf d = VN_STRBUF_INIT;
	const char *r = rev ? rev : "HEAD";
	_cleanup_free_ char *spec = vn_xasprintf("%s^{commit}", r), *tspec = NULL;
	const char *a2[] = {"-C",
			    tree,
			    "diff-index",
			    "-p",
			    "--binary",
			    "--no-color",
			    "--no-ext-diff",
			    "--no-textconv",
			    "--src-prefix=a/",
			    "--dst-prefix=b/",
			    "HEAD",
			    "--",
			    NULL};
	struct vn_spawn_opts o2 = {.log_fd = -1, .capture = &d};
	char th[VN_GIT_HASH_MAX + 1];
	uint8_t dg[VN_SHA256_LEN];
	struct vn_sha256 c;
	int rc;

	if (r[0] == '-')
		return vn_input_error(err, "%s: '%s' is not a revision", tree, r);
	if ((rc = git_object(tree, spec, r, commit, err)) < 0)
		return rc;
	tspec = vn_xasprintf("%s^{tree}", commit);
	if ((rc = git_object(tree, tspec, r, th, err)) < 0)
		return rc;
	if (!rev && (rc = vn_git_run(a2, VN_GIT_READ, &o2, err)) != 0)
		return rc < 0 ? rc : vn_input_error(err, "%s: git diff-index HEAD failed (exit %d)", tree, rc);
	vn_sha256_init(&c);
	vn_kernel_hash_str(&c, "git-tree");
	/* The tree's hash with its newline, as identities have always been hashed. */
	_cleanup_free_ char *tree_line = vn_xasprintf("%s\n", th);
	vn_kernel_hash_str(&c, tree_line);
	vn_kernel_hash_str(&c, d.s ? d.s : "");
	vn_sha256_final(&c, dg);
	vn_sha256_hex(dg, id);
	*diff = vn_strbuf_steal(&d);
	return 0;
}

int vn_kernel_source_id(const struct vn_recipe *r, const char *rev, const char *cache, char id[VN_SHA256_HEX_LEN + 1],
			char **diff, char commit[VN_GIT_HASH_MAX + 1], struct vn_error *err)
{
	commit[0] = '\0';
	if (r->tree_kind == VN_TREE_TARBALL)
		return rev ? vn_input_error(err, "%s: a commit (%s) needs a git tree, not a tarball", r->path, rev)
			   : tarball_id(cache, r->tree_path, id, err);
	return git_id(r->tree_path, rev, id, diff, commit, err);
}

static int only_subdir(const char *dir, char **out)
{
	DIR *d = opendir(dir);
	int n = 0;

	if (!d)
		return -errno;
	for (struct dirent *e; (e = readdir(d));) {
		if (e->d_name[0] == '.')
			continue;
		if (n++ == 0)
			*out = vn_xasprintf("%s/%s", dir, e->d_name);
	}
	closedir(d);
	if (n != 1) {
		free(*out);
		*out = NULL;
		return -ENOENT;
	}
	return 0;
}

int vn_kernel_source_extract(const struct vn_kernel_work *w, const char *id, char **tree, struct vn_error *err)
{
	const struct vn_recipe *r = w->r;
	const char *cache = w->o->cache_dir;
	_cleanup_free_ char *dir = vn_xasprintf("%s/src/%.16s", cache, id);
	_cleanup_free_ char *tmp = vn_xasprintf("%s.tmp-%d", dir, (int)getpid());
	_cleanup_free_ char *dst = vn_xasprintf("%s/tree", tmp), *top = NULL;
	int rc;

	*tree = vn_xasprintf("%s/tree", dir);
	if (access(*tree, F_OK) == 0)
		return 0;
	vn_rm_rf(tmp);
	if ((rc = vn_mkdir_p(tmp, 0755, err)) < 0)
		return rc;
	vn_kernel_say(w, "extract", r->tree_path);
	if (r->tree_kind == VN_TREE_TARBALL) {
		const char *argv[] = {"tar", "-xf", r->tree_path, "-C", tmp, NULL};
		rc = run_logged(argv, NULL, w->log_fd, err);
		if (rc > 0)
			rc = vn_infra_error(err, -EIO, "extracting %s failed (see the build log)", r->tree_path);
		if (rc == 0 && (rc = only_subdir(tmp, &top)) < 0)
			rc = vn_input_error(err, "%s: expected one top-level folder in the tarball", r->tree_path);
		if (rc == 0 && rename(top, dst) < 0)
			rc = vn_infra_error(err, -errno, "rename %s: %s", top, strerror(errno));
	} else {
		rc = vn_input_error(err, "%s: a git tree is checked out, not extracted", r->tree_path);
	}
	if (rc == 0 && rename(tmp, dir) < 0 && errno != ENOTEMPTY && errno != EEXIST)
		rc = vn_infra_error(err, -errno, "rename %s: %s", tmp, strerror(errno));
	if (rc != 0 || access(tmp, F_OK) == 0)
		vn_rm_rf(tmp);
	return rc;
}

int vn_kernel_source_worktree(const struct vn_kernel_work *w, struct vn_error *err)
{
	if (access(w->src, F_OK) == 0)
		return 0;
	_cleanup_free_ char *tmp = vn_xasprintf("%s.tmp", w->src);
	const char *argv[] = {"cp", "-al", w->pristine, tmp, NULL};
	int rc;

	vn_rm_rf(tmp);
	vn_kernel_say(w, "extract", "hardlink farm of the pristine tree");
	if ((rc = run_logged(argv, NULL, w->log_fd, err)) != 0 || rename(tmp, w->src) < 0)
		return vn_infra_error(err, rc < 0 ? rc : -EIO, "cp -al %s %s failed", w->pristine, tmp);
	return 0;
}

/* git on the clone, named outright: what else git would find from its cwd is not the clone's business. */
static int git_logged(const struct vn_kernel_work *w, const char *const *args, enum vn_git_span span,
		      struct vn_error *err)
{
	_cleanup_free_ char *gd = vn_xasprintf("--git-dir=%s/.git", w->src),
			    *wt = vn_xasprintf("--work-tree=%s", w->src);
	const char *argv[16] = {gd, wt};
	size_t n = 2;
	struct vn_spawn_opts so = {.cwd = w->src, .log_fd = w->log_fd};

	while (*args && n < VN_ARRAY_SIZE(argv) - 1)
		argv[n++] = *args++;
	argv[n] = NULL;
	return vn_git_run(argv, span, &so, err);
}

/*
 * A git tree builds in one checkout per (tree, config), whatever its commit:
 * a clone sharing the tree's objects (so commits made later are there too),
 * moved to the commit with checkout -f, which rewrites only the files that
 * differ, so make recompiles only those. The user's checkout, index and HEAD
 * are only read. Patches and the uncommitted diff are applied afresh each time.
 */
int vn_kernel_source_checkout(const struct vn_kernel_work *w, const char *commit, const char *diff,
			      struct vn_error *err)
{
	const struct vn_recipe *r = w->r;
	_cleanup_free_ char *dotgit = vn_xasprintf("%s/.git", w->src), *tmp = vn_xasprintf("%s.tmp", w->src);
	_cleanup_free_ char *touched = vn_xasprintf("%s/touched", w->dir),
			    *phash = vn_xasprintf("%s/patches.sha256", w->dir);
	const char *clone[] = {"clone", "-q", "--shared", "--no-checkout", "--", r->tree_path, tmp, NULL};
	const char *co[] = {"-c", "advice.detachedHead=false", "checkout", "-q", "-f", "--detach", commit, NULL};
	const char *clean[] = {"clean", "-q", "-f", "-d", "-x", NULL};
	struct vn_spawn_opts so = {.log_fd = w->log_fd};
	int rc;

	/* The last build's patches are undone by the checkout: forget them first, so they are applied again. */
	unlink(touched);
	unlink(phash);
	/*
	 * A clone whose checkout fails (the tree was made anew, or gc pruned what
	 * the clone's index named) is made again, once: every file is new to make
	 * then, so that build is a full one.
	 */
	for (int attempt = 0;; attempt++) {
		if (access(dotgit, F_OK) != 0) {
			vn_rm_rf(w->src);
			vn_rm_rf(tmp);
			vn_kernel_say(w, "extract", "clone sharing the tree's objects");
			if ((rc = vn_git_run(clone, VN_GIT_TREE, &so, err)) != 0 || rename(tmp, w->src) < 0) {
				vn_rm_rf(tmp);
				return vn_infra_error(err, rc < 0 ? rc : -EIO,
						      "git clone --shared %s failed (see the build log)", r->tree_path);
			}
		}
		vn_kernel_say(w, "extract", commit);
		if ((rc = git_logged(w, co, VN_GIT_TREE, err)) == 0)
			rc = git_logged(w, clean, VN_GIT_TREE, err);
		if (rc == 0)
			break;
		if (rc < 0 || attempt > 0)
			return vn_infra_error(err, rc < 0 ? rc : -EIO,
					      "checking out %.12s in %s failed (see the build log)", commit, w->src);
		vn_rm_rf(w->src);
	}
	/* The checkout's uncommitted changes are part of its identity, so part of the tree. */
	if (diff && *diff) {
		_cleanup_free_ char *dp = vn_xasprintf("%s/dirty.patch", w->dir);
		const char *ap[] = {"apply", "--binary", "--", dp, NULL};
		if ((rc = vn_file_write(dp, diff)) < 0)
			return vn_infra_error(err, rc, "%s: %s", dp, strerror(-rc));
		if ((rc = git_logged(w, ap, VN_GIT_READ, err)) != 0)
			return vn_infra_error(err, rc < 0 ? rc : -EIO, "applying %s's uncommitted changes failed",
					      r->tree_path);
	}
	return 0;
}
