/*
 * The host side of the agent protocol against a hostile guest: a fake agent
 * on a socketpair answers hello and then misbehaves (endless bytes without a
 * newline, endless "{}" lines, replies of other ids, messages whose fields
 * have the wrong types). Every call must come back within its deadline with
 * an infrastructure error naming the guest, in bounded memory. Also the
 * decoder itself, message by message.
 */
#include "guest/agent-priv.h"

#include "util/cleanup.h"
#include "util/interrupt.h"

#include <errno.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

enum mode {
	M_BYTES,       /* endless bytes, no newline */
	M_EMPTY,       /* endless "{}" lines */
	M_FOREIGN,     /* endless well-formed replies to some other id */
	M_REPLY,       /* one reply (fmt with the request's id), then silence */
	M_STDOUT_8MIB, /* 8 MiB of stdout for the request's id, then exit code 0 */
};

struct fake {
	struct vn_agent *a;
	pid_t pid;
};

/* Reads one request line from fd and returns its "id". */
static long long read_request_id(int fd)
{
	char line[8192];
	size_t n = 0;

	while (n < sizeof(line) - 1) {
		ssize_t r = read(fd, line + n, 1);
		if (r <= 0)
			_exit(0);
		if (line[n++] == '\n')
			break;
	}
	line[n] = '\0';
	const char *p = strstr(line, "\"id\":");
	return p ? strtoll(p + 5, NULL, 10) : -1;
}

static void write_all(int fd, const char *s, size_t len)
{
	while (len) {
		ssize_t n = write(fd, s, len);
		if (n <= 0)
			_exit(0); /* the host hung up: done */
		s += n;
		len -= (size_t)n;
	}
}

static void writef(int fd, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void writef(int fd, const char *fmt, ...)
{
	char buf[65536];
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	write_all(fd, buf, (size_t)n);
}

static void fake_agent(int fd, enum mode mode, const char *fmt)
{
	static char chunk[65536];
	long long id = read_request_id(fd);

	writef(fd, "{\"id\":%lld,\"ok\":true,\"kernel\":\"fake\"}\n", id);
	switch (mode) {
	case M_BYTES:
		memset(chunk, 'x', sizeof(chunk));
		for (;;)
			write_all(fd, chunk, sizeof(chunk));
	case M_EMPTY:
		for (size_t i = 0; i + 3 <= sizeof(chunk); i += 3)
			memcpy(chunk + i, "{}\n", 3);
		for (;;)
			write_all(fd, chunk, sizeof(chunk) / 3 * 3);
	case M_FOREIGN: {
		const char line[] = "{\"id\":1,\"ok\":true}\n";
		size_t n = 0;
		for (; n + sizeof(line) - 1 <= sizeof(chunk); n += sizeof(line) - 1)
			memcpy(chunk + n, line, sizeof(line) - 1);
		for (;;)
			write_all(fd, chunk, n);
	}
	case M_REPLY: {
		char idstr[32];
		id = read_request_id(fd);
		snprintf(idstr, sizeof(idstr), "%lld", id);
		/* fmt's "%lld"s stand for the request's id. */
		for (const char *p = fmt; *p;) {
			if (!strncmp(p, "%lld", 4)) {
				write_all(fd, idstr, strlen(idstr));
				p += 4;
			} else {
				write_all(fd, p++, 1);
			}
		}
		write_all(fd, "\n", 1);
		for (;;)
			read_request_id(fd); /* until the host hangs up */
	}
	case M_STDOUT_8MIB: {
		/* 24 KiB of "AAAA" decodes to 18 KiB of zero bytes. */
		static char b64[24576 + 1];
		id = read_request_id(fd);
		memset(b64, 'A', sizeof(b64) - 1);
		for (int i = 0; i < (8 << 20) / 18432 + 1; i++)
			writef(fd, "{\"id\":%lld,\"stream\":\"stdout\",\"data\":\"%s\"}\n", id, b64);
		writef(fd, "{\"id\":%lld,\"ok\":true,\"exit_code\":0}\n", id);
		for (;;)
			read_request_id(fd);
	}
	}
	_exit(0);
}

static void fake_start(struct fake *f, enum mode mode, const char *fmt)
{
	struct vn_error err = {0};
	int sv[2];

	assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv), 0);
	f->pid = fork();
	assert_true(f->pid >= 0);
	if (f->pid == 0) {
		close(sv[0]);
		fake_agent(sv[1], mode, fmt);
	}
	close(sv[1]);
	assert_int_equal(vn_agent_from_fd(sv[0], &f->a, &err), 0);
	vn_agent_set_guest(f->a, "fake");
	assert_int_equal(vn_agent_hello(f->a, 5000, NULL, &err), 0);
}

