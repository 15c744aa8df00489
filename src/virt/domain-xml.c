/* Topology -> libvirt domain XML. Pure: no libvirt, no I/O. */
#include "virt/domain-xml-parse.h"
#include "virt/domain-xml.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <libxml/parser.h>
#include <libxml/tree.h>

#include "agent/protocol.h"
#include "util/cleanup.h"
#include "util/strbuf.h"
#include "util/alloc.h"
#include "util/state.h"
#include "topology/tiers.h"

#define MiB (UINT64_C(1) << 20)
#define GiB (UINT64_C(1) << 30)
/* QEMU 7.2 pc_q35_init(): below-4G RAM is 0xb0000000 unless RAM reaches that, then 2 GiB. */
#define Q35_LOWMEM_SMALL UINT64_C(0xb0000000)
#define Q35_LOWMEM_BIG   UINT64_C(0x80000000)
#define FOUR_GiB         (UINT64_C(4) << 30)
/* A slow node's stand-in grows up to this (guest address space, reserved: docs/locality.md, "Tiered shapes"). */
#define VN_STANDIN_MAX_BYTES (UINT64_C(64) << 30)

const char *vn_accel_name(enum vn_accel a)
{
	switch (a) {
	case VN_ACCEL_TCG: return "tcg";
	case VN_ACCEL_KVM: return "kvm";
	case VN_ACCEL_AUTO: return "auto";
	}
	return "?";
}

void vn_domain_meta_clear(struct vn_domain_meta *m)
{
	vn_free_all(m->topology_name, m->topology_path, m->kernel, m->kernel_id, m->scenario, m->accel, m->guest_dir);
	memset(m, 0, sizeof(*m));
}

char *vn_xml_escape(const char *s)
{
	struct vn_strbuf b = VN_STRBUF_INIT;

	for (; s && *s; s++) {
		switch (*s) {
		case '&': vn_strbuf_append(&b, "&amp;", 5); break;
		case '<': vn_strbuf_append(&b, "&lt;", 4); break;
		case '>': vn_strbuf_append(&b, "&gt;", 4); break;
		case '\'': vn_strbuf_append(&b, "&apos;", 6); break;
		case '"': vn_strbuf_append(&b, "&quot;", 6); break;
		default: vn_strbuf_append(&b, s, 1);
		}
	}
	return vn_strbuf_steal(&b);
}

/* XML 1.0 cannot carry most control characters at all, escaped or not. */
static int check_text(const char *what, const char *s, struct vn_error *err)
{
	for (const unsigned char *p = (const unsigned char *)s; p && *p; p++)
		if (*p < 0x20 && *p != '\t')
			return vn_input_error(err, "%s contains a control character (0x%02x), which XML cannot carry",
					      what, *p);
	return 0;
}

/* Appends " name='escaped value'"; skips NULL values. */
/* The 9p tag the guest's /sbin/modprobe mounts (src/guest/modprobe.sh). */
#define VN_DOMAIN_MODULES_TAG "vnuma-modules"

static void attr(struct vn_strbuf *b, const char *name, const char *value)
{
	if (!value)
		return;
	_cleanup_free_ char *e = vn_xml_escape(value);
	vn_strbuf_printf(b, " %s='%s'", name, e);
}

/* Appends "<tag>escaped</tag>\n" at indent; skips NULL values. */
static void elem(struct vn_strbuf *b, int indent, const char *tag, const char *value)
{
	if (!value)
		return;
	_cleanup_free_ char *e = vn_xml_escape(value);
	vn_strbuf_printf(b, "%*s<%s>%s</%s>\n", indent, "", tag, e, tag);
}

/* A cell's size when a slow node's stand-in is s bytes. */
static uint64_t cell_bytes_with(const struct vn_node *n, uint64_t s)
{
	/* A slow node's memory is its NVDIMM's: at boot it is memory-less (docs/tiering.md). */
	if (vn_node_is_slow(n))
		return s;
	if (!vn_node_has_boot_memory(n))
		return VN_MEMLESS_DUMMY_BYTES;
	/* libvirt rounds every cell up to 1 MiB; doing it here keeps our address math equal to QEMU's. */
	return (n->memory + MiB - 1) / MiB * MiB;
}

/*
 * A slow node's NVDIMM is its memory plus one memory block (128 MiB on x86):
 * device-dax data starts past an info block (2 MiB with the default align),
 * and kmem onlines only the whole blocks inside it (dax_kmem_range()), so
 * the block the info block starts loses its place to the slack instead of
 * to the node's memory. The slack costs address space only: the backing
 * file is sparse and mapped private, and the guest never touches it.
 */
#define VN_NVDIMM_SLACK_BYTES (UINT64_C(128) << 20)

uint64_t vn_domain_nvdimm_bytes(const struct vn_node *n)
{
	return vn_node_is_slow(n) ? (n->memory + MiB - 1) / MiB * MiB + VN_NVDIMM_SLACK_BYTES : 0;
}

/* The bytes of all cells, and of all NVDIMMs (whose RAM blocks QEMU 7.2 allocates right after the cells'). */
static void sums_with(const struct vn_topology *t, uint64_t s, uint64_t *cells, uint64_t *nvdimms)
{
	*cells = *nvdimms = 0;
	for (unsigned i = 0; i < t->nnodes; i++) {
		*cells += cell_bytes_with(&t->nodes[i], s);
		*nvdimms += vn_domain_nvdimm_bytes(&t->nodes[i]);
	}
}

/*
 * Whether, with stand-ins of s bytes, a cell with boot memory shares
 * locality plugin addresses (docs/locality.md, "Tiered shapes") with the
 * NVDIMMs: cell i at [2 base_i, 2 base_i + size_i), the NVDIMMs at
 * [cells, cells + nvdimms), their ram_addr with their region at 0.
 */
