#include "common.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <poll.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

const char *wl_prog = "vnuma-wl";

void wl_init(const char *prog)
{
	wl_prog = prog;
	/* The result line must not be interleaved with a child's stdio buffer. */
	setvbuf(stdout, NULL, _IOFBF, 1 << 16);
}

/* ---- errors ---- */

void wl_die(int code, int errnum, const char *fmt, ...)
{
	va_list ap;

	fflush(stdout);
	fprintf(stderr, "%s: ", wl_prog);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	if (errnum)
		fprintf(stderr, ": %s", strerror(errnum));
	fputc('\n', stderr);
	exit(code);
}

void wl_bad_option(const char *opt, const char *val, const char *why)
{
	fprintf(stderr, "%s: invalid value '%s' for --%s: %s\n", wl_prog, val ? val : "", opt, why);
	exit(WL_EXIT_USAGE);
}

void wl_unknown_option(const char *arg)
{
	fprintf(stderr, "%s: unknown or incomplete option '%s' (try --help)\n", wl_prog,
		arg ? arg : "?");
	exit(WL_EXIT_USAGE);
}

/* ---- option values ---- */

uint64_t wl_opt_size(const char *opt, const char *val)
{
	char *end;
	double v;
	uint64_t mult;

	if (!val || !*val || !(isdigit((unsigned char)val[0]) || val[0] == '.'))
		wl_bad_option(opt, val, "expected a size such as 200M, 1G or 512K (bare number: MiB)");
	errno = 0;
	v = strtod(val, &end);
	if (errno || !isfinite(v) || v <= 0)
		wl_bad_option(opt, val, "expected a positive size");
	switch (toupper((unsigned char)*end)) {
	case '\0': mult = 1ULL << 20; break;
	case 'B': mult = 1; end++; goto tail_done;
	case 'K': mult = 1ULL << 10; break;
	case 'M': mult = 1ULL << 20; break;
	case 'G': mult = 1ULL << 30; break;
	case 'T': mult = 1ULL << 40; break;
	default:
		wl_bad_option(opt, val, "unknown size suffix (use K, M, G or T)");
	}
	if (*end) {
		end++;
		if (!strcasecmp(end, "iB") || !strcasecmp(end, "B"))
			end += strlen(end);
	}
tail_done:
	if (*end)
		wl_bad_option(opt, val, "trailing characters after the size");
	v *= (double)mult;
	if (v < 1 || v > (double)(1ULL << 50))
		wl_bad_option(opt, val, "size out of range");
	return (uint64_t)v;
}

uint64_t wl_opt_uint(const char *opt, const char *val, uint64_t min, uint64_t max)
{
	char *end;
	unsigned long long v;
	char why[96];

	if (!val || !isdigit((unsigned char)val[0]))
		wl_bad_option(opt, val, "expected a non-negative integer");
	errno = 0;
	v = strtoull(val, &end, 10);
	if (errno || *end)
		wl_bad_option(opt, val, "expected a non-negative integer");
	if (v < min || v > max) {
		snprintf(why, sizeof(why), "must be between %llu and %llu",
			 (unsigned long long)min, (unsigned long long)max);
		wl_bad_option(opt, val, why);
	}
	return v;
}

double wl_opt_seconds(const char *opt, const char *val, double min)
{
	char *end;
	double v;
	char why[64];

	if (!val || !*val || !(isdigit((unsigned char)val[0]) || val[0] == '.'))
		wl_bad_option(opt, val, "expected seconds such as 10, 1.5 or 250ms");
	errno = 0;
	v = strtod(val, &end);
	if (errno || !isfinite(v))
		wl_bad_option(opt, val, "expected seconds such as 10, 1.5 or 250ms");
	if (!strcmp(end, "ms"))
		v /= 1000.0;
	else if (!strcmp(end, "m") || !strcmp(end, "min"))
		v *= 60.0;
	else if (*end && strcmp(end, "s"))
		wl_bad_option(opt, val, "unknown time unit (use s, ms or m)");
	if (v < min || v > 1e7) {
		snprintf(why, sizeof(why), "must be at least %g seconds", min);
		wl_bad_option(opt, val, why);
	}
	return v;
}

