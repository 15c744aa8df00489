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
#include "common.h"

#include <errno.h>
#include <getopt.h>
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
static const char *const backing_names[] = { "none", "thp", "hugetlb" };

struct opts {
	uint64_t size;
	enum backing backing;
	int procs;
	double duration;
	const char *pidfile;
};

struct child_result {
	pid_t pid;
	int start_node, cpu, node;
	uint64_t ops;
	double elapsed;
	long minflt, majflt;
};

static void usage(void)
{
	printf("usage: vnuma-wl-anon-cow-rand [options]\n"
	       "  --size SIZE              area the parent maps and fills (default 64M; bare number = MiB)\n"
	       "  --backing none|thp|hugetlb  page backing (default none)\n"
	       "  --procs N                children doing random copy-on-write writes (default 1)\n"
	       "  --duration S             how long the children write (default 10)\n"
	       "  --pidfile PATH           write the children's pids there once they are forked\n"
	       "hugetlb needs free huge pages for the parent's area plus one copy per child.\n");
}

static void parse(int argc, char **argv, struct opts *o)
{
	static const struct option lo[] = {
		{ "size", required_argument, NULL, 's' },
		{ "backing", required_argument, NULL, 'b' },
		{ "procs", required_argument, NULL, 'p' },
		{ "duration", required_argument, NULL, 'd' },
		{ "pidfile", required_argument, NULL, 'P' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 }
	};
	int c;

	*o = (struct opts){ .size = 64ULL << 20, .backing = B_NONE, .procs = 1, .duration = 10 };
	opterr = 0;
	while ((c = getopt_long(argc, argv, "", lo, NULL)) != -1) {
		switch (c) {
		case 's': o->size = wl_opt_size("size", optarg); break;
		case 'b':
			if (!strcmp(optarg, "none") || !strcmp(optarg, "4k"))
				o->backing = B_NONE;
			else if (!strcmp(optarg, "thp"))
				o->backing = B_THP;
			else if (!strcmp(optarg, "hugetlb"))
				o->backing = B_HUGETLB;
			else
				wl_bad_option("backing", optarg, "expected none, thp or hugetlb");
			break;
		case 'p': o->procs = (int)wl_opt_uint("procs", optarg, 1, 4096); break;
		case 'd': o->duration = wl_opt_seconds("duration", optarg, 0.001); break;
		case 'P': o->pidfile = optarg; break;
		case 'h': usage(); exit(0);
		default: wl_unknown_option(argv[optind - 1]);
		}
	}
	if (optind < argc)
		wl_unknown_option(argv[optind]);
}

static void on_sigbus(int sig)
{
	static const char msg[] = "vnuma-wl-anon-cow-rand: SIGBUS in a child: no huge page left for a copy-on-write copy\n";
	ssize_t r = write(STDERR_FILENO, msg, sizeof(msg) - 1);
	(void)r;
	_exit(WL_EXIT_ENV);
}

