/*
 * The libvirt connection. Guests, their console and accelerators have their
 * own headers (domain.h, console.h, accel.h) besides domain-xml.h; libvirt's
 * own types stay behind them.
 */
#pragma once

#include <stdbool.h>

#include "util/error.h"

struct vn_virt;

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

/* Keepalive on a connection to another host: a probe every 5 s, closed after 3 unanswered. */
#define VN_VIRT_KEEPALIVE_S     5
#define VN_VIRT_KEEPALIVE_COUNT 3

/* libvirt's and the hypervisor's versions, as major * 1000000 + minor * 1000 + micro (0 if unknown). */
void vn_virt_versions(struct vn_virt *v, unsigned long *libvirt, unsigned long *hypervisor);

/* Whether the connection still works (a remote host's daemon answers its keepalives; always for local ones). */
bool vn_virt_alive(struct vn_virt *v);
/* Whether the connection reaches another host (a URI with a host or a transport): files are not shared. */
bool vn_virt_is_remote(const struct vn_virt *v);