/* ---- time ---- */

double wl_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

double wl_thread_cpu_time(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

void wl_sleep(double seconds)
{
	struct timespec ts;

	if (seconds <= 0)
		return;
	ts.tv_sec = (time_t)seconds;
	ts.tv_nsec = (long)((seconds - (double)ts.tv_sec) * 1e9);
	while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
		;
}

uint64_t wl_seed(uint64_t salt)
{
	struct timespec ts;
	uint64_t s;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	s = (uint64_t)ts.tv_nsec ^ ((uint64_t)ts.tv_sec << 32) ^ ((uint64_t)getpid() << 16) ^
	    (salt * 0x9E3779B97F4A7C15ULL);
	return s ? s : 0x1234567;
}

/* ---- topology ---- */

int wl_parse_cpulist(const char *s, cpu_set_t *set)
{
	const char *p = s;

	CPU_ZERO(set);
	while (*p && *p != '\n') {
		char *end;
		long a, b;

		if (!isdigit((unsigned char)*p))
			return -EINVAL;
		a = strtol(p, &end, 10);
		b = a;
		p = end;
		if (*p == '-') {
			p++;
			if (!isdigit((unsigned char)*p))
				return -EINVAL;
			b = strtol(p, &end, 10);
			p = end;
		}
		if (a < 0 || b < a || b >= CPU_SETSIZE)
			return -EINVAL;
		for (long c = a; c <= b; c++)
			CPU_SET((int)c, set);
		if (*p == ',')
			p++;
		else if (*p && *p != '\n')
			return -EINVAL;
	}
	return 0;
}

static int read_small_file(const char *path, char *buf, size_t size)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	ssize_t n;
	size_t len = 0;

	if (fd < 0)
		return -errno;
	while (len + 1 < size && (n = read(fd, buf + len, size - 1 - len)) != 0) {
		if (n < 0) {
			if (errno == EINTR)
				continue;
			int e = -errno;
			close(fd);
			return e;
		}
		len += (size_t)n;
	}
	buf[len] = '\0';
	close(fd);
	return (int)len;
}

int wl_node_cpus(int node, cpu_set_t *set)
{
	char path[96], buf[4096];
	int r;

	snprintf(path, sizeof(path), "/sys/devices/system/node/node%d/cpulist", node);
	r = read_small_file(path, buf, sizeof(buf));
	if (r < 0)
		return r;
	return wl_parse_cpulist(buf, set);
}

void wl_topo_load(struct wl_topo *t)
{
	char buf[4096];
	cpu_set_t nodes;

	memset(t, 0, sizeof(*t));
	for (int c = 0; c < WL_MAX_CPUS; c++)
		t->cpu_node[c] = -1;

	if (read_small_file("/sys/devices/system/node/online", buf, sizeof(buf)) >= 0 &&
	    wl_parse_cpulist(buf, &nodes) == 0) {
		t->numa = true;
		for (int n = 0; n < WL_MAX_NODES; n++) {
			cpu_set_t cpus;

			if (!CPU_ISSET(n, &nodes))
				continue;
			t->online[n] = true;
			t->nr_nodes = n + 1;
			if (wl_node_cpus(n, &cpus) < 0)
				continue;
			for (int c = 0; c < WL_MAX_CPUS && c < CPU_SETSIZE; c++) {
				if (CPU_ISSET(c, &cpus)) {
					t->cpu_node[c] = n;
					t->node_cpus[n]++;
					if (c + 1 > t->nr_cpus)
						t->nr_cpus = c + 1;
				}
			}
		}
	}
	if (!t->numa || t->nr_nodes == 0) {
		long n = sysconf(_SC_NPROCESSORS_CONF);

		if (n < 1)
			n = 1;
		if (n > WL_MAX_CPUS)
			n = WL_MAX_CPUS;
		t->numa = false;
		t->nr_nodes = 1;
		t->online[0] = true;
		t->nr_cpus = (int)n;
		t->node_cpus[0] = (int)n;
		for (int c = 0; c < n; c++)
			t->cpu_node[c] = 0;
	}
}

