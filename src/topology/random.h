#pragma once

#include <stdint.h>

#include "topology/topology.h"

enum {
	VN_RANDOM_CPULESS = 1 << 0, /* maybe make one node CPU-less */
	VN_RANDOM_MEMLESS = 1 << 1, /* maybe make one node memory-less */
	VN_RANDOM_SLOW = 1 << 2,    /* 1..n-1 CPU-less slow nodes, maybe a CPU-less DRAM node among them */
};

/* A valid topology XML document, fully determined by the arguments. Malloc'd. */
char *vn_topology_random_xml(uint64_t seed, unsigned min_nodes, unsigned max_nodes, unsigned flags);