static bool standin_clashes(const struct vn_topology *t, uint64_t s)
{
	uint64_t cells, nv, base = 0;

	sums_with(t, s, &cells, &nv);
	for (unsigned i = 0; i < t->nnodes; i++) {
		uint64_t z = cell_bytes_with(&t->nodes[i], s);
		if (vn_node_has_boot_memory(&t->nodes[i]) && 2 * base < cells + nv && cells < 2 * base + z)
			return true;
		base += z;
	}
	return false;
}

/* The stand-in a bound num/den asks for (2 MiB aligned), if it is smaller than best and leaves every cell clear. */
static uint64_t try_standin(const struct vn_topology *t, int64_t num, uint64_t den, uint64_t best)
{
	uint64_t s = num > 0 ? ((uint64_t)num + den - 1) / den : 0;

	s = (s + VN_MEMLESS_DUMMY_BYTES - 1) / VN_MEMLESS_DUMMY_BYTES * VN_MEMLESS_DUMMY_BYTES;
	if (s < VN_MEMLESS_DUMMY_BYTES)
		s = VN_MEMLESS_DUMMY_BYTES;
	return s <= VN_STANDIN_MAX_BYTES && (!best || s < best) && !standin_clashes(t, s) ? s : best;
}

/*
 * With K stand-ins of s, k_j of them before cell j (A_j the other cells'
 * bytes before it, A all of theirs, N the NVDIMMs'), cell j stays clear of
 * the NVDIMMs either below them, s (K - 2 k_j) >= 2 A_j + size_j - A, or
 * above them, s (2 k_j - K) >= A + N - 2 A_j. The least stand-in that
 * leaves every cell clear is the memory-less one or one of these bounds.
 */
uint64_t vn_domain_standin_bytes(const struct vn_topology *t)
{
	uint64_t cells, nv, a = 0, best;
	unsigned nslow = 0, k = 0;

	sums_with(t, 0, &cells, &nv);
	for (unsigned i = 0; i < t->nnodes; i++)
		nslow += vn_node_is_slow(&t->nodes[i]);
	if (!nslow)
		return VN_MEMLESS_DUMMY_BYTES;
	best = try_standin(t, 0, 1, 0);
	for (unsigned i = 0; i < t->nnodes; i++) {
		const struct vn_node *n = &t->nodes[i];
		uint64_t z = cell_bytes_with(n, 0);
		int64_t den = (int64_t)nslow - 2 * (int64_t)k;

		if (vn_node_is_slow(n)) {
			k++;
			continue;
		}
		int64_t num =
			den > 0 ? (int64_t)(2 * a + z) - (int64_t)cells : (int64_t)(cells + nv) - (int64_t)(2 * a);
		a += z;
		if (vn_node_has_boot_memory(n) && den != 0)
			best = try_standin(t, num, (uint64_t)(den > 0 ? den : -den), best);
	}
	/* None: the shape cannot be counted (vn_testbed_locality_supported() says so); its stand-ins stay small. */
	return best ? best : VN_MEMLESS_DUMMY_BYTES;
}

uint64_t vn_domain_cell_bytes(const struct vn_topology *t, unsigned node)
{
	const struct vn_node *n = &t->nodes[node];
	return cell_bytes_with(n, vn_node_is_slow(n) ? vn_domain_standin_bytes(t) : 0);
}

static uint64_t total_cell_bytes(const struct vn_topology *t)
{
	uint64_t cells, nv;

	sums_with(t, vn_domain_standin_bytes(t), &cells, &nv);
	return cells;
}

int vn_domain_cell_ranges(const struct vn_topology *t, unsigned node, struct vn_gpa_range out[2], unsigned *n,
			  struct vn_error *err)
{
	if (node >= t->nnodes)
		return vn_input_error(err, "node %u does not exist", node);
	uint64_t total = total_cell_bytes(t);
	uint64_t lowmem = total >= Q35_LOWMEM_SMALL ? Q35_LOWMEM_BIG : Q35_LOWMEM_SMALL;
	uint64_t off = 0, s = vn_domain_standin_bytes(t);

	for (unsigned i = 0; i < node; i++)
		off += cell_bytes_with(&t->nodes[i], s);
	uint64_t size = cell_bytes_with(&t->nodes[node], s);

	*n = 0;
	if (off < lowmem) {
		uint64_t below = size < lowmem - off ? size : lowmem - off;
		out[(*n)++] = (struct vn_gpa_range){off, below};
		off += below;
		size -= below;
	}
	if (size > 0)
		out[(*n)++] = (struct vn_gpa_range){FOUR_GiB + (off - lowmem), size};
	return 0;
}

int vn_domain_cmdline_extra(const struct vn_topology *t, enum vn_arch a, char **out, struct vn_error *err)
{
	_cleanup_strbuf_ struct vn_strbuf b = VN_STRBUF_INIT;

	/* Serial console for our log; a panic ends the domain (on_reboot=destroy) instead of hanging. */
	vn_strbuf_printf(&b, "console=%s panic=-1", vn_arch_info(a)->console);
	for (unsigned i = 0; i < t->nnodes; i++) {
		const struct vn_node *nd = &t->nodes[i];

		if (vn_node_has_boot_memory(nd))
			continue;
		struct vn_gpa_range r[2];
		unsigned n;
		int rc = vn_domain_cell_ranges(t, i, r, &n, err);
		if (rc < 0)
			return rc;
		for (unsigned k = 0; k < n; k++)
			vn_strbuf_printf(&b, " memmap=%" PRIu64 "K$0x%" PRIx64, r[k].size >> 10, r[k].start);
	}
	*out = vn_strbuf_steal(&b);
	return 0;
}

static unsigned gcd(unsigned a, unsigned b)
{
	while (b) {
		unsigned r = a % b;
		a = b;
		b = r;
	}
	return a;
}

/*
 * QEMU numbers vCPUs socket-major, so socket s holds vCPUs [s*c, (s+1)*c) for
 * c CPUs per socket. A layout is good when no socket spans two nodes.
 */
