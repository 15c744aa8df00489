/*
 * Locality accounting on a booted topology (locality.c): the address map the
 * plugin is given, the -plugin argument that loads it, and the boot-time proof
 * that the map is right. docs/locality.md says why the map is what it is.
 */
#pragma once

#include "guest/agent.h"
#include "metrics/locality.h"
#include "testbed/hotplug-guest.h"
#include "util/strbuf.h"
#include "topology/tiers.h"
#include "topology/topology.h"
#include "util/error.h"

/* The plugin, in vnuma's plugin dir (util/paths.h). */
#define VN_LOCALITY_PLUGIN "vnuma-locality.so"

/*
 * The map for QEMU 7.2 with libvirt's one memory backend per cell: cell i's
 * backend is the i-th RAM block (offset base_i, the cells before it summed),
 * and mapped at base_i in the machine's RAM container, so the plugin API's
 * address of its byte o is 2 * base_i + o. A slow node's NVDIMM backend is
 * the next block after the cells and NVDIMMs before it, its region at 0: its
 * address is its ram_addr. NVDIMMs come first in the map (the plugin takes
 * the first range holding an address) and stand for their node; a slow
 * node's stand-in cell is not in it. Assumed here, proven at boot.
 * vCPU v's node is the cell holding CPU v.
 */
void vn_testbed_locality_map(const struct vn_topology *t, struct vn_loc_map *map);

/*
 * Whether the plugin can count t: not when a slow node's NVDIMM shares map
 * addresses with a cell of boot memory, which stand-ins as large as
 * vn_domain_standin_bytes() allows could not avoid (docs/locality.md,
 * "Tiered shapes"). An input error naming both nodes and the addresses.
 */
int vn_testbed_locality_supported(const struct vn_topology *t, struct vn_error *err);

/* -plugin's value that loads the plugin counting into guest_dir's VN_GUEST_LOCALITY: malloc'd. */
int vn_testbed_locality_arg(const struct vn_topology *t, const char *guest_dir, char **out, struct vn_error *err);

/*
 * The model's latency of each node pair, lat_ns[cpu node * nnodes + mem
 * node]: the topology's HMAT access latency where it gives the pair (or,
 * failing that, the pair the other way round), else VN_LOCALITY_BASE_NS
 * scaled by the SLIT distance over 10 (local = 10).
 */
#define VN_LOCALITY_BASE_NS 100.0
void vn_testbed_locality_latency(const struct vn_topology *t, double *lat_ns);

/*
 * The memory tiers of t by tier model m (topology/tiers.h: the booted
 * kernel's) as groups of memory nodes for vn_loc_by_group: group_of[node] the
 * index of its tier (fastest first), -1 for a node with no memory;
 * ids[index] the tier's sysfs id (memory_tier<id>). Returns the count.
 */
unsigned vn_testbed_locality_tiers(const struct vn_topology *t, enum vn_tier_model m, int *group_of, int *ids);

/* What the proof saw, one line per node ("node 1: 6913024 of 6920012 user accesses"). */
struct vn_locality_proof {
	unsigned nproven;
	char *report; /* malloc'd */
};

/*
 * Prove the map on a running guest: for each node with memory, the guest runs
 * libdir's vnuma-wl-stream under numactl --membind=N, and the counters (read
 * through r) must move on node N and only there (vn_loc_proof_judge). Any
 * node that fails is an infrastructure error saying no locality figures can
 * be given.
 */
int vn_testbed_locality_prove(struct vn_agent *a, struct vn_loc_reader *r, const struct vn_topology *t,
			      const char *libdir, struct vn_locality_proof *out, struct vn_error *err);

/*
 * A DIMM's plugin range [lo, hi) cut where the boot ranges of m begin and
 * end: pieces no boot range holds are node's, the others VN_LOC_NODE_NONE
 * (in QEMU 7.2 a DIMM's addresses can be a cell's too: docs/locality.md).
 * At most max pieces into out; their count.
 */
unsigned vn_testbed_locality_pieces(const struct vn_loc_map *m, uint64_t lo, uint64_t hi, uint64_t node,
				    struct vn_loc_range *out, unsigned max);

/* The extra ranges a DIMM took: all of them (to retire on unplug), own the first nown's indices into slots. */
struct vn_locality_dimm {
	unsigned nslots, nown;
	unsigned slots[VN_LOC_MAX_EXTRA];
};

/*
 * A DIMM plugged into a counting guest (plan: where the hotplug found it
 * lies, or why not) joins the map: its range is handed to the running
 * plugin, the parts a boot cell shares as nobody's (unmapped), the rest as
 * its node's once proven like a boot cell, with the guest (through sh)
 * writing memory bound to its node, where it is the newest and highest zone:
 * the DIMM's own slots must take the stores. What the proof saw is appended
 * to rep. 0 when proven; else an error saying why, and its accesses stay
 * unmapped (never another node's).
 */
int vn_testbed_locality_dimm(struct vn_loc_reader *r, vn_hotplug_sh_fn sh, void *sh_data, const char *libdir,
			     unsigned node, const struct vn_hotplug_plan *plan, struct vn_strbuf *rep,
			     struct vn_locality_dimm *out, struct vn_error *err);
