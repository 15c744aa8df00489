/* The locality plugin's counters file, read by the host (locality.h). */
#include "metrics/locality.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "util/alloc.h"
#include "util/cleanup.h"

void vn_loc_counts_init(struct vn_loc_counts *c, unsigned nnodes)
{
	*c = (struct vn_loc_counts){.nnodes = nnodes};
	c->ram = vn_xcalloc((size_t)nnodes * nnodes * VN_LOC_NKINDS, sizeof(uint64_t));
}

void vn_loc_counts_clear(struct vn_loc_counts *c)
{
	free(c->ram);
	*c = (struct vn_loc_counts){0};
}

int vn_loc_check(const void *buf, size_t len, const struct vn_loc_map *map, struct vn_error *err)
{
	struct vn_loc_header h;
	if (len < sizeof(h))
		return vn_infra_error(err, -EPROTO, "locality counters: %zu bytes, shorter than their header", len);
	memcpy(&h, buf, sizeof(h));
	if (h.magic != VN_LOC_MAGIC || h.layout != VN_LOC_LAYOUT)
		return vn_infra_error(err, -EPROTO, "locality counters: not a layout-%d counters file", VN_LOC_LAYOUT);
	if (h.nvcpus == 0 || h.nvcpus > VN_LOC_MAX_VCPUS || h.nranges != map->nranges ||
	    h.vcpu_bytes != VN_LOC_VCPU_BYTES(h.nranges) || h.counters_at != sizeof(h))
		return vn_infra_error(
			err, -EPROTO,
			"locality counters: header says %u vCPUs, %u ranges (asked for %u), not the layout", h.nvcpus,
			h.nranges, map->nranges);
	if (len < VN_LOC_FILE_BYTES(h.nvcpus, h.nranges))
		return vn_infra_error(err, -EPROTO, "locality counters: %zu bytes, the header needs %llu", len,
				      (unsigned long long)VN_LOC_FILE_BYTES(h.nvcpus, h.nranges));
	for (unsigned r = 0; r < h.nranges; r++)
		if (memcmp(&h.ranges[r], &map->ranges[r], sizeof(h.ranges[r])) != 0)
			return vn_infra_error(err, -EPROTO, "locality counters: range %u is not the one asked for", r);
	/* Only the host writes the extra ranges: they are what it wrote, or the file is not ours. */
	if (h.nextra != map->nextra || map->nextra > VN_LOC_MAX_EXTRA)
		return vn_infra_error(err, -EPROTO, "locality counters: %u extra ranges, the host added %u", h.nextra,
				      map->nextra);
	for (unsigned e = 0; e < map->nextra; e++)
		if (memcmp(&h.extra[e], &map->extra[e].range, sizeof(h.extra[e])) != 0)
			return vn_infra_error(err, -EPROTO, "locality counters: extra range %u is not the one added",
					      e);
	return 0;
}

static uint64_t load(const uint64_t *p)
{
	return __atomic_load_n(p, __ATOMIC_RELAXED);
}

/* Where one RAM count goes: its node's cell, or the unplaced vCPUs'. */
static uint64_t *ram_cell(struct vn_loc_counts *out, int cpu_node, unsigned mem_node, unsigned k)
{
	return cpu_node < 0 ? &out->unplaced[k] : vn_loc_at(out, (unsigned)cpu_node, mem_node, k);
}

static void fold_vcpu(const uint64_t *blk, int cpu_node, const struct vn_loc_map *map, struct vn_loc_counts *out)
{
	unsigned nr = map->nranges;
	for (unsigned s = 0; s < VN_LOC_NSLOTS(nr); s++)
		for (unsigned k = 0; k < VN_LOC_NKINDS; k++) {
			uint64_t v = load(&blk[s * VN_LOC_NKINDS + k]);
			out->total += v;
			if (s == VN_LOC_SLOT_IO(nr)) {
				out->io[k] += v;
			} else if (s == VN_LOC_SLOT_UNMAPPED(nr)) {
				out->unmapped[k] += v;
			} else if (s >= nr) {
				/* An extra slot the host never published counts nothing here but the total's share. */
				unsigned e = s - nr;
				const struct vn_loc_extra *x = &map->extra[e];
				out->extra[e][k] += v;
				if (e < map->nextra && x->proven)
					*ram_cell(out, cpu_node, (unsigned)x->range.node, k) += v;
				else
					out->unmapped[k] += v;
			} else {
				*ram_cell(out, cpu_node, (unsigned)map->ranges[s].node, k) += v;
			}
		}
}