static bool sockets_within_nodes(const struct vn_topology *t, unsigned per_socket)
{
	for (unsigned s = 0; s < t->ncpus_total / per_socket; s++) {
		int node = vn_topology_cpu_node(t, s * per_socket);
		for (unsigned c = 1; c < per_socket; c++)
			if (vn_topology_cpu_node(t, s * per_socket + c) != node)
				return false;
	}
	return true;
}

int vn_domain_cpu_layout(const struct vn_topology *t, struct vn_cpu_layout *out, struct vn_error *err)
{
	if (t->cpu_topology_given) {
		*out = (struct vn_cpu_layout){t->sockets, t->dies, t->cores, t->threads};
		return 0;
	}
	/*
	 * libvirt needs sockets*dies*cores*threads == vcpus with the same number of
	 * cores in every socket. Take the largest per-socket count dividing every
	 * node's CPU count whose sockets stay inside one node: equal nodes with
	 * contiguous CPU numbers get one socket per node. Unequal nodes (3+1 CPUs)
	 * or interleaved numbering end up with several smaller sockets per node,
	 * down to one single-core socket per CPU: the guest then sees more sockets
	 * than nodes (lscpu), but never a socket spanning nodes, which the kernel
	 * warns about (topology_sane) and which skews the scheduler's domains.
	 */
	unsigned g = 0;
	for (unsigned i = 0; i < t->nnodes; i++)
		if (vn_node_has_cpus(&t->nodes[i]))
			g = gcd(g, t->nodes[i].ncpus);
	for (unsigned c = g; c >= 1; c--) {
		if (g % c || t->ncpus_total % c || !sockets_within_nodes(t, c))
			continue;
		*out = (struct vn_cpu_layout){t->ncpus_total / c, 1, c, 1};
		return 0;
	}
	*out = (struct vn_cpu_layout){t->ncpus_total, 1, 1, 1};
	return 0;
}

/* Per-vCPU state, only when some are hot-pluggable: those start absent, the rest cannot be unplugged. */
static void emit_vcpus(struct vn_strbuf *b, const struct vn_topology *t)
{
	if (!t->nhotplug_cpus_total)
		return;
	vn_strbuf_printf(b, "  <vcpus>\n");
	for (unsigned cpu = 0; cpu < t->ncpus_total; cpu++) {
		int node = vn_topology_cpu_node(t, cpu);
		bool hot = node >= 0 && vn_cpuset_has(&t->nodes[node].hotplug_cpus, cpu);
		vn_strbuf_printf(b, "    <vcpu id='%u' enabled='%s' hotpluggable='%s'/>\n", cpu, hot ? "no" : "yes",
				 hot ? "yes" : "no");
	}
	vn_strbuf_printf(b, "  </vcpus>\n");
}

/* <metadata>...</metadata>, unindented on its first line, no newline after. */
static void emit_metadata_block(struct vn_strbuf *b, const struct vn_domain_opts *o)
{
	const struct vn_domain_meta *m = &o->meta;

	vn_strbuf_printf(b, "<metadata>\n    <" VN_XMLNS_PREFIX ":vnuma xmlns:" VN_XMLNS_PREFIX "='" VN_XMLNS "'>\n");
	if (m->topology_name || m->topology_path) {
		vn_strbuf_printf(b, "      <" VN_XMLNS_PREFIX ":topology");
		attr(b, "name", m->topology_name);
		attr(b, "path", m->topology_path);
		vn_strbuf_printf(b, "/>\n");
	}
	vn_strbuf_printf(b, "      <" VN_XMLNS_PREFIX ":kernel");
	attr(b, "path", m->kernel ? m->kernel : o->kernel);
	attr(b, "id", m->kernel_id);
	vn_strbuf_printf(b, "/>\n");
	vn_strbuf_printf(b, "      <" VN_XMLNS_PREFIX ":accel>%s</" VN_XMLNS_PREFIX ":accel>\n",
			 vn_accel_name(o->accel));
	elem(b, 6, VN_XMLNS_PREFIX ":scenario", m->scenario);
	elem(b, 6, VN_XMLNS_PREFIX ":guest-dir", m->guest_dir);
	vn_strbuf_printf(b, "    </" VN_XMLNS_PREFIX ":vnuma>\n  </metadata>");
}

static void emit_metadata(struct vn_strbuf *b, const struct vn_domain_opts *o)
{
	vn_strbuf_printf(b, "  ");
	emit_metadata_block(b, o);
	vn_strbuf_printf(b, "\n");
}

char *vn_domain_metadata_xml(const struct vn_domain_opts *o)
{
	struct vn_strbuf b = VN_STRBUF_INIT;

	emit_metadata_block(&b, o);
	return vn_strbuf_steal(&b);
}

