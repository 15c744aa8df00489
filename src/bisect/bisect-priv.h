/* The bisect room's internals: git (git.c) and the log read back (log.c), shared by bisect.c, its tests and fuzzing. */
#pragma once

#include <stdbool.h>
#include <stddef.h>

#include "bisect/bisect.h"
#include "util/error.h"

/* ---- git.c: every call reads the user's tree only ---- */

/* REV as a full commit hash; an input error naming REV when the tree has no such commit. */
int vn_bisect_git_resolve(const char *repo, const char *rev, char hash[VN_BISECT_HASH_MAX + 1], struct vn_error *err);
/* 1 when a is an ancestor of b (or b itself), 0 when not, or a negative errno. */
int vn_bisect_git_is_ancestor(const char *repo, const char *a, const char *b, struct vn_error *err);
/* good and every commit of good..bad, oldest first (topological), with subjects, into commits (*n of them). */
int vn_bisect_git_range(const char *repo, const char *good, const char *bad, struct vn_bisect_commit **commits,
			size_t *n, struct vn_error *err);
/*
 * The commits still in question, best to test first (git rev-list
 * --bisect-all): those reachable from bad and from none of goods, bad
 * itself included (none at all when a good one descends from bad).
 * *hashes is NULL-terminated, or NULL when there are none.
 */
int vn_bisect_git_candidates(const char *repo, const char *bad, char *const *goods, size_t ngoods, char ***hashes,
			     size_t *n, struct vn_error *err);

bool vn_bisect_hash_ok(const char *s);

/* Free n commits and the array. */
void vn_bisect_commits_free(struct vn_bisect_commit *v, size_t n);

/* ---- log.c: bisect.log read back ---- */

/*
 * What a start record says: the bisection a log began. bisect.c writes it;
 * a log read back must say the same in every field (a field it lacks, as in
 * an older vnuma's log, differs), since marks judged by another scenario,
 * recipe or policy mean nothing for this one.
 */
struct vn_bisect_start {
	const char *good, *bad, *metric;        /* metric NULL: by verdict */
	const char *scenario, *scenario_sha256; /* the file as given, and its content */
	const char *recipe, *recipe_sha256;     /* "" each when there is none */
	const char *arch;
	unsigned flaky, repeats, repeats_max;
	double alpha;
	bool quick, virtual_time;
};

/* What a log is applied to: the range's commits, and what its start record must say. */
struct vn_bisect_log_state {
	struct vn_bisect_commit *commits; /* borrowed: marks, runs and builds are applied to them */
	size_t ncommits;
	struct vn_bisect_start want;
	char cur_bad[VN_BISECT_HASH_MAX + 1]; /* the newest commit marked bad */
	bool started;                         /* a start record was read */
};

/*
 * Apply a log's text (len bytes, name for errors as NAME:LINE) to st. A last
 * line without its newline (a write a crash cut short) is dropped; any other
 * line that is not a JSON object of a known event is an input error.
 */
int vn_bisect_log_apply(struct vn_bisect_log_state *st, const char *text, size_t len, const char *name,
			struct vn_error *err);
