/*
 * The in-guest support library: what the programs that run inside the guest
 * (the workloads vnuma-wl-*, the sampler vnuma-sample) share.
 *
 * They run in a bare busybox initramfs: static, libc only (no libnuma, no
 * json-c). Everything NUMA goes through raw syscalls and sysfs.
 *
 * Conventions for every program:
 *   - JSON lines on stdout (a workload: exactly one object, at the end);
 *   - progress and diagnostics on stderr;
 *   - exit 0 success, 2 bad option (one line naming option and value),
 *     3 environment failure (hugetlb pages missing, cgroup not writable,
 *     out of memory...).
 *
 * One file per section: prog.c (name, errors, the stop signals), opt.c (option table and
 * values), time.c (clocks, seeds), buf.c (growable buffers, whole files),
 * topo.c (cpulists, nodes), placement.c (move_pages), mem.c (mappings),
 * team.c (forked workers), json.c (the JSON writer), stats.c (statistics).
 */
#ifndef VN_INGUEST_H
#define VN_INGUEST_H

#include <sched.h>
#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "topology/limits.h" /* VN_MAX_NODES: the model's node limit */

#define IG_EXIT_OK    0
#define IG_EXIT_USAGE 2
#define IG_EXIT_ENV   3

/* As many CPUs as a topology can hold (VN_CPUSET_MAX in util/parse.h). */
#define IG_MAX_CPUS 4096

/* Where the kernel describes the nodes. */
#define IG_NODE_DIR "/sys/devices/system/node"

/* The base page: what the workloads' mappings are rounded to and move_pages(2) is asked about. */
#define IG_PAGE_SIZE 4096UL

/* size rounded up to a whole number of pages of page bytes (a power of two). */
static inline size_t ig_round_up(uint64_t size, size_t page)
{
	return (size_t)((size + page - 1) & ~(uint64_t)(page - 1));
}

/* Default cap on pages queried with move_pages(2) per placement sample. */
#define IG_DEFAULT_MAX_SAMPLE 65536

/* A macro's value as a string literal, for --help texts. */
#define IG_STR_(x) #x
#define IG_STR(x)  IG_STR_(x)

/* ---- the program (prog.c) ---- */
struct ig_topo;

/* The program name used in messages; set by ig_init(). */
extern const char *ig_prog;
/* Set by ig_child_setup: this process is a forked worker, which leaves with _exit. */
extern bool ig_in_child;
/* A workload's NAME; set by ig_workload_init(). */
extern const char *ig_workload;

void ig_init(const char *prog);
/*
 * What every workload's main() starts with: ig_init("vnuma-wl-NAME"), NAME
 * kept as the result's "workload" (ig_json_result_begin), and the topology
 * into t, read before the options so that their checks may use it.
 */
void ig_workload_init(const char *name, struct ig_topo *t);

/* The signal that asked the program to stop (SIGTERM or SIGINT), 0 until one came. */
extern volatile sig_atomic_t ig_stop_requested;
/*
 * SIGTERM and SIGINT set ig_stop_requested, without SA_RESTART so that they
 * cut a sleep or a read short: the program leaves its loop and still writes
 * what it has.
 */
void ig_stop_on_signals(void);

__attribute__((noreturn, format(printf, 3, 4))) void ig_die(int code, int errnum, const char *fmt, ...);
/*
 * The in-guest programs' one out-of-memory policy: exit 3 with
 * "PROG: WHAT: Cannot allocate memory". ig_die leaves a forked worker with
 * _exit, so no stdio buffer it inherited is flushed twice.
 */
__attribute__((noreturn)) void ig_oom(const char *what);
/* calloc and reallocarray (n * size checked for overflow) that never return NULL: ig_oom(what). */
void *ig_xcalloc(size_t n, size_t size, const char *what);
void *ig_xrealloc(void *p, size_t n, size_t size, const char *what);
/* Exit 2: "PROG: invalid value 'VAL' for --OPT: WHY" */
__attribute__((noreturn)) void ig_bad_option(const char *opt, const char *val, const char *why);
__attribute__((noreturn)) void ig_unknown_option(const char *arg);
/* Exit 2 unless size >= per * count: a --SIZE that cannot hold count workers' (or one noun's) share. */
void ig_check_size(const char *opt, const char *given, uint64_t size, uint64_t per, uint64_t count, const char *noun);

