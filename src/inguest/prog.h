/*
 * The in-guest programs' common ground (prog.c): exit codes, limits, the
 * program's name, its errors and out-of-memory policy, the stop signals.
 */
#pragma once

#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

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
