/* Where pages live: move_pages(2) in query mode over an even sample. */
#include "inguest/json.h"
#include "inguest/placement.h"
#include "inguest/topo.h"

#include <errno.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#define PLACEMENT_BATCH 4096

void ig_placement_count(struct ig_placement *p, const int *status, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		int s = status[i];
		if (s >= 0 && s < VN_MAX_NODES)
			p->per_node[s]++;
		else if (s == -ENOENT)
			p->not_present++;
		else
			p->other++;
	}
}

void ig_placement_query(void *addr, size_t len, size_t page_size, size_t max_sample, struct ig_placement *p)
{
	size_t pages = len / page_size, n;
	void *batch[PLACEMENT_BATCH];
	int status[PLACEMENT_BATCH];

	memset(p, 0, sizeof(*p));
	if (!pages)
		return;
	n = pages;
	if (max_sample && n > max_sample)
		n = max_sample;
	/* Evenly spread samples: page index i * pages / n. */
	for (size_t done = 0; done < n;) {
		size_t k = n - done < PLACEMENT_BATCH ? n - done : PLACEMENT_BATCH;
		long r;

		for (size_t i = 0; i < k; i++) {
			size_t idx = (size_t)(((unsigned __int128)(done + i) * pages) / n);
			batch[i] = (char *)addr + idx * page_size;
			status[i] = -EFAULT;
		}
		r = syscall(SYS_move_pages, 0, (unsigned long)k, batch, NULL, status, 0);
		if (r < 0) {
			p->err = -errno;
			p->other += k;
		} else {
			ig_placement_count(p, status, k);
		}
		p->sampled += k;
		done += k;
	}
}

int ig_placement_main_node(const struct ig_placement *p)
{
	return ig_node_busiest(p->per_node);
}

double ig_placement_fraction(const struct ig_placement *p, int node)
{
	if (!p->sampled || node < 0 || node >= VN_MAX_NODES)
		return 0;
	return (double)p->per_node[node] / (double)p->sampled;
}

void ig_placement_add(struct ig_placement *dst, const struct ig_placement *src)
{
	dst->sampled += src->sampled;
	dst->not_present += src->not_present;
	dst->other += src->other;
	for (int n = 0; n < VN_MAX_NODES; n++)
		dst->per_node[n] += src->per_node[n];
	if (!dst->err)
		dst->err = src->err;
}

void ig_locality_add(struct ig_locality *l, const struct ig_placement *p, int node)
{
	if (node >= 0 && node < VN_MAX_NODES)
		l->local += p->per_node[node];
	l->sampled += p->sampled;
}

double ig_locality_fraction(const struct ig_locality *l)
{
	return l->sampled ? (double)l->local / (double)l->sampled : 0;
}

void ig_json_placement(struct ig_json *j, const struct ig_topo *t, const struct ig_placement *p)
{
	ig_json_uint(j, "pages_sampled", p->sampled);
	ig_json_node_counts(j, "pages_per_node", t, p->per_node);
	ig_json_uint(j, "pages_not_present", p->not_present);
	ig_json_uint(j, "pages_other", p->other);
	if (p->err)
		ig_json_str(j, "placement_error", strerror(-p->err));
}