static void child(const struct opts *o, struct wl_team *team, struct child_result *r, uint64_t *area,
		  size_t len, int idx)
{
	uint64_t seed = wl_seed((uint64_t)idx + 1), ops = 0, words = len / sizeof(uint64_t);
	struct rusage ru0, ru1;
	double t0, now;

	signal(SIGBUS, on_sigbus);
	r->pid = getpid();
	wl_team_ready(team);
	wl_getcpu(NULL, &r->start_node);
	getrusage(RUSAGE_SELF, &ru0);
	t0 = wl_now();
	do {
		for (int k = 0; k < 4096; k++) {
			uint64_t x = wl_rand_next(&seed);
			area[x % words] = x;
		}
		ops += 4096;
		now = wl_now() - t0;
	} while (now < o->duration);
	getrusage(RUSAGE_SELF, &ru1);
	r->ops = ops;
	r->elapsed = now;
	r->minflt = ru1.ru_minflt - ru0.ru_minflt;
	r->majflt = ru1.ru_majflt - ru0.ru_majflt;
	wl_getcpu(&r->cpu, &r->node);
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

int main(int argc, char **argv)
{
	struct opts o;
	struct wl_topo topo;
	struct wl_team team;
	struct child_result *res;
	struct wl_json j;
	size_t len, page_size = 4096;
	uint64_t *area;
	long long huge_kb = 0, huge_bytes = 0;
	double fill_s, t0, elapsed;
	int failed;
	char thp[32] = "";

	wl_init("vnuma-wl-anon-cow-rand");
	parse(argc, argv, &o);
	wl_topo_load(&topo);

	if (o.backing == B_HUGETLB) {
		long long hp = wl_meminfo_value("/proc/meminfo", "Hugepagesize");
		long long free_pages = wl_meminfo_value("/proc/meminfo", "HugePages_Free");
		size_t need;

		if (hp <= 0)
			wl_die(WL_EXIT_ENV, 0, "hugetlb: the kernel has no huge page support (no Hugepagesize in /proc/meminfo)");
		page_size = (size_t)hp * 1024;
		len = (o.size + page_size - 1) / page_size * page_size;
		need = len / page_size * (size_t)(o.procs + 1);
		if (free_pages < 0 || (size_t)free_pages < need)
			wl_die(WL_EXIT_ENV, 0,
			       "hugetlb: need %zu free huge pages of %lld kB (%zu for the area + one copy per child x %d), "
			       "HugePages_Free is %lld; reserve them with sysctl vm.nr_hugepages=N or "
			       "/sys/devices/system/node/nodeN/hugepages/hugepages-%lldkB/nr_hugepages",
			       need, hp, len / page_size, o.procs, free_pages, hp);
		area = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_HUGETLB, -1, 0);
		if (area == MAP_FAILED)
			wl_die(WL_EXIT_ENV, errno, "hugetlb: mmap of %zu bytes with MAP_HUGETLB failed", len);
		huge_bytes = (long long)len;
	} else {
		len = (o.size + 4095) & ~(size_t)4095;
		area = wl_map_anon(len, o.backing == B_THP);
		if (!area)
			wl_die(WL_EXIT_ENV, errno, "mmap of %zu bytes failed", len);
		thp_mode(thp, sizeof(thp));
	}

	t0 = wl_now();
	memset(area, 0x5a, len);
	fill_s = wl_now() - t0;
	if (o.backing != B_HUGETLB) {
		huge_kb = wl_meminfo_value("/proc/self/smaps_rollup", "AnonHugePages");
		huge_bytes = huge_kb > 0 ? huge_kb * 1024 : 0;
	}

	res = wl_map_shared(sizeof(*res) * (size_t)o.procs);
	wl_team_init(&team, o.procs);
	for (int i = 0; i < o.procs; i++)
		if (wl_team_fork(&team, i) == 0)
			child(&o, &team, &res[i], area, len, i);
	wl_team_go(&team, o.pidfile);
	t0 = wl_now();
	failed = wl_team_wait(&team);
	elapsed = wl_now() - t0;
	if (failed)
		wl_die(WL_EXIT_ENV, 0, "%d of %d children failed%s", failed, o.procs,
		       o.backing == B_HUGETLB ? " (hugetlb: probably out of huge pages for copy-on-write)" : "");

	uint64_t ops = 0;
	double ops_s = 0;
	for (int i = 0; i < o.procs; i++) {
		ops += res[i].ops;
		if (res[i].elapsed > 0)
			ops_s += (double)res[i].ops / res[i].elapsed;
	}

	wl_json_init(&j);
	wl_json_obj_begin(&j, NULL);
	wl_json_header(&j, "anon-cow-rand", &topo);
	wl_json_str(&j, "backing", backing_names[o.backing]);
	if (o.backing != B_HUGETLB)
		wl_json_str(&j, "thp_enabled", thp);
	wl_json_uint(&j, "size_bytes", len);
	wl_json_uint(&j, "page_size", page_size);
	wl_json_int(&j, "huge_bytes", huge_bytes);
	wl_json_int(&j, "procs", o.procs);
	wl_json_double(&j, "duration_s", o.duration);
	wl_json_double(&j, "elapsed_s", elapsed);
	wl_json_double(&j, "fill_s", fill_s);
	wl_json_uint(&j, "ops_total", ops);
	wl_json_double(&j, "ops_per_s", ops_s);
	wl_json_double(&j, "bytes_per_s", ops_s * 8);
	wl_json_arr_begin(&j, "children");
	for (int i = 0; i < o.procs; i++) {
		struct child_result *r = &res[i];

		wl_json_obj_begin(&j, NULL);
		wl_json_int(&j, "pid", r->pid);
		wl_json_uint(&j, "ops", r->ops);
		wl_json_double(&j, "elapsed_s", r->elapsed);
		wl_json_double(&j, "ops_per_s", r->elapsed > 0 ? (double)r->ops / r->elapsed : 0);
		wl_json_int(&j, "minflt", r->minflt);
		wl_json_int(&j, "majflt", r->majflt);
		wl_json_int(&j, "start_node", r->start_node);
		wl_json_int(&j, "cpu", r->cpu);
		wl_json_int(&j, "node", r->node);
		wl_json_obj_end(&j);
	}
	wl_json_arr_end(&j);
	wl_json_obj_end(&j);
	wl_json_print(&j);
	wl_json_free(&j);
	return 0;
}
