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
#include "inguest/inguest.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
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
 * "key":text, where key needs no escaping and text is a JSON number: the
 * writer's own comma and key logic, without its printf.
 */
static void member_raw(struct ig_json *out, const char *key, size_t klen, bool kb, const char *val, size_t vlen)
{
	ig_buf_reserve(&out->b, klen + vlen + 8);
	char *w = out->b.s + out->b.len;
	if (!out->first[out->depth])
		*w++ = ',';
	out->first[out->depth] = false;
	*w++ = '"';
	memcpy(w, key, klen);
	w += klen;
	if (kb) {
		memcpy(w, "_kB", 3);
		w += 3;
	}
	*w++ = '"';
	*w++ = ':';
	memcpy(w, val, vlen);
	w += vlen;
	*w = '\0';
	out->b.len = (size_t)(w - out->b.s);
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
			member_raw(out, key, klen, kb, val, vlen);
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

/* ---- files kept open ---- */

/*
 * The whole file at fd into b, read from offset 0 again: procfs and sysfs
 * regenerate the text on each read at 0, so a file opened once serves every
 * sample without the open and close (a third of a read's cost under TCG).
 * Returns 0 or -errno, b->s "" on error.
 *
 * A file of one record (a sysfs attribute, /proc/PID/stat and comm,
 * loadavg, uptime: the kernel makes all of its text in one go) is one
 * pread into a buffer that held it whole. A file of many records
 * (/proc/vmstat, numa_maps) may come in pieces of a page, so it is read
 * from 0 until EOF; pread at each offset would make the kernel regenerate
 * everything before it.
 */
static int read_records(int fd, struct ig_buf *b)
{
	ig_buf_clear(b);
	if (fd < 0)
		return -ENOENT;
	if (lseek(fd, 0, SEEK_SET) < 0)
		return -errno;
	for (;;) {
		ig_buf_reserve(b, 4096);
		ssize_t r = read(fd, b->s + b->len, b->cap - b->len - 1);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0) {
			int e = -errno;
			ig_buf_clear(b);
			return e;
		}
		if (r == 0)
			break;
		b->len += (size_t)r;
	}
	b->s[b->len] = '\0';
	return 0;
}

static int pread_all(int fd, struct ig_buf *b)
{
	ig_buf_clear(b);
	if (fd < 0)
		return -ENOENT;
	for (;;) {
		ig_buf_reserve(b, 4096);
		ssize_t r = pread(fd, b->s, b->cap - 1, 0);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0) {
			int e = -errno;
			ig_buf_clear(b);
			return e;
		}
		if ((size_t)r < b->cap - 1) {
			b->len = (size_t)r;
			b->s[b->len] = '\0';
			return 0;
		}
		/* It filled the buffer: perhaps not all of it. Twice the room, from 0 again. */
		b->len = b->cap;
	}
}

__attribute__((format(printf, 1, 2))) static int open_ro(const char *fmt, ...)
{
	char path[96];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(path, sizeof(path), fmt, ap);
	va_end(ap);
	return open(path, O_RDONLY | O_CLOEXEC);
}

/*
 * A per-task file that is read by its path each time instead of through a
 * kept descriptor: kernel threads (read only when the table is synced) and
 * whatever did not get a descriptor because the sampler had too many open.
 */
#define NOT_KEPT (-2)

/* Descriptors from here up are not kept: opendir and the reads by path need a few. */
static long fd_ceiling = 1024 - 8;

/* A descriptor to keep, NOT_KEPT if out of descriptors, or -1 if the file is not there (the task is gone). */
__attribute__((format(printf, 1, 2))) static int open_kept(const char *fmt, ...)
{
	char path[96];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(path, sizeof(path), fmt, ap);
	va_end(ap);
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd >= fd_ceiling) {
		close(fd);
		return NOT_KEPT;
	}
	return fd < 0 && (errno == EMFILE || errno == ENFILE) ? NOT_KEPT : fd;
}

