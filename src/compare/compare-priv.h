/* Between load.c, which reads the runs, and table.c, which makes the rows. */
#pragma once

#include <stddef.h>

#include "compare/compare.h"

/* One metric value of one complete run. */
struct vn_compare_obs {
	char *metric;
	size_t variant;
	double value;
};

/* c's rows from every value read (sorted in place; their metric strings move into the rows or are freed). */
void vn_compare_rows_build(struct vn_compare *c, struct vn_compare_obs *obs, size_t nobs);
