#include "compare/stats.h"

#include <gsl/gsl_cdf.h>
#include <gsl/gsl_errno.h>
#include <math.h>

/*
 * Values near +-DBL_MAX overflow the sums above (1e308 - -1e308): the same
 * figures in units of the largest |x|, where nothing exceeds 1 or, for the
 * squares, n. The mean is then always finite; a spread truly beyond DBL_MAX
 * stays an infinity, which the table shows as "-".
 */
static void summarize_scaled(const double *x, size_t n, struct vn_stats *out)
{
	double s = 0, sum = 0, ss = 0;

	for (size_t i = 0; i < n; i++)
		s = fmax(s, fabs(x[i]));
	for (size_t i = 0; i < n; i++)
		sum += x[i] / s;
	double m = sum / (double)n;
	for (size_t i = 0; i < n; i++)
		ss += (x[i] / s - m) * (x[i] / s - m);
	out->mean = m * s;
	out->stddev = sqrt(ss / (double)(n - 1)) * s;
}

void vn_stats_summarize(const double *x, size_t n, struct vn_stats *out)
{
	double sum = 0, ss = 0;

	*out = (struct vn_stats){.n = n};
	if (!n)
		return;
	/*
	 * Shifted by the first value, so that repeats which all gave the same
	 * number have exactly that mean and a variance of exactly 0 (a plain
	 * sum of 0.1 three times, divided by 3, is not 0.1).
	 */
	for (size_t i = 0; i < n; i++)
		sum += x[i] - x[0];
	double d = sum / (double)n;
	out->mean = x[0] + d;
	if (n < 2)
		return;
	for (size_t i = 0; i < n; i++)
		ss += (x[i] - x[0] - d) * (x[i] - x[0] - d);
	out->stddev = sqrt(ss / (double)(n - 1));
	if (!isfinite(out->mean) || !isfinite(out->stddev))
		summarize_scaled(x, n, out);
}

/*
 * GSL reports a domain error or a series that failed to converge through
 * its error handler, which by default prints and aborts; library code does
 * neither, so it is turned off and a NaN result is mapped below. Idempotent,
 * so calling it on every entry needs no once-only guard.
 */
static void gsl_quiet(void)
{
	gsl_set_error_handler_off();
}

double vn_stats_betainc(double a, double b, double x)
{
	if (!(x > 0))
		return 0;
	if (x >= 1)
		return 1;
	gsl_quiet();
	double p = gsl_cdf_beta_P(x, a, b);
	return isnan(p) ? 0 : fmin(1, fmax(0, p));
}

double vn_stats_t_pvalue(double t, double df)
{
	if (!isfinite(t))
		return 0;
	/* No degrees of freedom, no distribution: no evidence of a difference. */
	if (!(df > 0))
		return 1;
	gsl_quiet();
	/* Two-sided: both tails, from the upper one of |t| (no 1 - P cancelling for large t). */
	double p = 2 * gsl_cdf_tdist_Q(fabs(t), df);
	return isnan(p) ? 1 : fmin(1, fmax(0, p));
}

void vn_stats_welch(const struct vn_stats *a, const struct vn_stats *b, struct vn_welch *out)
{
	*out = (struct vn_welch){0};
	/* A spread beyond DBL_MAX (vn_stats_summarize) is no figure to test with. */
	if (a->n < 2 || b->n < 2 || !isfinite(a->stddev) || !isfinite(b->stddev))
		return;
	out->defined = true;
	double va = a->stddev * a->stddev / (double)a->n, vb = b->stddev * b->stddev / (double)b->n;
	double se2 = va + vb;
	if (!isfinite(se2) || !isfinite(b->mean - a->mean)) {
		/* t and df do not change with the unit: in units of the largest figure nothing overflows. */
		double s = fmax(fmax(fabs(a->mean), fabs(b->mean)), fmax(a->stddev, b->stddev));
		struct vn_stats as = {a->n, a->mean / s, a->stddev / s}, bs = {b->n, b->mean / s, b->stddev / s};
		vn_stats_welch(&as, &bs, out);
		return;
	}
	if (se2 == 0) {
		out->p = a->mean == b->mean ? 1 : 0;
		return;
	}
	out->t = (b->mean - a->mean) / sqrt(se2);
	double q = va * va / (double)(a->n - 1) + vb * vb / (double)(b->n - 1);
	/* Variances so small that their squares underflow: the pooled df, the most Welch's can be. */
	out->df = q > 0 ? se2 * se2 / q : (double)(a->n + b->n - 2);
	if (!isfinite(out->t) || !isfinite(out->df)) {
		out->t = out->df = 0;
		out->p = a->mean == b->mean ? 1 : 0;
		return;
	}
	out->p = vn_stats_t_pvalue(out->t, out->df);
}

double vn_stats_detectable(const struct vn_stats *a, const struct vn_stats *b, double alpha, double power)
{
	if (a->n < 2 || b->n < 2 || !isfinite(a->stddev) || !isfinite(b->stddev))
		return NAN;
	/* In units of the larger spread, so that squaring near DBL_MAX cannot overflow. */
	double s = fmax(a->stddev, b->stddev);
	if (s == 0)
		return 0;
	double va = (a->stddev / s) * (a->stddev / s) / (double)a->n,
	       vb = (b->stddev / s) * (b->stddev / s) / (double)b->n;
	double se2 = va + vb, q = va * va / (double)(a->n - 1) + vb * vb / (double)(b->n - 1);
	double df = q > 0 ? se2 * se2 / q : (double)(a->n + b->n - 2);
	gsl_quiet();
	double t = gsl_cdf_tdist_Pinv(1 - alpha / 2, df) + gsl_cdf_tdist_Pinv(power, df);
	return isfinite(t) ? t * sqrt(se2) * s : NAN;
}
