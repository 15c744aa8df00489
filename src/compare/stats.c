#include "compare/stats.h"

#include <math.h>

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
}

/*
 * The continued fraction of DLMF 8.17.22 for I_x(a, b) without its prefactor,
 *   1 / (1 + d1 / (1 + d2 / (1 + ...))),
 *   d(2m+1) = -(a + m)(a + b + m) x / ((a + 2m)(a + 2m + 1)),
 *   d(2m)   = m (b - m) x / ((a + 2m - 1)(a + 2m)),
 * evaluated forwards by the modified Lentz method (Thompson and Barnett,
 * J. Comput. Phys. 64, 1986), which needs no guess of how many terms. It
 * converges fast for x < (a + 1) / (a + b + 2); the caller makes sure of that.
 */
static double betainc_cf(double a, double b, double x)
{
	const double tiny = 1e-300, eps = 1e-15;
	double f = tiny, c = tiny, d = 0;

	for (int i = 0; i < 1000; i++) {
		double num;
		if (i == 0) {
			num = 1;
		} else if (i % 2) {
			double m = (i - 1) / 2;
			num = -(a + m) * (a + b + m) * x / ((a + 2 * m) * (a + 2 * m + 1));
		} else {
			double m = i / 2;
			num = m * (b - m) * x / ((a + 2 * m - 1) * (a + 2 * m));
		}
		d = 1 + num * d;
		if (fabs(d) < tiny)
			d = tiny;
		d = 1 / d;
		c = 1 + num / c;
		if (fabs(c) < tiny)
			c = tiny;
		f *= c * d;
		if (fabs(c * d - 1) < eps)
			break;
	}
	return f;
}

double vn_stats_betainc(double a, double b, double x)
{
	if (!(x > 0))
		return 0;
	if (x >= 1)
		return 1;
	/* x^a (1-x)^b / B(a, b), in logarithms so that large a, b do not overflow. */
	double front = exp(a * log(x) + b * log1p(-x) - (lgamma(a) + lgamma(b) - lgamma(a + b)));
	/* I_x(a, b) = 1 - I_(1-x)(b, a): evaluate the side where the fraction converges. */
	if (x < (a + 1) / (a + b + 2))
		return fmin(1, front * betainc_cf(a, b, x) / a);
	return fmax(0, 1 - front * betainc_cf(b, a, 1 - x) / b);
}

double vn_stats_t_pvalue(double t, double df)
{
	/* P(|T| >= t) = I_(df / (df + t^2))(df / 2, 1 / 2). */
	if (!isfinite(t))
		return 0;
	return vn_stats_betainc(df / 2, 0.5, df / (df + t * t));
}

void vn_stats_welch(const struct vn_stats *a, const struct vn_stats *b, struct vn_welch *out)
{
	*out = (struct vn_welch){0};
	if (a->n < 2 || b->n < 2)
		return;
	out->defined = true;
	double va = a->stddev * a->stddev / (double)a->n, vb = b->stddev * b->stddev / (double)b->n;
	double se2 = va + vb;
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
