/*
 * Guest images built from recipes (guest-images/NAME.json, guest/image-recipe.h)
 * into STATE/cache/images, keyed by a hash of every input: the recipe's
 * bytes, the digests of the busybox root's files (busybox, numactl, the
 * agent, sampler and workloads, --with packages: the initramfs builder's own
 * content key), so an unchanged recipe costs hashing only. Per image:
 *   NAME-KEY.qcow2 (disk) or NAME-KEY.cpio.gz (initramfs), NAME-KEY.json
 *   (what `list` shows, what `up --image` reads), NAME-KEY.log (the build log).
 */
#pragma once

#include <stdbool.h>

#include "guest/disk.h"
#include "guest/image-recipe.h"
#include "kernel/build.h"
#include "testbed/testbed.h"
#include "util/cleanup.h"

struct vn_image {
	char *name, *key;
	enum vn_image_kind kind;
	char *path;        /* the image */
	char *log;         /* its build log */
	char *recipe;      /* the recipe file it was built from */
	char *init;        /* disk: what the initramfs hands the root to (/init, /sbin/init) */
	double build_s;    /* how long the build took */
	long long size;    /* bytes the image takes on disk */
	bool cached;       /* vn_image_build found it */
	enum vn_arch arch; /* whose programs the root holds */
};
void vn_image_free(struct vn_image *im);
VN_DEFINE_CLEANUP(struct vn_image *, vn_image_free);
#define _cleanup_image_ _cleanup_(vn_image_freep)

/*
 * How libguestfs's appliance runs here: force_tcg unless vnuma's accelerator
 * verdict for this host (STATE/accel.cache) says KVM works, or VNUMA_ACCEL
 * says which. why gets the reason, for the build log.
 */
void vn_testbed_disk_opts(const struct vn_testbed_ctx *ctx, struct vn_disk_opts *o, char *why, size_t len);

/*
 * Build a recipe (a path or a name in guest-images/) for arch, or find it
 * cached; progress may be NULL. Another architecture than the host's gets
 * its busybox root from that architecture's Debian packages
 * (testbed/arch-root.h); a debootstrap root is refused for it (its second
 * stage runs the root's own programs).
 */
int vn_image_build(const struct vn_testbed_ctx *ctx, const char *recipe, enum vn_arch arch,
		   vn_kernel_progress_fn progress, void *progress_data, struct vn_image **out, struct vn_error *err);
/* Every cached image, by name then key. */
int vn_image_list(const struct vn_testbed_ctx *ctx, struct vn_image ***out, size_t *n, struct vn_error *err);

/*
 * Post-mortem of a disk guest whose run failed: before the guest is
 * destroyed, its overlay is kept aside at aside (a hard link, so it is what
 * QEMU last wrote; a copy across filesystems). Returns 1 when kept, 0 when
 * the guest has no disk root.
 */
int vn_testbed_postmortem_hold(const char *guest_dir, const char *aside, struct vn_error *err);
/* Once the guest is gone: VN_POSTMORTEM_PATHS out of aside into out_dir (DIR/PATH), aside removed. */
#define VN_POSTMORTEM_PATHS "/var/log", "/root", "/etc/vnuma"
int vn_testbed_postmortem(const struct vn_testbed_ctx *ctx, const char *aside, const char *out_dir,
			  struct vn_error *err);
