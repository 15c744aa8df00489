/*
 * The run's moving parts, shared by runner.c (the phases of a run),
 * runner-steps.c (preparing the guest, starting steps and moves on time,
 * gathering what they left), runner-exec.c (the guest commands on the one
 * agent connection) and the probes. Nothing outside src/scenario/ includes this.
 */
#pragma once

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "guest/agent-client.h"
#include "guest/agent-file.h"
#include "report/html.h"
#include "scenario/backend.h"
#include "scenario/probe.h"
#include "scenario/runner-exec.h"
#include "suite/suite.h"
#include "testbed/testbed.h"
#include "testbed/up.h"
#include "scenario/run-priv.h"
#include "testbed/testbed.h"
#include "util/strbuf.h"

struct run {
	const struct vn_testbed_ctx *ctx; /* for the libvirt half of hotplugs */
	const struct vn_run_backend *be;  /* the machine under the run (NULL: vn_run_backend_testbed) */
	const char *guest;                /* the booted guest's name */
	struct vn_agent *a;
	const char *dir;
	struct vn_scenario *s;
	const struct vn_topology *t;
	struct vn_run_data *d;
	struct exec **ex; /* every command the run started, in order; grown as needed */
	unsigned nex, ex_cap;
	double t0, deadline;
	bool stop; /* interrupted or timed out */
	char *stop_reason;
	vn_up_progress_fn progress; /* the run's stages ("step", "collecting"), as the boot's; NULL: silent */
	void *progress_data;
	struct vn_strbuf samples; /* samples.jsonl contents, for the assertions */
	bool samples_cut;         /* samples reached VN_SAMPLES_MAX, or a line SAMPLE_LINE_MAX */
	bool locality;            /* the plugin counts (the scenario's "locality", or --locality) */
	const char *guest_dir;    /* the booted guest's state dir on this host, or NULL */
	struct vn_probes probes;
	const char *release;         /* the guest kernel's, for the known-failure lists */
	struct vn_suite_run *suites; /* s->nsteps, once a suite step ran: its tests (runner-suite.c) */
};

/* Where the guest has vnuma's programs, and the steps' pidfiles: the backend's, else the image's. */
static inline const char *vn_run_libdir(const struct run *r)
{
	return r->be && r->be->libdir ? r->be->libdir : VN_RUN_GUEST_LIBDIR;
}
static inline const char *vn_run_rundir(const struct run *r)
{
	return r->be && r->be->rundir ? r->be->rundir : VN_RUN_GUEST_RUNDIR;
}

/* runner.c */
/*
 * Virtual time: rep's lowest lead over the run (icount_lead_min_s) from the
 * samples' two clocks. True when it ran out: behind the host's clock QEMU
 * raises the shift again, and rates timed after that are not on the run's
 * time base.
 */
bool vn_run_icount_lead(struct vn_result_run *rep, const struct vn_samples *s);

/* runner-steps.c */
/* Process idx of a step: sh wrapper (pidfile, cgroup) + numactl placement + the workload, its options, every arg. */
char **vn_run_step_argv(const struct run *r, const struct vn_scn_step *st, unsigned idx);
/* Sysctls (as bytes, through the agent's write op), THP, hugetlb pages per node, cgroups. */
int vn_run_prepare(struct run *r, struct vn_error *err);
/* Every step and timed move of the scenario, each when it is due, until all ended. */
int vn_run_steps(struct run *r, struct vn_error *err);
/* runner-suite.c */
/* A "suite" step: its program, one test at a time, each killed at its timeout; verdicts into r->suites. */
int vn_run_suite_step(struct run *r, unsigned si, struct vn_error *err);
/* An infrastructure error naming the first test that broke or timed out (exit 3), else 0. */
int vn_run_suite_check(const struct run *r, struct vn_error *err);
/* The tests into rep's list, and each suite step's verdict when rep is complete; r->suites freed. */
void vn_run_suite_report(struct run *r, struct vn_result_run *rep);
/* Each step's pids and result lines, into r->d (a process without one counted, for the assertions). */
int vn_run_gather(struct run *r, struct vn_error *err);
/* runner-dump.c */
/*
 * --dump-on: before the guest goes, its memory into RUN_DIR/vmcore when it
 * died under the run (a panic leaves it paused, "crashed") or, with
 * VN_DUMP_ON_FAIL, when an assertion failed. A dump that cannot be taken
 * fails nothing: the run's verdicts stand, its progress says why.
 */
void vn_run_keep_dump(const struct run *r, enum vn_run_dump_on on, bool died, unsigned failures);
