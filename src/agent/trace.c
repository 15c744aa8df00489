/*
 * vnuma-trace: tracepoint capture in the guest through tracefs, without
 * trace-cmd (the initramfs has none). The scenario runner starts it through
 * the agent's exec op before the first step, waits for its "ready" line,
 * and reads its stdout while the workloads run. It only forwards what the
 * kernel prints; the host parses and bounds it (src/metrics/trace.c).
 *
 * Its stdout, one JSON object a line (docs/tracing.md):
 *   {"missing":"SUBSYS:EVENT","why":"..."}     then exit 2: not in this kernel
 *   {"format":"SUBSYS:EVENT","text":"..."}     each event's format file
 *   {"ready":true,"clock":"mono","t0":S,"vmstat":{...}}   events enabled, tracing on
 *   {"l":"..."}                                one trace_pipe line
 *   {"end":true,"t1":S,"vmstat":{...},"cut":N,"cpus":[{"cpu":N,"overrun":N,"dropped":N}]}
 * "cut" counts lines over the line bound, dropped here; overrun and dropped
 * are the kernel's per-CPU ring buffer losses (per_cpu/cpuN/stats).
 */
#include "inguest/buf.h"
#include "inguest/json.h"
#include "inguest/opt.h"
#include "inguest/prog.h"
#include "inguest/time.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>

/* trace_pipe lines are short (the kernel formats them into a page); longer ones are cut, and counted. */
#define LINE_MAX_BYTES 4096
#define FORMAT_MAX     (64u << 10)
#define EVENTS_MAX     32

static const char *events[EVENTS_MAX];
static size_t nevents;
static const char *tracefs;