static void emit_numa(struct vn_strbuf *b, const struct vn_topology *t)
{
	uint64_t s = vn_domain_standin_bytes(t);

	vn_strbuf_printf(b, "    <numa>\n");
	for (unsigned i = 0; i < t->nnodes; i++) {
		const struct vn_node *nd = &t->nodes[i];

		vn_strbuf_printf(b, "      <cell id='%u'", i);
		if (vn_node_has_cpus(nd)) {
			_cleanup_free_ char *cpus = vn_cpulist_format(&nd->cpus);
			vn_strbuf_printf(b, " cpus='%s'", cpus);
		}
		vn_strbuf_printf(b, " memory='%" PRIu64 "' unit='KiB'", cell_bytes_with(nd, s) >> 10);
		if (t->nnodes < 2) {
			vn_strbuf_printf(b, "/>\n");
			continue;
		}
		/* The full row, always: libvirt fills gaps with 10/20, which would hide a file's intent. */
		vn_strbuf_printf(b, ">\n        <distances>\n");
		for (unsigned j = 0; j < t->nnodes; j++)
			vn_strbuf_printf(b, "          <sibling id='%u' value='%u'/>\n", j, t->distance[i][j]);
		vn_strbuf_printf(b, "        </distances>\n      </cell>\n");
	}
	if (t->nhmat > 0) {
		vn_strbuf_printf(b, "      <interconnects>\n");
		for (unsigned k = 0; k < t->nhmat; k++) {
			const struct vn_hmat_entry *h = &t->hmat[k];

			/* libvirt: latency in ns (no unit attribute); bandwidth in KiB/s by default. */
			if (h->type == VN_HMAT_LATENCY)
				vn_strbuf_printf(
					b,
					"        <latency initiator='%u' target='%u' type='access' value='%" PRIu64
					"'/>\n",
					h->initiator, h->target, h->value);
			else
				/*
				 * The model's MB/s is the unit ACPI HMAT and Linux's sysfs
				 * (access0/initiators/read_bandwidth) use; QEMU turns the
				 * bytes/s libvirt hands it into that unit by dividing by
				 * MiB, so MB/s * 1024 KiB/s makes the guest report the
				 * figure from the topology file unchanged.
				 */
				vn_strbuf_printf(
					b,
					"        <bandwidth initiator='%u' target='%u' type='access' value='%" PRIu64
					"' unit='KiB'/>\n",
					h->initiator, h->target, h->value * 1024);
		}
		vn_strbuf_printf(b, "      </interconnects>\n");
	}
	vn_strbuf_printf(b, "    </numa>\n");
}

bool vn_domain_root_on_node(const struct vn_topology *t)
{
	for (unsigned i = 0; i < t->nnodes; i++)
		for (unsigned k = 0; k < t->nodes[i].ndevices; k++)
			if (t->nodes[i].devices[k].kind == VN_DEVICE_DISK && t->nodes[i].devices[k].root)
				return true;
	return false;
}

char *vn_domain_disk_image(const char *dir, unsigned node, unsigned k)
{
	return vn_guest_disk_path(dir, node, k);
}

/* See VN_DOMAIN_PXB_BUSNR. Controller indexes from 1: pcie-root is 0, libvirt numbers its own after ours. */
static int emit_node_devices(struct vn_strbuf *b, const struct vn_topology *t, const struct vn_domain_opts *o,
			     struct vn_error *err)
{
	/*
	 * A root disk is vda: on bus 0's ports, which the guest probes before the
	 * expanders' buses, or as the topology's first disk when that is marked
	 * root (the parser allows root='yes' there only).
	 */
	bool root_here = o->root_disk && vn_domain_root_on_node(t);
	unsigned index = 1, pxb = 0, disk = o->root_disk && !root_here ? 1 : 0;

	for (unsigned i = 0; i < t->nnodes; i++) {
		const struct vn_node *nd = &t->nodes[i];
		if (!nd->ndevices)
			continue;
		unsigned bus = index++;
		vn_strbuf_printf(b,
				 "    <controller type='pci' index='%u' model='pcie-expander-bus'>\n"
				 "      <target busNr='%u'>\n        <node>%u</node>\n      </target>\n"
				 "    </controller>\n",
				 bus, VN_DOMAIN_PXB_BUSNR + VN_DOMAIN_PXB_BUS_STRIDE * pxb++, i);
		for (unsigned k = 0; k < nd->ndevices; k++) {
			const struct vn_device *d = &nd->devices[k];
			unsigned port = index++;
			vn_strbuf_printf(b,
					 "    <controller type='pci' index='%u' model='pcie-root-port'>\n"
					 "      <address type='pci' domain='0x0000' bus='0x%02x' slot='0x%02x' "
					 "function='0x0'/>\n    </controller>\n",
					 port, bus, k);
			if (d->kind == VN_DEVICE_NIC) {
				/* User-mode networking: QEMU's slirp, no host bridge or privileges. */
				vn_strbuf_printf(b, "    <interface type='user'>\n      <model type='virtio'/>\n");
			} else {
				if (!o->disk_dir)
					return vn_input_error(err,
							      "node %u has a disk but no directory for its image "
							      "was given",
							      i);
				bool root = root_here && d->root;
				_cleanup_free_ char *img = root ? vn_xstrdup(o->root_disk)
							   : o->disk_prefix
								   ? vn_xasprintf("%s/%sdisk-node%u-%u.img",
										  o->disk_dir, o->disk_prefix, i, k)
								   : vn_domain_disk_image(o->disk_dir, i, k);
				int rc = check_text("disk image path", img, err);
				if (rc < 0)
					return rc;
				vn_strbuf_printf(b,
						 "    <disk type='file' device='disk'>\n"
						 "      <driver name='qemu' type='%s'/>\n      <source",
						 root ? "qcow2" : "raw");
				attr(b, "file", img);
				/* vda, vdb, ... in node order, which is also the guest's probe order (bus numbers). */
				vn_strbuf_printf(b, "/>\n      <target dev='vd%c' bus='virtio'/>\n", 'a' + disk++);
			}
			vn_strbuf_printf(b,
					 "      <address type='pci' domain='0x0000' bus='0x%02x' slot='0x00' "
					 "function='0x0'/>\n    </%s>\n",
					 port, d->kind == VN_DEVICE_NIC ? "interface" : "disk");
		}
	}
	return 0;
}

/*
 * The passthrough arguments: checked like every other text the builder
 * writes, and bounded so a caller's list cannot grow the command line without end.
 */
/*
 * A slow node's memory: an NVDIMM on the node, without a label area (the
 * guest makes its raw namespace device-dax through an info block, which
 * needs none), backed by a sparse file mapped private so that nothing the
 * guest writes reaches the disk. <pmem/> because libvirt (9.0) has QEMU
 * preallocate a file-backed NVDIMM that is not real pmem: every page
 * touched before boot, 384M of host memory per node (measured: Rss 393216
 * kB each, 72 kB with it) and about a second of a TCG boot. The mapping
 * stays private; QEMU 7.2 logs nothing about it.
 */
