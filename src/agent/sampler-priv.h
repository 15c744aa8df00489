/*
 * What the three files of vnuma-sample share: sampler.c (options, the
 * counters, one sample, the loop), sampler-files.c (files kept open) and
 * sampler-procs.c (the workload's processes and threads).
 */
#pragma once

#include "inguest/buf.h"
#include "inguest/json.h"
#include "inguest/opt.h"
#include "inguest/prog.h"
#include "inguest/time.h"
#include "inguest/topo.h"

/* The nodes, read once at the start (sampler.c). */
extern struct ig_topo topo;
extern int nnodes;                 /* online nodes */
extern int node_ids[VN_MAX_NODES]; /* their ids, ascending */

/* ---- files kept open (sampler-files.c) ---- */

/*
 * The whole file at fd into b, from offset 0 again (procfs and sysfs make
 * the text anew on each read at 0); 0 or -errno, b->s "" on error.
 * read_records for a file of many records (vmstat, numa_maps: it may come a
 * page at a time), pread_all for one of a single record (a sysfs attribute,
 * /proc/PID/stat).
 */
int read_records(int fd, struct ig_buf *b);
int pread_all(int fd, struct ig_buf *b);
/* open(O_RDONLY) of the path printed from fmt. */
__attribute__((format(printf, 1, 2))) int open_ro(const char *fmt, ...);

/*
 * A per-task file that is read by its path each time instead of through a
 * kept descriptor: kernel threads (read only when the table is synced) and
 * whatever did not get a descriptor because the sampler had too many open.
 */
#define NOT_KEPT (-2)
/* Descriptors from here up are not kept: opendir and the reads by path need a few. */
extern long fd_ceiling;
/* A descriptor to keep, NOT_KEPT if out of descriptors, or -1 if the file is not there (the task is gone). */
__attribute__((format(printf, 1, 2))) int open_kept(const char *fmt, ...);
/* The file through fd, or by its path (fmt...) when it is NOT_KEPT; 0 or -errno. */
__attribute__((format(printf, 3, 4))) int read_kept(int fd, struct ig_buf *b, const char *fmt, ...);
/* Closes *fd if open, and makes it -1. */
void close_fd(int *fd);

/* ---- the workload's processes (sampler-procs.c) ---- */

/* Room for argc --match and --pid values, before the options are parsed. */
void procs_init(int argc);
/* --match P and --pid N (struct ig_opt callbacks). */
void procs_add_match(const struct ig_opt *opt, const char *val);
void procs_add_pid(const struct ig_opt *opt, const char *val);
/* After the options: numa_maps read every mem_every-th sample; no --match or --pid watches 'vnuma-wl-'. */
void procs_start(unsigned long mem_every);
/* Sample seq's "procs" and "running_per_node" members. */
void procs_sample(struct ig_json *out, struct ig_buf *b, unsigned long seq);
