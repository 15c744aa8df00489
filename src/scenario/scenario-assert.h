/* One assertion of a scenario as parsed: its type and the fields each type reads (assert.c judges them). */
#pragma once

#include <stdbool.h>

#include "topology/fallback.h"

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
	VN_ASSERT_DEMOTION_TARGETS, /* a tiermove step's pages off its bound node only on the model's demotion targets */
	VN_ASSERT_PROMOTION,        /* a tiermove step's lower-tier hot pages reach the top tier in each phase */
	VN_ASSERT_NO_DEMOTION,      /* a tiermove step under reclaim with demotion_enabled false demotes nothing */
	VN_ASSERT_PROMOTION_RATE,   /* a tiermove step's pgpromote_success per phase within the rate limit */
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
	char *step;       /* MEMORY_FOLLOWS, RUNNING_PER_NODE, METRIC, MEMORY_ON_NODE, the tier types */
	char *path;       /* METRIC: dotted path into the step's result JSON, e.g. kernels.triad.best_mbps */
	double fraction;  /* MEMORY_FOLLOWS, MEMORY_ON_NODE, PROMOTION */
	double within_s;  /* MEMORY_FOLLOWS: seconds after the step's last move action */
	double tolerance; /* RUNNING_PER_NODE */
	unsigned node;    /* MEMORY_ON_NODE; DEMOTION_TARGETS: "from", the node the step is bound to */
	char *metric;     /* CHANGE: a metric name of result.json (docs/results.md), e.g. vmstat.numa_hint_faults */
	char *variant;    /* CHANGE: the variant judged against the base; NULL: every one but the base */
	bool significant; /* CHANGE: fail only when the change is also significant (Welch p < 0.05) */
	bool lower_ok;    /* DEMOTION_TARGETS: a lower-tier node is fine too (lower_tier_mask, targets full) */
	unsigned mode;    /* PROMOTION: the kernel.numa_balancing the step must have run under (1, 2); 0 any */
	int measure, cpu_node; /* LOCALITY: assert.c's locality_measures[measure]; cpu_node's CPUs only (-1: all) */
};
