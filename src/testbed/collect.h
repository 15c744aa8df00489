/* One snapshot of the guest's NUMA state (collect.c). */
#pragma once

#include "guest/agent.h"

/*
 * One snapshot into dir: vmstat, per-node numastat/meminfo/vmstat/distance/
 * cpulist, numactl -H, dmesg, cmdline, version, and snapshot.json holding
 * all of it parsed.
 */
int vn_testbed_collect(struct vn_agent *a, const char *dir, struct vn_error *err);
