/* The host utility kit: directories and files, time, strv, the spawn runner, isolation, allocation. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <pthread.h>
#include <signal.h>
#include <sched.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "util/alloc.h"
#include "util/cleanup.h"
#include "util/clock.h"
#include "util/dir.h"
#include "util/interrupt.h"
#include "util/spawn.h"
#include "util/file.h"
#include "util/isolate.h"
#include "util/sha256.h"
#include "tmpdir.h"

VN_TEST_TMPDIR(tmpdir, "util")

static char *at(const char *rel)
{
	return vn_xasprintf("%s/%s", tmpdir, rel);
}

static void test_mkdir_p(void **state)
{
	(void)state;
	_cleanup_free_ char *deep = at("a/b//c/d/"), *d = at("a/b/c/d"), *file = at("a/file"), *under = at("a/file/x");
	struct vn_error err = {0};

	assert_int_equal(vn_mkdir_p(deep, 0700, &err), 0);
	assert_true(vn_is_dir(d));
	struct stat st;
	assert_int_equal(stat(d, &st), 0);
	assert_int_equal(st.st_mode & 0777, 0700);
	/* Existing: fine, and idempotent. */
	assert_int_equal(vn_mkdir_p(d, 0755, &err), 0);
	assert_int_equal(err.kind, VN_ERR_NONE);

	/* A file in the way: the error names the component, not only the argument. */
	assert_int_equal(vn_file_write(file, "x"), 0);
	assert_int_equal(vn_mkdir_p(under, 0755, &err), -ENOTDIR);
	assert_int_equal(err.kind, VN_ERR_INFRA);
	assert_non_null(strstr(err.msg, "cannot create "));
	assert_non_null(strstr(err.msg, "a/file:"));
	vn_error_clear(&err);
	assert_int_equal(vn_mkdir_p(file, 0755, NULL), -ENOTDIR);
	assert_int_equal(vn_mkdir_p("", 0755, NULL), -ENOENT);
}

static void test_rm_rf(void **state)
{
	(void)state;
	_cleanup_free_ char *top = at("rm"), *deep = at("rm/x/y"), *f = at("rm/x/y/f"), *outside = at("keep");
	_cleanup_free_ char *outside_file = at("keep/precious"), *link = at("rm/link");

	assert_int_equal(vn_mkdir_p(deep, 0755, NULL), 0);
	assert_int_equal(vn_mkdir_p(outside, 0755, NULL), 0);
	assert_int_equal(vn_file_write(f, "data"), 0);
	assert_int_equal(vn_file_write(outside_file, "data"), 0);
	/* A symlink inside is removed, its target is not followed. */
	assert_int_equal(symlink(outside, link), 0);
	assert_int_equal(vn_rm_rf(top), 0);
	assert_int_equal(access(top, F_OK), -1);
	assert_true(vn_is_file(outside_file));
	/* Missing is fine; a single file goes too. */
	assert_int_equal(vn_rm_rf(top), 0);
	assert_int_equal(vn_rm_rf(outside_file), 0);
	assert_false(vn_is_file(outside_file));
}

/* What is mounted below the tree stays (the image builder's chroot with /proc and /dev in it). */
static void test_rm_rf_one_fs(void **state)
{
	(void)state;
	_cleanup_free_ char *top = at("fs"), *mnt = at("fs/proc"), *inside = at("fs/proc/keep"), *f = at("fs/f");

	if (geteuid() != 0) {
		skip(); /* mounting needs root; CI runs as root */
		return;
	}
	assert_int_equal(vn_mkdir_p(mnt, 0755, NULL), 0);
	assert_int_equal(vn_file_write(f, "data"), 0);
	pid_t pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		/* A private mount namespace: the tmpfs is gone with this child whatever happens. */
		if (unshare(CLONE_NEWNS) < 0 || mount("none", "/", NULL, MS_REC | MS_PRIVATE, NULL) < 0 ||
		    mount("tmpfs", mnt, "tmpfs", 0, "size=1m") < 0)
			_exit(77);
		if (vn_file_write(inside, "data") < 0)
			_exit(3);
		int rc = vn_rm_rf(top);
		/* It failed (the mount point is not empty), removed the rest, and left the tmpfs alone. */
		_exit(rc < 0 && access(f, F_OK) < 0 && access(inside, F_OK) == 0 ? 0 : 1);
	}
	int st;
	assert_int_equal(waitpid(pid, &st, 0), pid);
	assert_true(WIFEXITED(st));
	if (WEXITSTATUS(st) == 77) {
		skip(); /* no mount namespaces here (a container without CAP_SYS_ADMIN) */
		return;
	}
	assert_int_equal(WEXITSTATUS(st), 0);
	assert_int_equal(vn_rm_rf(top), 0);
}

