/*
 * The storage pool and volumes (virt/storage.c) against libvirt's test driver
 * (test:///default: in-process, no daemon), the volume names and the auto
 * capacity. Uploads need a real daemon: tests/integration/hosts.sh.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "util/cleanup.h"
#include "virt/storage.h"
#include "virt/virt-priv.h"
#include "tmpdir.h"

VN_TEST_TMPDIR(state, "storage")

static void test_pool_and_volumes(void **s)
{
	struct vn_virt *v = NULL;
	struct vn_error err = {0};
	struct vn_virt_host_info hi;

	assert_int_equal(vn_virt_open("test:///default", state, 1000, &v, &err), 0);
	assert_int_equal(vn_virt_host_info(v, &hi, &err), 0);
	assert_false(hi.pool.exists);
	assert_true(hi.cpus > 0);
	assert_true(hi.memory > 0);
	assert_false(hi.kvm_offered);
	vn_virt_host_info_clear(&hi);

	/* test:///default is no privileged URI: no default dir. */
	assert_int_equal(vn_virt_pool_ensure(v, NULL, &err), -EINVAL);
	assert_int_equal(err.kind, VN_ERR_INPUT);
	assert_non_null(strstr(err.msg, "test:///default: not a privileged connection"));
	assert_non_null(strstr(err.msg, "add pool=DIR"));
	vn_error_clear(&err);

	char *path = NULL;
	assert_int_equal(vn_virt_volume_create(v, "scratch.img", 1 << 20, "raw", NULL, &path, &err), -ENOENT);
	assert_non_null(strstr(err.msg, "no storage pool 'vnuma'"));
	vn_error_clear(&err);

	if (vn_virt_pool_ensure(v, "/tmp/vn-pool", &err) != 1)
		fail_msg("pool: %s", err.msg);
	assert_int_equal(vn_virt_pool_ensure(v, "/elsewhere", &err), 0); /* reused where it is */
	assert_int_equal(vn_virt_host_info(v, &hi, &err), 0);
	assert_true(hi.pool.exists);
	assert_true(hi.pool.active);
	assert_string_equal(hi.pool.path, "/tmp/vn-pool");
	vn_virt_host_info_clear(&hi);

	if (vn_virt_volume_create(v, "scratch.img", 1 << 20, "raw", NULL, &path, &err) < 0)
		fail_msg("create: %s", err.msg);
	assert_string_equal(path, "/tmp/vn-pool/scratch.img");
	free(path);
	/* A leftover of the same name is replaced, not an error. */
	if (vn_virt_volume_create(v, "scratch.img", 2 << 20, "raw", NULL, &path, &err) < 0)
		fail_msg("create again: %s", err.msg);
	free(path);
	if (vn_virt_volume_create(v, "g1-root.qcow2", 1 << 30, "qcow2", "/tmp/vn-pool/abc.qcow2", &path, &err) < 0)
		fail_msg("overlay: %s", err.msg);
	free(path);
	assert_int_equal(vn_virt_volume_delete(v, "scratch.img", &err), 0);
	assert_int_equal(vn_virt_volume_delete(v, "scratch.img", &err), 0); /* gone already: fine */
	assert_int_equal(vn_virt_volume_delete(v, "g1-root.qcow2", &err), 0);

	assert_int_equal(vn_virt_volume_create(v, "../etc", 1, "raw", NULL, &path, &err), -EINVAL);
	assert_string_equal(err.msg, "'../etc' is not a volume name (1-200 of A-Z a-z 0-9 . _ - @, no leading dot)");
	vn_error_clear(&err);
	assert_int_equal(vn_virt_volume_create(v, "x.img", 1, "vmdk", NULL, &path, &err), -EINVAL);
	assert_string_equal(err.msg, "volume x.img: format 'vmdk' is neither raw nor qcow2");
	vn_error_clear(&err);
	assert_int_equal(vn_virt_volume_delete(v, "a/b", &err), -EINVAL);
	vn_error_clear(&err);
	vn_virt_close(v);
}

static void test_embedded_has_no_pool(void **s)
{
	struct vn_virt v = {.uri = (char *)"qemu:///embed?root=/nowhere"};
	struct vn_error err = {0};
	char *path = NULL;
	bool up;

	/* Refused before any libvirt call, with no error: callers use local files. */
	assert_int_equal(vn_virt_pool_ensure(&v, NULL, &err), -EOPNOTSUPP);
	assert_int_equal(vn_virt_volume_upload(&v, "/etc/hostname", &path, &up, &err), -EOPNOTSUPP);
	assert_int_equal(vn_virt_volume_create(&v, "x", 1, "raw", NULL, &path, &err), -EOPNOTSUPP);
	assert_int_equal(vn_virt_volume_delete(&v, "x", &err), -EOPNOTSUPP);
	assert_int_equal(err.kind, VN_ERR_NONE);
	assert_null(path);
}

static void test_volume_names(void **s)
{
	const char *hex = "ab12";
	const struct {
		const char *file, *name;
	} cases[] = {
		{"/c/initramfs-0123.cpio.gz", "ab12.cpio.gz"},
		{"/c/images/tiny-99.qcow2", "ab12.qcow2"},
		{"/boot/bzImage", "ab12.bzImage"},
		{"vmlinux", "ab12.vmlinux"},
		{"/c/pvh/vmlinux-abc.elf", "ab12.elf"},
		{"/boot/vmlinuz-6.1.0-18-amd64", "ab12.bin"},
		{"/x/a.tar.xz", "ab12.tar.xz"},
		{"/x/.gz", "ab12.gz"},
		{"/x/weird name!", "ab12.bin"},
	};
	for (size_t i = 0; i < VN_ARRAY_SIZE(cases); i++) {
		_cleanup_free_ char *n = vn_virt_volume_name(cases[i].file, hex);
		assert_string_equal(n, cases[i].name);
	}
}

static void test_capacity(void **s)
{
	struct vn_virt_host_info h = {.cpus = 16, .memory = 32ull << 30};

	assert_int_equal(vn_virt_host_capacity(&h, 1, 512ull << 20), 16); /* CPUs bound */
	assert_int_equal(vn_virt_host_capacity(&h, 2, 512ull << 20), 8);
	assert_int_equal(vn_virt_host_capacity(&h, 1, 4ull << 30), 6);    /* 24 GiB usable / 4 GiB */
	assert_int_equal(vn_virt_host_capacity(&h, 32, 512ull << 20), 1); /* never 0 */
	assert_int_equal(vn_virt_host_capacity(&h, 1, 64ull << 30), 1);
	h = (struct vn_virt_host_info){.cpus = 2, .memory = 8ull << 30};
	assert_int_equal(vn_virt_host_capacity(&h, 1, 512ull << 20), 2);
	assert_int_equal(vn_virt_host_capacity(&h, 0, 0), 2);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_pool_and_volumes),
		cmocka_unit_test(test_embedded_has_no_pool),
		cmocka_unit_test(test_volume_names),
		cmocka_unit_test(test_capacity),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