static void add_event(const struct ig_opt *opt, const char *val)
{
	size_t sub = strspn(val, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_");
	const char *ev = val + sub + 1;

	if (!sub || val[sub] != ':' || !*ev ||
	    strspn(ev, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_") != strlen(ev) ||
	    strlen(val) > 128)
		ig_bad_option(opt->name, val, "expected SUBSYS:EVENT");
	if (nevents == EVENTS_MAX)
		ig_bad_option(opt->name, val, "at most 32 events");
	events[nevents++] = val;
}

/* TRACEFS/events/SUBSYS/EVENT/LEAF for "SUBSYS:EVENT". */
static void event_path(char *buf, size_t n, const char *event, const char *leaf)
{
	size_t sub = strcspn(event, ":");

	snprintf(buf, n, "%s/events/%.*s/%s%s%s", tracefs, (int)sub, event, event + sub + 1, leaf ? "/" : "",
		 leaf ? leaf : "");
}

static void tracefs_write(const char *leaf, const char *s, bool must)
{
	char path[512];

	snprintf(path, sizeof(path), "%s/%s", tracefs, leaf);
	int r = ig_write_file(path, s);
	if (r < 0 && must)
		ig_die(IG_EXIT_ENV, -r, "write %s to %s", s, path);
}

/* {"missing":EVENT,"why":WHY} and exit 2, before anything was changed. */
__attribute__((noreturn)) static void missing(const char *event, const char *why)
{
	struct ig_json j;

	ig_json_init(&j);
	ig_json_obj_begin(&j, NULL);
	ig_json_str(&j, "missing", event);
	ig_json_str(&j, "why", why);
	ig_json_obj_end(&j);
	ig_json_print(&j);
	ig_die(IG_EXIT_USAGE, 0, "tracepoint %s: not in this kernel (%s)", event, why);
}

/* Mounted by the initramfs init; mounted here when not (a disk image, another init). */
static void find_tracefs(void)
{
	static const char *const dirs[] = {"/sys/kernel/tracing", "/sys/kernel/debug/tracing"};
	char path[128];

	for (size_t i = 0; i < 2; i++) {
		snprintf(path, sizeof(path), "%s/events", dirs[i]);
		if (access(path, F_OK) == 0) {
			tracefs = dirs[i];
			return;
		}
	}
	mkdir(dirs[0], 0755);
	if (mount("tracefs", dirs[0], "tracefs", 0, NULL) == 0) {
		tracefs = dirs[0];
		return;
	}
	/* A kernel built without tracing has none of the scenario's tracepoints: its mistake, not ours. */
	if (errno == ENODEV)
		missing(events[0], "the kernel has no tracefs");
	ig_die(IG_EXIT_ENV, errno, "mount tracefs on %s", dirs[0]);
}

/* Writes out whole and empties it; a host that stopped reading (EPIPE) ends the capture. */
static void flush_out(struct ig_buf *out)
{
	int r = ig_write_all(STDOUT_FILENO, out->s, out->len);
	if (r == -EPIPE)
		exit(0);
	if (r < 0)
		ig_die(IG_EXIT_ENV, -r, "write");
	ig_buf_clear(out);
}

static void emit_line(struct ig_buf *out)
{
	ig_buf_add(out, "\n", 1);
	flush_out(out);
}

/* The counters a capture window is checked against: migrations, as vmstat counts them. */
static void emit_vmstat(struct ig_json *j, struct ig_buf *scratch)
{
	static const char *const keys[] = {"pgmigrate_success", "pgmigrate_fail",   "numa_pages_migrated",
					   "numa_hint_faults",  "numa_pte_updates", "thp_migration_success"};

	ig_read_file("/proc/vmstat", scratch);
	ig_json_obj_begin(j, "vmstat");
	for (const char *line = scratch->s; line && *line;) {
		const char *sp = strchr(line, ' ');
		const char *eol = strchr(line, '\n');
		if (sp && (!eol || sp < eol))
			for (size_t i = 0; i < sizeof(keys) / sizeof(keys[0]); i++)
				if ((size_t)(sp - line) == strlen(keys[i]) &&
				    memcmp(line, keys[i], strlen(keys[i])) == 0)
					ig_json_uint(j, keys[i], strtoull(sp + 1, NULL, 10));
		line = eol ? eol + 1 : NULL;
	}
	ig_json_obj_end(j);
}

static void emit_json(struct ig_json *j)
{
	int r = ig_json_print(j);
	if (r == -EPIPE)
		exit(0);
	if (r < 0)
		ig_die(IG_EXIT_ENV, -r, "write");
}

/* "overrun: N" and "dropped events: N" of each CPU's ring buffer. */
static void emit_cpu_stats(struct ig_json *j, struct ig_buf *scratch)
{
	char path[512];
	struct dirent *de;

	snprintf(path, sizeof(path), "%s/per_cpu", tracefs);
	DIR *d = opendir(path);
	ig_json_arr_begin(j, "cpus");
	while (d && (de = readdir(d))) {
		char *end;
		if (strncmp(de->d_name, "cpu", 3) != 0)
			continue;
		long cpu = strtol(de->d_name + 3, &end, 10);
		if (*end || end == de->d_name + 3 || cpu < 0)
			continue;
		snprintf(path, sizeof(path), "%s/per_cpu/cpu%ld/stats", tracefs, cpu);
		if (ig_read_file(path, scratch) < 0)
			continue;
		ig_json_obj_begin(j, NULL);
		ig_json_int(j, "cpu", cpu);
		const char *o = strstr(scratch->s, "overrun: "), *dr = strstr(scratch->s, "dropped events: ");
		if (o)
			ig_json_uint(j, "overrun", strtoull(o + 9, NULL, 10));
		if (dr)
			ig_json_uint(j, "dropped", strtoull(dr + 16, NULL, 10));
		ig_json_obj_end(j);
	}
	ig_json_arr_end(j);
	if (d)
		closedir(d);
}

/* Forward the complete lines of pending; keep a partial one for the next read. */
static unsigned long cut;
static bool skipping;

static void forward(struct ig_buf *pending, struct ig_buf *out)
{
	size_t start = 0;

	for (;;) {
		char *nl = memchr(pending->s + start, '\n', pending->len - start);
		if (!nl)
			break;
		size_t n = (size_t)(nl - (pending->s + start));
		if (skipping)
			skipping = false;
		else if (n > LINE_MAX_BYTES)
			cut++;
		else if (n) {
			ig_buf_add(out, "{\"l\":", 5);
			ig_json_escape(out, pending->s + start, n);
			ig_buf_add(out, "}\n", 2);
		}
		start += n + 1;
	}
	memmove(pending->s, pending->s + start, pending->len - start);
	pending->len -= start;
	pending->s[pending->len] = '\0';
	if (pending->len > LINE_MAX_BYTES) {
		if (!skipping)
			cut++;
		skipping = true;
		pending->len = 0;
		pending->s[0] = '\0';
	}
	if (out->len)
		flush_out(out);
}

/*
 * Read what trace_pipe has now, without blocking; 0 when it had nothing.
 * While tracing is on, a stop request ends it too: events that come as fast
 * as they are read (a burst of migrations, a host slow to take our stdout)
 * would keep it reading past SIGTERM, and the capture would never end.
 */
static size_t drain(int fd, struct ig_buf *pending, struct ig_buf *out, bool stoppable)
{
	size_t total = 0;

	for (;;) {
		if (stoppable && ig_stop_requested)
			return total;
		ig_buf_reserve(pending, 65536);
		ssize_t r = read(fd, pending->s + pending->len, 65536);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			return total;
		pending->len += (size_t)r;
		pending->s[pending->len] = '\0';
		total += (size_t)r;
		forward(pending, out);
	}
}

/* Every event checked before anything changes: a missing one is the scenario's mistake. */
static void events_check(void)
{
	char path[512];

	for (size_t i = 0; i < nevents; i++) {
		event_path(path, sizeof(path), events[i], "enable");
		if (access(path, W_OK) != 0) {
			char why[600];
			snprintf(why, sizeof(why), "no %s", path);
			missing(events[i], why);
		}
	}
}

/* A quiet, empty ring of the asked size, on the clock the sampler reads (CLOCK_MONOTONIC): whether it got that clock. */
static bool ring_reset(uint64_t buffer_kb)
{
	char path[512], num[32];

	tracefs_write("tracing_on", "0", true);
	tracefs_write("events/enable", "0", false);
	snprintf(path, sizeof(path), "%s/trace", tracefs);
	int tfd = open(path, O_WRONLY | O_TRUNC | O_CLOEXEC);
	if (tfd < 0)
		ig_die(IG_EXIT_ENV, errno, "clear %s", path);
	close(tfd);
	snprintf(num, sizeof(num), "%llu", (unsigned long long)buffer_kb);
	tracefs_write("buffer_size_kb", num, true);
	snprintf(path, sizeof(path), "%s/trace_clock", tracefs);
	return ig_write_file(path, "mono") == 0;
}

/* Each event's format file, one {"format":...} line each: the host decodes the pipe's lines with them. */
static void emit_formats(struct ig_buf *scratch, struct ig_buf *out)
{
	char path[512];

	for (size_t i = 0; i < nevents; i++) {
		event_path(path, sizeof(path), events[i], "format");
		int r = ig_read_file(path, scratch);
		if (r < 0)
			ig_die(IG_EXIT_ENV, -r, "read %s", path);
		if (scratch->len > FORMAT_MAX)
			ig_die(IG_EXIT_ENV, 0, "%s: over %u KiB", path, FORMAT_MAX >> 10);
		ig_buf_add(out, "{\"format\":", 10);
		ig_json_escape(out, events[i], strlen(events[i]));
		ig_buf_add(out, ",\"text\":", 8);
		ig_json_escape(out, scratch->s, scratch->len);
		ig_buf_add(out, "}", 1);
		emit_line(out);
	}
}

/* Every event on ("1": each must take it) or off ("0": at the end, as far as it goes). */
static void events_set(const char *on)
{
	char path[512];

	for (size_t i = 0; i < nevents; i++) {
		event_path(path, sizeof(path), events[i], "enable");
		int r = ig_write_file(path, on);
		if (r < 0 && strcmp(on, "1") == 0)
			ig_die(IG_EXIT_ENV, -r, "enable %s", events[i]);
	}
}

/* The ready line: the clock, the window's start and its first vmstat. */
static void emit_ready(struct ig_json *j, bool mono, struct ig_buf *scratch)
{
	ig_json_reset(j);
	ig_json_obj_begin(j, NULL);
	ig_json_bool(j, "ready", true);
	ig_json_str(j, "clock", mono ? "mono" : "local");
	ig_json_fixed(j, "t0", ig_now(), 6);
	emit_vmstat(j, scratch);
	ig_json_obj_end(j);
	emit_json(j);
}

/* The end line: the window's end and last vmstat, the pipe drained after tracing stopped, the lines cut. */
static void emit_end(struct ig_json *j, int fd, struct ig_buf *pending, struct ig_buf *out, struct ig_buf *scratch)
{
	ig_json_reset(j);
	ig_json_obj_begin(j, NULL);
	ig_json_bool(j, "end", true);
	ig_json_fixed(j, "t1", ig_now(), 6);
	emit_vmstat(j, scratch);
	tracefs_write("tracing_on", "0", false);
	drain(fd, pending, out, false);
	events_set("0");
	ig_json_uint(j, "cut", cut + (pending->len > 0));
	emit_cpu_stats(j, scratch);
	ig_json_obj_end(j);
	emit_json(j);
}

int main(int argc, char **argv)
{
	uint64_t buffer_kb = 4096;
	const char *dir = NULL;
	const struct ig_opt opts[] = {
		{"buffer-kb", IG_OPT_U64, .dst = &buffer_kb, .min = 4, .max = 1u << 20,
		 .help = "ring buffer per CPU (default 4096)"},
		{"event", IG_OPT_CALL, .call = add_event, .short_name = 'e', .arg = "SUBSYS:EVENT",
		 .help = "a tracepoint to capture (repeatable, at most 32)"},
		{"tracefs", IG_OPT_STRING, .dst = &dir, .arg = "DIR",
		 .help = "tracefs mounted there (default: found, or mounted on /sys/kernel/tracing)"},
		{0}};
	char path[512];
	struct ig_buf scratch = {0}, out = {0}, pending = {0};
	struct ig_json j;

	ig_init("vnuma-trace");
	ig_opts_parse(
		argc, argv, opts,
		"Enables the events through tracefs and prints their format files, then every trace_pipe line,\n"
		"as JSON lines on stdout until SIGTERM (see docs/tracing.md). An event the kernel does not have:\n"
		"{\"missing\":...} and exit 2.\n");
	if (!nevents)
		ig_bad_option("event", "", "at least one event");
	ig_stop_on_signals();
	signal(SIGPIPE, SIG_IGN);
	ig_json_init(&j);
	if (dir)
		tracefs = dir;
	else
		find_tracefs();

	events_check();
	bool mono = ring_reset(buffer_kb);
	emit_formats(&scratch, &out);
	events_set("1");
	snprintf(path, sizeof(path), "%s/trace_pipe", tracefs);
	int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0)
		ig_die(IG_EXIT_ENV, errno, "open %s", path);

	/* Tracing on before the window's first vmstat read, off after its last: the trace covers the window. */
	tracefs_write("tracing_on", "1", true);
	emit_ready(&j, mono, &scratch);
	/* Not poll(): trace_pipe's poll may wait for the buffer_percent watermark; a short sleep between drains does not. */
	while (!ig_stop_requested)
		if (!drain(fd, &pending, &out, true))
			ig_sleep(0.2);
	emit_end(&j, fd, &pending, &out, &scratch);
	close(fd);
	ig_json_free(&j);
	ig_buf_free(&scratch);
	ig_buf_free(&out);
	ig_buf_free(&pending);
	return 0;
}
