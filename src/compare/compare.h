/*
 * vnuma compare: result groups and run directories (docs/results.md) read
 * into one table, kernel-test-robot style. One row per metric name, one
 * column pair per variant: each variant's mean and stddev over its complete
 * runs, and its change against the base (the first variant) with Welch's
 * t-test (compare/stats.h). Library code: errors go into struct vn_error
 * (bad input is VN_ERR_INPUT naming the file and the JSON path).
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>

#include "report/comparison.h"
#include "util/cleanup.h"
#include "util/error.h"

/* A change is significant when Welch's two-sided p-value is below this. */
#define VN_COMPARE_ALPHA 0.05
/* The detectable change is the one found significant this often (compare/stats.h, vn_stats_detectable). */
#define VN_COMPARE_POWER 0.8

struct vn_compare_opts {
	bool force; /* compare results of different topologies, accelerators, architectures or times */
};

/*
 * Reads dirs[0..n): each a result group (DIR/group.json) or a run directory
 * (DIR/result.json). One group alone, or two or more of either; each adds
 * its variants in order, and the first one is the base. A run directory is
 * a variant of one run, named by its "variant" (its directory's name when
 * that is taken already). Runs whose result.json says "complete": false,
 * and runs of a group that never wrote one, are skipped.
 */
int vn_compare_load(const char *const *dirs, size_t n, const struct vn_compare_opts *o, struct vn_compare **out,
		    struct vn_error *err);
void vn_compare_free(struct vn_compare *c);

VN_DEFINE_CLEANUP(struct vn_compare *, vn_compare_free);
#define _cleanup_compare_ _cleanup_(vn_compare_freep)

enum {
	VN_COMPARE_ALL = 1 << 0, /* also the rows where every variant's mean equals the base's */
};

/* The table as text (vnuma compare): a header, the rows, a legend. Caller frees. */
char *vn_compare_format_text(const struct vn_compare *c, unsigned flags);
/*
 * Whether some of c's runs ran in virtual time ("virtual", or mixed and
 * forced): their rates count instructions, and placement costs little or nothing there.
 */
bool vn_compare_virtual_time(const struct vn_compare *c);
/*
 * Whether some real-time run had more vCPUs than its host had CPUs: once
 * more vCPUs are busy than that, they share the host's CPUs, and threads
 * stacked on one vCPU cost less than on the machine modeled.
 */
bool vn_compare_shared_cpus(const struct vn_compare *c);
/* At most this many notes come beneath a table. */
#define VN_COMPARE_NOTES_MAX 4
/*
 * What c's figures cannot show, each a sentence or two of plain text: how
 * many marked cells chance alone would give, and what virtual time or shared
 * host CPUs hide. The text table prints them beneath, and compare.json holds
 * them as "notes" for report.html to show. Fills notes[0..n) and returns n;
 * the caller frees each.
 */
size_t vn_compare_notes(const struct vn_compare *c, char *notes[VN_COMPARE_NOTES_MAX]);
/* The table as JSON (vnuma compare --json), every row. Caller frees. */
char *vn_compare_format_json(const struct vn_compare *c);

/* metric's cell for variant, or NULL when either name is unknown. */
const struct vn_compare_cell *vn_compare_find(const struct vn_compare *c, const char *metric, const char *variant);

/*
 * After a matrix: reads the result group dir and writes DIR/compare.txt and
 * DIR/compare.json (each atomically). *out, when not NULL, gets the table
 * for the group assertions (vn_compare_find).
 */
int vn_compare_write_group(const char *dir, struct vn_compare **out, struct vn_error *err);

/*
 * DIR's report.html (out_path NULL: DIR/report.html): a run's page, or a
 * result group's drawn with its comparison: cmp (a matrix's, just made),
 * else compared here as vn_compare_write_group does. A group that cannot be
 * compared gets its page with why in place of the table.
 */
int vn_compare_html_write(const char *dir, const char *out_path, const struct vn_compare *cmp, struct vn_error *err);
/*
 * As vn_compare_html_write for dirs[0..n); n > 1: the slices of one matrix
 * (vnuma run --shard) drawn as its one group to out_path (required), merged
 * and refused as vn_compare_load merges and refuses them.
 */
int vn_compare_html_write_dirs(const char *const *dirs, size_t n, const char *out_path, const struct vn_compare *cmp,
			       struct vn_error *err);
