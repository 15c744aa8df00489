/*
 * vnuma-sample: the in-guest sampler. The scenario runner starts it through
 * the agent's exec op and reads its stdout as a stream, so every sample is one
 * complete JSON line written with a single write(); the host never has to
 * round-trip per sample. The line format is documented in docs/sampling.md.
 *
 * It runs beside the workloads it watches, up to 10 times a second in a TCG
 * guest where every syscall and page walk is emulated, so it is libc only
 * (static, like the agent), keeps its files open and reads each again only
 * when it can have changed (docs/sampling.md, "What a sample reads"), and
 * reports its own cost in every line.
 * Its buffers, JSON writer, options and node map are the in-guest support
 * library's (src/inguest), which the workloads use too.
 */
#include "agent/sampler-priv.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

/* ---- topology, read once ---- */

struct ig_topo topo;
int nnodes;
int node_ids[VN_MAX_NODES];

static void topology_read(void)
{
	ig_topo_load(&topo);
	for (int n = 0; n < topo.nr_nodes; n++)
		if (topo.online[n])
			node_ids[nnodes++] = n;
}

/* ---- counters ---- */

/* True if s[0..n) is an optionally negative decimal integer. */
static bool is_int(const char *s, size_t n)
{
	size_t i = s[0] == '-';

	if (i >= n)
		return false;
	for (; i < n; i++)
		if (s[i] < '0' || s[i] > '9')
			return false;
	return true;
}

/*
 * "key value" (vmstat, numastat) and "Node N key:   value kB" (node meminfo)
 * lines as JSON members; kB values get a _kB suffix, as vn_metrics_parse_kv()
 * names them, so host code reads samples and snapshots alike.
 *
 * This runs over some 250 lines a sample and was a third of a sample's CPU
 * under TCG, so the usual line (a key of plain identifier bytes and a value
 * in canonical decimal) is copied straight into the output: the same text
 * that escaping the key and printf of strtoull's value would give, as
 * tests/unit/test-samples.c checks. Anything else takes that slow path.
 */
