/*
 * vnuma-bench-hash: util/sha256.h's vn_sha256_file over the stock kernel's
 * PVH vmlinux (about 66 MB, the largest file vnuma hashes every time a cache
 * is checked without its memo), timed in-process: one "sha256 MS MIB" line a
 * repeat on stdout. Built with the tree (bench/CMakeLists.txt); bench/run
 * calls it.
 *   vnuma-bench-hash CACHE_DIR [REPEATS]
 */
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>

#include "kernel/kernel.h"
#include "util/cleanup.h"
#include "util/clock.h"
#include "util/dir.h"
#include "util/sha256.h"

static int die(const struct vn_error *e)
{
	fprintf(stderr, "vnuma-bench-hash: %s\n", e->msg);
	return 3;
}

int main(int argc, char **argv)
{
	struct vn_error err = {0};
	_cleanup_kernel_ struct vn_kernel *k = NULL;
	_cleanup_free_ char *vmlinux = NULL;
	uint8_t digest[VN_SHA256_LEN];
	char hex[VN_SHA256_HEX_LEN + 1];
	struct stat st;
	int repeats = argc > 2 ? atoi(argv[2]) : 5;

	if (argc < 2 || repeats < 1) {
		fprintf(stderr, "usage: vnuma-bench-hash CACHE_DIR [REPEATS]\n");
		return 2;
	}
	if (vn_kernel_resolve_with(NULL, NULL, &(struct vn_kernel_resolve_opts){0}, &k, &err) < 0)
		return die(&err);
	if (vn_mkdir_p(argv[1], 0755, &err) < 0 || vn_kernel_pvh_image(k->image, argv[1], &vmlinux, &err) < 0)
		return die(&err);
	if (stat(vmlinux, &st) < 0) {
		perror(vmlinux);
		return 3;
	}
	/* Once untimed, so that every timed read comes from the page cache. */
	if (vn_sha256_file(vmlinux, digest, &err) < 0)
		return die(&err);
	for (int i = 0; i < repeats; i++) {
		int64_t t0 = vn_now_ms();
		if (vn_sha256_file(vmlinux, digest, &err) < 0)
			return die(&err);
		printf("sha256 %lld %lld\n", (long long)(vn_now_ms() - t0), (long long)(st.st_size >> 20));
	}
	fprintf(stderr, "%s %s\n", vn_sha256_hex(digest, hex), vmlinux);
	return 0;
}
