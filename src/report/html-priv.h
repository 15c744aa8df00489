/*
 * report.html's pieces, shared by the run page (html-run.c) and the group
 * page (html-group.c): escaping, the SVG charts, the page frame, defensive
 * JSON reads. Every function appends to a strbuf; none prints.
 */
#pragma once

#include <json-c/json.h>
#include <stdbool.h>
#include <stddef.h>

#include "util/error.h"
#include "util/strbuf.h"

/*
 * Text as HTML (also safe inside a quoted attribute), at most
 * VN_HTML_MAX_TEXT bytes of it, cleaned as result.json's writer cleans the
 * guest's text (vn_text_clean), so a run drawn from memory looks as drawn
 * from its file.
 */
void vn_html_text(struct vn_strbuf *b, const char *s);
/* A number compactly ("%.4g"); NAN and infinities as "-". */
void vn_html_num(struct vn_strbuf *b, double v);
/* A heatmap cell's colour for frac in 0..1: pale to dark blue, as both heatmaps draw them. */
void vn_html_heat_color(double frac, char out[8]);
/* A node by node heatmap: the distances' and the accesses' (html-run.c, html-locality.c). */
struct vn_html_heatmap {
	unsigned n;
	int px;              /* a cell's side up to 16 nodes; past that the map keeps to 576 pixels */
	const unsigned *ids; /* the nodes' numbers, or NULL for 0..n-1 */
	const char *corner;  /* text at the top left (escaped), or NULL */
	/* Draws row i's column j, its top left at x, y. */
	void (*cell)(struct vn_strbuf *b, const void *ctx, unsigned i, unsigned j, int x, int y, int px);
	const void *ctx;
};
void vn_html_heatmap(struct vn_strbuf *b, const struct vn_html_heatmap *h);
/* One JSONL line (n bytes) as a JSON object, strictly; NULL when it is anything else. */
struct json_object *vn_html_parse_line(const char *line, size_t n);
/* The colour of node (or series) i: one palette across the page, so node 1 is one colour everywhere. */
const char *vn_html_color(unsigned i);

struct vn_html_series {
	const char *name; /* legend text, escaped when drawn */
	const char *color;
	const double *y; /* the chart's n values; NAN: no value at that x (a line skips it, a stack counts 0) */
};

struct vn_html_chart {
	const char *title; /* escaped when drawn */
	unsigned n;        /* points per series (at most VN_HTML_MAX_POINTS are expected) */
	const double *x;
	bool fixed_x; /* use xmin..xmax (so several charts line up), not the data's own range */
	double xmin, xmax;
	const char *xlabel;
	unsigned nseries;
	const struct vn_html_series *series;
	bool stacked; /* filled areas, series stacked bottom up in order */
};

/* One <svg class="chart">: axes with ticks, the series as polylines or stacked polygons, a legend. */
void vn_html_chart(struct vn_strbuf *b, const struct vn_html_chart *c);

/* A strip chart: per group (variant) its values as points and their mean as a bar. */
struct vn_html_strip {
	const char *title; /* escaped when drawn */
	unsigned ngroups;
	const char *const *names;    /* ngroups names, escaped when drawn */
	const unsigned *count;       /* values per group */
	const double *const *values; /* count[g] finite values for group g */
};
void vn_html_strip(struct vn_strbuf *b, const struct vn_html_strip *s);

/* <!doctype html> .. <body>, with the page's CSS; and the end of it. */
void vn_html_page_begin(struct vn_strbuf *b, const char *title);
void vn_html_page_end(struct vn_strbuf *b);
/* <p class="note">text</p>, text escaped. */
void vn_html_note(struct vn_strbuf *b, const char *text);

/* The assertions table: name, verdict (coloured), observed, expected, detail. */
struct vn_verdict;
void vn_html_verdicts_run(struct vn_strbuf *b, const struct vn_verdict *v, unsigned n);

/* DIR/NAME parsed (strict JSON, at most max bytes): the file's errors are input errors naming it. */
int vn_html_read_json(const char *dir, const char *name, size_t max, struct json_object **out, struct vn_error *err);

/* A relative path inside the directory: [A-Za-z0-9._/-] only, no leading '/', no ".." component. */
bool vn_html_path_ok(const char *rel);

/* The pages, appended to b; the result file's errors are returned, anything else becomes a note. */
int vn_html_run(struct vn_strbuf *b, const char *dir, struct vn_error *err);
/* A run's page from what it holds (html.h): vn_html_run loads the directory into one and draws it. */
struct vn_html_run_in;
void vn_html_run_page(struct vn_strbuf *b, const struct vn_html_run_in *in);
struct vn_html_group_in;
int vn_html_group(struct vn_strbuf *b, const struct vn_html_group_in *in, struct vn_error *err);

/*
 * A run's locality figures (docs/locality.md) as its page draws them
 * (html-locality.c): the steps' access matrix and remote fractions from
 * result.json's metrics, the remote fraction over time from samples.jsonl.
 */
#define VN_HTML_LOC_ROWS 11 /* CPU nodes drawn as a series each (with "all", the chart's 12 legend entries) */
struct vn_html_loc {
	bool on;                           /* the run counted: its proof, a figure or a sample line says so */
	unsigned nnodes;                   /* the matrix's side (result.json's highest node + 1); 0: no matrix */
	double *matrix;                    /* [cpu node * nnodes + memory node]; NAN: result.json lacks the cell */
	double remote[3];                  /* remote_fraction .user, .kernel, .all; NAN: not recorded */
	double accesses, outside, model_s; /* NAN: not recorded */
	const char *proof, *error;         /* borrowed: locality-proof.txt, result.json's error */
	unsigned npoints, nrows;           /* drawn samples; CPU nodes with a series of their own */
	double *t, *all, *row[VN_HTML_LOC_ROWS];
	unsigned lines, bad; /* sample lines with a readable matrix, and with an unreadable one */
};
struct vn_result_run;
void vn_html_loc_load(struct vn_html_loc *l, const struct vn_result_run *result, const char *samples,
		      const char *proof);
void vn_html_loc_clear(struct vn_html_loc *l);
/*
 * The matrix the runner put at the head of one samples.jsonl line (n bytes):
 * 1 with *side and m[side * side] filled (m holds VN_MAX_NODES squared),
 * 0 when the line has none, -1 when it is not one the runner could write.
 */
int vn_html_loc_line(const char *line, size_t n, double *m, unsigned *side);
/* The access heatmap with its figures, or why there are none. */
void vn_html_loc_heatmap(struct vn_strbuf *b, const struct vn_html_loc *l);
/* The remote fraction over time (nothing without points); x0..x1 as the charts beside it when fixed. */
void vn_html_loc_chart(struct vn_strbuf *b, const struct vn_html_loc *l, bool fixed, double x0, double x1);

/*
 * text with all but at most max of its lines blanked (first and last kept,
 * the rest picked evenly), so that parsing it costs max lines whatever the
 * file's size while every kept line keeps its line number. *total gets the
 * number of lines. Malloc'd.
 */
char *vn_html_pick_lines(const char *text, unsigned max, unsigned *total);

/* A tiered run's memory tiers (html-tiers.c): nothing for a run with neither the model's tiers nor tiermove's. */
void vn_html_tiers(struct vn_strbuf *b, const struct vn_html_run_in *in);
