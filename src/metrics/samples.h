/*
 * samples.jsonl, as vnuma-sample writes it in the guest (one JSON line per
 * interval; the format is in docs/sampling.md), turned into arrays the
 * assertion code can walk without touching JSON for the common questions:
 * where a workload's memory is, where its threads run, how many run per node.
 */
#pragma once

#include <json-c/json.h>
#include <stdbool.h>

#include "topology/limits.h" /* VN_MAX_NODES: node ids at or above it are refused as bad input */
#include "util/error.h"

/*
 * samples.jsonl's size cap: the runner stops keeping lines there, the page
 * reads at most that much. Bigger than any real one (a 1 s sampler writes
 * ~10 kB a line: hours).
 */
#define VN_SAMPLES_MAX (256u << 20)

struct vn_sample_thread {
	int tid;
	int cpu;    /* the CPU it last ran on */
	int node;   /* that CPU's node, -1 if the sampler could not map it */
	char state; /* /proc state letter: 'R' running or runnable, 'S', 'D', ... */
};

struct vn_sample_proc {
	int pid;
	char comm[32];
	/* False when the sampler skipped numa_maps for this line (--mem-every); mem_kb is then 0. */
	bool have_mem;
	double mem_kb[VN_MAX_NODES]; /* from numa_maps, in kB */
	double mem_kb_total;
	unsigned nthreads;
	struct vn_sample_thread *threads;
	unsigned threads_on_node[VN_MAX_NODES];
};

struct vn_sample {
	unsigned long seq;
	double t;        /* seconds since the sampler started (guest monotonic clock) */
	double uptime;   /* guest /proc/uptime; 0 if the line had none */
	double host_t;   /* seconds since the run started by the host's clock when the line came; NAN if none */
	unsigned nnodes; /* highest node id in the line + 1 */
	bool node_online[VN_MAX_NODES];
	double running_per_node[VN_MAX_NODES]; /* workload threads in state R */
	unsigned nprocs;
	struct vn_sample_proc *procs;
	/* Borrowed from json (keys as vn_metrics_parse_kv() names them); NULL for an offline node. */
	struct json_object *vmstat;
	struct json_object *numastat[VN_MAX_NODES];
	struct json_object *meminfo[VN_MAX_NODES];
	double cost_cpu_s, cost_wall_s; /* what producing this line cost the guest */
	struct json_object *json;       /* the whole line; owned */
};

struct vn_samples {
	unsigned n;
	struct vn_sample *v;
	/*
	 * The text ended in an unterminated line that did not parse: the sampler
	 * or the run was cut off mid-write. That line is dropped, not an error,
	 * so an interrupted run still reads.
	 */
	bool truncated;
};

/*
 * Parse the whole text. A line that is not valid JSON or lacks a field of the
 * format is an input error "NAME:LINE: ..." (NAME defaults to "samples").
 * Blank lines are skipped. On error *out is left empty.
 */
int vn_samples_parse(const char *jsonl, const char *name, struct vn_samples *out, struct vn_error *err);
void vn_samples_free(struct vn_samples *s);

/*
 * Virtual time: how far the guest clock's lead over the host's fell below
 * where it stood at the first sample, at its lowest (<= 0): the least of
 * (t - t0) - (host_t - host_t0) over the samples the host stamped. 0 with
 * fewer than two of them.
 */
double vn_samples_lead_drop(const struct vn_samples *s);

/* The process with this pid in the sample, or NULL. */
const struct vn_sample_proc *vn_sample_proc_find(const struct vn_sample *s, int pid);

/*
 * Fractions over a set of processes (npids == 0: every workload process in the
 * sample). NAN when the set holds no memory in this sample (no process found,
 * none mapped anything, or the line carries no memory), so a ">= x" check on
 * it fails.
 */
/* Share of their memory that sits on node. */
double vn_samples_fraction_on_node(const struct vn_sample *s, const int *pids, unsigned npids, unsigned node);
/*
 * Share of their memory that sits on each process's "home" node, the node
 * most of its threads were last on (ties: lowest id); weighted by memory.
 * Processes whose threads map to no node are left out.
 */
double vn_samples_local_fraction(const struct vn_sample *s, const int *pids, unsigned npids);

/* Per node, the mean over samples of running workload threads; avg[nnodes]. */
void vn_samples_avg_running(const struct vn_samples *s, double *avg, unsigned nnodes);

/* Mean and maximum sampler CPU seconds per sample (0 with no samples). */
void vn_samples_cost(const struct vn_samples *s, double *mean_cpu_s, double *max_cpu_s);
