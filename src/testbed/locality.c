/* Locality accounting on a booted topology: map, plugin arguments, proof (locality.h). */
#include "testbed/locality.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "testbed/agent-session.h"
#include "topology/tiers.h"
#include "util/alloc.h"
#include "util/cleanup.h"
#include "util/paths.h"
#include "util/state.h"
#include "util/strbuf.h"
#include "virt/domain-xml.h"

void vn_testbed_locality_map(const struct vn_topology *t, struct vn_loc_map *map)
{
	uint64_t base = 0, cells = 0;
	memset(map, 0, sizeof(*map));
	map->nnodes = t->nnodes;
	for (unsigned i = 0; i < t->nnodes; i++)
		cells += vn_domain_cell_bytes(t, i);
	/* QEMU 7.2 allocates the NVDIMMs' RAM blocks after the cells', in the order libvirt writes them: node order. */
	for (unsigned i = 0; i < t->nnodes && map->nranges < VN_LOC_MAX_RANGES; i++) {
		uint64_t bytes = vn_domain_nvdimm_bytes(&t->nodes[i]);
		if (bytes) {
			map->ranges[map->nranges++] =
				(struct vn_loc_range){.lo = cells, .hi = cells + bytes, .node = i};
			cells += bytes;
		}
	}
	/* libvirt writes the cells, and QEMU allocates their backends, in node order. */
	for (unsigned i = 0; i < t->nnodes; i++) {
		uint64_t bytes = vn_domain_cell_bytes(t, i);
		if (!vn_node_is_slow(&t->nodes[i]) && map->nranges < VN_LOC_MAX_RANGES)
			map->ranges[map->nranges++] =
				(struct vn_loc_range){.lo = 2 * base, .hi = 2 * base + bytes, .node = i};
		base += bytes;
		for (unsigned c = 0; c < VN_LOC_MAX_VCPUS; c++)
			if (vn_cpuset_has(&t->nodes[i].cpus, c)) {
				map->cpu_node[c] = (uint8_t)i;
				if (c + 1 > map->ncpus)
					map->ncpus = c + 1;
			}
	}
}

int vn_testbed_locality_supported(const struct vn_topology *t, struct vn_error *err)
{
	struct vn_loc_map m;

	vn_testbed_locality_map(t, &m);
	/* A memory-less node's stand-in may share addresses with an NVDIMM: nothing reaches it, and the NVDIMM is tried first. */
	for (unsigned a = 0; a < m.nranges; a++)
		for (unsigned b = 0; b < m.nranges; b++) {
			const struct vn_loc_range *nv = &m.ranges[a], *cell = &m.ranges[b];
			if (!vn_node_is_slow(&t->nodes[nv->node]) || !vn_node_has_boot_memory(&t->nodes[cell->node]) ||
			    nv->hi <= cell->lo || cell->hi <= nv->lo)
				continue;
			return vn_input_error(
				err,
				"locality cannot count %s: node %llu's NVDIMM (plugin addresses "
				"0x%llx-0x%llx) shares addresses with node %llu's memory (0x%llx-0x%llx) "
				"with any slow node stand-in up to 64 GiB (docs/locality.md, \"Tiered shapes\")",
				t->name ? t->name : "this topology", (unsigned long long)nv->node,
				(unsigned long long)nv->lo, (unsigned long long)nv->hi, (unsigned long long)cell->node,
				(unsigned long long)cell->lo, (unsigned long long)cell->hi);
		}
	return 0;
}

