/* vnuma hotplug (hotplug-guest.c). */
#pragma once

#include <stdbool.h>
#include <stdint.h>

#include "testbed/testbed.h"
#include "topology/fallback.h"
#include "virt/virt.h"

/*
 * vnuma hotplug: memory or vCPUs into (or memory out of) one node of a
 * running guest. The libvirt half (the request checked against the topology
 * the guest booted, its hotplug= and hotplug-cpus=; a DIMM plugged or
 * unplugged; vCPUs plugged) runs in a child process like up/down. The guest
 * half is one shell script: it waits for the new memory blocks and onlines
 * them (online_movable or online_kernel, /sys/devices/system/memory/memoryN/
 * state), offlines a DIMM's blocks before it is unplugged, and onlines
 * plugged vCPUs (/sys/devices/system/cpu/cpuN/online). Memory is added one
 * DIMM a call and removed in whole DIMMs, the latest first. vCPUs are not
 * unplugged (QEMU 7.2 does not survive it here).
 */
enum vn_hotplug_online { VN_ONLINE_MOVABLE, VN_ONLINE_KERNEL };

/* The most vCPUs one hotplug plugs, as QEMU's q35 machine has at most 288 (`vnuma hotplug --cpus`, a scenario's). */
#define VN_HOTPLUG_CPUS_MAX 288

struct vn_hotplug_req {
	const char *name;
	unsigned node;
	uint64_t memory; /* bytes, a whole number of 128M blocks; 0: none */
	unsigned cpus;   /* vCPUs; 0: none */
	bool remove;     /* take memory out of the node instead */
	enum vn_hotplug_online online;
	int timeout_ms; /* for the guest to show the new devices */
	bool locality;  /* the guest counts locality: find where a plugged DIMM lies for the plugin */
};

/* What the libvirt half decided: the DIMM plugged (or those to unplug), the vCPUs plugged. */
struct vn_hotplug_plan {
	struct vn_domain_dimm dimms[VN_DOMAIN_DIMMS_MAX];
	size_t ndimms;
	struct vn_cpuset cpus;
	/* With locality, where the plugged DIMM lies in the plugin's addresses, or why that is not known. */
	uint64_t loc_lo, loc_hi;
	char loc_why[200];
};

struct vn_hotplug_result {
	unsigned blocks;            /* memory blocks onlined (or offlined) */
	uint64_t node_memtotal;     /* the node's MemTotal afterwards, bytes */
	struct vn_cpuset cpus;      /* vCPUs plugged */
	struct vn_cpuset node_cpus; /* the node's cpulist afterwards */
	unsigned rebuilds;          /* builds of the fallback lists the change made the kernel print */
	/* What such a rebuild saw: N_MEMORY (after an online, before an offline) and the nodes with CPUs online. */
	struct vn_fallback_state seen;
	struct vn_hotplug_plan plan; /* the DIMMs plugged or unplugged, and where a plugged one lies */
};

#define VN_HOTPLUG_TIMEOUT_MS 30000

/* Runs a shell script of ours in the guest and hands back its stdout (exit 0 required). */
typedef int (*vn_hotplug_sh_fn)(void *data, const char *script, char **out, struct vn_error *err);

/* sh NULL: over an agent connection of its own. */
int vn_testbed_hotplug(const struct vn_testbed_ctx *ctx, const struct vn_hotplug_req *q, vn_hotplug_sh_fn sh,
		       void *sh_data, struct vn_hotplug_result *r, struct vn_error *err);
