/*
 * vnuma-sample: the in-guest sampler. The scenario runner starts it through
 * the agent's exec op and reads its stdout as a stream, so every sample is one
 * complete JSON line written with a single write(); the host never has to
 * round-trip per sample. The line format is documented in docs/sampling.md.
 *
 * It runs every second in a 2-vCPU TCG guest beside the workloads it watches,
 * so it is libc only (static, like the agent), reads files with plain
 * open/read into reused buffers, and reports its own cost in every line.
 * Its buffers, JSON writer, options and node map are the in-guest support
 * library's (src/inguest), which the workloads use too.
 */
#include "inguest/inguest.h"

#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

/* ---- topology, read once ---- */

static struct ig_topo topo;
static int nnodes;                 /* online nodes */
static int node_ids[VN_MAX_NODES]; /* their ids, ascending */

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
 */
static void emit_kv(struct ig_json *out, const char *name, const char *text)
{
	ig_json_obj_begin(out, name);
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
		/* The kernel's names are short identifiers; a line that is not one is skipped. */
		char k[128];
		if (!klen || klen > sizeof(k) - 4 || !vlen || !is_int(val, vlen))
			continue;
		while (p < end && *p == ' ')
			p++;
		bool kb = end - p >= 2 && memcmp(p, "kB", 2) == 0;

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
static void procs_scan(struct ig_buf *b)
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
		if (ig_read_file(path, b) < 0)
			continue; /* exited since readdir */
		char *comm, *f[2];
		size_t comm_len;
		if (stat_fields(b->s, &comm, &comm_len, f, 2) < 2)
			continue;
		if (nprocs == procs_cap) {
			procs_cap = procs_cap ? 2 * procs_cap : 256;
			procs = realloc(procs, procs_cap * sizeof(*procs));
			if (!procs)
				ig_oom("process table");
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

static uint64_t mem_kb[VN_MAX_NODES];
static uint64_t line_pages[VN_MAX_NODES];

/*
 * numa_maps: every mapping line has N<node>=<pages> fields, counted in the
 * mapping's own page size (kernelpagesize_kB, which follows them on the line:
 * 2048 for hugetlb), so sum per line and scale at the end of it.
 */
static int read_numa_maps(int pid, struct ig_buf *b)
{
	char path[64];

	memset(mem_kb, 0, sizeof(mem_kb[0]) * (size_t)topo.nr_nodes);
	snprintf(path, sizeof(path), "/proc/%d/numa_maps", pid);
	int r = ig_read_file(path, b);
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
				if (*e == '=' && n < (unsigned long)topo.nr_nodes) {
					if (!any)
						memset(line_pages, 0, sizeof(line_pages[0]) * (size_t)topo.nr_nodes);
					any = true;
					line_pages[n] += strtoull(e + 1, NULL, 10);
				}
			} else if (strncmp(t, "kernelpagesize_kB=", 18) == 0) {
				ps_kb = strtoull(t + 18, NULL, 10);
			}
			t = te;
		}
		if (any)
			for (int n = 0; n < topo.nr_nodes; n++)
				mem_kb[n] += line_pages[n] * ps_kb;
		if (!eol)
			break;
		line = eol + 1;
	}
	return 0;
}

static unsigned running[VN_MAX_NODES];

/* Adds "threads":[...]; returns how many threads it found. */
static int emit_threads(struct ig_json *out, int pid, struct ig_buf *b)
{
	char path[96];
	DIR *d;
	struct dirent *de;
	int n = 0;

	snprintf(path, sizeof(path), "/proc/%d/task", pid);
	d = opendir(path);
	if (!d)
		return 0;
	ig_json_arr_begin(out, "threads");
	while ((de = readdir(d))) {
		char *end;
		long tid = strtol(de->d_name, &end, 10);
		if (*end || tid <= 0)
			continue;
		snprintf(path, sizeof(path), "/proc/%d/task/%ld/stat", pid, tid);
		if (ig_read_file(path, b) < 0)
			continue;
		char *f[37];
		/* f[0] is field 3 (state), so field 39 (processor) is f[36]. */
		if (stat_fields(b->s, NULL, NULL, f, 37) < 37)
			continue;
		long cpu = strtol(f[36], NULL, 10);
		int node = cpu >= INT32_MIN && cpu <= INT32_MAX ? ig_topo_node_of_cpu(&topo, (int)cpu) : -1;
		char state = f[0][0];
		if (state == 'R' && node >= 0)
			running[node]++;
		ig_json_obj_begin(out, NULL);
		ig_json_int(out, "tid", tid);
		ig_json_int(out, "cpu", cpu);
		ig_json_int(out, "node", node);
		ig_json_str_n(out, "state", &state, 1);
		ig_json_obj_end(out);
		n++;
	}
	closedir(d);
	ig_json_arr_end(out);
	return n;
}

/* numa_maps walks every page table entry of the process, which dominates a sample's cost with big workloads. */
static unsigned long mem_every = 1;

static void emit_procs(struct ig_json *out, struct ig_buf *b, bool with_mem)
{
	ig_json_arr_begin(out, "procs");
	for (size_t i = 0; i < nprocs; i++) {
		const struct proc *p = &procs[i];
		if (!p->wl)
			continue;
		struct ig_json_mark mark = ig_json_mark(out);
		ig_json_obj_begin(out, NULL);
		ig_json_int(out, "pid", p->pid);
		ig_json_str_n(out, "comm", p->comm, p->comm_len);
		/* Absent, not zero, when not read: zero would claim the memory left every node. */
		if (with_mem && read_numa_maps(p->pid, b) == 0) {
			char k[16];
			ig_json_obj_begin(out, "mem_kb_per_node");
			for (int n = 0; n < nnodes; n++) {
				snprintf(k, sizeof(k), "%d", node_ids[n]);
				ig_json_uint(out, k, mem_kb[node_ids[n]]);
			}
			ig_json_obj_end(out);
		}
		/* A process that exited between the scan and now has no threads left. */
		if (emit_threads(out, p->pid, b) == 0) {
			ig_json_rewind(out, mark);
			continue;
		}
		ig_json_obj_end(out);
	}
	ig_json_arr_end(out);
}