static int emit_nvdimms(struct vn_strbuf *b, const struct vn_topology *t, const struct vn_domain_opts *o,
			struct vn_error *err)
{
	for (unsigned i = 0; i < t->nnodes; i++) {
		if (!vn_node_is_slow(&t->nodes[i]))
			continue;
		if (!o->disk_dir)
			return vn_input_error(err, "node %u has slow memory but no disk dir was given", i);
		_cleanup_free_ char *path = vn_guest_pmem_path(o->disk_dir, i);
		_cleanup_free_ char *e = vn_xml_escape(path);
		vn_strbuf_printf(b,
				 "    <memory model='nvdimm'>\n      <source>\n        <path>%s</path>\n"
				 "        <pmem/>\n      </source>\n      <target>\n        <size unit='KiB'>%" PRIu64
				 "</size>\n"
				 "        <node>%u</node>\n      </target>\n    </memory>\n",
				 e, vn_domain_nvdimm_bytes(&t->nodes[i]) >> 10, i);
	}
	return 0;
}

static int check_qemu_args(const struct vn_domain_opts *o, struct vn_error *err)
{
	if (o->nqemu_args > VN_DOMAIN_MAX_QEMU_ARGS)
		return vn_input_error(err, "%zu extra QEMU arguments, at most %d", o->nqemu_args,
				      VN_DOMAIN_MAX_QEMU_ARGS);
	for (size_t i = 0; i < o->nqemu_args; i++) {
		int rc;
		if (!o->qemu_args[i] || !*o->qemu_args[i])
			return vn_input_error(err, "extra QEMU argument %zu is empty", i);
		if ((rc = check_text("extra QEMU argument", o->qemu_args[i], err)) < 0)
			return rc;
	}
	return 0;
}

/* Every text the caller hands the builder, before any of it is written. */
static int check_opts_texts(const struct vn_domain_opts *o, struct vn_error *err)
{
	int rc;

	const char *texts[][2] = {
		{"domain name", o->name},
		{"uuid", o->uuid},
		{"kernel path", o->kernel},
		{"loader path", o->loader},
		{"initrd path", o->initrd},
		{"kernel command line", o->cmdline},
		{"console log path", o->console_log},
		{"console FIFO path", o->console_pipe},
		{"agent socket path", o->agent_socket},
		{"emulator path", o->emulator},
		{"disk dir", o->disk_dir},
		{"disk name prefix", o->disk_prefix},
		{"root disk path", o->root_disk},
		{"modules dir", o->modules_share},
		{"topology name", o->meta.topology_name},
		{"topology path", o->meta.topology_path},
		{"kernel id", o->meta.kernel_id},
		{"scenario", o->meta.scenario},
		{"guest dir", o->meta.guest_dir},
	};
	for (size_t i = 0; i < VN_ARRAY_SIZE(texts); i++)
		if ((rc = check_text(texts[i][0], texts[i][1], err)) < 0)
			return rc;
	return check_qemu_args(o, err);
}

/*
 * virtio-9p, not virtiofs (docs/scenarios.md "share"): no virtiofsd, no
 * shared guest memory, so the cells, saved snapshots and the locality plugin
 * stay as they are. accessmode='mapped': what the guest creates on a rw share
 * is the host's 0600 file of QEMU's user, its mode and owner in xattrs, so
 * the guest's root makes no setuid file on the host. <readonly/> is QEMU's
 * readonly=on: the host side refuses writes, whatever the guest mounts.
 */
static int emit_shares(struct vn_strbuf *b, const struct vn_domain_opts *o, struct vn_error *err)
{
	int rc;

	if (o->nshares > VN_DOMAIN_MAX_SHARES)
		return vn_input_error(err, "%u shared directories, at most %d", o->nshares, VN_DOMAIN_MAX_SHARES);
	if (o->nshares && o->streams)
		return vn_input_error(err, "a guest on another host cannot mount this host's directories (--share)");
	for (unsigned i = 0; i < o->nshares; i++) {
		const struct vn_domain_share *sh = &o->shares[i];
		char tag[32];

		if (!sh->source || sh->source[0] != '/')
			return vn_input_error(err, "shared directory %u is not an absolute path", i);
		if ((rc = check_text("shared directory", sh->source, err)) < 0)
			return rc;
		snprintf(tag, sizeof(tag), VN_DOMAIN_SHARE_TAG, i);
		vn_strbuf_printf(b, "    <filesystem type='mount' accessmode='mapped'>\n"
				    "      <driver type='path'/>\n      <source");
		attr(b, "dir", sh->source);
		vn_strbuf_printf(b, "/>\n      <target dir='%s'/>\n%s    </filesystem>\n", tag,
				 sh->rw ? "" : "      <readonly/>\n");
	}
	return 0;
}

static void emit_qemu_args(struct vn_strbuf *b, const struct vn_domain_opts *o)
{
	if (!o->nqemu_args)
		return;
	vn_strbuf_printf(b, "  <qemu:commandline>\n");
	for (size_t i = 0; i < o->nqemu_args; i++) {
		vn_strbuf_printf(b, "    <qemu:arg");
		attr(b, "value", o->qemu_args[i]);
		vn_strbuf_printf(b, "/>\n");
	}
	vn_strbuf_printf(b, "  </qemu:commandline>\n");
}