/* The file through fd, or by its path (fmt...) when it is NOT_KEPT; 0 or -errno. */
__attribute__((format(printf, 3, 4))) static int read_kept(int fd, struct ig_buf *b, const char *fmt, ...)
{
	char path[96];
	va_list ap;

	if (fd != NOT_KEPT)
		return pread_all(fd, b);
	va_start(ap, fmt);
	vsnprintf(path, sizeof(path), fmt, ap);
	va_end(ap);
	return ig_read_file(path, b);
}

static void close_fd(int *fd)
{
	if (*fd >= 0)
		close(*fd);
	*fd = -1;
}

/* ---- processes ---- */

/*
 * A task's stat file, kept open: the descriptor is bound to that task, not
 * to its number, so once the task is gone a read fails (ESRCH) even if the
 * number was handed to a new one.
 */
struct task {
	int tid, fd;
};

struct proc {
	int pid, ppid;
	int fd;      /* /proc/PID/stat */
	int comm_fd; /* /proc/PID/comm, for user processes: a sixth of the cost of stat */
	int maps_fd; /* /proc/PID/numa_maps, opened when first read */
	bool wl, kthread, seen;
	char comm[64];
	size_t comm_len;
	struct task *tasks; /* ascending tid, as /proc/PID/task lists them */
	size_t ntasks, tasks_cap;
	bool tasks_listed;
};

static char **match_prefixes;
static size_t nmatch;
static int *want_pids;
static size_t nwant;

/* Ascending pid. */
static struct proc *procs;
static size_t nprocs, procs_cap;

/*
 * /proc/loadavg's last two numbers: how many tasks exist (until reaped) and
 * the last pid handed out, to a process or a thread. While both stay the
 * same no task has appeared or been reaped.
 */
static int loadavg_fd = -1;
static long tasks_seen = -1, last_pid_seen = -1;

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

static void proc_forget_tasks(struct proc *p)
{
	for (size_t i = 0; i < p->ntasks; i++)
		close_fd(&p->tasks[i].fd);
	p->ntasks = 0;
	p->tasks_listed = false;
}

static void proc_drop(struct proc *p)
{
	close_fd(&p->fd);
	close_fd(&p->comm_fd);
	close_fd(&p->maps_fd);
	proc_forget_tasks(p);
	free(p->tasks);
}

#define PF_KTHREAD 0x00200000 /* stat field 9 (flags): a kernel thread, which never runs a program */

/* Reads p's stat through its open fd; false if the process is gone or the text is not a stat line. */
static bool proc_read(struct proc *p, struct ig_buf *b)
{
	char *comm, *f[7];
	size_t comm_len;

	if (read_kept(p->fd, b, "/proc/%d/stat", p->pid) < 0 || stat_fields(b->s, &comm, &comm_len, f, 7) < 7)
		return false;
	p->ppid = atoi(f[1]);
	p->kthread = (strtoul(f[6], NULL, 10) & PF_KTHREAD) != 0;
	p->comm_len = comm_len < sizeof(p->comm) ? comm_len : sizeof(p->comm) - 1;
	memcpy(p->comm, comm, p->comm_len);
	p->comm[p->comm_len] = '\0';
	return true;
}

/* Reads p's comm alone; false if the process is gone. */
static bool proc_read_comm(struct proc *p, struct ig_buf *b)
{
	/* The kernel's "%s\n" of the same name stat puts between the parentheses. */
	if (read_kept(p->comm_fd, b, "/proc/%d/comm", p->pid) < 0 || !b->len || b->s[b->len - 1] != '\n')
		return false;
	size_t n = b->len - 1;
	p->comm_len = n < sizeof(p->comm) ? n : sizeof(p->comm) - 1;
	memcpy(p->comm, b->s, p->comm_len);
	p->comm[p->comm_len] = '\0';
	return true;
}

/*
 * Opens /proc/PID/stat for a process first met (or met again at a sync) and
 * reads it. A kernel thread keeps no descriptor: it is read only at syncs,
 * and then afresh, whatever its pid now holds.
 */
