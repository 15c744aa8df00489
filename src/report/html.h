/*
 * report.html: a run directory or a result group drawn as one self-contained
 * HTML file (inline CSS, inline SVG drawn here, no script, nothing fetched),
 * so it opens anywhere, from a CI artifact or an e-mail. Every string that
 * came from a result is escaped: the guest wrote much of it.
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>

#include "topology/limits.h"
#include "util/error.h"

/* What one report draws at most, so a huge result cannot make a huge page. */
enum {
	VN_HTML_MAX_POINTS = 300,  /* samples drawn per chart, picked evenly (first and last kept) */
	VN_HTML_MAX_PROCS = 16,    /* workload processes drawn, in order of first appearance */
	VN_HTML_MAX_METRICS = 60,  /* strip charts on a group's page */
	VN_HTML_MAX_RUNS = 256,    /* runs of a group read */
	VN_HTML_MAX_TEXT = 4096,   /* bytes shown of one string (an assertion's detail, an error) */
	VN_HTML_MAX_VERDICTS = 200 /* assertions listed */
};

/*
 * Writes out_path (NULL: DIR/report.html) atomically from DIR, which is a run
 * directory (DIR/result.json) or a result group (DIR/group.json, drawn
 * without a comparison: vn_compare_html_write draws it with one): see
 * docs/results.md. A DIR that is neither, or a result.json/group.json that
 * is not JSON, is an input error; anything else missing (samples, snapshots,
 * compare.json) is left out of the page, with a note saying so.
 */
int vn_report_html_write(const char *dir, const char *out_path, struct vn_error *err);

/*
 * A result group's page (DIR/group.json, read with vn_result_group_load, and
 * its runs' result.json with vn_result_load), with the group's comparison as
 * compare/ computed it (vn_compare_html_write computes it and calls this).
 * cmp NULL: no table, cmp_why (NULL: none asked) says why; the metrics are
 * then ordered by how far their variant means differ. Everything borrowed.
 */
struct vn_compare;
struct vn_html_group_in {
	const char *dir;
	/*
	 * ndirs > 1: the slices of one matrix (vnuma run --shard I/N) drawn as
	 * its one group, merged as compare merges them (vn_result_group_shards,
	 * its refusals too), dir unused; the runs' links are then relative to
	 * page_dir, the directory the page is written to.
	 */
	const char *const *dirs;
	size_t ndirs;
	const char *page_dir;
	const struct vn_compare *cmp;
	const char *cmp_why;
	char *const *notes; /* what compare says beneath its table (vn_compare_notes) */
	size_t nnotes;
};
/* Writes out_path (NULL: DIR/report.html; required for several slices) atomically. */
int vn_report_html_write_group(const struct vn_html_group_in *in, const char *out_path, struct vn_error *err);

/*
 * One run's page, from what the run holds (the runner, within `vnuma run`)
 * or from its directory (`vnuma report DIR`): the same page either way.
 * Everything is borrowed.
 */
struct vn_fallback;
struct vn_result_run;
struct vn_tiermove;

/* The page's tracepoint chart: every event's time and tracepoint, from the capture or from trace.jsonl. */
#define VN_HTML_TRACE_NAMES_MAX 32
struct vn_html_trace_event {
	double t;     /* seconds since the capture began, to the microsecond as trace.jsonl prints it */
	unsigned k;   /* names[k] */
	bool crossed; /* it moved something from one node to another */
};
struct vn_html_trace {
	char *why; /* trace.jsonl could not be read (the page says so); NULL: the rest holds */
	unsigned nnames;
	char names[VN_HTML_TRACE_NAMES_MAX][136];
	bool moves[VN_HTML_TRACE_NAMES_MAX]; /* names[k]'s events carry a from and a to node */
	size_t n, cap;
	struct vn_html_trace_event *v;
	bool ended, complete; /* an end record was written, and it says the capture is complete */
	size_t bad;           /* trace.jsonl's lines that are not JSON */
};
/* An event at t of names[k]; one outside the capture's time or of no known tracepoint is left out. */
void vn_html_trace_add(struct vn_html_trace *tr, double t, unsigned k, bool crossed);
void vn_html_trace_clear(struct vn_html_trace *tr);

struct vn_html_run_in {
	const char *dir;                    /* the run directory: the title without a scenario */
	const struct vn_result_run *result; /* the runner's, or result.json read back (vn_result_load) */
	const char *samples;                /* samples.jsonl's text; NULL: none, samples_why says why */
	const char *samples_why;
	/* The kernel's distance matrix from one snapshot (dist_from: "after" or "before"; NULL: none). */
	const char *dist_from;
	unsigned ndist;
	unsigned dist_ids[VN_MAX_NODES], dist_len[VN_MAX_NODES];
	const unsigned *dist_row[VN_MAX_NODES];
	/* The boot-time fallback lists from that snapshot's dmesg; NULL: fallback_why, or no dmesg. */
	const char *fallback_from;
	const struct vn_fallback *fallback;
	const char *fallback_why;
	const struct vn_html_trace *trace; /* NULL: the run captured no tracepoints (it has no trace.jsonl) */
	/* What the locality map's proof saw (locality-proof.txt); NULL: no proof ran (docs/locality.md). */
	const char *loc_proof;
	/* tiermove's results (report/tiermove.h, vn_tiermove_load_dir): the page's memory tiers. */
	const struct vn_tiermove *tiermove;
	unsigned ntiermove;
};

/* Writes DIR/report.html (in->dir) atomically from in. */
int vn_report_html_write_run(const struct vn_html_run_in *in, struct vn_error *err);

/* A bisection's page (bisect/): the metric, or the verdicts, across the tested commits in commit order. */
struct vn_html_bisect_commit {
	unsigned position; /* in good..bad, 0 the good endpoint */
	const char *hash, *subject, *mark, *why;
	bool first_bad;
	unsigned passed, failed, broken; /* its runs by exit code: 0, 1, other */
	double mean, sd;                 /* of the metric's values; NAN where there are too few */
	unsigned nvalues;
	const double *values; /* the metric's values of its runs */
};
struct vn_html_bisect {
	const char *path;    /* where report.html goes */
	const char *title;   /* escaped when drawn */
	const char *outcome; /* one line */
	const char *metric;  /* NULL: judged by verdict */
	unsigned ncommits;
	const struct vn_html_bisect_commit *commits; /* tested ones, in commit order */
};
int vn_report_html_write_bisect(const struct vn_html_bisect *in, struct vn_error *err);
