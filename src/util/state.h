/*
 * The state directory's one map: every path vnuma keeps under STATE is
 * spelled here and nowhere else. Renaming one orphans what earlier versions
 * left there (caches rebuilt, guests no `down` can find), so the spelling is
 * the on-disk format, checked by tests/unit/test-util-state.c.
 *
 *   STATE                      --state-dir, $VNUMA_STATE_DIR, $XDG_STATE_HOME/vnuma,
 *                              /var/lib/vnuma (root), ~/.local/state/vnuma (vn_state_locate)
 *   STATE/guests/NAME/         a guest's dir (0700): console.log, console.pipe, agent.sock and
 *                              agent-1.sock to agent-3.sock (its agent channels) with their .lock
 *                              files, domain.xml, topology.xml (the file its up read), root.qcow2 (a
 *                              --image guest's overlay), disk-nodeN-K.img
 *   STATE/failed/NAME-UTC/     a failed guest's dir kept (newest 10), + qemu.log, no disks
 *   STATE/accel.cache          proven accelerator verdicts, a line per host kernel + QEMU
 *   STATE/libvirt/             the embedded driver's root (qemu:///embed?root=STATE/libvirt):
 *       run/qemu/NAME.pid      QEMU's pid file, read by virt/watch.c
 *       log/qemu/NAME.log      libvirt's log of the domain, copied into a failed dir
 *   STATE/libvirt.log          libvirt's own log (LIBVIRT_LOG_OUTPUTS)
 *   STATE/driver.queue         the lock vnuma processes queue on for the embedded driver
 *   STATE/pool-HEX16.lock      one per remote host: defining its "vnuma" pool takes turns
 *   STATE/cache/               CACHE, handed to the layers below as a plain directory:
 *       kernels/               kernel recipes' builds (layout: kernel/cache.c, build.c)
 *       images/                guest images from recipes: NAME-KEY16.{json,log,qcow2|cpio.gz}
 *                              (testbed/image.c names them)
 *       uploads/HEX.lock       one per remote host and volume: its uploads take turns
 *       vmlinux/HEX.elf        a bzImage's PVH vmlinux (HEX.none: it has none), with
 *                              HEX.elf.{proven,stalled}, its boot verdict (testbed/boot.c)
 *       warm/HEX.save          a booted guest saved by libvirt, HEX its snapshot key (testbed/warm.c),
 *                              with HEX.console (its boot's console log) and HEX.lock (its
 *                              making takes turns); .HEX.save.PID while written (pruned once PID is gone)
 *       digests/HEX            file digests memoized by file identity (util/sha256.c)
 *       initramfs-HEX.cpio.gz  built initramfs images (.initramfs-HEX16.XXXXXX while written)
 *
 * Every function returns a path malloc'd through util/alloc.h.
 */
#pragma once

#include <stddef.h>

#include "util/error.h"

/* Files of a guest's dir (STATE/guests/NAME, and its copy under STATE/failed). */
#define VN_GUEST_CONSOLE_LOG  "console.log"
#define VN_GUEST_AGENT_SOCK   "agent.sock"
#define VN_GUEST_CONSOLE_PIPE "console.pipe" /* QEMU's <log>, drained by the console keeper */
#define VN_GUEST_DOMAIN_XML   "domain.xml"
#define VN_GUEST_TOPOLOGY     "topology.xml" /* what hotplug reads: the up's file may be gone or changed since */
#define VN_GUEST_ROOT_DISK    "root.qcow2"
#define VN_GUEST_QEMU_LOG     "qemu.log"
#define VN_GUEST_LOCALITY     "locality.bin" /* the locality plugin's counters (metrics/locality.h) */

/* The files of a booted snapshot under CACHE/warm. */
#define VN_WARM_SAVE    "save"
#define VN_WARM_CONSOLE "console"
#define VN_WARM_LOCK    "lock"

/* STATE: GIVEN, else the fallbacks above (not created, not resolved); an input error when none applies. */
int vn_state_locate(const char *given, char **out, struct vn_error *err);

char *vn_state_guests_dir(const char *state);
char *vn_state_guest_dir(const char *state, const char *name);
/* STATE/guests/NAME/FILE, FILE one of VN_GUEST_*. */
char *vn_state_guest_file(const char *state, const char *name, const char *file);
/* strlen() of the longest agent channel socket of STATE/guests/NAME, for the unix socket path limit. */
size_t vn_state_agent_sock_len(const char *state, const char *name);
/*
 * The socket of agent channel I (virtio-serial port org.vnuma.agent.I) of a
 * guest whose channel 0 is SOCK0 (DIR/agent.sock): SOCK0 itself for 0, else
 * DIR/agent-I.sock.
 */
char *vn_state_agent_channel(const char *sock0, unsigned i);
/* Its lock file (SOCKET.lock): a host client holds it while connected (guest/agent-channel.c). */
char *vn_state_agent_channel_lock(const char *sock0, unsigned i);
/* DIR/FILE for a guest dir wherever it is (a caller's, a kept failed one). */
char *vn_guest_dir_file(const char *guest_dir, const char *file);
/* DIR/disk-nodeNODE-K.img: the K-th disk of topology node NODE. */
char *vn_guest_disk_path(const char *guest_dir, unsigned node, unsigned k);
/* DIR/disk-nodeNODE-pmem.img: the file behind slow node NODE's NVDIMM (docs/tiering.md). */
char *vn_guest_pmem_path(const char *guest_dir, unsigned node);

char *vn_state_failed_dir(const char *state);
/* STATE/failed/NAME-STAMP for the first try I=1, STATE/failed/NAME-STAMP-I after. */
char *vn_state_failed_entry(const char *state, const char *name, const char *stamp, int i);
char *vn_state_accel_cache(const char *state);
char *vn_state_embed_root(const char *state);
char *vn_state_embed_pidfile(const char *state, const char *domain);
char *vn_state_embed_qemu_log(const char *state, const char *domain);
char *vn_state_libvirt_log(const char *state);
char *vn_state_driver_queue(const char *state);
/* HEX: a host URI's digest, of which the first 16 digits name the lock. */
char *vn_state_pool_lock(const char *state, const char *hex);

char *vn_state_cache_dir(const char *state);
char *vn_state_kernels_dir(const char *state);
char *vn_state_images_dir(const char *state);
char *vn_state_uploads_dir(const char *state);
char *vn_state_upload_lock(const char *state, const char *hex);

/* Inside CACHE, the STATE/cache the layers below testbed are handed (tests hand them any dir). */
char *vn_cache_vmlinux_dir(const char *cache);
char *vn_cache_digests_dir(const char *cache);
char *vn_cache_warm_dir(const char *cache);
/* CACHE/warm/HEX.EXT, EXT one of VN_WARM_*. */
char *vn_cache_warm_file(const char *cache, const char *hex, const char *ext);
/* CACHE/warm/.HEX.save.PID: the snapshot process PID is writing. */
char *vn_cache_warm_temp(const char *cache, const char *hex, long pid);
char *vn_cache_initramfs(const char *cache, const char *hex);
/* CACHE/.initramfs-HEX16.XXXXXX: mkostemp()'s template for one being written. */
char *vn_cache_initramfs_temp(const char *cache, const char *hex);
