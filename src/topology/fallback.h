/*
 * Host-side model of the guest kernel's per-node memory fallback order:
 * build_zonelists() and find_next_best_node() in mm/page_alloc.c.
 *
 * The algorithm changed over time, so each era is a named model. The model
 * only predicts; a booted kernel's "Fallback order for Node N:" lines are
 * the truth it is checked against.
 */
#pragma once

#include <stdbool.h>

#include "topology/topology.h"

enum vn_fallback_model {
	/* v2.6.23 (f0c0b2b808f2) .. v5.14: node_load[node] = load (reset). */
	VN_FALLBACK_RESET,
	/* v5.15 (54d032ced983) .. v5.17: node_load[node] += load; load--. */
	VN_FALLBACK_ACCUMULATE,
	/* v5.18 .. (at least) v6.1, Debian 12's 6.1 included: node_load[node] += 1. */
	VN_FALLBACK_SAME_PENALTY,
	/*
	 * Debian's 6.12: as 5.18, but a node without memory (not in N_MEMORY)
	 * is left out of its own list. The change came after v6.1; which
	 * release first had it was not checked here (fallback.c).
	 */
	VN_FALLBACK_SKIP_MEMORYLESS,
};

#define VN_FALLBACK_DEFAULT VN_FALLBACK_SAME_PENALTY

struct vn_fallback_model_info {
	enum vn_fallback_model model;
	const char *name;
	const char *aliases; /* space separated */
	const char *kernels;
	const char *source;
};

/* All models, for --help and lookups; terminated by a NULL name. */
extern const struct vn_fallback_model_info vn_fallback_models[];

int vn_fallback_model_lookup(const char *name, enum vn_fallback_model *out, struct vn_error *err);
const char *vn_fallback_model_name(enum vn_fallback_model m);
/*
 * A kernel release's MAJOR.MINOR ("6.12.95+deb12-amd64", uname -r; the
 * guest's text): digits, a dot, digits, each at most 999, no sign or space.
 * False when it does not start so.
 */
bool vn_kernel_release_version(const char *release, unsigned *major, unsigned *minor);
/* The era a kernel release falls in: false, *out untouched, when it has no MAJOR.MINOR. */
bool vn_fallback_model_for_release(const char *release, enum vn_fallback_model *out);

struct vn_fallback_opts {
	enum vn_fallback_model model;
	/*
	 * Apply PENALTY_FOR_NODE_WITH_CPUS to nodes that have CPUs. At boot on
	 * x86 this is false: build_all_zonelists() runs from start_kernel()
	 * before trap_init() -> cpu_init() -> numa_add_cpu() puts any CPU into
	 * node_to_cpumask_map, so every node looks headless. Lists rebuilt
	 * later (memory hotplug) see the CPUs.
	 */
	bool cpus_visible;
	/* MAX_NUMNODES = 1 << CONFIG_NODES_SHIFT; Debian's x86 kernel uses 10. */
	unsigned max_numnodes;
	/*
	 * The guest onlines memory as it is added (auto_online_blocks "online*":
	 * MEMORY_HOTPLUG_DEFAULT_ONLINE=y as in Debian's 6.12, or
	 * memhp_default_state=): kmem's add of one node is followed by that
	 * node's online before the next node is added. Only the sequence of
	 * kmem's builds depends on it (vn_tiers_fallback_builds).
	 */
	bool online_on_add;
};

#define VN_FALLBACK_OPTS_DEFAULT \
	((struct vn_fallback_opts){.model = VN_FALLBACK_DEFAULT, .cpus_visible = false, .max_numnodes = 1024})

/* order[n][i]: i-th node in node n's fallback list; len[n] entries. */
struct vn_fallback {
	unsigned nnodes;
	unsigned len[VN_MAX_NODES];
	unsigned char order[VN_MAX_NODES][VN_MAX_NODES];
	bool present[VN_MAX_NODES]; /* a line exists for this node */
	long node_load
		[VN_MAX_NODES]; /* what a computed build leaves in node_load[] for later find_next_best_node() calls */
};