int wl_topo_node_of_cpu(const struct wl_topo *t, int cpu)
{
	if (cpu < 0 || cpu >= WL_MAX_CPUS)
		return -1;
	return t->cpu_node[cpu];
}

int wl_move_to_node(pid_t pid, int node)
{
	cpu_set_t set;
	int r = wl_node_cpus(node, &set);

	if (r < 0 && node == 0 && r == -ENOENT) {
		/* Kernel without NUMA: node 0 is every CPU. */
		long n = sysconf(_SC_NPROCESSORS_CONF);
		CPU_ZERO(&set);
		for (long c = 0; c < n && c < CPU_SETSIZE; c++)
			CPU_SET((int)c, &set);
		r = 0;
	}
	if (r < 0)
		return r;
	if (CPU_COUNT(&set) == 0)
		return -ENODEV; /* CPU-less node */
	if (sched_setaffinity(pid, sizeof(set), &set) < 0)
		return -errno;
	return 0;
}

void wl_getcpu(int *cpu, int *node)
{
	unsigned c = 0, n = 0;

	if (syscall(SYS_getcpu, &c, &n, NULL) < 0) {
		c = 0;
		n = 0;
	}
	if (cpu)
		*cpu = (int)c;
	if (node)
		*node = (int)n;
}

/* ---- placement ---- */

#define PLACEMENT_BATCH 4096

void wl_placement_query(void *addr, size_t len, size_t page_size, size_t max_sample,
			struct wl_placement *p)
{
	size_t pages = len / page_size, n;
	void *batch[PLACEMENT_BATCH];
	int status[PLACEMENT_BATCH];

	memset(p, 0, sizeof(*p));
	if (!pages)
		return;
	n = pages;
	if (max_sample && n > max_sample)
		n = max_sample;
	/* Evenly spread samples: page index i * pages / n. */
	for (size_t done = 0; done < n;) {
		size_t k = n - done < PLACEMENT_BATCH ? n - done : PLACEMENT_BATCH;
		long r;

		for (size_t i = 0; i < k; i++) {
			size_t idx = (size_t)(((unsigned __int128)(done + i) * pages) / n);
			batch[i] = (char *)addr + idx * page_size;
			status[i] = -EFAULT;
		}
		r = syscall(SYS_move_pages, 0, (unsigned long)k, batch, NULL, status, 0);
		if (r < 0) {
			p->err = -errno;
			p->other += k;
		} else {
			for (size_t i = 0; i < k; i++) {
				int s = status[i];
				if (s >= 0 && s < WL_MAX_NODES)
					p->per_node[s]++;
				else if (s == -ENOENT)
					p->not_present++;
				else
					p->other++;
			}
		}
		p->sampled += k;
		done += k;
	}
}

int wl_placement_main_node(const struct wl_placement *p)
{
	int best = -1;
	uint64_t most = 0;

	for (int n = 0; n < WL_MAX_NODES; n++) {
		if (p->per_node[n] > most) {
			most = p->per_node[n];
			best = n;
		}
	}
	return best;
}

/* ---- /proc helpers ---- */

long long wl_meminfo_value(const char *path, const char *key)
{
	FILE *f = fopen(path, "re");
	char line[256];
	size_t klen = strlen(key);
	long long v = -1;

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f)) {
		if (!strncmp(line, key, klen) && line[klen] == ':') {
			v = strtoll(line + klen + 1, NULL, 10);
			break;
		}
	}
	fclose(f);
	return v;
}

