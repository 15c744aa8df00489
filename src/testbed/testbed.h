/*
 * A running testbed: a topology booted into a guest whose agent answers.
 * This layer composes topology + kernel + guest image + virt; the CLI's
 * up/down/list/status/exec/shell/collect and the scenario runner stand on it.
 * This header is what every room shares: the context (state dir, libvirt)
 * and the guests vnuma made. Each verb has its own: up.h, down.h,
 * agent-session.h, collect.h, fidelity.h, doctor.h, hotplug-guest.h,
 * hosts-check.h, image.h, guest-image.h, remote.h, shell.h, hosts.h.
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>

#include "util/error.h"

/* Waiting for another vnuma process to let go of the embedded driver, in ms. */
#define VN_TESTBED_LOCK_WAIT_MS 120000

struct vn_virt;
struct vn_virt_domain;

/* Where vnuma keeps its state and how it reaches libvirt. */
struct vn_testbed_ctx {
	char *state_dir; /* --state-dir, $VNUMA_STATE_DIR, $XDG_STATE_HOME/vnuma, /var/lib/vnuma (root) */
	const char *uri; /* NULL: $VNUMA_URI or the embedded driver */
	/* Another host's storage pool dir, where vnuma's "vnuma" pool goes if it has none (NULL: the default). */
	const char *pool_dir;
	int lock_timeout_ms;
	int connect_timeout_ms; /* a daemon's open (vn_virt_open_within); 0: VN_VIRT_CONNECT_TIMEOUT_MS */
};

int vn_testbed_ctx_init(struct vn_testbed_ctx *ctx, const char *state_dir, const char *uri, struct vn_error *err);
void vn_testbed_ctx_clear(struct vn_testbed_ctx *ctx);
/* Whether uri (NULL: $VNUMA_URI) reaches another host, where this host's files are not (a host or a transport in it). */
bool vn_testbed_uri_is_remote(const char *uri);

/*
 * Names of the guests with a directory in the state dir (state_dir NULL: the
 * default one), NULL-terminated, unsorted; creates nothing. For completion:
 * cheap, and needs no libvirt. Returns the count.
 */
int vn_testbed_guest_names(const char *state_dir, char ***names, struct vn_error *err);

/*
 * Look up a guest vnuma created: a domain without vnuma's metadata (another
 * tool's, or libvirt's test driver's "test") is an input error naming it.
 */
int vn_testbed_lookup(struct vn_virt *v, const char *name, struct vn_virt_domain **out, struct vn_error *err);

/* A guest vnuma made, as libvirt has it (vnuma list, vnuma status): its name, state and what booted it. */
struct vn_testbed_guest {
	char *name;
	bool running;      /* QEMU is there (the guest may be paused or crashed) */
	const char *state; /* "running", "paused", "crashed", "stopped"...: static */
	char *accel, *topology_name, *topology_path, *kernel, *kernel_id, *guest_dir; /* NULL: not recorded */
};
/* ctx's guests, sorted by name (the embedded driver's lock is held only for this). */
int vn_testbed_guest_list(const struct vn_testbed_ctx *ctx, struct vn_testbed_guest **list, size_t *n,
			  struct vn_error *err);
void vn_testbed_guest_list_free(struct vn_testbed_guest *list, size_t n);
