/*
 * vnuma-sample: the in-guest sampler. The scenario runner starts it through
 * the agent's exec op and reads its stdout as a stream, so every sample is one
 * complete JSON line written with a single write(); the host never has to
 * round-trip per sample. The line format is documented in docs/sampling.md.
 *
 * It runs every second in a 2-vCPU TCG guest beside the workloads it watches,
 * so it is libc only (static, like the agent), reads files with plain
 * open/read into reused buffers, and reports its own cost in every line.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define MAX_CPUS 8192
#define MAX_NODES 1024
#define NODE_DIR "/sys/devices/system/node"

static volatile sig_atomic_t stop_requested;

static void on_stop(int sig)
{
	stop_requested = sig;
}

static void oom(void)
{
	static const char msg[] = "vnuma-sample: out of memory\n";
	ssize_t r = write(2, msg, sizeof(msg) - 1);
	(void)r;
	_exit(1);
}

struct buf {
	char *s;
	size_t len, cap;
};

static void buf_reserve(struct buf *b, size_t n)
{
	if (b->len + n + 1 <= b->cap)
		return;
	size_t cap = b->cap ? b->cap : 4096;
	while (cap < b->len + n + 1)
		cap *= 2;
	char *s = realloc(b->s, cap);
	if (!s)
		oom();
	b->s = s;
	b->cap = cap;
}

static void buf_add(struct buf *b, const char *s, size_t n)
{
	buf_reserve(b, n);
	memcpy(b->s + b->len, s, n);
	b->len += n;
	b->s[b->len] = '\0';
}

static void buf_str(struct buf *b, const char *s)
{
	buf_add(b, s, strlen(s));
}

static void buf_printf(struct buf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void buf_printf(struct buf *b, const char *fmt, ...)
{
	va_list ap;

	buf_reserve(b, 64);
	va_start(ap, fmt);
	int n = vsnprintf(b->s + b->len, b->cap - b->len, fmt, ap);
	va_end(ap);
	if (n < 0)
		return;
	if ((size_t)n >= b->cap - b->len) {
		buf_reserve(b, (size_t)n);
		va_start(ap, fmt);
		vsnprintf(b->s + b->len, b->cap - b->len, fmt, ap);
		va_end(ap);
	}
	b->len += (size_t)n;
}

/* Length of the valid UTF-8 sequence at s (at most n bytes), 0 if invalid. */
static size_t utf8_len(const unsigned char *s, size_t n)
{
	size_t len;
	uint32_t cp;

	if (s[0] < 0x80)
		return 1;
	if ((s[0] & 0xe0) == 0xc0)
		len = 2, cp = s[0] & 0x1f;
	else if ((s[0] & 0xf0) == 0xe0)
		len = 3, cp = s[0] & 0x0f;
	else if ((s[0] & 0xf8) == 0xf0)
		len = 4, cp = s[0] & 0x07;
	else
		return 0;
	if (len > n)
		return 0;
	for (size_t i = 1; i < len; i++) {
		if ((s[i] & 0xc0) != 0x80)
			return 0;
		cp = cp << 6 | (s[i] & 0x3f);
	}
	static const uint32_t min[] = {0, 0, 0x80, 0x800, 0x10000};
	if (cp < min[len] || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff))
		return 0;
	return len;
}

/*
 * A task's comm is any bytes a program chose (prctl, argv[0]), so it may hold
 * quotes, control characters or invalid UTF-8; each stray byte becomes
 * \u00XX so the line stays valid JSON for every consumer.
 */
static void buf_json_str(struct buf *b, const char *s, size_t n)
{
	const unsigned char *u = (const unsigned char *)s;

	buf_add(b, "\"", 1);
	for (size_t i = 0; i < n;) {
		unsigned char c = u[i];
		size_t l;
		if (c == '"' || c == '\\') {
			char e[2] = {'\\', (char)c};
			buf_add(b, e, 2);
			i++;
		} else if (c < 0x20 || !(l = utf8_len(u + i, n - i))) {
			buf_printf(b, "\\u%04x", c);
			i++;
		} else {
			buf_add(b, s + i, l);
			i += l;
		}
	}
	buf_add(b, "\"", 1);
}

