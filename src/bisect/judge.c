/*
 * The decision logic: when a commit is good, bad or skipped, from its runs
 * so far. Pure functions, so that every rule is tested without a build.
 * docs/bisect.md says why these rules and not lkp's or syzbot's.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "bisect/judge.h"
#include "util/alloc.h"

const char *vn_bisect_mark_name(enum vn_bisect_mark m)
{
	static const char *const names[] = {"untested", "good", "bad", "skip"};
	return m <= VN_BISECT_SKIP ? names[m] : "untested";
}

void vn_bisect_policy_default(struct vn_bisect_policy *p)
{
	*p = (struct vn_bisect_policy){.flaky = 1, .infra_max = 2, .repeats = 3, .repeats_max = 8, .alpha = 0.05};
}

static unsigned count_exit(const struct vn_bisect_run *runs, size_t n, int exit)
{
	unsigned k = 0;
	for (size_t i = 0; i < n; i++)
		k += runs[i].exit == exit;
	return k;
}

/* Runs that could not run: anything but a verdict. */
static unsigned count_infra(const struct vn_bisect_run *runs, size_t n)
{
	return (unsigned)n - count_exit(runs, n, 0) - count_exit(runs, n, 1);
}

enum vn_bisect_step vn_bisect_judge_verdict(const struct vn_bisect_policy *p, const struct vn_bisect_run *runs,
					    size_t n, enum vn_bisect_mark *mark, char **why)
{
	unsigned need = p->flaky ? p->flaky : 1, majority = need / 2 + 1;
	unsigned good = count_exit(runs, n, 0), bad = count_exit(runs, n, 1), infra = count_infra(runs, n);

	if (infra > p->infra_max) {
		*mark = VN_BISECT_SKIP;
		*why = vn_xasprintf("could not run %u times", infra);
		return VN_BISECT_DECIDED;
	}
	/* Stop as soon as the majority is certain: the rest could not change it. */
	if (good >= majority || bad >= majority) {
		*mark = good >= majority ? VN_BISECT_GOOD : VN_BISECT_BAD;
		*why = need == 1 ? vn_xasprintf("%s", good ? "passed" : "an assertion failed")
				 : vn_xasprintf("%u of %u runs %s", good >= majority ? good : bad, good + bad,
						good >= majority ? "passed" : "failed");
		return VN_BISECT_DECIDED;
	}
	if (good + bad >= need) {
		*mark = VN_BISECT_SKIP;
		*why = vn_xasprintf("split: %u passed, %u failed", good, bad);
		return VN_BISECT_DECIDED;
	}
	return VN_BISECT_MORE;
}

bool vn_bisect_run_counts(const struct vn_bisect_run *r)
{
	return (r->exit == 0 || r->exit == 1) && isfinite(r->value);
}

void vn_bisect_runs_count(const struct vn_bisect_run *runs, size_t n, unsigned counts[3])
{
	counts[0] = counts[1] = counts[2] = 0;
	for (size_t i = 0; i < n; i++)
		counts[runs[i].exit == 0 ? 0 : runs[i].exit == 1 ? 1 : 2]++;
}

void vn_bisect_runs_stats(const struct vn_bisect_run *runs, size_t n, struct vn_stats *out)
{
	double *v = vn_xcalloc(n ? n : 1, sizeof(*v));
	size_t k = 0;
	for (size_t i = 0; i < n; i++)
		if (vn_bisect_run_counts(&runs[i]))
			v[k++] = runs[i].value;
	vn_stats_summarize(v, k, out);
	free(v);
}

static double welch_p(const struct vn_stats *a, const struct vn_stats *b)
{
	struct vn_welch w;
	vn_stats_welch(a, b, &w);
	return w.defined ? w.p : NAN;
}

enum vn_bisect_step vn_bisect_judge_metric(const struct vn_bisect_policy *p, const struct vn_stats *good,
					   const struct vn_stats *bad, const struct vn_bisect_run *runs, size_t n,
					   enum vn_bisect_mark *mark, char **why)
{
	unsigned infra = count_infra(runs, n);
	struct vn_stats x;

	if (infra > p->infra_max) {
		*mark = VN_BISECT_SKIP;
		*why = vn_xasprintf("could not run %u times", infra);
		return VN_BISECT_DECIDED;
	}
	vn_bisect_runs_stats(runs, n, &x);
	/* A run that completed without the metric says nothing about it: as one that could not run. */
	if (n - infra > x.n && infra + (n - infra - x.n) > p->infra_max) {
		*mark = VN_BISECT_SKIP;
		*why = vn_xasprintf("%zu runs gave no %s", n - infra - x.n, p->metric ? p->metric : "metric");
		return VN_BISECT_DECIDED;
	}
	unsigned want = p->repeats < 2 ? 2 : p->repeats;
	if (x.n < want)
		return VN_BISECT_MORE;
	double pg = welch_p(&x, good), pb = welch_p(&x, bad);
	bool like_good = !(pg < p->alpha), like_bad = !(pb < p->alpha);
	if (like_good != like_bad && isfinite(pg) && isfinite(pb)) {
		*mark = like_good ? VN_BISECT_GOOD : VN_BISECT_BAD;
		*why = vn_xasprintf("%.6g ± %.3g (n=%zu) is like %s (p=%.3g), not %s (p=%.3g)", x.mean, x.stddev, x.n,
				    like_good ? "good" : "bad", like_good ? pg : pb, like_good ? "bad" : "good",
				    like_good ? pb : pg);
		return VN_BISECT_DECIDED;
	}
	unsigned cap = p->repeats_max < want ? want : p->repeats_max;
	if (x.n < cap && n < VN_BISECT_RUNS_MAX)
		return VN_BISECT_MORE;
	*mark = VN_BISECT_SKIP;
	*why = vn_xasprintf("inconclusive: %.6g ± %.3g (n=%zu) is like %s (p=%.3g vs good, %.3g vs bad)", x.mean,
			    x.stddev, x.n, like_good ? "both endpoints" : "neither endpoint", pg, pb);
	return VN_BISECT_DECIDED;
}

enum vn_bisect_step vn_bisect_judge_endpoints(const struct vn_bisect_policy *p, const struct vn_stats *good,
					      const struct vn_stats *bad, bool *differ, char **why)
{
	double pv = welch_p(good, bad);
	unsigned cap = p->repeats_max < 2 ? 2 : p->repeats_max;

	*differ = isfinite(pv) && pv < p->alpha;
	if (!*differ && (good->n < cap || bad->n < cap))
		return VN_BISECT_MORE;
	*why = vn_xasprintf("good %.6g ± %.3g (n=%zu), bad %.6g ± %.3g (n=%zu): %s (Welch p=%.3g, alpha %.3g)",
			    good->mean, good->stddev, good->n, bad->mean, bad->stddev, bad->n,
			    *differ ? "they differ" : "they do not differ", pv, p->alpha);
	return VN_BISECT_DECIDED;
}
