/*
 * How many CPUs were busy over a window, from /proc/stat. Each CPU's share
 * is its own busy ticks over its own ticks, so a CPU whose tick stopped (idle
 * under NO_HZ) or that went offline counts for what it reported, not for the
 * wall clock's length.
 */
#include "inguest/cpustat.h"

#include "inguest/buf.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

/* "cpuN f1 f2 ...": N and the fields after it, up to 10; -EINVAL when not all of the first four are there. */
static int parse_line(const char *p, const char *end, struct ig_cpustat *s)
{
	uint64_t f[10] = {0};
	char *q;
	int n = 0;

	if (*p < '0' || *p > '9')
		return -EINVAL;
	errno = 0;
	unsigned long cpu = strtoul(p, &q, 10);
	if (errno || q == p || cpu >= IG_MAX_CPUS)
		return -EINVAL;
	for (p = q; n < 10 && p < end; n++) {
		while (p < end && *p == ' ')
			p++;
		if (p == end)
			break;
		if (*p < '0' || *p > '9')
			return -EINVAL;
		errno = 0;
		f[n] = strtoull(p, &q, 10);
		if (errno || q > end)
			return -EINVAL;
		p = q;
	}
	if (n < 4 || (p < end && *p != ' '))
		return -EINVAL;
	/* guest and guest_nice (fields 9 and 10) are inside user and nice already. */
	s->busy[cpu] = f[0] + f[1] + f[2] + f[5] + f[6] + f[7];
	s->total[cpu] = s->busy[cpu] + f[3] + f[4];
	s->present[cpu] = true;
	if ((int)cpu + 1 > s->nr_cpus)
		s->nr_cpus = (int)cpu + 1;
	return 0;
}

int ig_cpustat_parse(const char *text, struct ig_cpustat *s)
{
	memset(s, 0, sizeof(*s));
	for (const char *p = text; *p;) {
		const char *end = strchr(p, '\n');
		if (!end)
			end = p + strlen(p);
		if (!strncmp(p, "cpu", 3) && p + 3 < end && p[3] != ' ' && parse_line(p + 3, end, s) < 0)
			return -EINVAL;
		p = *end ? end + 1 : end;
	}
	return 0;
}

int ig_cpustat_read(struct ig_cpustat *s)
{
	struct ig_buf b = {0};
	int r = ig_read_file("/proc/stat", &b);

	if (r == 0)
		r = ig_cpustat_parse(b.s, s);
	ig_buf_free(&b);
	return r;
}

double ig_cpustat_busy_cpus(const struct ig_cpustat *a, const struct ig_cpustat *b)
{
	double sum = 0;
	bool any = false;
	int n = a->nr_cpus < b->nr_cpus ? a->nr_cpus : b->nr_cpus;

	for (int i = 0; i < n; i++) {
		if (!a->present[i] || !b->present[i] || b->total[i] <= a->total[i] || b->busy[i] < a->busy[i])
			continue;
		uint64_t busy = b->busy[i] - a->busy[i], total = b->total[i] - a->total[i];
		sum += (double)(busy < total ? busy : total) / (double)total;
		any = true;
	}
	return any ? sum : -1;
}
