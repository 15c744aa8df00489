/*
 * The in-guest vnuma-trace, run on the host against a fake tracefs (a
 * directory of plain files, --tracefs DIR): what it writes there, and what
 * it prints, read back through the host's parsers (metrics/trace.h).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <fcntl.h>
#include <json-c/json.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "metrics/trace.h"
#include "util/alloc.h"
#include "util/cleanup.h"
#include "util/dir.h"
#include "util/file.h"
#include "util/strbuf.h"
#include "tmpdir.h"

static char *get(const char *dir, const char *name)
{
	_cleanup_free_ char *path = vn_xasprintf("%s/%s", dir, name);
	struct vn_error err = {0};
	char *text = NULL;
	size_t len;

	assert_int_equal(vn_file_read(path, 1u << 20, &text, &len, &err), 0);
	return text;
}

static char *format_text(void)
{
	const char *src = getenv("VN_SOURCE_DIR");
	_cleanup_free_ char *path = vn_xasprintf("%s/tests/fixtures/trace/mm_migrate_pages.format", src ? src : ".");
	struct vn_error err = {0};
	char *text = NULL;
	size_t len;

	assert_int_equal(vn_file_read(path, VN_TRACE_FORMAT_MAX, &text, &len, &err), 0);
	return text;
}

/* A tracefs with mm_migrate_pages, its trace_pipe holding lines already. */
static char *fake_tracefs(const char *pipe_text)
{
	_cleanup_free_ char *fmt = format_text();
	char tmpl[] = "/tmp/vnuma-test-tracer.XXXXXX";
	char *dir = vn_xstrdup(mkdtemp(tmpl));

	vn_test_put(dir, "events/migrate/mm_migrate_pages/format", fmt);
	/* Plain files are not truncated by a write as tracefs's are: what the helper writes, starting empty. */
	vn_test_put(dir, "events/migrate/mm_migrate_pages/enable", "");
	vn_test_put(dir, "events/enable", "1\n");
	vn_test_put(dir, "tracing_on", "1\n");
	vn_test_put(dir, "trace", "old events\n");
	vn_test_put(dir, "buffer_size_kb", "");
	vn_test_put(dir, "trace_clock", "");
	vn_test_put(dir, "trace_pipe", pipe_text);
	vn_test_put(dir, "per_cpu/cpu0/stats",
		    "entries: 0\noverrun: 3\ncommit overrun: 0\nbytes: 0\ndropped events: 2\n");
	vn_test_put(dir, "per_cpu/cpu1/stats", "entries: 0\noverrun: 1\ndropped events: 0\n");
	return dir;
}

/* Runs vnuma-trace ARGS...; SIGTERM after wait_s (0: let it end); its stdout, its exit code in *rc. */
static char *run(char *const argv[], double wait_s, int *rc)
{
	_cleanup_free_ char *out = vn_xstrdup("/tmp/vnuma-test-tracer-out.XXXXXX");
	int fd = mkstemp(out);
	assert_true(fd >= 0);
	pid_t pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		dup2(fd, 1);
		execv(VN_TRACER_PATH, argv);
		_exit(127);
	}
	close(fd);
	if (wait_s > 0) {
		struct timespec ts = {.tv_sec = (time_t)wait_s, .tv_nsec = (long)((wait_s - (time_t)wait_s) * 1e9)};
		nanosleep(&ts, NULL);
		kill(pid, SIGTERM);
	}
	int status;
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFEXITED(status));
	*rc = WEXITSTATUS(status);
	char *slash = strrchr(out, '/');
	*slash = '\0';
	char *text = get(out, slash + 1);
	*slash = '/';
	unlink(out);
	return text;
}

static json_object *line_obj(const char *line, size_t n)
{
	json_tokener *tok = json_tokener_new();
	json_object *o = json_tokener_parse_ex(tok, line, (int)n);
	assert_non_null(o);
	assert_int_equal(json_tokener_get_parse_end(tok), n);
	json_tokener_free(tok);
	return o;
}