/* ---- options (opt.c) ---- */
/* Option values; each calls ig_bad_option on error. */
/* A size: N[KMGT] or N[KMGT]iB or N[K/M/G]B; a bare number means MiB. */
uint64_t ig_opt_size(const char *opt, const char *val);
/* An unsigned integer in [min, max]. */
uint64_t ig_opt_uint(const char *opt, const char *val, uint64_t min, uint64_t max);
/* Seconds: "1.5", "1.5s", "250ms", "2m"; must be >= min. */
double ig_opt_seconds(const char *opt, const char *val, double min);

enum ig_opt_type {
	IG_OPT_SIZE,    /* uint64_t *dst: ig_opt_size() */
	IG_OPT_U64,     /* uint64_t *dst: ig_opt_uint(min, max) */
	IG_OPT_INT,     /* int *dst: ig_opt_uint(min, max), max <= INT_MAX */
	IG_OPT_SECONDS, /* double *dst: ig_opt_seconds(min_s) */
	IG_OPT_STRING,  /* const char **dst: the argument itself */
	IG_OPT_CHOICE,  /* int *dst: the value of the choice named, else bad option (why) */
	IG_OPT_CALL,    /* call(opt, argument) */
};

struct ig_opt_choice {
	const char *name; /* NULL ends the list */
	int value;
};

/* One --name VALUE option. A table of them ends with a NULL name. */
struct ig_opt {
	const char *name;
	enum ig_opt_type type;
	void *dst;
	uint64_t min, max;                                       /* U64, INT */
	double min_s;                                            /* SECONDS */
	const struct ig_opt_choice *choices;                     /* CHOICE */
	const char *why;                                         /* CHOICE: the message when none matches */
	void (*call)(const struct ig_opt *opt, const char *val); /* CALL; opt->dst is its context */
	const char **given;                                      /* if set: the argument as given, for later checks */
	char short_name;                                         /* if set: also -C VALUE */
	const char *arg;  /* the value's name in --help (default from the type: SIZE, N, S, PATH, a|b) */
	const char *help; /* one line for --help */
};

/*
 * Parses argv against opts, storing each value as it comes (so defaults are
 * set before). --help prints the usage made from the table (then notes, if
 * any) on stdout and exits 0; an unknown option, a missing value or an
 * argument that is not an option exits 2 with one line naming it.
 */
void ig_opts_parse(int argc, char **argv, const struct ig_opt *opts, const char *notes);

/* ---- time and seeds (time.c) ---- */
double ig_now(void);             /* CLOCK_MONOTONIC seconds */
double ig_thread_cpu_time(void); /* CLOCK_THREAD_CPUTIME_ID seconds */
void ig_sleep(double seconds);

static inline uint64_t ig_rand_next(uint64_t *s)
{
	/* xorshift64* */
	uint64_t x = *s;
	x ^= x >> 12;
	x ^= x << 25;
	x ^= x >> 27;
	*s = x;
	return x * 0x2545F4914F6CDD1DULL;
}
uint64_t ig_seed(uint64_t salt);
/* count / seconds, or 0 when no time passed (a worker that never ran). */
double ig_rate(double count, double seconds);

/* ---- buffers and files (buf.c) ---- */
/* A growable, always NUL-terminated byte buffer; {0} is an empty one. Out of memory exits 3. */
struct ig_buf {
	char *s;
	size_t len, cap;
};
/* Room for n more bytes (plus the NUL). */
void ig_buf_reserve(struct ig_buf *b, size_t n);
void ig_buf_add(struct ig_buf *b, const char *s, size_t n);
__attribute__((format(printf, 2, 3))) void ig_buf_printf(struct ig_buf *b, const char *fmt, ...);
/* Empties it, keeping the memory. */
void ig_buf_clear(struct ig_buf *b);
void ig_buf_free(struct ig_buf *b);

