/*
 * SHA-256 (FIPS 180-4), for content-addressed caches: nettle's (libvirt's
 * GnuTLS links it already), with the file reads and the memo by file
 * identity that the caches need around it. Host code only: no in-guest
 * program links vn_util.
 */
#pragma once

#include <nettle/sha2.h>
#include <stddef.h>
#include <stdint.h>

#include "util/error.h"

#define VN_SHA256_LEN     SHA256_DIGEST_SIZE
#define VN_SHA256_HEX_LEN (2 * VN_SHA256_LEN)

struct vn_sha256 {
	struct sha256_ctx ctx;
};

void vn_sha256_init(struct vn_sha256 *c);
void vn_sha256_update(struct vn_sha256 *c, const void *data, size_t len);
/* Writes the digest; c must be re-initialised before reuse. */
void vn_sha256_final(struct vn_sha256 *c, uint8_t out[VN_SHA256_LEN]);

/* Digest of a whole file; fails with an infra error naming the path. */
int vn_sha256_file(const char *path, uint8_t out[VN_SHA256_LEN], struct vn_error *err);

/*
 * The same, remembered in MEMO_DIR/digests/ under the file's identity (path,
 * device, inode, size, mtime and ctime to the nanosecond): a file that has
 * not changed is not read again. Caches that key on file contents (the guest
 * image, the PVH vmlinux) check themselves in milliseconds this way.
 */
int vn_sha256_file_memo(const char *path, const char *memo_dir, uint8_t out[VN_SHA256_LEN], struct vn_error *err);

/* Lower-case hex; out holds VN_SHA256_HEX_LEN + 1 bytes. Returns out. */
char *vn_sha256_hex(const uint8_t digest[VN_SHA256_LEN], char out[VN_SHA256_HEX_LEN + 1]);
