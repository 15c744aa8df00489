/*
 * One snapshot of a guest's NUMA state (vnuma collect, and a run's before/
 * and after/), typed: what collect read from the guest, parsed, each part
 * with whether it was read and why not. The files collect writes are for
 * people and tools; within vnuma this struct is the interface.
 */
#pragma once

#include <json-c/json.h>
#include <stdbool.h>
#include <stdint.h>

#include "topology/fallback.h"
#include "topology/limits.h"
#include "util/error.h"

/* The system's files, saved under these names (snapshot.json aside). */
enum vn_snap_sys { VN_SNAP_VMSTAT, VN_SNAP_CMDLINE, VN_SNAP_VERSION, VN_SNAP_NUMACTL, VN_SNAP_DMESG, VN_SNAP_NSYS };
/* Each node's, saved as nodeN-NAME. */
enum vn_snap_nodefile {
	VN_SNAP_NUMASTAT,
	VN_SNAP_MEMINFO,
	VN_SNAP_NODE_VMSTAT,
	VN_SNAP_DISTANCE,
	VN_SNAP_CPULIST,
	VN_SNAP_NNODE
};

/* A snapshot's counter file as collect saves it: /proc/vmstat is a few kB. */
#define VN_SNAP_COUNTERS_MAX (1u << 20)

/* One file of the snapshot. */
struct vn_snap_part {
	char *path; /* DIR/NAME, where it is saved: messages name it */
	char *text; /* the guest's text, NUL-free; NULL: not read, and why says why */
	char *why;
	/* vmstat and numastat: every line "name value" as an object of integers, or NULL and bad says why. */
	json_object *counters;
	char *bad;
};

struct vn_snap_node {
	unsigned id;
	struct vn_snap_part part[VN_SNAP_NNODE];
	unsigned ndistance; /* the distance row, as far as it parses */
	unsigned distance[VN_MAX_NODES];
};

struct vn_snapshot {
	char *dir;
	int64_t time; /* when collect took it (0: loaded from files) */
	struct vn_snap_part sys[VN_SNAP_NSYS];
	unsigned nnodes;
	struct vn_snap_node *nodes; /* the guest's possible nodes, in order */
	/* dmesg's boot-time fallback lists (vn_fallback_parse_log); fallback_why when dmesg gave none. */
	struct vn_fallback *fallback;
	char *fallback_why;
};

/* The file a part is saved as: "vmstat", "numactl-H"; "numastat" (nodeN- before it). */
const char *vn_snapshot_sys_name(enum vn_snap_sys i);
const char *vn_snapshot_node_name(enum vn_snap_nodefile i);

/* Starts s for DIR with nnodes nodes of these ids, every part unread. */
void vn_snapshot_init(struct vn_snapshot *s, const char *dir, const unsigned *ids, unsigned nnodes);
/* A part's text, taken (NULL: not read, why says why); parsed as its kind is. */
void vn_snapshot_set_sys(struct vn_snapshot *s, enum vn_snap_sys i, char *text, const char *why);
void vn_snapshot_set_node(struct vn_snapshot *s, unsigned k, enum vn_snap_nodefile i, char *text, const char *why);

/*
 * A snapshot from the files in DIR (vnuma report, tests): nnodes nodes 0..
 * (0: as many as have a nodeN-distance file). A missing or unreadable file
 * is a part not read, never an error.
 */
void vn_snapshot_load(const char *dir, unsigned nnodes, struct vn_snapshot *s);

/* Node id's part, or NULL when the snapshot has no such node. */
const struct vn_snap_part *vn_snapshot_node_part(const struct vn_snapshot *s, unsigned id, enum vn_snap_nodefile i);

/* A part's text, or an infrastructure error: a snapshot the run took that cannot be read. */
int vn_snapshot_text(const struct vn_snap_part *p, const char **text, struct vn_error *err);
/* A counter part's counters (borrowed), or an infrastructure error saying why there are none. */
int vn_snapshot_counters(const struct vn_snap_part *p, json_object **out, struct vn_error *err);

void vn_snapshot_clear(struct vn_snapshot *s);