/* Whole file into b (reset first). Returns 0 or -errno. */
static int read_file(const char *path, struct buf *b)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	b->len = 0;
	buf_reserve(b, 4096);
	b->s[0] = '\0';
	if (fd < 0)
		return -errno;
	for (;;) {
		buf_reserve(b, 4096);
		ssize_t r = read(fd, b->s + b->len, b->cap - b->len - 1);
		if (r < 0) {
			if (errno == EINTR)
				continue;
			int e = -errno;
			close(fd);
			return e;
		}
		if (r == 0)
			break;
		b->len += (size_t)r;
	}
	b->s[b->len] = '\0';
	close(fd);
	return 0;
}

static double now(clockid_t clk)
{
	struct timespec ts;

	clock_gettime(clk, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* ---- topology, read once ---- */

static int nnodes;              /* online nodes */
static int node_ids[MAX_NODES]; /* their ids, ascending */
static int node_limit;          /* highest node id + 1 */
static short cpu_node[MAX_CPUS];

/* Kernel cpulist ("0-3,8,10-11"); calls fn for every member below limit. */
static void cpulist_each(const char *s, int limit, void (*fn)(int, void *), void *arg)
{
	while (*s && *s != '\n') {
		char *end;
		long a = strtol(s, &end, 10), b = a;
		if (end == s)
			return;
		s = end;
		if (*s == '-') {
			b = strtol(s + 1, &end, 10);
			s = end;
		}
		for (long i = a; i <= b && i < limit; i++)
			if (i >= 0)
				fn((int)i, arg);
		if (*s == ',')
			s++;
		else
			break;
	}
}

static void add_node(int n, void *arg)
{
	if (nnodes < MAX_NODES)
		node_ids[nnodes++] = n;
}

static void set_cpu_node(int cpu, void *arg)
{
	cpu_node[cpu] = (short)*(int *)arg;
}

static void topology_read(struct buf *b)
{
	char path[128];

	if (read_file(NODE_DIR "/online", b) < 0) {
		/* No NUMA in this kernel: everything is node 0. */
		nnodes = 1;
		node_ids[0] = 0;
		node_limit = 1;
		return;
	}
	for (int c = 0; c < MAX_CPUS; c++)
		cpu_node[c] = -1;
	cpulist_each(b->s, MAX_NODES, add_node, NULL);
	for (int i = 0; i < nnodes; i++) {
		int n = node_ids[i];
		node_limit = n + 1;
		snprintf(path, sizeof(path), NODE_DIR "/node%d/cpulist", n);
		if (read_file(path, b) == 0)
			cpulist_each(b->s, MAX_CPUS, set_cpu_node, &n);
	}
}

static int node_of_cpu(long cpu)
{
	return cpu >= 0 && cpu < MAX_CPUS ? cpu_node[cpu] : -1;
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
 */
static void emit_kv(struct buf *out, const char *text)
{
	bool first = true;

	buf_add(out, "{", 1);
	for (const char *line = text; *line;) {
		const char *eol = strchr(line, '\n');
		const char *end = eol ? eol : line + strlen(line);
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
		while (p < end && *p != ' ' && *p != ':' && *p != '\t')
			p++;
		size_t klen = (size_t)(p - key);
		while (p < end && (*p == ' ' || *p == ':' || *p == '\t'))
			p++;
		const char *val = p;
		while (p < end && *p != ' ')
			p++;
		size_t vlen = (size_t)(p - val);
		if (!klen || !vlen || !is_int(val, vlen))
			continue;
		while (p < end && *p == ' ')
			p++;
		bool kb = end - p >= 2 && memcmp(p, "kB", 2) == 0;

		if (!first)
			buf_add(out, ",", 1);
		first = false;
		buf_add(out, "\"", 1);
		buf_add(out, key, klen);
		if (kb)
			buf_add(out, "_kB", 3);
		buf_add(out, "\":", 2);
		buf_add(out, val, vlen);
	}
	buf_add(out, "}", 1);
}

/* ---- processes ---- */

struct proc {
	int pid, ppid;
	bool wl;
	char comm[64];
	size_t comm_len;
};

static char **match_prefixes;
static size_t nmatch;
static int *want_pids;
static size_t nwant;

static struct proc *procs;
static size_t nprocs, procs_cap;

/*
 * Split the fields after comm. comm is "(...)" and may itself hold spaces and
 * parentheses, so the fields start after the last ')'. Returns the number of
 * fields stored; f[0] is field 3 (state).
 */
static int stat_fields(char *s, char **comm, size_t *comm_len, char **f, int max)
{
	char *open = strchr(s, '(');
	char *close = strrchr(s, ')');
	int n = 0;

	if (!open || !close || close < open)
		return -1;
	if (comm) {
		*comm = open + 1;
		*comm_len = (size_t)(close - open - 1);
	}
	for (char *p = close + 1; *p && n < max;) {
		while (*p == ' ')
			p++;
		if (!*p || *p == '\n')
			break;
		f[n++] = p;
		while (*p && *p != ' ' && *p != '\n')
			p++;
		if (*p)
			*p++ = '\0';
	}
	return n;
}

static int proc_cmp(const void *a, const void *b)
{
	const struct proc *x = a, *y = b;
	return (x->pid > y->pid) - (x->pid < y->pid);
}

static struct proc *proc_find(int pid)
{
	struct proc key = {.pid = pid};
	return bsearch(&key, procs, nprocs, sizeof(*procs), proc_cmp);
}

static bool is_wanted(const struct proc *p)
{
	for (size_t i = 0; i < nwant; i++)
		if (want_pids[i] == p->pid)
			return true;
	for (size_t i = 0; i < nmatch; i++) {
		size_t l = strlen(match_prefixes[i]);
		if (p->comm_len >= l && memcmp(p->comm, match_prefixes[i], l) == 0)
			return true;
	}
	return false;
}

/* One pass over /proc/[0-9]*\/stat, then workload membership by ppid closure. */
static void procs_scan(struct buf *b)
{
	DIR *d = opendir("/proc");
	struct dirent *de;
	char path[64];
	int self = getpid();

	nprocs = 0;
	if (!d)
		return;
	while ((de = readdir(d))) {
		char *end;
		long pid = strtol(de->d_name, &end, 10);
		if (*end || pid <= 0 || pid == self)
			continue;
		snprintf(path, sizeof(path), "/proc/%ld/stat", pid);
		if (read_file(path, b) < 0)
			continue; /* exited since readdir */
		char *comm, *f[2];
		size_t comm_len;
		if (stat_fields(b->s, &comm, &comm_len, f, 2) < 2)
			continue;
		if (nprocs == procs_cap) {
			procs_cap = procs_cap ? 2 * procs_cap : 256;
			procs = realloc(procs, procs_cap * sizeof(*procs));
			if (!procs)
				oom();
		}
		struct proc *p = &procs[nprocs++];
		p->pid = (int)pid;
		p->ppid = atoi(f[1]);
		p->comm_len = comm_len < sizeof(p->comm) ? comm_len : sizeof(p->comm) - 1;
		memcpy(p->comm, comm, p->comm_len);
		p->comm[p->comm_len] = '\0';
		p->wl = is_wanted(p);
	}
	closedir(d);
	qsort(procs, nprocs, sizeof(*procs), proc_cmp);
	/* Descendants: each pass adds one generation; trees are shallow. */
	for (bool changed = true; changed;) {
		changed = false;
		for (size_t i = 0; i < nprocs; i++) {
			if (procs[i].wl)
				continue;
			struct proc *parent = proc_find(procs[i].ppid);
			if (parent && parent->wl) {
				procs[i].wl = true;
				changed = true;
			}
		}
	}
}

static uint64_t mem_kb[MAX_NODES];
static uint64_t line_pages[MAX_NODES];

/*
 * numa_maps: every mapping line has N<node>=<pages> fields, counted in the
 * mapping's own page size (kernelpagesize_kB, which follows them on the line:
 * 2048 for hugetlb), so sum per line and scale at the end of it.
 */
static int read_numa_maps(int pid, struct buf *b)
{
	char path[64];

	memset(mem_kb, 0, sizeof(mem_kb[0]) * (size_t)node_limit);
	snprintf(path, sizeof(path), "/proc/%d/numa_maps", pid);
	int r = read_file(path, b);
	if (r < 0)
		return r;
	for (char *line = b->s; *line;) {
		char *eol = strchr(line, '\n');
		if (eol)
			*eol = '\0';
		uint64_t ps_kb = 4;
		bool any = false;
		for (char *t = line; *t;) {
			while (*t == ' ')
				t++;
			char *te = t;
			while (*te && *te != ' ')
				te++;
			if (t[0] == 'N' && t[1] >= '0' && t[1] <= '9') {
				char *e;
				unsigned long n = strtoul(t + 1, &e, 10);
				if (*e == '=' && n < (unsigned long)node_limit) {
					if (!any)
						memset(line_pages, 0, sizeof(line_pages[0]) * (size_t)node_limit);
					any = true;
					line_pages[n] += strtoull(e + 1, NULL, 10);
				}
			} else if (strncmp(t, "kernelpagesize_kB=", 18) == 0) {
				ps_kb = strtoull(t + 18, NULL, 10);
			}
			t = te;
		}
		if (any)
			for (int n = 0; n < node_limit; n++)
				mem_kb[n] += line_pages[n] * ps_kb;
		if (!eol)
			break;
		line = eol + 1;
	}
	return 0;
}

static unsigned running[MAX_NODES];

/* Appends ,"threads":[...]; returns how many threads it found. */
static int emit_threads(struct buf *out, int pid, struct buf *b)
{
	char path[96];
	DIR *d;
	struct dirent *de;
	int n = 0;

	snprintf(path, sizeof(path), "/proc/%d/task", pid);
	d = opendir(path);
	if (!d)
		return 0;
	buf_str(out, ",\"threads\":[");
	while ((de = readdir(d))) {
		char *end;
		long tid = strtol(de->d_name, &end, 10);
		if (*end || tid <= 0)
			continue;
		snprintf(path, sizeof(path), "/proc/%d/task/%ld/stat", pid, tid);
		if (read_file(path, b) < 0)
			continue;
		char *f[37];
		/* f[0] is field 3 (state), so field 39 (processor) is f[36]. */
		if (stat_fields(b->s, NULL, NULL, f, 37) < 37)
			continue;
		long cpu = strtol(f[36], NULL, 10);
		int node = node_of_cpu(cpu);
		char state = f[0][0];
		if (state == 'R' && node >= 0)
			running[node]++;
		buf_printf(out, "%s{\"tid\":%ld,\"cpu\":%ld,\"node\":%d,\"state\":", n ? "," : "", tid, cpu, node);
		buf_json_str(out, &state, 1);
		buf_add(out, "}", 1);
		n++;
	}
	closedir(d);
	buf_add(out, "]", 1);
	return n;
}

/* numa_maps walks every page table entry of the process, which dominates a sample's cost with big workloads. */
static unsigned long mem_every = 1;

static void emit_procs(struct buf *out, struct buf *b, bool with_mem)
{
	int emitted = 0;

	buf_str(out, ",\"procs\":[");
	for (size_t i = 0; i < nprocs; i++) {
		const struct proc *p = &procs[i];
		if (!p->wl)
			continue;
		size_t mark = out->len;
		buf_printf(out, "%s{\"pid\":%d,\"comm\":", emitted ? "," : "", p->pid);
		buf_json_str(out, p->comm, p->comm_len);
		/* Absent, not zero, when not read: zero would claim the memory left every node. */
		if (with_mem && read_numa_maps(p->pid, b) == 0) {
			buf_str(out, ",\"mem_kb_per_node\":{");
			for (int k = 0; k < nnodes; k++)
				buf_printf(out, "%s\"%d\":%llu", k ? "," : "", node_ids[k],
					   (unsigned long long)mem_kb[node_ids[k]]);
			buf_add(out, "}", 1);
		}
		/* A process that exited between the scan and now has no threads left. */
		if (emit_threads(out, p->pid, b) == 0) {
			out->len = mark;
			out->s[mark] = '\0';
			continue;
		}
		buf_add(out, "}", 1);
		emitted++;
	}
	buf_add(out, "]", 1);
}

/* ---- one sample ---- */

static void emit_sample(struct buf *out, struct buf *b, unsigned long seq, double t0)
{
	char path[128];
	double wall0 = now(CLOCK_MONOTONIC);
	double cpu0 = now(CLOCK_PROCESS_CPUTIME_ID);

	out->len = 0;
	buf_printf(out, "{\"seq\":%lu,\"t\":%.6f", seq, wall0 - t0);

	if (read_file("/proc/uptime", b) == 0) {
		size_t n = strcspn(b->s, " \n");
		if (n && strspn(b->s, "0123456789.") == n) {
			buf_str(out, ",\"uptime\":");
			buf_add(out, b->s, n);
		}
	}

	buf_str(out, ",\"vmstat\":");
	read_file("/proc/vmstat", b);
	emit_kv(out, b->s);

	buf_str(out, ",\"nodes\":[");
	for (int i = 0; i < nnodes; i++) {
		int n = node_ids[i];
		buf_printf(out, "%s{\"node\":%d,\"numastat\":", i ? "," : "", n);
		snprintf(path, sizeof(path), NODE_DIR "/node%d/numastat", n);
		read_file(path, b);
		emit_kv(out, b->s);
		buf_str(out, ",\"meminfo\":");
		snprintf(path, sizeof(path), NODE_DIR "/node%d/meminfo", n);
		read_file(path, b);
		emit_kv(out, b->s);
		buf_add(out, "}", 1);
	}
	buf_add(out, "]", 1);

	memset(running, 0, sizeof(running[0]) * (size_t)node_limit);
	procs_scan(b);
	emit_procs(out, b, seq % mem_every == 0);

	buf_str(out, ",\"running_per_node\":{");
	for (int i = 0; i < nnodes; i++)
		buf_printf(out, "%s\"%d\":%u", i ? "," : "", node_ids[i], running[node_ids[i]]);
	buf_add(out, "}", 1);

	/* Measured last so that it covers everything but formatting these two numbers and the write. */
	double cpu = now(CLOCK_PROCESS_CPUTIME_ID) - cpu0;
	double wall = now(CLOCK_MONOTONIC) - wall0;
	buf_printf(out, ",\"cost\":{\"cpu_s\":%.6f,\"wall_s\":%.6f}}\n", cpu, wall);
}

/* One write() per line, so a reader never sees half a sample unless we die mid-write. */
static int write_all(const char *s, size_t n)
{
	while (n) {
		ssize_t r = write(1, s, n);
		if (r < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		s += r;
		n -= (size_t)r;
	}
	return 0;
}

static void usage(FILE *f)
{
	fputs("usage: vnuma-sample [--interval S] [--duration S] [--match PREFIX]... [--pid N]... [--mem-every N]\n"
	      "  Prints one JSON line per sample on stdout (see docs/sampling.md).\n"
	      "  --interval S   seconds between samples (default 1)\n"
	      "  --duration S   stop after S seconds (default 0: until SIGTERM/SIGINT)\n"
	      "  --match P      workload processes: comm starts with P (repeatable)\n"
	      "  --pid N        workload process N and its descendants (repeatable)\n"
	      "  --mem-every N  read per-process memory (numa_maps) every Nth sample only (default 1)\n"
	      "  Without --match and --pid, processes whose comm starts with 'vnuma-wl-' are watched.\n",
	      f);
}

static bool parse_seconds(const char *s, double *out)
{
	char *end;
	errno = 0;
	double v = strtod(s, &end);
	if (errno || end == s || *end || !(v >= 0) || v > 1e9)
		return false;
	*out = v;
	return true;
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{"interval", required_argument, NULL, 'i'}, {"duration", required_argument, NULL, 'd'},
		{"match", required_argument, NULL, 'm'},    {"pid", required_argument, NULL, 'p'},
		{"mem-every", required_argument, NULL, 'M'}, {"help", no_argument, NULL, 'h'},
		{NULL, 0, NULL, 0},
	};
	double interval = 1, duration = 0;
	int c;

	match_prefixes = calloc((size_t)argc + 1, sizeof(*match_prefixes));
	want_pids = calloc((size_t)argc + 1, sizeof(*want_pids));
	if (!match_prefixes || !want_pids)
		oom();
	while ((c = getopt_long(argc, argv, "i:d:m:p:h", opts, NULL)) != -1) {
		char *end;
		long v;
		switch (c) {
		case 'i':
			if (!parse_seconds(optarg, &interval) || interval < 0.001) {
				fprintf(stderr, "vnuma-sample: --interval: want seconds >= 0.001, got '%s'\n", optarg);
				return 2;
			}
			break;
		case 'd':
			if (!parse_seconds(optarg, &duration)) {
				fprintf(stderr, "vnuma-sample: --duration: want seconds >= 0, got '%s'\n", optarg);
				return 2;
			}
			break;
		case 'm':
			match_prefixes[nmatch++] = optarg;
			break;
		case 'p':
			errno = 0;
			v = strtol(optarg, &end, 10);
			if (errno || end == optarg || *end || v <= 0 || v > INT32_MAX) {
				fprintf(stderr, "vnuma-sample: --pid: want a process id, got '%s'\n", optarg);
				return 2;
			}
			want_pids[nwant++] = (int)v;
			break;
		case 'M':
			errno = 0;
			v = strtol(optarg, &end, 10);
			if (errno || end == optarg || *end || v < 1) {
				fprintf(stderr, "vnuma-sample: --mem-every: want a count >= 1, got '%s'\n", optarg);
				return 2;
			}
			mem_every = (unsigned long)v;
			break;
		case 'h':
			usage(stdout);
			return 0;
		default:
			usage(stderr);
			return 2;
		}
	}
	if (optind < argc) {
		fprintf(stderr, "vnuma-sample: unexpected argument '%s'\n", argv[optind]);
		return 2;
	}
	if (!nmatch && !nwant)
		match_prefixes[nmatch++] = "vnuma-wl-";

	/* No SA_RESTART: the signal must cut the sleep between samples short. */
	struct sigaction sa = {.sa_handler = on_stop};
	sigemptyset(&sa.sa_mask);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);
	signal(SIGPIPE, SIG_IGN);

	struct buf out = {0}, scratch = {0};
	topology_read(&scratch);

	double t0 = now(CLOCK_MONOTONIC);
	for (unsigned long seq = 0; !stop_requested; seq++) {
		emit_sample(&out, &scratch, seq, t0);
		int r = write_all(out.s, out.len);
		if (r == -EPIPE)
			return 0; /* the reader is gone: nothing left to sample for */
		if (r < 0) {
			fprintf(stderr, "vnuma-sample: write: %s\n", strerror(-r));
			return 1;
		}

		/*
		 * Deadlines are multiples of the interval from the start, so the
		 * cadence does not drift; a sample that overran skips the
		 * deadlines it missed rather than bursting to catch up.
		 */
		double elapsed = now(CLOCK_MONOTONIC) - t0;
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
		while (!stop_requested && clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) == EINTR)
			;
	}
	free(out.s);
	free(scratch.s);
	return 0;
}