int vn_testbed_locality_arg(const struct vn_topology *t, const char *guest_dir, char **out, struct vn_error *err)
{
	struct vn_paths p;
	struct vn_loc_map map;
	int rc;

	if ((rc = vn_testbed_locality_supported(t, err)) < 0 || (rc = vn_paths_self(&p, err)) < 0)
		return rc;
	vn_testbed_locality_map(t, &map);
	struct vn_strbuf b = VN_STRBUF_INIT;
	vn_strbuf_printf(&b, "%s/%s,out=%s/%s", p.plugin_dir, VN_LOCALITY_PLUGIN, guest_dir, VN_GUEST_LOCALITY);
	for (unsigned i = 0; i < map.nranges; i++)
		vn_strbuf_printf(&b, ",n%llu=0x%llx:0x%llx", (unsigned long long)map.ranges[i].node,
				 (unsigned long long)map.ranges[i].lo, (unsigned long long)map.ranges[i].hi);
	/* QEMU's option syntax has no escape for ',': a path with one cannot be passed. */
	if (strchr(p.plugin_dir, ',') || strchr(guest_dir, ','))
		rc = vn_input_error(err, "locality: a path with ',' cannot be given to QEMU's -plugin: %s or %s",
				    p.plugin_dir, guest_dir);
	if (rc < 0) {
		vn_strbuf_free(&b);
		return rc;
	}
	*out = vn_strbuf_steal(&b);
	return 0;
}

void vn_testbed_locality_latency(const struct vn_topology *t, double *lat_ns)
{
	for (unsigned i = 0; i < t->nnodes; i++)
		for (unsigned j = 0; j < t->nnodes; j++)
			lat_ns[i * t->nnodes + j] = VN_LOCALITY_BASE_NS * t->distance[i][j] / 10.0;
	/*
	 * libvirt 9.0 takes an HMAT pair in one direction only ("Link already
	 * defined"), so one direction stands for both unless the other is given.
	 */
	for (int exact = 0; exact < 2; exact++)
		for (unsigned h = 0; t->hmat_given && h < t->nhmat; h++) {
			const struct vn_hmat_entry *e = &t->hmat[h];
			if (e->type != VN_HMAT_LATENCY || e->initiator >= t->nnodes || e->target >= t->nnodes)
				continue;
			unsigned i = exact ? e->initiator : e->target, j = exact ? e->target : e->initiator;
			lat_ns[i * t->nnodes + j] = (double)e->value;
		}
}

unsigned vn_testbed_locality_tiers(const struct vn_topology *t, enum vn_tier_model m, int *group_of, int *ids)
{
	struct vn_tiers tr;

	vn_tiers_compute(t, m, &tr);
	for (unsigned n = 0; n < t->nnodes; n++)
		group_of[n] = tr.tier_of[n];
	for (unsigned i = 0; i < tr.ntiers; i++)
		ids[i] = tr.tier[i].id;
	return tr.ntiers;
}

/* One node: read, touch memory bound to it, read again, judge. */
static int prove_node(struct vn_agent *a, struct vn_loc_reader *r, const struct vn_topology *t, unsigned n,
		      const char *stream, struct vn_strbuf *rep, struct vn_error *err)
{
	struct vn_loc_counts before, after, d;
	_cleanup_free_ char *out = NULL;
	char membind[16];
	int rc;

	snprintf(membind, sizeof(membind), "--membind=%u", n);
	/* About 5 million user stores: a clear signal over the agent's own, in a few seconds of TCG. */
	const char *argv[] = {"numactl", membind, stream, "--size", "8M", "--iterations", "2", NULL};
	vn_loc_counts_init(&before, t->nnodes);
	vn_loc_counts_init(&after, t->nnodes);
	vn_loc_counts_init(&d, t->nnodes);
	if ((rc = vn_loc_read(r, &before, err)) == 0 && (rc = vn_testbed_run(a, argv, 120, &out, err)) == 0 &&
	    (rc = vn_loc_read(r, &after, err)) == 0 && (rc = vn_loc_delta(&after, &before, &d, err)) == 0) {
		/* Where the user accesses went: each memory node, then outside the map. */
		vn_strbuf_printf(rep, "node %u bound: user stores", n);
		for (unsigned m = 0; m < t->nnodes; m++) {
			uint64_t on = 0;
			for (unsigned c = 0; c < t->nnodes; c++)
				on += *vn_loc_at(&d, c, m, VN_LOC_USER_STORE);
			vn_strbuf_printf(rep, " node%u=%llu", m, (unsigned long long)on);
		}
		vn_strbuf_printf(rep, " unmapped=%llu unplaced=%llu io=%llu\n",
				 (unsigned long long)d.unmapped[VN_LOC_USER_STORE],
				 (unsigned long long)d.unplaced[VN_LOC_USER_STORE],
				 (unsigned long long)d.io[VN_LOC_USER_STORE]);
		rc = vn_loc_proof_judge(&d, n, 1000000, err);
	}
	vn_loc_counts_clear(&before);
	vn_loc_counts_clear(&after);
	vn_loc_counts_clear(&d);
	return rc;
}