/* A proven extra range's counts from before its proof were unmapped then and stay so. */
static void fold_bases(const struct vn_loc_map *map, struct vn_loc_counts *out)
{
	for (unsigned e = 0; e < map->nextra && e < VN_LOC_MAX_EXTRA; e++) {
		const struct vn_loc_extra *x = &map->extra[e];
		if (!x->proven)
			continue;
		for (unsigned c = 0; c <= out->nnodes; c++)
			for (unsigned k = 0; k < VN_LOC_NKINDS; k++) {
				uint64_t *cell =
					ram_cell(out, c < out->nnodes ? (int)c : -1, (unsigned)x->range.node, k);
				/* A counter that went back (not the plugin's file): never below zero. */
				uint64_t b = x->base[c][k] < *cell ? x->base[c][k] : *cell;
				*cell -= b;
				out->unmapped[k] += b;
			}
	}
}

/*
 * The blocks of nvcpus vCPUs, placed as the checked layout places them
 * (vn_loc_check: counters right after the header, one block per vCPU of the
 * map's ranges): nothing here is read again from a header that QEMU, or
 * whatever else maps the file, could rewrite after it was checked.
 */
static void fold_n(const void *buf, unsigned nvcpus, const struct vn_loc_map *map, struct vn_loc_counts *out)
{
	unsigned nnodes = out->nnodes;
	uint64_t *ram = out->ram;
	memset(ram, 0, (size_t)nnodes * nnodes * VN_LOC_NKINDS * sizeof(uint64_t));
	*out = (struct vn_loc_counts){.nnodes = nnodes, .ram = ram};
	for (unsigned v = 0; v < nvcpus; v++) {
		const uint64_t *blk = (const uint64_t *)((const unsigned char *)buf + sizeof(struct vn_loc_header) +
							 (size_t)v * VN_LOC_VCPU_BYTES(map->nranges));
		fold_vcpu(blk, v < map->ncpus ? map->cpu_node[v] : -1, map, out);
	}
	fold_bases(map, out);
}

void vn_loc_fold(const void *buf, const struct vn_loc_map *map, struct vn_loc_counts *out)
{
	fold_n(buf, ((const struct vn_loc_header *)buf)->nvcpus, map, out);
}

struct vn_loc_reader {
	void *base;
	size_t size;
	unsigned nvcpus; /* as checked at open: the plugin writes it once */
	char *path;      /* to write the extra ranges through a mapping of their own */
	struct vn_loc_map map;
};

int vn_loc_open(const char *path, const struct vn_loc_map *map, struct vn_loc_reader **out, struct vn_error *err)
{
	*out = NULL;
	if (map->nnodes == 0 || map->nnodes > VN_MAX_NODES || map->nranges > VN_LOC_MAX_RANGES ||
	    map->nextra > VN_LOC_MAX_EXTRA)
		return vn_input_error(err, "locality map: %u nodes, %u ranges, %u extra", map->nnodes, map->nranges,
				      map->nextra);
	for (unsigned r = 0; r < map->nranges; r++)
		if (map->ranges[r].node >= map->nnodes)
			return vn_input_error(err, "locality map: range %u names node %llu of %u", r,
					      (unsigned long long)map->ranges[r].node, map->nnodes);
	for (unsigned v = 0; v < map->ncpus; v++)
		if (map->cpu_node[v] >= map->nnodes)
			return vn_input_error(err, "locality map: vCPU %u on node %u of %u", v, map->cpu_node[v],
					      map->nnodes);
	_cleanup_close_ int fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	struct stat st;
	if (fd < 0 || fstat(fd, &st) < 0)
		return vn_infra_error(err, -errno, "locality counters %s: %s", path, strerror(errno));
	if (!S_ISREG(st.st_mode) || st.st_size < (off_t)sizeof(struct vn_loc_header) ||
	    (uint64_t)st.st_size > VN_LOC_FILE_BYTES(VN_LOC_MAX_VCPUS, VN_LOC_MAX_RANGES))
		return vn_infra_error(err, -EPROTO, "locality counters %s: not a counters file (%lld bytes)", path,
				      (long long)st.st_size);
	void *m = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_SHARED, fd, 0);
	if (m == MAP_FAILED)
		return vn_infra_error(err, -errno, "locality counters %s: mmap: %s", path, strerror(errno));
	int rc = vn_loc_check(m, (size_t)st.st_size, map, err);
	if (rc < 0) {
		munmap(m, (size_t)st.st_size);
		vn_error_prefix(err, "%s: ", path);
		return rc;
	}
	/* Read once and bounded again: the file may change under the check above. */
	unsigned nvcpus = __atomic_load_n(&((const struct vn_loc_header *)m)->nvcpus, __ATOMIC_RELAXED);
	if (nvcpus == 0 || nvcpus > VN_LOC_MAX_VCPUS || (size_t)st.st_size < VN_LOC_FILE_BYTES(nvcpus, map->nranges)) {
		munmap(m, (size_t)st.st_size);
		return vn_infra_error(err, -EPROTO, "locality counters %s: changed while read", path);
	}
	struct vn_loc_reader *r = vn_xmalloc(sizeof(*r));
	*r = (struct vn_loc_reader){
		.base = m, .size = (size_t)st.st_size, .nvcpus = nvcpus, .path = vn_xstrdup(path), .map = *map};
	*out = r;
	return 0;
}

