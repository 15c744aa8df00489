/*
 * The NUMA machine shape vnuma builds: nodes with CPUs and memory, the ACPI
 * SLIT distance matrix, and optional HMAT figures. Everything downstream (the
 * domain XML, the fallback model, the fidelity check) reads only this.
 */
#pragma once

#include <stdbool.h>
#include <stdint.h>

#include "topology/limits.h" /* VN_MAX_NODES */
#include "util/error.h"
#include "util/parse.h"

/* SLIT: 10 local, 255 "unreachable". */
#define VN_DISTANCE_LOCAL          10
#define VN_DISTANCE_UNREACHABLE    255
#define VN_DISTANCE_DEFAULT_REMOTE 20

struct vn_node {
	unsigned id;
	struct vn_cpuset cpus;
	unsigned ncpus;
	uint64_t memory; /* bytes; 0 = memory-less node */
	int line;        /* source line, for messages */
};

struct vn_hmat_entry {
	unsigned initiator, target;
	enum { VN_HMAT_LATENCY, VN_HMAT_BANDWIDTH } type;
	uint64_t value; /* ns or MB/s */
	int line;
};

struct vn_topology {
	char *name;
	char *description;
	char *path; /* the file it came from, or NULL */

	/* CPU topology; sockets*dies*cores*threads == total CPUs once validated. */
	bool cpu_topology_given;
	unsigned sockets, dies, cores, threads;

	unsigned nnodes;
	struct vn_node nodes[VN_MAX_NODES];
	unsigned ncpus_total;

	bool distances_given;                         /* false: 10 local / 20 remote */
	uint8_t distance[VN_MAX_NODES][VN_MAX_NODES]; /* [from][to] */

	bool hmat_given;
	unsigned nhmat;
	struct vn_hmat_entry *hmat;

	/* Source lines, kept for messages about whole-file checks. */
	int cpu_line, distances_line;
	int row_line[VN_MAX_NODES];
	unsigned row_len[VN_MAX_NODES];
};

/* Parse (libxml2) and validate a topology file. */
int vn_topology_load(const char *path, struct vn_topology **out, struct vn_error *err);
/* Same, from memory; name is used in messages in place of a path. */
int vn_topology_parse(const char *buf, size_t len, const char *name, struct vn_topology **out, struct vn_error *err);

void vn_topology_free(struct vn_topology *t);
#define _cleanup_topology_ __attribute__((cleanup(vn_topology_freep)))
static inline void vn_topology_freep(struct vn_topology **t)
{
	if (*t)
		vn_topology_free(*t);
}

/*
 * Warnings are not errors: e.g. an asymmetric SLIT, which ACPI allows. Returns
 * a malloc'd, newline-separated list, or NULL when there is nothing to say.
 */
char *vn_topology_warnings(const struct vn_topology *t);

static inline bool vn_node_has_cpus(const struct vn_node *n)
{
	return n->ncpus > 0;
}

static inline bool vn_node_has_memory(const struct vn_node *n)
{
	return n->memory > 0;
}

uint64_t vn_topology_total_memory(const struct vn_topology *t);
/* Node owning a CPU, or -1. */
int vn_topology_cpu_node(const struct vn_topology *t, unsigned cpu);
