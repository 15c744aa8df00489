/* Running a scenario: boot, prepare, run the steps while sampling, assert, report. */
#pragma once

#include <stdbool.h>

/* A scenario's boot deadline, in ms: longer than up's, since CI hosts run several guests at once. */
#define VN_SCN_BOOT_MS 300000

#include "report/report.h"
#include "scenario/scenario.h"
#include "testbed/testbed.h"

struct vn_run_opts {
	const char *outdir;                    /* NULL: results/<scenario>-<UTC time> */
	const char *kernel;                    /* overrides the scenario's kernel */
	bool quick;                            /* scale durations and sizes for CI */
	bool keep;                             /* leave the guest running afterwards */
	bool force;                            /* use outdir even if it is not empty */
	vn_kernel_progress_fn kernel_progress; /* a recipe kernel built on first use */
	void *kernel_progress_data;
	vn_up_progress_fn boot_progress; /* boot stages; NULL: silent */
	void *boot_progress_data;
};

/*
 * Returns 0 when the run completed (then report->verdicts say whether the
 * kernel behaved), or a negative errno with err filled when it could not:
 * bad scenario (VN_ERR_INPUT) or infrastructure (VN_ERR_INFRA). A results
 * directory that is not empty is refused (VN_ERR_INPUT) unless o->force.
 * Once the directory is made, result.json and junit.xml are written there
 * first marked incomplete, then rewritten (atomically) when the run ends,
 * still marked incomplete if it was cut short. *dir receives its path.
 */
int vn_scenario_run(const struct vn_testbed_ctx *ctx, struct vn_scenario *s, const struct vn_run_opts *o,
		    struct vn_report *report, char **dir, struct vn_error *err);

/* The guest a run boots is named "scn-" + the scenario's name (then "-2", ... if taken). */
#define VN_SCN_GUEST_PREFIX "scn-"

/*
 * Everything run checks before booting, without booting (`vnuma scenario
 * validate` is exactly this): the guest name the scenario derives, its
 * topology (resolved beside the scenario file) and every node its steps,
 * actions, hugetlb pages and assertions name, and its kernel. Errors are
 * VN_ERR_INPUT "FILE: $.json.path: message". topo_path and topo (optional)
 * receive the resolved topology.
 */
int vn_scenario_check(const struct vn_scenario *s, char **topo_path, struct vn_topology **topo, struct vn_error *err);
