/*
 * Drives the real static vnuma-agent over a socketpair (--fd) with the host
 * client: the same code paths as in a guest, minus virtio-serial.
 */
#include "guest/agent-client.h"
#include "guest/agent-exec.h"
#include "guest/agent-file.h"
#include "guest/agent-priv.h"
#include "guest/copy.h"

#include "util/alloc.h"
#include "util/cleanup.h"
#include "util/clock.h"
#include "util/interrupt.h"
#include "util/dir.h"
#include "util/file.h"

#include "testutil.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <sched.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <inttypes.h>
#include <poll.h>
#include <termios.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#define T_MS 10000

struct fixture {
	struct vn_agent *a;
	int raw_fd; /* the client's end, for writing hand-made lines */
	pid_t pid;
};

static const char *agent_path(void)
{
	static char path[4096];
	const char *dir = getenv("VN_BINARY_DIR");

	if (getenv("VN_AGENT"))
		return getenv("VN_AGENT");
	if (dir) {
		snprintf(path, sizeof(path), "%s/src/agent/vnuma-agent", dir);
		if (access(path, X_OK) == 0)
			return path;
	}
	return VN_AGENT_BINARY;
}

static int setup(void **state)
{
	struct fixture *f = calloc(1, sizeof(*f));
	struct vn_error err = {0};

	assert_non_null(f);
	f->pid = vn_test_agent_spawn(agent_path(), &f->raw_fd);
	assert_true(f->pid > 0);
	assert_int_equal(vn_agent_from_fd(f->raw_fd, &f->a, &err), 0);
	*state = f;
	return 0;
}

/* The agent must exit cleanly on EOF (and never need killing). */
static int teardown(void **state)
{
	struct fixture *f = *state;
	int status = -1;
	pid_t r = 0;

	pid_t pid = f->pid;

	vn_agent_close(f->a);
	free(f);
	if (pid < 0)
		return 0;
	for (int i = 0; i < 500 && r == 0; i++) {
		r = waitpid(pid, &status, WNOHANG);
		if (r == 0)
			usleep(10000);
	}
	if (r == 0) {
		kill(pid, SIGKILL);
		waitpid(pid, &status, 0);
		fail_msg("agent did not exit on EOF");
	}
	assert_true(WIFEXITED(status));
	assert_int_equal(WEXITSTATUS(status), 0);
	return 0;
}

static void test_hello(void **state)
{
	struct fixture *f = *state;
	struct vn_error err = {0};
	struct json_object *reply = NULL, *v;

	assert_int_equal(vn_agent_hello(f->a, T_MS, &reply, &err), 0);
	assert_true(json_object_object_get_ex(reply, "kernel", &v));
	assert_true(strlen(json_object_get_string(v)) > 0);
	assert_true(json_object_object_get_ex(reply, "machine", &v));
	assert_true(json_object_object_get_ex(reply, "uptime_s", &v));
	assert_true(json_object_get_double(v) > 0);
	assert_true(json_object_object_get_ex(reply, "agent", &v));
	json_object_put(reply);
}

static int run(struct fixture *f, const char *const *argv, double timeout_s, int stdin_fd, struct vn_strbuf *out,
	       struct vn_strbuf *errb, int *status, struct vn_error *err)
{
	struct vn_agent_exec_opts o = {
		.argv = argv,
		.stdin_fd = stdin_fd,
		.stdout_fd = -1,
		.stderr_fd = -1,
		.stdout_buf = out,
		.stderr_buf = errb,
		.timeout_s = timeout_s,
	};

	return vn_agent_exec(f->a, &o, status, err);
}

static void test_exec_echo(void **state)
{
	struct fixture *f = *state;
	struct vn_error err = {0};
	_cleanup_strbuf_ struct vn_strbuf out = VN_STRBUF_INIT, errb = VN_STRBUF_INIT;
	const char *const argv[] = {"/bin/echo", "hello", "world", NULL};
	int status = -1;

	assert_int_equal(run(f, argv, 10, -1, &out, &errb, &status, &err), 0);
	assert_int_equal(status, 0);
	assert_string_equal(out.s, "hello world\n");
	assert_int_equal(errb.len, 0);
}

static void test_exec_stderr_exit_code(void **state)
{
	struct fixture *f = *state;
	struct vn_error err = {0};
	_cleanup_strbuf_ struct vn_strbuf out = VN_STRBUF_INIT, errb = VN_STRBUF_INIT;
	const char *const argv[] = {"/bin/sh", "-c", "echo out; echo err >&2; exit 3", NULL};
	int status = -1;

	assert_int_equal(run(f, argv, 10, -1, &out, &errb, &status, &err), 0);
	assert_int_equal(status, 3);
	assert_string_equal(out.s, "out\n");
	assert_string_equal(errb.s, "err\n");
}

static void test_exec_env_cwd(void **state)
{
	struct fixture *f = *state;
	struct vn_error err = {0};
	_cleanup_strbuf_ struct vn_strbuf out = VN_STRBUF_INIT;
	const char *const argv[] = {"/bin/sh", "-c", "echo \"$VN_X:$(pwd)\"", NULL};
	const char *const env[] = {"VN_X=a=b", NULL};
	struct vn_agent_exec_opts o = {
		.argv = argv,
		.env = env,
		.cwd = "/tmp",
		.stdin_fd = -1,
		.stdout_fd = -1,
		.stderr_fd = -1,
		.stdout_buf = &out,
		.timeout_s = 10,
	};
	int status = -1;

	assert_int_equal(vn_agent_exec(f->a, &o, &status, &err), 0);
	assert_int_equal(status, 0);
	assert_string_equal(out.s, "a=b:/tmp\n");
}

static void test_exec_stdin(void **state)
{
	struct fixture *f = *state;
	struct vn_error err = {0};
	_cleanup_strbuf_ struct vn_strbuf out = VN_STRBUF_INIT;
	const char *const argv[] = {"cat", NULL};
	int p[2], status = -1;
	/* Bigger than a pipe buffer, so stdin and stdout both have to flow at once. */
	size_t big = 300000;
	_cleanup_free_ char *data = malloc(big);

	for (size_t i = 0; i < big; i++)
		data[i] = (char)('a' + i % 26);
	assert_int_equal(pipe(p), 0);
	pid_t w = fork();
	if (w == 0) {
		close(p[0]);
		size_t off = 0;
		while (off < big) {
			ssize_t n = write(p[1], data + off, big - off);
			if (n <= 0)
				_exit(1);
			off += (size_t)n;
		}
		_exit(0);
	}
	close(p[1]);
	assert_int_equal(run(f, argv, 20, p[0], &out, NULL, &status, &err), 0);
	close(p[0]);
	waitpid(w, NULL, 0);
	assert_int_equal(status, 0);
	assert_int_equal(out.len, big);
	assert_memory_equal(out.s, data, big);
}

