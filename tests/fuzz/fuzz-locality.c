/*
 * Fuzz target for the locality plugin's counters file as the host reads it
 * (metrics/locality.c): QEMU writes it and the guest drives QEMU, so any
 * bytes must be refused by vn_loc_check() or folded without reading past
 * the file, and what folds adds up: the matrix plus what lies outside it
 * (unmapped, IO, unplaced) is the file's total. Built like fuzz-topology.c.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "metrics/locality.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct vn_loc_map map = {.nnodes = 2, .nranges = 2, .ncpus = 3, .cpu_node = {0, 0, 1}};
	struct vn_error err = {0};
	struct vn_loc_counts c;

	map.ranges[0] = (struct vn_loc_range){0, 256 << 20, 0};
	map.ranges[1] = (struct vn_loc_range){512 << 20, 768 << 20, 1};
	/* An aligned copy of exactly size bytes, as the mapping would be. */
	void *buf = malloc(size ? size : 1);
	if (!buf)
		abort();
	memcpy(buf, data, size);
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
	free(buf);
	return 0;
}

#ifndef VN_LIBFUZZER
#include "replay-main.h"
#endif
