/*
 * The NUMA machine shape vnuma builds: nodes with CPUs and memory, the ACPI
 * SLIT distance matrix, and optional HMAT figures. Everything downstream (the
 * domain XML, the fallback model, the fidelity check) reads only this.
 */
#pragma once

#include <stdbool.h>
#include <stdint.h>

#include "topology/limits.h" /* VN_MAX_NODES */
#include "util/cleanup.h"
#include "util/error.h"
#include "util/parse.h"

/* SLIT: 10 local, 255 "unreachable". */
#define VN_DISTANCE_LOCAL          10
#define VN_DISTANCE_UNREACHABLE    255
#define VN_DISTANCE_DEFAULT_REMOTE 20

/*
 * PCI devices a node owns: the guest finds them behind a PCIe expander bus
 * whose ACPI _PXM names the node, so their sysfs numa_node is that node.
 * A handful per node is what I/O-locality tests need; the caps keep the
 * expander buses within q35's 256 PCI bus numbers and pcie-root's slots.
 */
#define VN_NODE_MAX_DEVICES     4
#define VN_TOPOLOGY_MAX_DEVICES 16
#define VN_DISK_MIN_BYTES       (UINT64_C(1) << 20)
#define VN_DISK_MAX_BYTES       (UINT64_C(1) << 40)

/*
 * Memory a node can take at run time (`vnuma hotplug`), as ACPI DIMMs. Linux
 * onlines hot-added memory in whole memory blocks, 128 MiB on x86 below 64 GiB
 * of RAM, so a partial block would never show up in the guest.
 */
#define VN_HOTPLUG_BLOCK_BYTES (UINT64_C(128) << 20)
#define VN_HOTPLUG_MAX_BYTES   (UINT64_C(64) << 30)

enum vn_device_kind {
	VN_DEVICE_DISK, /* virtio-blk on a sparse raw image in the guest dir */
	VN_DEVICE_NIC,  /* virtio-net, user-mode networking (no host bridge) */
};

struct vn_device {
	enum vn_device_kind kind;
	uint64_t size; /* disk: bytes, a whole number of MiB */
	bool root;     /* disk: where a guest booted with --image has its root disk (then the image, not size) */
	int line;
};

/* memory-kind=: DRAM is boot memory; PMEM and CXL arrive after boot through device-dax and kmem (docs/tiering.md). */
enum vn_memory_kind { VN_MEMORY_DRAM, VN_MEMORY_PMEM, VN_MEMORY_CXL };

struct vn_node {
	unsigned id;
	struct vn_cpuset cpus;
	unsigned ncpus;
	uint64_t memory; /* bytes; 0 = memory-less node */
	enum vn_memory_kind memory_kind;
	int line; /* source line, for messages */
	unsigned ndevices;
	struct vn_device devices[VN_NODE_MAX_DEVICES];
	uint64_t hotplug_memory;       /* bytes that may be hot-added at run time; 0 = none */
	struct vn_cpuset hotplug_cpus; /* subset of cpus absent at boot, hot-pluggable later */
	unsigned nhotplug_cpus;
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
	unsigned ndevices_total;
	uint64_t hotplug_memory_total; /* sum of the nodes' hotplug memory */
	unsigned nhotplug_cpus_total;

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
/* Same, handing back the bytes it parsed (malloc'd, *len of them): a copy that is what was loaded. */
int vn_topology_load_text(const char *path, struct vn_topology **out, char **text, size_t *len, struct vn_error *err);
/* Same, from memory; name is used in messages in place of a path. */
int vn_topology_parse(const char *buf, size_t len, const char *name, struct vn_topology **out, struct vn_error *err);

void vn_topology_free(struct vn_topology *t);
VN_DEFINE_CLEANUP(struct vn_topology *, vn_topology_free);
#define _cleanup_topology_ _cleanup_(vn_topology_freep)

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

/* The CPUs a node has at boot: its cpus less those declared hot-pluggable. */
static inline struct vn_cpuset vn_node_boot_cpus(const struct vn_node *n)
{
	struct vn_cpuset s = n->cpus;

	for (unsigned w = 0; w < sizeof(s.bits) / sizeof(s.bits[0]); w++)
		s.bits[w] &= ~n->hotplug_cpus.bits[w];
	return s;
}

uint64_t vn_topology_total_memory(const struct vn_topology *t);
/* "disk" / "nic", as the topology file spells the element. */
const char *vn_device_kind_name(enum vn_device_kind k);
/* Node owning a CPU, or -1. */
int vn_topology_cpu_node(const struct vn_topology *t, unsigned cpu);