int vn_testbed_locality_prove(struct vn_agent *a, struct vn_loc_reader *r, const struct vn_topology *t,
			      const char *libdir, struct vn_locality_proof *out, struct vn_error *err)
{
	_cleanup_free_ char *stream = vn_xasprintf("%s/vnuma-wl-stream", libdir);
	struct vn_strbuf rep = VN_STRBUF_INIT;
	int rc = 0;

	memset(out, 0, sizeof(*out));
	/* A memory-less node's stand-in cell is reserved from the kernel: nothing can be bound there. */
	for (unsigned n = 0; n < t->nnodes && rc == 0; n++)
		if (t->nodes[n].memory && (rc = prove_node(a, r, t, n, stream, &rep, err)) == 0)
			out->nproven++;
	if (rc == 0 && out->nproven == 0)
		rc = vn_infra_error(err, -ENODATA, "locality map not proven: no node has memory to touch");
	out->report = vn_strbuf_steal(&rep);
	return rc;
}

/* The touch of a DIMM's proof: its window's counts into d. */
static int touch_dimm(struct vn_loc_reader *r, vn_hotplug_sh_fn sh, void *sh_data, const char *libdir, unsigned node,
		      struct vn_loc_counts *d, struct vn_error *err)
{
	struct vn_loc_counts before, after;
	_cleanup_free_ char *out = NULL;
	/* The boot proof's touch, as a script: sh is how the caller reaches the guest. */
	_cleanup_free_ char *script = vn_xasprintf(
		"numactl --membind=%u %s/vnuma-wl-stream --size 8M --iterations 2 >/dev/null", node, libdir);
	int rc;

	vn_loc_counts_init(&before, d->nnodes);
	vn_loc_counts_init(&after, d->nnodes);
	if ((rc = vn_loc_read(r, &before, err)) == 0 && (rc = sh(sh_data, script, &out, err)) == 0 &&
	    (rc = vn_loc_read(r, &after, err)) == 0)
		rc = vn_loc_delta(&after, &before, d, err);
	vn_loc_counts_clear(&before);
	vn_loc_counts_clear(&after);
	return rc;
}

unsigned vn_testbed_locality_pieces(const struct vn_loc_map *m, uint64_t lo, uint64_t hi, uint64_t node,
				    struct vn_loc_range *out, unsigned max)
{
	uint64_t cut[2 * VN_LOC_MAX_RANGES + 2];
	unsigned ncut = 0, n = 0;

	cut[ncut++] = lo;
	cut[ncut++] = hi;
	for (unsigned r = 0; r < m->nranges; r++) {
		if (m->ranges[r].lo > lo && m->ranges[r].lo < hi)
			cut[ncut++] = m->ranges[r].lo;
		if (m->ranges[r].hi > lo && m->ranges[r].hi < hi)
			cut[ncut++] = m->ranges[r].hi;
	}
	/* Insertion sort: a few dozen points at most. */
	for (unsigned i = 1; i < ncut; i++)
		for (unsigned j = i; j > 0 && cut[j - 1] > cut[j]; j--) {
			uint64_t t = cut[j];
			cut[j] = cut[j - 1];
			cut[j - 1] = t;
		}
	for (unsigned i = 0; i + 1 < ncut && n < max; i++) {
		if (cut[i] == cut[i + 1])
			continue;
		uint64_t owner = node;
		for (unsigned r = 0; r < m->nranges; r++)
			if (cut[i] >= m->ranges[r].lo && cut[i] < m->ranges[r].hi)
				owner = VN_LOC_NODE_NONE;
		/* Neighbours of the same owner stay one piece. */
		if (n && out[n - 1].hi == cut[i] && out[n - 1].node == owner)
			out[n - 1].hi = cut[i + 1];
		else
			out[n++] = (struct vn_loc_range){.lo = cut[i], .hi = cut[i + 1], .node = owner};
	}
	return n;
}

