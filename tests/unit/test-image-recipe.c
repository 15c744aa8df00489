/* Guest image recipes (guest/image-recipe.c): the shipped ones, every kind, and bad input named by JSON path. */
#include <limits.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "guest/disk.h"
#include "guest/image-recipe.h"
#include "util/cleanup.h"

static int parse(const char *text, const char *path, struct vn_image_recipe **r, struct vn_error *err)
{
	memset(err, 0, sizeof(*err));
	*r = NULL;
	return vn_image_recipe_parse(text, strlen(text), path, r, err);
}

static void test_initramfs(void **state)
{
	struct vn_image_recipe *r;
	struct vn_error err;

	assert_int_equal(parse("{\"kind\": \"initramfs\", \"with\": [\"bash-static\", \"grep\"]}",
			       "guest-images/small.json", &r, &err),
			 0);
	assert_string_equal(r->name, "small");
	assert_int_equal(r->kind, VN_IMAGE_INITRAMFS);
	assert_int_equal(r->nwith, 2);
	assert_string_equal(r->with[1], "grep");
	assert_null(r->with[2]);
	assert_non_null(r->packages);
	assert_null(r->packages[0]);
	assert_int_equal(strlen(r->sha256), 64);
	vn_image_recipe_free(r);
}

static void test_disk(void **state)
{
	struct vn_image_recipe *r, *r2;
	struct vn_error err;
	const char *deb = "{\"kind\": \"disk\", \"root\": \"debootstrap\", \"suite\": \"bookworm\", \"size\": \"4G\","
			  " \"packages\": [\"numactl\", \"linux-perf\"]}";

	assert_int_equal(
		parse("{\"kind\": \"disk\", \"root\": \"busybox\", \"size\": \"128M\"}", "x/tiny.json", &r, &err), 0);
	assert_int_equal(r->kind, VN_IMAGE_DISK);
	assert_int_equal(r->root, VN_IMAGE_ROOT_BUSYBOX);
	assert_int_equal(r->size, 128u << 20);
	assert_int_equal(r->nwith, 0);
	vn_image_recipe_free(r);

	assert_int_equal(parse(deb, "debian-12.json", &r, &err), 0);
	assert_int_equal(r->root, VN_IMAGE_ROOT_DEBOOTSTRAP);
	assert_string_equal(r->suite, "bookworm");
	assert_string_equal(r->mirror, "http://deb.debian.org/debian");
	assert_int_equal(r->npackages, 2);
	assert_string_equal(r->packages[1], "linux-perf");
	/* The key follows the bytes: one more space is another recipe. */
	char other[512];
	snprintf(other, sizeof(other), " %s", deb);
	assert_int_equal(parse(other, "debian-12.json", &r2, &err), 0);
	assert_string_not_equal(r->sha256, r2->sha256);
	vn_image_recipe_free(r);
	vn_image_recipe_free(r2);
}

static void test_shipped(void **state)
{
	static const char *const names[] = {"tiny", "initramfs", "debian-12"};
	const char *srcdir = getenv("VN_SOURCE_DIR");
	assert_non_null(srcdir);
	for (size_t i = 0; i < 3; i++) {
		char path[PATH_MAX];
		struct vn_image_recipe *r = NULL;
		struct vn_error err = {0};
		snprintf(path, sizeof(path), "%s/guest-images/%s.json", srcdir, names[i]);
		int rc = vn_image_recipe_load(path, &r, &err);
		if (rc < 0)
			fail_msg("%s: %s", path, err.msg);
		assert_string_equal(r->name, names[i]);
		vn_image_recipe_free(r);
	}
}

