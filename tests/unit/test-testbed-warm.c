/*
 * Booted snapshots' key and cache (testbed/warm.h): a key changes with
 * everything that makes the guest another machine, and only with that; the
 * cache lists and prunes least recently used first, keeping the one in use.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "testbed/warm.h"
#include "topology/topology.h"
#include "util/dir.h"
#include "util/state.h"

static struct vn_topology *topo(const char *name)
{
	const char *src = getenv("VN_SOURCE_DIR");
	char path[4096];
	struct vn_topology *t = NULL;
	struct vn_error err = {0};

	snprintf(path, sizeof(path), "%s/topologies/%s.xml", src ? src : ".", name);
	assert_int_equal(vn_topology_load(path, &t, &err), 0);
	return t;
}

#define HEX_A "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
#define HEX_B "bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb"

static void key_of(const struct vn_warm_key_in *in, char out[VN_WARM_KEY_LEN + 1])
{
	struct vn_error err = {0};

	assert_int_equal(vn_warm_key(in, out, &err), 0);
	assert_int_equal(strlen(out), VN_WARM_KEY_LEN);
}

static void test_key_changes(void **state)
{
	struct vn_topology *amd = topo("4node-amd"), *snc = topo("8node-snc");
	char base[VN_WARM_KEY_LEN + 1], k[VN_WARM_KEY_LEN + 1];
	const char *args[] = {"-icount", "shift=auto"};
	struct vn_warm_key_in in = {.t = amd,
				    .kernel_sha256 = HEX_A,
				    .initrd_sha256 = HEX_A,
				    .cmdline = NULL,
				    .qemu_version = 7002000,
				    .accel = VN_ACCEL_TCG};

	key_of(&in, base);
	key_of(&in, k);
	assert_string_equal(base, k); /* the same machine, the same key */

	struct vn_warm_key_in v = in;
	v.kernel_sha256 = HEX_B;
	key_of(&v, k);
	assert_string_not_equal(base, k);
	v = in;
	v.initrd_sha256 = HEX_B;
	key_of(&v, k);
	assert_string_not_equal(base, k);
	v = in;
	v.cmdline = "numa_balancing=disable";
	key_of(&v, k);
	assert_string_not_equal(base, k);
	v = in;
	v.t = snc;
	key_of(&v, k);
	assert_string_not_equal(base, k);
	v = in;
	v.qemu_version = 8002000;
	key_of(&v, k);
	assert_string_not_equal(base, k);
	v = in;
	v.accel = VN_ACCEL_KVM;
	key_of(&v, k);
	assert_string_not_equal(base, k);
	v = in;
	v.loader_sha256 = HEX_A;
	key_of(&v, k);
	assert_string_not_equal(base, k);
	v = in;
	v.qemu_args = args;
	v.nqemu_args = 2;
	key_of(&v, k);
	assert_string_not_equal(base, k);

	/* One distance changed is another machine. */
	amd->distance[0][3] = amd->distance[3][0] = amd->distance[0][3] + 1;
	key_of(&in, k);
	assert_string_not_equal(base, k);
	vn_topology_free(amd);
	vn_topology_free(snc);
}

static void make_file(const char *path, size_t len, time_t mtime)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	char buf[4096];

	assert_true(fd >= 0);
	memset(buf, 1, sizeof(buf));
	for (size_t done = 0; done < len; done += sizeof(buf))
		assert_int_equal(write(fd, buf, sizeof(buf)), (ssize_t)sizeof(buf));
	close(fd);
	struct timespec ts[2] = {{.tv_sec = mtime}, {.tv_sec = mtime}};
	assert_int_equal(utimensat(AT_FDCWD, path, ts, 0), 0);
}

