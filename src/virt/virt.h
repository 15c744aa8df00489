/*
 * libvirt connection, guest lifecycle and console. The only header besides
 * domain-xml.h that the rest of vnuma needs from this layer; libvirt's own
 * types stay behind it.
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>

#include "topology/topology.h"
#include "util/cleanup.h"
#include "util/error.h"
#include "virt/domain-xml.h"

struct vn_virt;
struct vn_virt_domain;

/*
 * Open a connection. uri NULL: $VNUMA_URI, else qemu:///embed?root=STATE_DIR/libvirt
 * (libvirt's QEMU driver inside this process, no daemon). state_dir is created
 * (0700) and holds guests/<name>/ and the accelerator verdict cache. Only one
 * process can hold an embed root, and it holds it until it exits, even after
 * vn_virt_close; a second one waits until timeout_ms and then fails with an
 * INFRA error naming the state dir.
 */
int vn_virt_open(const char *uri, const char *state_dir, int timeout_ms, struct vn_virt **out, struct vn_error *err);
/*
 * The same, with a deadline for a URI that reaches a daemon (another host,
 * a libvirtd): virConnectOpen waits for an answer without one, so a host
 * that accepts and never answers would hang us. Past connect_timeout_ms
 * (0: VN_VIRT_CONNECT_TIMEOUT_MS), or when interrupted, it is an INFRA
 * error (-ETIMEDOUT, -EINTR) and the open is left to finish in a thread of
 * its own, which closes what it gets. The embedded driver is in-process: no deadline.
 */
#define VN_VIRT_CONNECT_TIMEOUT_MS 20000
int vn_virt_open_within(const char *uri, const char *state_dir, int timeout_ms, int connect_timeout_ms,
			struct vn_virt **out, struct vn_error *err);
void vn_virt_close(struct vn_virt *v);
/*
 * Points libvirt's log (LIBVIRT_LOG_OUTPUTS) at STATE_DIR/libvirt.log unless
 * the environment already names one. libvirt reads the variable once, when
 * it initializes, and in vnuma that is as the program is loaded
 * (libguestfs's constructor calls virInitialize), before main: true when
 * this call set it, so that only a process started from here on (execv)
 * logs there. vn_virt_open calls it too, for processes that load libvirt later.
 */
bool vn_virt_log_setup(const char *state_dir);
/* Whether vn_virt_open(uri, ...) would use the embedded driver (and so hold the state dir until exit). */
bool vn_virt_uri_is_embedded(const char *uri);
/* Whether uri (NULL: $VNUMA_URI) reaches another host: a host or a transport in it (qemu+ssh://, qemu+tcp://). */
bool vn_virt_uri_is_remote(const char *uri);
const char *vn_virt_uri(const struct vn_virt *v);

/*
 * Accelerators are proven by the guest, never assumed: KVM counts only once
 * the guest kernel printed on the console within VN_KVM_PROOF_MS of QEMU's
 * start (a working KVM prints its first line in well under a second; TCG on
 * a 2-core host takes ~5.7 s to print its first, so a silent KVM costs less
 * than one TCG head start). Otherwise the attempt is destroyed and the guest
 * boots under TCG. Verdicts are cached in STATE_DIR/accel.cache per host
 * kernel release + QEMU version, with their reason, once the guest proved
 * them; a cached KVM verdict is still watched and re-probed once if it fails.
 * $VNUMA_ACCEL=tcg|kvm forces a choice (a forced KVM still fails fast).
 */
/* Keepalive on a connection to another host: a probe every 5 s, closed after 3 unanswered. */
#define VN_VIRT_KEEPALIVE_S     5
#define VN_VIRT_KEEPALIVE_COUNT 3

#define VN_KVM_PROOF_MS     5000
#define VN_TCG_PROOF_MS     60000
#define VN_ACCEL_REASON_MAX 512
#define VN_ACCEL_DETAIL_MAX 4096

/*
 * Several lines of QEMU's (warnings, the error, an assertion) as one: the
 * lines joined with " | ", for a cache line or one of doctor's rows.
 */
void vn_accel_oneline(const char *s, char *out, size_t len);
/*
 * The short reason of an accelerator detail (QEMU's error, whole, or a cached
 * verdict): its cause in at most ~100 printable characters, e.g. "QEMU failed
 * to start under KVM (failed to set MSR 0x10a; nested virtualization?)".
 */
void vn_accel_summarize(const char *detail, char *out, size_t len);

/* True once a console log shows a running kernel (its banner, a timestamped line, or our init's markers). */
bool vn_console_shows_kernel(const char *s, size_t n);
/* The same for a console log file (its first 64 KiB). */
bool vn_console_log_shows_kernel(const char *path);

