/*
 * Host-side model of the guest kernel's memory tiers and demotion targets:
 * memory_tier_init(), set_node_memory_tier() and establish_demotion_targets()
 * in mm/memory-tiers.c, with kmem's abstract distance for slow memory
 * (drivers/dax/kmem.c). Like the fallback model, it only predicts: the
 * guest's /sys/devices/virtual/memory_tiering is the truth it is checked
 * against (docs/tiering.md).
 */
#pragma once

#include <stdbool.h>

#include "topology/fallback.h"
#include "topology/topology.h"

/* include/linux/memory-tiers.h (6.1): a tier spans 128 of abstract distance; its id is start >> 7. */
#define VN_MEMTIER_CHUNK_BITS     7
#define VN_MEMTIER_ADISTANCE_DRAM ((4 << VN_MEMTIER_CHUNK_BITS) + (1 << (VN_MEMTIER_CHUNK_BITS - 1)))
/* MEMTIER_DEFAULT_DAX_ADISTANCE, drivers/dax/kmem.c (6.1). */
#define VN_MEMTIER_ADISTANCE_DAX (VN_MEMTIER_ADISTANCE_DRAM * 5)
/* Tiers a model can give: two on 6.1 (DRAM, kmem); on 6.12 HMAT can give every node its own. */
#define VN_TIERS_MAX VN_MAX_NODES

enum vn_tier_model {
	/* v6.1 (memory-tiers.c is new there), Debian 12's: boot memory is DRAM, kmem's is 5 x DRAM. */
	VN_TIER_MODEL_6_1,
	/* v6.12, bookworm-backports': each node's abstract distance from HMAT where it is usable. */
	VN_TIER_MODEL_6_12,
};

#define VN_TIER_MODEL_DEFAULT VN_TIER_MODEL_6_1

struct vn_tier_model_info {
	enum vn_tier_model model;
	const char *name;
	const char *aliases; /* space separated */
	const char *kernels;
	const char *source;
	unsigned major, minor; /* the release it was read from: the oldest it is picked for */
};

/* All models, for --help and lookups; terminated by a NULL name. */
extern const struct vn_tier_model_info vn_tier_models[];

int vn_tier_model_lookup(const char *name, enum vn_tier_model *out, struct vn_error *err);
const char *vn_tier_model_name(enum vn_tier_model m);
/* The model for a kernel release ("6.12.95+deb12-amd64"): the newest read from it or an older one. */
int vn_tier_model_for_release(const char *release, enum vn_tier_model *out, struct vn_error *err);

/* Memory in the node's SRAT cell at boot: not slow memory, which kmem onlines after boot. */
static inline bool vn_node_has_boot_memory(const struct vn_node *n)
{
	return n->memory > 0 && n->memory_kind == VN_MEMORY_DRAM;
}

static inline bool vn_node_is_slow(const struct vn_node *n)
{
	return n->memory_kind != VN_MEMORY_DRAM;
}

bool vn_topology_has_slow_memory(const struct vn_topology *t);

/* One memory tier: /sys/devices/virtual/memory_tiering/memory_tier<id>. */
struct vn_tier {
	int id;              /* adistance_start >> MEMTIER_CHUNK_BITS */
	int adistance_start; /* rounded down to a chunk */
	bool top;            /* node_is_toptier(): promotion never comes from here */
	bool nodes[VN_MAX_NODES];
	bool lower[VN_MAX_NODES]; /* lower_tier_mask: every node of the tiers below */
};

/* Tiers in the kernel's list order (fastest first) and each node's node_demotion[].preferred. */
struct vn_tiers {
	enum vn_tier_model model;
	unsigned nnodes;
	unsigned ntiers;
	struct vn_tier tier[VN_TIERS_MAX];
	int tier_of[VN_MAX_NODES]; /* index into tier[]; -1: no memory, so in no tier */
	bool preferred[VN_MAX_NODES][VN_MAX_NODES];
	unsigned npreferred[VN_MAX_NODES];
	int distance[VN_MAX_NODES]; /* the preferred nodes' distance (all share it), or -1 */
	int adistance[VN_MAX_NODES];
	bool hmat; /* 6.12: HMAT's abstract distance algorithm registered (hmat_set_default_dram_perf()) */
};

/* 6.12's abstract distance for every node with memory (tiers-hmat.c); sets out->adistance and out->hmat. */
void vn_tiers_adistance_6_12(const struct vn_topology *t, const bool *boot_cpus, struct vn_tiers *out);

/*
 * The tiers and demotion targets once boot is over: DRAM nodes as booted,
 * every slow node onlined by kmem, every boot CPU online. The last
 * establish_demotion_targets() runs after the last zonelist rebuild, whose
 * node_load[] breaks its find_next_best_node() ties.
 */
void vn_tiers_compute(const struct vn_topology *t, enum vn_tier_model m, struct vn_tiers *out);

/* "memory_tier4: 0-1" lines, one per tier, as the tier's nodelist reads in sysfs. Malloc'd. */
char *vn_tiers_format_sysfs(const struct vn_tiers *tr);
/* The sysfs lines, then one "Node N: demotes to A-B (lower tiers: ...)" line per node. Malloc'd. */
char *vn_tiers_format(const struct vn_tiers *tr);
/* A node set as the kernel's %*pbl prints it ("0-1,3"; "" for none). Malloc'd. */
char *vn_tiers_nodelist(const bool *set, unsigned nnodes);

/* One memory_tierN the guest shows: its id and its nodelist file's first line. */
struct vn_tier_seen {
	int id;
	const char *nodelist;
};

/*
 * The guest's tiers against the model: NULL when they are the same tiers
 * with the same nodes, else "expected (model): ... guest: ..." with both sides
 * in the sysfs form (malloc'd). seen in any order; nodelists as the guest
 * wrote them (trailing whitespace ignored), so a hostile one is only unequal.
 */
char *vn_tiers_diff(const struct vn_tiers *want, const struct vn_tier_seen *seen, unsigned nseen);

/* One build of the fallback lists a tiered boot prints, and what it saw. */
struct vn_tiers_build {
	char label[160];
	struct vn_fallback f;
};

/* Builds a tiered boot prints, at most: the boot's and two per slow node. */
#define VN_TIERS_BUILDS_MAX 64

/*
 * The builds a boot of t prints (at most max): the boot's; for each slow
 * node, kmem's build of that node's list alone (only it present in f);
 * then for each, the rebuild of every list as kmem onlines it (with
 * o->online_on_add, each node's rebuild right after its own build). The order
 * of the slow nodes is read from got (the printed builds, single-node ones
 * apart), ascending where got does not say. Returns how many.
 */
unsigned vn_tiers_fallback_builds(const struct vn_topology *t, const struct vn_fallback_opts *o,
				  const struct vn_fallback *got, unsigned ngot, struct vn_tiers_build *out,
				  unsigned max);

/*
 * A tiered boot's kernel log against the model: every build it printed
 * against vn_tiers_fallback_builds()'s, and their number. *diff NULL when
 * equal, else "LABEL: Node N: expected ..., kernel printed ..." lines.
 */
int vn_tiers_fallback_check(const char *dmesg, const struct vn_topology *t, const struct vn_fallback_opts *fo,
			    char **diff, struct vn_error *err);
