/*
 * One of N slices of a matrix's runs (vnuma run --shard I/N), as test
 * runners shard: CI's parallel jobs each run one slice into a group of its
 * own, and vnuma compare merges the groups (docs/ci.md).
 */
#pragma once

#include "util/error.h"

#define VN_SHARD_MAX 10000 /* slices: more CI jobs than any matrix has runs */

struct vn_shard {
	unsigned index, count; /* index from 1; count 0: the whole matrix */
};

/* "I/N" with 1 <= I <= N; an input error naming the value and what it should be. */
int vn_shard_parse(const char *text, struct vn_shard *out, struct vn_error *err);
/*
 * The runs [*first, *end) of total that slice sh takes: consecutive in the
 * matrix's interleaved order (so a slice holds whole rounds A B A B where it
 * can, and its worker's drift falls on every variant alike), the slices'
 * sizes differing by at most one.
 */
void vn_shard_slice(const struct vn_shard *sh, unsigned total, unsigned *first, unsigned *end);
