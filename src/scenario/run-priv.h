/* What a run leaves for the assertions to judge; shared by runner.c and assert.c. */
#pragma once

#include <json-c/json.h>

#include "metrics/locality.h"
#include "metrics/samples.h"
#include "report/report.h"
#include "scenario/scenario.h"
#include "testbed/snapshot.h"
#include "topology/fallback.h"
#include "topology/tiers.h"
#include "topology/topology.h"

struct vn_run_move {
	unsigned step, to_node;
	double uptime; /* guest uptime when the move was done */
	unsigned npids;
	int pids[VN_SCN_RUNNING_MAX]; /* some of the step's processes (scenario.h); no more are believed */
};

/* A hotplug the run made (a hotplug step or timed action), and what the kernel's rebuild of its lists saw. */
struct vn_run_hotplug {
	unsigned step;
	struct vn_scn_hotplug what;
	double t_s;        /* seconds into the run */
	unsigned rebuilds; /* builds of the fallback lists it made the guest print */
	struct vn_fallback_state seen;
	uint64_t node_memtotal; /* the node's MemTotal afterwards, bytes */
};

struct vn_run_step_data {
	unsigned npids;
	int pids[VN_SCN_RUNNING_MAX]; /* its processes' (scenario.h); no more are believed */
	unsigned nresults, results_cap;
	json_object **results;  /* each process's JSON result line */
	unsigned nmissing;      /* processes that ended without a line that parses as JSON */
	unsigned missing_first; /* the first of them, by index */
};

struct vn_run_data {
	const struct vn_scenario *s;
	const struct vn_topology *t;
	enum vn_tier_model tier_model;    /* the booted kernel's (its release): what the tier assertions judge by */
	struct vn_snapshot before, after; /* collect's, before the first step and after the last */
	/* What the assertions read, borrowed from the snapshots (vn_run_judge). */
	json_object *vmstat_before, *vmstat_after;
	const char *dmesg;                   /* after the run */
	const char *distances[VN_MAX_NODES]; /* guest nodeN/distance, after the run */
	struct vn_samples samples;
	struct vn_run_step_data *steps; /* s->nsteps */
	unsigned nmoves, moves_cap;     /* as many as the scenario's move actions */
	struct vn_run_move *moves;
	unsigned nhotplugs, hotplugs_cap; /* as many as its hotplug steps and actions */
	struct vn_run_hotplug *hotplugs;
	/* Locality (docs/locality.md): the steps' accesses, once the map was proven. */
	bool loc_have;
	struct vn_loc_counts loc;        /* after the proof until after the last step */
	double *loc_lat_ns;              /* the model's [cpu node][mem node] latencies */
	unsigned loc_ntiers;             /* the model's memory tiers, fastest first */
	int loc_tier_of[VN_MAX_NODES];   /* each memory node's tier (index), -1: none */
	int loc_tier_id[VN_MAX_NODES];   /* each tier's sysfs id, memory_tier<id> */
	char *loc_proof;                 /* what the proof saw, for result.json */
	struct vn_loc_counts *loc_steps; /* s->nsteps: those of a step that ran alone (nnodes 0: none) */
	unsigned loc_dimms_counted;      /* DIMMs plugged whose range was proven and joined the map */
	unsigned loc_dimms_unmapped;     /* those whose accesses stay unmapped (the proof says why) */
};

/*
 * Where each assertion's data comes from, and what is the kernel's doing:
 * a failure to observe (a snapshot file unread or not a counter file, a
 * sample or a result line missing, nothing moved) is an infrastructure error
 * with its reason, never a verdict; a fact about the kernel read from good
 * data (a counter its /proc/vmstat does not have, lists it did not print)
 * is judged. docs/scenarios.md, "What a verdict is", has the table.
 */

/*
 * Judges a finished run from its snapshots (d->before, d->after) and the
 * sampler's lines (runner.c): verdicts and metrics into report, or, when
 * anything could not be observed, an infrastructure error and neither.
 */
int vn_run_judge(struct vn_run_data *d, const char *samples, struct vn_result_run *report, struct vn_error *err);

/* report.html's distances and fallback lists from d's snapshots (after, else before), borrowed. */
struct vn_html_run_in;
void vn_run_page(const struct vn_run_data *d, struct vn_html_run_in *in);

/* What a finished run records for compare (observe.c), from d's snapshots, steps and report's verdicts. */
int vn_run_metrics(const struct vn_run_data *d, struct vn_result_run *report, struct vn_error *err);

/* Judge every assertion of the scenario into report verdicts; stops at the first that could not be observed. */
int vn_scenario_assert(const struct vn_run_data *d, struct vn_result_run *report, struct vn_error *err);
