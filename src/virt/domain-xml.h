/*
 * Pure libvirt domain-XML builder: a topology plus boot options in, a string
 * out. No libvirt calls, so it is golden-file testable and usable offline
 * (`vnuma topo show --domain-xml`).
 */
#pragma once

#include <stdbool.h>
#include <stdint.h>

#include "topology/topology.h"
#include "util/arch.h"
#include "util/error.h"
#include "virt/domain-share.h"

enum vn_accel {
	VN_ACCEL_TCG,
	VN_ACCEL_KVM,
	VN_ACCEL_AUTO, /* only for vn_virt_domain_create(): probe, fall back to TCG */
};

const char *vn_accel_name(enum vn_accel a);

/* Namespace of our <metadata> element; `vnuma list` finds its guests by it. */
#define VN_XMLNS        "urn:x-vnuma:domain:1"
#define VN_XMLNS_PREFIX "vnuma"
/* libvirt's namespace for QEMU passthrough (<qemu:commandline>). */
#define VN_XMLNS_QEMU "http://libvirt.org/schemas/domain/qemu/1.0"
/* At most this many passthrough arguments: a bound, not a libvirt limit. */
#define VN_DOMAIN_MAX_QEMU_ARGS 16

/* Strings stored in <metadata> so later processes can tell what a guest is. */
struct vn_domain_meta {
	char *topology_name, *topology_path;
	char *kernel, *kernel_id; /* kernel path; identity (release, recipe hash) */
	char *scenario;           /* optional */
	char *accel;              /* "tcg" / "kvm": read back only, the builder writes o->accel */
	char *guest_dir;          /* <state_dir>/guests/<name> */
};

void vn_domain_meta_clear(struct vn_domain_meta *m);

struct vn_domain_opts {
	const char *name, *uuid;               /* uuid optional */
	enum vn_arch arch;                     /* x86_64 (q35), arm64 (virt), ppc64le (pseries) */
	enum vn_accel accel;                   /* TCG or KVM (AUTO: vn_virt_domain_create decides) */
	const char *accel_reason;              /* optional, with TCG or KVM: why the caller chose it */
	const char *kernel, *initrd, *cmdline; /* direct kernel boot; cmdline/initrd optional */
	const char *loader;                    /* firmware ROM instead of SeaBIOS (qboot for a PVH vmlinux); optional */
	const char *console_log;               /* serial console log file (written by vnuma, never by QEMU) */
	const char *console_pipe;              /* the FIFO QEMU logs the serial console into (console-keep.c) */
	const char *agent_socket;              /* optional: virtio-serial channel VN_AGENT_PORT_NAME */
	const char *emulator;                  /* optional */
	const char *disk_dir;                  /* where the topology's disk images are; needed when it has disks */
	const char *disk_prefix;               /* optional: their names start so (volumes shared by guests) */
	const char *root_disk;                 /* optional: a qcow2 root, the guest's vda, on pcie-root (no node) */
	const char *modules_share;             /* optional: shared read-only over 9p, tag vnuma-modules */
	/* The guest's host does not share our files: no console <log> (streamed into the log), the agent's socket
	 * where libvirt puts it. */
	bool streams;
	/* Extra QEMU arguments, in order, through qemu:commandline (libvirt 9.0 has no -icount, -plugin). Borrowed. */
	const char *const *qemu_args;
	size_t nqemu_args;
	const struct vn_domain_share *shares; /* borrowed; nshares of them */
	unsigned nshares;
	struct vn_domain_meta meta; /* borrowed strings, all optional */
	/* vn_virt_domain_create() only: told when KVM is given up for TCG (may be NULL). */
	void (*notify)(void *data, const char *line);
	void *notify_data;
};

/*
 * Size of the stand-in cell a memory-less node gets (vn_domain_cmdline_extra()): below the
 * kernel's NODE_MIN_SIZE (4 MiB) and 1 MiB aligned, as libvirt rounds cells to 1 MiB.
 */
#define VN_MEMLESS_DUMMY_BYTES (UINT64_C(2) << 20)
/* A slow node's stand-in: as small, unless the NVDIMMs' locality addresses need it larger (domain-xml.c). */
uint64_t vn_domain_standin_bytes(const struct vn_topology *t);

