/* The matrix runner's own (matrix.c), shared with its spreading over hosts (spread.c). */
#pragma once

#include "report/result-group.h"
#include "scenario/runner.h"

struct cell {
	char *variant;
	unsigned repeat;
	char *dir;          /* relative to the group */
	int exit;           /* -1: not ended yet */
	char *host;         /* where it ran (spread over hosts), or NULL */
	unsigned nattempts; /* spread: attempts on hosts that failed under it, moved aside */
	struct vn_result_group_attempt *attempts;
};

struct group {
	const char *dir;
	struct vn_scenario *s; /* the scenario as loaded: its variants */
	const struct vn_matrix_opts *o;
	unsigned repeats, ncells;
	struct cell *cells;
	char *topology, *accel, *host, *started;
	bool complete;
	double t0;
	struct vn_result_run verdicts;      /* the group's own assertions (change against the base) */
	unsigned nhosts;                    /* spread: each host, its capacity and what became of it */
	struct vn_result_group_host *hosts; /* NULL: not spread */
	struct vn_result_group_shard shard; /* --shard: which slice (count 0: the whole matrix) */
};

/* How one run of a cell ended: its exit code (0-3), why when it could not run, what its result said. */
struct vn_cell_end {
	int exit;
	char *error;
	char *topology, *host, *started, *accel;
};
void vn_cell_end_clear(struct vn_cell_end *e);
/*
 * How a cell ended, as it crosses from a spread child to the parent: one
 * writer and one bounded reader from one table of members (spread.c). A
 * bad answer (a wrong type, an unknown key, over 64 KiB) is an input error
 * "name: $.key: what"; vn_cell_end_clear *e also on error.
 */
#define VN_CELL_END_TEXT_MAX (64u << 10)
char *vn_cell_end_text(const struct vn_cell_end *e);
int vn_cell_end_parse(const char *text, const char *name, struct vn_cell_end *e, struct vn_error *err);

/* The group as group.json says it (a copy: the cells' and the spread's own state keep changing). */
void vn_matrix_group_value(const struct group *g, struct vn_result_group *out);
int vn_matrix_group_write(const struct group *g, struct vn_error *err);
/* Runs cell k into its directory with ctx's host (a spread child does this in a process of its own). */
void vn_matrix_cell_run(const struct group *g, unsigned k, const struct vn_testbed_ctx *ctx, struct vn_cell_end *end);
/* Records how cell k ended (counts, the group's topology and accelerator, the callback) and rewrites group.json. */
int vn_matrix_cell_ended(struct group *g, unsigned k, const struct vn_cell_end *end, struct vn_matrix_result *res,
			 struct vn_error *err);
/*
 * The cells spread over o->hosts: at most a host's capacity at once, each
 * run in a child process of its own; a run that could not run on a host
 * found unreachable afterwards is moved aside and run again on another.
 */
int vn_matrix_spread(struct group *g, const struct vn_testbed_ctx *ctx, struct vn_matrix_result *res,
		     struct vn_error *err);
/*
 * The next run for the host uri from the queue's entries head..tail (indexes
 * mod g->ncells into g->cells): the first of the variant with the fewest runs
 * there (a cell's host is set while it runs). It moves to queue[head].
 */
unsigned vn_spread_take(const struct group *g, unsigned *queue, unsigned head, unsigned tail, const char *uri);
/*
 * Cell c's directory as a failed host left it, renamed to
 * attempts/VARIANT-REPEAT-N in the group; its new name, relative (caller
 * frees), or NULL when it could not be moved. Never through an attempts
 * that is not a directory of its own (a symlink planted in a reused group).
 */
char *vn_spread_move_aside(const struct group *g, const struct cell *c);
/*
 * --shard I/N: the group's cells cut to the I-th slice, and g->shard set (the
 * matrix's identity among them). A slice with no runs (N above the runs) is
 * bad input, as --repeats auto is, whose rounds no slice can know.
 */
int vn_matrix_shard(struct group *g, struct vn_error *err);
