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

#include "compare/stats.h"
#include "util/cleanup.h"
#include "util/error.h"

#define VN_BISECT_HASH_MAX    64 /* a commit hash: 40 hex digits, 64 in a SHA-256 repository */
#define VN_BISECT_RUNS_MAX    50 /* runs of one commit (--flaky, --repeats, their caps) */
#define VN_BISECT_COMMITS_MAX 100000

enum vn_bisect_mark {
	VN_BISECT_UNTESTED,
	VN_BISECT_GOOD,
	VN_BISECT_BAD,
	VN_BISECT_SKIP, /* does not build, could not run, or a split or inconclusive judgement */
};

/* "untested", "good", "bad", "skip" */
const char *vn_bisect_mark_name(enum vn_bisect_mark m);

/* How commits are judged (docs/bisect.md). */
struct vn_bisect_policy {
	const char *metric;   /* NULL: by the scenario's verdict; else by this metric of its runs */
	unsigned flaky;       /* verdict: runs per commit, the majority decides (1: one run) */
	unsigned infra_max;   /* runs that could not run (exit 3) before the commit is skipped */
	unsigned repeats;     /* metric: runs per commit before judging */
	unsigned repeats_max; /* metric: runs an inconclusive commit (or the endpoints) may get */
	double alpha;         /* metric: Welch's test's significance level */
};

/* The defaults: one run by verdict; 3 (up to 8) by metric; alpha 0.05; 2 infrastructure failures. */
void vn_bisect_policy_default(struct vn_bisect_policy *p);

/* One run of the scenario on a commit's kernel. */
struct vn_bisect_run {
	int exit;     /* 0 every assertion held, 1 one failed, 3 could not run */
	double value; /* the metric (NaN: none, or by verdict) */
	double run_s;
	char *dir; /* its run directory, relative to the output dir */
};

struct vn_bisect_commit {
	char hash[VN_BISECT_HASH_MAX + 1];
	char *subject;
	enum vn_bisect_mark mark;
	char *why; /* how the mark was decided, for the table and the log */
	bool built, build_failed;
	char *kernel; /* the built image */
	double build_s;
	size_t nruns;
	struct vn_bisect_run *runs;
};

/* ---- the decision logic (judge.c): pure functions of the runs so far ---- */

enum vn_bisect_step {
	VN_BISECT_DECIDED, /* *mark and *why are set */
	VN_BISECT_MORE,    /* run the commit once more */
};

/*
 * By verdict: exits of the runs so far (0, 1, 3). Good or bad once a
 * majority of p->flaky runs agrees; skipped on a tie, or after more than
 * p->infra_max runs that could not run.
 */
enum vn_bisect_step vn_bisect_judge_verdict(const struct vn_bisect_policy *p, const struct vn_bisect_run *runs,
					    size_t n, enum vn_bisect_mark *mark, char **why);

/*
 * By metric: the commit's values against the endpoints' (good, bad). Good
 * when Welch's test tells it from bad (p < alpha) but not from good, bad the
 * other way round; after p->repeats runs, and while neither holds more runs
 * up to p->repeats_max, then skipped as inconclusive with its figures.
 */
enum vn_bisect_step vn_bisect_judge_metric(const struct vn_bisect_policy *p, const struct vn_stats *good,
					   const struct vn_stats *bad, const struct vn_bisect_run *runs, size_t n,
					   enum vn_bisect_mark *mark, char **why);

/*
 * Whether the endpoints' values differ at alpha (Welch): VN_BISECT_DECIDED
 * with *differ, or VN_BISECT_MORE while they do not and both have fewer
 * than repeats_max values. *why says what was found.
 */
enum vn_bisect_step vn_bisect_judge_endpoints(const struct vn_bisect_policy *p, const struct vn_stats *good,
					      const struct vn_stats *bad, bool *differ, char **why);

/* The metric's values of runs (exit 0 or 1, finite) summarized. */
void vn_bisect_runs_stats(const struct vn_bisect_run *runs, size_t n, struct vn_stats *out);

/* ---- the bisection (bisect.c) ---- */

/* What judging a commit needs done: building it and running the scenario on it (backend.c: the real ones). */
struct vn_bisect_ops {
	/*
	 * Build commit into *kernel (a kernel spec run accepts). A negative
	 * errno with err: VN_ERR_INPUT when the commit does not build (it is
	 * skipped), anything else stops the bisection.
	 */
	int (*build)(void *data, const char *commit, char **kernel, double *build_s, struct vn_error *err);
	/*
	 * One run on kernel into dir (absolute, new): 0 with *exit 0 or 1 and
	 * *value the metric (NaN when the run has none), or a negative errno
	 * when it could not run (counted as exit 3, err says why).
	 */
	int (*run)(void *data, const char *kernel, const char *dir, int *exit, double *value, struct vn_error *err);
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
	/* Recorded in the log, so that resuming with other ones is refused. */
	const char *scenario, *recipe;
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
 * unknown revisions, an OUT holding another bisection, a bad log), or
 * infrastructure (a build that fails other than by not compiling, Ctrl-C).
 * Writes OUT/bisect.txt, bisect.json and report.html at the end.
 */
int vn_bisect(const struct vn_bisect_opts *o, const struct vn_bisect_ops *ops, struct vn_bisect_result *res,
	      struct vn_error *err);

/* The table of res->commits, one line each (what bisect.txt holds, and the CLI prints). */
char *vn_bisect_format_table(const struct vn_bisect_result *res, const struct vn_bisect_policy *p);

void vn_bisect_result_clear(struct vn_bisect_result *res);
