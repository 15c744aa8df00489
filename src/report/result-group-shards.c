/*
 * The slices of one matrix (vnuma run --shard I/N), each a group of its own,
 * judged as a whole before they are merged: one matrix, every slice once.
 */
#include <stdlib.h>
#include <string.h>

#include "report/result-group.h"
#include "util/alloc.h"
#include "util/cleanup.h"
#include "util/strbuf.h"

/* "out/1 (1/3), out/2 (2/3)": what was given, for a message about what was not. */
static char *given(const char *const *dirs, size_t n, const struct vn_result_group *g)
{
	_cleanup_strbuf_ struct vn_strbuf b = VN_STRBUF_INIT;

	for (size_t i = 0; i < n; i++)
		vn_strbuf_printf(&b, "%s%s (%u/%u)", i ? ", " : "", dirs[i], g[i].shard.index, g[i].shard.count);
	return vn_strbuf_steal(&b);
}

static int same_matrix(const char *const *dirs, size_t n, const struct vn_result_group *g, struct vn_error *err)
{
	const struct vn_result_group_shard *a = &g[0].shard;

	for (size_t i = 1; i < n; i++) {
		const struct vn_result_group_shard *b = &g[i].shard;
		if (!a->count && !b->count)
			continue;
		if (!a->count || !b->count)
			return vn_input_error(err,
					      "%s is a slice of a matrix (vnuma run --shard) and %s is not: merge "
					      "the slices of one matrix alone",
					      a->count ? dirs[0] : dirs[i], a->count ? dirs[i] : dirs[0]);
		if (strcmp(a->matrix, b->matrix) != 0 || a->count != b->count || a->runs != b->runs)
			return vn_input_error(err,
					      "%s (slice %u/%u) and %s (slice %u/%u) are slices of different "
					      "matrices (scenario, variants, repeats or run options differ)",
					      dirs[0], a->index, a->count, dirs[i], b->index, b->count);
	}
	return 0;
}

int vn_result_group_shards(const char *const *dirs, size_t n, const struct vn_result_group *g, size_t *order,
			   struct vn_error *err)
{
	unsigned count = n ? g[0].shard.count : 0, runs = 0;
	int rc;

	if ((rc = same_matrix(dirs, n, g, err)) < 0 || !count)
		return rc;
	_cleanup_free_ size_t *at = vn_xcalloc(count, sizeof(*at)); /* slice index - 1 to its input + 1 */
	for (size_t i = 0; i < n; i++) {
		unsigned k = g[i].shard.index - 1;
		if (at[k])
			return vn_input_error(err, "%s and %s are both slice %u/%u of one matrix", dirs[at[k] - 1],
					      dirs[i], k + 1, count);
		at[k] = i + 1;
		runs += g[i].nruns;
	}
	for (unsigned k = 0; k < count; k++)
		if (!at[k]) {
			_cleanup_free_ char *list = given(dirs, n, g);
			return vn_input_error(err, "slice %u/%u of the matrix is missing; given: %s", k + 1, count,
					      list);
		}
	if (runs != g[0].shard.runs)
		return vn_input_error(err, "%s...: the slices list %u runs, the matrix has %u", dirs[0], runs,
				      g[0].shard.runs);
	for (unsigned k = 0; k < count; k++)
		order[k] = at[k] - 1;
	return 1;
}
