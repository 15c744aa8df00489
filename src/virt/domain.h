/* A guest's lifecycle through libvirt: create, look up, list, destroy, its channels and run-time hotplug. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "topology/topology.h"
#include "util/cleanup.h"
#include "util/error.h"
#include "virt/domain-xml-parse.h"

struct vn_virt;
struct vn_virt_domain;

/* STATE_DIR/guests/NAME, created 0700; malloc'd. Refuses names that are not one path component. */
int vn_virt_guest_dir(struct vn_virt *v, const char *name, char **dir, struct vn_error *err);

/*
 * Define a persistent domain and start it. Persistent, so that a later vnuma
 * process finds it and its <metadata> through the same embed root even after
 * the guest powered off; vn_virt_domain_destroy() undefines it. o->accel may
 * be VN_ACCEL_AUTO. Missing console_log / console_pipe / agent_socket / disk_dir
 * default to the guest dir (its files), where the domain XML is also saved. A
 * local guest's console reaches console_log through the console keeper
 * (console-keep.c), a remote one's through a stream: either way the log stops
 * at VN_CONSOLE_LOG_MAX (or $VNUMA_CONSOLE_LOG_MAX) with a line saying so. On failure the domain is
 * undefined again and err->detail holds the console log tail.
 */
int vn_virt_domain_create(struct vn_virt *v, const struct vn_topology *t, const struct vn_domain_opts *o,
			  struct vn_virt_domain **out, struct vn_error *err);
int vn_virt_domain_lookup(struct vn_virt *v, const char *name, struct vn_virt_domain **out, struct vn_error *err);
void vn_virt_domain_free(struct vn_virt_domain *d);
VN_DEFINE_CLEANUP(struct vn_virt_domain *, vn_virt_domain_free);
#define _cleanup_virt_domain_ _cleanup_(vn_virt_domain_freep)

/* The accelerator the guest runs on (from create, or its metadata after lookup). */
enum vn_accel vn_virt_domain_accel(const struct vn_virt_domain *d);
/* Why that accelerator ("proven: kernel printed 0.3 s after start", "no usable KVM: ..."); "" after lookup. */
const char *vn_virt_domain_accel_reason(const struct vn_virt_domain *d);
/* STATE_DIR/guests/NAME/console.log unless the opts said otherwise. */
const char *vn_virt_domain_console_log(const struct vn_virt_domain *d);

int vn_virt_domain_metadata(struct vn_virt_domain *d, struct vn_domain_meta *out, struct vn_error *err);
int vn_virt_domain_is_running(struct vn_virt_domain *d, bool *running, struct vn_error *err);
/* Poll until the domain is no longer running; -ETIMEDOUT after timeout_ms. */
int vn_virt_domain_wait_shutoff(struct vn_virt_domain *d, int timeout_ms, struct vn_error *err);
/* Power off hard (if running), undefine, remove the guest dir. */
int vn_virt_domain_destroy(struct vn_virt_domain *d, struct vn_error *err);
/*
 * A guest that failed: power off and undefine it, but keep its dir (console
 * logs, domain XML, and libvirt's log of its QEMU as qemu.log) as
 * STATE_DIR/failed/NAME-YYYYMMDDTHHMMSSZ, of which the newest 10 are kept.
 * *kept is that path (malloc'd).
 */
int vn_virt_domain_destroy_keep(struct vn_virt_domain *d, char **kept, struct vn_error *err);
/* The same for a guest dir whose domain never got defined or started. */
int vn_virt_guest_dir_keep(struct vn_virt *v, const char *name, char **kept, struct vn_error *err);

struct vn_virt_domain_info {
	char *name;
	bool running;      /* active: QEMU is there, running or not */
	const char *state; /* "stopped" when not active, else libvirt's (vn_virt_domain_state_name); static */
	struct vn_domain_meta meta;
};
/* All domains carrying vnuma metadata, sorted by name. */
int vn_virt_domain_list(struct vn_virt *v, struct vn_virt_domain_info **list, size_t *n, struct vn_error *err);
void vn_virt_domain_info_free(struct vn_virt_domain_info *list, size_t n);

/*
 * The guest's virtio-serial channel NAME through libvirt (virDomainOpenChannel),
 * as a local socket *fd: what is written to it goes to the guest, what the
 * guest sends is read from it, EOF when the guest, its host or the stream
 * goes away. Closing *fd ends the stream. This is how the agent of a guest on
 * another host is reached; the protocol on top does not know the difference.
 */
int vn_virt_domain_open_channel(struct vn_virt_domain *d, const char *name, int *fd, struct vn_error *err);

/*
 * Run-time topology changes (`vnuma hotplug`), on the live domain only: the
 * persistent definition keeps the shape the guest booted with. A DIMM of
 * bytes goes to node (the guest sees an ACPI memory device whose _PXM is the
 * node, its blocks offline until onlined); detaching one asks the guest to
 * eject it and waits (libvirt's few seconds) for the guest to let it go.
 */
int vn_virt_domain_attach_dimm(struct vn_virt_domain *d, unsigned node, uint64_t bytes, struct vn_error *err);
/* The live domain's DIMMs, in the order they were plugged: the count, or a negative errno. */
int vn_virt_domain_dimms(struct vn_virt_domain *d, struct vn_domain_dimm *out, size_t max, struct vn_error *err);
int vn_virt_domain_detach_dimm(struct vn_virt_domain *d, const struct vn_domain_dimm *dimm, struct vn_error *err);
/*
 * Where a plugged DIMM's memory lies in the locality plugin's addresses
 * ([lo, hi), virt/hmp.h), asked of QEMU's monitor through libvirt
 * (`info ramblock`, `info mtree`): a discovery to prove, not a fact.
 */
int vn_virt_domain_dimm_plugin_range(struct vn_virt_domain *d, const struct vn_domain_dimm *dimm, uint64_t *lo,
				     uint64_t *hi, struct vn_error *err);
/*
 * Under -icount: how many seconds the guest's clock leads the host's
 * (QEMU's `info jit`; negative while it lags). With shift=auto QEMU only
 * lowers the shift while the guest leads (docs/noise.md).
 */
int vn_virt_domain_icount_lead(struct vn_virt_domain *d, double *lead_s, struct vn_error *err);
/* Plug (on) or unplug one hot-pluggable vCPU. */
int vn_virt_domain_set_vcpu(struct vn_virt_domain *d, unsigned cpu, bool on, struct vn_error *err);
/* The live domain's enabled vCPUs. */
int vn_virt_domain_vcpus(struct vn_virt_domain *d, struct vn_cpuset *enabled, struct vn_error *err);