/* Each bad recipe fails as input naming the JSON path (or the file for malformed JSON). */
static void test_bad(void **state)
{
	static const struct {
		const char *text, *want;
	} cases[] = {
		{"[]", "$: expected"},
		{"{}", "missing required key \"kind\""},
		{"{\"kind\": \"rootfs\"}", "$.kind"},
		{"{\"kind\": \"initramfs\", \"size\": \"1G\"}", "size"},
		{"{\"kind\": \"initramfs\", \"with\": \"grep\"}", "$.with"},
		{"{\"kind\": \"initramfs\", \"with\": [\"--force\"]}",
		 "$.with[0]: \"--force\" is not a Debian package"},
		{"{\"kind\": \"initramfs\", \"with\": [\"grep\", \"grep\"]}", "$.with[1]: \"grep\" is listed twice"},
		{"{\"kind\": \"disk\", \"size\": \"1G\"}", "missing required key \"root\""},
		{"{\"kind\": \"disk\", \"root\": \"busybox\"}", "missing required key \"size\""},
		{"{\"kind\": \"disk\", \"root\": \"busybox\", \"size\": \"lots\"}", "$.size: \"lots\" is not a size"},
		{"{\"kind\": \"disk\", \"root\": \"busybox\", \"size\": \"1M\"}", "$.size: \"1M\": expected whole MiB"},
		{"{\"kind\": \"disk\", \"root\": \"busybox\", \"size\": \"1T\"}", "$.size"},
		{"{\"kind\": \"disk\", \"root\": \"busybox\", \"size\": \"64M\", \"suite\": \"bookworm\"}", "suite"},
		{"{\"kind\": \"disk\", \"root\": \"zfs\", \"size\": \"64M\"}", "$.root"},
		{"{\"kind\": \"disk\", \"root\": \"debootstrap\", \"size\": \"1G\"}", "missing required key \"suite\""},
		{"{\"kind\": \"disk\", \"root\": \"debootstrap\", \"size\": \"1G\", \"suite\": \"../x\"}", "$.suite"},
		{"{\"kind\": \"disk\", \"root\": \"debootstrap\", \"size\": \"1G\", \"suite\": \"bookworm\", "
		 "\"mirror\": \"ftp://x\"}",
		 "$.mirror: \"ftp://x\" is not an http(s) URL"},
		{"{\"kind\": \"disk\", \"root\": \"debootstrap\", \"size\": \"1G\", \"suite\": \"bookworm\", "
		 "\"packages\": [\"a b\"]}",
		 "$.packages[0]"},
		{"{\"kind\": \"initramfs\",}", "bad.json:"},
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct vn_image_recipe *r;
		struct vn_error err;
		int rc = parse(cases[i].text, "bad.json", &r, &err);
		if (rc >= 0 || err.kind != VN_ERR_INPUT || !strstr(err.msg, cases[i].want) ||
		    !strstr(err.msg, "bad.json"))
			fail_msg("case %zu (%s): rc %d, kind %d, message '%s' (want '%s')", i, cases[i].text, rc,
				 err.kind, err.msg, cases[i].want);
		assert_null(r);
	}
	/* The file name is the image's name, so it must be one. */
	struct vn_image_recipe *r;
	struct vn_error err;
	assert_true(parse("{\"kind\": \"initramfs\"}", "dir/.hidden.json", &r, &err) < 0);
	assert_int_equal(err.kind, VN_ERR_INPUT);
}

static void test_format(void **state)
{
	char path[] = "/tmp/vnuma-test-fmt-XXXXXX";
	int fd = mkstemp(path);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, "QFI\xfb\0\0\0\3", 8), 8);
	close(fd);
	assert_string_equal(vn_disk_format(path), "qcow2");
	FILE *f = fopen(path, "w");
	fputs("\x53\xef raw ext4 bytes", f);
	fclose(f);
	assert_string_equal(vn_disk_format(path), "raw");
	unlink(path);
	assert_string_equal(vn_disk_format("/nonexistent/image"), "raw");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_initramfs), cmocka_unit_test(test_disk),   cmocka_unit_test(test_shipped),
		cmocka_unit_test(test_bad),       cmocka_unit_test(test_format),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