static bool proc_open(struct proc *p, int pid, struct ig_buf *b)
{
	*p = (struct proc){.pid = pid, .fd = open_kept("/proc/%d/stat", pid), .comm_fd = -1, .maps_fd = -1};
	if (p->fd != -1 && proc_read(p, b)) {
		if (p->kthread) {
			close_fd(&p->fd);
			p->fd = NOT_KEPT;
		} else {
			p->comm_fd = open_kept("/proc/%d/comm", pid);
		}
		return true;
	}
	close_fd(&p->fd);
	return false;
}

static int int_cmp(const void *a, const void *b)
{
	int x = *(const int *)a, y = *(const int *)b;
	return (x > y) - (x < y);
}

/* The numeric entries of dir, ascending, into *ids (grown as needed); their count. */
static size_t list_ids(const char *dir, int **ids, size_t *cap)
{
	DIR *d = opendir(dir);
	struct dirent *de;
	size_t n = 0;

	if (!d)
		return 0;
	while ((de = readdir(d))) {
		char *end;
		long id = strtol(de->d_name, &end, 10);
		if (*end || id <= 0 || id > INT32_MAX)
			continue;
		if (n == *cap) {
			*cap = *cap ? 2 * *cap : 256;
			*ids = realloc(*ids, *cap * sizeof(**ids));
			if (!*ids)
				ig_oom("pid list");
		}
		(*ids)[n++] = (int)id;
	}
	closedir(d);
	qsort(*ids, n, sizeof(**ids), int_cmp);
	return n;
}

static int *scan_ids;
static size_t scan_cap;

/*
 * The process table made equal to /proc: new processes opened and read,
 * those gone dropped, every one kept read again (pids reused since, kernel
 * threads renamed). Only after the kernel handed out a pid: without one no
 * process or thread can have appeared, so the table (less the exits that
 * reading finds) is still /proc.
 */
static void procs_sync(struct ig_buf *b)
{
	size_t n = list_ids("/proc", &scan_ids, &scan_cap);
	struct proc *next = malloc((n ? n : 1) * sizeof(*next));
	size_t k = 0, o = 0;
	int self = getpid();

	if (!next)
		ig_oom("process table");
	for (size_t i = 0; i < n; i++) {
		int pid = scan_ids[i];
		while (o < nprocs && procs[o].pid < pid)
			proc_drop(&procs[o++]); /* gone from /proc */
		if (pid == self)
			continue;
		if (o < nprocs && procs[o].pid == pid) {
			struct proc p = procs[o++];
			/* Still the same process if its fd still reads; else the pid is a new one's. */
			if (p.fd >= 0 && proc_read(&p, b)) {
				p.seen = true;
				next[k++] = p;
				continue;
			}
			proc_drop(&p);
		}
		if (proc_open(&next[k], pid, b)) {
			next[k].seen = true;
			k++;
		}
	}
	while (o < nprocs)
		proc_drop(&procs[o++]);
	free(procs);
	procs = next;
	nprocs = k;
	procs_cap = n;
}

/* "0.42 0.30 0.25 2/83 419": false if /proc/loadavg does not say. */
static bool tasks_count(struct ig_buf *b, long *tasks, long *last)
{
	char *p, *end;

	if (pread_all(loadavg_fd, b) < 0 || !(p = strchr(b->s, '/')))
		return false;
	*tasks = strtol(p + 1, &end, 10);
	if (end == p + 1 || *end != ' ')
		return false;
	p = end + 1;
	*last = strtol(p, &end, 10);
	return end != p && (*end == '\n' || !*end) && *tasks >= 0 && *last >= 0;
}

/*
 * Which processes are workload processes now: comm prefixes and pids, then
 * descendants by ppid closure. Returns true if a task appeared or was reaped
 * since the last sample (the table was synced; thread lists must be too).
 *
 * Otherwise, which is most samples, only what can change without a task
 * appearing or going is read again: the stat of every workload process
 * (its ppid, its comm) and the comm of every other user process (an exec
 * or a prctl renames it into a match). Not their ppid: a parent's exit
 * moves its children to an ancestor, which is a workload process only if
 * they already were ones by descent, and its reaping syncs the table. Not
 * the kernel threads, most of /proc in a small guest: they run no
 * program, so only a rename could change what they match, and the table
 * reads them again whenever it is synced.
 */