static void fake_stop(struct fake *f)
{
	vn_agent_close(f->a);
	f->a = NULL;
	kill(f->pid, SIGKILL);
	waitpid(f->pid, NULL, 0);
}

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/*
 * An agent that answers hello with pid 100, takes an exec and never ends it;
 * probes are answered by pid `then` (0: not answered at all).
 */
static void fake_restarting_agent(int fd, int then)
{
	long long id = read_request_id(fd);

	writef(fd, "{\"id\":%lld,\"ok\":true,\"pid\":100}\n", id);
	read_request_id(fd); /* the exec: it never ends */
	for (;;) {
		id = read_request_id(fd);
		if (then)
			writef(fd, "{\"id\":%lld,\"ok\":true,\"pid\":%d}\n", id, then);
	}
}

static void restart_case(int then, int want_rc, const char *want_msg)
{
	struct vn_error err = {0};
	struct fake f;
	int sv[2];

	assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv), 0);
	f.pid = fork();
	assert_true(f.pid >= 0);
	if (f.pid == 0) {
		close(sv[0]);
		fake_restarting_agent(sv[1], then);
	}
	close(sv[1]);
	assert_int_equal(vn_agent_from_fd(sv[0], &f.a, &err), 0);
	vn_agent_set_guest(f.a, "fake");
	assert_int_equal(vn_agent_hello(f.a, 5000, NULL, &err), 0);
	vn_agent_set_liveness(f.a, 100, 1000);

	const char *argv[] = {"sleep", "1000", NULL};
	struct vn_agent_cmd c = {.argv = argv};
	struct vn_agent_event ev;
	int64_t id;
	assert_int_equal(vn_agent_exec_start(f.a, &c, 1000, &id, &err), 0);
	double t0 = now_s();
	assert_int_equal(vn_agent_exec_wait(f.a, 20000, &ev, &err), want_rc);
	assert_true(now_s() - t0 < 5); /* long before the 20 s the caller would wait */
	assert_int_equal(err.kind, VN_ERR_INFRA);
	if (!strstr(err.msg, want_msg))
		fail_msg("'%s' does not say '%s'", err.msg, want_msg);
	vn_error_clear(&err);
	fake_stop(&f);
}

/* A killed agent is respawned with a new pid: its commands are gone, and the host says so at once. */
static void test_exec_agent_restarted(void **state)
{
	restart_case(101, -ECONNRESET, "guest fake: the agent restarted (pid 100, now 101)");
}

/* An agent that stops answering while its commands run is lost after the liveness timeout. */
static void test_exec_agent_silent(void **state)
{
	restart_case(0, -ETIMEDOUT, "guest fake: the agent has not answered for 1 s while 1 command(s) ran");
}

/* Peak resident memory of this process so far, in MiB. */
static long peak_mib(void)
{
	struct rusage ru;

	getrusage(RUSAGE_SELF, &ru);
	return ru.ru_maxrss / 1024;
}

/*
 * Memory stayed bounded: the reader's buffer never outgrew its line cap plus
 * two reads, and the process peak grew by less than cap + slack. ASan keeps
 * freed memory in quarantine, so there only the buffer is checked.
 */
static void assert_bounded(const struct vn_agent *a, long peak0, size_t cap)
{
	assert_true(vn_agent_buffer_size(a) <= cap + 2 * 65536);
#ifndef __SANITIZE_ADDRESS__
	assert_true(peak_mib() - peak0 < (long)(cap >> 20) + 64);
#endif
}