int vn_loc_read(struct vn_loc_reader *r, struct vn_loc_counts *out, struct vn_error *err)
{
	/* A header rewritten since it was checked means the file is not the plugin's any more. */
	int rc = vn_loc_check(r->base, r->size, &r->map, err);
	if (rc < 0)
		return rc;
	fold_n(r->base, r->nvcpus, &r->map, out);
	return 0;
}

void vn_loc_close(struct vn_loc_reader *r)
{
	if (!r)
		return;
	munmap(r->base, r->size);
	free(r->path);
	free(r);
}

/* The file's header, mapped writable for one update: the reader's own mapping stays read-only. */
static int header_rw(struct vn_loc_reader *r, struct vn_loc_header **h, struct vn_error *err)
{
	_cleanup_close_ int fd = open(r->path, O_RDWR | O_NOFOLLOW | O_CLOEXEC);
	struct stat st;
	if (fd < 0 || fstat(fd, &st) < 0)
		return vn_infra_error(err, -errno, "locality counters %s: %s", r->path, strerror(errno));
	/* The same file the reader checked: not one planted at its path since. */
	if ((size_t)st.st_size != r->size)
		return vn_infra_error(err, -EPROTO, "locality counters %s: changed size", r->path);
	void *m = mmap(NULL, sizeof(**h), PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (m == MAP_FAILED)
		return vn_infra_error(err, -errno, "locality counters %s: mmap: %s", r->path, strerror(errno));
	*h = m;
	return 0;
}

int vn_loc_extra_add(struct vn_loc_reader *r, uint64_t lo, uint64_t hi, uint64_t node, unsigned *slot,
		     struct vn_error *err)
{
	struct vn_loc_map *m = &r->map;
	struct vn_loc_header *h;
	int rc;

	if (lo >= hi || (node >= m->nnodes && node != VN_LOC_NODE_NONE))
		return vn_input_error(err, "locality: range 0x%llx-0x%llx for node %llu of %u", (unsigned long long)lo,
				      (unsigned long long)hi, (unsigned long long)node, m->nnodes);
	if (m->nextra >= VN_LOC_MAX_EXTRA)
		return vn_input_error(err, "locality: all %d extra ranges are taken", VN_LOC_MAX_EXTRA);
	/*
	 * Two extra ranges on one address would give its accesses to whichever
	 * the plugin tries first. A boot range may be overlapped: extra ones
	 * come first, which is how a shared part is carved out of a cell.
	 */
	for (unsigned i = 0; i < m->nextra; i++) {
		const struct vn_loc_range *o = &m->extra[i].range;
		if (lo < o->hi && o->lo < hi)
			return vn_input_error(err, "locality: range 0x%llx-0x%llx overlaps 0x%llx-0x%llx (node %llu)",
					      (unsigned long long)lo, (unsigned long long)hi, (unsigned long long)o->lo,
					      (unsigned long long)o->hi, (unsigned long long)o->node);
	}
	if ((rc = header_rw(r, &h, err)) < 0)
		return rc;
	unsigned e = m->nextra;
	h->extra[e] = (struct vn_loc_range){.lo = lo, .hi = hi, .node = node};
	/* The slot whole before the count that makes the plugin read it. */
	__atomic_store_n(&h->nextra, e + 1, __ATOMIC_RELEASE);
	munmap(h, sizeof(*h));
	memset(&m->extra[e], 0, sizeof(m->extra[e]));
	m->extra[e].range = (struct vn_loc_range){.lo = lo, .hi = hi, .node = node};
	m->nextra = e + 1;
	*slot = e;
	return 0;
}

int vn_loc_extra_settle(struct vn_loc_reader *r, unsigned slot, bool proven, struct vn_error *err)
{
	struct vn_loc_map *m = &r->map;
	struct vn_loc_counts now;
	int rc;

	if (slot >= m->nextra || m->extra[slot].proven || (proven && m->extra[slot].range.node >= m->nnodes))
		return vn_input_error(err, "locality: no unproven extra range %u of a node", slot);
	if (!proven)
		return 0;
	/* Each CPU node's accesses to it so far: unmapped, as they were when counted. */
	vn_loc_counts_init(&now, m->nnodes);
	if ((rc = vn_loc_read(r, &now, err)) == 0) {
		struct vn_loc_extra *x = &m->extra[slot];
		unsigned nr = m->nranges;
		memset(x->base, 0, sizeof(x->base));
		for (unsigned v = 0; v < r->nvcpus; v++) {
			const uint64_t *blk =
				(const uint64_t *)((const unsigned char *)r->base + sizeof(struct vn_loc_header) +
						   (size_t)v * VN_LOC_VCPU_BYTES(nr));
			unsigned c = v < m->ncpus ? m->cpu_node[v] : m->nnodes;
			for (unsigned k = 0; k < VN_LOC_NKINDS; k++)
				x->base[c][k] += load(&blk[VN_LOC_SLOT_EXTRA(nr, slot) * VN_LOC_NKINDS + k]);
		}
		x->proven = true;
	}
	vn_loc_counts_clear(&now);
	return rc;
}

int vn_loc_extra_retire(struct vn_loc_reader *r, unsigned slot, struct vn_error *err)
{
	struct vn_loc_header *h;
	int rc;

	if (slot >= r->map.nextra)
		return vn_input_error(err, "locality: no extra range %u", slot);
	if ((rc = header_rw(r, &h, err)) < 0)
		return rc;
	__atomic_store_n(&h->extra[slot].hi, 0, __ATOMIC_RELAXED);
	munmap(h, sizeof(*h));
	r->map.extra[slot].range.hi = 0;
	return 0;
}

static int sub(uint64_t a, uint64_t b, uint64_t *out, struct vn_error *err)
{
	if (a < b)
		return vn_infra_error(err, -EPROTO, "locality counters went back (%llu after %llu)",
				      (unsigned long long)a, (unsigned long long)b);
	*out = a - b;
	return 0;
}

int vn_loc_delta(const struct vn_loc_counts *after, const struct vn_loc_counts *before, struct vn_loc_counts *out,
		 struct vn_error *err)
{
	int rc = 0;
	size_t n = (size_t)after->nnodes * after->nnodes * VN_LOC_NKINDS;
	if (after->nnodes != before->nnodes || out->nnodes != after->nnodes)
		return vn_infra_error(err, -EINVAL, "locality counters of %u and %u nodes", after->nnodes,
				      before->nnodes);
	for (size_t i = 0; i < n && rc == 0; i++)
		rc = sub(after->ram[i], before->ram[i], &out->ram[i], err);
	for (unsigned k = 0; k < VN_LOC_NKINDS && rc == 0; k++)
		if ((rc = sub(after->unmapped[k], before->unmapped[k], &out->unmapped[k], err)) == 0 &&
		    (rc = sub(after->io[k], before->io[k], &out->io[k], err)) == 0)
			rc = sub(after->unplaced[k], before->unplaced[k], &out->unplaced[k], err);
	for (unsigned e = 0; e < VN_LOC_MAX_EXTRA && rc == 0; e++)
		for (unsigned k = 0; k < VN_LOC_NKINDS && rc == 0; k++)
			rc = sub(after->extra[e][k], before->extra[e][k], &out->extra[e][k], err);
	if (rc == 0)
		rc = sub(after->total, before->total, &out->total, err);
	return rc;
}

static bool kind_in(unsigned k, enum vn_loc_mode m)
{
	bool kernel = k == VN_LOC_KERNEL_LOAD || k == VN_LOC_KERNEL_STORE;
	return m == VN_LOC_ALL || (m == VN_LOC_KERNEL) == kernel;
}

uint64_t vn_loc_sum_row(const struct vn_loc_counts *c, enum vn_loc_mode m, unsigned cpu_node, uint64_t *remote)
{
	uint64_t all = 0, rem = 0;
	for (unsigned j = 0; cpu_node < c->nnodes && j < c->nnodes; j++)
		for (unsigned k = 0; k < VN_LOC_NKINDS; k++) {
			if (!kind_in(k, m))
				continue;
			uint64_t v = *vn_loc_at(c, cpu_node, j, k);
			all += v;
			rem += cpu_node != j ? v : 0;
		}
	if (remote)
		*remote = rem;
	return all;
}

uint64_t vn_loc_sum(const struct vn_loc_counts *c, enum vn_loc_mode m, uint64_t *remote)
{
	uint64_t all = 0, rem = 0;
	for (unsigned i = 0; i < c->nnodes; i++) {
		uint64_t r;
		all += vn_loc_sum_row(c, m, i, &r);
		rem += r;
	}
	if (remote)
		*remote = rem;
	return all;
}

double vn_loc_remote_fraction_row(const struct vn_loc_counts *c, enum vn_loc_mode m, unsigned cpu_node)
{
	uint64_t rem, all = vn_loc_sum_row(c, m, cpu_node, &rem);
	return all ? (double)rem / (double)all : NAN;
}

double vn_loc_remote_fraction(const struct vn_loc_counts *c, enum vn_loc_mode m)
{
	uint64_t rem, all = vn_loc_sum(c, m, &rem);
	return all ? (double)rem / (double)all : NAN;
}

double vn_loc_model_s(const struct vn_loc_counts *c, const double *lat_ns)
{
	double ns = 0;
	for (unsigned i = 0; i < c->nnodes; i++)
		for (unsigned j = 0; j < c->nnodes; j++) {
			uint64_t n = 0;
			for (unsigned k = 0; k < VN_LOC_NKINDS; k++)
				n += *vn_loc_at(c, i, j, k);
			ns += (double)n * lat_ns[i * c->nnodes + j];
		}
	return ns * 1e-9;
}

void vn_loc_by_group(const struct vn_loc_counts *c, const double *lat_ns, const int *group_of, unsigned ngroups,
		     struct vn_loc_group *out, struct vn_loc_group *none)
{
	struct vn_loc_group rest = {0};

	memset(out, 0, ngroups * sizeof(*out));
	for (unsigned j = 0; j < c->nnodes; j++) {
		struct vn_loc_group *g =
			group_of[j] >= 0 && (unsigned)group_of[j] < ngroups ? &out[group_of[j]] : &rest;
		for (unsigned i = 0; i < c->nnodes; i++) {
			uint64_t n = 0;
			for (unsigned k = 0; k < VN_LOC_NKINDS; k++)
				n += *vn_loc_at(c, i, j, k);
			g->accesses += n;
			g->user += *vn_loc_at(c, i, j, VN_LOC_USER_LOAD) + *vn_loc_at(c, i, j, VN_LOC_USER_STORE);
			g->model_s += (double)n * lat_ns[i * c->nnodes + j] * 1e-9;
		}
	}
	if (none)
		*none = rest;
}

/* All user RAM stores in d (unmapped and unplaced ones included), and those to node's memory. */
static uint64_t user_stores(const struct vn_loc_counts *d, unsigned node, uint64_t *on)
{
	const unsigned k = VN_LOC_USER_STORE;
	uint64_t all = d->unmapped[k] + d->unplaced[k];
	*on = 0;
	for (unsigned i = 0; i < d->nnodes; i++)
		for (unsigned j = 0; j < d->nnodes; j++) {
			uint64_t v = *vn_loc_at(d, i, j, k);
			all += v;
			*on += j == node ? v : 0;
		}
	return all;
}

int vn_loc_proof_judge_extra(const struct vn_loc_counts *d, const unsigned *slots, unsigned nslots,
			     uint64_t min_accesses, struct vn_error *err)
{
	uint64_t on_node, on = 0, all = user_stores(d, 0, &on_node);
	for (unsigned i = 0; i < nslots; i++)
		on += slots[i] < VN_LOC_MAX_EXTRA ? d->extra[slots[i]][VN_LOC_USER_STORE] : 0;
	if (nslots && on >= min_accesses && (double)on >= VN_LOC_PROOF_SHARE * (double)all)
		return 0;
	return vn_infra_error(err, -EPROTO,
			      "hot-plugged range not proven: memory bound to its node took %llu of %llu user stores "
			      "in the range (want at least %llu and %.0f%%); its accesses stay unmapped",
			      (unsigned long long)on, (unsigned long long)all, (unsigned long long)min_accesses,
			      VN_LOC_PROOF_SHARE * 100);
}

const struct vn_loc_map *vn_loc_reader_map(const struct vn_loc_reader *r)
{
	return &r->map;
}

int vn_loc_proof_judge(const struct vn_loc_counts *d, unsigned node, uint64_t min_accesses, struct vn_error *err)
{
	uint64_t on, all = user_stores(d, node, &on);
	if (node < d->nnodes && on >= min_accesses && (double)on >= VN_LOC_PROOF_SHARE * (double)all)
		return 0;
	return vn_infra_error(err, -EPROTO,
			      "locality map not proven: memory bound to node %u took %llu of %llu user stores "
			      "(want at least %llu and %.0f%%); no locality figures",
			      node, (unsigned long long)on, (unsigned long long)all, (unsigned long long)min_accesses,
			      VN_LOC_PROOF_SHARE * 100);
}
