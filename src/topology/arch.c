#include "topology/arch.h"

static const char *src(const struct vn_topology *t)
{
	return t->path ? t->path : t->name;
}

/* One refusal per node feature, the first node that has it named. */
static int node_check(const struct vn_topology *t, enum vn_arch a, struct vn_error *err)
{
	const char *an = vn_arch_name(a);

	for (unsigned i = 0; i < t->nnodes; i++) {
		const struct vn_node *n = &t->nodes[i];
		if (n->memory_kind != VN_MEMORY_DRAM)
			return vn_input_error(err,
					      "%s:%d: %s: node %u has slow memory (memory-kind); vnuma emulates it "
					      "with an NVDIMM onlined by kmem on x86 guests only",
					      src(t), n->line, an, n->id);
		if (!vn_node_has_memory(n))
			/* libvirt 9.0 refuses a zero-sized cell; x86's stand-in (a small cell memmap= reserves) is e820's. */
			return vn_input_error(
				err,
				"%s:%d: %s: node %u has no memory; vnuma gives a memory-less node only to "
				"x86 guests (libvirt 9.0 cannot make a cell without memory, and the "
				"memmap= stand-in is x86's e820)",
				src(t), n->line, an, n->id);
		if (n->ndevices)
			return vn_input_error(err,
					      "%s:%d: %s: node %u has devices; a device's node reaches the guest "
					      "through a PCIe expander bus's ACPI _PXM, which only the x86 guest has",
					      src(t), n->line, an, n->id);
		if (n->hotplug_memory || n->nhotplug_cpus)
			return vn_input_error(err,
					      "%s:%d: %s: node %u has hotplug memory or CPUs; vnuma hotplug plugs and "
					      "onlines them through ACPI, which only the x86 guest has",
					      src(t), n->line, an, n->id);
	}
	return 0;
}

int vn_topology_arch_check(const struct vn_topology *t, enum vn_arch a, struct vn_error *err)
{
	if (a == VN_ARCH_X86_64)
		return 0;
	int rc = node_check(t, a, err);
	if (rc < 0)
		return rc;
	if (t->hmat_given)
		return vn_input_error(err,
				      "%s:%d: %s: HMAT is an ACPI table; the %s guest learns its nodes from a device "
				      "tree, which has no latencies or bandwidths",
				      src(t), t->nhmat ? t->hmat[0].line : 0, vn_arch_name(a), vn_arch_name(a));
	/* QEMU 7.2 itself: "dies not supported by this machine's CPU topology" (only x86's has dies). */
	if (t->cpu_topology_given && t->dies > 1)
		return vn_input_error(err,
				      "%s:%d: %s: %u dies per socket; QEMU's %s machine has no dies in its CPU "
				      "topology (give the cores to the sockets)",
				      src(t), t->cpu_line, vn_arch_name(a), t->dies, vn_arch_info(a)->machine);
	/* spapr_set_vsmt_mode(): "TCG cannot support more than 1 thread/core on a pseries machine". */
	if (a == VN_ARCH_PPC64LE && t->cpu_topology_given && t->threads > 1)
		return vn_input_error(err,
				      "%s:%d: ppc64le: %u threads per core; QEMU's pseries machine runs one thread per "
				      "core under TCG",
				      src(t), t->cpu_line, t->threads);
	return 0;
}

void vn_topology_arch_fallback(enum vn_arch a, struct vn_fallback_opts *o)
{
	o->cpus_visible = a == VN_ARCH_PPC64LE;
}