/* <os>, <features> and <cpu> up to its <numa>: what differs between architectures. */
static void emit_machine(struct vn_strbuf *b, const struct vn_domain_opts *o, const char *cmdline,
			 const struct vn_cpu_layout *cl)
{
	const struct vn_arch_info *ai = vn_arch_info(o->arch);

	vn_strbuf_printf(b, "  <os>\n    <type arch='%s' machine='%s'>hvm</type>\n", ai->libvirt, ai->machine);
	if (o->loader) {
		_cleanup_free_ char *l = vn_xml_escape(o->loader);
		/* type='rom': QEMU's -bios, in place of SeaBIOS. */
		vn_strbuf_printf(b, "    <loader readonly='yes' type='rom'>%s</loader>\n", l);
	}
	elem(b, 4, "kernel", o->kernel);
	elem(b, 4, "initrd", o->initrd);
	elem(b, 4, "cmdline", cmdline);
	vn_strbuf_printf(b, "  </os>\n");
	switch (o->arch) {
	case VN_ARCH_ARM64:
		/*
		 * No ACPI: without UEFI firmware QEMU gives a directly booted kernel a
		 * device tree, whose numa-node-id and distance-map carry the nodes and
		 * the SLIT (docs/arches.md). GICv3: GICv2 stops at 8 vCPUs.
		 */
		vn_strbuf_printf(b, "  <features>\n    <gic version='3'/>\n  </features>\n");
		/* cortex-a57: what TCG emulates cheaply (max adds pointer authentication, slow under TCG). */
		vn_strbuf_printf(b, "  <cpu mode='custom' match='exact' check='none'>\n"
				    "    <model fallback='forbid'>cortex-a57</model>\n");
		break;
	case VN_ARCH_PPC64LE:
		/* pseries has no ACPI: ibm,associativity in the device tree; QEMU's default POWER CPU. */
		vn_strbuf_printf(b, "  <cpu>\n");
		break;
	default:
		/*
		 * Without ACPI there is no SRAT/SLIT and the guest sees a single node.
		 * vmcoreinfo: the kernel (qemu_fw_cfg) hands QEMU its VMCOREINFO,
		 * which vnuma dump's files need for crash and drgn to find the KASLR
		 * offset and the kernel's layout.
		 */
		vn_strbuf_printf(
			b, "  <features>\n    <acpi/>\n    <apic/>\n    <vmcoreinfo state='on'/>\n  </features>\n");
		if (o->accel == VN_ACCEL_KVM)
			vn_strbuf_printf(b, "  <cpu mode='host-passthrough' check='none' migratable='on'>\n");
		else
			/* qemu64 is what TCG emulates cheaply and every x86_64 kernel boots on. */
			vn_strbuf_printf(b, "  <cpu mode='custom' match='exact' check='none'>\n"
					    "    <model fallback='allow'>qemu64</model>\n");
	}
	vn_strbuf_printf(b, "    <topology sockets='%u' dies='%u' cores='%u' threads='%u'/>\n", cl->sockets, cl->dies,
			 cl->cores, cl->threads);
}