static void test_file_read_write_copy(void **state)
{
	(void)state;
	_cleanup_free_ char *a = at("f-a"), *b = at("f-b"), *none = at("no-such-file");
	_cleanup_free_ char *text = NULL, *copy = NULL, *big = vn_xmalloc(200001);
	size_t len = 0;

	/* Bigger than one read buffer, so the loop runs more than once. */
	for (size_t i = 0; i < 200000; i++)
		big[i] = (char)('a' + i % 26);
	big[200000] = '\0';
	assert_int_equal(vn_file_write(a, big), 0);
	assert_int_equal(chmod(a, 0640), 0);
	assert_int_equal(vn_file_read(a, VN_FILE_STATE_MAX, &text, &len, NULL), 0);
	assert_int_equal(len, 200000);
	assert_string_equal(text, big);

	struct stat sa, sb;
	assert_int_equal(vn_file_copy(a, b), 0);
	assert_int_equal(vn_file_read(b, VN_FILE_STATE_MAX, &copy, &(size_t){0}, NULL), 0);
	assert_string_equal(copy, big);
	assert_int_equal(stat(a, &sa), 0);
	assert_int_equal(stat(b, &sb), 0);
	assert_int_not_equal(sa.st_ino, sb.st_ino);
	assert_int_equal(sb.st_mode & 0777, 0640);

	char *never = NULL;
	assert_true(vn_file_read(none, VN_FILE_STATE_MAX, &never, &(size_t){0}, NULL) < 0);
	assert_null(never);
	assert_int_equal(vn_file_copy(none, b), -ENOENT);
	assert_true(vn_is_file(a));
	assert_false(vn_is_file(tmpdir));
	assert_true(vn_is_dir(tmpdir));
	assert_false(vn_is_dir(a));
}

static void test_clock(void **state)
{
	(void)state;
	int64_t ms0 = vn_now_ms();
	double s0 = vn_now_s();
	usleep(20000);
	int64_t ms1 = vn_now_ms();
	double s1 = vn_now_s();
	assert_true(ms1 - ms0 >= 20 && ms1 - ms0 < 5000);
	assert_true(s1 - s0 >= 0.02 && s1 - s0 < 5);
	/* The same clock in two units. */
	assert_true(ms1 / 1000.0 - s1 < 1 && s1 - ms1 / 1000.0 < 1);
}

static void test_strv(void **state)
{
	(void)state;
	char **v = vn_xcalloc(3, sizeof(char *));
	v[0] = vn_xstrdup("a");
	v[1] = vn_xstrdup("b");
	vn_strv_free(v);
	vn_strv_free(NULL);
	/* With holes, as a recipe's fragments found in the kernel tree leave them. */
	char **h = vn_xcalloc(3, sizeof(char *));
	h[0] = vn_xstrdup("a");
	h[2] = vn_xstrdup("c");
	vn_strv_free_n(h, 3);
	vn_strv_free_n(NULL, 4);
	/* ASan (the sanitizer build) reports a leak here if either free missed one. */
}

static void test_alloc(void **state)
{
	(void)state;
	_cleanup_free_ char *s = vn_xasprintf("%s-%d", "x", 42), *n = vn_xstrndup("abcdef", 3);
	assert_string_equal(s, "x-42");
	assert_string_equal(n, "abc");
	assert_null(vn_xstrdup_or_null(NULL));
	_cleanup_free_ int *z = vn_xcalloc(4, sizeof(int));
	assert_int_equal(z[3], 0);
	_cleanup_free_ int *g = vn_xreallocarray(NULL, 8, sizeof(int));
	g[7] = 1;
	assert_int_equal(g[7], 1);
}

