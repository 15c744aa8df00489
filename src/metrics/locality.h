/*
 * The locality plugin's counters (plugin/locality-shm.h) as the host reads
 * them: the shared file mapped read-only and checked against the map the
 * host asked for, snapshots folded by CPU node x memory node, deltas, the
 * remote fractions, the modeled memory time, and the boot-time proof that
 * the map is right. The file is written by QEMU, which the guest drives:
 * every header field is checked before a counter is read.
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "plugin/locality-shm.h"
#include "topology/limits.h"
#include "util/error.h"

/*
 * An extra range the host added while the guest ran (a hot-plugged DIMM):
 * unproven, its accesses are unmapped; once proven, those made after the
 * proof (the counts past base, folded by CPU node, the last row for vCPUs of
 * no node) are its node's, so no folded counter ever goes back.
 */
struct vn_loc_extra {
	struct vn_loc_range range; /* as written to the file; hi 0 once retired */
	bool proven;
	uint64_t base[VN_MAX_NODES + 1][VN_LOC_NKINDS];
};

/* What the host asked the plugin to count: node of each range, node of each vCPU. */
struct vn_loc_map {
	unsigned nnodes; /* the matrix's side: node ids are < nnodes */
	unsigned nranges;
	struct vn_loc_range ranges[VN_LOC_MAX_RANGES];
	unsigned ncpus;                     /* vCPUs with a known node */
	uint8_t cpu_node[VN_LOC_MAX_VCPUS]; /* vCPU index -> node */
	unsigned nextra;                    /* extra ranges published to the plugin */
	struct vn_loc_extra extra[VN_LOC_MAX_EXTRA];
};

/* Accesses since the plugin started (or between two snapshots), folded. */
struct vn_loc_counts {
	unsigned nnodes;
	uint64_t *ram;                                   /* [cpu node][mem node][kind]: vn_loc_at() */
	uint64_t unmapped[VN_LOC_NKINDS];                /* RAM outside every range of the map */
	uint64_t io[VN_LOC_NKINDS];                      /* device accesses */
	uint64_t unplaced[VN_LOC_NKINDS];                /* RAM accesses by a vCPU of no known node */
	uint64_t extra[VN_LOC_MAX_EXTRA][VN_LOC_NKINDS]; /* each extra range's, all vCPUs (also in the above) */
	uint64_t total;                                  /* every access counted, summed straight from the file */
};

static inline uint64_t *vn_loc_at(const struct vn_loc_counts *c, unsigned cpu_node, unsigned mem_node, unsigned kind)
{
	return &c->ram[((size_t)cpu_node * c->nnodes + mem_node) * VN_LOC_NKINDS + kind];
}

void vn_loc_counts_init(struct vn_loc_counts *c, unsigned nnodes);
void vn_loc_counts_clear(struct vn_loc_counts *c);

/*
 * Check a counters file's bytes: magic, layout, sizes, and ranges equal to
 * map's. An infrastructure error naming what differs (the file is QEMU's).
 */
int vn_loc_check(const void *buf, size_t len, const struct vn_loc_map *map, struct vn_error *err);

/* Fold a checked file's counters (vn_loc_check() first) into out (initialized for map->nnodes). */
void vn_loc_fold(const void *buf, const struct vn_loc_map *map, struct vn_loc_counts *out);

/* The plugin's file, mapped read-only. */
struct vn_loc_reader;
int vn_loc_open(const char *path, const struct vn_loc_map *map, struct vn_loc_reader **out, struct vn_error *err);
int vn_loc_read(struct vn_loc_reader *r, struct vn_loc_counts *out, struct vn_error *err);
void vn_loc_close(struct vn_loc_reader *r);

/*
 * Hand the running plugin one more range, [lo, hi) for node (or
 * VN_LOC_NODE_NONE: addresses two memories share, never a node's),
 * unproven; its slot in *slot. The plugin tries it before the boot ranges.
 * The file is written through a mapping of its own (the reader's stays
 * read-only). A range that overlaps another extra one, a node out of the
 * map, or no slot left: an input error.
 */