int wl_write_file(const char *path, const char *s)
{
	int fd = open(path, O_WRONLY | O_CLOEXEC);
	size_t len = strlen(s);
	ssize_t n;

	if (fd < 0)
		return -errno;
	n = write(fd, s, len);
	if (n < 0 || (size_t)n != len) {
		int e = n < 0 ? -errno : -EIO;
		close(fd);
		return e;
	}
	if (close(fd) < 0)
		return -errno;
	return 0;
}

int wl_write_pidfile(const char *path, const pid_t *pids, size_t n)
{
	char tmp[4096];
	FILE *f;

	if (snprintf(tmp, sizeof(tmp), "%s.tmp.%d", path, (int)getpid()) >= (int)sizeof(tmp))
		return -ENAMETOOLONG;
	f = fopen(tmp, "we");
	if (!f)
		return -errno;
	for (size_t i = 0; i < n; i++)
		fprintf(f, "%d\n", (int)pids[i]);
	if (fclose(f) != 0) {
		int e = -errno;
		unlink(tmp);
		return e;
	}
	if (rename(tmp, path) < 0) {
		int e = -errno;
		unlink(tmp);
		return e;
	}
	return 0;
}

/* ---- memory ---- */

#define THP_ALIGN (2UL << 20)

void *wl_map_anon(size_t len, int thp)
{
	char *p, *aligned;
	size_t extra = thp ? THP_ALIGN : 0;

	p = mmap(NULL, len + extra, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED)
		return NULL;
	if (!thp)
		return p;
	aligned = (char *)(((uintptr_t)p + THP_ALIGN - 1) & ~(uintptr_t)(THP_ALIGN - 1));
	if (aligned > p)
		munmap(p, (size_t)(aligned - p));
	if ((size_t)(aligned - p) < extra)
		munmap(aligned + len, extra - (size_t)(aligned - p));
#ifdef MADV_HUGEPAGE
	madvise(aligned, len, MADV_HUGEPAGE);
#endif
	return aligned;
}

void wl_unmap_anon(void *p, size_t len)
{
	if (p)
		munmap(p, len);
}

void *wl_map_shared(size_t len)
{
	void *p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);

	if (p == MAP_FAILED)
		wl_die(WL_EXIT_ENV, errno, "mmap of %zu shared bytes failed", len);
	return p;
}

void wl_child_setup(void)
{
	prctl(PR_SET_PDEATHSIG, SIGKILL);
	if (getppid() == 1)
		_exit(1);
}

/* ---- forked worker processes ---- */

void wl_team_init(struct wl_team *t, int n)
{
	memset(t, 0, sizeof(*t));
	t->n = n;
	t->pids = calloc((size_t)n, sizeof(pid_t));
	if (!t->pids)
		wl_die(WL_EXIT_ENV, ENOMEM, "worker table");
	if (pipe2(t->ready, O_CLOEXEC) < 0 || pipe2(t->go, O_CLOEXEC) < 0)
		wl_die(WL_EXIT_ENV, errno, "pipe");
}

pid_t wl_team_fork(struct wl_team *t, int i)
{
	pid_t pid;

	fflush(stdout);
	fflush(stderr);
	pid = fork();
	if (pid < 0)
		wl_die(WL_EXIT_ENV, errno, "fork of worker %d", i);
	if (pid == 0) {
		wl_child_setup();
		close(t->ready[0]);
		close(t->go[1]);
		return 0;
	}
	t->pids[i] = pid;
	return pid;
}

void wl_team_ready(struct wl_team *t)
{
	char c = 'r';
	ssize_t n;

	while ((n = write(t->ready[1], &c, 1)) < 0 && errno == EINTR)
		;
	while ((n = read(t->go[0], &c, 1)) < 0 && errno == EINTR)
		;
	if (n != 1)
		_exit(1); /* parent gone */
}

