/*
 * vnuma-bench-image: the guest image and the PVH vmlinux, cold (an empty cache) and
 * cached, timed in-process (milliseconds on stdout, one "name ms" per line).
 * Built with the tree (bench/CMakeLists.txt); bench/run calls it.
 *   vnuma-bench-image CACHE_DIR [REPEATS]
 */
#include <stdio.h>
#include <stdlib.h>

#include "kernel/kernel.h"
#include "testbed/guest-image.h"
#include "util/cleanup.h"
#include "util/clock.h"
#include "util/dir.h"

static int die(const struct vn_error *e)
{
	fprintf(stderr, "vnuma-bench-image: %s\n", e->msg);
	return 3;
}

int main(int argc, char **argv)
{
	struct vn_error err = {0};
	struct vn_kernel *k = NULL;
	int repeats = argc > 2 ? atoi(argv[2]) : 5;

	if (argc < 2 || repeats < 1) {
		fprintf(stderr, "usage: vnuma-bench-image CACHE_DIR [REPEATS]\n");
		return 2;
	}
	if (vn_kernel_resolve_with(NULL, NULL, &(struct vn_kernel_resolve_opts){0}, &k, &err) < 0)
		return die(&err);
	for (int i = 0; i < repeats; i++) {
		char *img = NULL, *pvh = NULL;
		vn_rm_rf(argv[1]);
		if (vn_mkdir_p(argv[1], 0755, &err) < 0)
			return die(&err);
		int64_t t0 = vn_now_ms();
		if (vn_testbed_guest_image(argv[1], k, NULL, NULL, false, &img, &err) < 0)
			return die(&err);
		int64_t t1 = vn_now_ms();
		free(img);
		if (vn_testbed_guest_image(argv[1], k, NULL, NULL, false, &img, &err) < 0)
			return die(&err);
		int64_t t2 = vn_now_ms();
		if (vn_kernel_pvh_image(k->image, argv[1], &pvh, &err) < 0)
			return die(&err);
		int64_t t3 = vn_now_ms();
		free(pvh);
		if (vn_kernel_pvh_image(k->image, argv[1], &pvh, &err) < 0)
			return die(&err);
		int64_t t4 = vn_now_ms();
		printf("initramfs-cold %lld\ninitramfs-cached %lld\nvmlinux-cold %lld\nvmlinux-cached %lld\n",
		       (long long)(t1 - t0), (long long)(t2 - t1), (long long)(t3 - t2), (long long)(t4 - t3));
		free(img);
		free(pvh);
	}
	vn_rm_rf(argv[1]);
	vn_kernel_free(k);
	return 0;
}