static void assert_infra_naming_guest(const struct vn_error *err)
{
	assert_int_equal(err->kind, VN_ERR_INFRA);
	if (!strstr(err->msg, "guest fake"))
		fail_msg("error does not name the guest: %s", err->msg);
}

/* An exec of argv with no stdin, its stdout gathered in out (when not NULL). */
static struct vn_agent_exec_opts exec_opts(const char *const *argv, struct vn_strbuf *out, double timeout_s)
{
	return (struct vn_agent_exec_opts){
		.argv = argv,
		.stdin_fd = -1,
		.stdout_fd = -1,
		.stderr_fd = -1,
		.stdout_buf = out,
		.timeout_s = timeout_s,
	};
}

/* vn_agent_call (exec false) or vn_agent_exec with a 1 s timeout against a flooding guest. */
static void floods(enum mode mode, bool exec, int want_code)
{
	struct fake f;
	struct vn_error err = {0};
	_cleanup_strbuf_ struct vn_strbuf out = VN_STRBUF_INIT;
	const char *const argv[] = {"true", NULL};
	struct vn_agent_exec_opts o = exec_opts(argv, &out, 1);
	long peak0 = peak_mib();
	int status = -1, rc;
	double t0;

	fake_start(&f, mode, NULL);
	t0 = now_s();
	if (exec) {
		rc = vn_agent_exec(f.a, &o, &status, &err);
	} else {
		struct json_object *req = json_object_new_object();

		json_object_object_add(req, "op", json_object_new_string("poweroff"));
		rc = vn_agent_call(f.a, req, 1000, NULL, &err);
	}
	assert_int_equal(rc, want_code);
	assert_true(now_s() - t0 < 1.0 + 4); /* the 1 s timeout, and slack for ASan */
	assert_infra_naming_guest(&err);
	assert_bounded(f.a, peak0, VN_AGENT_LINE_MAX_SMALL);
	fake_stop(&f);
}

static void test_call_endless_bytes(void **state)
{
	floods(M_BYTES, false, -EMSGSIZE);
}

static void test_call_endless_empty_objects(void **state)
{
	floods(M_EMPTY, false, -EBADMSG);
}

static void test_call_endless_foreign_replies(void **state)
{
	floods(M_FOREIGN, false, -ETIMEDOUT);
}

static void test_exec_endless_bytes(void **state)
{
	floods(M_BYTES, true, -EMSGSIZE);
}

static void test_exec_endless_empty_objects(void **state)
{
	floods(M_EMPTY, true, -EBADMSG);
}

/* A read may carry 64 MiB of file, so its cap is higher, but still a cap. */
static void test_read_endless_bytes(void **state)
{
	struct fake f;
	struct vn_error err = {0};
	char *data = NULL;
	size_t len = 0;
	long peak0 = peak_mib();
	double t0;

	fake_start(&f, M_BYTES, NULL);
	t0 = now_s();
	int rc = vn_agent_read_file(f.a, "/proc/vmstat", 1000, &data, &len, &err);
	assert_true(rc == -EMSGSIZE || rc == -ETIMEDOUT);
	/*
	 * A bound that catches a hang, not a speed target: under ASan on a
	 * loaded 2-core CI machine, 64 MiB through the reader took over 1.5 s.
	 */
	assert_true(now_s() - t0 < 1.0 + 4);
	assert_infra_naming_guest(&err);
	assert_null(data);
	assert_bounded(f.a, peak0, VN_AGENT_LINE_MAX_READ);
	fake_stop(&f);
}

/* Output buffered from the guest is capped; the caller is told it was cut. */
static void test_exec_output_truncated(void **state)
{
	struct fake f;
	struct vn_error err = {0};
	_cleanup_strbuf_ struct vn_strbuf out = VN_STRBUF_INIT;
	const char *const argv[] = {"cat", "/dev/zero", NULL};
	bool truncated = false;
	struct vn_agent_exec_opts o = exec_opts(argv, &out, 10);
	int status = -1;

	o.buf_max = 1 << 20;
	o.truncated = &truncated;
	fake_start(&f, M_STDOUT_8MIB, NULL);
	assert_int_equal(vn_agent_exec(f.a, &o, &status, &err), 0);
	assert_int_equal(status, 0);
	assert_int_equal(out.len, 1 << 20);
	assert_true(truncated);
	fake_stop(&f);
}