int vn_domain_xml_build(const struct vn_topology *t, const struct vn_domain_opts *o, char **xml, struct vn_error *err)
{
	_cleanup_strbuf_ struct vn_strbuf b = VN_STRBUF_INIT;
	_cleanup_free_ char *extra = NULL;
	_cleanup_free_ char *cmdline = NULL;
	struct vn_cpu_layout cl;
	int rc;

	if (!o->name || !*o->name)
		return vn_input_error(err, "domain name is empty");
	if (strchr(o->name, '/'))
		return vn_input_error(err, "domain name '%s' contains '/', which libvirt refuses", o->name);
	if (!o->kernel)
		return vn_input_error(err, "no kernel given");
	if (o->accel != VN_ACCEL_TCG && o->accel != VN_ACCEL_KVM)
		return vn_input_error(err, "accelerator must be decided (tcg or kvm) before building the domain XML");
	if ((rc = check_opts_texts(o, err)) < 0 || (rc = vn_domain_cpu_layout(t, &cl, err)) < 0 ||
	    (rc = vn_domain_cmdline_extra(t, o->arch, &extra, err)) < 0)
		return rc;
	if (o->cmdline && *o->cmdline) {
		cmdline = vn_xasprintf("%s %s", o->cmdline, extra);
	} else {
		cmdline = steal_pointer(&extra);
	}

	/* The qemu namespace only when used: libvirt marks such a domain tainted (custom-argv). */
	vn_strbuf_printf(&b, "<domain type='%s'%s>\n", o->accel == VN_ACCEL_KVM ? "kvm" : "qemu",
			 o->nqemu_args ? " xmlns:qemu='" VN_XMLNS_QEMU "'" : "");
	elem(&b, 2, "name", o->name);
	elem(&b, 2, "uuid", o->uuid);
	emit_metadata(&b, o);
	uint64_t nvdimms = 0;
	unsigned nslow = 0;
	for (unsigned i = 0; i < t->nnodes; i++) {
		nvdimms += vn_domain_nvdimm_bytes(&t->nodes[i]);
		nslow += vn_node_is_slow(&t->nodes[i]);
	}
	if (t->hotplug_memory_total || nslow)
		/* QEMU's -m slots=,maxmem=: the room NVDIMMs and the DIMMs plugged at run time (vnuma hotplug) take. */
		vn_strbuf_printf(&b, "  <maxMemory slots='%u' unit='KiB'>%" PRIu64 "</maxMemory>\n",
				 VN_DOMAIN_HOTPLUG_SLOTS + nslow,
				 (total_cell_bytes(t) + t->hotplug_memory_total + nvdimms) >> 10);
	vn_strbuf_printf(&b, "  <memory unit='KiB'>%" PRIu64 "</memory>\n", total_cell_bytes(t) >> 10);
	if (t->nhotplug_cpus_total)
		vn_strbuf_printf(&b, "  <vcpu placement='static' current='%u'>%u</vcpu>\n",
				 t->ncpus_total - t->nhotplug_cpus_total, t->ncpus_total);
	else
		vn_strbuf_printf(&b, "  <vcpu placement='static'>%u</vcpu>\n", t->ncpus_total);
	emit_vcpus(&b, t);
	emit_machine(&b, o, cmdline, &cl);
	emit_numa(&b, t);
	vn_strbuf_printf(&b, "  </cpu>\n");
	vn_strbuf_printf(&b, "  <clock offset='utc'/>\n");
	/*
	 * Every way out ends the domain: a reboot loop would hide a panic. A
	 * panic the pvpanic device reports (before panic=-1's reset) leaves the
	 * guest paused, "crashed", with its memory whole for vnuma dump.
	 */
	vn_strbuf_printf(&b, "  <on_poweroff>destroy</on_poweroff>\n  <on_reboot>destroy</on_reboot>\n"
			     "  <on_crash>preserve</on_crash>\n");
	vn_strbuf_printf(&b, "  <devices>\n");
	elem(&b, 4, "emulator", o->emulator);
	vn_strbuf_printf(&b, "    <controller type='usb' model='none'/>\n");
	vn_strbuf_printf(&b, "    <serial type='pty'>\n");
	if (o->console_pipe && !o->streams) {
		vn_strbuf_printf(&b, "      <log");
		attr(&b, "file", o->console_pipe);
		vn_strbuf_printf(&b, " append='off'/>\n");
	}
	vn_strbuf_printf(&b, "      <target port='0'/>\n    </serial>\n");
	vn_strbuf_printf(&b, "    <console type='pty'>\n      <target type='serial' port='0'/>\n    </console>\n");
	/* One channel per concurrent host client: QEMU's socket for a port takes one at a time. */
	for (unsigned i = 0; (o->agent_socket || o->streams) && i < VN_AGENT_NPORTS; i++) {
		vn_strbuf_printf(&b, "    <channel type='unix'>\n      <source mode='bind'");
		if (!o->streams) {
			_cleanup_free_ char *sock = vn_state_agent_channel(o->agent_socket, i);
			attr(&b, "path", sock);
		}
		vn_strbuf_printf(
			&b, "/>\n      <target type='virtio' name='" VN_AGENT_PORT_PREFIX "%u'/>\n    </channel>\n", i);
	}
	if (o->root_disk && !vn_domain_root_on_node(t)) {
		/* libvirt gives it a port on pcie-root: no node's device, so the fidelity check leaves it out. */
		vn_strbuf_printf(&b, "    <disk type='file' device='disk'>\n"
				     "      <driver name='qemu' type='qcow2'/>\n      <source");
		attr(&b, "file", o->root_disk);
		vn_strbuf_printf(&b, "/>\n      <target dev='vda' bus='virtio'/>\n    </disk>\n");
	}
	if (o->modules_share) {
		/* On pcie-root too; QEMU blocks saving the guest only while the guest has it mounted. */
		vn_strbuf_printf(&b, "    <filesystem type='mount' accessmode='passthrough'>\n      <source");
		attr(&b, "dir", o->modules_share);
		vn_strbuf_printf(&b, "/>\n      <target dir='" VN_DOMAIN_MODULES_TAG "'/>\n      <readonly/>\n"
				     "    </filesystem>\n");
	}
	if ((rc = emit_node_devices(&b, t, o, err)) < 0 || (rc = emit_nvdimms(&b, t, o, err)) < 0 ||
	    (rc = emit_shares(&b, o, err)) < 0)
		return rc;
	vn_strbuf_printf(&b, "    <memballoon model='none'/>\n");
	/* QEMU's ISA pvpanic (ACPI QEMU0001, Debian's pvpanic_mmio): q35 only. */
	if (o->arch == VN_ARCH_X86_64)
		vn_strbuf_printf(&b, "    <panic model='isa'/>\n");
	vn_strbuf_printf(&b, "  </devices>\n");
	emit_qemu_args(&b, o);
	vn_strbuf_printf(&b, "</domain>\n");
	*xml = vn_strbuf_steal(&b);
	return 0;
}

static char *child_prop(xmlNode *root, const char *name, const char *prop)
{
	for (xmlNode *c = root->children; c; c = c->next) {
		if (c->type != XML_ELEMENT_NODE || strcmp((const char *)c->name, name) != 0)
			continue;
		xmlChar *v = prop ? xmlGetProp(c, (const xmlChar *)prop) : xmlNodeGetContent(c);
		char *s = v ? vn_xstrdup((const char *)v) : NULL;
		xmlFree(v);
		return s;
	}
	return NULL;
}

int vn_domain_meta_parse(const char *xml, struct vn_domain_meta *out, struct vn_error *err)
{
	xmlDoc *doc = xmlReadMemory(xml, (int)strlen(xml), "metadata.xml", NULL,
				    XML_PARSE_NONET | XML_PARSE_NOERROR | XML_PARSE_NOWARNING);
	if (!doc)
		return vn_infra_error(err, -EINVAL, "cannot parse the domain's vnuma metadata");
	xmlNode *root = xmlDocGetRootElement(doc);
	memset(out, 0, sizeof(*out));
	/* virDomainGetMetadata() hands the element back without its namespace. */
	if (!root || strcmp((const char *)root->name, "vnuma") != 0 ||
	    (root->ns && strcmp((const char *)root->ns->href, VN_XMLNS) != 0)) {
		xmlFreeDoc(doc);
		return vn_infra_error(err, -EINVAL, "the domain's metadata is not vnuma's");
	}
	out->topology_name = child_prop(root, "topology", "name");
	out->topology_path = child_prop(root, "topology", "path");
	out->kernel = child_prop(root, "kernel", "path");
	out->kernel_id = child_prop(root, "kernel", "id");
	out->accel = child_prop(root, "accel", NULL);
	out->scenario = child_prop(root, "scenario", NULL);
	out->guest_dir = child_prop(root, "guest-dir", NULL);
	xmlFreeDoc(doc);
	return 0;
}

char *vn_domain_dimm_xml(unsigned node, uint64_t bytes)
{
	return vn_xasprintf("<memory model='dimm'>\n  <target>\n    <size unit='KiB'>%" PRIu64
			    "</size>\n    <node>%u</node>\n  </target>\n</memory>\n",
			    bytes >> 10, node);
}