/* More stdin than the agent queues: it must throttle the host, not stall or drop data. */
static void test_exec_stdin_throttled(void **state)
{
	struct fixture *f = *state;
	struct vn_error err = {0};
	_cleanup_strbuf_ struct vn_strbuf out = VN_STRBUF_INIT;
	const char *const argv[] = {"/bin/sh", "-c", "sleep 0.5; wc -c", NULL};
	_cleanup_free_ char *path = strdup("/tmp/vn-agent-stdin-XXXXXX");
	int fd = mkstemp(path), status = -1;

	assert_true(fd >= 0);
	unlink(path);
	assert_int_equal(ftruncate(fd, 12000000), 0);
	assert_int_equal(run(f, argv, 60, fd, &out, NULL, &status, &err), 0);
	close(fd);
	assert_int_equal(status, 0);
	assert_int_equal(strtol(out.s, NULL, 10), 12000000);
}

static void test_exec_large_output(void **state)
{
	struct fixture *f = *state;
	struct vn_error err = {0};
	_cleanup_strbuf_ struct vn_strbuf out = VN_STRBUF_INIT;
	const char *const argv[] = {"head", "-c", "5000000", "/dev/zero", NULL};
	int status = -1;

	assert_int_equal(run(f, argv, 30, -1, &out, NULL, &status, &err), 0);
	assert_int_equal(status, 0);
	assert_int_equal(out.len, 5000000);
}

static void test_exec_timeout(void **state)
{
	struct fixture *f = *state;
	struct vn_error err = {0};
	const char *const argv[] = {"sleep", "10", NULL};
	int status = -1;
	struct timespec t0, t1;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	assert_int_equal(run(f, argv, 0.5, -1, NULL, NULL, &status, &err), -ETIMEDOUT);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	assert_int_equal(err.kind, VN_ERR_INFRA);
	assert_non_null(strstr(err.msg, "timed out"));
	assert_true(t1.tv_sec - t0.tv_sec < 5);
	vn_error_clear(&err);
	/* The connection stays usable after a timeout. */
	assert_int_equal(vn_agent_hello(f->a, T_MS, NULL, &err), 0);
}

static void test_exec_missing_program(void **state)
{
	struct fixture *f = *state;
	struct vn_error err = {0};
	const char *const argv[] = {"/nonexistent/vnuma-no-such-program", NULL};
	int status = -1;

	assert_int_equal(run(f, argv, 5, -1, NULL, NULL, &status, &err), -ENOENT);
	assert_int_equal(err.kind, VN_ERR_INPUT);
	assert_non_null(strstr(err.msg, "No such file or directory"));
}

static volatile sig_atomic_t fwd_sig;

/* SIGINT set in *flag before the exec reaches the program in the guest (128 + SIGINT) and clears the flag. */
static void exec_forwarded(struct fixture *f, const char *script, volatile sig_atomic_t *flag, struct vn_strbuf *out)
{
	struct vn_error err = {0};
	const char *const argv[] = {"/bin/sh", "-c", script, NULL};
	struct vn_agent_exec_opts o = {
		.argv = argv,
		.stdin_fd = -1,
		.stdout_fd = -1,
		.stderr_fd = -1,
		.stdout_buf = out,
		.timeout_s = 20,
		.forward_signal = flag,
	};
	int status = -1;

	/* Set before the call: the flag is checked once the exec is under way. */
	*flag = SIGINT;
	assert_int_equal(vn_agent_exec(f->a, &o, &status, &err), 0);
	assert_int_equal(status, 128 + SIGINT);
	assert_int_equal(*flag, 0);
}

static void test_exec_forward_signal(void **state)
{
	_cleanup_strbuf_ struct vn_strbuf out = VN_STRBUF_INIT;

	/* exec: sleep itself gets the signal, with no shell deciding what to do with it. */
	exec_forwarded(*state, "echo ready; exec sleep 10", &fwd_sig, &out);
}

/* vnuma exec forwards Ctrl-C itself: with &vn_interrupted as the flag it is sent, not an end of the wait. */
static void test_exec_forward_interrupt(void **state)
{
	exec_forwarded(*state, "exec sleep 10", &vn_interrupted, NULL);
}

static void test_read_proc(void **state)
{
	struct fixture *f = *state;
	struct vn_error err = {0};
	_cleanup_free_ char *data = NULL;
	size_t len = 0;

	/* The agent's own status: procfs reports size 0, the content is not empty. */
	assert_int_equal(vn_agent_read_file(f->a, "/proc/self/status", T_MS, &data, &len, &err), 0);
	assert_true(len > 100);
	assert_int_equal(strlen(data), len);
	assert_non_null(strstr(data, "Name:\tvnuma-agent"));
}

static void test_read_missing(void **state)
{
	struct fixture *f = *state;
	struct vn_error err = {0};
	char *data = NULL;
	size_t len = 0;

	assert_int_equal(vn_agent_read_file(f->a, "/nonexistent/file", T_MS, &data, &len, &err), -ENOENT);
	assert_int_equal(err.kind, VN_ERR_INFRA);
	assert_null(data);
}

/* Many reads in flight at once: each reply lands in its own slot; one missing file fails them all. */
static void test_read_files(void **state)
{
	struct fixture *f = *state;
	struct vn_error err = {0};
	const char *paths[] = {"/proc/self/status", "/proc/version", "/proc/version"};
	char *data[3];

	assert_int_equal(vn_agent_read_files(f->a, paths, 3, T_MS, data, &err), 0);
	assert_non_null(strstr(data[0], "Name:\tvnuma-agent"));
	assert_non_null(strstr(data[1], "Linux version"));
	assert_string_equal(data[1], data[2]);
	for (int i = 0; i < 3; i++)
		free(data[i]);

	const char *bad[] = {"/proc/version", "/nonexistent/file", "/proc/self/status"};
	assert_int_equal(vn_agent_read_files(f->a, bad, 3, T_MS, data, &err), -ENOENT);
	assert_non_null(strstr(err.msg, "/nonexistent/file"));
	for (int i = 0; i < 3; i++)
		assert_null(data[i]);
	vn_error_clear(&err);
	/* The replies still in flight are skipped: the connection goes on. */
	_cleanup_free_ char *one = NULL;
	size_t len;
	assert_int_equal(vn_agent_read_file(f->a, "/proc/version", T_MS, &one, &len, &err), 0);
}

