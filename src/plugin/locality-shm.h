/*
 * The counters file the locality plugin (locality.c, inside QEMU) shares with
 * the host (metrics/locality.c): a header, then one block of counters per
 * vCPU. The plugin maps it read-write and each vCPU thread is the only writer
 * of its own block; the host maps it read-only and reads it while the guest
 * runs, so no lock, no syscall and no guest involvement. Each counter is an
 * aligned 64-bit word written and read whole (relaxed atomics): a reader
 * sees each counter's old or new value, never a torn one.
 */
#pragma once

#include <stdint.h>

#define VN_LOC_MAGIC  UINT64_C(0x314c41434f4c4e56) /* "VNLOCAL1" little-endian */
#define VN_LOC_LAYOUT 2
/* Bounds the reader checks before trusting a header (the plugin's too). */
#define VN_LOC_MAX_RANGES 128 /* one per NUMA node, VN_MAX_NODES */
#define VN_LOC_MAX_VCPUS  1024
/*
 * Ranges the host adds while the guest runs (hot-plugged DIMMs), one slot
 * each, never reused: as many as a guest has DIMM slots
 * (VN_DOMAIN_HOTPLUG_SLOTS).
 */
#define VN_LOC_MAX_EXTRA 16

/* What one access is; the four RAM kinds per slot. */
enum vn_loc_kind {
	VN_LOC_USER_LOAD,
	VN_LOC_USER_STORE,
	VN_LOC_KERNEL_LOAD,
	VN_LOC_KERNEL_STORE,
	VN_LOC_NKINDS,
};

/*
 * Per vCPU, nranges + VN_LOC_MAX_EXTRA + 2 slots of VN_LOC_NKINDS counters:
 * slot r < nranges is RAM in boot range r (the node the host named it for),
 * then one slot per extra range, then RAM outside every range (a map that is
 * wrong or incomplete: ROMs, a DIMM not yet added), then device (IO) accesses.
 */
#define VN_LOC_SLOT_EXTRA(nranges, e) ((nranges) + (e))
#define VN_LOC_SLOT_UNMAPPED(nranges) ((nranges) + VN_LOC_MAX_EXTRA)
#define VN_LOC_SLOT_IO(nranges)       ((nranges) + VN_LOC_MAX_EXTRA + 1)
#define VN_LOC_NSLOTS(nranges)        ((nranges) + VN_LOC_MAX_EXTRA + 2)
/* A vCPU's block, rounded up to whole cache lines so vCPU threads never share one. */
#define VN_LOC_VCPU_BYTES(nranges) \
	((((uint64_t)VN_LOC_NSLOTS(nranges) * VN_LOC_NKINDS * sizeof(uint64_t)) + 63) / 64 * 64)

#define VN_LOC_NODE_NONE UINT64_MAX
struct vn_loc_range {
	uint64_t lo, hi; /* [lo, hi) in the API's physical addresses */
	uint64_t node;
};

struct vn_loc_header {
	uint64_t magic;
	uint32_t layout, api; /* VN_LOC_LAYOUT; QEMU's plugin API version */
	uint32_t nvcpus;      /* blocks that follow: QEMU's max_vcpus */
	uint32_t nranges;     /* <= VN_LOC_MAX_RANGES */
	uint64_t vcpu_bytes;  /* VN_LOC_VCPU_BYTES(nranges) */
	uint64_t counters_at; /* offset of vCPU 0's block: sizeof(struct vn_loc_header) */
	struct vn_loc_range ranges[VN_LOC_MAX_RANGES];
	/*
	 * The extra ranges, written by the host alone: it fills extra[nextra]
	 * and then publishes nextra + 1 with a release store; the plugin loads
	 * nextra with acquire and reads only the slots below it. A slot is
	 * retired (its DIMM unplugged) by storing hi = 0, which no address is
	 * below. The plugin tries them before the boot ranges. The host's node
	 * for a slot (VN_LOC_NODE_NONE: an address two memories share) is a
	 * label for people: the host decides from its own record whether a
	 * slot's accesses have a node.
	 */
	uint32_t nextra, pad;
	struct vn_loc_range extra[VN_LOC_MAX_EXTRA];
};

/* The file's whole size, which the reader checks against what it maps. */
#define VN_LOC_FILE_BYTES(nvcpus, nranges) \
	(sizeof(struct vn_loc_header) + (uint64_t)(nvcpus)*VN_LOC_VCPU_BYTES(nranges))
