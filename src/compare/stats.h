/*
 * The statistics behind vnuma compare: mean, sample standard deviation and
 * Welch's unequal-variances t-test, two-sided. Pure functions of their
 * arguments. Values near +-DBL_MAX are summed in units of the largest, so
 * the only infinity here is a stddev truly beyond DBL_MAX; nothing returns
 * NaN. The distributions are GSL's (gsl_cdf_beta_P, gsl_cdf_tdist_Q); the
 * rest is arithmetic.
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>

/* A sample summarized. stddev is the sample one (n - 1); 0 when n < 2. */
struct vn_stats {
	size_t n;
	double mean, stddev;
};

void vn_stats_summarize(const double *x, size_t n, struct vn_stats *out);

/* Welch's t-test of b against a. */
struct vn_welch {
	bool defined; /* false when either sample has n < 2 or an infinite stddev: no variance, no test */
	double t;     /* (b.mean - a.mean) / sqrt(a.var/a.n + b.var/b.n); 0 when both variances are 0 */
	double df;    /* Welch-Satterthwaite degrees of freedom; 0 when both variances are 0 */
	double p;     /* two-sided p-value in [0, 1] */
};

/*
 * Both variances 0 (every repeat gave the same number, as counters often
 * do): no t exists; equal means give p = 1, different means p = 0, since
 * repeats that never vary differ for sure if they differ at all.
 */
void vn_stats_welch(const struct vn_stats *a, const struct vn_stats *b, struct vn_welch *out);

/*
 * The smallest difference of means Welch's test of samples like a and b
 * would find significant at two-sided alpha with the given power (0.8: 80%
 * of the time), in the unit of the samples: (t[1 - alpha/2] + t[power]) *
 * sqrt(a.var/a.n + b.var/b.n), Student's t at the Welch-Satterthwaite df
 * of these variances (the usual approximation of the noncentral t). 0 when
 * both variances are 0 (any difference is certain); NaN when either sample
 * has n < 2 or a spread that is not finite.
 */
double vn_stats_detectable(const struct vn_stats *a, const struct vn_stats *b, double alpha, double power);

/* The regularized incomplete beta function I_x(a, b), a, b > 0, x clamped to [0, 1]. */
double vn_stats_betainc(double a, double b, double x);

/* P(|T| >= |t|) for Student's t with df > 0 degrees of freedom (1 when df is not > 0). */
double vn_stats_t_pvalue(double t, double df);
