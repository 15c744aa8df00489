/* Cpulists and the guest's nodes (topo.c). */
#pragma once

#include <sched.h>
#include <stdint.h>
#include <sys/types.h>

#include "inguest/prog.h"

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
