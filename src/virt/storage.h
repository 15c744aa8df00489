/*
 * A host's storage pool and the artifacts in it: how kernels, initramfs and
 * disk images reach a host that shares no file system with us. Everything
 * goes through libvirt (virStorageVolUpload over a stream), so a host is
 * reachable by its URI alone.
 *
 * The embedded driver (qemu:///embed) has no storage driver: these calls
 * return -EOPNOTSUPP there with err left unset, and callers use the local
 * files as they are.
 */
#pragma once

#include <stdbool.h>
#include <stdint.h>

#include "util/error.h"
#include "virt/connect.h"

/* The pool vnuma creates or reuses on each host. */
#define VN_POOL_NAME "vnuma"
/* Its directory on a privileged (…/system) connection when the hosts line gives no pool=. */
#define VN_POOL_DIR_SYSTEM "/var/lib/libvirt/vnuma"
/* Marks a volume whose upload finished: "<volume>.done", created only after the stream did. */
#define VN_VOLUME_DONE_SUFFIX ".done"

/*
 * The "vnuma" dir pool on the connection's host: reused if it exists (started
 * if inactive, refreshed), else defined at pool_dir (NULL: VN_POOL_DIR_SYSTEM
 * for a privileged URI; a session URI needs one, an input error says so),
 * built, started and autostarted. Returns 1 when it was created, 0 when
 * reused, or a negative errno (-EOPNOTSUPP, err unset: the embedded driver).
 */
int vn_virt_pool_ensure(struct vn_virt *v, const char *pool_dir, struct vn_error *err);

/*
 * The local file as a volume in the pool (which vn_virt_pool_ensure made),
 * named by content: "<sha256>.<suffix of the local name>" (cpio.gz, qcow2,
 * bzImage, ...). A volume is reused only when its "<name>.done" marker
 * exists and its size is the file's; any other one (an upload cut short by
 * a crash, Ctrl-C or a dead host) is deleted and uploaded again.
 * *remote_path is the volume's path on that host (malloc'd); *uploaded says
 * whether it was sent now. Ctrl-C aborts the stream and deletes the volume.
 *
 * libvirt cannot tell a volume another process is still sending from one a
 * crash left behind, so uploads of one volume to one host take turns on a
 * lock in STATE/cache/uploads: vnuma processes sharing a state dir never
 * undo each other's uploads. Two machines (or state dirs) uploading the
 * same file to one host at the same moment are not guarded against.
 */
int vn_virt_volume_upload(struct vn_virt *v, const char *local_path, char **remote_path, bool *uploaded,
			  struct vn_error *err);

/* The volume name vn_virt_volume_upload gives the file of that name and digest (hex): malloc'd. */
char *vn_virt_volume_name(const char *local_path, const char *hex);

/*
 * A fresh volume (a remote guest's scratch disk, a qcow2 overlay over an
 * uploaded image): format "raw" or "qcow2", backing_path a volume path on
 * that host or NULL. A volume of that name left over is replaced.
 */
int vn_virt_volume_create(struct vn_virt *v, const char *name, uint64_t capacity, const char *format,
			  const char *backing_path, char **remote_path, struct vn_error *err);

struct vn_virt_host_info {
	char *hostname;
	unsigned cpus;
	uint64_t memory; /* bytes */
	/* major * 1000000 + minor * 1000 + micro; over the remote driver, the daemon's libvirt */
	unsigned long libvirt_version, hypervisor_version;
	bool kvm_offered; /* the capabilities offer an x86_64 kvm domain (offered, not proven) */
	struct {
		bool exists, active;
		char *path;
		uint64_t capacity, available; /* bytes */
	} pool;
};
/*
 * The host's CPUs, as libvirt counts them (virNodeGetInfo), or 0 when it
 * cannot say: a footnote's figure (compare), never a reason to fail a boot.
 */
unsigned vn_virt_host_cpus(struct vn_virt *v);
/* What `vnuma hosts check` reports of a connection's host; the pool part only when one exists. */
int vn_virt_host_info(struct vn_virt *v, struct vn_virt_host_info *out, struct vn_error *err);
void vn_virt_host_info_clear(struct vn_virt_host_info *h);

/* Guests one host takes at most: a computed capacity's cap, and what a hosts line may ask for (testbed/hosts.h). */
#define VN_VIRT_HOST_CAPACITY_MAX 4096
/*
 * How many guests of guest_vcpus and guest_memory fit on the host at once:
 * its CPUs / the guest's vCPUs, and 3/4 of its memory / the guest's memory,
 * the smaller; at least 1.
 */
unsigned vn_virt_host_capacity(const struct vn_virt_host_info *h, unsigned guest_vcpus, uint64_t guest_memory);
