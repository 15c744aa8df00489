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

#include "util/cleanup.h"
#include "util/error.h"

/* A change is significant when Welch's two-sided p-value is below this. */
#define VN_COMPARE_ALPHA 0.05
/* The detectable change is the one found significant this often (compare/stats.h, vn_stats_detectable). */
#define VN_COMPARE_POWER 0.8

/* One variant: what ran, and how many of its runs count. */
struct vn_compare_variant {
	char *name;
	char *source;      /* the group or run directory it came from, as given */
	char *kernel;      /* how the kernel was asked for (group.json "kernel", result.json kernel.recipe), or NULL */
	char *release;     /* kernel.release of its first complete run, or NULL */
	char *cmdline;     /* kernel.cmdline of its first complete run, or NULL */
	char *sysctls;     /* "key=value key=value", or NULL */
	unsigned runs;     /* the runs the input lists */
	unsigned complete; /* of those, the ones with "complete": true: only these count */
};

/* One metric of one variant. */
struct vn_compare_cell {
	unsigned n; /* complete runs that recorded the metric; 0: nothing below is meaningful */
	double mean, stddev;
	bool has_change;   /* false for the base, or when either side has n = 0 */
	double change_abs; /* mean - base mean; an infinity where that passes DBL_MAX (1e308 against -1e308) */
	bool has_pct;      /* has_change, and the base mean is not 0 */
	double change_pct; /* (mean - base mean) / |base mean| * 100; may be an infinity too */
	/*
	 * has_change, both sides have n >= 2 and finite stddevs, and the changes
	 * are finite (compare/stats.h: vn_stats_welch). A figure that is not
	 * finite is printed "-" and written null, and is never significant.
	 */
	bool has_p;
	double p_value;
	bool significant; /* has_p and p_value < VN_COMPARE_ALPHA */
	/*
	 * The noise as a figure: the smallest change against the base that this
	 * cell's and the base's n and stddev would show significant with
	 * VN_COMPARE_POWER (the base's own: against a copy of itself). Absolute,
	 * and in % of the base mean when that is not 0 (detect_pct_ok).
	 */
	bool has_detect, detect_pct_ok;
	double detect_abs, detect_pct;
};

struct vn_compare_row {
	char *metric;
	bool absolute;    /* a percentage itself (name ends in '%' or "_pct"): the table shows change_abs */
	bool significant; /* some variant's cell is */
	bool changed;     /* some variant's mean differs from the base's (or only one side has the metric) */
	struct vn_compare_cell *cells; /* one per variant, cells[0] the base */
};

struct vn_compare {
	char *scenario, *topology, *accelerator, *arch; /* distinct values joined with ", " (only --force mixes them) */
	char *time;                                     /* "real", "virtual" (or both, forced), as topology */
	/*
	 * The real-time run with the most vCPUs per host CPU, where it had more
	 * vCPUs than its host had CPUs; else both 0 (vn_compare_shared_cpus).
	 */
	unsigned shared_vcpus, shared_host_cpus;
	unsigned repeats; /* the most runs any variant lists */
	bool incomplete;  /* some group's group.json says "complete": false */
	size_t nvariants;
	struct vn_compare_variant *variants; /* variants[0] is the base */
	size_t nrows;
	struct vn_compare_row *rows; /* significant first, then the others; each by largest |change| */
};

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
