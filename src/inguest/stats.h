/* Statistics over samples (stats.c). */
#pragma once

#include <stddef.h>

struct ig_json;

struct ig_stats {
	double min, max, avg, p50, p95, stddev;
	size_t n;
};
/* Sorts v in place. */
void ig_stats_compute(double *v, size_t n, struct ig_stats *s);
void ig_json_stats(struct ig_json *j, const char *key, const struct ig_stats *s);
