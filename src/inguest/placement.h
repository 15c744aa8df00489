/* Page placement through move_pages(2) in query mode (placement.c). */
#pragma once

#include <stddef.h>
#include <stdint.h>

#include "inguest/prog.h"

struct ig_placement {
	uint64_t sampled;                /* pages queried */
	uint64_t per_node[VN_MAX_NODES]; /* pages on each node */
	uint64_t not_present;            /* -ENOENT: not faulted in / swapped */
	uint64_t other;                  /* other errors or node >= VN_MAX_NODES */
	int err;                         /* 0, or -errno when move_pages itself failed */
};
/*
 * Queries where the pages of [addr, addr+len) live, evenly sampling at most
 * max_sample pages of page_size bytes (0 = every page).
 */
void ig_placement_query(void *addr, size_t len, size_t page_size, size_t max_sample, struct ig_placement *p);
/* Counts n move_pages status values (a node, or -errno) into p. */
void ig_placement_count(struct ig_placement *p, const int *status, size_t n);
/* The node holding the most sampled pages, or -1. */
int ig_placement_main_node(const struct ig_placement *p);
/* The share of the sampled pages on node; 0 when none was sampled or node is none (-1). */
double ig_placement_fraction(const struct ig_placement *p, int node);
/* Adds src's counts into dst (a worker's areas as one); dst keeps its own error, else takes src's. */
void ig_placement_add(struct ig_placement *dst, const struct ig_placement *src);
/*
 * Locality over several workers: all their sampled pages, and those on the
 * node each worker ran on (ig_locality_add with that node, or -1 for none).
 */
struct ig_locality {
	uint64_t local, sampled;
};
void ig_locality_add(struct ig_locality *l, const struct ig_placement *p, int node);
/* local / sampled, 0 when nothing was sampled. */
double ig_locality_fraction(const struct ig_locality *l);
struct ig_json;
struct ig_topo;
/* pages_sampled, pages_per_node, pages_not_present, pages_other and (on failure) placement_error. */
void ig_json_placement(struct ig_json *j, const struct ig_topo *t, const struct ig_placement *p);