static void test_write_read_roundtrip(void **state)
{
	struct fixture *f = *state;
	struct vn_error err = {0};
	char dir[] = "/tmp/vn-agent-test-XXXXXX", path[64];
	_cleanup_free_ char *data = NULL, *data2 = NULL;
	size_t len = 0, binlen = 70000;
	_cleanup_free_ unsigned char *bin = malloc(binlen);
	struct stat st;

	assert_non_null(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/f", dir);
	for (size_t i = 0; i < binlen; i++)
		bin[i] = (unsigned char)(i * 7 + i / 256);
	assert_int_equal(vn_agent_write_file(f->a, path, bin, binlen, 0600, 0, T_MS, &err), 0);
	assert_int_equal(stat(path, &st), 0);
	assert_int_equal(st.st_mode & 07777, 0600);
	assert_int_equal(vn_agent_read_file(f->a, path, T_MS, &data, &len, &err), 0);
	assert_int_equal(len, binlen);
	assert_memory_equal(data, bin, binlen);

	assert_int_equal(vn_agent_write_file(f->a, path, "x\n", 2, -1, 0, T_MS, &err), 0);
	assert_int_equal(vn_agent_write_file(f->a, path, "y\n", 2, -1, VN_AGENT_WRITE_APPEND, T_MS, &err), 0);
	assert_int_equal(vn_agent_read_file(f->a, path, T_MS, &data2, &len, &err), 0);
	assert_string_equal(data2, "x\ny\n");
	unlink(path);
	rmdir(dir);
}

/* vnuma cp both ways through the real agent (its "guest" is this host): contents, modes, trees, errors. */
static void write_bytes(const char *path, size_t len, unsigned seed, mode_t mode)
{
	char *buf = malloc(len ? len : 1);
	struct vn_error err = {0};

	assert_non_null(buf);
	for (size_t i = 0; i < len; i++)
		buf[i] = (char)((i * 2654435761u + seed) >> 13);
	assert_int_equal(vn_file_write_atomic(path, buf, len, mode, &err), 0);
	free(buf);
}

static void assert_same_file(const char *a, const char *b)
{
	char *da = NULL, *db = NULL;
	size_t la = 0, lb = 0;
	struct vn_error err = {0};
	struct stat sa, sb;

	assert_int_equal(vn_file_read(a, 64u << 20, &da, &la, &err), 0);
	assert_int_equal(vn_file_read(b, 64u << 20, &db, &lb, &err), 0);
	assert_int_equal(la, lb);
	assert_memory_equal(da, db, la);
	assert_int_equal(stat(a, &sa), 0);
	assert_int_equal(stat(b, &sb), 0);
	assert_int_equal(sa.st_mode & 07777, sb.st_mode & 07777);
	free(da);
	free(db);
}

static void test_copy_roundtrip(void **state)
{
	struct fixture *f = *state;
	struct vn_error err = {0};
	struct vn_copy_opts o = {.recursive = true};
	struct vn_copy_stats st;
	char root[] = "/tmp/vnuma-test-cp.XXXXXX", p[4096], q[4096];

	assert_non_null(mkdtemp(root));
	snprintf(p, sizeof(p), "%s/src", root);
	assert_int_equal(mkdir(p, 0750), 0);
	snprintf(p, sizeof(p), "%s/src/big", root);
	write_bytes(p, 3 * VN_AGENT_CHUNK + 12345, 1, 0755);
	snprintf(p, sizeof(p), "%s/src/empty", root);
	write_bytes(p, 0, 2, 0640);
	snprintf(p, sizeof(p), "%s/src/sub", root);
	assert_int_equal(mkdir(p, 0700), 0);
	snprintf(p, sizeof(p), "%s/src/sub/exact", root);
	write_bytes(p, VN_AGENT_CHUNK, 3, 0600);
	snprintf(p, sizeof(p), "%s/src/link", root);
	assert_int_equal(symlink("/etc/passwd", p), 0);
	snprintf(p, sizeof(p), "%s/guest", root);
	assert_int_equal(mkdir(p, 0755), 0);
	snprintf(p, sizeof(p), "%s/back", root);
	assert_int_equal(mkdir(p, 0755), 0);

	/* Into the "guest" directory, then out again beside it. */
	snprintf(p, sizeof(p), "%s/src", root);
	snprintf(q, sizeof(q), "%s/guest", root);
	const char *in[] = {p};
	assert_int_equal(vn_copy_in(f->a, in, 1, q, &o, &st, &err), 0);
	assert_int_equal(st.files, 3);
	assert_int_equal(st.dirs, 2);
	assert_int_equal(st.skipped, 1);
	assert_int_equal(st.bytes, 4 * VN_AGENT_CHUNK + 12345);
	snprintf(p, sizeof(p), "%s/guest/src", root);
	snprintf(q, sizeof(q), "%s/back", root);
	assert_int_equal(vn_copy_out(f->a, in, 1, q, &o, &st, &err), 0);
	assert_int_equal(st.files, 3);
	const char *names[] = {"big", "empty", "sub/exact"};
	for (size_t i = 0; i < 3; i++) {
		snprintf(p, sizeof(p), "%s/src/%s", root, names[i]);
		snprintf(q, sizeof(q), "%s/back/src/%s", root, names[i]);
		assert_same_file(p, q);
		snprintf(q, sizeof(q), "%s/guest/src/%s", root, names[i]);
		assert_same_file(p, q);
	}
	struct stat s1;
	snprintf(q, sizeof(q), "%s/back/src", root);
	assert_int_equal(stat(q, &s1), 0);
	assert_int_equal(s1.st_mode & 07777, 0750);
	snprintf(q, sizeof(q), "%s/back/src/sub", root);
	assert_int_equal(stat(q, &s1), 0);
	assert_int_equal(s1.st_mode & 07777, 0700);

	/* One file out to a new host name: util/file.h's temporary file, renamed. */
	snprintf(p, sizeof(p), "%s/guest/src/big", root);
	snprintf(q, sizeof(q), "%s/back/big-copy", root);
	assert_int_equal(vn_copy_out(f->a, in, 1, q, &o, &st, &err), 0);
	assert_same_file(p, q);

	/* One file to a new name; an existing tree is not merged into; nothing temporary is left. */
	snprintf(p, sizeof(p), "%s/src/big", root);
	snprintf(q, sizeof(q), "%s/guest/renamed", root);
	assert_int_equal(vn_copy_in(f->a, in, 1, q, &o, &st, &err), 0);
	assert_same_file(p, q);
	snprintf(p, sizeof(p), "%s/src", root);
	snprintf(q, sizeof(q), "%s/guest", root);
	vn_error_clear(&err);
	assert_int_equal(vn_copy_in(f->a, in, 1, q, &o, &st, &err), -EINVAL);
	assert_int_equal(err.kind, VN_ERR_INPUT);
	assert_null(strstr(err.msg, "vnuma-tmp"));

	/* A missing source, either way, is bad input naming it; a relative guest path too. */
	snprintf(p, sizeof(p), "%s/nosuch", root);
	vn_error_clear(&err);
	assert_int_equal(vn_copy_in(f->a, in, 1, q, &o, &st, &err), -EINVAL);
	assert_int_equal(err.kind, VN_ERR_INPUT);
	assert_non_null(strstr(err.msg, "nosuch"));
	vn_error_clear(&err);
	assert_int_equal(vn_copy_out(f->a, in, 1, q, &o, &st, &err), -EINVAL);
	assert_int_equal(err.kind, VN_ERR_INPUT);
	assert_non_null(strstr(err.msg, "nosuch"));
	const char *rel[] = {"relative"};
	assert_int_equal(vn_copy_out(f->a, rel, 1, q, &o, &st, &err), -EINVAL);
	/* A directory without -r. */
	o.recursive = false;
	snprintf(p, sizeof(p), "%s/src", root);
	vn_error_clear(&err);
	assert_int_equal(vn_copy_in(f->a, in, 1, "/tmp", &o, &st, &err), -EINVAL);
	assert_non_null(strstr(err.msg, "-r"));

	char cmd[4200];
	snprintf(cmd, sizeof(cmd), "test -z \"$(find %s -name '*vnuma-tmp*')\"", root);
	assert_int_equal(system(cmd), 0);
	vn_rm_rf(root);
}

static unsigned mode_of(const char *root, const char *rel)
{
	char p[4200];
	struct stat st;

	snprintf(p, sizeof(p), "%s/%s", root, rel);
	assert_int_equal(lstat(p, &st), 0);
	return st.st_mode & 07777;
}

/*
 * A guest tree of world-writable modes lands through the umask, as cp and
 * tar do for a non-owner; --preserve-mode keeps them, the sticky bit too.
 */
static void test_copy_out_modes(void **state)
{
	struct fixture *f = *state;
	struct vn_error err = {0};
	struct vn_copy_opts o = {.recursive = true};
	struct vn_copy_stats st;
	char root[] = "/tmp/vnuma-test-cp-modes.XXXXXX", p[4096], q[4096];
	mode_t old = umask(022);

	assert_non_null(mkdtemp(root));
	snprintf(p, sizeof(p), "%s/g", root);
	assert_int_equal(mkdir(p, 0755), 0);
	snprintf(p, sizeof(p), "%s/g/shared", root);
	write_bytes(p, 10, 4, 0666);
	assert_int_equal(chmod(p, 0666), 0);
	snprintf(p, sizeof(p), "%s/g/tool", root);
	write_bytes(p, 10, 5, 0777);
	assert_int_equal(chmod(p, 0777), 0);
	snprintf(p, sizeof(p), "%s/g/spool", root);
	assert_int_equal(mkdir(p, 0700), 0);
	assert_int_equal(chmod(p, 01777), 0);
	snprintf(p, sizeof(p), "%s/g", root);
	assert_int_equal(chmod(p, 0777), 0);

	const char *in[] = {p};
	snprintf(q, sizeof(q), "%s/default", root);
	assert_int_equal(vn_copy_out(f->a, in, 1, q, &o, &st, &err), 0);
	assert_int_equal(mode_of(root, "default"), 0755);
	assert_int_equal(mode_of(root, "default/shared"), 0644);
	assert_int_equal(mode_of(root, "default/tool"), 0755);
	assert_int_equal(mode_of(root, "default/spool"), 01755);

	o.preserve_mode = true;
	snprintf(q, sizeof(q), "%s/kept", root);
	assert_int_equal(vn_copy_out(f->a, in, 1, q, &o, &st, &err), 0);
	assert_int_equal(mode_of(root, "kept"), 0777);
	assert_int_equal(mode_of(root, "kept/shared"), 0666);
	assert_int_equal(mode_of(root, "kept/tool"), 0777);
	assert_int_equal(mode_of(root, "kept/spool"), 01777);

	/* One file, not a tree: the same policy. */
	o.preserve_mode = false;
	snprintf(p, sizeof(p), "%s/g/tool", root);
	snprintf(q, sizeof(q), "%s/one", root);
	assert_int_equal(vn_copy_out(f->a, in, 1, q, &o, &st, &err), 0);
	assert_int_equal(mode_of(root, "one"), 0755);
	umask(old);
	vn_rm_rf(root);
}

static void test_malformed_and_unknown(void **state)
{
	struct fixture *f = *state;
	struct vn_error err = {0};
	struct json_object *m = NULL, *v, *req;
	const char bad[] = "{\"id\": 5, \"op\": \n";

	assert_int_equal(write(f->raw_fd, bad, sizeof(bad) - 1), (ssize_t)sizeof(bad) - 1);
	assert_int_equal(vn_agent_recv(f->a, T_MS, &m, &err), 0);
	assert_true(json_object_object_get_ex(m, "ok", &v));
	assert_false(json_object_get_boolean(v));
	assert_true(json_object_object_get_ex(m, "error", &v));
	assert_non_null(strstr(json_object_get_string(v), "malformed"));
	json_object_put(m);

	req = json_object_new_object();
	json_object_object_add(req, "op", json_object_new_string("frobnicate"));
	assert_int_equal(vn_agent_call(f->a, req, T_MS, NULL, &err), -ENOSYS);
	assert_non_null(strstr(err.msg, "unknown op"));
	vn_error_clear(&err);
	/* Still serving. */
	assert_int_equal(vn_agent_hello(f->a, T_MS, NULL, &err), 0);
}

/* A long exec must not hold up other requests: replies interleave with its streams. */
static void test_interleave(void **state)
{
	struct fixture *f = *state;
	struct vn_error err = {0};
	struct json_object *req = json_object_new_object(), *argv = json_object_new_array(), *m;
	int64_t exec_id = vn_agent_next_id(f->a), hello_id = vn_agent_next_id(f->a);
	bool hello_seen = false;

	json_object_array_add(argv, json_object_new_string("sleep"));
	json_object_array_add(argv, json_object_new_string("0.5"));
	json_object_object_add(req, "id", json_object_new_int64(exec_id));
	json_object_object_add(req, "op", json_object_new_string("exec"));
	json_object_object_add(req, "argv", argv);
	assert_int_equal(vn_agent_send(f->a, req, T_MS, &err), 0);
	req = json_object_new_object();
	json_object_object_add(req, "id", json_object_new_int64(hello_id));
	json_object_object_add(req, "op", json_object_new_string("hello"));
	assert_int_equal(vn_agent_send(f->a, req, T_MS, &err), 0);
	for (;;) {
		struct json_object *id;

		assert_int_equal(vn_agent_recv(f->a, T_MS, &m, &err), 0);
		assert_true(json_object_object_get_ex(m, "id", &id));
		if (json_object_get_int64(id) == hello_id) {
			hello_seen = true;
		} else {
			assert_int_equal(json_object_get_int64(id), exec_id);
			assert_true(hello_seen);
			json_object_put(m);
			break;
		}
		json_object_put(m);
	}
}

static void test_hello_ignores_stale(void **state)
{
	struct fixture *f = *state;
	struct vn_error err = {0};
	/* A reply for an old request must not be mistaken for ours. */
	const char stale[] = "{\"id\":1,\"op\":\"hello\"}\n";

	assert_int_equal(write(f->raw_fd, stale, sizeof(stale) - 1), (ssize_t)sizeof(stale) - 1);
	assert_int_equal(vn_agent_hello(f->a, T_MS, NULL, &err), 0);
	assert_int_equal(vn_agent_hello(f->a, T_MS, NULL, &err), 0);
}

#if defined(__x86_64__)
#define NATIVE_AUDIT_ARCH AUDIT_ARCH_X86_64
#elif defined(__aarch64__)
#define NATIVE_AUDIT_ARCH AUDIT_ARCH_AARCH64
#endif

/*
 * A world as early in a guest's boot: getrandom(GRND_NONBLOCK) says EAGAIN
 * (the CRNG is not ready) and a read of /dev/urandom waits, here for ever
 * (the slave of a pty nobody writes to, a character device as urandom is;
 * in a TCG guest about a second, until the CRNG is ready). 0, or -errno
 * where this host cannot build it (no mount namespace).
 */
static int no_entropy_yet(const char *tty)
{
#ifdef NATIVE_AUDIT_ARCH
	struct sock_filter insns[] = {
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, arch)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, NATIVE_AUDIT_ARCH, 1, 0),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_getrandom, 0, 1),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | (EAGAIN & SECCOMP_RET_DATA)),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
	};
	struct sock_fprog prog = {.len = VN_ARRAY_SIZE(insns), .filter = insns};

	if (unshare(CLONE_NEWNS) < 0 || mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) < 0 ||
	    mount(tty, "/dev/urandom", NULL, MS_BIND, NULL) < 0 || mount(tty, "/dev/random", NULL, MS_BIND, NULL) < 0)
		return -errno;
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0 || prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog) < 0)
		return -errno;
	return 0;
