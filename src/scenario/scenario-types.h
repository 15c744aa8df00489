/* A scenario as parsed (scenario.h parses it): its settings and variants; its steps and asserts have a header each. */
#pragma once

#include <stdbool.h>

#include "scenario/scenario-assert.h"
#include "scenario/scenario-step.h"

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
	int demotion_enabled;          /* 0: the scenario's; 1 true, -1 false */
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
	/* /sys/kernel/mm/numa/demotion_enabled (sysfs, not a sysctl): 0 leave, 1 true, -1 false */
	int demotion_enabled;
	unsigned nhugetlb;
	struct vn_scn_hugetlb *hugetlb;
	char **cgroups;           /* NULL-terminated names created under /sys/fs/cgroup */
	char **with;              /* NULL-terminated host Debian packages added to the guest image */
	char **share, **files;    /* NULL-terminated --share and --file specs (testbed/share.h), relative to the file */
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