uint64_t vn_domain_nvdimm_bytes(const struct vn_node *n); /* a slow node's NVDIMM (domain-xml.c) */
/* DIMM slots of a topology with hotplug memory (<maxMemory slots=>), one per `hotplug --memory`;
 * QEMU reserves 1 GiB of guest physical address space per slot for alignment, which costs nothing else. */
#define VN_DOMAIN_HOTPLUG_SLOTS 16

/*
 * Kernel arguments the topology needs on top of the user's: `console=ttyS0
 * panic=-1` (the architecture's console) and one `memmap=SIZE$START` per
 * memory-less node (x86's; other architectures refuse them, topology/arch.h). libvirt 9.0
 * cannot express a NUMA cell without memory (memory='0' becomes a zero-sized
 * memory backend that QEMU refuses), so such a node gets a small cell that the
 * kernel is told is reserved (e820): the node then has no present pages and
 * Linux brings it up as memory-less ("Initializing node N as memoryless").
 * Returns a malloc'd string.
 */
int vn_domain_cmdline_extra(const struct vn_topology *t, enum vn_arch a, char **out, struct vn_error *err);

/*
 * Guest-physical start of each part of a cell as QEMU's q35 lays them out:
 * cells in order from 0, RAM below 4 GiB capped at 2 GiB once the total
 * reaches 2816 MiB (else at 2816 MiB), the rest from 4 GiB. A cell can be split
 * by the hole, hence two ranges. Exposed for tests.
 */
struct vn_gpa_range {
	uint64_t start, size;
};
int vn_domain_cell_ranges(const struct vn_topology *t, unsigned node, struct vn_gpa_range out[2], unsigned *n,
			  struct vn_error *err);

/* The memory a node's cell really gets (rounded up to 1 MiB; a stand-in when memory-less or slow). */
uint64_t vn_domain_cell_bytes(const struct vn_topology *t, unsigned node);

/* CPU topology the domain gets: from the file, or derived so no socket spans nodes. */
struct vn_cpu_layout {
	unsigned sockets, dies, cores, threads;
};
int vn_domain_cpu_layout(const struct vn_topology *t, struct vn_cpu_layout *out, struct vn_error *err);

/*
 * t must be validated (vn_topology_load/parse, topology-xml.c): the builder
 * trusts it and checks only what the topology cannot know (names, paths).
 */
int vn_domain_xml_build(const struct vn_topology *t, const struct vn_domain_opts *o, char **xml, struct vn_error *err);

/*
 * A node's PCI devices sit behind one pcie-expander-bus per node whose
 * <target><node> is that node (QEMU's pxb-pcie: its ACPI _PXM gives the guest
 * the device's numa_node), one pcie-root-port per device on it. Each
 * expander takes bus numbers VN_DOMAIN_PXB_BUSNR + VN_DOMAIN_PXB_BUS_STRIDE * i
 * onwards (i counting the nodes with devices): room for itself and
 * VN_NODE_MAX_DEVICES ports, and buses 0..127 stay pcie-root's.
 */
#define VN_DOMAIN_PXB_BUSNR      128
#define VN_DOMAIN_PXB_BUS_STRIDE 8

/*
 * The sparse raw image behind the k-th device of node's <devices> when it is
 * a disk: DIR/disk-nodeN-K.img (malloc'd). The builder names it, the testbed
 * creates it, and it goes with the guest dir.
 */
char *vn_domain_disk_image(const char *dir, unsigned node, unsigned k);
/* Whether a disk of the topology is marked root='yes': a --image guest's root disk then sits on that node. */
bool vn_domain_root_on_node(const struct vn_topology *t);

/* XML-escape for attribute or text content (' " & < >); malloc'd. */
char *vn_xml_escape(const char *s);

/* The <memory model='dimm'> of bytes (whole KiB) for node that `vnuma hotplug --memory` attaches; malloc'd. */
char *vn_domain_dimm_xml(unsigned node, uint64_t bytes);
/* The domain XML's <metadata>...</metadata> for o (its meta, kernel and accel), as the builder writes it; malloc'd. */
char *vn_domain_metadata_xml(const struct vn_domain_opts *o);