#else
	(void)tty;
	return -ENOSYS;
#endif
}

/*
 * The agent must answer before the guest's CRNG is ready: json-c's default
 * string hash seeds itself from /dev/urandom, which held every boot's first
 * hello for a second under TCG.
 */
static void test_hello_before_entropy(void **state)
{
	struct vn_agent *a = NULL;
	struct vn_error err = {0};
	int sv[2], status, ready[2];
	char rc = 0;

	(void)state;
	int ptm = posix_openpt(O_RDWR | O_NOCTTY | O_CLOEXEC);
	assert_true(ptm >= 0);
	assert_int_equal(grantpt(ptm), 0);
	assert_int_equal(unlockpt(ptm), 0);
	_cleanup_free_ char *tty = vn_xstrdup(ptsname(ptm));
	assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv), 0);
	assert_int_equal(pipe2(ready, O_CLOEXEC), 0);
	pid_t pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		char r = (char)-no_entropy_yet(tty);

		if (write(ready[1], &r, 1) != 1 || r)
			_exit(125);
		if (dup2(sv[1], 3) < 0)
			_exit(126);
		execl(agent_path(), "vnuma-agent", "--fd", "3", (char *)NULL);
		_exit(127);
	}
	close(sv[1]);
	close(ready[1]);
	if (read(ready[0], &rc, 1) != 1)
		rc = EIO;
	close(ready[0]);
	if (rc) {
		close(sv[0]);
		close(ptm);
		waitpid(pid, &status, 0);
		print_message("cannot make a world without entropy here: %s\n", strerror(rc));
		skip();
	}
	assert_int_equal(vn_agent_from_fd(sv[0], &a, &err), 0);
	int hello = vn_agent_hello(a, 5000, NULL, &err);
	vn_agent_close(a);
	kill(pid, SIGKILL);
	waitpid(pid, &status, 0);
	close(ptm);
	assert_int_equal(hello, 0);
}