/* The OOM policy: an allocation that cannot be made aborts, saying so. */
static void test_oom_aborts(void **state)
{
	(void)state;
	int pfd[2];
	assert_int_equal(pipe(pfd), 0);
	pid_t pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		dup2(pfd[1], STDERR_FILENO);
		/* n * size overflows: refused before malloc is asked, so no sanitizer gets in between. */
		(void)vn_xreallocarray(NULL, SIZE_MAX / 2, 4);
		_exit(0);
	}
	close(pfd[1]);
	char buf[128] = "";
	ssize_t n = read(pfd[0], buf, sizeof(buf) - 1);
	close(pfd[0]);
	int status;
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFSIGNALED(status));
	assert_int_equal(WTERMSIG(status), SIGABRT);
	assert_true(n > 0);
	assert_string_equal(buf, "vnuma: out of memory\n");
}

static void lines_cb(void *data, const char *line)
{
	struct vn_strbuf *b = data;
	vn_strbuf_printf(b, "[%s]", line);
}

struct line_stats {
	size_t lines, bytes, longest;
};

static void stats_cb(void *data, const char *line)
{
	struct line_stats *st = data;
	size_t n = strlen(line);
	st->lines++;
	st->bytes += n;
	if (n > st->longest)
		st->longest = n;
}

/* 300000 bytes with no newline: cut into lines of at most VN_SPAWN_LINE_MAX (one read of 16 KiB may overshoot), none lost. */
static void test_spawn_long_line(void **state)
{
	(void)state;
	struct line_stats st = {0};
	struct vn_error err = {0};
	const char *sh[] = {"sh", "-c", "head -c 300000 /dev/zero | tr '\\0' x; echo; echo end", NULL};
	struct vn_spawn_opts o = {.log_fd = -1, .line = stats_cb, .line_data = &st};

	assert_int_equal(vn_spawn_run(sh, &o, &err), 0);
	assert_true(st.longest <= VN_SPAWN_LINE_MAX + 16384);
	assert_true(st.lines >= 300000 / (VN_SPAWN_LINE_MAX + 16384) + 2);
	assert_int_equal(st.bytes, 300000 + 3);
}