/* The whole file into b (emptied first; "" on error). Returns 0 or -errno. */
int ig_read_file(const char *path, struct ig_buf *b);
/* The same from fd's offset to EOF. */
int ig_read_fd(int fd, struct ig_buf *b);
/* write(2) until all of s is written; 0 or -errno. */
int ig_write_all(int fd, const char *s, size_t n);
/* Writes the whole string to path (e.g. cgroup.procs); 0 or -errno. */
int ig_write_file(const char *path, const char *s);
/* Writes the pids, one per line, to path atomically (tmp + rename); 0 or -errno. */
int ig_write_pidfile(const char *path, const pid_t *pids, size_t n);
/* A "Key:   N kB" value from /proc/meminfo-like files, in the file's unit; -1 if absent. */
long long ig_meminfo_value(const char *path, const char *key);

/* ---- cpulists and nodes (topo.c) ---- */
/*
 * A kernel cpulist ("0-3,8,10-11", ending at NUL or newline): calls
 * fn(lo, hi, arg) for each range in order. Returns 0; -EINVAL when it is
 * malformed (after the ranges before the fault); or fn's value when negative.
 */
int ig_cpulist_ranges(const char *s, int (*fn)(long lo, long hi, void *arg), void *arg);
/* The cpulist into set; 0 or -EINVAL (also for a member >= CPU_SETSIZE). */
int ig_parse_cpulist(const char *s, cpu_set_t *set);

struct ig_topo {
	int nr_nodes; /* highest online node + 1 */
	bool online[VN_MAX_NODES];
	int node_cpus[VN_MAX_NODES]; /* CPUs per node */
	int cpu_node[IG_MAX_CPUS];   /* -1 when unknown */
	int nr_cpus;                 /* highest CPU seen + 1 */
	bool numa;                   /* the node directory exists */
};
/* Reads IG_NODE_DIR; on a kernel without NUMA, node 0 = all CPUs. */
void ig_topo_load(struct ig_topo *t);
/* The same from another node directory (tests). */
void ig_topo_load_at(struct ig_topo *t, const char *node_dir);
int ig_topo_node_of_cpu(const struct ig_topo *t, int cpu);
/* The node with the largest of counts[VN_MAX_NODES] (the lowest such), or -1 when all are 0. */
int ig_node_busiest(const uint64_t *counts);

/* Node N's CPUs from IG_NODE_DIR/nodeN/cpulist; 0 or -errno. */
int ig_node_cpus(int node, cpu_set_t *set);
/* sched_setaffinity(pid, node's CPUs); 0 or -errno. Memory policy untouched. */
int ig_move_to_node(pid_t pid, int node);
/* getcpu(2): the CPU and node the caller runs on right now. */
void ig_getcpu(int *cpu, int *node);

/* ---- page placement, move_pages(2) query mode (placement.c) ---- */
struct ig_placement {
	uint64_t sampled;                /* pages queried */
	uint64_t per_node[VN_MAX_NODES]; /* pages on each node */
	uint64_t not_present;            /* -ENOENT: not faulted in / swapped */
	uint64_t other;                  /* other errors or node >= VN_MAX_NODES */
	int err;                         /* 0, or -errno when move_pages itself failed */
};
/*
 * Queries where the pages of [addr, addr+len) live, evenly sampling at most
 * max_sample pages of page_size bytes (0 = every page).
 */
void ig_placement_query(void *addr, size_t len, size_t page_size, size_t max_sample, struct ig_placement *p);
/* Counts n move_pages status values (a node, or -errno) into p. */
void ig_placement_count(struct ig_placement *p, const int *status, size_t n);
/* The node holding the most sampled pages, or -1. */
int ig_placement_main_node(const struct ig_placement *p);
/* The share of the sampled pages on node; 0 when none was sampled or node is none (-1). */
double ig_placement_fraction(const struct ig_placement *p, int node);
/* Adds src's counts into dst (a worker's areas as one); dst keeps its own error, else takes src's. */
void ig_placement_add(struct ig_placement *dst, const struct ig_placement *src);
/*
 * Locality over several workers: all their sampled pages, and those on the
 * node each worker ran on (ig_locality_add with that node, or -1 for none).
 */
