/* The hosts file parser (virt/hosts.c): every form of a line and every error message. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "testbed/hosts.h"

static char dir[] = "/tmp/vn-test-hosts-XXXXXX";
static char path[256];

static int setup(void **s)
{
	if (!mkdtemp(dir))
		return -1;
	snprintf(path, sizeof(path), "%s/hosts", dir);
	return 0;
}

static int teardown(void **s)
{
	unlink(path);
	return rmdir(dir);
}

static void put(const char *text)
{
	FILE *f = fopen(path, "w");
	assert_non_null(f);
	fputs(text, f);
	fclose(f);
}

/* Loads text as a hosts file; returns the rc, the error message in err. */
static int load(const char *text, struct vn_hosts *h, struct vn_error *err)
{
	put(text);
	*err = (struct vn_error){0};
	return vn_testbed_hosts_load(path, h, err);
}

static void expect_error(const char *text, unsigned line, const char *msg)
{
	struct vn_hosts h = {0};
	struct vn_error err;
	char want[4096];

	assert_int_equal(load(text, &h, &err), -EINVAL);
	assert_int_equal(err.kind, VN_ERR_INPUT);
	if (line)
		snprintf(want, sizeof(want), "%s:%u: %s", path, line, msg);
	else
		snprintf(want, sizeof(want), "%s: %s", path, msg);
	assert_string_equal(err.msg, want);
	vn_testbed_hosts_clear(&h);
}

static void test_good(void **s)
{
	struct vn_hosts h = {0};
	struct vn_error err;

	int rc = load("# the lab\n"
		      "\n"
		      "qemu+ssh://vnuma@big1/system 8   # the big one\n"
		      "   qemu+tcp://127.0.0.1:16599/session\tauto pool=/tmp/p#1\r\n"
		      "qemu:///embed?root=/tmp/x#frag pool=/srv/vnuma 2\n"
		      "\t# indented comment\n"
		      "qemu:///system",
		      &h, &err);
	if (rc < 0)
		fail_msg("%s", err.msg);
	assert_int_equal(h.n, 4);
	assert_string_equal(h.v[0].uri, "qemu+ssh://vnuma@big1/system");
	assert_int_equal(h.v[0].capacity, 8);
	assert_null(h.v[0].pool_dir);
	assert_string_equal(h.v[0].file, path);
	assert_int_equal(h.v[0].line, 3);
	assert_string_equal(h.v[1].uri, "qemu+tcp://127.0.0.1:16599/session");
	assert_int_equal(h.v[1].capacity, 0);
	assert_string_equal(h.v[1].pool_dir, "/tmp/p#1"); /* a '#' inside a word is not a comment */
	assert_int_equal(h.v[1].line, 4);
	assert_string_equal(h.v[2].uri, "qemu:///embed?root=/tmp/x#frag");
	assert_string_equal(h.v[2].pool_dir, "/srv/vnuma");
	assert_int_equal(h.v[2].capacity, 2);
	assert_string_equal(h.v[3].uri, "qemu:///system"); /* no final newline */
	assert_int_equal(h.v[3].line, 7);

	assert_int_equal(vn_testbed_hosts_add(&h, "test:///default", &err), 0);
	assert_int_equal(h.n, 5);
	assert_null(h.v[4].file);
	assert_int_equal(h.v[4].capacity, 0);
	vn_testbed_hosts_clear(&h);
	assert_int_equal(h.n, 0);
	assert_null(h.v);
}

static void test_errors(void **s)
{
	expect_error("", 0, "no hosts (one libvirt URI per line, e.g. qemu+ssh://user@host/system)");
	expect_error("# only\n\n   \n", 0, "no hosts (one libvirt URI per line, e.g. qemu+ssh://user@host/system)");
	expect_error("qemu:///system\nbig1 4\n", 2, "not a libvirt URI 'big1' (one like qemu+ssh://user@host/system)");
	expect_error("://host/system\n", 1,
		     "not a libvirt URI '://host/system' (one like qemu+ssh://user@host/system)");
	expect_error("qe mu://x/system\n", 1, "not a libvirt URI 'qe' (one like qemu+ssh://user@host/system)");
	expect_error("qemu:///system 0\n", 1, "bad capacity '0' (guests at once: 1-4096, or auto)");
	expect_error("qemu:///system 4097\n", 1, "bad capacity '4097' (guests at once: 1-4096, or auto)");
	expect_error("qemu:///system -1\n", 1, "bad capacity '-1' (guests at once: 1-4096, or auto)");
	expect_error("qemu:///system 4x\n", 1, "bad capacity '4x' (guests at once: 1-4096, or auto)");
	expect_error("qemu:///system 99999999999999999999\n", 1,
		     "bad capacity '99999999999999999999' (guests at once: 1-4096, or auto)");
	expect_error("qemu:///system 2 3\n", 1, "a second capacity '3' (one per host)");
	expect_error("qemu:///system cap=3\n", 1, "unknown key 'cap' (known: pool=DIR, timeout=SECONDS)");
	static const char *const bad_timeouts[] = {"",      "0",   "0.0",  "-1",     "+5",
						   "5s",    "1e3", "0x10", "nan",    "inf",
						   "1.2.3", ".5",  "3601", "0.0001", "99999999999999999999999"};
	for (size_t i = 0; i < sizeof(bad_timeouts) / sizeof(bad_timeouts[0]); i++) {
		char line[128], m[256];
		snprintf(line, sizeof(line), "qemu:///system\nqemu+tcp://h/system timeout=%s\n", bad_timeouts[i]);
		snprintf(m, sizeof(m),
			 "bad timeout= '%s' (seconds to wait for the host to answer: a number above 0, at most 3600)",
			 bad_timeouts[i]);
		expect_error(line, 2, m);
	}
	expect_error("qemu:///system timeout=1 timeout=2\n", 1, "a second timeout= '2' (one per host)");
	expect_error("qemu:///system pool=/a pool=/b\n", 1, "a second pool= '/b' (one per host)");
	expect_error("qemu:///system pool=rel/dir\n", 1,
		     "pool= 'rel/dir' is not an absolute path (a directory on that host)");
	expect_error("qemu:///system pool=\n", 1, "pool= '' is not an absolute path (a directory on that host)");
	char msg[512];
	snprintf(msg, sizeof(msg), "duplicate host 'qemu:///system' (also given at %s:1)", path);
	expect_error("qemu:///system 2\n# again\nqemu:///system 3\n", 3, msg);
}

