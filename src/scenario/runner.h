/* Running a scenario: boot, prepare, run the steps while sampling, assert, report. */
#pragma once

#include <stdbool.h>

/* A scenario's boot deadline, in ms: longer than up's, since CI hosts run several guests at once. */
#define VN_SCN_BOOT_MS 300000

#include "report/report.h"
#include "scenario/backend.h"
#include "scenario/shard.h"
#include "scenario/scenario.h"
#include "testbed/hosts.h"
#include "testbed/testbed.h"
#include "testbed/up.h"

struct vn_probe_ops;

struct vn_run_opts {
	const char *outdir;             /* NULL: results/<scenario>-<UTC time> */
	const char *kernel;             /* overrides the scenario's kernel */
	bool quick;                     /* scale durations and sizes for CI */
	bool keep;                      /* leave the guest running afterwards */
	bool cold;                      /* boot, never restore a booted snapshot (as the scenario's "boot": "cold") */
	bool force;                     /* use outdir even if it is not empty */
	bool virtual_time;              /* --virtual-time: over the scenario's and its variants' "virtual_time" */
	bool locality;                  /* as the scenario's "locality": true */
	uint64_t node_memory;           /* --node-memory: every memory node's size (0: the topology's) */
	const char *const *with;        /* more host packages for the guest image (the scenario's come too) */
	const char *variant;            /* for the result: the variant's name (NULL: "default") */
	unsigned repeat;                /* and which repeat of it, from 1 (0: 1) */
	enum vn_run_dump_on dump_on;    /* --dump-on: keep a dump of the guest in the run's directory */
	struct vn_up_progress progress; /* the boot's, and the run's stages ("step", "collecting") */

	/* The machine under the run (NULL: vn_run_backend_testbed); a matrix passes it to every run. */
	const struct vn_run_backend *backend;
	/* What watches the run (scenario/probe.h), NULL-terminated; NULL: vn_probes_builtin. */
	const struct vn_probe_ops *const *probes;
};

/*
 * Returns 0 when the run completed (then report->verdicts say whether the
 * kernel behaved), or a negative errno with err filled when it could not:
 * bad scenario (VN_ERR_INPUT) or infrastructure (VN_ERR_INFRA). A results
 * directory that is not empty is refused (VN_ERR_INPUT) unless o->force.
 * Once the directory is made, result.json and junit.xml are written there
 * first marked incomplete, then rewritten (atomically) when the run ends,
 * still marked incomplete if it was cut short. *dir receives its path.
 * s is not changed: o's overrides are set over the run's own copy.
 */
int vn_scenario_run(const struct vn_testbed_ctx *ctx, const struct vn_scenario *s, const struct vn_run_opts *o,
		    struct vn_result_run *report, char **dir, struct vn_error *err);

/* results/<scenario>-<UTC time>, where a run or a group goes without -o. Malloc'd. */
char *vn_run_default_dir(const char *scenario);
/*
 * 0 when dir is empty or absent, or force; else an input error (a reused
 * directory would mix one run's files with another's), with reason after
 * "is not empty" (NULL: none), or an infrastructure error when dir cannot be read.
 */
int vn_run_dir_refuse(const char *dir, bool force, const char *reason, struct vn_error *err);

struct vn_compare;

/* A matrix run (matrix.c): every variant of the scenario, each repeated, into one result group. */
struct vn_matrix_opts {
	struct vn_run_opts run; /* outdir: the group's directory; kernel, keep: not used */
	/* Hosts it spreads over (testbed/hosts.h: at most capacity runs at once, 0: what fits), NULL: every run here, one after the other. */
	const struct vn_host *hosts;
	unsigned nhosts;
	const char *const *kernels; /* --kernel A --kernel B: one variant per kernel, in place of the scenario's */
	unsigned nkernels;
	unsigned repeats; /* 0: the scenario's */
	/*
	 * --repeats auto: after those, one more run of every variant while some
	 * change assertion is too noisy to tell, up to VN_SCN_AUTO_REPEATS_MAX
	 * runs a variant (not with hosts).
	 */
	bool repeats_auto;
	struct vn_shard shard; /* --shard I/N: only the I-th slice of the runs (not with repeats_auto) */
	/*
	 * Set over each run's scenario as its file loads, before its variant
	 * (--arch, --locality): a run reads its scenario afresh, and without these
	 * would lose them. --quick stays run.quick, which the run sets itself.
	 */
	struct vn_scn_overrides over;
	/* Before each run (k from 0 of n), and after it with its exit code (0, 1, 2, 3) and report. */
	void (*run_start)(void *data, unsigned k, unsigned n, const char *variant, unsigned repeat, double elapsed_s);
	void (*run_done)(void *data, unsigned k, unsigned n, const char *dir, int exit, const struct vn_result_run *rep,
			 const char *error);
	void *run_start_data;
};

struct vn_matrix_result {
	unsigned runs, failed, broken; /* runs done; with a failed assertion; that could not run (exit 2, 3) */
	char first_error[VN_ERROR_MSG_MAX];
	char compare_error[VN_ERROR_MSG_MAX]; /* compare.txt/json or report.html could not be made */
	const char *files;          /* what the group's directory holds, for people ("group.json" alone for a slice) */
	struct vn_compare *compare; /* the group's comparison, or NULL */
	struct vn_result_run verdicts; /* the group's change assertions (vn_result_clear it) */
};

/* The scenario's "change" assertions judged from a group's comparison (its variants[0] the base) into out. */
void vn_scenario_judge_changes(const struct vn_scenario *s, const struct vn_compare *cmp, struct vn_result_run *out);

/* Whether the scenario with these options is a matrix (variants, several kernels, or repeats). */
bool vn_scenario_is_matrix(const struct vn_scenario *s, const struct vn_matrix_opts *o);

/*
 * Runs the matrix interleaved (A B A B ...), writing DIR/group.json (first
 * marked incomplete, then after every run), DIR/VARIANT/N/ (ordinary run
 * directories), DIR/compare.{txt,json} and DIR/report.html. A run that fails
 * is recorded with its exit code and the matrix goes on; Ctrl-C stops it.
 * The scenario's "change" assertions are judged from the comparison, into
 * group.json's "assertions" and res->verdicts.
 * Returns 0 when every run was attempted (see res for how they went), or a
 * negative errno: bad scenario or variant, the group dir, interrupted.
 */
int vn_scenario_run_matrix(const struct vn_testbed_ctx *ctx, struct vn_scenario *s, const struct vn_matrix_opts *o,
			   struct vn_matrix_result *res, char **dir, struct vn_error *err);

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
/* The scenario file's directory (malloc'd): its relative "share" and "files" paths start there. */
char *vn_scenario_dir(const struct vn_scenario *s);
int vn_scenario_check(const struct vn_scenario *s, char **topo_path, struct vn_topology **topo, struct vn_error *err);
/*
 * Where it may run: a "locality" scenario (s->locality, or locality asked
 * for) only on this host, since the plugin writes its counters into this
 * host's state dir, out of a remote QEMU's reach. uri (NULL: $VNUMA_URI) and
 * the n hosts (a matrix's, or none) are where it would run. `run`, `bisect`
 * and a matrix check this before they build or boot anything.
 */
int vn_scenario_check_hosts(const struct vn_scenario *s, bool locality, const char *uri, const struct vn_host *hosts,
			    unsigned n, struct vn_error *err);