struct ig_locality {
	uint64_t local, sampled;
};
void ig_locality_add(struct ig_locality *l, const struct ig_placement *p, int node);
/* local / sampled, 0 when nothing was sampled. */
double ig_locality_fraction(const struct ig_locality *l);
struct ig_json;
struct ig_topo;
/* pages_sampled, pages_per_node, pages_not_present, pages_other and (on failure) placement_error. */
void ig_json_placement(struct ig_json *j, const struct ig_topo *t, const struct ig_placement *p);

/* ---- memory (mem.c) ---- */
/* Anonymous private mapping; thp: 0 normal, 1 THP (aligned + MADV_HUGEPAGE). NULL on failure. */
void *ig_map_anon(size_t len, int thp);
void ig_unmap_anon(void *p, size_t len);
/* Shared anonymous memory for results from forked children (zeroed). Dies on failure. */
void *ig_map_shared(size_t len);
/* In a forked child: die with SIGKILL when the parent goes away. */
void ig_child_setup(void);

/* ---- forked worker processes (team.c) ---- */
/*
 * The parent forks n workers; each prepares (allocates, touches), calls
 * ig_team_ready() and blocks until the parent calls ig_team_go(), so all
 * start their measured phase together. The pidfile (if any) is written
 * once every worker is ready.
 */
struct ig_team {
	int n;
	pid_t *pids;
	int ready[2], go[2];
};
/*
 * The head of every team worker's result, the first member of the
 * workload's own result struct: the pid, filled in by the team; what the
 * worker did, in the workload's unit (transactions, random writes, measured
 * iterations), and the seconds it did it in, filled in by the worker.
 */
struct ig_worker {
	pid_t pid;
	uint64_t ops;
	double elapsed;
};
void ig_team_init(struct ig_team *t, int n);
/* Forks worker i; returns 0 in the child (which must end with _exit). */
pid_t ig_team_fork(struct ig_team *t, int i);
/* In the worker: report ready and wait for the start signal. */
void ig_team_ready(struct ig_team *t);
/* In the parent: wait until all are ready (dies with exit 3 if one exits first), write pidfile, start them. */
void ig_team_go(struct ig_team *t, const char *pidfile);
/* In the parent: reap all; returns the number of workers that failed (message on stderr). */
int ig_team_wait(struct ig_team *t);
/*
 * All of the above: forks n workers, worker i running
 * worker(team, i, ctx, results + i * result_size) (it calls ig_team_ready()
 * once prepared and ends with _exit; results is shared memory from
 * ig_map_shared(), each result beginning with its struct ig_worker, whose
 * pid is set here), starts them together, reaps them. Returns the seconds
 * from the start until the last one was reaped; *failed is how many failed.
 */
double ig_team_run(int n, const char *pidfile, void (*worker)(struct ig_team *t, int i, const void *ctx, void *result),
		   const void *ctx, void *results, size_t result_size, int *failed);
/*
 * ig_team_run for a workload's main(): maps the n results itself and returns
 * them, *elapsed gets the seconds. A failed worker ends the program (exit 3,
 * "F of n NOUN failed", then hint if not NULL).
 */
void *ig_team_run_all(int n, const char *pidfile,
		      void (*worker)(struct ig_team *t, int i, const void *ctx, void *result), const void *ctx,
		      size_t result_size, const char *noun, const char *hint, double *elapsed);

/* Over n results of result_size bytes, each beginning with its struct ig_worker. */
struct ig_team_totals {
	uint64_t ops;     /* summed */
	double ops_per_s; /* each worker's own rate, summed: the team's throughput */
};
struct ig_team_totals ig_team_totals(const void *results, int n, size_t result_size);
/* "pid", "ops", "elapsed_s", "ops_per_s": a worker's head as members of its object. */
void ig_json_worker(struct ig_json *j, const struct ig_worker *w);

