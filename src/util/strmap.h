/*
 * A string-keyed hash map to positions, for the lookups a loop would
 * otherwise do by scanning what came before (a duplicate check per line of
 * a hosts file, a variant's name per run of a result group). Keys are not
 * copied: each must outlive the map.
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>

struct vn_strmap {
	struct vn_strmap_entry {
		const char *key; /* NULL: a free slot */
		size_t val;
	} * e;
	size_t cap, n; /* cap a power of two, at most half full */
};

/* key to val; a key already there keeps its first value and put returns false. */
bool vn_strmap_put(struct vn_strmap *m, const char *key, size_t val);
/* key's value into *val (may be NULL); false when key is not there. */
bool vn_strmap_get(const struct vn_strmap *m, const char *key, size_t *val);
void vn_strmap_free(struct vn_strmap *m);