void wl_team_go(struct wl_team *t, const char *pidfile)
{
	int got = 0;

	close(t->ready[1]);
	close(t->go[0]);
	while (got < t->n) {
		struct pollfd pfd = { .fd = t->ready[0], .events = POLLIN };
		int r = poll(&pfd, 1, 200);

		if (r < 0 && errno != EINTR)
			wl_die(WL_EXIT_ENV, errno, "poll");
		if (r > 0) {
			char buf[64];
			ssize_t k = read(t->ready[0], buf, sizeof(buf));
			if (k > 0)
				got += (int)k;
		}
		for (int i = 0; i < t->n; i++) {
			int st;
			if (t->pids[i] > 0 && waitpid(t->pids[i], &st, WNOHANG) == t->pids[i]) {
				t->pids[i] = -t->pids[i];
				for (int k = 0; k < t->n; k++)
					if (t->pids[k] > 0)
						kill(t->pids[k], SIGKILL);
				if (WIFEXITED(st))
					wl_die(WEXITSTATUS(st) ? WEXITSTATUS(st) : WL_EXIT_ENV, 0,
					       "worker %d (pid %d) exited with status %d before starting",
					       i, -t->pids[i], WEXITSTATUS(st));
				wl_die(WL_EXIT_ENV, 0, "worker %d (pid %d) killed by signal %d before starting",
				       i, -t->pids[i], WTERMSIG(st));
			}
		}
	}
	if (pidfile) {
		int r = wl_write_pidfile(pidfile, t->pids, (size_t)t->n);
		if (r < 0)
			fprintf(stderr, "%s: cannot write pidfile %s: %s\n", wl_prog, pidfile, strerror(-r));
	}
	char go[256];
	memset(go, 'g', sizeof(go));
	for (int left = t->n; left > 0;) {
		ssize_t k = write(t->go[1], go, left < 256 ? (size_t)left : 256);
		if (k < 0 && errno == EINTR)
			continue;
		if (k <= 0)
			break;
		left -= (int)k;
	}
	close(t->go[1]);
}

int wl_team_wait(struct wl_team *t)
{
	int failed = 0;

	for (int i = 0; i < t->n; i++) {
		int st;
		pid_t pid = t->pids[i] > 0 ? t->pids[i] : -t->pids[i];

		while (waitpid(pid, &st, 0) < 0) {
			if (errno != EINTR) {
				st = -1;
				break;
			}
		}
		if (st == -1 || !WIFEXITED(st) || WEXITSTATUS(st) != 0) {
			failed++;
			if (st != -1 && WIFSIGNALED(st))
				fprintf(stderr, "%s: worker %d (pid %d) killed by signal %d (%s)\n", wl_prog,
					i, (int)pid, WTERMSIG(st), strsignal(WTERMSIG(st)));
			else
				fprintf(stderr, "%s: worker %d (pid %d) exited with status %d\n", wl_prog, i,
					(int)pid, st == -1 ? -1 : WEXITSTATUS(st));
		}
	}
	close(t->ready[0]);
	return failed;
}

/* ---- JSON ---- */

static void jgrow(struct wl_json *j, size_t more)
{
	if (j->len + more + 1 <= j->cap)
		return;
	size_t cap = j->cap ? j->cap : 1024;
	while (cap < j->len + more + 1)
		cap *= 2;
	char *b = realloc(j->buf, cap);
	if (!b)
		wl_die(WL_EXIT_ENV, ENOMEM, "JSON output");
	j->buf = b;
	j->cap = cap;
}

static void jput(struct wl_json *j, const char *s, size_t n)
{
	jgrow(j, n);
	memcpy(j->buf + j->len, s, n);
	j->len += n;
	j->buf[j->len] = '\0';
}

__attribute__((format(printf, 2, 3)))
static void jprintf(struct wl_json *j, const char *fmt, ...)
{
	char tmp[128];
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(tmp, sizeof(tmp), fmt, ap);
	va_end(ap);
	if (n < 0)
		return;
	jput(j, tmp, (size_t)n < sizeof(tmp) ? (size_t)n : sizeof(tmp) - 1);
}

