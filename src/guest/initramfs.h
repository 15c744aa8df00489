/*
 * The default guest userland: a newc cpio initramfs (uncompressed) holding busybox,
 * numactl's tools with their shared libraries, the requested kernel modules
 * with their dependencies, and caller-supplied files such as the agent.
 *
 * Images are content-addressed: <cache_dir>/initramfs-<sha256>.cpio, keyed
 * by every input, so an unchanged spec costs hashing only.
 *
 * Layout inside the image:
 *   /init                       busybox sh script (src/guest/init.sh)
 *   /bin/busybox, /bin/<applet> static busybox and applet symlinks
 *   /usr/bin/numactl, numastat, memhog, migratepages, migspeed
 *                               plus their libraries and ELF loader
 *   /lib/modules/<rel>/...      modules, as in the host tree
 *   /etc/vnuma/modules          module paths in load order (deps first)
 *   /etc/vnuma/modules-share    the 9p modules that mount the host's modules
 *                               tree (share_modules only), and the script that
 *   /usr/lib/vnuma/modules-mount  does (src/guest/modules-mount.sh)
 *   /etc/passwd, group, profile, mtab (-> /proc/mounts)
 *   extra files wherever their guest path says (agent: /usr/bin/vnuma-agent,
 *   workloads: /usr/lib/vnuma/)
 */
#pragma once

#include "util/error.h"

#define VN_INITRAMFS_AGENT_PATH   "/usr/bin/vnuma-agent"
#define VN_INITRAMFS_WORKLOAD_DIR "/usr/lib/vnuma"

/* What a Debian kernel needs as modules to reach the disk and the agent. */
#define VN_INITRAMFS_DEFAULT_MODULES "virtio_pci", "virtio_console", "virtio_blk", "virtio_net"
/*
 * x86 guests' own: what onlines slow memory (an NVDIMM made device-dax, then
 * kmem), where slow nodes boot; qemu_fw_cfg, which hands QEMU the kernel's
 * VMCOREINFO for vnuma dump, and pvpanic_mmio, which tells QEMU of a panic
 * (the vmcoreinfo and pvpanic devices are x86's here).
 */
#define VN_INITRAMFS_X86_MODULES "nfit", "nd_pmem", "dax_pmem", "device_dax", "kmem", "qemu_fw_cfg", "pvpanic_mmio"
/* What mounts the host's modules tree (9p over virtio): loaded by the script, not at boot. */
#define VN_INITRAMFS_SHARE_MODULES "9pnet_virtio", "9p"
#define VN_INITRAMFS_MODULES_MOUNT "/usr/lib/vnuma/modules-mount"

struct vn_initramfs_spec {
	/* e.g. "6.1.0-57-amd64"; NULL for a kernel with everything built in. */
	const char *kernel_release;
	/* NULL: /lib/modules/<kernel_release>. */
	const char *modules_dir;
	/* NULL-terminated module names ("virtio_pci" or "virtio-pci"); their
	 * dependencies come from modules.dep; built-in ones are skipped. */
	const char *const *modules;
	/* NULL-terminated: the modules that mount the host's modules tree (9p), in
	 * the image but loaded by VN_INITRAMFS_MODULES_MOUNT, which mounts the tree
	 * (guest/modules-mount.sh). NULL: no share. */
	const char *const *share_modules;
	/* NULL-terminated "host_path:guest_path" pairs. Dynamically linked ELF
	 * files bring their libraries along. */
	const char *const *extra_files;
	/* NULL: /bin/busybox (must be statically linked: busybox-static). */
	const char *busybox;
	/*
	 * Another architecture's root (Debian packages unpacked, testbed/arch-root.h):
	 * busybox, numactl and numastat, and the libraries they need, from beneath
	 * it. NULL: the host's.
	 */
	const char *sysroot;
};

/*
 * Build the image (or find it in the cache) and return its path in *out_path
 * (caller frees). cache_dir is created if missing. Input errors (a malformed
 * extra file, an unknown module) are VN_ERR_INPUT; missing host files and
 * I/O failures are VN_ERR_INFRA and name the Debian package where known.
 */
int vn_initramfs_build(const struct vn_initramfs_spec *spec, const char *cache_dir, char **out_path,
		       struct vn_error *err);
