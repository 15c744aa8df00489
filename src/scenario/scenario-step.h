/* One step of a scenario as parsed: its workload, where it runs, and what happens to it while it runs. */
#pragma once

#include <stdbool.h>
#include <stdint.h>

#include "topology/limits.h"

enum vn_placement_policy {
	VN_PLACE_NONE,        /* default policy, no binding */
	VN_PLACE_CPUNODEBIND, /* numactl --cpunodebind=NODES (memory: default policy) */
	VN_PLACE_MEMBIND,     /* numactl --cpunodebind=CPU_NODES --membind=NODES */
	VN_PLACE_PREFERRED,   /* numactl --cpunodebind=CPU_NODES --preferred=NODE */
	VN_PLACE_INTERLEAVE,  /* numactl --cpunodebind=CPU_NODES --interleave=NODES */
};

struct vn_scn_placement {
	enum vn_placement_policy policy;
	unsigned nnodes, nodes[VN_MAX_NODES]; /* the policy's nodes */
	/* CPUs to run on for membind/preferred/interleave; empty = anywhere. */
	unsigned ncpu_nodes;
	unsigned cpu_nodes[VN_MAX_NODES];
};

/* Memory or vCPUs into (or memory out of) a node at run time, as `vnuma hotplug` does it. */
struct vn_scn_hotplug {
	unsigned node;
	uint64_t memory; /* bytes, whole 128M blocks; 0: vCPUs */
	unsigned cpus;
	bool remove, online_kernel; /* memory only; online_kernel rather than online_movable */
};

/* "at t seconds, move this fraction of the step's processes to node N's CPUs",
 * or (is_hotplug) "at t seconds, plug this into a node". */
struct vn_scn_action {
	double at_s;
	double fraction;  /* 0 < f <= 1, of the step's processes, first ones first */
	unsigned to_node; /* sched_setaffinity to the node's CPUs; memory policy untouched */
	bool is_hotplug;
	struct vn_scn_hotplug hotplug;
};

/* A "suite" step's test suite (docs/suites.md): what it runs, and how its output is read. */
enum vn_scn_suite_format { VN_SCN_SUITE_KTAP, VN_SCN_SUITE_LTP, VN_SCN_SUITE_EXIT };

struct vn_scn_suite {
	enum vn_scn_suite_format format;
	char **command;   /* NULL-terminated; each test's name is added to it; NULL for LTP */
	char **tests;     /* NULL-terminated, each run alone; NULL: the command once */
	unsigned ntests;  /* at most VN_SCN_SUITE_TESTS_MAX */
	char *ltp;        /* LTP's install directory in the guest (LTPROOT); LTP only */
	double timeout_s; /* each run of the command (a test), then it is killed and the next one runs */
	char *known;      /* the known-failure list (suite/known.h), resolved against the scenario's file; or NULL */
};

struct vn_scn_step {
	char *name; /* unique; used in file names and in assertions */
	char *workload; /* stream, memfollow, anon-cow-rand, groupfair, multi-instance, tiermove, cmd, suite; NULL: a hotplug step */
	struct vn_scn_suite *suite; /* "suite" only */
	/* A step that runs no workload: it plugs this in after the steps before it ended. */
	bool is_hotplug;
	struct vn_scn_hotplug hotplug;
	char **argv; /* extra workload arguments, or the command for "cmd"; NULL-terminated */
	struct vn_scn_placement placement;
	unsigned processes; /* instances started (default 1) */
	unsigned threads;   /* 0: the workload's default; else passed as --threads */
	uint64_t size;      /* bytes, 0: the workload's default; else passed as --size */
	double duration_s;  /* 0: the workload's default; else passed as --duration */
	char *cgroup;       /* cgroup (a name from "cgroups") to start the processes in, or NULL */
	bool background;    /* false: the next step starts when this one ended */
	unsigned nactions;
	struct vn_scn_action *actions;
};
