/*
 * Another architecture's guest pieces from Debian's own packages: its stock
 * kernel (and modules), busybox-static, numactl and the libraries numactl
 * needs, downloaded with `apt-get download` and unpacked with dpkg-deb into
 * STATE/cache/arches/ARCH/root, never installed (a foreign kernel's postinst
 * would run on this host). The kernel layer finds the stock kernel under that
 * root, the initramfs builder takes busybox and numactl from it.
 */
#pragma once

#include "util/arch.h"
#include "util/error.h"

/* The Debian packages unpacked besides the kernel, in this order. */
#define VN_ARCH_ROOT_PACKAGES "busybox-static", "numactl", "libnuma1", "libc6"

/*
 * The root for a (the first use downloads it: about 90 MB, a minute here;
 * the archive must know the architecture: `scripts/setup.sh --arches`).
 * Returns 0 with *root malloc'd; an architecture apt does not know is an
 * infrastructure error saying what to run.
 */
int vn_testbed_arch_root(enum vn_arch a, const char *cache_dir, char **root, struct vn_error *err);