static bool procs_scan(struct ig_buf *b)
{
	long tasks = -1, lp = -1;
	bool known = tasks_count(b, &tasks, &lp);
	bool spawned = !known || tasks != tasks_seen || lp != last_pid_seen;

	for (size_t i = 0; i < nprocs; i++)
		procs[i].seen = false;
	if (spawned) {
		procs_sync(b);
		tasks_seen = tasks;
		last_pid_seen = lp;
	}
	size_t k = 0;
	for (size_t i = 0; i < nprocs; i++) {
		struct proc *p = &procs[i];
		bool alive = p->seen || (p->wl ? proc_read(p, b) : p->kthread || proc_read_comm(p, b));
		if (!alive) {
			proc_drop(p); /* exited: without a new pid, nothing took its place */
			continue;
		}
		procs[k++] = *p;
	}
	nprocs = k;
	for (size_t i = 0; i < nprocs; i++)
		procs[i].wl = is_wanted(&procs[i]);
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
	return spawned;
}

/* p's thread table made equal to /proc/PID/task, as procs_sync does for processes. */
static void tasks_sync(struct proc *p)
{
	char dir[64];

	snprintf(dir, sizeof(dir), "/proc/%d/task", p->pid);
	size_t n = list_ids(dir, &scan_ids, &scan_cap);
	struct task *next = malloc((n ? n : 1) * sizeof(*next));
	size_t k = 0, o = 0;

	if (!next)
		ig_oom("thread table");
	for (size_t i = 0; i < n; i++) {
		while (o < p->ntasks && p->tasks[o].tid < scan_ids[i])
			close_fd(&p->tasks[o++].fd);
		if (o < p->ntasks && p->tasks[o].tid == scan_ids[i]) {
			/* A reused tid reads as gone through the old fd: emit_threads opens it again. */
			next[k++] = p->tasks[o++];
			continue;
		}
		next[k] = (struct task){scan_ids[i], open_kept("/proc/%d/task/%d/stat", p->pid, scan_ids[i])};
		if (next[k].fd != -1)
			k++;
	}
	while (o < p->ntasks)
		close_fd(&p->tasks[o++].fd);
	free(p->tasks);
	p->tasks = next;
	p->ntasks = k;
	p->tasks_cap = n;
	p->tasks_listed = true;
}

static uint64_t mem_kb[VN_MAX_NODES];
static uint64_t line_pages[VN_MAX_NODES];

/*
 * numa_maps: every mapping line has N<node>=<pages> fields, counted in the
 * mapping's own page size (kernelpagesize_kB, which follows them on the line:
 * 2048 for hugetlb), so sum per line and scale at the end of it.
 */
