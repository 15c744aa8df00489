/* The busybox guest image for a kernel (guest-image.c). */
#pragma once

#include <stdbool.h>

#include "kernel/kernel.h"
#include "util/arch.h"
#include "util/error.h"

/*
 * The guest's architecture: another one's in-guest programs are the cross-built
 * ones (BUILD/arch/ARCH, util/paths.h), its busybox and numactl those unpacked
 * under root (testbed/arch-root.h). NULL where an architecture is asked for: the host's.
 */
struct vn_guest_arch {
	enum vn_arch arch;
	const char *root;
};

/*
 * The guest image for kernel k: busybox, numactl, k's modules, the agent, the
 * sampler and the workloads, and the files of the host's Debian packages
 * named in with (NULL-terminated, optional: "bash-static", "grep"), in an
 * initramfs cached in cache_dir under its contents' digest (so a second call
 * only checks the cache). A package that is not installed is an input error.
 * disk_root: the initramfs also loads ext4, to mount a disk image's root.
 * ga: another architecture's guest (NULL: the host's); with must then be empty.
 */
int vn_testbed_guest_image(const char *cache_dir, const struct vn_kernel *k, const struct vn_guest_arch *ga,
			   const char *const *with, bool disk_root, char **initrd, struct vn_error *err);
/* At most this many files of one --with package go into the image. */
#define VN_TESTBED_PACKAGE_FILES_MAX 4096