static void test_timeout(void **s)
{
	struct vn_hosts h = {0};
	struct vn_error err;

	int rc = load("qemu+tcp://a/system timeout=5\n"
		      "qemu+tcp://b/system 2 timeout=0.25 pool=/p\n"
		      "qemu+tcp://c/system timeout=3600\n"
		      "qemu+tcp://d/system\n",
		      &h, &err);
	if (rc < 0)
		fail_msg("%s", err.msg);
	assert_int_equal(h.n, 4);
	assert_int_equal(h.v[0].timeout_ms, 5000);
	assert_int_equal(h.v[1].timeout_ms, 250);
	assert_int_equal(h.v[1].capacity, 2);
	assert_string_equal(h.v[1].pool_dir, "/p");
	assert_int_equal(h.v[2].timeout_ms, 3600000);
	assert_int_equal(h.v[3].timeout_ms, 0); /* the default */
	vn_testbed_hosts_clear(&h);
}

/* Many hosts: the duplicate check still finds the first line of a URI, across the index's growth. */
static void test_many(void **s)
{
	struct vn_hosts h = {0};
	struct vn_error err;
	char *text = malloc(50 * 5000 + 100), *p = text;

	for (unsigned i = 0; i < 5000; i++)
		p += sprintf(p, "qemu+tcp://h%u/system\n", i);
	sprintf(p, "qemu+tcp://h1234/system\n");
	assert_int_equal(load(text, &h, &err), -EINVAL);
	char want[4096];
	snprintf(want, sizeof(want), "%s:5001: duplicate host 'qemu+tcp://h1234/system' (also given at %s:1235)", path,
		 path);
	assert_string_equal(err.msg, want);
	assert_int_equal(h.n, 5000);
	for (unsigned i = 0; i < 5000; i += 999) {
		char uri[64];
		snprintf(uri, sizeof(uri), "qemu+tcp://h%u/system", i);
		err = (struct vn_error){0};
		assert_int_equal(vn_testbed_hosts_add(&h, uri, &err), -EINVAL);
	}
	err = (struct vn_error){0};
	assert_int_equal(vn_testbed_hosts_add(&h, "qemu+tcp://h5000/system", &err), 0);
	assert_int_equal(h.n, 5001);
	vn_testbed_hosts_clear(&h);
	free(text);
}

static void test_file_and_connect(void **s)
{
	struct vn_hosts h = {0};
	struct vn_error err = {0};
	char want[4096];

	FILE *f = fopen(path, "w");
	assert_non_null(f);
	fwrite("qemu:///system\0\n", 1, 16, f);
	fclose(f);
	assert_int_equal(vn_testbed_hosts_load(path, &h, &err), -EINVAL);
	snprintf(want, sizeof(want), "%s: not a text file (it holds a NUL byte)", path);
	assert_string_equal(err.msg, want);

	err = (struct vn_error){0};
	assert_true(vn_testbed_hosts_load(dir, &h, &err) < 0); /* a directory: util/file.h refuses it */
	assert_int_equal(err.kind, VN_ERR_INPUT);
	assert_non_null(strstr(err.msg, dir));

	err = (struct vn_error){0};
	assert_int_equal(vn_testbed_hosts_add(&h, "big1", &err), -EINVAL);
	assert_string_equal(err.msg, "--connect: not a libvirt URI 'big1' (one like qemu+ssh://user@host/system)");
	assert_int_equal(h.n, 0);

	/* --connect hosts beside a hosts file: one list, no URI twice. */
	assert_int_equal(vn_testbed_hosts_add(&h, "qemu+tcp://127.0.0.1:1/session", &err), 0);
	assert_int_equal(load("qemu:///system\nqemu+tcp://127.0.0.1:1/session\n", &h, &err), -EINVAL);
	snprintf(want, sizeof(want), "%s:2: duplicate host 'qemu+tcp://127.0.0.1:1/session' (also given at --connect)",
		 path);
	assert_string_equal(err.msg, want);
	err = (struct vn_error){0};
	assert_int_equal(vn_testbed_hosts_add(&h, "qemu:///system", &err), -EINVAL);
	snprintf(want, sizeof(want), "--connect: duplicate host 'qemu:///system' (also given at %s:1)", path);
	assert_string_equal(err.msg, want);
	vn_testbed_hosts_clear(&h);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_good),    cmocka_unit_test(test_errors), cmocka_unit_test(test_file_and_connect),
		cmocka_unit_test(test_timeout), cmocka_unit_test(test_many),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
