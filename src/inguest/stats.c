/* Summary statistics of a series, and their JSON object. */
#include "inguest/json.h"
#include "inguest/stats.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

void ig_stats_compute(double *v, size_t n, struct ig_stats *s)
{
	double sum = 0, sq = 0;

	memset(s, 0, sizeof(*s));
	s->n = n;
	if (!n) {
		s->min = s->max = s->avg = s->p50 = s->p95 = s->stddev = NAN;
		return;
	}
	qsort(v, n, sizeof(*v), cmp_double);
	for (size_t i = 0; i < n; i++)
		sum += v[i];
	s->avg = sum / (double)n;
	for (size_t i = 0; i < n; i++)
		sq += (v[i] - s->avg) * (v[i] - s->avg);
	s->stddev = n > 1 ? sqrt(sq / (double)(n - 1)) : 0;
	s->min = v[0];
	s->max = v[n - 1];
	s->p50 = v[(n - 1) / 2];
	s->p95 = v[(size_t)((double)(n - 1) * 0.95)];
}

void ig_json_stats(struct ig_json *j, const char *key, const struct ig_stats *s)
{
	ig_json_obj_begin(j, key);
	ig_json_uint(j, "n", s->n);
	ig_json_double(j, "min", s->min);
	ig_json_double(j, "avg", s->avg);
	ig_json_double(j, "p50", s->p50);
	ig_json_double(j, "p95", s->p95);
	ig_json_double(j, "max", s->max);
	ig_json_double(j, "stddev", s->stddev);
	ig_json_obj_end(j);
}
