/*
 * Booted snapshots (warm starts): the key a snapshot is found by, its files
 * under CACHE/warm (util/state.h), the lock its making takes, and the cap on
 * them all. The boot and restore themselves are up.c's and boot.c's.
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <time.h>

#include "topology/topology.h"
#include "util/error.h"
#include "virt/domain-xml.h"

#define VN_WARM_KEY_LEN 64

/* What a snapshot's guest is: any change of it is another key. */
struct vn_warm_key_in {
	const struct vn_topology *t;
	const char *kernel_sha256; /* hex: what boots, the bzImage or its PVH vmlinux */
	const char *initrd_sha256; /* hex */
	const char *loader_sha256; /* hex, or NULL: SeaBIOS */
	const char *cmdline;       /* the user's part (the topology's own is in the XML), or NULL */
	const char *const *qemu_args;
	size_t nqemu_args;
	unsigned long qemu_version; /* libvirt's number for it */
	enum vn_accel accel;        /* TCG or KVM */
	enum vn_arch arch;          /* the guest's (its machine is in the XML) */
	/* Its shared directories: in the XML, so a snapshot is restored only with the same ones (mounted after). */
	const struct vn_domain_share *shares;
	unsigned nshares;
};

/*
 * The key: SHA-256 (hex) of the domain XML these make, with the guest's own
 * name, uuid and paths left out (a restore gives it new ones), and of the
 * digests and versions beside it.
 */
int vn_warm_key(const struct vn_warm_key_in *in, char hex[VN_WARM_KEY_LEN + 1], struct vn_error *err);

/* CACHE/warm's cap: VN_WARM_CACHE_MAX, or $VNUMA_WARM_CACHE_MAX (a size; 0 turns snapshots off). */
#define VN_WARM_CACHE_MAX (UINT64_C(8) << 30)
int vn_warm_cache_max(uint64_t *max, struct vn_error *err);

/* One snapshot's files, and the lock of its making (held from vn_warm_lock() until vn_warm_clear()). */
struct vn_warm {
	char key[VN_WARM_KEY_LEN + 1];
	char *cache, *save, *console, *lock;
	int lock_fd;
};
int vn_warm_open(const char *cache, const char *key, struct vn_warm *w, struct vn_error *err);
void vn_warm_clear(struct vn_warm *w);
/* Whether the snapshot is there, whole (it appears by rename only). */
bool vn_warm_ready(const struct vn_warm *w);
/*
 * The snapshot to ourselves, to make it or restore from it, waiting for
 * another process until the time `until` (vn_now_s()); -EINTR on Ctrl-C.
 */
int vn_warm_lock(struct vn_warm *w, double until, struct vn_error *err);
void vn_warm_unlock(struct vn_warm *w);
/* Used now: the least recently used go first when the cache is over its cap. */
void vn_warm_touch(const struct vn_warm *w);
/* A snapshot that failed to restore: gone, so the next boot makes it again. */
void vn_warm_drop(const struct vn_warm *w);

struct vn_warm_entry {
	char key[VN_WARM_KEY_LEN + 1];
	uint64_t bytes; /* on disk, its console log included */
	time_t used;
};
/* The snapshots in CACHE/warm, least recently used first. */
int vn_warm_list(const char *cache, struct vn_warm_entry **out, size_t *n, struct vn_error *err);
/* The least recently used removed until all are within max bytes; keep (a key, or NULL) stays. */
int vn_warm_prune(const char *cache, uint64_t max, const char *keep, unsigned *removed, struct vn_error *err);