int vn_loc_extra_add(struct vn_loc_reader *r, uint64_t lo, uint64_t hi, uint64_t node, unsigned *slot,
		     struct vn_error *err);
/* The map as the reader now has it, extra ranges included. */
const struct vn_loc_map *vn_loc_reader_map(const struct vn_loc_reader *r);
/* The proof's verdict on a slot: proven, its accesses from now on are its node's. */
int vn_loc_extra_settle(struct vn_loc_reader *r, unsigned slot, bool proven, struct vn_error *err);
/* The slot's DIMM is gone: the plugin stops matching it; its counts stay as they were attributed. */
int vn_loc_extra_retire(struct vn_loc_reader *r, unsigned slot, struct vn_error *err);

/* out = after - before; a counter that went back is an infrastructure error. */
int vn_loc_delta(const struct vn_loc_counts *after, const struct vn_loc_counts *before, struct vn_loc_counts *out,
		 struct vn_error *err);

enum vn_loc_mode { VN_LOC_USER, VN_LOC_KERNEL, VN_LOC_ALL };
/* RAM accesses in the matrix for the mode, and the remote ones (cpu node != mem node). */
uint64_t vn_loc_sum(const struct vn_loc_counts *c, enum vn_loc_mode m, uint64_t *remote);
/* The same for the accesses of one CPU node's vCPUs (one row of the matrix). */
uint64_t vn_loc_sum_row(const struct vn_loc_counts *c, enum vn_loc_mode m, unsigned cpu_node, uint64_t *remote);
/* remote / all for the mode; NAN with no access. */
double vn_loc_remote_fraction(const struct vn_loc_counts *c, enum vn_loc_mode m);
/* Of one CPU node's accesses; NAN with none (or no such node). */
double vn_loc_remote_fraction_row(const struct vn_loc_counts *c, enum vn_loc_mode m, unsigned cpu_node);

/*
 * Modeled memory time in seconds: each matrix access weighted by its pair's
 * latency in ns (lat_ns[cpu node * nnodes + mem node]).
 */
double vn_loc_model_s(const struct vn_loc_counts *c, const double *lat_ns);

/* One memory tier's (or any group of memory nodes') share of the matrix. */
struct vn_loc_group {
	uint64_t accesses, user; /* every kind, and user loads and stores, by every CPU node */
	double model_s;          /* those accesses weighted as vn_loc_model_s weighs them */
};

/*
 * The matrix grouped by memory node: group_of[mem node] is its group
 * (< ngroups), or -1 for none (a memory-less node is in no tier); those go
 * to *none (may be NULL). Groups and none together sum to the matrix.
 */
void vn_loc_by_group(const struct vn_loc_counts *c, const double *lat_ns, const int *group_of, unsigned ngroups,
		     struct vn_loc_group *out, struct vn_loc_group *none);

/*
 * The proof for one node: over a window where the guest wrote memory bound
 * to node (d = after - before), user stores to that node must be at least
 * min_accesses and at least VN_LOC_PROOF_SHARE of all user RAM stores
 * (unmapped ones included). Else an infrastructure error with the figures:
 * the map is wrong and no locality figure may be given. Stores, because a
 * load may rightly read memory of another node: an untouched page reads
 * the kernel's shared zero page, wherever the kernel put it.
 */
#define VN_LOC_PROOF_SHARE 0.9
int vn_loc_proof_judge(const struct vn_loc_counts *d, unsigned node, uint64_t min_accesses, struct vn_error *err);
/* The same for a DIMM's extra ranges: their own slots' user stores, not the node's (it may have a boot cell too). */
int vn_loc_proof_judge_extra(const struct vn_loc_counts *d, const unsigned *slots, unsigned nslots,
			     uint64_t min_accesses, struct vn_error *err);
