/* The modules.dep walker on a synthetic modules directory: order, names, built-ins and broken files. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "guest/modules-dep.h"
#include "util/alloc.h"
#include "util/cleanup.h"
#include "util/dir.h"
#include "util/file.h"
#include "util/strbuf.h"

static char dir[] = "/tmp/vn-test-modules-dep-XXXXXX";

static void put(const char *name, const char *text)
{
	_cleanup_free_ char *p = vn_xasprintf("%s/%s", dir, name);
	assert_int_equal(vn_file_write(p, text), 0);
}

static int setup(void **state)
{
	(void)state;
	return mkdtemp(dir) ? 0 : -1;
}

static int teardown(void **state)
{
	(void)state;
	return vn_rm_rf(dir);
}

static char *order_of(const char *const *names, struct vn_error *err, int *rc)
{
	_cleanup_strv_ char **order = NULL;
	_cleanup_strbuf_ struct vn_strbuf b = VN_STRBUF_INIT;

	*rc = vn_modules_dep_order(dir, names, "linux-image-test", &order, err);
	if (*rc < 0)
		return NULL;
	for (char **o = order; *o; o++)
		vn_strbuf_printf(&b, "%s ", *o);
	return vn_strbuf_steal(&b);
}

static void test_order(void **state)
{
	(void)state;
	struct vn_error err = {0};
	int rc;

	put("modules.dep", "kernel/drivers/virtio/virtio_pci.ko: kernel/drivers/virtio/virtio_ring.ko "
			   "kernel/drivers/virtio/virtio.ko\n"
			   "kernel/drivers/virtio/virtio_ring.ko: kernel/drivers/virtio/virtio.ko\n"
			   "kernel/drivers/virtio/virtio.ko:\n"
			   "kernel/drivers/char/virtio_console.ko: kernel/drivers/virtio/virtio.ko\n"
			   "kernel/fs/fuse/cuse-x.ko:\n");
	put("modules.builtin", "kernel/drivers/tty/serial/8250/8250.ko\n");
	/* Dependencies first, each once; '-' and '_' alike; a built-in needs nothing. */
	const char *names[] = {"virtio-pci", "virtio_console", "8250", "cuse_x", NULL};
	_cleanup_free_ char *o = order_of(names, &err, &rc);
	assert_int_equal(rc, 0);
	assert_string_equal(o, "kernel/drivers/virtio/virtio.ko kernel/drivers/virtio/virtio_ring.ko "
			       "kernel/drivers/virtio/virtio_pci.ko kernel/drivers/char/virtio_console.ko "
			       "kernel/fs/fuse/cuse-x.ko ");
	const char *none[] = {"8250", NULL};
	_cleanup_free_ char *e = order_of(none, &err, &rc);
	assert_int_equal(rc, 0);
	assert_string_equal(e, "");
	/* A prefix of a name is not the name. */
	const char *prefix[] = {"virtio_p", NULL};
	assert_null(order_of(prefix, &err, &rc));
	assert_int_equal(rc, -EINVAL);
	assert_non_null(strstr(err.msg, "kernel module virtio_p is not in "));
	vn_error_clear(&err);
}

static void test_broken(void **state)
{
	(void)state;
	struct vn_error err = {0};
	int rc;
	const char *a[] = {"a", NULL};

	put("modules.dep", "a.ko: b.ko\nb.ko: a.ko\n");
	assert_null(order_of(a, &err, &rc));
	assert_int_equal(err.kind, VN_ERR_INPUT);
	assert_non_null(strstr(err.msg, "modules.dep: dependency cycle through a.ko"));
	vn_error_clear(&err);

	put("modules.dep", "a.ko: gone.ko\n");
	assert_null(order_of(a, &err, &rc));
	assert_non_null(strstr(err.msg, "modules.dep: a.ko depends on gone.ko, which has no entry"));
	vn_error_clear(&err);

	_cleanup_free_ char *p = vn_xasprintf("%s/modules.dep", dir);
	assert_int_equal(vn_rm_rf(p), 0);
	assert_null(order_of(a, &err, &rc));
	assert_int_equal(rc, -ENOENT);
	assert_int_equal(err.kind, VN_ERR_INFRA);
	assert_non_null(strstr(err.msg, "(install the Debian package linux-image-test)"));
	vn_error_clear(&err);
}

int main(void)
{
	const struct CMUnitTest tests[] = {cmocka_unit_test(test_order), cmocka_unit_test(test_broken)};
	return cmocka_run_group_tests(tests, setup, teardown);
}