/* ---- one sample ---- */

static void emit_sample(struct ig_json *out, struct ig_buf *b, unsigned long seq, double t0)
{
	char path[128], k[16];
	double wall0 = ig_now();
	double cpu0 = ig_process_cpu_time();

	ig_json_reset(out);
	ig_json_obj_begin(out, NULL);
	ig_json_uint(out, "seq", seq);
	ig_json_fixed(out, "t", wall0 - t0, 6);

	/* "12345.67 23456.78": seconds with two decimals, as the kernel prints them. */
	if (ig_read_file("/proc/uptime", b) == 0) {
		size_t n = strcspn(b->s, " \n");
		if (n && strspn(b->s, "0123456789.") == n)
			ig_json_fixed(out, "uptime", strtod(b->s, NULL), 2);
	}

	ig_read_file("/proc/vmstat", b);
	emit_kv(out, "vmstat", b->s);

	ig_json_arr_begin(out, "nodes");
	for (int i = 0; i < nnodes; i++) {
		int n = node_ids[i];
		ig_json_obj_begin(out, NULL);
		ig_json_int(out, "node", n);
		snprintf(path, sizeof(path), IG_NODE_DIR "/node%d/numastat", n);
		ig_read_file(path, b);
		emit_kv(out, "numastat", b->s);
		snprintf(path, sizeof(path), IG_NODE_DIR "/node%d/meminfo", n);
		ig_read_file(path, b);
		emit_kv(out, "meminfo", b->s);
		ig_json_obj_end(out);
	}
	ig_json_arr_end(out);

	memset(running, 0, sizeof(running[0]) * (size_t)topo.nr_nodes);
	procs_scan(b);
	emit_procs(out, b, seq % mem_every == 0);

	ig_json_obj_begin(out, "running_per_node");
	for (int i = 0; i < nnodes; i++) {
		snprintf(k, sizeof(k), "%d", node_ids[i]);
		ig_json_uint(out, k, running[node_ids[i]]);
	}
	ig_json_obj_end(out);

	/* Measured last so that it covers everything but formatting these two numbers and the write. */
	double cpu = ig_process_cpu_time() - cpu0;
	double wall = ig_now() - wall0;
	ig_json_obj_begin(out, "cost");
	ig_json_fixed(out, "cpu_s", cpu, 6);
	ig_json_fixed(out, "wall_s", wall, 6);
	ig_json_obj_end(out);
	ig_json_obj_end(out);
}

static void add_match(const struct ig_opt *opt, const char *val)
{
	match_prefixes[nmatch++] = (char *)val;
}

static void add_pid(const struct ig_opt *opt, const char *val)
{
	want_pids[nwant++] = (int)ig_opt_uint(opt->name, val, 1, INT32_MAX);
}

int main(int argc, char **argv)
{
	double interval = 1, duration = 0;
	uint64_t every = 1;
	const struct ig_opt opts[] = {{"interval", IG_OPT_SECONDS, .dst = &interval, .min_s = 0.001, .short_name = 'i',
				       .help = "seconds between samples (default 1; 250ms, 1.5s, 2m also)"},
				      {"duration", IG_OPT_SECONDS, .dst = &duration, .min_s = 0, .short_name = 'd',
				       .help = "stop after S seconds (default 0: until SIGTERM/SIGINT)"},
				      {"match", IG_OPT_CALL, .dst = NULL, .call = add_match, .short_name = 'm',
				       .arg = "P", .help = "workload processes: comm starts with P (repeatable)"},
				      {"pid", IG_OPT_CALL, .dst = NULL, .call = add_pid, .short_name = 'p',
				       .help = "workload process N and its descendants (repeatable)"},
				      {"mem-every", IG_OPT_U64, .dst = &every, .min = 1, .max = ULONG_MAX,
				       .help = "read per-process memory (numa_maps) every Nth sample only (default 1)"},
				      {0}};

	ig_init("vnuma-sample");
	/* Each repeatable option takes at least one argument: argc bounds them. */
	match_prefixes = calloc((size_t)argc + 1, sizeof(*match_prefixes));
	want_pids = calloc((size_t)argc + 1, sizeof(*want_pids));
	if (!match_prefixes || !want_pids)
		ig_oom("option lists");
	ig_opts_parse(argc, argv, opts,
		      "Prints one JSON line per sample on stdout (see docs/sampling.md).\nWithout --match and --pid, "
		      "processes whose comm starts with 'vnuma-wl-' are watched.\n");
	mem_every = (unsigned long)every;
	if (!nmatch && !nwant)
		match_prefixes[nmatch++] = "vnuma-wl-";

	/* No SA_RESTART: the signal must cut the sleep between samples short. */
	ig_stop_on_signals();
	signal(SIGPIPE, SIG_IGN);

	struct ig_json out;
	struct ig_buf scratch = {0};
	ig_json_init(&out);
	topology_read();

	double t0 = ig_now();
	for (unsigned long seq = 0; !ig_stop_requested; seq++) {
		emit_sample(&out, &scratch, seq, t0);
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
	ig_json_free(&out);
	ig_buf_free(&scratch);
	return 0;
}