static void emit_kv(struct ig_json *out, const char *name, const char *text, size_t len)
{
	const char *line = text, *stop = text + len;

	ig_json_obj_begin(out, name);
	while (line < stop) {
		const char *eol = memchr(line, '\n', (size_t)(stop - line));
		const char *end = eol ? eol : stop;
		const char *p = line;
		line = eol ? eol + 1 : end;

		if (end - p > 5 && memcmp(p, "Node ", 5) == 0) {
			p += 5;
			while (p < end && *p >= '0' && *p <= '9')
				p++;
			while (p < end && *p == ' ')
				p++;
		}
		const char *key = p;
		bool plain = true;
		for (; p < end && *p != ' ' && *p != ':' && *p != '\t'; p++)
			plain = plain && ((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') ||
					  (*p >= '0' && *p <= '9') || *p == '_' || *p == '(' || *p == ')');
		size_t klen = (size_t)(p - key);
		while (p < end && (*p == ' ' || *p == ':' || *p == '\t'))
			p++;
		const char *val = p;
		while (p < end && *p != ' ')
			p++;
		size_t vlen = (size_t)(p - val);
		/* The kernel's names are short identifiers; a line that is not one is skipped. */
		char k[128];
		if (!klen || klen > sizeof(k) - 4 || !vlen || !is_int(val, vlen))
			continue;
		while (p < end && *p == ' ')
			p++;
		bool kb = end - p >= 2 && memcmp(p, "kB", 2) == 0;

		/* Canonical: no leading zero, no "-0", too few digits to overflow 64 bits. */
		size_t sign = val[0] == '-';
		if (plain && vlen - sign <= 18 && (val[sign] != '0' || vlen == 1)) {
			ig_json_raw(out, key, klen, kb ? "_kB" : NULL, val, vlen);
			continue;
		}
		memcpy(k, key, klen);
		strcpy(k + klen, kb ? "_kB" : "");
		errno = 0;
		if (val[0] == '-') {
			long long v = strtoll(val, NULL, 10);
			if (!errno)
				ig_json_int(out, k, v);
		} else {
			unsigned long long v = strtoull(val, NULL, 10);
			if (!errno)
				ig_json_uint(out, k, v);
		}
	}
	ig_json_obj_end(out);
}

/* ---- one sample ---- */

/* The files every sample reads, opened once; -1 where missing (its object stays empty). */
static int uptime_fd = -1, vmstat_fd = -1;
static int numastat_fd[VN_MAX_NODES], meminfo_fd[VN_MAX_NODES];

static void files_open(void)
{
	uptime_fd = open("/proc/uptime", O_RDONLY | O_CLOEXEC);
	vmstat_fd = open("/proc/vmstat", O_RDONLY | O_CLOEXEC);
	for (int i = 0; i < nnodes; i++) {
		numastat_fd[i] = open_ro(IG_NODE_DIR "/node%d/numastat", node_ids[i]);
		meminfo_fd[i] = open_ro(IG_NODE_DIR "/node%d/meminfo", node_ids[i]);
	}
}

static int64_t clock_ns(clockid_t clk)
{
	struct timespec ts;

	clock_gettime(clk, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/*
 * ns as seconds with six decimals, rounded, as "%.6f" of ns / 1e9 prints
 * them: printf of a double takes some 10 us under TCG, and a sample has
 * three of these.
 */
static void json_us(struct ig_json *out, const char *key, int64_t ns)
{
	char s[32], *p = s + sizeof(s);
	bool neg = ns < 0;
	uint64_t us = ((neg ? (uint64_t)-ns : (uint64_t)ns) + 500) / 1000;

	*--p = '\0';
	for (int i = 0; i < 6; i++, us /= 10)
		*--p = (char)('0' + us % 10);
	*--p = '.';
	do
		*--p = (char)('0' + us % 10);
	while (us /= 10);
	if (neg)
		*--p = '-';
	ig_json_raw(out, key, strlen(key), NULL, p, strlen(p));
}

/* "12345.67": the kernel's two decimals, which "%.2f" of strtod() would print back unchanged. */
static bool uptime_verbatim(const char *s, size_t n)
{
	size_t dot = strspn(s, "0123456789");
	return dot && dot + 3 == n && s[dot] == '.' && s[dot + 1] >= '0' && s[dot + 1] <= '9' && s[dot + 2] >= '0' &&
	       s[dot + 2] <= '9' && (s[0] != '0' || dot == 1);
}

static void emit_sample(struct ig_json *out, struct ig_buf *b, unsigned long seq, int64_t t0)
{
	int64_t wall0 = clock_ns(CLOCK_MONOTONIC);
	int64_t cpu0 = clock_ns(CLOCK_PROCESS_CPUTIME_ID);

	ig_json_reset(out);
	ig_json_obj_begin(out, NULL);
	ig_json_uint(out, "seq", seq);
	json_us(out, "t", wall0 - t0);

	/* "12345.67 23456.78": seconds with two decimals, as the kernel prints them. */
	if (pread_all(uptime_fd, b) == 0) {
		size_t n = strcspn(b->s, " \n");
		if (uptime_verbatim(b->s, n))
			ig_json_raw(out, "uptime", 6, NULL, b->s, n);
		else if (n && strspn(b->s, "0123456789.") == n)
			ig_json_fixed(out, "uptime", strtod(b->s, NULL), 2);
	}

	read_records(vmstat_fd, b);
	emit_kv(out, "vmstat", b->s, b->len);

	ig_json_arr_begin(out, "nodes");
	for (int i = 0; i < nnodes; i++) {
		int n = node_ids[i];
		ig_json_obj_begin(out, NULL);
		ig_json_int(out, "node", n);
		pread_all(numastat_fd[i], b);
		emit_kv(out, "numastat", b->s, b->len);
		pread_all(meminfo_fd[i], b);
		emit_kv(out, "meminfo", b->s, b->len);
		ig_json_obj_end(out);
	}
	ig_json_arr_end(out);

	procs_sample(out, b, seq);

	/* Measured last so that it covers everything but formatting these two numbers and the write. */
	int64_t cpu = clock_ns(CLOCK_PROCESS_CPUTIME_ID) - cpu0;
	int64_t wall = clock_ns(CLOCK_MONOTONIC) - wall0;
	ig_json_obj_begin(out, "cost");
	json_us(out, "cpu_s", cpu);
	json_us(out, "wall_s", wall);
	ig_json_obj_end(out);
	ig_json_obj_end(out);
}

int main(int argc, char **argv)
{
	double interval = 1, duration = 0;
	uint64_t every = 1;
	const struct ig_opt opts[] = {{"interval", IG_OPT_SECONDS, .dst = &interval, .min_s = 0.001, .short_name = 'i',
				       .help = "seconds between samples (default 1; 250ms, 1.5s, 2m also)"},
				      {"duration", IG_OPT_SECONDS, .dst = &duration, .min_s = 0, .short_name = 'd',
				       .help = "stop after S seconds (default 0: until SIGTERM/SIGINT)"},
				      {"match", IG_OPT_CALL, .dst = NULL, .call = procs_add_match, .short_name = 'm',
				       .arg = "P", .help = "workload processes: comm starts with P (repeatable)"},
				      {"pid", IG_OPT_CALL, .dst = NULL, .call = procs_add_pid, .short_name = 'p',
				       .help = "workload process N and its descendants (repeatable)"},
				      {"mem-every", IG_OPT_U64, .dst = &every, .min = 1, .max = ULONG_MAX,
				       .help = "read per-process memory (numa_maps) every Nth sample only (default 1)"},
				      {0}};

	ig_init("vnuma-sample");
	procs_init(argc);
	ig_opts_parse(argc, argv, opts,
		      "Prints one JSON line per sample on stdout (see docs/sampling.md).\nWithout --match and --pid, "
		      "processes whose comm starts with 'vnuma-wl-' are watched.\n");
	procs_start((unsigned long)every);

	/* No SA_RESTART: the signal must cut the sleep between samples short. */
	ig_stop_on_signals();
	signal(SIGPIPE, SIG_IGN);

	struct ig_json out;
	struct ig_buf scratch = {0};
	ig_json_init(&out);
	/* A descriptor kept per process and per workload thread: take all the kernel allows (the rest is read by path). */
	struct rlimit rl;
	if (getrlimit(RLIMIT_NOFILE, &rl) == 0) {
		if (rl.rlim_cur < rl.rlim_max) {
			rl.rlim_cur = rl.rlim_max;
			setrlimit(RLIMIT_NOFILE, &rl);
			getrlimit(RLIMIT_NOFILE, &rl);
		}
		fd_ceiling =
			rl.rlim_cur == RLIM_INFINITY || rl.rlim_cur > INT32_MAX ? INT32_MAX : (long)rl.rlim_cur - 8;
	}
	topology_read();
	files_open();

	int64_t t0_ns = clock_ns(CLOCK_MONOTONIC);
	double t0 = (double)t0_ns * 1e-9;
	unsigned long seq = 0;
	for (; !ig_stop_requested; seq++) {
		emit_sample(&out, &scratch, seq, t0_ns);
		/* One write() per line, so a reader never sees half a sample unless we die mid-write. */
		int r = ig_json_print(&out);
		if (r == -EPIPE)
			return 0; /* the reader is gone: nothing left to sample for */
		if (r < 0)
			ig_die(1, -r, "write");

		/*
		 * Deadlines are multiples of the interval from the start, so the
		 * cadence does not drift; a sample that overran skips the
		 * deadlines it missed rather than bursting to catch up.
		 */
		double elapsed = ig_now() - t0;
		double k = (double)(unsigned long)(elapsed / interval) + 1;
		if ((double)(seq + 1) > k)
			k = (double)(seq + 1);
		double next = k * interval;
		if (duration > 0 && next > duration + 1e-6)
			break;
		double at = t0 + next;
		struct timespec ts = {.tv_sec = (time_t)at, .tv_nsec = (long)((at - (double)(time_t)at) * 1e9)};
		if (ts.tv_nsec >= 1000000000L)
			ts.tv_nsec = 999999999L;
		while (!ig_stop_requested && clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) == EINTR)
			;
	}
	/*
	 * Told to stop: one last sample, at the stop. The samples then reach
	 * the end of what was measured without the host waiting out an
	 * interval for the next one.
	 */
	if (ig_stop_requested) {
		emit_sample(&out, &scratch, seq, t0_ns);
		int r = ig_json_print(&out);
		if (r < 0 && r != -EPIPE)
			ig_die(1, -r, "write");
	}
	ig_json_free(&out);
	ig_buf_free(&scratch);
	return 0;
}