/* Reads from fd until what came has want in it; false after 5 s. */
static bool read_until(int fd, const char *want)
{
	char buf[8192];
	size_t len = 0;
	int64_t until = vn_now_ms() + 5000;

	while (vn_now_ms() < until) {
		struct pollfd p = {.fd = fd, .events = POLLIN};
		ssize_t n;

		if (poll(&p, 1, 100) <= 0)
			continue;
		n = read(fd, buf + len, sizeof(buf) - 1 - len);
		if (n <= 0)
			return false;
		len += (size_t)n;
		buf[len] = '\0';
		if (strstr(buf, want))
			return true;
		if (len > sizeof(buf) / 2)
			len = 0;
	}
	return false;
}

static bool read_reply_id(int fd, long id)
{
	char want[48];

	snprintf(want, sizeof(want), "\"id\":%ld,", id);
	return read_until(fd, want);
}

/* A small file's first line (a /proc file, a pid file), or "" when it cannot be read. */
static void first_line(const char *path, char *out, size_t size)
{
	FILE *fp = fopen(path, "r");

	out[0] = '\0';
	if (fp && !fgets(out, (int)size, fp))
		out[0] = '\0';
	if (fp)
		fclose(fp);
}

/* The OOM killer's adjustment and the nice (stat's field 19) of a process, "-1000 -10". */
static void favour_of(pid_t pid, char *out, size_t size)
{
	char path[64], adj[32], stat[1024];
	const char *p;
	int nice = 99;

	snprintf(path, sizeof(path), "/proc/%d/oom_score_adj", (int)pid);
	first_line(path, adj, sizeof(adj));
	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	first_line(path, stat, sizeof(stat));
	p = strrchr(stat, ')');
	snprintf(out, size, "?");
	if (!p || !adj[0] ||
	    sscanf(p + 2, "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %*u %*u %*d %*d %*d %d", &nice) != 1)
		return;
	snprintf(out, size, "%d %d", atoi(adj), nice);
}