static void test_capture(void **state)
{
	/* Two whole lines, one over the line bound, then half a line the kernel never finished. */
	struct vn_strbuf b = VN_STRBUF_INIT;
	vn_strbuf_printf(&b, " vnuma-wl-memfol-158     [001] d..2.    11.529462: mm_migrate_pages: nr_succeeded=1 "
			     "nr_failed=0 nr_thp_succeeded=0 nr_thp_failed=0 nr_thp_split=0 mode=MIGRATE_ASYNC "
			     "reason=numa_misplaced\n");
	for (int i = 0; i < 5000; i++)
		vn_strbuf_append(&b, "x", 1);
	vn_strbuf_printf(&b, "\n          <idle>-0       [000] d.h1.    12.000001: mm_migrate_pages: nr_succeeded=7 "
			     "nr_failed=1 nr_thp_succeeded=0 nr_thp_failed=0 nr_thp_split=0 mode=MIGRATE_SYNC "
			     "reason=compaction\n   half-1 [000] d..");
	_cleanup_free_ char *dir = fake_tracefs(b.s);
	vn_strbuf_free(&b);
	char *argv[] = {"vnuma-trace", "--tracefs", dir, "--buffer-kb", "64", "--event", "migrate:mm_migrate_pages",
			NULL};
	int rc;
	_cleanup_free_ char *text = run(argv, 0.6, &rc);
	assert_int_equal(rc, 0);

	/* What it set: a quiet, cleared ring of the asked size, on the monotonic clock, the event off again. */
	_cleanup_free_ char *on = get(dir, "tracing_on"), *all = get(dir, "events/enable"), *trace = get(dir, "trace"),
			    *kb = get(dir, "buffer_size_kb"), *clock = get(dir, "trace_clock"),
			    *en = get(dir, "events/migrate/mm_migrate_pages/enable");
	assert_string_equal(on, "0\n");
	assert_string_equal(all, "0\n");
	assert_string_equal(trace, "");
	assert_string_equal(kb, "64");
	assert_string_equal(clock, "mono");
	assert_string_equal(en, "0");

	struct vn_trace_format f;
	struct vn_error err = {0};
	unsigned nformat = 0, nready = 0, nlines = 0, nend = 0;
	for (const char *p = text; *p;) {
		const char *nl = strchr(p, '\n');
		assert_non_null(nl);
		json_object *o = line_obj(p, (size_t)(nl - p)), *v;
		p = nl + 1;
		if (json_object_object_get_ex(o, "format", &v)) {
			assert_string_equal(json_object_get_string(v), "migrate:mm_migrate_pages");
			assert_true(json_object_object_get_ex(o, "text", &v));
			assert_int_equal(vn_trace_format_parse(json_object_get_string(v),
							       (size_t)json_object_get_string_len(v), &f, &err),
					 0);
			assert_int_equal(nready, 0);
			nformat++;
		} else if (json_object_object_get_ex(o, "ready", &v)) {
			assert_true(json_object_object_get_ex(o, "vmstat", &v));
			assert_true(json_object_is_type(v, json_type_object));
			nready++;
		} else if (json_object_object_get_ex(o, "l", &v)) {
			struct vn_trace_event ev;
			assert_int_equal(nready, 1);
			assert_int_equal(vn_trace_line_parse(json_object_get_string(v),
							     (size_t)json_object_get_string_len(v), &f, 1, &ev, &err),
					 0);
			json_object *s;
			assert_true(json_object_object_get_ex(ev.fields, "succeeded", &s));
			assert_int_equal(json_object_get_int64(s), nlines ? 7 : 1);
			json_object_put(ev.fields);
			nlines++;
		} else {
			assert_true(json_object_object_get_ex(o, "end", &v));
			/* The line over the bound and the half line are counted, not sent. */
			assert_true(json_object_object_get_ex(o, "cut", &v));
			assert_int_equal(json_object_get_int64(v), 2);
			assert_true(json_object_object_get_ex(o, "cpus", &v));
			int64_t overrun = 0, dropped = 0;
			for (size_t i = 0; i < json_object_array_length(v); i++) {
				json_object *c = json_object_array_get_idx(v, i), *x;
				assert_true(json_object_object_get_ex(c, "overrun", &x));
				overrun += json_object_get_int64(x);
				assert_true(json_object_object_get_ex(c, "dropped", &x));
				dropped += json_object_get_int64(x);
			}
			assert_int_equal(overrun, 4);
			assert_int_equal(dropped, 2);
			nend++;
		}
		json_object_put(o);
	}
	assert_int_equal(nformat, 1);
	assert_int_equal(nready, 1);
	assert_int_equal(nlines, 2);
	assert_int_equal(nend, 1);
	assert_int_equal(vn_rm_rf(dir), 0);
	assert_int_not_equal(access(dir, F_OK), 0);
}

static void test_missing(void **state)
{
	_cleanup_free_ char *dir = fake_tracefs("");
	char *argv[] = {"vnuma-trace", "--tracefs",     dir, "--event", "migrate:mm_migrate_pages",
			"--event",     "sched:no_such", NULL};
	int rc;
	_cleanup_free_ char *text = run(argv, 0, &rc);

	assert_int_equal(rc, 2);
	json_object *o = line_obj(text, strlen(text) - 1), *v;
	assert_true(json_object_object_get_ex(o, "missing", &v));
	assert_string_equal(json_object_get_string(v), "sched:no_such");
	json_object_put(o);
	/* Checked before anything changed. */
	_cleanup_free_ char *on = get(dir, "tracing_on"), *trace = get(dir, "trace");
	assert_string_equal(on, "1\n");
	assert_string_equal(trace, "old events\n");
	assert_int_equal(vn_rm_rf(dir), 0);
	assert_int_not_equal(access(dir, F_OK), 0);

	/* Names that are not SUBSYS:EVENT never reach a path. */
	char *bad[] = {"vnuma-trace", "--tracefs", "/nonexistent", "--event", "../x:y", NULL};
	_cleanup_free_ char *none = run(bad, 0, &rc);
	assert_int_equal(rc, 2);
	assert_string_equal(none, "");
}

