/*
 * The run's moving parts, shared by runner.c (the phases of a run, and the
 * one agent connection every guest command goes over) and runner-steps.c
 * (preparing the guest, starting steps and moves on time, gathering what
 * they left). Nothing outside src/scenario/ includes this.
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
#include "testbed/testbed.h"
#include "testbed/up.h"
#include "scenario/run-priv.h"
#include "testbed/testbed.h"
#include "util/strbuf.h"

/*
 * Nothing the guest sends is kept without a bound. A workload's stdout is
 * kept (its tail) for its result line; each step output file, the sampler's
 * lines and the outputs of our own helper commands are capped.
 */
#define KEEP_TAIL_MAX   (1u << 20)
#define STEP_FILE_MAX   (64u << 20)
#define AUX_OUT_MAX     (1u << 20)
#define SAMPLE_LINE_MAX (4u << 20)

enum exec_kind { EX_SAMPLER, EX_WORKLOAD, EX_ACTION, EX_AUX, EX_TRACER };

struct run;

struct exec {
	int64_t id;
	enum exec_kind kind;
	unsigned step, index; /* workload: which step, which process */
	unsigned move;        /* action: index into d->moves */
	FILE *out, *errf;
	size_t out_len, err_len; /* bytes written to out, errf */
	bool out_cut, err_cut;   /* a file reached STEP_FILE_MAX */
	struct vn_strbuf buf;    /* stdout kept (sampler: partial line; workload: its tail; action/aux: all) */
	struct vn_strbuf ebuf;   /* stderr of actions and aux commands, for error messages */
	bool buf_cut;            /* action/aux output reached AUX_OUT_MAX */
	bool skip_line;          /* sampler: dropping a line longer than SAMPLE_LINE_MAX */
	bool done;
	int status; /* exit code, 128+signal, or -1 when it could not start */
	char *error;
	/* Its stdout, as it comes, to whoever started it (the sampler, a probe's program); NULL: kept as its kind says. */
	void (*on_out)(struct run *r, struct exec *e, void *data, const char *s, size_t n);
	void *on_out_data;
};

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

/* DIR/NAME, malloc'd. */
char *vn_run_path(const char *dir, const char *name);
/* DIR/NAME created for a stream that grows during the run (util/file.h). */
int vn_run_open_out(const char *dir, const char *name, FILE **f, struct vn_error *err);
/* One more guest command on the run's connection; *out points into r->ex. */
int vn_run_exec_start(struct run *r, enum exec_kind kind, const char *const *argv, struct exec **out,
		      struct vn_error *err);
void vn_run_signal(struct run *r, struct exec *e, int sig);
/* Handle the guest's events for up to ms (the deadline and Ctrl-C set r->stop). */
int vn_run_pump(struct run *r, int ms, struct vn_error *err);
/* A helper shell script in the guest (fixed text of ours, never scenario input); its stdout in *out. */
int vn_run_guest_sh(struct run *r, const char *script, char **out, struct vn_error *err);

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
/* Each step's pids and result lines, into r->d (a process without one counted, for the assertions). */
int vn_run_gather(struct run *r, struct vn_error *err);