static int cmp_i64(const void *a, const void *b)
{
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;

	return x < y ? -1 : x > y;
}

/*
 * A host that connects after another left is answered at once, not at the
 * agent's next look at a port with no host (RETRY_MS, 100 ms: most of an idle
 * vnuma exec). The agent serves a pty's slave as it serves its virtio port
 * (--device): ^D at a line's start reads as EOF, the host leaving, and data
 * arriving signals SIGIO as virtio_console does for a host connecting. As in
 * a guest, it renices and locks itself for the test's second.
 */
static void test_device_host_returns(void **state)
{
	enum { CYCLES = 15 };
	int64_t lat[CYCLES];
	struct termios t;
	int status;

	(void)state;
	int ptm = posix_openpt(O_RDWR | O_NOCTTY | O_CLOEXEC);
	assert_true(ptm >= 0);
	assert_int_equal(grantpt(ptm), 0);
	assert_int_equal(unlockpt(ptm), 0);
	assert_int_equal(tcgetattr(ptm, &t), 0);
	t.c_lflag = (t.c_lflag | ICANON) & ~(tcflag_t)(ECHO | ECHONL);
	t.c_oflag &= ~(tcflag_t)OPOST;
	assert_int_equal(tcsetattr(ptm, TCSANOW, &t), 0);
	_cleanup_free_ char *tty = vn_xstrdup(ptsname(ptm));
	pid_t pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		int null = open("/dev/null", O_WRONLY);

		if (null < 0 || dup2(null, 2) < 0)
			_exit(126);
		execl(agent_path(), "vnuma-agent", "--device", tty, (char *)NULL);
		_exit(127);
	}
	/* The first host: answered once the agent is up. */
	char line[96];
	int len = snprintf(line, sizeof(line), "{\"id\":1000,\"op\":\"hello\"}\n");
	assert_int_equal(write(ptm, line, (size_t)len), len);
	bool ok = read_reply_id(ptm, 1000);
	for (int i = 0; ok && i < CYCLES; i++) {
		ok = write(ptm, "\x04", 1) == 1;
		/* Time for the agent to see the host leave, so the hello comes to an agent waiting for one. */
		usleep(20000);
		len = snprintf(line, sizeof(line), "{\"id\":%d,\"op\":\"hello\"}\n", i);
		int64_t t0 = vn_now_ms();
		ok = ok && write(ptm, line, (size_t)len) == len && read_reply_id(ptm, i);
		lat[i] = vn_now_ms() - t0;
	}
	/* Favoured as in a guest; a command it starts is not (it writes its pid, then waits to be looked at). */
	char agent_favour[32], cmd_favour[32], pidfile[] = "/tmp/vn-test-agent-XXXXXX";
	int pfd = mkstemp(pidfile);
	assert_true(pfd >= 0);
	close(pfd);
	favour_of(pid, agent_favour, sizeof(agent_favour));
	len = snprintf(line, sizeof(line),
		       "{\"id\":77,\"op\":\"exec\",\"argv\":[\"sh\",\"-c\",\"echo $$ >%s; sleep 1\"]}\n", pidfile);
	ok = ok && write(ptm, line, (size_t)len) == len;
	char cmd_pid[32] = "";
	for (int i = 0; ok && i < 200 && atoi(cmd_pid) <= 0; i++) {
		usleep(10000);
		first_line(pidfile, cmd_pid, sizeof(cmd_pid));
	}
	unlink(pidfile);
	snprintf(cmd_favour, sizeof(cmd_favour), "?");
	if (atoi(cmd_pid) > 0)
		favour_of(atoi(cmd_pid), cmd_favour, sizeof(cmd_favour));
	ok = ok && read_until(ptm, "exit_code");
	kill(pid, SIGTERM);
	waitpid(pid, &status, 0);
	close(ptm);
	assert_true(ok);
	/* The OOM killer's part only where the host lets root lower it (some sandboxes answer EIO). */
	if (getuid() == 0)
		assert_non_null(strstr(agent_favour, " -10"));
	assert_string_equal(cmd_favour, "0 0");
	qsort(lat, CYCLES, sizeof(lat[0]), cmp_i64);
	print_message("hello after the host came back: median %" PRId64 " ms, max %" PRId64 " ms\n", lat[CYCLES / 2],
		      lat[CYCLES - 1]);
	/* Before SIGIO every one waited for the 100 ms retry (80 ms after the 20 ms sleep); a median keeps a busy host's outliers out. */
	assert_true(lat[CYCLES / 2] < 40);
}

static bool process_gone(pid_t pid)
{
	char path[64], buf[512];
	FILE *fp;
	char *rp;

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	fp = fopen(path, "r");
	if (!fp)
		return true;
	rp = fgets(buf, sizeof(buf), fp);
	fclose(fp);
	/* Reaped by whoever inherited it, or a zombie waiting to be: either way, dead. */
	return !rp || (strrchr(buf, ')') && strrchr(buf, ')')[2] == 'Z');
}

/* When the host goes away, nothing the agent started may be left running. */
static void test_disconnect_kills_children(void **state)
{
	struct fixture *f = *state;
	struct vn_error err = {0};
	struct json_object *req = json_object_new_object(), *argv = json_object_new_array(), *m, *v;
	int64_t id = vn_agent_next_id(f->a);
	_cleanup_free_ char *data = NULL;
	size_t len;
	long pid;
	int status;
	bool gone = false;

	json_object_array_add(argv, json_object_new_string("/bin/sh"));
	json_object_array_add(argv, json_object_new_string("-c"));
	json_object_array_add(argv, json_object_new_string("echo $$; exec sleep 30"));
	json_object_object_add(req, "id", json_object_new_int64(id));
	json_object_object_add(req, "op", json_object_new_string("exec"));
	json_object_object_add(req, "argv", argv);
	assert_int_equal(vn_agent_send(f->a, req, T_MS, &err), 0);
	assert_int_equal(vn_agent_recv(f->a, T_MS, &m, &err), 0);
	assert_true(json_object_object_get_ex(m, "data", &v));
	data = calloc(1, 64);
	len = (size_t)vn_base64_decode(json_object_get_string(v), (size_t)json_object_get_string_len(v), data);
	json_object_put(m);
	assert_true(len > 0);
	pid = strtol(data, NULL, 10);
	assert_true(pid > 1);
	assert_false(process_gone((pid_t)pid));

	vn_agent_close(f->a);
	f->a = NULL;
	assert_int_equal(waitpid(f->pid, &status, 0), f->pid);
	assert_true(WIFEXITED(status));
	f->pid = -1;
	for (int i = 0; i < 200 && !gone; i++) {
		gone = process_gone((pid_t)pid);
		if (!gone)
			usleep(10000);
	}
	assert_true(gone);
}

