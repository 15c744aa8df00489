/*
 * util/sha256.h: FIPS 180-4's own examples, and every length from 0 to 300
 * fed in every way the block buffer can be split. The last digest is what
 * the hand-written implementation (before nettle) gave, and Python's hashlib
 * agrees: every content-keyed cache's name is a digest, so a changed one
 * would orphan every user's caches.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "util/alloc.h"
#include "util/cleanup.h"
#include "util/file.h"
#include "util/sha256.h"

static const char *hex_of(const void *data, size_t len, char out[VN_SHA256_HEX_LEN + 1])
{
	struct vn_sha256 c;
	uint8_t d[VN_SHA256_LEN];

	vn_sha256_init(&c);
	vn_sha256_update(&c, data, len);
	vn_sha256_final(&c, d);
	return vn_sha256_hex(d, out);
}

static void test_fips_examples(void **state)
{
	(void)state;
	char hex[VN_SHA256_HEX_LEN + 1];

	assert_string_equal(hex_of("", 0, hex), "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
	assert_string_equal(hex_of("abc", 3, hex), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
	const char *two = "abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq";
	assert_string_equal(hex_of(two, strlen(two), hex),
			    "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");

	/* A million 'a's, in pieces that straddle the 64-byte blocks. */
	char a[1000];
	struct vn_sha256 c;
	uint8_t d[VN_SHA256_LEN];
	memset(a, 'a', sizeof(a));
	vn_sha256_init(&c);
	for (int i = 0; i < 1000; i++)
		vn_sha256_update(&c, a, sizeof(a));
	vn_sha256_final(&c, d);
	assert_string_equal(vn_sha256_hex(d, hex), "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
}

static void test_splits(void **state)
{
	(void)state;
	static const size_t steps[] = {1, 3, 55, 56, 63, 64, 65, 300};
	uint8_t data[300], d[VN_SHA256_LEN], first[VN_SHA256_LEN];
	char hex[VN_SHA256_HEX_LEN + 1];
	struct vn_sha256 all;

	for (size_t i = 0; i < sizeof(data); i++)
		data[i] = (uint8_t)(i * 131 + 7);
	/* The digests of every prefix, one after another, hashed again. */
	vn_sha256_init(&all);
	for (size_t len = 0; len <= sizeof(data); len++) {
		for (size_t s = 0; s < sizeof(steps) / sizeof(steps[0]); s++) {
			struct vn_sha256 c;
			vn_sha256_init(&c);
			for (size_t off = 0; off < len; off += steps[s])
				vn_sha256_update(&c, data + off, len - off < steps[s] ? len - off : steps[s]);
			vn_sha256_final(&c, s ? d : first);
			if (s)
				assert_memory_equal(d, first, VN_SHA256_LEN);
		}
		vn_sha256_update(&all, first, VN_SHA256_LEN);
	}
	vn_sha256_final(&all, d);
	assert_string_equal(vn_sha256_hex(d, hex), "7722024365d27836079cbf29de35d060b9383d7c713083199661392f983216d4");
}

static void test_file(void **state)
{
	(void)state;
	char path[] = "/tmp/vn-test-sha256-XXXXXX", hex[VN_SHA256_HEX_LEN + 1];
	uint8_t d[VN_SHA256_LEN];
	struct vn_error err = {0};
	int fd = mkstemp(path);

	assert_true(fd >= 0);
	/* Past the 64 KiB read buffer, so the file is hashed in several reads. */
	size_t len = 200 * 1024 + 17;
	_cleanup_free_ uint8_t *buf = vn_xmalloc(len);
	for (size_t i = 0; i < len; i++)
		buf[i] = (uint8_t)(i ^ (i >> 8));
	assert_int_equal(write(fd, buf, len), (ssize_t)len);
	close(fd);
	assert_int_equal(vn_sha256_file(path, d, &err), 0);
	char whole[VN_SHA256_HEX_LEN + 1];
	assert_string_equal(vn_sha256_hex(d, hex), hex_of(buf, len, whole));
	assert_string_equal(hex, "8fff64afaa0823a8d74f68924d0f47d6d219dbb216ed75c6b6eb6c525ff184f7");
	unlink(path);
	assert_int_equal(vn_sha256_file(path, d, &err), -ENOENT);
	assert_non_null(strstr(err.msg, "cannot open /tmp/vn-test-sha256-"));
	vn_error_clear(&err);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_fips_examples),
		cmocka_unit_test(test_splits),
		cmocka_unit_test(test_file),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
