/*
 * A result group's group.json (docs/results.md, "A result group") as a typed
 * value: what a matrix (scenario/matrix.c, spread.c) and a bisection's
 * OUT/commits (bisect.c) write through the one writer
 * (vn_result_group_text), and what compare and the group's page read back
 * through the one reader (vn_result_group_load).
 */
#pragma once

#include <stdbool.h>

#include "report/result.h"

/*
 * Keys one writer writes and another leaves out (a bisection's group has no
 * host, repeats or assertions; its variants no append or sysctls, but a
 * commit): a key is written when its bit is in keys, a string of it that is
 * NULL as null. The reader sets the bits of the keys it found, so that what
 * it read is written back the same.
 */
enum vn_result_group_key {
	VN_GROUP_HOST = 1 << 0,
	VN_GROUP_ACCEL = 1 << 1,
	VN_GROUP_ARCH = 1 << 2,
	VN_GROUP_STARTED = 1 << 3,
	VN_GROUP_REPEATS = 1 << 4,
	VN_GROUP_BASE = 1 << 5,
	VN_GROUP_HOSTS = 1 << 6,
	VN_GROUP_COMPLETE = 1 << 7, /* absent: compare reads the group as complete, the page as not */
	VN_GROUP_ASSERTIONS = 1 << 8,
	/* A variant's. */
	VN_GROUP_VARIANT_KERNEL = 1 << 9,
	VN_GROUP_VARIANT_APPEND = 1 << 10,
	VN_GROUP_VARIANT_SYSCTLS = 1 << 11,
	/* A run's. */
	VN_GROUP_RUN_REPEAT = 1 << 12,
	VN_GROUP_RUN_EXIT = 1 << 13,
	VN_GROUP_VERSION = 1 << 14, /* absent: a file from before "version", read as version 1 */
};

/*
 * group.json's format: 2 added "version" and "shard". A newer one is refused
 * by version rather than read wrong.
 */
#define VN_RESULT_GROUP_VERSION 2

struct vn_result_group_variant {
	char *name;
	char *kernel; /* how its kernel was asked for ("stock", a recipe, a bisection's build) */
	char *append; /* its kernel command line's addition, or NULL */
	unsigned nsysctls;
	struct vn_result_sysctl *sysctls; /* in the scenario's order, a variant's own replacing the scenario's */
	char *commit, *mark;              /* a bisection's: the commit tested and how it was marked, or NULL */
	unsigned keys;
};

/* A run a host failed under (spread over hosts): its directory moved aside to attempts/, never compared. */
struct vn_result_group_attempt {
	char *host, *error;
	char *dir; /* relative to the group, or NULL: it could not be moved */
};

struct vn_result_group_run {
	char *variant;
	unsigned repeat; /* from 1 */
	char *dir;       /* relative to the group */
	int exit;        /* 0-3; -1: not ended yet (null) */
	char *host;      /* spread: where it runs or ran; NULL: not written */
	unsigned nattempts;
	struct vn_result_group_attempt *attempts;
	unsigned keys;
};

/* A host a matrix spread over: its capacity, the runs that ended there and its state ("ok" or why not). */
struct vn_result_group_host {
	char *uri, *state;
	unsigned capacity, runs;
};

/*
 * One of count slices of a matrix's runs (vnuma run --shard INDEX/COUNT),
 * which vnuma compare merges: matrix identifies the matrix (a sha256 of its
 * scenario file, variants, repeats and what changes every run), runs counts
 * all its runs over the slices.
 */
struct vn_result_group_shard {
	unsigned index, count; /* from 1; count 0: the group is a whole matrix */
	unsigned runs;
	char *matrix;
};

struct vn_result_group {
	unsigned version; /* VN_RESULT_GROUP_VERSION written (with VN_GROUP_VERSION); 1 read from a file without */
	char *scenario;
	char *topology, *host, *accel, *arch, *started_utc;
	unsigned repeats;
	char *base; /* the first variant's name */
	unsigned nvariants;
	struct vn_result_group_variant *variants;
	unsigned nruns;
	struct vn_result_group_run *runs;
	unsigned nhosts;
	struct vn_result_group_host *hosts;
	bool complete;
	unsigned nverdicts; /* the group's own assertions: name, pass/undecided, observed, expected */
	struct vn_verdict *verdicts;
	struct vn_result_group_shard shard;
	unsigned keys;
};

void vn_result_group_clear(struct vn_result_group *g);
/* Appends a variant, a run, a host, or the sysctl key=value to a variant (replacing key's value where it is). */
struct vn_result_group_variant *vn_result_group_add_variant(struct vn_result_group *g, const char *name);
struct vn_result_group_run *vn_result_group_add_run(struct vn_result_group *g, const char *variant, unsigned repeat,
						    const char *dir, int exit);
void vn_result_group_add_host(struct vn_result_group *g, const char *uri, unsigned capacity, unsigned runs,
			      const char *state);
void vn_result_group_set_sysctl(struct vn_result_group_variant *v, const char *key, const char *value);
void vn_result_group_add_attempt(struct vn_result_group_run *r, const char *host, const char *error, const char *dir);
/* group.json's bytes, the one writer's. */
char *vn_result_group_text(const struct vn_result_group *g);

/*
 * The one reader of group.json: path's file, bounded and type-checked, into
 * *out (zeroed first; vn_result_group_clear it, also on error). What it
 * means (a run's variant among the variants, its dir inside the group, the
 * base the first variant) is the reader's caller's to judge. Errors are
 * input errors "PATH: $.json.path: what is wrong".
 */
#define VN_RESULT_GROUP_FILE_MAX (16u << 20)
#define VN_RESULT_GROUP_LIST_MAX (1u << 20) /* variants, runs, hosts, attempts, assertions, sysctls */
int vn_result_group_load(const char *path, struct vn_result_group *out, struct vn_error *err);
int vn_result_group_parse(const char *text, const char *name, struct vn_result_group *out, struct vn_error *err);

/*
 * Whether the groups g[0..n) read from dirs are the slices of one matrix:
 * 0 when none is a slice; 1 when they are every slice of one matrix once,
 * order[0..n) then their inputs by slice; else an input error naming
 * the directories (a slice with a group that is none, slices of different
 * matrices, a slice twice, a slice missing).
 */
int vn_result_group_shards(const char *const *dirs, size_t n, const struct vn_result_group *g, size_t *order,
			   struct vn_error *err);
