/* One snapshot of the guest's NUMA state (collect.c). */
#pragma once

#include "guest/agent-client.h"

/*
 * One snapshot into *snap (testbed/snapshot.h; zeroed or a previous one,
 * cleared first) and, for people and tools, into dir: vmstat, per-node
 * numastat/meminfo/vmstat/distance/cpulist, numactl -H, dmesg, cmdline,
 * version, and snapshot.json holding all of it parsed. On an error *snap is
 * left cleared.
 */
struct vn_snapshot;
int vn_testbed_collect(struct vn_agent *a, const char *dir, struct vn_snapshot *snap, struct vn_error *err);
