/*
 * vnuma debug and vnuma dump, offline: QEMU's gdbserver replies, which
 * vmlinux belongs to a kernel, gdb's command line, and the dump's file
 * handling through a fake libvirt half (too little space refused before a
 * byte is written, a failed write leaving nothing, a whole one renamed and
 * described). libvirt's test driver has no monitor and no memory-only dump.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <dirent.h>
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "kernel/vmlinux.h"
#include "testbed/debug.h"
#include "testbed/doctor.h"
#include "testbed/dump.h"
#include "util/alloc.h"
#include "util/cleanup.h"
#include "util/dir.h"
#include "util/file.h"
#include "util/interrupt.h"
#include "util/spawn.h"

static char tmp[] = "/tmp/vn-test-debug-XXXXXX";

static int setup(void **s)
{
	return mkdtemp(tmp) ? 0 : -1;
}

static int teardown(void **s)
{
	return vn_rm_rf(tmp);
}

static void test_gdbserver_reply(void **s)
{
	struct vn_error err = {0};

	assert_int_equal(vn_virt_gdbserver_reply("Waiting for gdb connection on device 'tcp:127.0.0.1:4321'\r\n",
						 "tcp:127.0.0.1:4321", &err),
			 0);
	assert_int_equal(vn_virt_gdbserver_reply("Disabled gdbserver\r\n", "none", &err), 0);
	/* "none" is not a listening stub, nor a listening reply a stop. */
	assert_int_equal(vn_virt_gdbserver_reply("Disabled gdbserver\r\n", "tcp:127.0.0.1:1", &err), -EPROTO);
	vn_error_clear(&err);
	assert_int_equal(vn_virt_gdbserver_reply("Could not open gdbserver on device 'tcp:127.0.0.1:1'\r\n",
						 "tcp:127.0.0.1:1", &err),
			 -EADDRINUSE);
	assert_int_equal(err.kind, VN_ERR_INFRA);
	vn_error_clear(&err);
	/* A hostile reply: one bounded line of it, never the rest. */
	_cleanup_free_ char *big = vn_xmalloc(100000);
	memset(big, 'x', 99999);
	big[99999] = '\0';
	big[10] = '\n';
	assert_int_equal(vn_virt_gdbserver_reply(big, "none", &err), -EPROTO);
	assert_non_null(strstr(err.msg, "'xxxxxxxxxx'"));
	assert_true(strlen(err.msg) < 200);
	vn_error_clear(&err);
	assert_int_equal(vn_virt_gdbserver_reply(NULL, "none", &err), -EPROTO);
	vn_error_clear(&err);
}

static void test_release_and_format(void **s)
{
	struct vn_error err = {0};
	enum vn_dump_format f;
	char *r = vn_testbed_kernel_release("stock 6.1.0-57-amd64 (debian-kernel@lists.debian.org) #1 SMP");

	assert_string_equal(r, "6.1.0-57-amd64");
	free(r);
	assert_null(vn_testbed_kernel_release("stock"));
	assert_null(vn_testbed_kernel_release(NULL));
	assert_int_equal(vn_dump_format_parse("kdump-zlib", &f, &err), 0);
	assert_int_equal(f, VN_DUMP_KDUMP_ZLIB);
	assert_string_equal(vn_dump_format_name(VN_DUMP_ELF), "elf");
	assert_int_equal(vn_dump_format_parse("lzo", &f, &err), -EINVAL);
	assert_int_equal(err.kind, VN_ERR_INPUT);
	vn_error_clear(&err);
}

/* This test's own executable: an ELF with a symbol table and a build id, like a vmlinux with debug info. */
static void copy_self(const char *to)
{
	struct vn_error err = {0};
	char self[4096];
	ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);

	assert_true(n > 0);
	self[n] = '\0';
	if (vn_file_copy_atomic(self, to, &err) < 0)
		fail_msg("%s", err.msg);
}