/* A command's pid from the pid file it writes, or 0 after 2 s. */
static pid_t wait_pidfile(const char *path)
{
	char buf[32] = "";

	for (int i = 0; i < 200 && atoi(buf) <= 0; i++) {
		usleep(10000);
		first_line(path, buf, sizeof(buf));
	}
	return (pid_t)atoi(buf);
}

/*
 * Two channels, two hosts at once (issue 46): one host's long exec does not
 * hold the other's hello, and the first host leaving ends its own commands
 * only; the second's still runs and it is still answered.
 */
static void test_channels_independent(void **state)
{
	int a[2], b[2], status;
	char line[256], pa[] = "/tmp/vn-test-agent-a-XXXXXX", pb[] = "/tmp/vn-test-agent-b-XXXXXX";

	(void)state;
	close(mkstemp(pa));
	close(mkstemp(pb));
	assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, a), 0);
	assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, b), 0);
	pid_t pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		if (dup2(a[1], 3) < 0 || dup2(b[1], 4) < 0)
			_exit(126);
		execl(agent_path(), "vnuma-agent", "--fd", "3", "--fd", "4", (char *)NULL);
		_exit(127);
	}
	close(a[1]);
	close(b[1]);
	int len = snprintf(line, sizeof(line),
			   "{\"id\":1,\"op\":\"exec\",\"argv\":[\"sh\",\"-c\",\"echo $$ >%s; exec sleep 30\"]}\n", pa);
	assert_int_equal(write(a[0], line, (size_t)len), len);
	pid_t sleeper_a = wait_pidfile(pa);
	len = snprintf(line, sizeof(line), "{\"id\":2,\"op\":\"hello\"}\n");
	int64_t t0 = vn_now_ms();
	bool hello_b = write(b[0], line, (size_t)len) == len && read_reply_id(b[0], 2);
	int64_t hello_ms = vn_now_ms() - t0;
	len = snprintf(line, sizeof(line),
		       "{\"id\":3,\"op\":\"exec\",\"argv\":[\"sh\",\"-c\",\"echo $$ >%s; exec sleep 30\"]}\n", pb);
	assert_int_equal(write(b[0], line, (size_t)len), len);
	pid_t sleeper_b = wait_pidfile(pb);
	unlink(pa);
	unlink(pb);
	/* The first host goes: its command with it, the second's stays. */
	close(a[0]);
	bool gone_a = false;
	for (int i = 0; i < 200 && sleeper_a > 0 && !gone_a; i++) {
		gone_a = process_gone(sleeper_a);
		if (!gone_a)
			usleep(10000);
	}
	bool alive_b = sleeper_b > 0 && !process_gone(sleeper_b);
	len = snprintf(line, sizeof(line), "{\"id\":4,\"op\":\"hello\"}\n");
	bool hello_b2 = write(b[0], line, (size_t)len) == len && read_reply_id(b[0], 4);
	close(b[0]);
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(sleeper_a > 0);
	assert_true(hello_b);
	assert_true(hello_ms < 2000);
	assert_true(gone_a);
	assert_true(alive_b);
	assert_true(hello_b2);
	assert_true(WIFEXITED(status));
	assert_int_equal(WEXITSTATUS(status), 0);
}

static void test_poweroff_fd_mode(void **state)
{
	struct fixture *f = *state;
	struct vn_error err = {0};

	/* Under --fd it only replies and exits; teardown checks the clean exit. */
	assert_int_equal(vn_agent_poweroff(f->a, T_MS, &err), 0);
}

static void test_timeout_waiting(void **state)
{
	struct vn_error err = {0};
	struct vn_agent *a = NULL;
	int sv[2];

	/* Nobody answers on the other end. */
	assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv), 0);
	assert_int_equal(vn_agent_from_fd(sv[0], &a, &err), 0);
	assert_int_equal(vn_agent_hello(a, 300, NULL, &err), -ETIMEDOUT);
	assert_int_equal(err.kind, VN_ERR_INFRA);
	assert_non_null(strstr(err.msg, "hello"));
	vn_agent_close(a);
	close(sv[1]);
}

static void test_connect_timeout(void **state)
{
	struct vn_error err = {0};
	struct vn_agent *a = NULL;

	assert_int_equal(vn_agent_connect("/nonexistent/vnuma-agent.sock", 200, &a, &err), -ETIMEDOUT);
	assert_null(a);
	assert_non_null(strstr(err.msg, "/nonexistent/vnuma-agent.sock"));
}

static int listen_at(const char *path)
{
	struct sockaddr_un sa = {.sun_family = AF_UNIX};
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);

	snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", path);
	assert_true(fd >= 0);
	assert_int_equal(bind(fd, (struct sockaddr *)&sa, sizeof(sa)), 0);
	assert_int_equal(listen(fd, 4), 0);
	return fd;
}

/* Whether a client connected to the listener (and accepts it). */
static bool accepted(int lfd)
{
	int c = accept4(lfd, NULL, NULL, SOCK_CLOEXEC);

	if (c < 0)
		return false;
	close(c);
	return true;
}

static int lock_held(const char *dir, const char *file)
{
	_cleanup_free_ char *p = vn_xasprintf("%s/%s", dir, file);
	int fd = open(p, O_RDWR | O_CREAT | O_CLOEXEC, 0600);

	assert_true(fd >= 0);
	assert_int_equal(flock(fd, LOCK_EX | LOCK_NB), 0);
	return fd;
}

/*
 * A guest's channel is the first one no other client holds (issue 46: an
 * exec beside a run waited out its hello behind the run's channel); when
 * all are held, the error says so at once and names the holders.
 */