static int read_numa_maps(struct proc *p, struct ig_buf *b)
{
	memset(mem_kb, 0, sizeof(mem_kb[0]) * (size_t)topo.nr_nodes);
	if (p->maps_fd == -1)
		p->maps_fd = open_kept("/proc/%d/numa_maps", p->pid);
	int r = p->maps_fd == NOT_KEPT ? read_kept(p->maps_fd, b, "/proc/%d/numa_maps", p->pid)
				       : read_records(p->maps_fd, b);
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
static int emit_threads(struct ig_json *out, struct proc *p, struct ig_buf *b, bool spawned)
{
	if (spawned || !p->tasks_listed)
		tasks_sync(p);
	ig_json_arr_begin(out, "threads");
	size_t kept = 0;
	for (size_t i = 0; i < p->ntasks; i++) {
		struct task *t = &p->tasks[i];
		char *f[37];
		/*
		 * f[0] is field 3 (state), so field 39 (processor) is f[36]. A
		 * thread that cannot be read has exited; after a new pid its tid
		 * may be a new thread's, so that one is opened by number.
		 */
		bool ok = read_kept(t->fd, b, "/proc/%d/task/%d/stat", p->pid, t->tid) == 0 &&
			  stat_fields(b->s, NULL, NULL, f, 37) >= 37;
		if (!ok && spawned) {
			close_fd(&t->fd);
			t->fd = open_kept("/proc/%d/task/%d/stat", p->pid, t->tid);
			ok = read_kept(t->fd, b, "/proc/%d/task/%d/stat", p->pid, t->tid) == 0 &&
			     stat_fields(b->s, NULL, NULL, f, 37) >= 37;
		}
		if (!ok) {
			close_fd(&t->fd);
			continue;
		}
		p->tasks[kept++] = *t;
		long cpu = strtol(f[36], NULL, 10);
		int node = cpu >= INT32_MIN && cpu <= INT32_MAX ? ig_topo_node_of_cpu(&topo, (int)cpu) : -1;
		char state = f[0][0];
		if (state == 'R' && node >= 0)
			running[node]++;
		ig_json_obj_begin(out, NULL);
		ig_json_int(out, "tid", t->tid);
		ig_json_int(out, "cpu", cpu);
		ig_json_int(out, "node", node);
		ig_json_str_n(out, "state", &state, 1);
		ig_json_obj_end(out);
	}
	p->ntasks = kept;
	ig_json_arr_end(out);
	return (int)kept;
}

/* numa_maps walks every page table entry of the process, which dominates a sample's cost with big workloads. */
static unsigned long mem_every = 1;

static void emit_procs(struct ig_json *out, struct ig_buf *b, bool with_mem, bool spawned)
{
	ig_json_arr_begin(out, "procs");
	for (size_t i = 0; i < nprocs; i++) {
		struct proc *p = &procs[i];
		if (!p->wl)
			continue;
		struct ig_json_mark mark = ig_json_mark(out);
		ig_json_obj_begin(out, NULL);
		ig_json_int(out, "pid", p->pid);
		ig_json_str_n(out, "comm", p->comm, p->comm_len);
		/* Absent, not zero, when not read: zero would claim the memory left every node. */
		if (with_mem && read_numa_maps(p, b) == 0) {
			char k[16];
			ig_json_obj_begin(out, "mem_kb_per_node");
			for (int n = 0; n < nnodes; n++) {
				snprintf(k, sizeof(k), "%d", node_ids[n]);
				ig_json_uint(out, k, mem_kb[node_ids[n]]);
			}
			ig_json_obj_end(out);
		}
		/* A process that exited between the scan and now has no threads left. */
		if (emit_threads(out, p, b, spawned) == 0) {
			ig_json_rewind(out, mark);
			continue;
		}
		ig_json_obj_end(out);
	}
	ig_json_arr_end(out);
}

/* ---- one sample ---- */

/* The files every sample reads, opened once; -1 where missing (its object stays empty). */
static int uptime_fd = -1, vmstat_fd = -1;
static int numastat_fd[VN_MAX_NODES], meminfo_fd[VN_MAX_NODES];

static void files_open(void)
{
	uptime_fd = open("/proc/uptime", O_RDONLY | O_CLOEXEC);
	vmstat_fd = open("/proc/vmstat", O_RDONLY | O_CLOEXEC);
	loadavg_fd = open("/proc/loadavg", O_RDONLY | O_CLOEXEC);
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
	member_raw(out, key, strlen(key), false, p, strlen(p));
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
	char k[16];
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
			member_raw(out, "uptime", 6, false, b->s, n);
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

	memset(running, 0, sizeof(running[0]) * (size_t)topo.nr_nodes);
	bool spawned = procs_scan(b);
	emit_procs(out, b, seq % mem_every == 0, spawned);

	ig_json_obj_begin(out, "running_per_node");
	for (int i = 0; i < nnodes; i++) {
		snprintf(k, sizeof(k), "%d", node_ids[i]);
		ig_json_uint(out, k, running[node_ids[i]]);
	}
	ig_json_obj_end(out);

	/* Measured last so that it covers everything but formatting these two numbers and the write. */
	int64_t cpu = clock_ns(CLOCK_PROCESS_CPUTIME_ID) - cpu0;
	int64_t wall = clock_ns(CLOCK_MONOTONIC) - wall0;
	ig_json_obj_begin(out, "cost");
	json_us(out, "cpu_s", cpu);
	json_us(out, "wall_s", wall);
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
	for (unsigned long seq = 0; !ig_stop_requested; seq++) {
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
	ig_json_free(&out);
	ig_buf_free(&scratch);
	return 0;
}
