/* Kernel cpulists, and the guest's nodes as sysfs describes them. */
#include "inguest/buf.h"
#include "inguest/prog.h"
#include "inguest/topo.h"

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

int ig_cpulist_ranges(const char *s, int (*fn)(long lo, long hi, void *arg), void *arg)
{
	const char *p = s;

	while (*p && *p != '\n') {
		char *end;
		long a, b;
		int r;

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
		if (b < a)
			return -EINVAL;
		if ((r = fn(a, b, arg)) < 0)
			return r;
		if (*p == ',')
			p++;
		else if (*p && *p != '\n')
			return -EINVAL;
	}
	return 0;
}

static int set_range(long lo, long hi, void *arg)
{
	if (hi >= CPU_SETSIZE)
		return -EINVAL;
	for (long c = lo; c <= hi; c++)
		CPU_SET((int)c, (cpu_set_t *)arg);
	return 0;
}

int ig_parse_cpulist(const char *s, cpu_set_t *set)
{
	CPU_ZERO(set);
	return ig_cpulist_ranges(s, set_range, set);
}

static int node_cpus_at(const char *dir, int node, cpu_set_t *set)
{
	char path[4096];
	struct ig_buf b = {0};
	int r;

	snprintf(path, sizeof(path), "%s/node%d/cpulist", dir, node);
	r = ig_read_file(path, &b);
	if (r == 0)
		r = ig_parse_cpulist(b.s, set);
	ig_buf_free(&b);
	return r;
}

int ig_node_cpus(int node, cpu_set_t *set)
{
	return node_cpus_at(IG_NODE_DIR, node, set);
}

void ig_topo_load_at(struct ig_topo *t, const char *dir)
{
	char path[4096];
	struct ig_buf b = {0};
	cpu_set_t nodes;

	memset(t, 0, sizeof(*t));
	for (int c = 0; c < IG_MAX_CPUS; c++)
		t->cpu_node[c] = -1;

	snprintf(path, sizeof(path), "%s/online", dir);
	if (ig_read_file(path, &b) == 0 && ig_parse_cpulist(b.s, &nodes) == 0) {
		t->numa = true;
		for (int n = 0; n < VN_MAX_NODES; n++) {
			cpu_set_t cpus;

			if (!CPU_ISSET(n, &nodes))
				continue;
			t->online[n] = true;
			t->nr_nodes = n + 1;
			if (node_cpus_at(dir, n, &cpus) < 0)
				continue;
			for (int c = 0; c < IG_MAX_CPUS && c < CPU_SETSIZE; c++) {
				if (CPU_ISSET(c, &cpus)) {
					t->cpu_node[c] = n;
					t->node_cpus[n]++;
					if (c + 1 > t->nr_cpus)
						t->nr_cpus = c + 1;
				}
			}
		}
	}
	ig_buf_free(&b);
	if (!t->numa || t->nr_nodes == 0) {
		long n = sysconf(_SC_NPROCESSORS_CONF);

		if (n < 1)
			n = 1;
		if (n > IG_MAX_CPUS)
			n = IG_MAX_CPUS;
		t->numa = false;
		t->nr_nodes = 1;
		t->online[0] = true;
		t->nr_cpus = (int)n;
		t->node_cpus[0] = (int)n;
		for (int c = 0; c < n; c++)
			t->cpu_node[c] = 0;
	}
}

void ig_topo_load(struct ig_topo *t)
{
	ig_topo_load_at(t, IG_NODE_DIR);
}

int ig_topo_node_of_cpu(const struct ig_topo *t, int cpu)
{
	if (cpu < 0 || cpu >= IG_MAX_CPUS)
		return -1;
	return t->cpu_node[cpu];
}

int ig_node_busiest(const uint64_t *counts)
{
	int best = -1;
	uint64_t most = 0;

	for (int n = 0; n < VN_MAX_NODES; n++) {
		if (counts[n] > most) {
			most = counts[n];
			best = n;
		}
	}
	return best;
}

int ig_move_to_node(pid_t pid, int node)
{
	cpu_set_t set;
	int r = ig_node_cpus(node, &set);

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

void ig_getcpu(int *cpu, int *node)
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