/* Replies to an exec whose fields have the wrong types (the crashes of issue 9, defect 2, and more). */
static const char *const bad_exec_replies[] = {
	"{\"id\":%lld,\"stream\":null}",
	"{\"id\":%lld,\"stream\":\"stdout\",\"data\":null}",
	"{\"id\":%lld,\"stream\":\"stdout\"}",
	"{\"id\":%lld,\"stream\":\"stdout\",\"data\":\"!!!!\"}",
	"{\"id\":%lld,\"stream\":\"stdout\",\"data\":17}",
	"{\"id\":%lld,\"stream\":\"bogus\",\"data\":\"\"}",
	"{\"id\":%lld,\"stream\":[],\"data\":\"\"}",
	"{\"id\":%lld,\"ok\":false,\"error\":null}",
	"{\"id\":%lld,\"ok\":false}",
	"{\"id\":%lld,\"ok\":\"yes\",\"exit_code\":0}",
	"{\"id\":%lld}",
	"{\"id\":%lld,\"ok\":true}",
	"{\"id\":%lld,\"ok\":true,\"exit_code\":\"0\"}",
	"{\"id\":%lld,\"ok\":true,\"exit_code\":1e10}",
	"{\"id\":%lld,\"ok\":true,\"exit_code\":256}",
	"{\"id\":%lld,\"ok\":true,\"signal\":-3}",
	"{\"id\":%lld,\"ok\":true,\"signal\":null}",
	"{\"id\":%lld,\"ok\":false,\"error\":\"x\",\"errno\":\"2\"}",
	"{\"id\":%lld,\"ok\":false,\"error\":\"x\",\"errno\":-5}",
	"{\"id\":%lld,\"ok\":false,\"error\":\"x\",\"timed_out\":1}",
	"{\"id\":%lld,\"ok\":true,\"exit_code\":0} {\"id\":%lld}",
};

static void test_exec_malformed_replies(void **state)
{
	for (size_t i = 0; i < VN_ARRAY_SIZE(bad_exec_replies); i++) {
		struct fake f;
		struct vn_error err = {0};
		const char *const argv[] = {"true", NULL};
		struct vn_agent_exec_opts o = exec_opts(argv, NULL, 0.5);
		int status = -1;

		fake_start(&f, M_REPLY, bad_exec_replies[i]);
		int rc = vn_agent_exec(f.a, &o, &status, &err);
		if (rc != -EBADMSG || err.kind != VN_ERR_INFRA || !strstr(err.msg, "guest fake") ||
		    !strstr(err.msg, "malformed"))
			fail_msg("%s: rc %d kind %d: %s", bad_exec_replies[i], rc, err.kind, err.msg);
		fake_stop(&f);
	}
}

/* A fake that answers one exec, started through the asynchronous API; returns its id. */
static int64_t start_one(struct fake *f, const char *reply)
{
	struct vn_error err = {0};
	const char *const argv[] = {"true", NULL};
	struct vn_agent_cmd c = {.argv = argv};
	int64_t id;

	fake_start(f, M_REPLY, reply);
	assert_int_equal(vn_agent_exec_start(f->a, &c, 1000, &id, &err), 0);
	return id;
}

/* The same through the asynchronous API the scenario runner uses. */
static void test_exec_wait_malformed(void **state)
{
	for (size_t i = 0; i < VN_ARRAY_SIZE(bad_exec_replies); i++) {
		struct fake f;
		struct vn_error err = {0};
		struct vn_agent_event ev;

		start_one(&f, bad_exec_replies[i]);
		int rc = vn_agent_exec_wait(f.a, 2000, &ev, &err);
		if (rc != -EBADMSG || err.kind != VN_ERR_INFRA || !strstr(err.msg, "guest fake"))
			fail_msg("%s: rc %d kind %d: %s", bad_exec_replies[i], rc, err.kind, err.msg);
		fake_stop(&f);
	}
}