/* ---- JSON writer (json.c) ---- */
struct ig_json {
	struct ig_buf b; /* b.s is the text so far */
	int depth;
	bool first[32]; /* no member written yet at this depth */
};
void ig_json_init(struct ig_json *j);
/* Starts a new document, keeping the memory. */
void ig_json_reset(struct ig_json *j);
void ig_json_free(struct ig_json *j);
/* key is NULL inside arrays (and for the top-level value). */
void ig_json_obj_begin(struct ig_json *j, const char *key);
void ig_json_obj_end(struct ig_json *j);
void ig_json_arr_begin(struct ig_json *j, const char *key);
void ig_json_arr_end(struct ig_json *j);
void ig_json_str(struct ig_json *j, const char *key, const char *v); /* NULL -> null */
/* n bytes at v, which may hold anything (a task's comm). */
void ig_json_str_n(struct ig_json *j, const char *key, const char *v, size_t n);
/*
 * "key suffix":text as given: key[0..klen) and suffix (or NULL) need no
 * escaping and text[0..n) is a JSON value already, such as a number as the
 * kernel printed it. For the sampler's hot path: no escaping, no printf.
 */
void ig_json_raw(struct ig_json *j, const char *key, size_t klen, const char *suffix, const char *text, size_t n);
void ig_json_int(struct ig_json *j, const char *key, long long v);
void ig_json_uint(struct ig_json *j, const char *key, unsigned long long v);
void ig_json_double(struct ig_json *j, const char *key, double v); /* %.10g; NaN/inf -> null */
/* v with exactly `decimals` digits after the point; NaN/inf -> null. */
void ig_json_fixed(struct ig_json *j, const char *key, double v, int decimals);
void ig_json_bool(struct ig_json *j, const char *key, bool v);
void ig_json_null(struct ig_json *j, const char *key);
/*
 * Appends s[0..n) as a JSON string (with quotes): quotes, backslashes and
 * control characters escaped, valid UTF-8 kept, each invalid byte U+FFFD.
 */
void ig_json_escape(struct ig_buf *b, const char *s, size_t n);
/* Where the next value will go, to take it back (a record found stale half way). */
struct ig_json_mark {
	size_t len;
	int depth;
	bool first;
};
struct ig_json_mark ig_json_mark(const struct ig_json *j);
void ig_json_rewind(struct ig_json *j, struct ig_json_mark m);
/* {"0":n,"1":m,...} over online nodes (plus any node with a count); counts[VN_MAX_NODES]. */
void ig_json_node_counts(struct ig_json *j, const char *key, const struct ig_topo *t, const uint64_t *counts);
/* The same nodes with each count's share of all counts (0 when all are 0). */
void ig_json_node_shares(struct ig_json *j, const char *key, const struct ig_topo *t, const uint64_t *counts);
/* v, or null when v < 0: the seconds until something that may never have come. */
void ig_json_time(struct ig_json *j, const char *key, double v);
/*
 * Starts a workload's result object with its header: "workload" (the name
 * given to ig_workload_init), "version", "pid", "nodes", "cpus", "numa".
 */
void ig_json_result_begin(struct ig_json *j, const struct ig_topo *t);
/* Writes the text plus '\n' on stdout in one write(2) (after flushing stdio); 0 or -errno. */
int ig_json_print(struct ig_json *j);
/*
 * Closes what ig_json_result_begin opened, prints it and frees j. A result
 * that cannot be written is fatal (exit 3): the host must see no result
 * rather than a workload that claims success without one.
 */
void ig_json_result_end(struct ig_json *j);

/* ---- statistics (stats.c) ---- */
struct ig_stats {
	double min, max, avg, p50, p95, stddev;
	size_t n;
};
/* Sorts v in place. */
void ig_stats_compute(double *v, size_t n, struct ig_stats *s);
void ig_json_stats(struct ig_json *j, const char *key, const struct ig_stats *s);

#endif
