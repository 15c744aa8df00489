/*
 * Shared helpers for the in-guest workload programs (vnuma-wl-*).
 *
 * The workloads run in a bare busybox initramfs: static, libc only (no
 * libnuma, no json-c). Everything NUMA goes through raw syscalls and sysfs.
 *
 * Conventions for every program:
 *   - exactly one JSON object on one line on stdout, at the end;
 *   - progress and diagnostics on stderr;
 *   - exit 0 success, 2 bad option (one line naming option and value),
 *     3 environment failure (hugetlb pages missing, cgroup not writable...).
 */
#ifndef VN_WORKLOADS_COMMON_H
#define VN_WORKLOADS_COMMON_H

#include <sched.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#define WL_EXIT_OK 0
#define WL_EXIT_USAGE 2
#define WL_EXIT_ENV 3

/* Nodes beyond this are counted as "other" in placement queries. */
#define WL_MAX_NODES 64
#define WL_MAX_CPUS 4096

/* Default cap on pages queried with move_pages(2) per placement sample. */
#define WL_DEFAULT_MAX_SAMPLE 65536

/* The program name used in messages; set by wl_init(). */
extern const char *wl_prog;

void wl_init(const char *prog);

/* ---- errors ---- */
__attribute__((noreturn, format(printf, 3, 4)))
void wl_die(int code, int errnum, const char *fmt, ...);
/* Exit 2: "PROG: invalid value 'VAL' for --OPT: WHY" */
__attribute__((noreturn))
void wl_bad_option(const char *opt, const char *val, const char *why);
__attribute__((noreturn))
void wl_unknown_option(const char *arg);

/* ---- option values (call wl_bad_option on error) ---- */
/* A size: N[KMGT] or N[KMGT]iB or N[K/M/G]B; a bare number means MiB. */
uint64_t wl_opt_size(const char *opt, const char *val);
/* An unsigned integer in [min, max]. */
uint64_t wl_opt_uint(const char *opt, const char *val, uint64_t min, uint64_t max);
/* Seconds: "1.5", "1.5s", "250ms"; must be >= min. */
double wl_opt_seconds(const char *opt, const char *val, double min);

/* ---- time ---- */
double wl_now(void);             /* CLOCK_MONOTONIC seconds */
double wl_thread_cpu_time(void); /* CLOCK_THREAD_CPUTIME_ID seconds */
void wl_sleep(double seconds);

/* ---- random ---- */
static inline uint64_t wl_rand_next(uint64_t *s)
{
	/* xorshift64* */
	uint64_t x = *s;
	x ^= x >> 12;
	x ^= x << 25;
	x ^= x >> 27;
	*s = x;
	return x * 0x2545F4914F6CDD1DULL;
}
uint64_t wl_seed(uint64_t salt);

/* ---- topology ---- */
struct wl_topo {
	int nr_nodes;                 /* highest online node + 1 */
	bool online[WL_MAX_NODES];
	int node_cpus[WL_MAX_NODES];  /* CPUs per node */
	int cpu_node[WL_MAX_CPUS];    /* -1 when unknown */
	int nr_cpus;                  /* highest CPU seen + 1 */
	bool numa;                    /* /sys/devices/system/node exists */
};
/* Reads /sys/devices/system/node; on a kernel without NUMA, node 0 = all CPUs. */
void wl_topo_load(struct wl_topo *t);
int wl_topo_node_of_cpu(const struct wl_topo *t, int cpu);

/* Parses a kernel cpulist ("0-3,8,10-11") into set; returns 0 or -EINVAL. */
int wl_parse_cpulist(const char *s, cpu_set_t *set);
/* Node N's CPUs from /sys/devices/system/node/nodeN/cpulist; 0 or -errno. */
int wl_node_cpus(int node, cpu_set_t *set);
/* sched_setaffinity(pid, node's CPUs); 0 or -errno. Memory policy untouched. */
int wl_move_to_node(pid_t pid, int node);

/* getcpu(2): the CPU and node the caller runs on right now. */
void wl_getcpu(int *cpu, int *node);

/* ---- page placement (move_pages(2) query mode) ---- */
struct wl_placement {
	uint64_t sampled;                 /* pages queried */
	uint64_t per_node[WL_MAX_NODES];  /* pages on each node */
	uint64_t not_present;             /* -ENOENT: not faulted in / swapped */
	uint64_t other;                   /* other errors or node >= WL_MAX_NODES */
	int err;                          /* 0, or -errno when move_pages itself failed */
};
/*
 * Queries where the pages of [addr, addr+len) live, evenly sampling at most
 * max_sample pages of page_size bytes (0 = every page).
 */
