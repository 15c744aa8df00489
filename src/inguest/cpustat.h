/* CPU time per CPU from /proc/stat (cpustat.c). */
#pragma once

#include <stdbool.h>
#include <stdint.h>

#include "inguest/prog.h"

struct ig_cpustat {
	int nr_cpus;                 /* highest "cpuN" line + 1 */
	bool present[IG_MAX_CPUS];   /* a line for the CPU (offline CPUs have none) */
	uint64_t busy[IG_MAX_CPUS];  /* user nice system irq softirq steal, in USER_HZ ticks */
	uint64_t total[IG_MAX_CPUS]; /* busy, idle and iowait */
};
/*
 * The "cpuN" lines of text in /proc/stat's format into s (the "cpu" sum line
 * and every other line are skipped). 0, or -EINVAL for a cpuN line that is
 * malformed or names a CPU >= IG_MAX_CPUS (s then holds the lines before it).
 */
int ig_cpustat_parse(const char *text, struct ig_cpustat *s);
/* /proc/stat into s; 0 or -errno. */
int ig_cpustat_read(struct ig_cpustat *s);
/*
 * The average number of busy CPUs from a to b: each CPU's busy ticks over its
 * ticks, summed over the CPUs present in both. -1 when no CPU's ticks advanced.
 */
double ig_cpustat_busy_cpus(const struct ig_cpustat *a, const struct ig_cpustat *b);