static void test_vmlinux_find(void **s)
{
	_cleanup_free_ char *root = vn_xasprintf("%s/root", tmp), *dbg = vn_vmlinux_debian_dbg(root, "6.1.0-9-amd64");
	_cleanup_free_ char *dbgdir = vn_xasprintf("%s/usr/lib/debug/boot", root);
	_cleanup_free_ char *build = vn_xasprintf("%s/kernels/abc", tmp);
	_cleanup_free_ char *bz = vn_xasprintf("%s/bzImage", build), *vml = vn_xasprintf("%s/vmlinux", build);
	_cleanup_free_ char *py = vn_xasprintf("%s/vmlinux-gdb.py", build);
	struct vn_vmlinux v;
	struct vn_error err = {0};

	/* None installed: how to get one, with the release in it. */
	assert_int_equal(vn_vmlinux_find(root, "/boot/vmlinuz-6.1.0-9-amd64", "6.1.0-9-amd64", &v, &err), 0);
	assert_null(v.path);
	assert_non_null(strstr(v.hint, "apt-get install linux-image-6.1.0-9-amd64-dbg"));
	vn_vmlinux_clear(&v);

	/* Debian's -dbg vmlinux; a file there without symbols would not do. */
	assert_int_equal(vn_mkdir_p(dbgdir, 0755, &err), 0);
	assert_int_equal(vn_file_write(dbg, "not an ELF\n"), 0);
	assert_int_equal(vn_vmlinux_find(root, "/boot/vmlinuz-6.1.0-9-amd64", "6.1.0-9-amd64", &v, &err), 0);
	assert_null(v.path);
	vn_vmlinux_clear(&v);
	copy_self(dbg);
	assert_int_equal(vn_vmlinux_find(root, "/boot/vmlinuz-6.1.0-9-amd64", "6.1.0-9-amd64", &v, &err), 0);
	assert_string_equal(v.path, dbg);
	assert_null(v.gdb_py);
	assert_non_null(v.build_id);
	assert_int_equal(strlen(v.build_id), 40);
	assert_int_equal(strspn(v.build_id, "0123456789abcdef"), 40);
	vn_vmlinux_clear(&v);

	/* A build's vmlinux beside its bzImage comes first, with its gdb scripts. */
	assert_int_equal(vn_mkdir_p(build, 0755, &err), 0);
	copy_self(vml);
	assert_int_equal(vn_file_write(py, "# lx-symbols\n"), 0);
	assert_int_equal(vn_vmlinux_find(root, bz, "6.1.0-9-amd64", &v, &err), 0);
	assert_string_equal(v.path, vml);
	assert_string_equal(v.gdb_py, py);

	struct vn_gdbstub g = {.port = 4321, .vmlinux = v};
	_cleanup_strv_ char **argv = vn_gdbstub_gdb_argv(&g);
	_cleanup_free_ char *safe = vn_xasprintf("add-auto-load-safe-path %s", build);
	const char *want[] = {"gdb", "-q", "-iex", safe, vml, "-ex", "target remote 127.0.0.1:4321", NULL};
	for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++)
		if (want[i])
			assert_string_equal(argv[i], want[i]);
		else
			assert_null(argv[i]);
	vn_vmlinux_clear(&v);
}

/* vnuma doctor: the stock kernel's -dbg vmlinux, a warning with the package to install when it is missing. */
static void test_doctor_debug(void **s)
{
	_cleanup_free_ char *root = vn_xasprintf("%s/doctor", tmp), *dbg = vn_vmlinux_debian_dbg(root, "6.1.0-7-amd64");
	_cleanup_free_ char *dir = vn_xasprintf("%s/usr/lib/debug/boot", root);
	struct vn_doctor d = {0};
	struct vn_error err = {0};

	vn_doctor_check_debug(&d, root, "6.1.0-7-amd64");
	assert_string_equal(d.checks[0].name, "kernel-debug");
	assert_int_equal(d.checks[0].verdict, VN_CHECK_WARN);
	assert_non_null(strstr(d.checks[0].detail, "apt-get install linux-image-6.1.0-7-amd64-dbg"));
	assert_string_equal(d.checks[1].name, "debug-tools");
	assert_int_equal(vn_mkdir_p(dir, 0755, &err), 0);
	copy_self(dbg);
	d.n = 0;
	vn_doctor_check_debug(&d, root, "6.1.0-7-amd64");
	assert_int_equal(d.checks[0].verdict, VN_CHECK_OK);
	assert_non_null(strstr(d.checks[0].detail, dbg));
	assert_non_null(strstr(d.checks[0].detail, "build id "));
}

/* gdb's Ctrl-C is gdb's; a SIGTERM that came meanwhile is still ours. */
static void test_spawn_foreground(void **s)
{
	struct vn_error err = {0};
	const char *t[] = {"true", NULL}, *f[] = {"false", NULL}, *none[] = {"/nonexistent/gdb", NULL};

	vn_interrupted = SIGINT;
	assert_int_equal(vn_spawn_foreground(t, &err), 0);
	assert_int_equal(vn_interrupted, 0);
	vn_interrupted = SIGTERM;
	assert_int_equal(vn_spawn_foreground(f, &err), 1);
	assert_int_equal(vn_interrupted, SIGTERM);
	vn_interrupted = 0;
	assert_true(vn_spawn_foreground(none, &err) < 0);
	assert_int_equal(err.kind, VN_ERR_INFRA);
	vn_error_clear(&err);
}

