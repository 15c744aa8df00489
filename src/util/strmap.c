#include "util/strmap.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "util/alloc.h"

/* FNV-1a. */
static size_t hash(const char *s)
{
	uint64_t h = 1469598103934665603ull;

	for (; *s; s++) {
		h ^= (unsigned char)*s;
		h *= 1099511628211ull;
	}
	return (size_t)h;
}

/* key's slot: its entry, or the free slot where it goes. */
static struct vn_strmap_entry *slot(const struct vn_strmap *m, const char *key)
{
	size_t mask = m->cap - 1, i = hash(key) & mask;

	while (m->e[i].key && strcmp(m->e[i].key, key) != 0)
		i = (i + 1) & mask;
	return &m->e[i];
}

bool vn_strmap_put(struct vn_strmap *m, const char *key, size_t val)
{
	if (2 * (m->n + 1) > m->cap) {
		struct vn_strmap old = *m;
		m->cap = old.cap ? 2 * old.cap : 64;
		m->e = vn_xcalloc(m->cap, sizeof(*m->e));
		for (size_t i = 0; i < old.cap; i++)
			if (old.e[i].key)
				*slot(m, old.e[i].key) = old.e[i];
		free(old.e);
	}
	struct vn_strmap_entry *e = slot(m, key);
	if (e->key)
		return false;
	*e = (struct vn_strmap_entry){key, val};
	m->n++;
	return true;
}

bool vn_strmap_get(const struct vn_strmap *m, const char *key, size_t *val)
{
	if (!m->cap)
		return false;
	const struct vn_strmap_entry *e = slot(m, key);
	if (!e->key)
		return false;
	if (val)
		*val = e->val;
	return true;
}

void vn_strmap_free(struct vn_strmap *m)
{
	free(m->e);
	*m = (struct vn_strmap){0};
}
