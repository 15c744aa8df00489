/* Any topology with every node's memory set to one size (vnuma up --node-memory): node-memory.c. */
#pragma once

#include <stddef.h>
#include <stdint.h>

#include "topology/topology.h"
#include "util/error.h"

/* Smallest node size --node-memory takes: a 6.1 guest under it does not reliably boot. */
#define VN_NODE_MEMORY_MIN (UINT64_C(128) << 20)

/*
 * The topology text `text` (parsed from `name`) with every node that has
 * memory given `bytes` in place of its own: memory-less nodes stay
 * memory-less, slow ones (memory-kind) stay slow. Returns the new text and
 * the topology parsed from it, so the parser's checks hold for the new sizes
 * (a slow node's whole 128M blocks), and the copy a guest keeps in its dir
 * says what booted. `bytes` is a whole number of MiB, VN_NODE_MEMORY_MIN or
 * more, or an input error.
 */
int vn_topology_node_memory(const char *text, size_t len, const char *name, uint64_t bytes, char **out_text,
			    size_t *out_len, struct vn_topology **out, struct vn_error *err);
