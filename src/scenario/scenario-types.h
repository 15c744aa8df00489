/* A scenario as parsed (scenario.h parses it): its steps, actions, asserts and variants. */
#pragma once

#include <stdbool.h>
#include <stdint.h>

#include "topology/fallback.h"
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

struct vn_scn_step {
	char *name;     /* unique; used in file names and in assertions */
	char *workload; /* stream, memfollow, anon-cow-rand, groupfair, multi-instance, cmd; NULL: a hotplug step */
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

enum vn_scn_op { VN_OP_LT, VN_OP_LE, VN_OP_GT, VN_OP_GE, VN_OP_EQ, VN_OP_NE };

enum vn_scn_assert_type {
	VN_ASSERT_FALLBACK,         /* boot-time fallback lines equal the named model */
	VN_ASSERT_DISTANCES,        /* guest distances equal the topology */
	VN_ASSERT_COUNTER,          /* vmstat delta (after - before) OP value */
	VN_ASSERT_RATIO,            /* delta(numerator) / delta(denominator) OP value */
	VN_ASSERT_MEMORY_FOLLOWS,   /* >= fraction of the step's memory on its CPUs' node within within_s */
	VN_ASSERT_RUNNING_PER_NODE, /* avg running step threads per node <= node CPUs + tolerance */
	VN_ASSERT_METRIC,           /* a workload result field (dotted path) OP value */
	VN_ASSERT_MEMORY_ON_NODE,   /* >= fraction of the step's memory ended on node */
	VN_ASSERT_CHANGE,           /* matrix: a metric's %change against the base variant OP value */
	VN_ASSERT_LOCALITY,         /* the steps' remote fraction (user, kernel, all) or modeled time OP value */
	VN_ASSERT_NTYPES,           /* not a type: how many there are (scenario/schema-priv.h, vn_assert_types) */
};

struct vn_scn_assert {
	char *name; /* for JUnit; default derived from the type */
	enum vn_scn_assert_type type;
	enum vn_fallback_model model; /* FALLBACK */
	char *counter;                /* COUNTER; RATIO numerator */
	char *denominator;            /* RATIO */
	enum vn_scn_op op;
	double value;     /* COUNTER, RATIO, METRIC threshold */
	char *step;       /* MEMORY_FOLLOWS, RUNNING_PER_NODE, METRIC, MEMORY_ON_NODE */
	char *path;       /* METRIC: dotted path into the step's result JSON, e.g. kernels.triad.best_mbps */
	double fraction;  /* MEMORY_FOLLOWS, MEMORY_ON_NODE */
	double within_s;  /* MEMORY_FOLLOWS: seconds after the step's last move action */
	double tolerance; /* RUNNING_PER_NODE */
	unsigned node;    /* MEMORY_ON_NODE */
	char *metric;     /* CHANGE: a metric name of result.json (docs/results.md), e.g. vmstat.numa_hint_faults */
	char *variant;    /* CHANGE: the variant judged against the base; NULL: every one but the base */
	bool significant; /* CHANGE: fail only when the change is also significant (Welch p < 0.05) */
	int measure, cpu_node; /* LOCALITY: assert.c's locality_measures[measure]; cpu_node's CPUs only (-1: all) */
};

struct vn_scn_sysctl {
	char *key, *value; /* kernel.numa_balancing, "1" */
};

/* One column of a matrix run: what it changes against the scenario. */
struct vn_scn_variant {
	char *name;   /* a directory name in the result group */
	char *kernel; /* NULL: the scenario's */
	char *append; /* NULL: the scenario's */
	char *arch;   /* NULL: the scenario's */
	unsigned nsysctls;
	struct vn_scn_sysctl *sysctls; /* set over the scenario's (same key: the variant's wins) */
	int virtual_time;              /* 0: the scenario's; 1 virtual time (-icount), -1 real time */
	unsigned nstep_args;
	struct vn_scn_step_args {
		char *step;  /* a workload step (not a "cmd" one) */
		char **argv; /* its "args" in this variant, NULL-terminated */
	} * step_args;
};

struct vn_scn_hugetlb {
	unsigned node, pages; /* pages: 2 MiB ones */
};

struct vn_scenario {
	char *path, *name, *description;
	char *topology; /* as written: a path (relative to the scenario file) or a name */
	char *kernel;   /* NULL: stock */
	char *append;   /* extra kernel arguments */
	char *arch;     /* the guest's architecture (util/arch.h name); NULL: the host's */
	bool cold;      /* "boot": "cold": always boot, never restore a booted snapshot (testbed/warm.h) */
	unsigned nsysctls;
	struct vn_scn_sysctl *sysctls;
	char *thp; /* always, madvise, never; NULL: leave */
	unsigned nhugetlb;
	struct vn_scn_hugetlb *hugetlb;
	char **cgroups;           /* NULL-terminated names created under /sys/fs/cgroup */
	char **with;              /* NULL-terminated host Debian packages added to the guest image */
	char **tracepoints;       /* NULL-terminated "subsys:event" names captured during the steps */
	char *image;              /* a guest image recipe name (guest-images/NAME.json), or NULL: the initramfs */
	double sample_interval_s; /* default 1 */
	double timeout_s;         /* whole run, default 900 */
	unsigned repeats;         /* runs of each variant (default 1) */
	unsigned nvariants;       /* 0: one run of the scenario as it is */
	struct vn_scn_variant *variants;
	double quick_scale; /* --quick multiplies durations, sizes and action times (default 0.25) */
	bool virtual_time;  /* guest time by instructions executed (QEMU -icount, TCG), not host time */
	bool locality;      /* count accesses by CPU node x memory node (docs/locality.md); forces TCG */
	unsigned nsteps;
	struct vn_scn_step *steps;
	unsigned nasserts;
	struct vn_scn_assert *asserts;
};
