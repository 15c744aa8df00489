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

static const uint32_t K[64] = {
	0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4, 0xab1c5ed5,
	0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174,
	0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da,
	0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7, 0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967,
	0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85,
	0xa2bfe8a1, 0xa81a664b, 0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070,
	0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3,
	0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7, 0xc67178f2,
};

static inline uint32_t ror(uint32_t x, unsigned n)
{
	return (x >> n) | (x << (32 - n));
}

static void compress(uint32_t h[8], const uint8_t p[64])
{
	uint32_t w[64];

	for (unsigned i = 0; i < 16; i++)
		w[i] = (uint32_t)p[4 * i] << 24 | (uint32_t)p[4 * i + 1] << 16 | (uint32_t)p[4 * i + 2] << 8 |
		       p[4 * i + 3];
	for (unsigned i = 16; i < 64; i++) {
		uint32_t s0 = ror(w[i - 15], 7) ^ ror(w[i - 15], 18) ^ (w[i - 15] >> 3);
		uint32_t s1 = ror(w[i - 2], 17) ^ ror(w[i - 2], 19) ^ (w[i - 2] >> 10);
		w[i] = w[i - 16] + s0 + w[i - 7] + s1;
	}

	uint32_t a = h[0], b = h[1], c = h[2], d = h[3], e = h[4], f = h[5], g = h[6], hh = h[7];
	for (unsigned i = 0; i < 64; i++) {
		uint32_t t1 = hh + (ror(e, 6) ^ ror(e, 11) ^ ror(e, 25)) + ((e & f) ^ (~e & g)) + K[i] + w[i];
		uint32_t t2 = (ror(a, 2) ^ ror(a, 13) ^ ror(a, 22)) + ((a & b) ^ (a & c) ^ (b & c));
		hh = g;
		g = f;
		f = e;
		e = d + t1;
		d = c;
		c = b;
		b = a;
		a = t1 + t2;
	}
	h[0] += a;
	h[1] += b;
	h[2] += c;
	h[3] += d;
	h[4] += e;
	h[5] += f;
	h[6] += g;
	h[7] += hh;
}

void vn_sha256_init(struct vn_sha256 *c)
{
	static const uint32_t iv[8] = {
		0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a, 0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19,
	};

	memcpy(c->h, iv, sizeof(iv));
	c->bytes = 0;
	c->fill = 0;
}

void vn_sha256_update(struct vn_sha256 *c, const void *data, size_t len)
{
	const uint8_t *p = data;

	c->bytes += len;
	if (c->fill) {
		size_t n = 64 - c->fill < len ? 64 - c->fill : len;
		memcpy(c->block + c->fill, p, n);
		c->fill += n;
		p += n;
		len -= n;
		if (c->fill < 64)
			return;
		compress(c->h, c->block);
		c->fill = 0;
	}
	for (; len >= 64; p += 64, len -= 64)
		compress(c->h, p);
	memcpy(c->block, p, len);
	c->fill = len;
}

void vn_sha256_final(struct vn_sha256 *c, uint8_t out[VN_SHA256_LEN])
{
	uint64_t bits = c->bytes * 8;

	c->block[c->fill++] = 0x80;
	if (c->fill > 56) {
		memset(c->block + c->fill, 0, 64 - c->fill);
		compress(c->h, c->block);
		c->fill = 0;
	}
	memset(c->block + c->fill, 0, 56 - c->fill);
	for (unsigned i = 0; i < 8; i++)
		c->block[56 + i] = (uint8_t)(bits >> (56 - 8 * i));
	compress(c->h, c->block);
	for (unsigned i = 0; i < 8; i++) {
		out[4 * i] = (uint8_t)(c->h[i] >> 24);
		out[4 * i + 1] = (uint8_t)(c->h[i] >> 16);
		out[4 * i + 2] = (uint8_t)(c->h[i] >> 8);
		out[4 * i + 3] = (uint8_t)c->h[i];
	}
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
	_cleanup_free_ char *dir = vn_xasprintf("%s/digests", memo_dir);
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