void wl_json_init(struct wl_json *j)
{
	memset(j, 0, sizeof(*j));
	j->first[0] = true;
	jgrow(j, 0);
	j->buf[0] = '\0';
}

void wl_json_free(struct wl_json *j)
{
	free(j->buf);
	memset(j, 0, sizeof(*j));
}

/* Valid UTF-8 sequence length at s, or 0. */
static size_t utf8_len(const unsigned char *s)
{
	unsigned char c = s[0];
	size_t n;
	uint32_t cp;

	if (c < 0xC2)
		return 0;
	if (c < 0xE0) {
		n = 2;
		cp = c & 0x1F;
	} else if (c < 0xF0) {
		n = 3;
		cp = c & 0x0F;
	} else if (c < 0xF5) {
		n = 4;
		cp = c & 0x07;
	} else {
		return 0;
	}
	for (size_t i = 1; i < n; i++) {
		if ((s[i] & 0xC0) != 0x80)
			return 0;
		cp = (cp << 6) | (s[i] & 0x3F);
	}
	if ((n == 3 && (cp < 0x800 || (cp >= 0xD800 && cp <= 0xDFFF))) ||
	    (n == 4 && (cp < 0x10000 || cp > 0x10FFFF)))
		return 0;
	return n;
}

void wl_json_escape(struct wl_json *j, const char *str)
{
	const unsigned char *s = (const unsigned char *)str;

	jput(j, "\"", 1);
	while (*s) {
		unsigned char c = *s;
		switch (c) {
		case '"': jput(j, "\\\"", 2); s++; continue;
		case '\\': jput(j, "\\\\", 2); s++; continue;
		case '\n': jput(j, "\\n", 2); s++; continue;
		case '\r': jput(j, "\\r", 2); s++; continue;
		case '\t': jput(j, "\\t", 2); s++; continue;
		case '\b': jput(j, "\\b", 2); s++; continue;
		case '\f': jput(j, "\\f", 2); s++; continue;
		default: break;
		}
		if (c < 0x20 || c == 0x7F) {
			jprintf(j, "\\u%04x", c);
			s++;
		} else if (c < 0x80) {
			jput(j, (const char *)s, 1);
			s++;
		} else {
			size_t n = utf8_len(s);
			if (n) {
				jput(j, (const char *)s, n);
				s += n;
			} else {
				jput(j, "\\ufffd", 6); /* invalid byte */
				s++;
			}
		}
	}
	jput(j, "\"", 1);
}

static void jkey(struct wl_json *j, const char *key)
{
	if (!j->first[j->depth])
		jput(j, ",", 1);
	j->first[j->depth] = false;
	if (key) {
		wl_json_escape(j, key);
		jput(j, ":", 1);
	}
}

void wl_json_obj_begin(struct wl_json *j, const char *key)
{
	jkey(j, key);
	jput(j, "{", 1);
	if (j->depth + 1 < (int)(sizeof(j->first) / sizeof(j->first[0])))
		j->depth++;
	j->first[j->depth] = true;
}

void wl_json_obj_end(struct wl_json *j)
{
	jput(j, "}", 1);
	if (j->depth > 0)
		j->depth--;
}

void wl_json_arr_begin(struct wl_json *j, const char *key)
{
	jkey(j, key);
	jput(j, "[", 1);
	if (j->depth + 1 < (int)(sizeof(j->first) / sizeof(j->first[0])))
		j->depth++;
	j->first[j->depth] = true;
}

void wl_json_arr_end(struct wl_json *j)
{
	jput(j, "]", 1);
	if (j->depth > 0)
		j->depth--;
}

void wl_json_str(struct wl_json *j, const char *key, const char *v)
{
	jkey(j, key);
	if (v)
		wl_json_escape(j, v);
	else
		jput(j, "null", 4);
}

void wl_json_int(struct wl_json *j, const char *key, long long v)
{
	jkey(j, key);
	jprintf(j, "%lld", v);
}