static void test_channel_choice(void **state)
{
	static const char *const socks[] = {"agent.sock", "agent-1.sock", "agent-2.sock", "agent-3.sock"};
	char dir[] = "/tmp/vn-test-chan-XXXXXX";
	int lfd[4], held[4];
	struct vn_agent *a[3] = {NULL};
	struct vn_error err = {0};

	(void)state;
	assert_non_null(mkdtemp(dir));
	for (int i = 0; i < 4; i++) {
		_cleanup_free_ char *p = vn_xasprintf("%s/%s", dir, socks[i]);
		lfd[i] = listen_at(p);
	}
	_cleanup_free_ char *sock0 = vn_xasprintf("%s/agent.sock", dir);
	/* Channel 0 held by another client (a run): the next one. */
	held[0] = lock_held(dir, "agent.sock.lock");
	assert_int_equal(vn_agent_connect(sock0, 1000, &a[0], &err), 0);
	assert_false(accepted(lfd[0]));
	assert_true(accepted(lfd[1]));
	/* Held while connected: the next client passes it too. */
	assert_int_equal(vn_agent_connect(sock0, 1000, &a[1], &err), 0);
	assert_true(accepted(lfd[2]));
	held[3] = lock_held(dir, "agent-3.sock.lock");
	/* All held: at once, not after the timeout, naming the holder that says who it is (this test). */
	int64_t t0 = vn_now_ms();
	assert_int_equal(vn_agent_connect(sock0, 10000, &a[2], &err), -EBUSY);
	assert_true(vn_now_ms() - t0 < 1000);
	char me[32];
	snprintf(me, sizeof(me), "pid %d (", (int)getpid());
	assert_non_null(strstr(err.msg, me));
	assert_non_null(strstr(err.msg, "no free agent channel of guest"));
	assert_non_null(strstr(err.msg, "(all 4 in use, by "));
	/* A client that leaves frees its channel. */
	vn_agent_close(a[0]);
	assert_int_equal(vn_agent_connect(sock0, 1000, &a[2], &err), 0);
	assert_true(accepted(lfd[1]));
	vn_agent_close(a[1]);
	vn_agent_close(a[2]);
	/* A guest booted with channel 0 only: its socket is never skipped for missing ones. */
	for (int i = 1; i < 4; i++) {
		_cleanup_free_ char *p = vn_xasprintf("%s/%s", dir, socks[i]);
		unlink(p);
	}
	err = (struct vn_error){0};
	assert_int_equal(vn_agent_connect(sock0, 10000, &a[0], &err), -EBUSY);
	assert_non_null(strstr(err.msg, "(all 1 in use, by an unknown process)"));
	close(held[0]);
	assert_int_equal(vn_agent_connect(sock0, 1000, &a[0], &err), 0);
	assert_true(accepted(lfd[0]));
	vn_agent_close(a[0]);
	close(held[3]);
	for (int i = 0; i < 4; i++) {
		_cleanup_free_ char *p = vn_xasprintf("%s/%s", dir, socks[i]);
		_cleanup_free_ char *l = vn_xasprintf("%s.lock", p);
		close(lfd[i]);
		unlink(p);
		unlink(l);
	}
	assert_int_equal(rmdir(dir), 0);
}

static void test_base64(void **state)
{
	const char *cases[][2] = {{"", ""}, {"f", "Zg=="}, {"fo", "Zm8="}, {"foo", "Zm9v"}, {"foob", "Zm9vYg=="}};
	char enc[32], dec[32];

	for (size_t i = 0; i < VN_ARRAY_SIZE(cases); i++) {
		vn_base64_encode(cases[i][0], strlen(cases[i][0]), enc);
		assert_string_equal(enc, cases[i][1]);
		assert_int_equal(vn_base64_decode(enc, strlen(enc), dec), strlen(cases[i][0]));
		assert_memory_equal(dec, cases[i][0], strlen(cases[i][0]));
	}
	assert_int_equal(vn_base64_decode("Zg=", 3, dec), -1);
	assert_int_equal(vn_base64_decode("Z=g=", 4, dec), -1);
	assert_int_equal(vn_base64_decode("Zg==Zg==", 8, dec), -1);
	assert_int_equal(vn_base64_decode("Z!==", 4, dec), -1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_base64),
		cmocka_unit_test(test_timeout_waiting),
		cmocka_unit_test(test_connect_timeout),
		cmocka_unit_test_setup_teardown(test_hello, setup, teardown),
		cmocka_unit_test_setup_teardown(test_exec_echo, setup, teardown),
		cmocka_unit_test_setup_teardown(test_exec_stderr_exit_code, setup, teardown),
		cmocka_unit_test_setup_teardown(test_exec_env_cwd, setup, teardown),
		cmocka_unit_test_setup_teardown(test_exec_stdin, setup, teardown),
		cmocka_unit_test_setup_teardown(test_exec_stdin_throttled, setup, teardown),
		cmocka_unit_test_setup_teardown(test_exec_large_output, setup, teardown),
		cmocka_unit_test_setup_teardown(test_exec_timeout, setup, teardown),
		cmocka_unit_test_setup_teardown(test_exec_missing_program, setup, teardown),
		cmocka_unit_test_setup_teardown(test_exec_forward_signal, setup, teardown),
		cmocka_unit_test_setup_teardown(test_exec_forward_interrupt, setup, teardown),
		cmocka_unit_test_setup_teardown(test_read_proc, setup, teardown),
		cmocka_unit_test_setup_teardown(test_read_missing, setup, teardown),
		cmocka_unit_test_setup_teardown(test_read_files, setup, teardown),
		cmocka_unit_test_setup_teardown(test_write_read_roundtrip, setup, teardown),
		cmocka_unit_test_setup_teardown(test_copy_roundtrip, setup, teardown),
		cmocka_unit_test_setup_teardown(test_copy_out_modes, setup, teardown),
		cmocka_unit_test_setup_teardown(test_malformed_and_unknown, setup, teardown),
		cmocka_unit_test_setup_teardown(test_interleave, setup, teardown),
		cmocka_unit_test_setup_teardown(test_hello_ignores_stale, setup, teardown),
		cmocka_unit_test(test_hello_before_entropy),
		cmocka_unit_test(test_device_host_returns),
		cmocka_unit_test_setup_teardown(test_disconnect_kills_children, setup, teardown),
		cmocka_unit_test(test_channels_independent),
		cmocka_unit_test(test_channel_choice),
		cmocka_unit_test_setup_teardown(test_poweroff_fd_mode, setup, teardown),
	};

	/* A test that kills the agent early must not take the runner down with SIGPIPE. */
	signal(SIGPIPE, SIG_IGN);
	return cmocka_run_group_tests(tests, NULL, NULL);
}