void wl_placement_query(void *addr, size_t len, size_t page_size, size_t max_sample,
			struct wl_placement *p);
/* The node holding the most sampled pages, or -1. */
int wl_placement_main_node(const struct wl_placement *p);

/* ---- /proc helpers ---- */
/* A "Key:   N kB" value from /proc/meminfo-like files, in the file's unit; -1 if absent. */
long long wl_meminfo_value(const char *path, const char *key);
/* Writes the whole string to path (e.g. cgroup.procs); 0 or -errno. */
int wl_write_file(const char *path, const char *s);
/* Writes the pids, one per line, to path atomically (tmp + rename); 0 or -errno. */
int wl_write_pidfile(const char *path, const pid_t *pids, size_t n);

/* ---- memory ---- */
/* Anonymous private mapping; huge: 0 normal, 1 THP (aligned + MADV_HUGEPAGE). NULL on failure. */
void *wl_map_anon(size_t len, int thp);
void wl_unmap_anon(void *p, size_t len);
/* Shared anonymous memory for results from forked children (zeroed). Dies on failure. */
void *wl_map_shared(size_t len);
/* In a forked child: die with SIGKILL when the parent goes away. */
void wl_child_setup(void);

/* ---- forked worker processes ---- */
/*
 * The parent forks n workers; each prepares (allocates, touches), calls
 * wl_team_ready() and blocks until the parent calls wl_team_go(), so all
 * start their measured phase together. The pidfile (if any) is written
 * once every worker is ready.
 */
struct wl_team {
	int n;
	pid_t *pids;
	int ready[2], go[2];
};
void wl_team_init(struct wl_team *t, int n);
/* Forks worker i; returns 0 in the child (which must end with _exit). */
pid_t wl_team_fork(struct wl_team *t, int i);
/* In the worker: report ready and wait for the start signal. */
void wl_team_ready(struct wl_team *t);
/* In the parent: wait until all are ready (dies with exit 3 if one exits first), write pidfile, start them. */
void wl_team_go(struct wl_team *t, const char *pidfile);
/* In the parent: reap all; returns the number of workers that failed (message on stderr). */
int wl_team_wait(struct wl_team *t);

/* ---- JSON writer ---- */
struct wl_json {
	char *buf;
	size_t len, cap;
	int depth;
	bool first[32]; /* no member written yet at this depth */
};
void wl_json_init(struct wl_json *j);
void wl_json_free(struct wl_json *j);
/* key is NULL inside arrays (and for the top-level value). */
void wl_json_obj_begin(struct wl_json *j, const char *key);
void wl_json_obj_end(struct wl_json *j);
void wl_json_arr_begin(struct wl_json *j, const char *key);
void wl_json_arr_end(struct wl_json *j);
void wl_json_str(struct wl_json *j, const char *key, const char *v); /* NULL -> null */
void wl_json_int(struct wl_json *j, const char *key, long long v);
void wl_json_uint(struct wl_json *j, const char *key, unsigned long long v);
void wl_json_double(struct wl_json *j, const char *key, double v); /* NaN/inf -> null */
void wl_json_bool(struct wl_json *j, const char *key, bool v);
void wl_json_null(struct wl_json *j, const char *key);
/* Writes a raw, already valid JSON value. */
void wl_json_raw(struct wl_json *j, const char *key, const char *raw);
/* {"0":n,"1":m,...} over online nodes (plus any node with a count). */
void wl_json_node_counts(struct wl_json *j, const char *key, const struct wl_topo *t,
			 const uint64_t *counts);
/* The common header: "workload", "version", "pid", "nodes", "cpus". */
void wl_json_header(struct wl_json *j, const char *workload, const struct wl_topo *t);
/* Prints the buffer plus '\n' on stdout in one write and flushes. */
void wl_json_print(struct wl_json *j);
/* Appends s escaped as a JSON string (with quotes) to j. */
void wl_json_escape(struct wl_json *j, const char *s);

/* ---- statistics ---- */
struct wl_stats {
	double min, max, avg, p50, p95, stddev;
	size_t n;
};
/* Sorts v in place. */
void wl_stats_compute(double *v, size_t n, struct wl_stats *s);
void wl_json_stats(struct wl_json *j, const char *key, const struct wl_stats *s);

#endif