/* STATE_DIR/accel.cache's verdict for this host, for `doctor`: 0, or -ENOENT when there is none. */
int vn_virt_accel_cached(struct vn_virt *v, enum vn_accel *verdict, char *reason, size_t len);
/* The same without a connection: the last verdict for this host kernel, any QEMU version; -ENOENT when none. */
int vn_virt_accel_cached_host(const char *state_dir, enum vn_accel *verdict, char *reason, size_t len);
/* Record a verdict the guest proved, with its reason, for this host kernel + QEMU version. */
void vn_virt_accel_remember(struct vn_virt *v, enum vn_accel verdict, const char *reason);
/* Can this host offer KVM at all (local /dev/kvm usable, libvirt knows a kvm domain type)? why says not. */
bool vn_virt_kvm_offered(struct vn_virt *v, char *why, size_t len);
/* libvirt's and the hypervisor's versions, as major * 1000000 + minor * 1000 + micro (0 if unknown). */
void vn_virt_versions(struct vn_virt *v, unsigned long *libvirt, unsigned long *hypervisor);

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
	bool running;
	struct vn_domain_meta meta;
};
/* All domains carrying vnuma metadata, sorted by name. */
int vn_virt_domain_list(struct vn_virt *v, struct vn_virt_domain_info **list, size_t *n, struct vn_error *err);
void vn_virt_domain_info_free(struct vn_virt_domain_info *list, size_t n);

/*
 * Interactive console: forward in_fd -> guest serial console -> out_fd until
 * the escape byte (0x1d, Ctrl-], is what `vnuma shell` passes) or the console
 * closes (guest gone). in_fd is put in raw mode if it is a terminal and
 * restored on every way out. EOF on in_fd stops input only; output keeps
 * flowing until the console closes, so a script can be piped in.
 */
#define VN_CONSOLE_ESCAPE 0x1d
int vn_virt_console_attach(struct vn_virt_domain *d, int in_fd, int out_fd, char escape, struct vn_error *err);

/*
 * The guest's virtio-serial channel NAME through libvirt (virDomainOpenChannel),
 * as a local socket *fd: what is written to it goes to the guest, what the
 * guest sends is read from it, EOF when the guest, its host or the stream
 * goes away. Closing *fd ends the stream. This is how the agent of a guest on
 * another host is reached; the protocol on top does not know the difference.
 */
int vn_virt_domain_open_channel(struct vn_virt_domain *d, const char *name, int *fd, struct vn_error *err);
/*
 * At most this much of a guest's serial console reaches its local log:
 * through libvirt's stream (virDomainOpenConsole) for a guest on another
 * host, whose <log file=> would be on that host, or through the console
 * keeper that drains QEMU's FIFO for a local one. The last line of it says
 * the log is full; after it, only the kernel's last words.
 */
#define VN_CONSOLE_LOG_MAX (UINT64_C(64) << 20)
/* Whether the connection still works (a remote host's daemon answers its keepalives; always for local ones). */
bool vn_virt_alive(struct vn_virt *v);
/* Whether the connection reaches another host (a URI with a host or a transport): files are not shared. */
bool vn_virt_is_remote(const struct vn_virt *v);

/* err->detail for a failed boot: the console tail (may be NULL) and where its logs were kept (may be NULL). */
void vn_console_failure_detail(struct vn_error *err, const char *tail, const char *kept);

/* How many console lines a boot failure shows. */
#define VN_CONSOLE_TAIL_LINES 20
/* Last nlines lines of a console log (for error details); "" if it is missing. */
int vn_console_log_tail(const char *path, unsigned nlines, char **out, struct vn_error *err);

/*
 * How a console says its guest died: the kernel's last line before the
 * machine went (a panic, then its reset under panic=-1, is a panic).
 */
enum vn_console_death { VN_DEATH_NONE, VN_DEATH_REBOOT, VN_DEATH_HALT, VN_DEATH_POWEROFF, VN_DEATH_PANIC };
/* The gravest death s[0..n) shows; *at (optional) gets where its marker starts. */
enum vn_console_death vn_console_death_scan(const char *s, size_t n, size_t *at);
/* "powered off", "panicked", ... */
const char *vn_console_death_name(enum vn_console_death d);

/*
 * A running guest's death, noticed without a libvirt connection (watch.c
 * says why): new console lines are scanned for the kernel's last words and,
 * under the embedded driver (state_dir non-NULL), QEMU's pid from
 * STATE_DIR/libvirt/run/qemu/NAME.pid is checked. Cheap enough to call
 * every second.
 */
struct vn_virt_watch;
struct vn_virt_watch *vn_virt_watch_new(const char *state_dir, const char *name, const char *console_log);
/* 0 while nothing says the guest died; else -EHOSTDOWN (infra) naming it and the cause, the console tail in detail. */
int vn_virt_watch_check(struct vn_virt_watch *w, struct vn_error *err);
void vn_virt_watch_free(struct vn_virt_watch *w);
/* A guest on another host: the loss of its connection v (borrowed, outliving w) counts as its death too. */
void vn_virt_watch_connection(struct vn_virt_watch *w, struct vn_virt *v);

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
/* Plug (on) or unplug one hot-pluggable vCPU. */
int vn_virt_domain_set_vcpu(struct vn_virt_domain *d, unsigned cpu, bool on, struct vn_error *err);
/* The live domain's enabled vCPUs. */
int vn_virt_domain_vcpus(struct vn_virt_domain *d, struct vn_cpuset *enabled, struct vn_error *err);
