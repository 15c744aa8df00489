/*
 * tiermove's result line (docs/workloads.md) as a typed value, for the run
 * page's tiers (html-tiers.c): the tiers the guest reported, each phase's
 * vmstat deltas, and where the hot window's pages were at each sample, per
 * tier. The line is the guest's: read bounded, every member checked, and
 * what does not fit the type is left out, never guessed.
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>

#include "topology/limits.h"
#include "util/error.h"

#define VN_TM_TIERS_MAX   8
#define VN_TM_PHASES_MAX  65 /* the first touch and tiermove's 64 hot phases at most */
#define VN_TM_SAMPLES_MAX 2048
#define VN_TM_FILES_MAX   16 /* tiermove processes drawn on one page */

/* The /proc/vmstat counters tiermove records per phase, in its order. */
enum {
	VN_TM_PGDEMOTE_KSWAPD,
	VN_TM_PGDEMOTE_DIRECT,
	VN_TM_PGPROMOTE_SUCCESS,
	VN_TM_PGPROMOTE_CANDIDATE,
	VN_TM_NUMA_PAGES_MIGRATED,
	VN_TM_NCOUNTERS
};
extern const char *const vn_tm_counters[VN_TM_NCOUNTERS];

/* One memory_tier<id> as the guest's sysfs showed it. */
struct vn_tm_tier {
	int id;
	bool nodes[VN_MAX_NODES];
};

struct vn_tm_phase {
	unsigned phase;                 /* 0: the first touch */
	double touches_per_s;           /* NAN: not given */
	double vmstat[VN_TM_NCOUNTERS]; /* the phase's deltas; NAN: null (the kernel lacks it) */
};

/* One placement sample: the hot window's and all pages per tier (tiers[] order). */
struct vn_tm_sample {
	double t;
	unsigned phase;
	double hot[VN_TM_TIERS_MAX], all[VN_TM_TIERS_MAX]; /* NAN: the sample did not give that tier */
};

struct vn_tiermove {
	char name[96];   /* the output file's name in steps/ */
	unsigned ntiers; /* 0: the guest had no memory tiers (before 6.1) */
	struct vn_tm_tier tiers[VN_TM_TIERS_MAX];
	unsigned nphases;
	struct vn_tm_phase phases[VN_TM_PHASES_MAX];
	unsigned nsamples; /* over every phase, in order */
	struct vn_tm_sample *samples;
};

/*
 * The result line in a tiermove process's output (its last line, a JSON
 * object with "workload": "tiermove") into *out (zeroed first;
 * vn_tiermove_clear it, also on error). An input error naming name when
 * there is none or it is not tiermove's.
 */
int vn_tiermove_parse(const char *text, size_t len, const char *name, struct vn_tiermove *out, struct vn_error *err);
void vn_tiermove_clear(struct vn_tiermove *tm);

/*
 * Every steps/STEP.r0.pN.out of the run directory dir that holds a tiermove
 * result, in name order, into out (at most max); their number. Files that
 * hold none are not tiermove's and are passed over.
 */
unsigned vn_tiermove_load_dir(const char *dir, struct vn_tiermove *out, unsigned max);