struct fake {
	uint64_t memory;
	bool fail_write;
	int writes;
};

static int fake_probe(void *data, const char *name, struct vn_dump_guest *g, struct vn_error *err)
{
	const struct fake *f = data;
	const char *src = getenv("VN_SOURCE_DIR");

	g->memory = f->memory;
	g->state = vn_xstrdup("crashed");
	g->kernel = vn_xstrdup("/boot/vmlinuz-6.1.0-9-amd64");
	g->kernel_id = vn_xstrdup("stock 6.1.0-9-amd64 (debian) #1");
	g->topology = vn_xasprintf("%s/topologies/2node.xml", src ? src : ".");
	return 0;
}

/* QEMU's part: bytes into the path libvirt was given, and a failure midway when asked. */
static int fake_write(void *data, const char *name, const char *path, enum vn_dump_format fmt, struct vn_error *err)
{
	struct fake *f = data;

	f->writes++;
	assert_non_null(strstr(path, ".partial"));
	assert_int_equal(vn_file_write(path, "\177ELF and some memory"), 0);
	if (f->fail_write)
		return vn_infra_error(err, -EIO, "cannot dump the memory of '%s': QEMU died", name);
	return 0;
}

static size_t entries(const char *dir)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	size_t n = 0;

	assert_non_null(d);
	while ((e = readdir(d)))
		n += e->d_name[0] != '.';
	closedir(d);
	return n;
}

static void test_dump_files(void **s)
{
	_cleanup_free_ char *dir = vn_xasprintf("%s/dumps", tmp), *out = vn_xasprintf("%s/g.vmcore", dir);
	_cleanup_free_ char *json = NULL, *meta = vn_xasprintf("%s.json", out);
	struct vn_dump_req q = {.name = "g", .out = out, .debug_root = tmp};
	struct fake f = {.memory = UINT64_C(1) << 62};
	struct vn_dump_ops ops = {.probe = fake_probe, .write = fake_write, .data = &f};
	struct vn_dump_result r;
	struct vn_error err = {0};
	size_t len;

	assert_int_equal(vn_mkdir_p(dir, 0755, &err), 0);
	/* More memory than any disk: refused before a byte is written, exit 3's kind. */
	assert_int_equal(vn_testbed_dump_with(&q, &ops, &r, &err), -ENOSPC);
	assert_int_equal(err.kind, VN_ERR_INFRA);
	assert_non_null(strstr(err.msg, "nothing written"));
	vn_error_clear(&err);
	assert_int_equal(f.writes, 0);
	assert_int_equal(entries(dir), 0);

	/* QEMU failing midway: neither the partial file nor the dump stays. */
	f.memory = 64u << 20;
	f.fail_write = true;
	assert_int_equal(vn_testbed_dump_with(&q, &ops, &r, &err), -EIO);
	vn_error_clear(&err);
	assert_int_equal(f.writes, 1);
	assert_int_equal(entries(dir), 0);

	f.fail_write = false;
	assert_int_equal(vn_testbed_dump_with(&q, &ops, &r, &err), 0);
	assert_string_equal(r.path, out);
	assert_string_equal(r.meta, meta);
	assert_int_equal(r.bytes, strlen("\177ELF and some memory"));
	assert_int_equal(entries(dir), 2);
	assert_int_equal(vn_file_read(meta, 1 << 20, &json, &len, &err), 0);
	assert_non_null(strstr(json, "\"format\":\"elf\""));
	assert_non_null(strstr(json, "\"state\":\"crashed\""));
	assert_non_null(strstr(json, "\"release\":\"6.1.0-9-amd64\""));
	assert_non_null(strstr(json, "linux-image-6.1.0-9-amd64-dbg"));
	assert_non_null(strstr(json, "\"memory_mib\""));
	assert_non_null(strstr(json, "\"distances\""));
	vn_dump_result_clear(&r);

	/* An existing file is not replaced. */
	assert_int_equal(vn_testbed_dump_with(&q, &ops, &r, &err), -EINVAL);
	assert_int_equal(err.kind, VN_ERR_INPUT);
	vn_error_clear(&err);
	assert_int_equal(f.writes, 2);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_gdbserver_reply),  cmocka_unit_test(test_release_and_format),
		cmocka_unit_test(test_vmlinux_find),     cmocka_unit_test(test_doctor_debug),
		cmocka_unit_test(test_spawn_foreground), cmocka_unit_test(test_dump_files),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