static void test_list_prune(void **state)
{
	char cache[] = "/tmp/vn-test-warm-XXXXXX";
	struct vn_error err = {0};
	struct vn_warm w = {0};
	const char *keys[] = {HEX_A, HEX_B, "cccccccccccccccccccccccccccccccccccccccccccccccccccccccccccccccc"};

	assert_non_null(mkdtemp(cache));
	for (int i = 0; i < 3; i++) {
		assert_int_equal(vn_warm_open(cache, keys[i], &w, &err), 0);
		/* A is the oldest, C the newest. */
		make_file(w.save, 64 << 10, 1000000 + i * 100);
		make_file(w.console, 4 << 10, 1000000 + i * 100);
		assert_true(vn_warm_ready(&w));
		vn_warm_clear(&w);
	}
	/* Not snapshots: a temporary one, another name. */
	char *tmp = vn_cache_warm_temp(cache, HEX_A, (long)getpid()),
	     *other = vn_cache_warm_file(cache, "zz", VN_WARM_SAVE);
	make_file(tmp, 4096, 1);
	make_file(other, 4096, 1);
	/* One whose writer is gone (a child that has exited): prune removes it. */
	pid_t dead = fork();
	if (dead == 0)
		_exit(0);
	assert_int_equal(waitpid(dead, NULL, 0), dead);
	char *orphan = vn_cache_warm_temp(cache, HEX_B, (long)dead);
	make_file(orphan, 4096, 1);

	struct vn_warm_entry *e = NULL;
	size_t n = 0;
	assert_int_equal(vn_warm_list(cache, &e, &n, &err), 0);
	assert_int_equal(n, 3);
	assert_string_equal(e[0].key, HEX_A);
	assert_string_equal(e[2].key, keys[2]);
	assert_true(e[0].bytes >= (68u << 10));
	free(e);

	/* Room for two: the least recently used goes, unless it is the one kept. */
	unsigned removed = 0;
	assert_int_equal(vn_warm_prune(cache, 150u << 10, HEX_A, &removed, &err), 0);
	assert_int_equal(removed, 1);
	assert_int_equal(vn_warm_list(cache, &e, &n, &err), 0);
	assert_int_equal(n, 2);
	assert_string_equal(e[0].key, HEX_A);
	assert_string_equal(e[1].key, keys[2]);
	free(e);
	assert_int_equal(vn_warm_open(cache, HEX_B, &w, &err), 0);
	assert_false(vn_warm_ready(&w));
	assert_int_equal(access(w.console, F_OK), -1);
	assert_int_equal(access(w.lock, F_OK), -1); /* its lock went with it */
	vn_warm_clear(&w);

	/* Touched, A is the newest: a cap for one keeps it. */
	assert_int_equal(vn_warm_open(cache, HEX_A, &w, &err), 0);
	vn_warm_touch(&w);
	vn_warm_clear(&w);
	assert_int_equal(vn_warm_prune(cache, 100u << 10, NULL, &removed, &err), 0);
	assert_int_equal(removed, 1);
	assert_int_equal(vn_warm_list(cache, &e, &n, &err), 0);
	assert_int_equal(n, 1);
	assert_string_equal(e[0].key, HEX_A);
	free(e);
	assert_int_equal(access(tmp, F_OK), 0);
	assert_int_equal(access(orphan, F_OK), -1);
	free(tmp);
	free(orphan);
	free(other);
	vn_rm_rf(cache);
}

static void test_lock_taken_once(void **state)
{
	char cache[] = "/tmp/vn-test-warm-XXXXXX";
	struct vn_error err = {0};
	struct vn_warm a = {0}, b = {0};

	assert_non_null(mkdtemp(cache));
	assert_int_equal(vn_warm_open(cache, HEX_A, &a, &err), 0);
	assert_int_equal(vn_warm_open(cache, HEX_A, &b, &err), 0);
	assert_int_equal(vn_warm_lock(&a, 0, &err), 0);
	/* Another holder waits, here until a deadline already past. */
	assert_int_equal(vn_warm_lock(&b, 0, &err), -ETIMEDOUT);
	vn_error_clear(&err);
	vn_warm_unlock(&a);
	assert_int_equal(vn_warm_lock(&b, 0, &err), 0);

	/* A held snapshot is not pruned; once free it is, its lock file with it. */
	unsigned removed = 0;
	make_file(b.save, 4096, 1000000);
	assert_int_equal(vn_warm_prune(cache, 0, NULL, &removed, &err), 0);
	assert_int_equal(removed, 0);
	vn_warm_unlock(&b);
	assert_int_equal(vn_warm_prune(cache, 0, NULL, &removed, &err), 0);
	assert_int_equal(removed, 1);
	assert_int_equal(access(b.lock, F_OK), -1);
	/* ...and the next maker takes a new one. */
	assert_int_equal(vn_warm_lock(&a, 0, &err), 0);
	assert_int_equal(access(a.lock, F_OK), 0);
	vn_warm_clear(&a);
	vn_warm_clear(&b);
	vn_rm_rf(cache);
}

static void test_cache_max(void **state)
{
	struct vn_error err = {0};
	uint64_t max = 0;

	unsetenv("VNUMA_WARM_CACHE_MAX");
	assert_int_equal(vn_warm_cache_max(&max, &err), 0);
	assert_true(max == VN_WARM_CACHE_MAX);
	setenv("VNUMA_WARM_CACHE_MAX", "0", 1);
	assert_int_equal(vn_warm_cache_max(&max, &err), 0);
	assert_true(max == 0);
	setenv("VNUMA_WARM_CACHE_MAX", "2G", 1);
	assert_int_equal(vn_warm_cache_max(&max, &err), 0);
	assert_true(max == (UINT64_C(2) << 30));
	setenv("VNUMA_WARM_CACHE_MAX", "lots", 1);
	assert_true(vn_warm_cache_max(&max, &err) < 0);
	assert_non_null(strstr(err.msg, "VNUMA_WARM_CACHE_MAX"));
	vn_error_clear(&err);
	unsetenv("VNUMA_WARM_CACHE_MAX");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_key_changes),
		cmocka_unit_test(test_list_prune),
		cmocka_unit_test(test_lock_taken_once),
		cmocka_unit_test(test_cache_max),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