/*
 * Events as fast as they are read: trace_pipe a FIFO that a writer keeps
 * full (1 MiB at a time, ahead of the tracer's 64 KiB reads) until tracing
 * is turned off, as the kernel's events stop then. SIGTERM must still end the capture, in order: a drain that
 * read on while there was more kept vnuma-trace past its stop for as long
 * as the events came (seen in CI as a capture that never ended).
 */
static void test_stop_under_stream(void **state)
{
	(void)state;
	_cleanup_free_ char *dir = fake_tracefs("");
	_cleanup_free_ char *pipe_path = vn_xasprintf("%s/trace_pipe", dir);
	_cleanup_free_ char *on_path = vn_xasprintf("%s/tracing_on", dir);
	assert_int_equal(unlink(pipe_path), 0);
	assert_int_equal(mkfifo(pipe_path, 0600), 0);

	pid_t writer = fork();
	assert_true(writer >= 0);
	if (writer == 0) {
		static char chunk[1 << 20];
		static const char line[] = "          <idle>-0       [000] d.h1.    12.000001: mm_migrate_pages: "
					   "nr_succeeded=7 nr_failed=1 nr_thp_succeeded=0 nr_thp_failed=0 "
					   "nr_thp_split=0 mode=MIGRATE_SYNC reason=compaction\n";
		for (size_t i = 0; i + sizeof(line) - 1 <= sizeof(chunk); i += sizeof(line) - 1)
			memcpy(chunk + i, line, sizeof(line) - 1);
		signal(SIGPIPE, SIG_IGN);
		int fd = open(pipe_path, O_WRONLY);
		if (fd < 0)
			_exit(1);
		fcntl(fd, F_SETPIPE_SZ, 1 << 20);
		bool was_on = false;
		for (;;) {
			char on[4] = {0};
			int f = open(on_path, O_RDONLY);
			if (f >= 0) {
				if (read(f, on, sizeof(on) - 1) < 0)
					on[0] = '\0';
				close(f);
			}
			if (on[0] == '1')
				was_on = true;
			else if (was_on)
				_exit(0);
			if (write(fd, chunk, sizeof(chunk) - sizeof(chunk) % (sizeof(line) - 1)) < 0)
				_exit(0);
		}
	}

	/* Its stdout a pipe read slowly, as a busy host reads it: the FIFO stays ahead of the tracer. */
	int out[2];
	assert_int_equal(pipe(out), 0);
	pid_t tracer = fork();
	assert_true(tracer >= 0);
	if (tracer == 0) {
		dup2(out[1], 1);
		close(out[0]);
		close(out[1]);
		execl(VN_TRACER_PATH, "vnuma-trace", "--tracefs", dir, "--event", "migrate:mm_migrate_pages",
		      (char *)NULL);
		_exit(127);
	}
	close(out[1]);
	fcntl(out[0], F_SETFL, O_NONBLOCK);
	static char sink[65536];
	bool eof = false;
	/* Bounded, 5 ms a turn: the fault this guards against never ends on its own. SIGTERM at 0.5 s. */
	for (int turn = 0; !eof && turn < 2100; turn++) {
		if (turn == 100)
			kill(tracer, SIGTERM);
		ssize_t n = read(out[0], sink, sizeof(sink));
		eof = n == 0;
		struct timespec ts = {.tv_nsec = 5 * 1000 * 1000};
		nanosleep(&ts, NULL);
	}
	close(out[0]);
	int status = 0;
	if (!eof) {
		kill(tracer, SIGKILL);
		kill(writer, SIGKILL);
		waitpid(tracer, NULL, 0);
		waitpid(writer, NULL, 0);
		vn_rm_rf(dir);
		fail_msg("vnuma-trace still read 10 s after SIGTERM while events kept coming");
	}
	assert_int_equal(waitpid(tracer, &status, 0), tracer);
	/* It turned tracing off, and so the writer ends as the kernel's events do; a tracer that never opened
	 * the FIFO leaves the writer waiting in open(): bounded too. */
	int wstatus = 0;
	pid_t got = 0;
	for (int turn = 0; turn < 1000 && (got = waitpid(writer, &wstatus, WNOHANG)) == 0; turn++) {
		struct timespec ts = {.tv_nsec = 5 * 1000 * 1000};
		nanosleep(&ts, NULL);
	}
	if (got == 0) {
		kill(writer, SIGKILL);
		waitpid(writer, NULL, 0);
	}
	assert_true(WIFEXITED(status));
	assert_int_equal(WEXITSTATUS(status), 0);
	assert_int_equal(got, writer);
	assert_true(WIFEXITED(wstatus) && WEXITSTATUS(wstatus) == 0);
	_cleanup_free_ char *on = get(dir, "tracing_on"), *en = get(dir, "events/migrate/mm_migrate_pages/enable");
	assert_string_equal(on, "0\n");
	assert_string_equal(en, "0");
	assert_int_equal(vn_rm_rf(dir), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_capture),
		cmocka_unit_test(test_missing),
		cmocka_unit_test(test_stop_under_stream),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
