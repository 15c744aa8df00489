/*
 * A comparison of result groups as a typed value: the table compare/
 * computes (vn_compare_load, compare/compare.h) and report.html draws for a
 * group (report/html.h, vn_report_html_write_group). It is here, below
 * both, so that the page takes the comparison itself instead of reading
 * compare.json back by key.
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>

/* One variant: what ran, and how many of its runs count. */
struct vn_compare_variant {
	char *name;
	char *source;      /* the group or run directory it came from, as given */
	char *kernel;      /* how the kernel was asked for (group.json "kernel", result.json kernel.recipe), or NULL */
	char *release;     /* kernel.release of its first complete run, or NULL */
	char *cmdline;     /* kernel.cmdline of its first complete run, or NULL */
	char *sysctls;     /* "key=value key=value", or NULL */
	char *facts;       /* its first complete run's facts that compare shows (result-facts.h), or NULL */
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
