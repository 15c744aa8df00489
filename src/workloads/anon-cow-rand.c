/*
 * vnuma-wl-anon-cow-rand: vm-scalability's anon-cow-rand(-hugetlb) case.
 *
 * The parent maps --size of private anonymous memory (plain, THP via
 * madvise(MADV_HUGEPAGE), or hugetlb via MAP_HUGETLB), fills it, and forks
 * --procs children. Each child does random 8-byte writes over the whole
 * area for --duration: the first write to each page is a copy-on-write
 * fault (for hugetlb a whole huge page copy), which is where NUMA hint
 * faults and the mTHP/hugetlb NUMA-balancing paths get exercised.
 * Reports total and per-child throughput.
 */
#include "inguest/buf.h"
#include "inguest/json.h"
#include "inguest/mem.h"
#include "inguest/opt.h"
#include "inguest/prog.h"
#include "inguest/team.h"
#include "inguest/time.h"
#include "inguest/topo.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <unistd.h>

#ifndef MAP_HUGETLB
#define MAP_HUGETLB 0x40000
#endif

enum backing { B_NONE, B_THP, B_HUGETLB };
static const char *const backing_names[] = {"none", "thp", "hugetlb"};

struct opts {
	uint64_t size;
	int backing; /* enum backing */
	int procs;
	double duration;
	const char *pidfile;
};

struct child_result {
	struct ig_worker w; /* ops: random 8-byte writes */
	int start_node, cpu, node;
	long minflt, majflt;
};

static void parse(int argc, char **argv, struct opts *o)
{
	static const struct ig_opt_choice backings[] = {
		{"none", B_NONE}, {"4k", B_NONE}, {"thp", B_THP}, {"hugetlb", B_HUGETLB}, {NULL}};
	const struct ig_opt opts[] = {{"size", IG_OPT_SIZE, .dst = &o->size,
				       .help = "area the parent maps and fills (default 64M; bare number = MiB)"},
				      {"backing", IG_OPT_CHOICE, .dst = &o->backing, .choices = backings,
				       .why = "expected none, thp or hugetlb", .arg = "none|thp|hugetlb",
				       .help = "page backing (default none)"},
				      {"procs", IG_OPT_INT, .dst = &o->procs, .min = 1, .max = 4096,
				       .help = "children doing random copy-on-write writes (default 1)"},
				      {"duration", IG_OPT_SECONDS, .dst = &o->duration, .min_s = 0.001,
				       .help = "how long the children write (default 10)"},
				      {"pidfile", IG_OPT_STRING, .dst = &o->pidfile,
				       .help = "write the children's pids there once they are forked"},
				      {0}};

	*o = (struct opts){.size = 64ULL << 20, .backing = B_NONE, .procs = 1, .duration = 10};
	ig_opts_parse(argc, argv, opts,
		      "hugetlb needs free huge pages for the parent's area plus one copy per child.\n");
}

static void on_sigbus(int sig)
{
	static const char msg[] =
		"vnuma-wl-anon-cow-rand: SIGBUS in a child: no huge page left for a copy-on-write copy\n";
	ssize_t r = write(STDERR_FILENO, msg, sizeof(msg) - 1);
	(void)r;
	_exit(IG_EXIT_ENV);
}

/* What every child writes into: the parent's filled area, and what the result says of it. */
struct area {
	const struct opts *o;
	uint64_t *p;
	size_t len;
	size_t page_size;
	long long huge_bytes; /* of the area, in huge pages (hugetlb, or THP as smaps_rollup counts it) */
	double fill_s;
	char thp[32]; /* THP's mode ("" for hugetlb) */
};

/* A child of the team: random copy-on-write writes into the parent's area. */
static void child(struct ig_team *team, int idx, const void *ctx, void *result)
{
	const struct area *a = ctx;
	const struct opts *o = a->o;
	struct child_result *r = result;
	uint64_t *area = a->p;
	size_t len = a->len;
	uint64_t seed = ig_seed((uint64_t)idx + 1), ops = 0, words = len / sizeof(uint64_t);
	struct rusage ru0, ru1;
	double t0, now;

	signal(SIGBUS, on_sigbus);
	ig_team_ready(team);
	ig_getcpu(NULL, &r->start_node);
	getrusage(RUSAGE_SELF, &ru0);
	t0 = ig_now();
	do {
		for (int k = 0; k < 4096; k++) {
			uint64_t x = ig_rand_next(&seed);
			area[x % words] = x;
		}
		ops += 4096;
		now = ig_now() - t0;
	} while (now < o->duration);
	getrusage(RUSAGE_SELF, &ru1);
	r->w.ops = ops;
	r->w.elapsed = now;
	r->minflt = ru1.ru_minflt - ru0.ru_minflt;
	r->majflt = ru1.ru_majflt - ru0.ru_majflt;
	ig_getcpu(&r->cpu, &r->node);
	_exit(0);
}

