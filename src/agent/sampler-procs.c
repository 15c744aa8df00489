/*
 * The sampler's processes: which are the workload's (--match, --pid, and
 * their descendants), their threads' CPUs and states, and their memory per
 * node from numa_maps. The table of every task is read again in full only
 * when /proc/loadavg says a task appeared or was reaped (docs/sampling.md).
 */
#include "agent/sampler-priv.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

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
	size_t ntasks;
	bool tasks_listed;
};

static char **match_prefixes;
static size_t nmatch;
static int *want_pids;
static size_t nwant;

/* Ascending pid. */
static struct proc *procs;
static size_t nprocs;

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
			*ids = ig_xrealloc(*ids, *cap, sizeof(**ids), "pid list");
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
	struct proc *next = ig_xrealloc(NULL, n, sizeof(*next), "process table");
	size_t k = 0, o = 0;
	int self = getpid();

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
	struct task *next = ig_xrealloc(NULL, n, sizeof(*next), "thread table");
	size_t k = 0, o = 0;

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

/* t's stat split into f[0..37) (f[0] is field 3, state); false if it cannot be read: the thread has exited. */
static bool task_read(const struct proc *p, const struct task *t, struct ig_buf *b, char **f)
{
	return read_kept(t->fd, b, "/proc/%d/task/%d/stat", p->pid, t->tid) == 0 &&
	       stat_fields(b->s, NULL, NULL, f, 37) >= 37;
}

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
		/* Field 39 (processor) is f[36]. After a new pid a gone tid may be a new thread's: opened by number. */
		bool ok = task_read(p, t, b, f);
		if (!ok && spawned) {
			close_fd(&t->fd);
			t->fd = open_kept("/proc/%d/task/%d/stat", p->pid, t->tid);
			ok = task_read(p, t, b, f);
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

void procs_init(int argc)
{
	/* Each repeatable option takes at least one argument: argc bounds them. */
	match_prefixes = ig_xcalloc((size_t)argc + 1, sizeof(*match_prefixes), "option lists");
	want_pids = ig_xcalloc((size_t)argc + 1, sizeof(*want_pids), "option lists");
}

void procs_add_match(const struct ig_opt *opt, const char *val)
{
	match_prefixes[nmatch++] = (char *)val;
}

void procs_add_pid(const struct ig_opt *opt, const char *val)
{
	want_pids[nwant++] = (int)ig_opt_uint(opt->name, val, 1, INT32_MAX);
}

void procs_start(unsigned long every)
{
	mem_every = every;
	if (!nmatch && !nwant)
		match_prefixes[nmatch++] = "vnuma-wl-";
	loadavg_fd = open("/proc/loadavg", O_RDONLY | O_CLOEXEC);
}

void procs_sample(struct ig_json *out, struct ig_buf *b, unsigned long seq)
{
	char k[16];

	memset(running, 0, sizeof(running[0]) * (size_t)topo.nr_nodes);
	bool spawned = procs_scan(b);
	emit_procs(out, b, seq % mem_every == 0, spawned);

	ig_json_obj_begin(out, "running_per_node");
	for (int i = 0; i < nnodes; i++) {
		snprintf(k, sizeof(k), "%d", node_ids[i]);
		ig_json_uint(out, k, running[node_ids[i]]);
	}
	ig_json_obj_end(out);
}
