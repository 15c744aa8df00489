/* Parsers for the small textual formats the kernel and numactl use. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "util/error.h"

/* A set of CPU (or node) numbers, as a plain bitmap. */
#define VN_CPUSET_MAX 4096

struct vn_cpuset {
	uint64_t bits[VN_CPUSET_MAX / 64];
};

static inline void vn_cpuset_set(struct vn_cpuset *s, unsigned n)
{
	s->bits[n / 64] |= UINT64_C(1) << (n % 64);
}

static inline bool vn_cpuset_has(const struct vn_cpuset *s, unsigned n)
{
	return n < VN_CPUSET_MAX && (s->bits[n / 64] >> (n % 64)) & 1;
}

unsigned vn_cpuset_count(const struct vn_cpuset *s);
/* Lowest / highest member, or -1 when empty. */
int vn_cpuset_first(const struct vn_cpuset *s);
int vn_cpuset_last(const struct vn_cpuset *s);

/*
 * Parse a kernel-style list ("0-3,8,10-11"); "" is the empty set. On failure
 * err->msg names the offending piece, without file context (callers add it).
 */
int vn_cpulist_parse(const char *text, struct vn_cpuset *out, struct vn_error *err);

/* Format as a canonical list ("0-3,8"); returns a malloc'd string. */
char *vn_cpulist_format(const struct vn_cpuset *s);

/*
 * Parse a size with an optional K/M/G/T suffix (binary units, optional "iB"/"B")
 * into bytes. "0" is allowed. Rejects negatives, junk and overflow.
 */
int vn_size_parse(const char *text, uint64_t *bytes, struct vn_error *err);

/* "512M", "1G", "1536M": the largest exact unit. Writes into buf. */
const char *vn_size_format(uint64_t bytes, char *buf, size_t len);

/* Strict decimal integer in [min,max]. */
int vn_int_parse(const char *text, long min, long max, long *out, struct vn_error *err);

/*
 * The command line's numbers: one grammar per kind, and every option passes
 * its own bounds, so no value reaches a conversion it could overflow. The
 * error says what was wanted and the bounds, without the option's name
 * (callers prefix it).
 */

/*
 * A duration: a finite decimal number ("30", "0.5", "2e3"), in seconds or
 * with a unit "ms", "s", "m" or "h"; more than 0 and at most max_s seconds.
 * "inf", "nan", hex and signs are not durations.
 */
int vn_duration_parse(const char *text, double max_s, double *out_s, struct vn_error *err);

/* A parsed duration in whole milliseconds, rounded up: never 0, never cut short. */
static inline int64_t vn_duration_ms(double s)
{
	int64_t ms = (int64_t)(s * 1000);
	return ms + (ms < s * 1000);
}

/* A count: decimal digits only (no sign, space or base prefix), in [min,max]. */
int vn_count_parse(const char *text, uint64_t min, uint64_t max, uint64_t *out, struct vn_error *err);

/* A size as vn_size_parse reads it, in [min,max] bytes. */
int vn_size_parse_range(const char *text, uint64_t min, uint64_t max, uint64_t *out, struct vn_error *err);