/* Well-formed replies still work, and a typed event carries what the guest said. */
static void test_exec_wait_events(void **state)
{
	static const struct {
		const char *fmt;
		bool started, timed_out;
		int status, guest_errno;
	} cases[] = {
		{"{\"id\":%lld,\"ok\":true,\"exit_code\":3}", true, false, 3, 0},
		{"{\"id\":%lld,\"ok\":true,\"signal\":9}", true, false, 137, 0},
		{"{\"id\":%lld,\"ok\":false,\"error\":\"t\",\"errno\":110,\"timed_out\":true,\"signal\":9}", true, true,
		 137, 110},
		{"{\"id\":%lld,\"ok\":false,\"error\":\"nosuch: No such file\",\"errno\":2}", false, false, -1, 2},
	};

	for (size_t i = 0; i < VN_ARRAY_SIZE(cases); i++) {
		struct fake f;
		struct vn_error err = {0};
		struct vn_agent_event ev;
		int64_t id = start_one(&f, cases[i].fmt);

		assert_int_equal(vn_agent_exec_wait(f.a, 2000, &ev, &err), 0);
		assert_int_equal(ev.kind, VN_AGENT_EV_EXIT);
		assert_int_equal(ev.id, id);
		assert_int_equal(ev.started, cases[i].started);
		assert_int_equal(ev.timed_out, cases[i].timed_out);
		assert_int_equal(ev.status, cases[i].status);
		assert_int_equal(ev.guest_errno, cases[i].guest_errno);
		/* Its id is forgotten: nothing more arrives for it. */
		assert_int_equal(vn_agent_exec_wait(f.a, 200, &ev, &err), -ETIMEDOUT);
		vn_error_clear(&err);
		fake_stop(&f);
	}
}

/* After a line that was too long the reader skips to the next newline and goes on. */
static void test_overlong_line_then_resync(void **state)
{
	struct fake f;
	struct vn_error err = {0};
	struct json_object *req = json_object_new_object(), *m = NULL, *v;
	char fmt[600];

	memset(fmt, 'x', 500);
	strcpy(fmt + 500, "\n{\"id\":%lld,\"ok\":true,\"exit_code\":7}");
	fake_start(&f, M_REPLY, fmt);
	vn_agent_set_line_max(f.a, 100);
	json_object_object_add(req, "op", json_object_new_string("poweroff"));
	assert_int_equal(vn_agent_call(f.a, req, 2000, NULL, &err), -EMSGSIZE);
	assert_infra_naming_guest(&err);
	vn_error_clear(&err);
	assert_int_equal(vn_agent_recv(f.a, 2000, &m, &err), 0);
	assert_true(json_object_object_get_ex(m, "exit_code", &v));
	assert_int_equal(json_object_get_int(v), 7);
	json_object_put(m);
	fake_stop(&f);
}

static struct json_object *poweroff_request(void)
{
	struct json_object *req = json_object_new_object();

	json_object_object_add(req, "op", json_object_new_string("poweroff"));
	return req;
}

/* A stand-in for the testbed's watch of the guest (console, QEMU): dead from fail_at on. */
struct fake_watch {
	double fail_at;
	int calls, frees;
};

static int fake_watch_check(void *data, struct vn_error *err)
{
	struct fake_watch *fw = data;

	fw->calls++;
	if (now_s() < fw->fail_at)
		return 0;
	return vn_infra_error(err, -EHOSTDOWN, "guest fake powered off (console: \"reboot: Power down\")");
}

static void fake_watch_free(void *data)
{
	((struct fake_watch *)data)->frees++;
}