static void thp_mode(char *buf, size_t size)
{
	FILE *f = fopen("/sys/kernel/mm/transparent_hugepage/enabled", "re");
	char line[128], *a, *b;

	snprintf(buf, size, "unknown");
	if (!f)
		return;
	if (fgets(line, sizeof(line), f) && (a = strchr(line, '[')) && (b = strchr(a, ']'))) {
		*b = '\0';
		snprintf(buf, size, "%s", a + 1);
	}
	fclose(f);
}

/* Maps the area with o's backing (hugetlb: only if there are free huge pages for it and every child's copy), fills it. */
static void map_area(const struct opts *o, struct area *a)
{
	double t0;

	*a = (struct area){.o = o, .page_size = IG_PAGE_SIZE};
	if (o->backing == B_HUGETLB) {
		long long hp = ig_meminfo_value("/proc/meminfo", "Hugepagesize");
		long long free_pages = ig_meminfo_value("/proc/meminfo", "HugePages_Free");
		size_t need;

		if (hp <= 0)
			ig_die(IG_EXIT_ENV, 0,
			       "hugetlb: the kernel has no huge page support (no Hugepagesize in /proc/meminfo)");
		a->page_size = (size_t)hp * 1024;
		a->len = ig_round_up(o->size, a->page_size); /* huge page sizes are powers of two */
		need = a->len / a->page_size * (size_t)(o->procs + 1);
		if (free_pages < 0 || (size_t)free_pages < need)
			ig_die(IG_EXIT_ENV, 0,
			       "hugetlb: need %zu free huge pages of %lld kB (%zu for the area + one copy per child x "
			       "%d), "
			       "HugePages_Free is %lld; reserve them with sysctl vm.nr_hugepages=N or "
			       "/sys/devices/system/node/nodeN/hugepages/hugepages-%lldkB/nr_hugepages",
			       need, hp, a->len / a->page_size, o->procs, free_pages, hp);
		a->p = mmap(NULL, a->len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_HUGETLB, -1, 0);
		if (a->p == MAP_FAILED)
			ig_die(IG_EXIT_ENV, errno, "hugetlb: mmap of %zu bytes with MAP_HUGETLB failed", a->len);
		a->huge_bytes = (long long)a->len;
	} else {
		a->len = ig_round_up(o->size, a->page_size);
		a->p = ig_map_anon(a->len, o->backing == B_THP);
		if (!a->p)
			ig_die(IG_EXIT_ENV, errno, "mmap of %zu bytes failed", a->len);
		thp_mode(a->thp, sizeof(a->thp));
	}

	t0 = ig_now();
	memset(a->p, 0x5a, a->len);
	a->fill_s = ig_now() - t0;
	if (o->backing != B_HUGETLB) {
		long long huge_kb = ig_meminfo_value("/proc/self/smaps_rollup", "AnonHugePages");
		a->huge_bytes = huge_kb > 0 ? huge_kb * 1024 : 0;
	}
}

static void write_result(const struct opts *o, const struct ig_topo *topo, const struct area *a,
			 const struct child_result *res, double elapsed)
{
	struct ig_team_totals tot = ig_team_totals(res, o->procs, sizeof(*res));
	struct ig_json j;

	ig_json_result_begin(&j, topo);
	ig_json_str(&j, "backing", backing_names[o->backing]);
	if (o->backing != B_HUGETLB)
		ig_json_str(&j, "thp_enabled", a->thp);
	ig_json_uint(&j, "size_bytes", a->len);
	ig_json_uint(&j, "page_size", a->page_size);
	ig_json_int(&j, "huge_bytes", a->huge_bytes);
	ig_json_int(&j, "procs", o->procs);
	ig_json_double(&j, "duration_s", o->duration);
	ig_json_double(&j, "elapsed_s", elapsed);
	ig_json_double(&j, "fill_s", a->fill_s);
	ig_json_uint(&j, "ops_total", tot.ops);
	ig_json_double(&j, "ops_per_s", tot.ops_per_s);
	ig_json_double(&j, "bytes_per_s", tot.ops_per_s * 8);
	ig_json_arr_begin(&j, "children");
	for (int i = 0; i < o->procs; i++) {
		const struct child_result *r = &res[i];

		ig_json_obj_begin(&j, NULL);
		ig_json_worker(&j, &r->w);
		ig_json_int(&j, "minflt", r->minflt);
		ig_json_int(&j, "majflt", r->majflt);
		ig_json_int(&j, "start_node", r->start_node);
		ig_json_int(&j, "cpu", r->cpu);
		ig_json_int(&j, "node", r->node);
		ig_json_obj_end(&j);
	}
	ig_json_arr_end(&j);
	ig_json_result_end(&j);
}

int main(int argc, char **argv)
{
	struct opts o;
	struct ig_topo topo;
	struct area a;
	double elapsed;

	ig_workload_init("anon-cow-rand", &topo);
	parse(argc, argv, &o);
	map_area(&o, &a);
	struct child_result *res = ig_team_run_all(
		o.procs, o.pidfile, child, &a, sizeof(*res), "children",
		o.backing == B_HUGETLB ? " (hugetlb: probably out of huge pages for copy-on-write)" : NULL, &elapsed);
	write_result(&o, &topo, &a, res, elapsed);
	return 0;
}
