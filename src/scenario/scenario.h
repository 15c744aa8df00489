/*
 * A scenario: one kernel behaviour checked end to end (boot, prepare the
 * guest, run workloads, sample, assert). Parsed from JSON with json-c; every
 * bad key or type is an error naming the file and the JSON path
 * ("scenarios/x.json: $.steps[1].placement.nodes[0]: expected an integer").
 * The file format is documented in docs/scenarios.md.
 */
#pragma once

#include <stdbool.h>

#include "scenario/scenario-limits.h"
#include "scenario/scenario-types.h"
#include "util/cleanup.h"
#include "util/error.h"

int vn_scenario_load(const char *path, struct vn_scenario **out, struct vn_error *err);

/*
 * Resolve a scenario argument: an existing file, or NAME / NAME.json under
 * ./scenarios or the installed scenarios (util/paths.h); not found is an
 * input error naming the places searched.
 */
int vn_scenario_find(const char *arg, char **path, struct vn_error *err);
int vn_scenario_parse(const char *text, const char *name, struct vn_scenario **out, struct vn_error *err);
void vn_scenario_free(struct vn_scenario *s);
VN_DEFINE_CLEANUP(struct vn_scenario *, vn_scenario_free);
#define _cleanup_scenario_ _cleanup_(vn_scenario_freep)

/* --quick: durations, sizes and action times times quick_scale (sizes kept >= 16 MiB, durations >= 2 s). */
void vn_scenario_apply_quick(struct vn_scenario *s);

/* Set a variant over the scenario (kernel, append, sysctls) and make it one run: no variants, one repeat. */
void vn_scenario_apply_variant(struct vn_scenario *s, const struct vn_scn_variant *v);
/* Replace the variants (the scenario takes n copies of v; n 0 clears them). */
void vn_scenario_set_variants(struct vn_scenario *s, const struct vn_scn_variant *v, unsigned n);

/* A deep copy: every string and array its own. */
struct vn_scenario *vn_scenario_copy(const struct vn_scenario *s);

/* What a command line sets over a scenario (run, bisect, a matrix's runs): a value, never an edit of the parsed one. */
struct vn_scn_overrides {
	const char *arch; /* --arch, in place of the scenario's "arch" (a variant's own still wins in its runs) */
	bool locality;    /* --locality: as the scenario's "locality": true */
	bool quick;       /* --quick: vn_scenario_apply_quick */
	/* --share and --file specs (absolute host paths), after the scenario's own. */
	char *const *share, *const *files;
	/* --ltp: LTP's install on the host (absolute), shared read-only at VN_SCN_LTP_GUEST_DIR, every "ltp" suite's directory. */
	const char *ltp;
};
#define VN_SCN_LTP_GUEST_DIR "/opt/ltp"
/* A copy of s with o set over it; s is left as it is. */
struct vn_scenario *vn_scenario_override(const struct vn_scenario *s, const struct vn_scn_overrides *o);

/*
 * Each "ltp" suite step's LTP comes from the host: --ltp, or a share whose
 * guest directory holds the step's "ltp". Else an input error saying what
 * to install and pass, before anything boots (docs/suites.md).
 */
int vn_scenario_check_ltp(const struct vn_scenario *s, struct vn_error *err);

/* Where a kselftest step's program is: run's --kselftest shares the built tests there. */
#define VN_SCN_KSELFTEST_GUEST_DIR "/opt/kselftest"
/* The tests of VN_SCN_KSELFTEST_GUEST_DIR/{vm,mm}/ the steps run, comma-separated (NULL when none; malloc'd). */
char *vn_scenario_kselftests(const struct vn_scenario *s);
/* Each step running a program under VN_SCN_KSELFTEST_GUEST_DIR has a share there; else an input error saying how. */
int vn_scenario_check_kselftest(const struct vn_scenario *s, struct vn_error *err);

/* The resolved scenario as JSON text (for results/<run>/scenario.json). Malloc'd. */
char *vn_scenario_to_json(const struct vn_scenario *s);

const char *vn_scn_op_name(enum vn_scn_op op);
bool vn_scn_op_eval(enum vn_scn_op op, double observed, double value);