/* A guest that died while its channel stays open and busy: the watch ends the wait within about a second. */
static void test_watch_ends_wait(void **state)
{
	struct fake_watch fw = {.fail_at = now_s() + 1.2};
	struct vn_error err = {0};
	struct fake f;

	fake_start(&f, M_FOREIGN, NULL);
	vn_agent_set_watch(f.a, fake_watch_check, &fw, fake_watch_free);
	assert_false(vn_agent_watch_fired(f.a));
	double t0 = now_s();
	assert_int_equal(vn_agent_call(f.a, poweroff_request(), 20000, NULL, &err), -EHOSTDOWN);
	/* Far below the call's 20 s; the slack is for a loaded host under ASan, where the flood itself is slow. */
	assert_true(now_s() - t0 < 1.2 + 4);
	assert_int_equal(err.kind, VN_ERR_INFRA);
	assert_non_null(strstr(err.msg, "guest fake powered off"));
	assert_true(vn_agent_watch_fired(f.a));
	/* Checked about once a second, not on every message of the flood. */
	assert_true(fw.calls <= 4);
	vn_error_clear(&err);
	/* From then on every wait says so at once. */
	t0 = now_s();
	assert_int_equal(vn_agent_call(f.a, poweroff_request(), 20000, NULL, &err), -EHOSTDOWN);
	assert_true(now_s() - t0 < 0.5);
	vn_error_clear(&err);
	fake_stop(&f);
	assert_int_equal(fw.frees, 1);
}

/* The channel closing (QEMU gone) asks the watch at once, whose cause beats "the connection was closed". */
static void test_watch_on_eof(void **state)
{
	struct fake_watch fw = {.fail_at = now_s() + 1000};
	struct vn_error err = {0};
	struct json_object *msg = NULL;
	struct fake f;

	fake_start(&f, M_REPLY, "{\"id\":%lld,\"ok\":true}");
	vn_agent_set_watch(f.a, fake_watch_check, &fw, fake_watch_free);
	assert_int_equal(vn_agent_recv(f.a, 200, &msg, &err), -ETIMEDOUT);
	vn_error_clear(&err);
	assert_int_equal(fw.calls, 1);
	fw.fail_at = 0;
	kill(f.pid, SIGKILL);
	waitpid(f.pid, NULL, 0);
	double t0 = now_s();
	assert_int_equal(vn_agent_recv(f.a, 5000, &msg, &err), -EHOSTDOWN);
	assert_true(now_s() - t0 < 0.5); /* not rate-limited: the next scheduled check was a second away */
	assert_non_null(strstr(err.msg, "powered off"));
	vn_error_clear(&err);
	/* Without a watch (or one that sees nothing) EOF is the connection's own error. */
	vn_agent_set_watch(f.a, NULL, NULL, NULL);
	assert_int_equal(fw.frees, 1);
	assert_int_equal(vn_agent_recv(f.a, 5000, &msg, &err), -ECONNRESET);
	vn_error_clear(&err);
	vn_agent_close(f.a);
}

/* Ctrl-C ends a wait at once, whatever the guest does. */
static void test_interrupt_ends_wait(void **state)
{
	struct fake f;
	struct vn_error err = {0};
	struct json_object *req = json_object_new_object();
	double t0;

	fake_start(&f, M_FOREIGN, NULL);
	json_object_object_add(req, "op", json_object_new_string("poweroff"));
	vn_interrupted = SIGINT;
	t0 = now_s();
	assert_int_equal(vn_agent_call(f.a, req, 10000, NULL, &err), -EINTR);
	vn_interrupted = 0;
	assert_true(now_s() - t0 < 0.5);
	assert_infra_naming_guest(&err);
	fake_stop(&f);
}