void wl_json_uint(struct wl_json *j, const char *key, unsigned long long v)
{
	jkey(j, key);
	jprintf(j, "%llu", v);
}

void wl_json_double(struct wl_json *j, const char *key, double v)
{
	jkey(j, key);
	if (!isfinite(v)) {
		jput(j, "null", 4);
		return;
	}
	char tmp[64];
	int n = snprintf(tmp, sizeof(tmp), "%.10g", v);
	/* %g may print "1e+20": valid JSON. "inf"/"nan" excluded above. */
	jput(j, tmp, (size_t)n);
}

void wl_json_bool(struct wl_json *j, const char *key, bool v)
{
	jkey(j, key);
	jput(j, v ? "true" : "false", v ? 4 : 5);
}

void wl_json_null(struct wl_json *j, const char *key)
{
	jkey(j, key);
	jput(j, "null", 4);
}

void wl_json_raw(struct wl_json *j, const char *key, const char *raw)
{
	jkey(j, key);
	jput(j, raw, strlen(raw));
}

void wl_json_node_counts(struct wl_json *j, const char *key, const struct wl_topo *t,
			 const uint64_t *counts)
{
	char k[16];

	wl_json_obj_begin(j, key);
	for (int n = 0; n < WL_MAX_NODES; n++) {
		if (!(n < t->nr_nodes && t->online[n]) && !counts[n])
			continue;
		snprintf(k, sizeof(k), "%d", n);
		wl_json_uint(j, k, counts[n]);
	}
	wl_json_obj_end(j);
}

void wl_json_header(struct wl_json *j, const char *workload, const struct wl_topo *t)
{
	int nodes = 0;

	for (int n = 0; n < t->nr_nodes; n++)
		nodes += t->online[n];
	wl_json_str(j, "workload", workload);
	wl_json_int(j, "version", 1);
	wl_json_int(j, "pid", getpid());
	wl_json_int(j, "nodes", nodes);
	wl_json_int(j, "cpus", t->nr_cpus);
	wl_json_bool(j, "numa", t->numa);
}

void wl_json_print(struct wl_json *j)
{
	fflush(stdout);
	jput(j, "\n", 1);
	size_t off = 0;
	while (off < j->len) {
		ssize_t n = write(STDOUT_FILENO, j->buf + off, j->len - off);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			break;
		}
		off += (size_t)n;
	}
	j->len--;
	j->buf[j->len] = '\0';
}

/* ---- statistics ---- */

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

void wl_stats_compute(double *v, size_t n, struct wl_stats *s)
{
	double sum = 0, sq = 0;

	memset(s, 0, sizeof(*s));
	s->n = n;
	if (!n) {
		s->min = s->max = s->avg = s->p50 = s->p95 = s->stddev = NAN;
		return;
	}
	qsort(v, n, sizeof(*v), cmp_double);
	for (size_t i = 0; i < n; i++)
		sum += v[i];
	s->avg = sum / (double)n;
	for (size_t i = 0; i < n; i++)
		sq += (v[i] - s->avg) * (v[i] - s->avg);
	s->stddev = n > 1 ? sqrt(sq / (double)(n - 1)) : 0;
	s->min = v[0];
	s->max = v[n - 1];
	s->p50 = v[(n - 1) / 2];
	s->p95 = v[(size_t)((double)(n - 1) * 0.95)];
}

void wl_json_stats(struct wl_json *j, const char *key, const struct wl_stats *s)
{
	wl_json_obj_begin(j, key);
	wl_json_uint(j, "n", s->n);
	wl_json_double(j, "min", s->min);
	wl_json_double(j, "avg", s->avg);
	wl_json_double(j, "p50", s->p50);
	wl_json_double(j, "p95", s->p95);
	wl_json_double(j, "max", s->max);
	wl_json_double(j, "stddev", s->stddev);
	wl_json_obj_end(j);
}
