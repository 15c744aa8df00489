/*
 * git, read-only: revisions to hashes, ancestry, the range in commit order,
 * and which commit halves what is left (rev-list --bisect-all, git's own
 * choice, so merges are handled as git bisect handles them).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bisect/bisect-priv.h"
#include "util/alloc.h"
#include "util/cleanup.h"
#include "util/git.h"
#include "util/strbuf.h"

bool vn_bisect_hash_ok(const char *s)
{
	return vn_git_hash_ok(s);
}

static int git_capture(const char *const *args, struct vn_strbuf *out, struct vn_error *err)
{
	struct vn_spawn_opts so = {.log_fd = -1, .capture = out};
	return vn_git_run(args, VN_GIT_READ, &so, err);
}

int vn_bisect_git_resolve(const char *repo, const char *rev, char hash[VN_BISECT_HASH_MAX + 1], struct vn_error *err)
{
	_cleanup_strbuf_ struct vn_strbuf out = VN_STRBUF_INIT;
	_cleanup_free_ char *spec = vn_xasprintf("%s^{commit}", rev);
	const char *argv[] = {"-C", repo, "rev-parse", "--verify", "-q", "--end-of-options", spec, NULL};
	int rc = git_capture(argv, &out, err);

	if (rc < 0)
		return rc;
	if (rc > 0 && out.s && strstr(out.s, "not a git repository"))
		return vn_input_error(err, "%s: not a git tree (--repo names a kernel's git checkout)", repo);
	if (rc > 0 || !out.s)
		return vn_input_error(err, "%s: no commit %s in this git tree", repo, rev);
	out.s[strcspn(out.s, "\n")] = '\0';
	if (!vn_bisect_hash_ok(out.s))
		return vn_infra_error(err, -EINVAL, "%s: git rev-parse %s gave no commit hash", repo, rev);
	snprintf(hash, VN_BISECT_HASH_MAX + 1, "%s", out.s);
	return 0;
}

int vn_bisect_git_is_ancestor(const char *repo, const char *a, const char *b, struct vn_error *err)
{
	const char *argv[] = {"-C", repo, "merge-base", "--is-ancestor", a, b, NULL};
	int rc = git_capture(argv, NULL, err);
	if (rc < 0)
		return rc;
	if (rc > 1)
		return vn_infra_error(err, -EIO, "%s: git merge-base --is-ancestor failed (exit %d)", repo, rc);
	return rc == 0;
}

int vn_bisect_git_range(const char *repo, const char *good, const char *bad, struct vn_bisect_commit **commits,
			size_t *n, struct vn_error *err)
{
	_cleanup_strbuf_ struct vn_strbuf out = VN_STRBUF_INIT;
	_cleanup_free_ char *range = vn_xasprintf("%s..%s", good, bad);
	const char *a1[] = {"-C", repo, "log", "-1", "--format=%H%x09%s", good, NULL};
	const char *a2[] = {"-C", repo, "log", "--topo-order", "--reverse", "--format=%H%x09%s", range, NULL};
	struct vn_bisect_commit *v = NULL;
	size_t k = 0;
	int rc;

	*commits = NULL;
	*n = 0;
	if ((rc = git_capture(a1, &out, err)) < 0 || (rc == 0 && (rc = git_capture(a2, &out, err)) < 0))
		return rc;
	if (rc > 0)
		return vn_infra_error(err, -EIO, "%s: git log %s failed (exit %d)", repo, range, rc);
	for (char *save = NULL, *l = strtok_r(out.s, "\n", &save); l; l = strtok_r(NULL, "\n", &save)) {
		char *tab = strchr(l, '\t');
		if (!tab)
			continue;
		*tab = '\0';
		if (!vn_bisect_hash_ok(l))
			continue;
		if (k == VN_BISECT_COMMITS_MAX) {
			vn_bisect_commits_free(v, k);
			return vn_input_error(err, "%s: %s holds more than %d commits: bisect a shorter range", repo,
					      range, VN_BISECT_COMMITS_MAX);
		}
		v = vn_xreallocarray(v, k + 1, sizeof(*v));
		v[k] = (struct vn_bisect_commit){0};
		snprintf(v[k].hash, sizeof(v[k].hash), "%s", l);
		/* A subject is anyone's text (an upstream tree's): a line's worth, no terminal escapes. */
		v[k].subject = vn_text_dup(tab + 1, 200, 0);
		k++;
	}
	*commits = v;
	*n = k;
	return 0;
}

int vn_bisect_git_candidates(const char *repo, const char *bad, char *const *goods, size_t ngoods, char ***hashes,
			     size_t *n, struct vn_error *err)
{
	_cleanup_strbuf_ struct vn_strbuf out = VN_STRBUF_INIT;
	const char **argv = vn_xcalloc(ngoods + 7, sizeof(*argv));
	char **nots = vn_xcalloc(ngoods + 1, sizeof(*nots));
	size_t a = 0, k = 0;
	char **v = NULL;
	int rc;

	argv[a++] = "-C", argv[a++] = repo, argv[a++] = "rev-list", argv[a++] = "--bisect-all";
	argv[a++] = bad;
	for (size_t i = 0; i < ngoods; i++)
		argv[a++] = nots[i] = vn_xasprintf("^%s", goods[i]);
	argv[a] = NULL;
	rc = git_capture(argv, &out, err);
	vn_strv_free_n(nots, ngoods);
	free(argv);
	if (rc < 0)
		return rc;
	if (rc > 0)
		return vn_infra_error(err, -EIO, "%s: git rev-list --bisect-all failed (exit %d)", repo, rc);
	/* No output leaves out.s NULL, which strtok_r takes for "go on" with a save pointer never set. */
	for (char *save = NULL, *l = out.s ? strtok_r(out.s, "\n", &save) : NULL; l; l = strtok_r(NULL, "\n", &save)) {
		l[strcspn(l, " ")] = '\0';
		if (!vn_bisect_hash_ok(l))
			continue;
		v = vn_xreallocarray(v, k + 2, sizeof(*v));
		v[k++] = vn_xstrdup(l);
		v[k] = NULL;
	}
	*hashes = v;
	*n = k;
	return 0;
}