static void test_decode(void **state)
{
	struct vn_agent_msg m;
	struct vn_error err = {0};
	const char *s;

	s = "{\"id\":7,\"stream\":\"stderr\",\"data\":\"aGk=\"}";
	assert_int_equal(vn_agent_msg_decode(s, strlen(s), "guest g", &m, &err), 0);
	assert_true(m.has_id);
	assert_int_equal(m.id, 7);
	assert_int_equal(m.kind, VN_AGENT_MSG_STREAM);
	assert_int_equal(m.stream, VN_AGENT_EV_STDERR);
	assert_int_equal(m.len, 2);
	assert_string_equal(m.data, "hi");
	vn_agent_msg_clear(&m);

	/* The agent's answer to a line it could not parse. */
	s = "{\"id\":null,\"ok\":false,\"error\":\"malformed JSON: x\"}";
	assert_int_equal(vn_agent_msg_decode(s, strlen(s), "guest g", &m, &err), 0);
	assert_false(m.has_id);
	assert_int_equal(m.kind, VN_AGENT_MSG_FINAL);
	assert_false(m.ok);
	assert_string_equal(m.error, "malformed JSON: x");
	vn_agent_msg_clear(&m);

	/* A failed reply's error is the guest's text: no escape sequence, valid UTF-8, bounded. */
	s = "{\"id\":3,\"ok\":false,\"error\":\"exec: \\u001b]0;PWNED\\u0007\\u001b[2J\xff\xc0\xaf \\u00e9\"}";
	assert_int_equal(vn_agent_msg_decode(s, strlen(s), "guest g", &m, &err), 0);
	assert_string_equal(m.error, "exec: ?]0;PWNED??[2J??? \xc3\xa9");
	vn_agent_msg_clear(&m);
	char long_error[4096];
	int n = snprintf(long_error, sizeof(long_error), "{\"id\":3,\"ok\":false,\"error\":\"");
	memset(long_error + n, 'e', 3000);
	strcpy(long_error + n + 3000, "\"}");
	assert_int_equal(vn_agent_msg_decode(long_error, strlen(long_error), "guest g", &m, &err), 0);
	assert_int_equal(strlen(m.error), 1024 + 3);
	vn_agent_msg_clear(&m);

	/* Not JSON objects: noise, skipped. */
	static const char *const noise[] = {"", "hello", "[1,2]", "42", "{\"id\":", "\"str\""};
	for (size_t i = 0; i < VN_ARRAY_SIZE(noise); i++)
		assert_int_equal(vn_agent_msg_decode(noise[i], strlen(noise[i]), "guest g", &m, &err), 1);

	/* Objects that break the protocol, wherever they come from. */
	static const char *const bad[] = {
		"{}",
		"{\"id\":\"1\",\"ok\":true}",
		"{\"id\":1.5,\"ok\":true}",
		"{\"id\":null,\"stream\":\"stdout\",\"data\":\"\"}",
		"{\"id\":1,\"ok\":true} x",
	};
	static const char nul_inside[] = "{\"id\":1,\"ok\":true}\0{\"id\":2}";
	for (size_t i = 0; i <= VN_ARRAY_SIZE(bad); i++) {
		const char *line = i < VN_ARRAY_SIZE(bad) ? bad[i] : nul_inside;
		size_t len = i < VN_ARRAY_SIZE(bad) ? strlen(line) : sizeof(nul_inside) - 1;
		assert_int_equal(vn_agent_msg_decode(line, len, "guest g", &m, &err), -EBADMSG);
		assert_int_equal(err.kind, VN_ERR_INFRA);
		assert_non_null(strstr(err.msg, "guest g: malformed agent message"));
		vn_error_clear(&err);
	}
	/* Messages quote the guest's bytes only as printable ASCII, and briefly. */
	char long_bad[400];
	memset(long_bad, '\x1b', sizeof(long_bad));
	memcpy(long_bad, "{\"id\":\"", 7);
	memcpy(long_bad + sizeof(long_bad) - 2, "\"}", 2);
	assert_int_equal(vn_agent_msg_decode(long_bad, sizeof(long_bad), "guest g", &m, &err), -EBADMSG);
	assert_null(strchr(err.msg, '\x1b'));
	assert_true(strlen(err.msg) < 250);
	vn_error_clear(&err);
}

