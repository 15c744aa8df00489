/*
 * 6.12's abstract distances: what drivers/acpi/numa/hmat.c and
 * mm/memory-tiers.c make of the HMAT that QEMU builds from a topology's
 * <hmat> (libvirt <interconnects>), so that a tiered guest's
 * memory_tierN can be known before it boots (docs/tiering.md, "Kernel
 * versions").
 */
#include <stdint.h>
#include <stdlib.h>

#include "topology/tiers.h"

/* The access class 1 ("CPU") figures of one target: access types only, so read = write. */
struct hmat_perf {
	uint32_t latency, bandwidth;
};

/* An entry of QEMU's locality table: the topology's value, 0 where the pair has none. */
static uint32_t hmat_value(const struct vn_topology *t, unsigned ini, unsigned tgt, int type)
{
	for (unsigned k = 0; k < t->nhmat; k++)
		if (t->hmat[k].initiator == ini && t->hmat[k].target == tgt && (int)t->hmat[k].type == type)
			return (uint32_t)t->hmat[k].value;
	return 0;
}

/*
 * The Memory Proximity Domain Attributes' initiator QEMU writes, as libvirt
 * passes it (virDomainNumaGetNodeInitiator()): a node with vCPUs is its own;
 * else the first lowest latency to it in the file's order, else the first
 * highest bandwidth; -1 for none.
 */
static int hmat_initiator(const struct vn_topology *t, unsigned tgt)
{
	uint64_t lat = UINT64_MAX, bw = 0;
	int by_lat = -1, by_bw = -1;

	if (vn_node_has_cpus(&t->nodes[tgt]))
		return (int)tgt;
	for (unsigned k = 0; k < t->nhmat; k++) {
		const struct vn_hmat_entry *h = &t->hmat[k];
		if (h->target != tgt)
			continue;
		if (h->type == VN_HMAT_LATENCY && h->value < lat) {
			lat = h->value;
			by_lat = (int)h->initiator;
		} else if (h->type == VN_HMAT_BANDWIDTH && h->value > bw) {
			bw = h->value;
			by_bw = (int)h->initiator;
		}
	}
	return by_lat >= 0 ? by_lat : by_bw;
}

/*
 * hmat_update_target_attrs(), ACCESS_COORDINATE_CPU, for a target without
 * an initiator that has CPUs at boot: over the initiators with CPUs (QEMU
 * lists every node with vCPUs; the kernel drops those without N_CPU), the
 * best latency, then the best bandwidth among the nodes that had it
 * (locality_types' order; an access type stands for read and write both).
 */
static struct hmat_perf hmat_best(const struct vn_topology *t, const bool *boot_cpus, unsigned tgt)
{
	bool p[VN_MAX_NODES];
	uint32_t got[2] = {0, 0};

	for (unsigned n = 0; n < t->nnodes; n++)
		p[n] = vn_node_has_cpus(&t->nodes[n]);
	for (int pass = 0; pass < 4; pass++) {
		int type = pass < 2 ? VN_HMAT_LATENCY : VN_HMAT_BANDWIDTH;
		uint32_t best = 0;
		for (unsigned n = 0; n < t->nnodes; n++) {
			if (p[n] && !boot_cpus[n])
				p[n] = false;
			if (!p[n])
				continue;
			uint32_t v = hmat_value(t, n, tgt, type);
			/* hmat_update_best(): nonzero, lower latency or higher bandwidth; earlier initiators dropped. */
			if (v && (!best || (type == VN_HMAT_LATENCY ? v < best : v > best))) {
				best = v;
				for (unsigned i = 0; i < n; i++)
					p[i] = false;
			}
			if (v != best)
				p[n] = false;
		}
		if (best)
			got[type == VN_HMAT_BANDWIDTH] = best;
	}
	return (struct hmat_perf){got[0], got[1]};
}

/* target->coord[ACCESS_COORDINATE_CPU] once hmat_init() has parsed the table. */
static struct hmat_perf hmat_cpu_perf(const struct vn_topology *t, const bool *boot_cpus, unsigned tgt)
{
	int ini = hmat_initiator(t, tgt);

	/* hmat_update_target(): the pair (its own initiator, it), kept as parsed when that node has CPUs. */
	if (ini >= 0 && (unsigned)ini < t->nnodes && boot_cpus[ini])
		return (struct hmat_perf){hmat_value(t, (unsigned)ini, tgt, VN_HMAT_LATENCY),
					  hmat_value(t, (unsigned)ini, tgt, VN_HMAT_BANDWIDTH)};
	return hmat_best(t, boot_cpus, tgt);
}

/* The kernel's abs() on a u32 difference: taken as a signed int. */
static int64_t u32_diff(uint32_t a, uint32_t b)
{
	return llabs((int64_t)(int32_t)(a - b));
}

/*
 * hmat_set_default_dram_perf(): default_dram_nodes (boot memory and CPUs,
 * ascending) each against the first; any figure off by more than a tenth
 * of the first's, or a node with no latency or no bandwidth, and the
 * algorithm is never registered. Returns whether it is, with *ref.
 */
static bool hmat_default_dram_perf(const struct vn_topology *t, const bool *boot_cpus, struct hmat_perf *ref)
{
	bool have = false;

	for (unsigned n = 0; n < t->nnodes; n++) {
		if (!vn_node_has_boot_memory(&t->nodes[n]) || !boot_cpus[n])
			continue;
		struct hmat_perf p = hmat_cpu_perf(t, boot_cpus, n);
		/* mt_set_default_dram_perf(): read + write; the error return stops hmat_init() registering. */
		if ((uint32_t)(p.latency + p.latency) == 0 || (uint32_t)(p.bandwidth + p.bandwidth) == 0)
			return false;
		if (!have) {
			*ref = p;
			have = true;
		} else if (u32_diff(p.latency, ref->latency) * 10 > ref->latency ||
			   u32_diff(p.bandwidth, ref->bandwidth) * 10 > ref->bandwidth) {
			return false;
		}
	}
	/* No reference at all: registered, but mt_perf_to_adistance() says -ENOENT to every node. */
	if (!have)
		*ref = (struct hmat_perf){0, 0};
	return true;
}

void vn_tiers_adistance_6_12(const struct vn_topology *t, const bool *boot_cpus, struct vn_tiers *out)
{
	struct hmat_perf ref = {0, 0};

	out->hmat = t->nhmat > 0 && hmat_default_dram_perf(t, boot_cpus, &ref);
	if (!out->hmat || !ref.latency)
		return;
	/*
	 * mt_calc_adistance() for every node with memory: memory_tier_late_init()
	 * for boot memory (DRAM nodes with CPUs included), kmem's probe for slow
	 * memory. Where the figures are missing the default stays: 576 or 2880.
	 */
	for (unsigned n = 0; n < t->nnodes; n++) {
		struct hmat_perf p = hmat_cpu_perf(t, boot_cpus, n);
		uint32_t lat = p.latency + p.latency, bw = p.bandwidth + p.bandwidth;
		if (!lat || !bw)
			continue;
		/* mt_perf_to_adistance(): in long, left to right, each division truncating; stored in an int. */
		int64_t a = (int64_t)VN_MEMTIER_ADISTANCE_DRAM * lat / (uint32_t)(ref.latency + ref.latency) *
			    (uint32_t)(ref.bandwidth + ref.bandwidth) / bw;
		out->adistance[n] = (int)a;
	}
}