/* The DIMM's pieces into the plugin: those shared with a cell first, for good; then its own, to prove. */
static int add_pieces(struct vn_loc_reader *r, const struct vn_hotplug_plan *plan, unsigned node,
		      struct vn_locality_dimm *out, unsigned *own, uint64_t *shared, struct vn_error *err)
{
	struct vn_loc_range p[VN_LOC_MAX_EXTRA];
	unsigned np =
		vn_testbed_locality_pieces(vn_loc_reader_map(r), plan->loc_lo, plan->loc_hi, node, p, VN_LOC_MAX_EXTRA);
	int rc;

	*shared = 0;
	for (int pass = 0; pass < 2; pass++)
		for (unsigned i = 0; i < np; i++) {
			bool mine = p[i].node != VN_LOC_NODE_NONE;
			if (mine != (pass == 1))
				continue;
			if ((rc = vn_loc_extra_add(r, p[i].lo, p[i].hi, p[i].node, &out->slots[out->nslots], err)) < 0)
				return rc;
			if (mine)
				own[out->nown++] = out->slots[out->nslots];
			else
				*shared += p[i].hi - p[i].lo;
			out->nslots++;
		}
	if (!out->nown)
		return vn_infra_error(err, -ENOSPC, "every address of it is also a boot cell's");
	return 0;
}

int vn_testbed_locality_dimm(struct vn_loc_reader *r, vn_hotplug_sh_fn sh, void *sh_data, const char *libdir,
			     unsigned node, const struct vn_hotplug_plan *plan, struct vn_strbuf *rep,
			     struct vn_locality_dimm *out, struct vn_error *err)
{
	const char *alias = plan->ndimms ? plan->dimms[plan->ndimms - 1].alias : "?";
	unsigned nnodes = vn_loc_reader_map(r)->nnodes, own[VN_LOC_MAX_EXTRA];
	uint64_t shared = 0;
	struct vn_loc_counts d;
	int rc;

	memset(out, 0, sizeof(*out));
	if (!plan->loc_hi)
		rc = vn_infra_error(err, -ENOENT, "where it lies is unknown: %s",
				    plan->loc_why[0] ? plan->loc_why : "the hotplug did not say");
	else
		rc = add_pieces(r, plan, node, out, own, &shared, err);
	if (rc < 0) {
		vn_strbuf_printf(rep, "%s (node %u): not counted: %s\n", alias, node, err->msg);
		return rc;
	}
	vn_loc_counts_init(&d, nnodes);
	if ((rc = touch_dimm(r, sh, sh_data, libdir, node, &d, err)) == 0) {
		uint64_t on = 0, all = d.unmapped[VN_LOC_USER_STORE] + d.unplaced[VN_LOC_USER_STORE];
		for (unsigned i = 0; i < nnodes; i++)
			for (unsigned j = 0; j < nnodes; j++)
				all += *vn_loc_at(&d, i, j, VN_LOC_USER_STORE);
		for (unsigned i = 0; i < out->nown; i++)
			on += d.extra[own[i]][VN_LOC_USER_STORE];
		vn_strbuf_printf(rep,
				 "%s (node %u, 0x%llx-0x%llx, %llu bytes shared with a boot cell: unmapped) bound: "
				 "user stores in its range=%llu of %llu\n",
				 alias, node, (unsigned long long)plan->loc_lo, (unsigned long long)plan->loc_hi,
				 (unsigned long long)shared, (unsigned long long)on, (unsigned long long)all);
		rc = vn_loc_proof_judge_extra(&d, own, out->nown, 1000000, err);
	}
	vn_loc_counts_clear(&d);
	/* A settle that fails leaves its slot unproven: unmapped, as a failed proof's. */
	for (unsigned i = 0; rc == 0 && i < out->nown; i++)
		rc = vn_loc_extra_settle(r, own[i], true, err);
	if (rc < 0)
		vn_strbuf_printf(rep, "%s (node %u): not counted: %s\n", alias, node, err->msg);
	return rc;
}
