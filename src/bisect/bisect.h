/*
 * Bisecting a kernel by a scenario: the first commit between a good and a
 * bad one where the scenario's verdict (or a metric) changes. One commit is
 * judged by building it (kernel/, one shared build tree) and running the
 * scenario on it (scenario/) as often as its policy asks. Every build, run
 * and decision is appended to OUT/bisect.log as it happens, so the same
 * command continues after Ctrl-C or a crash, and --replay redoes a log.
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>

#include "bisect/judge.h"
#include "util/cleanup.h"
#include "util/error.h"

#define VN_BISECT_HASH_MAX    64 /* a commit hash: 40 hex digits, 64 in a SHA-256 repository */
#define VN_BISECT_COMMITS_MAX 100000

struct vn_bisect_commit {
	char hash[VN_BISECT_HASH_MAX + 1];
	char *subject;
	enum vn_bisect_mark mark;
	char *why; /* how the mark was decided, for the table and the log */
	bool build_failed;
	char *kernel; /* the built image */
	double build_s;
	size_t nruns;
	struct vn_bisect_run *runs;
};

/* ---- the bisection (bisect.c) ---- */

/* One run on kernel into dir (absolute, new), recorded as variant's repeat: the commit's short hash
 * and its run number, so that the commits' runs form a result group. */
struct vn_bisect_run_in {
	const char *kernel, *dir, *variant;
	unsigned repeat;
};
/* How it went: exit 0 or 1, the metric (NaN: none), and what its result.json says of the machine. */
struct vn_bisect_run_out {
	int exit;
	double value;
	char *topology, *accel; /* malloc'd, or NULL */
};

/* What judging a commit needs done: building it and running the scenario on it (backend.c: the real ones). */
struct vn_bisect_ops {
	/*
	 * Build commit into *kernel (a kernel spec run accepts). A negative
	 * errno with err: VN_ERR_INPUT when the commit does not build (it is
	 * skipped), anything else stops the bisection.
	 */
	int (*build)(void *data, const char *commit, char **kernel, double *build_s, struct vn_error *err);
	/* One run of the scenario (struct vn_bisect_run_in/_out below): 0, or a negative errno when it could
	 * not run (counted as exit 3, err says why). */
	int (*run)(void *data, const struct vn_bisect_run_in *in, struct vn_bisect_run_out *out, struct vn_error *err);
	/* A progress line (no newline); may be NULL. */
	void (*say)(void *data, const char *line);
	void *data;
};

struct vn_bisect_opts {
	const char *repo; /* the user's git tree: only read */
	const char *good, *bad;
	const char *outdir; /* OUT: bisect.log, commits/HASH/run-N/, bisect.txt, bisect.json, report.html */
	const char *replay; /* a bisect.log to start from (its marks stand); NULL: OUT's own, if any */
	struct vn_bisect_policy policy;
	/*
	 * Recorded in the log's start record (the files by path and content
	 * hash), so that resuming with other ones is refused: another scenario,
	 * recipe, policy, --quick, --virtual-time or arch judges differently.
	 */
	const char *scenario, *recipe; /* files: read for their hashes */
	bool quick, virtual_time;
	const char *arch;
	/* For OUT/commits/group.json: the scenario's name, as its runs' result.json say it. */
	const char *scenario_name;
};

enum vn_bisect_outcome {
	VN_BISECT_FOUND,         /* first_bad */
	VN_BISECT_NO_DIFFERENCE, /* the endpoints judge alike (or the good one bad) */
	VN_BISECT_NOT_ANCESTOR,  /* good is not an ancestor of bad */
	VN_BISECT_AMBIGUOUS,     /* skipped commits leave several candidates */
};

struct vn_bisect_result {
	enum vn_bisect_outcome outcome;
	char *message; /* one line saying the outcome */
	char first_bad[VN_BISECT_HASH_MAX + 1];
	char *first_bad_subject;
	size_t ncandidates; /* ambiguous: the first bad is one of these */
	char **candidates;
	/* Every commit of good..bad and good itself, in commit order (oldest first). */
	size_t ncommits;
	struct vn_bisect_commit *commits;
	unsigned steps; /* commits judged, the endpoints included */
};

/*
 * Bisect: 0 with res filled, or a negative errno: bad input (VN_ERR_INPUT:
 * unknown revisions, an OUT holding another bisection's log, a symlink
 * planted at OUT/bisect.log or OUT/commits, a bad log), or infrastructure
 * (OUT locked by a bisection running in it, -EBUSY; a build that fails
 * other than by not compiling; Ctrl-C). A refusal before the log is open
 * writes nothing into OUT and leaves res empty.
 * Writes OUT/bisect.txt, bisect.json and report.html at the end, and
 * OUT/commits/ as a result group (group.json, compare.txt/json, report.html:
 * a variant per tested commit, the good endpoint the base).
 */
int vn_bisect(const struct vn_bisect_opts *o, const struct vn_bisect_ops *ops, struct vn_bisect_result *res,
	      struct vn_error *err);

/* The table of res->commits, one line each (what bisect.txt holds, and the CLI prints). */
char *vn_bisect_format_table(const struct vn_bisect_result *res, const struct vn_bisect_policy *p);

void vn_bisect_result_clear(struct vn_bisect_result *res);
