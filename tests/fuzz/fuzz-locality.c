/*
 * Fuzz target for the locality plugin's counters file as the host reads it
 * (metrics/locality.c): QEMU writes it and the guest drives QEMU, so any
 * bytes must be refused by vn_loc_check() or folded without reading past
 * the file, and what folds adds up: the matrix plus what lies outside it
 * (unmapped, IO, unplaced) is the file's total, with the extra ranges of a
 * hot-plugged DIMM too (layout 2; seeds for both maps in the corpus). Built like fuzz-topology.c.
 */
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "metrics/locality.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/*
 * The map the host has: two boot ranges, and (extra) a hot-plugged DIMM's
 * two ranges, its own proven with counts from before the proof kept
 * unmapped, and a part shared with node 1's cell that is nobody's.
 */
static struct vn_loc_map map;

static void map_init(bool extra)
{
	memset(&map, 0, sizeof(map));
	map = (struct vn_loc_map){.nnodes = 2, .nranges = 2, .ncpus = 3, .cpu_node = {0, 0, 1}};
	map.ranges[0] = (struct vn_loc_range){0, 256 << 20, 0};
	map.ranges[1] = (struct vn_loc_range){512 << 20, 768 << 20, 1};
	if (!extra)
		return;
	map.nextra = 2;
	map.extra[0].range = (struct vn_loc_range){300 << 20, 512 << 20, 1};
	map.extra[0].proven = true;
	map.extra[0].base[0][VN_LOC_USER_STORE] = 1000;
	map.extra[0].base[2][VN_LOC_USER_LOAD] = 7; /* vCPUs of no node */
	map.extra[1].range = (struct vn_loc_range){512 << 20, 520 << 20, VN_LOC_NODE_NONE};
}

static void one(const void *buf, size_t size, bool extra)
{
	struct vn_error err = {0};
	struct vn_loc_counts c;

	map_init(extra);
	if (vn_loc_check(buf, size, &map, &err) == 0) {
		vn_loc_counts_init(&c, map.nnodes);
		vn_loc_fold(buf, &map, &c);
		uint64_t outside = 0;
		for (unsigned k = 0; k < VN_LOC_NKINDS; k++)
			outside += c.unmapped[k] + c.io[k] + c.unplaced[k];
		/* Modulo 2^64 on both sides: the same counters summed. */
		if (vn_loc_sum(&c, VN_LOC_ALL, NULL) + outside != c.total)
			abort();
		vn_loc_counts_clear(&c);
	}
	vn_error_clear(&err);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	/* An aligned copy of exactly size bytes, as the mapping would be. */
	void *buf = malloc(size ? size : 1);
	if (!buf)
		abort();
	memcpy(buf, data, size);
	one(buf, size, false);
	one(buf, size, true);
	free(buf);
	return 0;
}

#ifndef VN_LIBFUZZER
#include "replay-main.h"
#endif
