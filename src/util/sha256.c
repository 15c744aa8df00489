#include "util/sha256.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <stdint.h>
#include <sys/stat.h>
#include <unistd.h>

#include "util/cleanup.h"
#include "util/file.h"
#include "util/dir.h"
#include "util/alloc.h"
#include "util/state.h"

void vn_sha256_init(struct vn_sha256 *c)
{
	sha256_init(&c->ctx);
}

void vn_sha256_update(struct vn_sha256 *c, const void *data, size_t len)
{
	sha256_update(&c->ctx, len, data);
}

void vn_sha256_final(struct vn_sha256 *c, uint8_t out[VN_SHA256_LEN])
{
	sha256_digest(&c->ctx, VN_SHA256_LEN, out);
}

int vn_sha256_file(const char *path, uint8_t out[VN_SHA256_LEN], struct vn_error *err)
{
	_cleanup_close_ int fd = open(path, O_RDONLY | O_CLOEXEC);
	struct vn_sha256 c;
	uint8_t buf[64 * 1024];
	ssize_t n;

	if (fd < 0)
		return vn_infra_error(err, -errno, "cannot open %s: %s", path, strerror(errno));
	vn_sha256_init(&c);
	while ((n = read(fd, buf, sizeof(buf))) != 0) {
		if (n < 0) {
			if (errno == EINTR)
				continue;
			return vn_infra_error(err, -errno, "cannot read %s: %s", path, strerror(errno));
		}
		vn_sha256_update(&c, buf, (size_t)n);
	}
	vn_sha256_final(&c, out);
	return 0;
}

int vn_sha256_file_memo(const char *path, const char *memo_dir, uint8_t out[VN_SHA256_LEN], struct vn_error *err)
{
	struct stat st;
	char id[4096 + 160], hex[VN_SHA256_HEX_LEN + 1];
	uint8_t key[VN_SHA256_LEN];
	struct vn_sha256 c;
	int rc;

	if (stat(path, &st) < 0)
		return vn_infra_error(err, -errno, "cannot open %s: %s", path, strerror(errno));
	int n = snprintf(id, sizeof(id), "%s%c%ju %ju %jd %jd.%09ld %jd.%09ld", path, 0, (uintmax_t)st.st_dev,
			 (uintmax_t)st.st_ino, (intmax_t)st.st_size, (intmax_t)st.st_mtim.tv_sec, st.st_mtim.tv_nsec,
			 (intmax_t)st.st_ctim.tv_sec, st.st_ctim.tv_nsec);
	vn_sha256_init(&c);
	vn_sha256_update(&c, id, (size_t)n);
	vn_sha256_final(&c, key);
	_cleanup_free_ char *dir = vn_cache_digests_dir(memo_dir);
	_cleanup_free_ char *memo = vn_xasprintf("%s/%s", dir, vn_sha256_hex(key, hex));
	_cleanup_free_ char *data = NULL;
	size_t len;
	struct vn_error e = {0};
	if (vn_file_read(memo, VN_SHA256_LEN, &data, &len, &e) == 0 && len == VN_SHA256_LEN) {
		memcpy(out, data, VN_SHA256_LEN);
		return 0;
	}
	vn_error_clear(&e);
	if ((rc = vn_sha256_file(path, out, err)) < 0)
		return rc;
	/* A memo that cannot be written costs the next caller a read, nothing more. */
	if (vn_mkdir_p(dir, 0700, &e) == 0)
		vn_file_write_atomic(memo, out, VN_SHA256_LEN, 0600, &e);
	vn_error_clear(&e);
	return 0;
}

char *vn_sha256_hex(const uint8_t digest[VN_SHA256_LEN], char out[VN_SHA256_HEX_LEN + 1])
{
	static const char hex[] = "0123456789abcdef";

	for (unsigned i = 0; i < VN_SHA256_LEN; i++) {
		out[2 * i] = hex[digest[i] >> 4];
		out[2 * i + 1] = hex[digest[i] & 15];
	}
	out[VN_SHA256_HEX_LEN] = '\0';
	return out;
}
