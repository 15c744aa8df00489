/*
 * util/dir.h against a hostile tree: rm -rf while a directory inside is
 * swapped for a symlink, and paths resolved beneath a directory that holds
 * symlinks (an image's, a guest's, a stranger's in a shared results tree).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "util/alloc.h"
#include "util/cleanup.h"
#include "util/dir.h"
#include "util/file.h"
#include "tmpdir.h"

#define FILES 64

VN_TEST_TMPDIR(tmpdir, "util-dir")

static char *at(const char *rel)
{
	return vn_xasprintf("%s/%s", tmpdir, rel);
}

static void fill(const char *dir)
{
	assert_int_equal(vn_mkdir_p(dir, 0755, NULL), 0);
	for (int i = 0; i < FILES; i++) {
		_cleanup_free_ char *f = vn_xasprintf("%s/f%d", dir, i);
		assert_int_equal(vn_file_write(f, "x"), 0);
	}
}

static int count(const char *dir)
{
	int n = 0;

	for (int i = 0; i < FILES; i++) {
		_cleanup_free_ char *f = vn_xasprintf("%s/f%d", dir, i);
		n += access(f, F_OK) == 0;
	}
	return n;
}

/*
 * A local user who can write into the tree swaps tree/sub for a symlink to
 * a directory of the same names while rm -rf walks it, over and over: what
 * the symlink points to must survive every round. A walk by path (nftw)
 * unlinks tree/sub/fN through the symlink within a few rounds.
 */
static void test_rm_rf_swapped_for_symlink(void **state)
{
	(void)state;
	_cleanup_free_ char *tree = at("tree"), *sub = at("tree/sub"), *real = at("tree/sub.real");
	_cleanup_free_ char *victim = at("victim");

	fill(victim);
	for (int round = 0; round < 150; round++) {
		fill(sub);
		pid_t pid = fork();
		assert_true(pid >= 0);
		if (pid == 0) {
			for (;;) {
				if (rename(sub, real) == 0) {
					if (symlink(victim, sub) == 0) {
						sched_yield();
						unlink(sub);
					}
					rename(real, sub);
				}
				sched_yield();
			}
		}
		vn_rm_rf(tree); /* may fail: the swapper races it; only the victim matters */
		kill(pid, SIGKILL);
		waitpid(pid, NULL, 0);
		/* The swapper may have been killed with the symlink in place: that is removed, not followed. */
		assert_int_equal(vn_rm_rf(tree), 0);
		assert_int_equal(access(tree, F_OK), -1);
		if (count(victim) != FILES)
			fail_msg("round %d: rm -rf followed the swapped-in symlink: %d of %d files left", round,
				 count(victim), FILES);
	}
}

/* A path ending in "." or ".." is refused, not emptied from above. */
static void test_rm_rf_dot(void **state)
{
	(void)state;
	_cleanup_free_ char *d = at("d"), *dot = at("d/."), *f = at("d/f0");

	fill(d);
	assert_int_equal(vn_rm_rf(dot), -EINVAL);
	assert_int_equal(access(f, F_OK), 0);
	assert_int_equal(vn_rm_rf(d), 0);
	assert_int_equal(access(d, F_OK), -1);
}

static void test_dir_beneath(void **state)
{
	(void)state;
	_cleanup_free_ char *out = at("out"), *outside = at("outside"), *link = at("out/var/log/d");
	_cleanup_free_ char *made = at("out/a/b"), *file = at("out/file"), *planted = at("outside/cron.d");
	_cleanup_close_ int dfd = -1, fd = -1;
	struct vn_error err = {0};
	struct stat st;

	assert_int_equal(vn_mkdir_p(out, 0755, NULL), 0);
	assert_int_equal(vn_mkdir_p(outside, 0755, NULL), 0);
	assert_true((dfd = open(out, O_PATH | O_DIRECTORY | O_CLOEXEC)) >= 0);

	/* Missing components are made with the mode; an O_PATH descriptor of the last comes back. */
	fd = vn_dir_beneath(dfd, "out", "a//./b/", true, 0700, &err);
	assert_true(fd >= 0);
	assert_int_equal(stat(made, &st), 0);
	assert_int_equal(st.st_mode & 0777, 0700);
	assert_int_equal(mkdirat(fd, "c", 0755), 0);
	close(fd);
	/* Existing, not created: fine; missing without create: -ENOENT as bad input. */
	assert_true((fd = vn_dir_beneath(dfd, "out", "a/b/c", false, 0, &err)) >= 0);
	close(fd);
	fd = -1;
	assert_int_equal(vn_dir_beneath(dfd, "out", "a/nope", false, 0, &err), -ENOENT);
	assert_int_equal(err.kind, VN_ERR_INPUT);
	assert_non_null(strstr(err.msg, "out/a/nope"));
	vn_error_clear(&err);

	/* An absolute symlink in the tree (an image's /var/log/d -> /etc): never followed, even to create. */
	_cleanup_free_ char *log = at("out/var/log");
	assert_int_equal(vn_mkdir_p(log, 0755, NULL), 0);
	assert_int_equal(symlink(outside, link), 0);
	assert_int_equal(vn_dir_beneath(dfd, "out", "var/log/d/cron.d", true, 0755, &err), -ELOOP);
	assert_int_equal(err.kind, VN_ERR_INPUT);
	assert_non_null(strstr(err.msg, "out/var/log/d is a symlink"));
	assert_int_equal(access(planted, F_OK), -1);
	vn_error_clear(&err);
	/* Nor a relative one, nor the symlink as the last component. */
	assert_int_equal(symlinkat("..", dfd, "up"), 0);
	assert_int_equal(vn_dir_beneath(dfd, "out", "up", false, 0, &err), -ELOOP);
	vn_error_clear(&err);
	/* ".." does not climb out. */
	assert_int_equal(vn_dir_beneath(dfd, "out", "a/../../outside", true, 0755, &err), -EINVAL);
	assert_int_equal(err.kind, VN_ERR_INPUT);
	vn_error_clear(&err);
	/* A file in the way. */
	assert_int_equal(vn_file_write(file, "x"), 0);
	assert_int_equal(vn_dir_beneath(dfd, "out", "file/x", true, 0755, &err), -ENOTDIR);
	assert_non_null(strstr(err.msg, "out/file: not a directory"));
	vn_error_clear(&err);

	/* The yes-or-no form, for readers of a shared tree: a symlink anywhere, a file that is one included. */
	assert_true(vn_path_has_symlink(out, "var/log/d/cron.d"));
	assert_true(vn_path_has_symlink(out, "up"));
	assert_false(vn_path_has_symlink(out, "a/b/c"));
	assert_false(vn_path_has_symlink(out, "file"));
	assert_false(vn_path_has_symlink(out, "a/missing/x"));
	assert_int_equal(symlinkat("file", dfd, "a/b/c/result.json"), 0);
	assert_true(vn_path_has_symlink(out, "a/b/c/result.json"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_rm_rf_swapped_for_symlink, setup, teardown),
		cmocka_unit_test_setup_teardown(test_rm_rf_dot, setup, teardown),
		cmocka_unit_test_setup_teardown(test_dir_beneath, setup, teardown),
	};

	umask(022);
	return cmocka_run_group_tests(tests, NULL, NULL);
}