/* Fallback lists for every node, in the order the kernel builds them. */
void vn_fallback_compute(const struct vn_topology *t, const struct vn_fallback_opts *o, struct vn_fallback *out);

/*
 * What one build of the lists sees: the nodes in N_MEMORY (memory[]) and
 * those with a CPU in their cpumask (cpus[]). The kernel rebuilds every
 * node's list at run time (build_all_zonelists(NULL) from online_pages() or
 * offline_pages()) when a zone of a node gains its first pages or loses its
 * last, with the memory state and online CPUs of that moment: on online the
 * node is already in N_MEMORY, on offline it still is (node_states_clear_node
 * runs after the rebuild). CPU-visible preference applies to rebuilds.
 */
struct vn_fallback_state {
	bool memory[VN_MAX_NODES];
	bool cpus[VN_MAX_NODES];
};

/* At boot: memory as the topology's cells; CPUs as o->cpus_visible says (none on x86), absent vCPUs never. */
void vn_fallback_state_boot(const struct vn_topology *t, const struct vn_fallback_opts *o, struct vn_fallback_state *s);
/* Once every node's hotplug memory is online and every hot-pluggable vCPU plugged in. */
void vn_fallback_state_hotplugged(const struct vn_topology *t, struct vn_fallback_state *s);
/* One build from that state (o->cpus_visible is not used: s says). */
void vn_fallback_compute_state(const struct vn_topology *t, const struct vn_fallback_opts *o,
			       const struct vn_fallback_state *s, struct vn_fallback *out);
/*
 * One node's list alone, node_load[] cleared first: what
 * __build_all_zonelists(self) builds for a node coming online (hotadd_init_pgdat()).
 */
void vn_fallback_compute_node(const struct vn_topology *t, const struct vn_fallback_opts *o,
			      const struct vn_fallback_state *s, unsigned node, struct vn_fallback *out);
/* find_next_best_node(node, used) in state s with that node_load[]: the node taken (set in used), or -1. */
int vn_fallback_next_best(const struct vn_topology *t, const struct vn_fallback_opts *o,
			  const struct vn_fallback_state *s, unsigned node, bool *used, const long *node_load);
/* "memory 0-3, cpus 0-3": what a build saw, for messages. Malloc'd. */
char *vn_fallback_state_format(const struct vn_topology *t, const struct vn_fallback_state *s);

/* "Fallback order for Node N: a b c \n" lines, byte for byte as the kernel prints. Malloc'd. */
char *vn_fallback_format(const struct vn_fallback *f);
struct vn_strbuf;
/* Appends node n's list as " A B C" (nothing for an empty one), for messages. */
void vn_fallback_put_list(struct vn_strbuf *b, const struct vn_fallback *f, unsigned n);

/*
 * Collect "Fallback order for Node N:" lines from a kernel log (dmesg or a
 * console log, timestamps allowed). When a node appears several times (lists
 * are rebuilt on hotplug) the first one, the boot-time list, wins.
 */
int vn_fallback_parse_log(const char *log, struct vn_fallback *out, struct vn_error *err);

/*
 * Every build in a kernel log, in order: the boot-time one first, then each
 * rebuild. A build is a run of lines whose node numbers grow (the kernel
 * builds node 0 first); a line for a node not above the last starts the
 * next one. At most max builds are kept; *n says how many there were.
 */
#define VN_FALLBACK_BUILDS_MAX 16
int vn_fallback_parse_builds(const char *log, struct vn_fallback *out, unsigned max, unsigned *n, struct vn_error *err);

/* Describe differences as "Node 3: expected 3 2 1 0, kernel printed 3 2 0 1" lines; NULL if equal. */
char *vn_fallback_diff(const struct vn_fallback *expected, const struct vn_fallback *actual);
