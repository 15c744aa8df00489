/*
 * compare/stats.h at the edges of Student's t (GSL's): tiny and huge degrees
 * of freedom, huge t, one side that never varies. test-compare.c checks the
 * ordinary cases; these are where a hand-written continued fraction and
 * library code part ways first.
 *
 * References from mpmath (python3-mpmath, 40 digits):
 *   p = mpmath.betainc(df/2, 1/2, 0, df/(df+t*t), regularized=True)
 * so they are checked to a relative error, which is what matters for the
 * tiny ones.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>

#include "compare/stats.h"

static void rel(double got, double want, double tol)
{
	if (!(fabs(got - want) <= tol * fabs(want)))
		fail_msg("got %.17g, want %.17g (relative %g)", got, want, tol);
}

static void test_tiny_df(void **state)
{
	(void)state;
	rel(vn_stats_t_pvalue(1, 0.05), 0.89656261203118335, 1e-10);
	rel(vn_stats_t_pvalue(100, 0.05), 0.71261263278203565, 1e-10);
	rel(vn_stats_t_pvalue(3, 0.5), 0.36730815598594345, 1e-10);
	rel(vn_stats_t_pvalue(40, 2.5), 0.00014195634290493383, 1e-9);
}

static void test_huge_t(void **state)
{
	(void)state;
	/* df = 1: p = 2/pi atan(1/|t|), 6.366e-11 at 1e10. */
	rel(vn_stats_t_pvalue(1e10, 1), 6.3661977236758134e-11, 1e-9);
	rel(vn_stats_t_pvalue(-1e8, 3), 2.2053155816871674e-24, 1e-9);
	/* t * t overflows: p is 0, or as near as a double gets, never NaN or negative. */
	double p = vn_stats_t_pvalue(1e200, 2);
	assert_true(p >= 0 && p < 1e-300);
	assert_true(vn_stats_t_pvalue(-INFINITY, 2) == 0);
}

static void test_huge_df(void **state)
{
	(void)state;
	/* The normal distribution's 2 sigma (0.0455), and nearly nothing to tell. */
	rel(vn_stats_t_pvalue(2, 1e6), 0.045500533851319208, 1e-9);
	rel(vn_stats_t_pvalue(0.001, 1e9), 0.99920211557237735, 1e-12);
	rel(vn_stats_t_pvalue(1e-8, 3), 0.99999999264894806, 1e-14);
	assert_true(vn_stats_t_pvalue(0, 1e9) == 1);
}

static void test_one_side_constant(void **state)
{
	(void)state;
	const double a[] = {5, 5, 5}, b[] = {1, 2, 3, 4};
	struct vn_stats sa, sb;
	struct vn_welch w;

	vn_stats_summarize(a, 3, &sa);
	vn_stats_summarize(b, 4, &sb);
	/* All of the variance is b's: b's n - 1 = 3 degrees of freedom. */
	vn_stats_welch(&sa, &sb, &w);
	assert_true(w.defined);
	rel(w.t, -3.8729833462074169, 1e-14);
	rel(w.df, 3, 1e-14);
	rel(w.p, 0.030466291662170991, 1e-10);
	vn_stats_welch(&sb, &sa, &w);
	rel(w.t, 3.8729833462074169, 1e-14);
	rel(w.p, 0.030466291662170991, 1e-10);
}

/*
 * The smallest change Welch's test finds at p < 0.05 80% of the time
 * (mpmath: the Student's t quantiles at 0.975 and 0.8, times the standard
 * error): equal samples at df 8, and unequal ones at Welch's df 2.5155.
 */
static void test_detectable(void **state)
{
	(void)state;
	struct vn_stats a = {5, 10, 1}, b = {5, 12, 1};
	rel(vn_stats_detectable(&a, &b, 0.05, 0.8), 2.0206281650809057, 1e-9);
	struct vn_stats c = {3, 10, 2}, d = {6, 10, 1};
	rel(vn_stats_detectable(&c, &d, 0.05, 0.8), 5.5944870602649979, 1e-7);
	/* The unit does not matter, even next to DBL_MAX. */
	struct vn_stats hc = {3, 1e300, 2e300}, hd = {6, 1e300, 1e300};
	rel(vn_stats_detectable(&hc, &hd, 0.05, 0.8), 5.5944870602649979e300, 1e-7);
	/* Repeats that never vary show any difference; one repeat shows nothing. */
	struct vn_stats z = {4, 3, 0}, one = {1, 3, 0};
	assert_true(vn_stats_detectable(&z, &z, 0.05, 0.8) == 0);
	assert_true(isnan(vn_stats_detectable(&z, &one, 0.05, 0.8)));
	/* More repeats, finer resolution. */
	struct vn_stats a20 = {20, 10, 1}, b20 = {20, 12, 1};
	assert_true(vn_stats_detectable(&a20, &b20, 0.05, 0.8) < vn_stats_detectable(&a, &b, 0.05, 0.8) / 1.9);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_tiny_df),    cmocka_unit_test(test_huge_t),
		cmocka_unit_test(test_huge_df),    cmocka_unit_test(test_one_side_constant),
		cmocka_unit_test(test_detectable),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