/* The file ops' replies: what a hostile guest could send instead of a stat, a directory, a chunk. */
static void test_decode_file_replies(void **state)
{
	static const char *const bad_dirs[] = {
		"{\"entries\": [{\"name\": \"..\", \"type\": \"dir\", \"mode\": 493, \"size\": 0}]}",
		"{\"entries\": [{\"name\": \".\", \"type\": \"dir\", \"mode\": 493, \"size\": 0}]}",
		"{\"entries\": [{\"name\": \"a/../../b\", \"type\": \"file\", \"mode\": 420, \"size\": 0}]}",
		"{\"entries\": [{\"name\": \"/etc\", \"type\": \"dir\", \"mode\": 493, \"size\": 0}]}",
		"{\"entries\": [{\"name\": \"a\\nb\", \"type\": \"file\", \"mode\": 420, \"size\": 0}]}",
		"{\"entries\": [{\"name\": \"a\\u0000b\", \"type\": \"file\", \"mode\": 420, \"size\": 0}]}",
		"{\"entries\": [{\"name\": \"\", \"type\": \"file\", \"mode\": 420, \"size\": 0}]}",
		"{\"entries\": [{\"name\": \"x\", \"type\": \"fifo\", \"mode\": 420, \"size\": 0}]}",
		"{\"entries\": [{\"name\": \"x\", \"type\": \"file\", \"mode\": 65536, \"size\": 0}]}",
		"{\"entries\": [{\"name\": \"x\", \"type\": \"file\", \"mode\": 420, \"size\": -1}]}",
		"{\"entries\": [{\"name\": 7, \"type\": \"file\", \"mode\": 420, \"size\": 0}]}",
		"{\"entries\": {}}",
	};
	struct vn_agent_dirent *e = NULL;
	struct vn_agent_stat st;
	struct vn_error err = {0};
	char buf[16];
	size_t n = 0;
	(void)state;

	for (size_t i = 0; i < VN_ARRAY_SIZE(bad_dirs); i++) {
		struct json_object *o = json_tokener_parse(bad_dirs[i]);

		assert_non_null(o);
		assert_int_equal(vn_agent_decode_dirents(o, "guest t", &e, &n, &err), -EBADMSG);
		assert_int_equal(err.kind, VN_ERR_INFRA);
		json_object_put(o);
	}
	struct json_object *o = json_tokener_parse(
		"{\"entries\": [{\"name\": \"ok.txt\", \"type\": \"file\", \"mode\": 420, \"size\": 5}]}");
	assert_int_equal(vn_agent_decode_dirents(o, "guest t", &e, &n, &err), 0);
	assert_int_equal(n, 1);
	assert_string_equal(e[0].name, "ok.txt");
	assert_int_equal(e[0].st.type, VN_AGENT_FILE);
	assert_int_equal(e[0].st.size, 5);
	vn_agent_dirents_free(e, n);
	json_object_put(o);

	o = json_tokener_parse("{\"type\": \"dir\", \"mode\": \"0755\", \"size\": 0}");
	assert_int_equal(vn_agent_decode_stat(o, "guest t", &st, &err), -EBADMSG);
	json_object_put(o);

	/* A chunk longer than asked for, or without eof. */
	o = json_tokener_parse("{\"data\": \"aGVsbG8gd29ybGQ=\", \"eof\": true}");
	assert_int_equal(vn_agent_decode_chunk(o, "guest t", 5, buf, &n, &err), -EBADMSG);
	assert_int_equal(vn_agent_decode_chunk(o, "guest t", 11, buf, &n, &err), 0);
	assert_int_equal(n, 11);
	json_object_put(o);
	o = json_tokener_parse("{\"data\": \"aGk=\"}");
	assert_int_equal(vn_agent_decode_chunk(o, "guest t", 11, buf, &n, &err), -EBADMSG);
	json_object_put(o);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_decode),
		cmocka_unit_test(test_decode_file_replies),
		cmocka_unit_test(test_call_endless_bytes),
		cmocka_unit_test(test_call_endless_empty_objects),
		cmocka_unit_test(test_call_endless_foreign_replies),
		cmocka_unit_test(test_exec_endless_bytes),
		cmocka_unit_test(test_exec_endless_empty_objects),
		cmocka_unit_test(test_exec_output_truncated),
		cmocka_unit_test(test_exec_malformed_replies),
		cmocka_unit_test(test_exec_wait_malformed),
		cmocka_unit_test(test_exec_wait_events),
		cmocka_unit_test(test_exec_agent_restarted),
		cmocka_unit_test(test_exec_agent_silent),
		cmocka_unit_test(test_interrupt_ends_wait),
		cmocka_unit_test(test_watch_ends_wait),
		cmocka_unit_test(test_watch_on_eof),
		cmocka_unit_test(test_overlong_line_then_resync),
		/* Last: its memory peak is the highest. */
		cmocka_unit_test(test_read_endless_bytes),
	};

	signal(SIGPIPE, SIG_IGN);
	/* A wait that never ends fails the test instead of hanging CI. */
	alarm(120);
	return cmocka_run_group_tests(tests, NULL, NULL);
}