static void test_spawn(void **state)
{
	(void)state;
	_cleanup_strbuf_ struct vn_strbuf out = VN_STRBUF_INIT, lines = VN_STRBUF_INIT;
	_cleanup_free_ char *logp = at("spawn.log"), *log = NULL;
	struct vn_error err = {0};
	_cleanup_close_ int fd = open(logp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	struct vn_spawn_opts o = {.cwd = "/", .log_fd = fd, .capture = &out, .line = lines_cb, .line_data = &lines};
	const char *sh[] = {"sh", "-c", "pwd; echo \"$LC_ALL\"; echo err >&2; read x || echo eof; printf tail; exit 3",
			    NULL};

	assert_true(fd >= 0);
	setenv("LC_ALL", "de_DE.UTF-8", 1);
	assert_int_equal(vn_spawn_run(sh, &o, &err), 3);
	unsetenv("LC_ALL");
	assert_string_equal(out.s, "/\nC\nerr\neof\ntail");
	/* Whole lines go to the callback; an unfinished last line does not. */
	assert_string_equal(lines.s, "[/][C][err][eof]");
	assert_int_equal(vn_file_read(logp, VN_FILE_STATE_MAX, &log, &(size_t){0}, NULL), 0);
	assert_string_equal(log, out.s);
	assert_int_equal(err.kind, VN_ERR_NONE);

	/* No options: output is dropped, the status still comes back. */
	const char *t[] = {"true", NULL};
	assert_int_equal(vn_spawn_run(t, NULL, &err), 0);

	const char *missing[] = {"vnuma-no-such-program", NULL};
	assert_int_equal(vn_spawn_run(missing, NULL, &err), -ENOENT);
	assert_int_equal(err.kind, VN_ERR_INFRA);
	assert_non_null(strstr(err.msg, "vnuma-no-such-program"));
	vn_error_clear(&err);

	const char *killed[] = {"sh", "-c", "kill -9 $$", NULL};
	assert_int_equal(vn_spawn_run(killed, NULL, &err), -ECHILD);
	assert_non_null(strstr(err.msg, "signal 9"));
	vn_error_clear(&err);
}

/* A process that has gone, or is a zombie nobody reaped yet: not running. */
static bool gone(pid_t pid)
{
	char path[64], buf[256];
	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	FILE *f = fopen(path, "r");
	if (!f)
		return true;
	size_t n = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[n] = '\0';
	const char *st = strrchr(buf, ')');
	return st && st[1] == ' ' && (st[2] == 'Z' || st[2] == 'X');
}

/*
 * A deadline stops the child's whole group: one that ends on SIGTERM at
 * once, one that ignores it (and gave that to its children) a grace later by
 * SIGKILL; either way an infrastructure error, and nothing left running.
 */
static void test_spawn_deadline(void **state)
{
	(void)state;
	static const char *const scripts[] = {"sleep 30 & echo $!; wait", "trap '' TERM; sleep 30 & echo $!; wait"};
	for (size_t i = 0; i < VN_ARRAY_SIZE(scripts); i++) {
		_cleanup_strbuf_ struct vn_strbuf out = VN_STRBUF_INIT;
		struct vn_spawn_opts o = {.log_fd = -1, .capture = &out, .deadline_s = 1};
		const char *sh[] = {"sh", "-c", scripts[i], NULL};
		struct vn_error err = {0};
		int64_t t0 = vn_now_ms();

		assert_int_equal(vn_spawn_run(sh, &o, &err), -ETIMEDOUT);
		int64_t took = vn_now_ms() - t0;
		assert_true(took >= 1000 && took < (i == 0 ? 3000 : 7000));
		assert_int_equal(err.kind, VN_ERR_INFRA);
		assert_string_equal(err.msg, "sh did not finish in 1 s, so it was stopped");
		pid_t child = (pid_t)atoi(out.s);
		assert_true(child > 0);
		for (int k = 0; k < 40 && !gone(child); k++)
			usleep(50 * 1000);
		assert_true(gone(child));
	}
	/* Within its deadline: the exit status, as without one. */
	const char *quick[] = {"sh", "-c", "exit 4", NULL};
	struct vn_error err = {0};
	assert_int_equal(vn_spawn_run(quick, &(struct vn_spawn_opts){.log_fd = -1, .deadline_s = 5}, &err), 4);
}

/*
 * What points git at a repository is not passed on (a hook's GIT_DIR would
 * turn git -C CLONE onto the user's checkout); the rest of git's variables are.
 */
static void test_spawn_git_env(void **state)
{
	(void)state;
	static const char *const dropped[] = {"GIT_DIR",
					      "GIT_WORK_TREE",
					      "GIT_INDEX_FILE",
					      "GIT_OBJECT_DIRECTORY",
					      "GIT_COMMON_DIR",
					      "GIT_CONFIG_PARAMETERS",
					      "GIT_CONFIG_COUNT",
					      "GIT_CONFIG_KEY_0",
					      "GIT_CONFIG_VALUE_0",
					      "GIT_PREFIX"};
	_cleanup_strbuf_ struct vn_strbuf out = VN_STRBUF_INIT;
	const char *env[] = {"env", NULL};
	struct vn_error err = {0};

	for (size_t i = 0; i < VN_ARRAY_SIZE(dropped); i++)
		setenv(dropped[i], "/somewhere", 1);
	setenv("GIT_AUTHOR_NAME", "kept", 1);
	setenv("GIT_DIRECTORY_NOT", "kept", 1);
	assert_int_equal(vn_spawn_run(env, &(struct vn_spawn_opts){.log_fd = -1, .capture = &out}, &err), 0);
	for (size_t i = 0; i < VN_ARRAY_SIZE(dropped); i++) {
		_cleanup_free_ char *line = vn_xasprintf("\n%s=", dropped[i]);
		assert_null(strstr(out.s, line));
		assert_false(strncmp(out.s, line + 1, strlen(line + 1)) == 0);
		unsetenv(dropped[i]);
	}
	assert_non_null(strstr(out.s, "GIT_AUTHOR_NAME=kept\n"));
	assert_non_null(strstr(out.s, "GIT_DIRECTORY_NOT=kept\n"));
	unsetenv("GIT_AUTHOR_NAME");
	unsetenv("GIT_DIRECTORY_NOT");
}

/* What the isolated work does, picked by arg; whatever it touches stays in the child. */
static int touched;

static int isolated(void *arg, char **out, struct vn_error *err)
{
	const char *what = arg;

	touched = 1;
	if (strcmp(what, "ok") == 0) {
		*out = vn_xstrdup("{\"n\": 2}");
		return 7;
	}
	if (strcmp(what, "fail") == 0) {
		*out = vn_xstrdup("partial");
		vn_error_set_detail(err, "tail\nof the console");
		return vn_input_error(err, "x.xml:3: bad value '%s'", what);
	}
	if (strcmp(what, "crash") == 0)
		abort();
	if (strcmp(what, "silent") == 0) {
		/* Stands for a child stuck in virConnectOpen: it never answers, and a signal changes nothing. */
		signal(SIGTERM, SIG_IGN);
		signal(SIGINT, SIG_IGN);
		for (;;)
			pause();
	}
	if (strcmp(what, "wait-signal") == 0) {
		/* Stands for a boot loop: polls the flag, cleans up, answers. */
		for (int i = 0; i < 500 && !vn_was_interrupted(); i++)
			usleep(10000);
		*out = vn_xasprintf("%d", (int)vn_interrupted);
		return 0;
	}
	return 0;
}

static void *raise_later(void *arg)
{
	(void)arg;
	usleep(100000);
	kill(getpid(), SIGTERM);
	return NULL;
}

static void test_isolate(void **state)
{
	(void)state;
	struct vn_error err = {0};
	char *out = NULL;
	const struct vn_isolate_limits lim = {.timeout_ms = 10000}, *l = &lim;

	touched = 0;
	assert_int_equal(vn_isolate(isolated, "ok", l, &out, &err), 7);
	assert_string_equal(out, "{\"n\": 2}");
	assert_int_equal(touched, 0); /* the child's memory is its own */
	free(out);

	/* The error crosses whole: kind, code, message, detail; and so does the output. */
	assert_int_equal(vn_isolate(isolated, "fail", l, &out, &err), -EINVAL);
	assert_int_equal(err.kind, VN_ERR_INPUT);
	assert_int_equal(err.code, -EINVAL);
	assert_string_equal(err.msg, "x.xml:3: bad value 'fail'");
	assert_string_equal(err.detail, "tail\nof the console");
	assert_string_equal(out, "partial");
	free(out);
	vn_error_clear(&err);

	assert_int_equal(vn_isolate(isolated, "crash", l, &out, &err), -ECHILD);
	assert_int_equal(err.kind, VN_ERR_INFRA);
	assert_non_null(strstr(err.msg, "signal 6"));
	assert_null(out);
	vn_error_clear(&err);

	/* A signal to the parent only (kill PID, not the group) still reaches the work. */
	vn_interrupt_install();
	vn_interrupted = 0;
	pthread_t th;
	assert_int_equal(pthread_create(&th, NULL, raise_later, NULL), 0);
	assert_int_equal(vn_isolate(isolated, "wait-signal", l, &out, &err), 0);
	pthread_join(th, NULL);
	assert_int_equal(vn_interrupted, SIGTERM);
	assert_string_equal(out, "15");
	free(out);
	vn_interrupted = 0;
}

/* A child that never answers is killed at its deadline, and the error says so (exit 3's kind). */
static void test_isolate_deadline(void **state)
{
	(void)state;
	struct vn_error err = {0};
	char *out = NULL;
	struct vn_isolate_limits lim = {.timeout_ms = 300};

	int64_t t0 = vn_now_ms();
	assert_int_equal(vn_isolate(isolated, "silent", &lim, &out, &err), -ETIMEDOUT);
	int64_t took = vn_now_ms() - t0;
	assert_true(took >= 300);
	assert_true(took < 3000);
	assert_int_equal(err.kind, VN_ERR_INFRA);
	assert_string_equal(err.msg, "vnuma's worker process did not answer within 0.3 s: killed");
	assert_null(out);
	vn_error_clear(&err);

	/* After a signal passed on to it, it has stop_ms, not the rest of its deadline. */
	lim = (struct vn_isolate_limits){.timeout_ms = 60000, .stop_ms = 200};
	vn_interrupt_install();
	vn_interrupted = 0;
	pthread_t th;
	assert_int_equal(pthread_create(&th, NULL, raise_later, NULL), 0);
	t0 = vn_now_ms();
	assert_int_equal(vn_isolate(isolated, "silent", &lim, &out, &err), -EINTR);
	took = vn_now_ms() - t0;
	pthread_join(th, NULL);
	assert_true(took < 2000);
	assert_int_equal(err.kind, VN_ERR_INFRA);
	assert_non_null(strstr(err.msg, "did not stop within 0.2 s of the signal: killed"));
	vn_error_clear(&err);
	vn_interrupted = 0;
}

static void test_sha256_memo(void **state)
{
	(void)state;
	_cleanup_free_ char *f = at("memo-me"), *memo = at("memo");
	uint8_t a[VN_SHA256_LEN], b[VN_SHA256_LEN], c[VN_SHA256_LEN];
	struct vn_error err = {0};

	assert_int_equal(vn_file_write_atomic(f, "one", 3, 0644, &err), 0);
	assert_int_equal(vn_sha256_file(f, a, &err), 0);
	assert_int_equal(vn_sha256_file_memo(f, memo, b, &err), 0);
	assert_memory_equal(a, b, VN_SHA256_LEN);
	/* Remembered: a memo planted with other bytes is what comes back while the file is unchanged. */
	_cleanup_free_ char *dir = at("memo/digests");
	DIR *d = opendir(dir);
	assert_non_null(d);
	struct dirent *de;
	while ((de = readdir(d)) && de->d_name[0] == '.')
		;
	assert_non_null(de);
	_cleanup_free_ char *entry = vn_xasprintf("%s/%s", dir, de->d_name);
	closedir(d);
	memset(c, 0xab, sizeof(c));
	assert_int_equal(vn_file_write_atomic(entry, c, sizeof(c), 0600, &err), 0);
	assert_int_equal(vn_sha256_file_memo(f, memo, b, &err), 0);
	assert_memory_equal(b, c, VN_SHA256_LEN);
	/* Changed (new inode, size, times): read again. */
	assert_int_equal(vn_file_write_atomic(f, "two!", 4, 0644, &err), 0);
	assert_int_equal(vn_sha256_file(f, a, &err), 0);
	assert_int_equal(vn_sha256_file_memo(f, memo, b, &err), 0);
	assert_memory_equal(a, b, VN_SHA256_LEN);
	assert_int_equal(vn_sha256_file_memo("/nonexistent/x", memo, b, &err), -ENOENT);
	vn_error_clear(&err);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_mkdir_p),        cmocka_unit_test(test_rm_rf),
		cmocka_unit_test(test_rm_rf_one_fs),   cmocka_unit_test(test_file_read_write_copy),
		cmocka_unit_test(test_clock),          cmocka_unit_test(test_strv),
		cmocka_unit_test(test_alloc),          cmocka_unit_test(test_oom_aborts),
		cmocka_unit_test(test_spawn),          cmocka_unit_test(test_spawn_long_line),
		cmocka_unit_test(test_spawn_deadline), cmocka_unit_test(test_spawn_git_env),
		cmocka_unit_test(test_isolate),        cmocka_unit_test(test_isolate_deadline),
		cmocka_unit_test(test_sha256_memo),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
