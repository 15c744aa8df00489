/*
 * How bisect judges one commit from its runs so far (judge.c): the policy,
 * the runs, and the rules as pure functions, so every rule is tested
 * without a build (docs/bisect.md).
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>

#include "compare/stats.h"

#define VN_BISECT_RUNS_MAX 50 /* runs of one commit (--flaky, --repeats, their caps) */

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

/* runs by exit code: [0] passed (0), [1] failed (1), [2] broken (anything else). */
void vn_bisect_runs_count(const struct vn_bisect_run *runs, size_t n, unsigned counts[3]);

/* Whether a run's value is one of the metric's figures (what vn_bisect_runs_stats summarizes). */
bool vn_bisect_run_counts(const struct vn_bisect_run *r);