static xmlNode *child_elem(xmlNode *n, const char *name)
{
	for (xmlNode *c = n ? n->children : NULL; c; c = c->next)
		if (c->type == XML_ELEMENT_NODE && strcmp((const char *)c->name, name) == 0)
			return c;
	return NULL;
}

static bool elem_u64(xmlNode *n, uint64_t *out)
{
	xmlChar *v = n ? xmlNodeGetContent(n) : NULL;
	char *end = NULL;
	bool ok = v && *v && (*out = strtoull((const char *)v, &end, 10), *end == '\0');

	xmlFree(v);
	return ok;
}

/* A live domain's XML, parsed: NULL (and err filled) when it is not XML. */
static xmlDoc *domain_doc(const char *xml, struct vn_error *err)
{
	xmlDoc *doc = xmlReadMemory(xml, (int)strlen(xml), "domain.xml", NULL,
				    XML_PARSE_NONET | XML_PARSE_NOERROR | XML_PARSE_NOWARNING);

	if (!doc)
		vn_infra_error(err, -EINVAL, "cannot parse the domain's XML");
	return doc;
}

/* The first <devices> child named name from c on (c NULL: none), for walking a domain's devices of one kind. */
static xmlNode *next_device(xmlNode *c, const char *name)
{
	for (; c; c = c->next)
		if (c->type == XML_ELEMENT_NODE && strcmp((const char *)c->name, name) == 0)
			return c;
	return NULL;
}

static xmlNode *first_device(xmlDoc *doc, const char *name)
{
	xmlNode *devices = child_elem(xmlDocGetRootElement(doc), "devices");

	return next_device(devices ? devices->children : NULL, name);
}

int vn_domain_dimms_parse(const char *xml, struct vn_domain_dimm *out, size_t max, struct vn_error *err)
{
	xmlDoc *doc = domain_doc(xml, err);
	size_t n = 0;

	if (!doc)
		return -EINVAL;
	for (xmlNode *c = first_device(doc, "memory"); c && n < max; c = next_device(c->next, "memory")) {
		xmlChar *model = xmlGetProp(c, (const xmlChar *)"model");
		bool dimm = model && strcmp((const char *)model, "dimm") == 0;
		xmlFree(model);
		xmlNode *target = child_elem(c, "target");
		xmlNode *size = child_elem(target, "size");
		uint64_t kib, node;
		if (!dimm || !elem_u64(size, &kib) || !elem_u64(child_elem(target, "node"), &node))
			continue;
		/* libvirt writes sizes back in KiB whatever unit they were given in. */
		xmlChar *unit = xmlGetProp(size, (const xmlChar *)"unit");
		bool in_kib = !unit || strcmp((const char *)unit, "KiB") == 0;
		xmlFree(unit);
		if (!in_kib)
			continue;
		struct vn_domain_dimm *d = &out[n];
		memset(d, 0, sizeof(*d));
		d->node = (unsigned)node;
		d->bytes = kib << 10;
		xmlNode *addr = child_elem(c, "address");
		xmlChar *base = addr ? xmlGetProp(addr, (const xmlChar *)"base") : NULL;
		if (base)
			d->base = strtoull((const char *)base, NULL, 0);
		xmlFree(base);
		xmlNode *alias = child_elem(c, "alias");
		xmlChar *name = alias ? xmlGetProp(alias, (const xmlChar *)"name") : NULL;
		if (name)
			snprintf(d->alias, sizeof(d->alias), "%s", (const char *)name);
		xmlFree(name);
		n++;
	}
	xmlFreeDoc(doc);
	return (int)n;
}

int vn_domain_vcpus_parse(const char *xml, struct vn_cpuset *enabled, struct vn_error *err)
{
	xmlDoc *doc = domain_doc(xml, err);
	uint64_t n = 0;

	memset(enabled, 0, sizeof(*enabled));
	if (!doc)
		return -EINVAL;
	xmlNode *root = xmlDocGetRootElement(doc);
	xmlNode *vcpus = child_elem(root, "vcpus");
	if (!vcpus) {
		if (elem_u64(child_elem(root, "vcpu"), &n))
			for (uint64_t i = 0; i < n && i < VN_CPUSET_MAX; i++)
				vn_cpuset_set(enabled, (unsigned)i);
		xmlFreeDoc(doc);
		return 0;
	}
	for (xmlNode *c = vcpus->children; c; c = c->next) {
		if (c->type != XML_ELEMENT_NODE || strcmp((const char *)c->name, "vcpu") != 0)
			continue;
		xmlChar *id = xmlGetProp(c, (const xmlChar *)"id"), *on = xmlGetProp(c, (const xmlChar *)"enabled");
		char *end = NULL;
		unsigned long v = id ? strtoul((const char *)id, &end, 10) : VN_CPUSET_MAX;
		if (id && *end == '\0' && v < VN_CPUSET_MAX && on && strcmp((const char *)on, "yes") == 0)
			vn_cpuset_set(enabled, (unsigned)v);
		xmlFree(id);
		xmlFree(on);
	}
	xmlFreeDoc(doc);
	return 0;
}

int vn_domain_disk_files(const char *xml, char **out, size_t max, struct vn_error *err)
{
	xmlDoc *doc = domain_doc(xml, err);
	size_t n = 0;

	if (!doc)
		return -EINVAL;
	for (xmlNode *c = first_device(doc, "disk"); c && n < max; c = next_device(c->next, "disk")) {
		xmlNode *src = child_elem(c, "source");
		xmlChar *file = src ? xmlGetProp(src, (const xmlChar *)"file") : NULL;
		if (file)
			out[n++] = vn_xstrdup((const char *)file);
		xmlFree(file);
	}
	xmlFreeDoc(doc);
	return (int)n;
}
