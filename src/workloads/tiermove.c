/*
 * vnuma-wl-tiermove: where do the hot and the cold pages of a tiered machine go?
 *
 * Allocates --size and touches it all once (the caller binds its memory, e.g.
 * the scenario's "membind" to the DRAM nodes: a size larger than they hold
 * makes reclaim demote the pages touched first, or OOM when demotion is off).
 * Then, for each of --phases phases of --phase-s seconds, it touches a --hot
 * window over and over; each phase moves the window on by its own size, so
 * the hot set of one phase turns cold in the next. At each phase's start and
 * every --interval after it it records
 * where the hot window's pages and all pages are, per node and per memory tier
 * (move_pages(2) in query mode, /sys/devices/virtual/memory_tiering), and each
 * phase (the first touch included) gets its /proc/vmstat deltas of the
 * demotion and promotion counters, of reclaim's (did reclaim run at all:
 * nothing demoted means something only then) and its touch rate.
 * --stop-at-low NODE ends the first touch as NODE falls below its low
 * watermark: kswapd is woken, and the step stays above the min watermark,
 * where direct reclaim with nothing to reclaim (no swap, demotion off)
 * would end in the OOM killer.
 */
#include "inguest/buf.h"
#include "inguest/json.h"
#include "inguest/mem.h"
#include "inguest/opt.h"
#include "inguest/placement.h"
#include "inguest/prog.h"
#include "inguest/time.h"
#include "inguest/topo.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#define PAGE        IG_PAGE_SIZE
#define CHUNK_PAGES 256 /* pages touched between clock checks */
#define MAX_TIERS   16
#define TIER_DIR    "/sys/devices/virtual/memory_tiering"
#define QUERY_BATCH 4096 /* pages per move_pages(2) call */

/*
 * The counters as 6.1 names them in /proc/vmstat; one a kernel lacks is
 * reported missing, never 0. pageoutrun counts kswapd's reclaim passes
 * (balance_pgdat()), which run even when nothing can be reclaimed;
 * zone_reclaim_failed, node reclaim's (vm.zone_reclaim_mode) passes that
 * reclaimed nothing, which scan nothing where the node has only anon.
 */
static const char *const counters[] = {
	"pgdemote_kswapd", "pgdemote_direct", "pgpromote_success", "pgpromote_candidate", "numa_pages_migrated",
	"pageoutrun",      "pgscan_kswapd",   "pgscan_direct",     "zone_reclaim_failed", NULL};
#define NCOUNTERS 9

struct opts {
	uint64_t size, hot, hot_from, max_sample;
	double phase_s, interval;
	int phases, touch_node; /* touch_node: --first-touch-node, -1 none */
	int low_node;           /* --stop-at-low, -1 none */
};

/* Node -> memory tier id (memory_tierN), read once: tiers are fixed once the slow memory is online. */
struct tiers {
	int n;
	int id[MAX_TIERS];
	int of_node[VN_MAX_NODES]; /* index into id, -1: in no tier */
	bool top[VN_MAX_NODES]; /* in a top tier: one holding a node with CPUs, or above it (6.1's top_tier_adistance) */
};

/*
 * Physical memory block -> node, and /proc/self/pagemap: for the pages
 * move_pages(2) calls not present. NUMA balancing's scanner makes a page
 * PROT_NONE until its next touch (in memory-tiering mode, the lower-tier
 * pages), and 6.1's move_pages() query reports such a page as -ENOENT;
 * its PTE still holds the frame, which places it (pagemap gives the PFN to
 * root only, which the guest's workloads are).
 */
struct pfn_nodes {
	int fd; /* /proc/self/pagemap, -1: none */
	uint64_t block_size;
	int *node; /* [memory block]: its node, -1 none */
	size_t n;
};

struct sample {
	double t;
	int phase;
	struct ig_placement hot, all;
	uint64_t hot_hinting, all_hinting; /* of per_node, the pages placed through pagemap */
};

struct phase {
	double start, end;
	uint64_t touches;
	uint64_t delta[NCOUNTERS];
	bool have[NCOUNTERS];
};

struct run {
	const struct opts *o;
	struct tiers tiers;
	struct pfn_nodes pfn;
	char *mem;
	size_t len, pages, hot_pages;
	struct sample *samples;
	size_t nsamples, cap;
	struct phase *ph; /* [0] the first touch, [1..phases] the hot phases */
	uint64_t max_per_node[VN_MAX_NODES];
	double t0;
	bool low_reached;     /* --stop-at-low: the first touch ended below the low watermark */
	int demotion;         /* demotion_enabled as the step began: 1 true, 0 false, -1 no such file */
	long long rate_limit; /* kernel.numa_balancing_promote_rate_limit_MBps as it began, -1 none */
	long long balancing;  /* kernel.numa_balancing as it began (0-3, 2: memory tiering), -1 none */
	char thp[16];         /* the THP mode as it began, "" none */
};

static void parse(int argc, char **argv, struct opts *o)
{
	const char *size_arg = NULL, *hot_arg = NULL, *from_arg = NULL;
	const struct ig_opt opts[] = {
		{"size", IG_OPT_SIZE, .dst = &o->size, .given = &size_arg,
		 .help = "memory to allocate and touch once (default 384M; bare number = MiB)"},
		{"hot", IG_OPT_SIZE, .dst = &o->hot, .given = &hot_arg,
		 .help = "the hot window touched over and over in each phase (default 64M)"},
		{"first-touch-node", IG_OPT_INT, .dst = &o->touch_node, .min = 0, .max = VN_MAX_NODES - 1,
		 .help = "first touch bound to this node, then the default policy: pages start there, movable "
			 "(promotion)"},
		{"hot-from", IG_OPT_SIZE, .dst = &o->hot_from, .given = &from_arg,
		 .help = "where the first phase's window starts (default 0: the memory touched first)"},
		{"phases", IG_OPT_INT, .dst = &o->phases, .min = 1, .max = 64,
		 .help = "phases; each moves the hot window on by its size (default 3)"},
		{"phase-s", IG_OPT_SECONDS, .dst = &o->phase_s, .min_s = 0.001,
		 .help = "seconds per phase (default 10)"},
		{"interval", IG_OPT_SECONDS, .dst = &o->interval, .min_s = 0.001,
		 .help = "placement sample period (default 1)"},
		{"stop-at-low", IG_OPT_INT, .dst = &o->low_node, .min = 0, .max = VN_MAX_NODES - 1,
		 .help = "end the first touch once every zone of this node is below its low watermark (kswapd woken)"},
		{"max-sample", IG_OPT_U64, .dst = &o->max_sample, .min = 0, .max = 1ULL << 30,
		 .help = "pages queried per sample (default 0 = all)"},
		{0}};

	*o = (struct opts){.size = 384ULL << 20,
			   .hot = 64ULL << 20,
			   .phases = 3,
			   .phase_s = 10,
			   .interval = 1,
			   .touch_node = -1,
			   .low_node = -1};
	ig_opts_parse(argc, argv, opts, NULL);
	ig_check_size("size", size_arg, o->size, PAGE, 1, "page");
	ig_check_size("hot", hot_arg, o->hot, PAGE, 1, "page");
	if (o->hot > o->size)
		ig_bad_option("hot", hot_arg ? hot_arg : "64M", "larger than --size");
	if (o->hot_from + o->hot > o->size)
		ig_bad_option("hot-from", from_arg, "the window would end past --size");
}

static int tier_add_node(long lo, long hi, void *arg)
{
	struct tiers *t = arg;

	for (long n = lo; n <= hi; n++)
		if (n >= 0 && n < VN_MAX_NODES)
			t->of_node[n] = t->n;
	return 0;
}

static int cpu_node_add(long lo, long hi, void *arg)
{
	bool *has = arg;

	for (long n = lo; n <= hi; n++)
		if (n >= 0 && n < VN_MAX_NODES)
			has[n] = true;
	return 0;
}

/* The top tiers: every tier whose id is at most that of the slowest tier holding a node with CPUs. */
static void tiers_top(struct tiers *t)
{
	struct ig_buf b = {0};
	bool cpu[VN_MAX_NODES] = {0};
	int top_id = -1;

	if (ig_read_file("/sys/devices/system/node/has_cpu", &b) == 0)
		ig_cpulist_ranges(b.s, cpu_node_add, cpu);
	ig_buf_free(&b);
	for (int n = 0; n < VN_MAX_NODES; n++)
		if (cpu[n] && t->of_node[n] >= 0 && t->id[t->of_node[n]] > top_id)
			top_id = t->id[t->of_node[n]];
	for (int n = 0; n < VN_MAX_NODES; n++)
		t->top[n] = t->of_node[n] >= 0 && t->id[t->of_node[n]] <= top_id;
}

/* No memory_tiering directory (a kernel before 6.1): no tiers, said as such in the result. */
static void tiers_load(struct tiers *t)
{
	DIR *d = opendir(TIER_DIR);
	struct dirent *e;
	struct ig_buf b = {0};

	t->n = 0;
	for (int i = 0; i < VN_MAX_NODES; i++)
		t->of_node[i] = -1;
	if (!d)
		return;
	while ((e = readdir(d)) && t->n < MAX_TIERS) {
		char path[sizeof(TIER_DIR) + sizeof(e->d_name) + 16], *end;
		long id;

		if (strncmp(e->d_name, "memory_tier", 11) != 0)
			continue;
		id = strtol(e->d_name + 11, &end, 10);
		if (end == e->d_name + 11 || *end || id < 0)
			continue;
		snprintf(path, sizeof(path), TIER_DIR "/%s/nodelist", e->d_name);
		if (ig_read_file(path, &b) < 0)
			continue;
		t->id[t->n] = (int)id;
		if (ig_cpulist_ranges(b.s, tier_add_node, t) == 0)
			t->n++;
	}
	closedir(d);
	ig_buf_free(&b);
	tiers_top(t);
}

/* A number file, -1 where it is not there (the rate limit before 6.1, numa_balancing without NUMA_BALANCING). */
static long long read_number(const char *path)
{
	struct ig_buf b = {0};
	long long v = ig_read_file(path, &b) == 0 ? strtoll(b.s, NULL, 10) : -1;

	ig_buf_free(&b);
	return v;
}

/* The THP mode in force, the bracketed word of transparent_hugepage/enabled; "" where there is none. */
static void thp_mode(char *out, size_t len)
{
	struct ig_buf b = {0};
	char *open, *close;

	*out = 0;
	if (ig_read_file("/sys/kernel/mm/transparent_hugepage/enabled", &b) == 0 && (open = strchr(b.s, '[')) &&
	    (close = strchr(open, ']')))
		snprintf(out, len, "%.*s", (int)(close - open - 1), open + 1);
	ig_buf_free(&b);
}

/* /sys/kernel/mm/numa/demotion_enabled: 1 true, 0 false, -1 not there (a kernel before 5.15). */
static int demotion_enabled(void)
{
	struct ig_buf b = {0};
	int v = -1;

	if (ig_read_file("/sys/kernel/mm/numa/demotion_enabled", &b) == 0)
		v = !strncmp(b.s, "true", 4) ? 1 : !strncmp(b.s, "false", 5) ? 0 : -1;
	ig_buf_free(&b);
	return v;
}

/* The counters' values now; have[i] false when /proc/vmstat has no such line. */
static void vmstat_read(uint64_t *v, bool *have)
{
	struct ig_buf b = {0};

	memset(have, 0, NCOUNTERS * sizeof(*have));
	if (ig_read_file("/proc/vmstat", &b) < 0)
		ig_die(IG_EXIT_ENV, errno, "cannot read /proc/vmstat");
	for (char *line = b.s; line && *line;) {
		char *nl = strchr(line, '\n'), *sp = strchr(line, ' ');
		for (int i = 0; sp && (!nl || sp < nl) && i < NCOUNTERS; i++)
			if ((size_t)(sp - line) == strlen(counters[i]) && !strncmp(line, counters[i], sp - line)) {
				v[i] = strtoull(sp + 1, NULL, 10);
				have[i] = true;
			}
		line = nl ? nl + 1 : NULL;
	}
	ig_buf_free(&b);
}

static void phase_begin(struct phase *p, double now, uint64_t *v)
{
	p->start = now;
	vmstat_read(v, p->have);
}

/* A counter the kernel lacks at either end is missing from the phase. */
static void phase_end(struct phase *p, double now, const uint64_t *before)
{
	uint64_t after[NCOUNTERS];
	bool have[NCOUNTERS];

	p->end = now;
	vmstat_read(after, have);
	for (int i = 0; i < NCOUNTERS; i++) {
		p->have[i] = p->have[i] && have[i];
		p->delta[i] = p->have[i] ? after[i] - before[i] : 0;
	}
}

static void pfn_nodes_load(struct pfn_nodes *m)
{
	struct ig_buf b = {0};
	char dir[64];

	*m = (struct pfn_nodes){.fd = open("/proc/self/pagemap", O_RDONLY | O_CLOEXEC)};
	if (m->fd < 0 || ig_read_file("/sys/devices/system/memory/block_size_bytes", &b) < 0 ||
	    !(m->block_size = strtoull(b.s, NULL, 16)))
		m->block_size = 0;
	ig_buf_free(&b);
	for (int n = 0; m->block_size && n < VN_MAX_NODES; n++) {
		snprintf(dir, sizeof(dir), "/sys/devices/system/node/node%d", n);
		DIR *d = opendir(dir);
		for (struct dirent *e; d && (e = readdir(d));) {
			char *end;
			unsigned long blk = strncmp(e->d_name, "memory", 6) ? 0 : strtoul(e->d_name + 6, &end, 10);
			if (strncmp(e->d_name, "memory", 6) || end == e->d_name + 6 || *end || blk > (1UL << 24))
				continue;
			if (blk >= m->n) {
				size_t old = m->n;
				m->n = blk + 1;
				m->node = ig_xrealloc(m->node, m->n, sizeof(*m->node), "memory block table");
				for (size_t i = old; i < m->n; i++)
					m->node[i] = -1;
			}
			m->node[blk] = n;
		}
		if (d)
			closedir(d);
	}
}

/* The node of the frame a pagemap entry names, or -1 (no frame, no table, not root). */
static int pfn_node(const struct pfn_nodes *m, uint64_t e)
{
	uint64_t pfn = e & ((1ULL << 55) - 1);

	if (!(e >> 63) || !pfn || pfn * PAGE / m->block_size >= m->n)
		return -1;
	return m->node[pfn * PAGE / m->block_size];
}

/* Pagemap entries of batch[0..k): one read when the pages are consecutive (no --max-sample), else one each. */
static void pagemap_read(const struct pfn_nodes *m, void *const *batch, size_t k, bool consecutive, uint64_t *e)
{
	off_t at = (off_t)((uintptr_t)batch[0] / PAGE * sizeof(*e));

	if (consecutive && pread(m->fd, e, k * sizeof(*e), at) == (ssize_t)(k * sizeof(*e)))
		return;
	for (size_t i = 0; i < k; i++)
		if (pread(m->fd, &e[i], sizeof(*e), (off_t)((uintptr_t)batch[i] / PAGE * sizeof(*e))) != sizeof(*e))
			e[i] = 0;
}

/* move_pages' placement, a page it calls not present placed through pagemap where it can be (counted in *hinting). */
static void query(const struct run *r, char *addr, size_t pages, struct ig_placement *p, uint64_t *hinting)
{
	size_t n = r->o->max_sample && pages > r->o->max_sample ? r->o->max_sample : pages;
	void *batch[QUERY_BATCH];
	int status[QUERY_BATCH];
	uint64_t entries[QUERY_BATCH];

	memset(p, 0, sizeof(*p));
	*hinting = 0;
	for (size_t done = 0; done < n;) {
		size_t k = n - done < QUERY_BATCH ? n - done : QUERY_BATCH;
		for (size_t i = 0; i < k; i++) {
			batch[i] = addr + (size_t)(((unsigned __int128)(done + i) * pages) / n) * PAGE;
			status[i] = -EFAULT;
		}
		if (syscall(SYS_move_pages, 0, (unsigned long)k, batch, NULL, status, 0) < 0) {
			p->err = -errno;
			p->other += k;
			p->sampled += k;
			done += k;
			continue;
		}
		bool absent = false;
		for (size_t i = 0; i < k; i++)
			absent = absent || status[i] == -ENOENT;
		if (absent && r->pfn.n) {
			pagemap_read(&r->pfn, batch, k, n == pages, entries);
			for (size_t i = 0; i < k; i++) {
				int node = status[i] == -ENOENT ? pfn_node(&r->pfn, entries[i]) : -1;
				if (node >= 0 && node < VN_MAX_NODES) {
					status[i] = node;
					(*hinting)++;
				}
			}
		}
		ig_placement_count(p, status, k);
		p->sampled += k;
		done += k;
	}
}

/* Phase k's window: --hot-from, moved on by its size each phase; one that would run past the end starts over at 0. */
static size_t window_first(const struct run *r, int k)
{
	size_t first = (r->o->hot_from / PAGE + (size_t)(k - 1) * r->hot_pages) % r->pages;

	return k && first + r->hot_pages <= r->pages ? first : 0;
}

static void run_sample(struct run *r, int phase, size_t hot_first)
{
	if (r->nsamples == r->cap) {
		r->cap *= 2;
		r->samples = ig_xrealloc(r->samples, r->cap, sizeof(*r->samples), "sample table");
	}
	struct sample *s = &r->samples[r->nsamples++];

	s->t = ig_now() - r->t0;
	s->phase = phase;
	query(r, r->mem + hot_first * PAGE, r->hot_pages, &s->hot, &s->hot_hinting);
	query(r, r->mem, r->pages, &s->all, &s->all_hinting);
	for (int n = 0; n < VN_MAX_NODES; n++)
		if (s->all.per_node[n] > r->max_per_node[n])
			r->max_per_node[n] = s->all.per_node[n];
}

/* One hot phase: the window from page first on, touched in order until phase_s is up. */
static void run_phase(struct run *r, int k)
{
	const struct opts *o = r->o;
	size_t first = window_first(r, k), pos = 0;
	double start = ig_now() - r->t0, next = start + o->interval;
	struct phase *p = &r->ph[k];
	uint64_t before[NCOUNTERS];

	phase_begin(p, start, before);
	/* Where the window is as the phase begins: what promotion has to move up (the promotion assertion). */
	run_sample(r, k, first);
	while (!ig_stop_requested) {
		for (int i = 0; i < CHUNK_PAGES; i++) {
			size_t pg = (first + pos) % r->pages;
			volatile uint64_t *w = (volatile uint64_t *)(r->mem + pg * PAGE + ((pg * 64) & (PAGE - 64)));
			*w = *w + 1;
			pos = pos + 1 == r->hot_pages ? 0 : pos + 1;
		}
		p->touches += CHUNK_PAGES;
		double now = ig_now() - r->t0;
		if (now >= next) {
			run_sample(r, k, first);
			while (next <= now)
				next += o->interval;
		}
		if (now - start >= o->phase_s)
			break;
	}
	phase_end(p, ig_now() - r->t0, before);
	/* The hot window's placement as the phase left it, when no sample came late in it. */
	if (!r->nsamples || r->samples[r->nsamples - 1].phase != k)
		run_sample(r, k, first);
}

static void json_tier_counts(struct ig_json *j, const char *key, const struct tiers *t, const struct ig_placement *p)
{
	uint64_t per[MAX_TIERS] = {0}, none = 0;
	char name[32];

	for (int n = 0; n < VN_MAX_NODES; n++) {
		if (t->of_node[n] >= 0)
			per[t->of_node[n]] += p->per_node[n];
		else
			none += p->per_node[n];
	}
	ig_json_obj_begin(j, key);
	for (int i = 0; i < t->n; i++) {
		snprintf(name, sizeof(name), "memory_tier%d", t->id[i]);
		ig_json_uint(j, name, per[i]);
	}
	if (none)
		ig_json_uint(j, "none", none);
	ig_json_obj_end(j);
}

static void json_tiers(struct ig_json *j, const struct tiers *t, const struct ig_topo *topo)
{
	if (!t->n) {
		ig_json_null(j, "tiers");
		return;
	}
	ig_json_obj_begin(j, "tiers");
	for (int i = 0; i < t->n; i++) {
		char name[32];
		uint64_t in[VN_MAX_NODES] = {0};

		for (int n = 0; n < VN_MAX_NODES; n++)
			in[n] = t->of_node[n] == i;
		snprintf(name, sizeof(name), "memory_tier%d", t->id[i]);
		ig_json_arr_begin(j, name);
		for (int n = 0; n < VN_MAX_NODES && n < topo->nr_nodes; n++)
			if (in[n])
				ig_json_int(j, NULL, n);
		ig_json_arr_end(j);
	}
	ig_json_obj_end(j);
}

/* The share of a sample's hot window on the top tiers (0 where it sampled nothing). */
static double hot_on_top(const struct run *r, const struct sample *s)
{
	uint64_t top = 0;

	for (int n = 0; n < VN_MAX_NODES; n++)
		top += r->tiers.top[n] ? s->hot.per_node[n] : 0;
	return s->hot.sampled ? (double)top / (double)s->hot.sampled : 0;
}

/*
 * Seconds from phase k's start to its first sample with >= 90% of the hot
 * window on the top tiers; -1 where none had. *end: the share at its last.
 */
static double to_top_90(const struct run *r, int k, double *end)
{
	double t = -1;

	*end = 0;
	for (size_t i = 0; i < r->nsamples; i++) {
		const struct sample *s = &r->samples[i];
		if (s->phase != k)
			continue;
		*end = hot_on_top(r, s);
		if (t < 0 && *end >= 0.9)
			t = s->t - r->ph[k].start;
	}
	return t;
}

static void json_phase(struct ig_json *j, const struct run *r, int k, const struct ig_topo *topo)
{
	double end, t90 = to_top_90(r, k, &end);

	const struct phase *p = &r->ph[k];

	ig_json_obj_begin(j, NULL);
	ig_json_str(j, "name", k ? "hot" : "first-touch");
	ig_json_int(j, "phase", k);
	ig_json_double(j, "start_s", p->start);
	ig_json_double(j, "end_s", p->end);
	ig_json_uint(j, "hot_first_page", window_first(r, k));
	ig_json_uint(j, "touches", p->touches);
	ig_json_double(j, "touches_per_s", ig_rate((double)p->touches, p->end - p->start));
	if (t90 < 0)
		ig_json_null(j, "to_top_90_s");
	else
		ig_json_double(j, "to_top_90_s", t90);
	ig_json_double(j, "hot_on_top_end", end);
	ig_json_obj_begin(j, "vmstat");
	for (int i = 0; i < NCOUNTERS; i++)
		if (p->have[i])
			ig_json_uint(j, counters[i], p->delta[i]);
		else
			ig_json_null(j, counters[i]);
	ig_json_obj_end(j);
	ig_json_arr_begin(j, "samples");
	for (size_t i = 0; i < r->nsamples; i++) {
		const struct sample *s = &r->samples[i];
		if (s->phase != k)
			continue;
		ig_json_obj_begin(j, NULL);
		ig_json_double(j, "t", s->t);
		ig_json_node_counts(j, "hot_pages_per_node", topo, s->hot.per_node);
		json_tier_counts(j, "hot_pages_per_tier", &r->tiers, &s->hot);
		ig_json_node_counts(j, "pages_per_node", topo, s->all.per_node);
		json_tier_counts(j, "pages_per_tier", &r->tiers, &s->all);
		ig_json_uint(j, "not_present", s->all.not_present);
		ig_json_uint(j, "hinting", s->all_hinting);
		ig_json_uint(j, "hot_hinting", s->hot_hinting);
		ig_json_obj_end(j);
	}
	ig_json_arr_end(j);
	ig_json_obj_end(j);
}

/*
 * Over the hot phases, the metrics compare reads (arrays are not metrics):
 * the time to 90% on the top tiers per phase and its mean, a phase that
 * never got there counted as its whole length (a lower bound then), how
 * many got there, and the mean share on the top tiers at a phase's end.
 */
static void json_promotion_means(struct ig_json *j, const struct run *r)
{
	double sum90 = 0, sum_end = 0, end;
	int reached = 0, n = 0;
	char key[16];

	if (!r->tiers.n) {
		ig_json_null(j, "to_top_90_s_mean");
		ig_json_null(j, "hot_on_top_end_mean");
		return;
	}
	/* Each phase's too, by number: a freshly hot window and one the scanner saw cold differ (docs/tiering.md). */
	ig_json_obj_begin(j, "to_top_90_s_by_phase");
	for (int k = 1; k <= r->o->phases; k++) {
		if (r->ph[k].end <= 0)
			continue;
		double t = to_top_90(r, k, &end);
		snprintf(key, sizeof(key), "%d", k);
		ig_json_double(j, key, t < 0 ? r->ph[k].end - r->ph[k].start : t);
		sum90 += t < 0 ? r->ph[k].end - r->ph[k].start : t;
		reached += t >= 0;
		sum_end += end;
		n++;
	}
	ig_json_obj_end(j);
	if (!n) {
		ig_json_null(j, "to_top_90_s_mean");
		ig_json_null(j, "hot_on_top_end_mean");
		return;
	}
	ig_json_double(j, "to_top_90_s_mean", sum90 / n);
	ig_json_int(j, "to_top_90_reached", reached);
	ig_json_double(j, "hot_on_top_end_mean", sum_end / n);
}

static void print_result(const struct run *r, const struct ig_topo *topo)
{
	struct ig_json j;
	const struct sample *last = &r->samples[r->nsamples - 1];

	ig_json_result_begin(&j, topo);
	ig_json_uint(&j, "size_bytes", r->len);
	ig_json_uint(&j, "hot_bytes", r->hot_pages * PAGE);
	ig_json_uint(&j, "pages", r->pages);
	ig_json_uint(&j, "pages_sampled", last->all.sampled);
	ig_json_double(&j, "phase_s", r->o->phase_s);
	ig_json_bool(&j, "interrupted", ig_stop_requested);
	if (r->demotion < 0)
		ig_json_null(&j, "demotion_enabled");
	else
		ig_json_bool(&j, "demotion_enabled", r->demotion);
	/* What promotion_rate judges by: the limit the kernel had, and whether a THP could overshoot it. */
	if (r->rate_limit < 0)
		ig_json_null(&j, "promote_rate_limit_MBps");
	else
		ig_json_int(&j, "promote_rate_limit_MBps", r->rate_limit);
	/* What promotion's "mode" judges by: 6.1 counts pgpromote_success in modes 1 and 2 alike. */
	if (r->balancing < 0)
		ig_json_null(&j, "numa_balancing");
	else
		ig_json_int(&j, "numa_balancing", r->balancing);
	if (*r->thp)
		ig_json_str(&j, "thp", r->thp);
	else
		ig_json_null(&j, "thp");
	if (r->o->low_node >= 0) {
		ig_json_obj_begin(&j, "stop_at_low");
		ig_json_int(&j, "node", r->o->low_node);
		ig_json_bool(&j, "reached", r->low_reached);
		ig_json_obj_end(&j);
	}
	json_tiers(&j, &r->tiers, topo);
	json_promotion_means(&j, r);
	ig_json_arr_begin(&j, "counters_missing");
	for (int i = 0; i < NCOUNTERS; i++)
		if (!r->ph[0].have[i])
			ig_json_str(&j, NULL, counters[i]);
	ig_json_arr_end(&j);
	/* Every node that held one of its pages at any sample: where demotion put them, even for a while. */
	ig_json_node_counts(&j, "pages_max_per_node", topo, r->max_per_node);
	ig_json_node_counts(&j, "pages_per_node_end", topo, last->all.per_node);
	if (last->all.err)
		ig_json_str(&j, "placement_error", strerror(-last->all.err));
	ig_json_arr_begin(&j, "phases");
	for (int k = 0; k <= r->o->phases; k++)
		if (k == 0 || r->ph[k].end > 0)
			json_phase(&j, r, k, topo);
	ig_json_arr_end(&j);
	ig_json_result_end(&j);
}

/* The largest number in a zoneinfo "protection: (0, 1234, ...)" line: lowmem_reserve against user pages. */
static int64_t protection_max(const char *line)
{
	int64_t best = 0;

	for (const char *q = strchr(line, '('); q && *q; q++)
		if (*q >= '0' && *q <= '9') {
			char *end;
			long long v = strtoll(q, &end, 10);
			best = v > best ? v : best;
			q = end - 1;
		}
	return best;
}

/*
 * Free pages above the low watermark (plus lowmem_reserve, which a user
 * page's allocation must leave) summed over node's zones, from
 * /proc/zoneinfo; -1 when every zone with memory is below it: the fast path
 * fails on the node and the allocation wakes kswapd. The DMA zone counts:
 * while it is above its line, the allocator takes pages from it without
 * waking kswapd, and kswapd finds the node balanced (pgdat_balanced()).
 * INT64_MAX where the node has no zone.
 */
static int64_t low_headroom(int node)
{
	struct ig_buf b = {0};
	uint64_t managed = 0, zfree = 0, zlow = 0;
	int64_t room = 0;
	bool in = false, zones = false;
	char head[32];
	int hl = snprintf(head, sizeof(head), "Node %d, zone", node);

	if (ig_read_file("/proc/zoneinfo", &b) < 0)
		ig_die(IG_EXIT_ENV, errno, "cannot read /proc/zoneinfo");
	for (char *line = b.s; line && *line;) {
		char *nl = strchr(line, '\n');
		if (nl)
			*nl = 0;
		if (!strncmp(line, "Node ", 5))
			in = !strncmp(line, head, (size_t)hl);
		else if (in && (sscanf(line, " pages free %" SCNu64, &zfree) == 1 ||
				sscanf(line, " low %" SCNu64, &zlow) == 1 ||
				sscanf(line, " managed %" SCNu64, &managed) == 1))
			;
		else if (in && managed && strstr(line, "protection: (")) {
			int64_t r = (int64_t)zfree - (int64_t)zlow - protection_max(line);
			room += r > 0 ? r : 0;
			zones = true;
			managed = 0;
		}
		line = nl ? nl + 1 : NULL;
	}
	ig_buf_free(&b);
	return !zones ? INT64_MAX : room > 0 ? room : -1;
}

/*
 * The first touch until every zone of node is below its low watermark; the
 * pages it took. Half the headroom at a time, at least 16 pages: the
 * low-min gap is min/4 at least (a 256M node's DMA32 some 60 pages), so the
 * step stops above min.
 */
static size_t touch_until_low(struct run *r, int node)
{
	size_t done = 0;

	while (done < r->pages) {
		int64_t room = low_headroom(node);
		if (room < 0) {
			r->low_reached = true;
			break;
		}
		size_t n = room / 2 > 16 ? (size_t)(room / 2) : 16;
		n = r->pages - done < n ? r->pages - done : n;
		memset(r->mem + done * PAGE, 1, n * PAGE);
		done += n;
	}
	if (!r->low_reached)
		r->low_reached = low_headroom(node) < 0;
	return done;
}

/*
 * The first touch, bound to --first-touch-node when given: then the range's
 * policy goes back to the default (mbind MPOL_DEFAULT moves nothing), whose
 * pages NUMA balancing may move (mpol_misplaced(): MPOL_F_MOF), so every
 * page starts on that node and promotion can take the hot ones up.
 */
static void first_touch(struct run *r)
{
	unsigned long mask[VN_MAX_NODES / (8 * sizeof(unsigned long))] = {0};
	int node = r->o->touch_node;

	if (node >= 0) {
		mask[node / (8 * sizeof(unsigned long))] |= 1UL << (node % (8 * sizeof(unsigned long)));
		if (syscall(SYS_mbind, r->mem, r->len, 2 /* MPOL_BIND */, mask, (unsigned long)VN_MAX_NODES + 1, 0) < 0)
			ig_die(IG_EXIT_ENV, errno, "mbind to node %d", node);
	}
	if (r->o->low_node >= 0) {
		/* The phases use what was touched: the rest was never allocated. */
		r->pages = touch_until_low(r, r->o->low_node);
		if (r->hot_pages > r->pages)
			r->hot_pages = r->pages;
	} else {
		memset(r->mem, 1, r->len);
	}
	if (node >= 0 && syscall(SYS_mbind, r->mem, r->len, 0 /* MPOL_DEFAULT */, NULL, 0UL, 0) < 0)
		ig_die(IG_EXIT_ENV, errno, "mbind back to the default policy");
}

int main(int argc, char **argv)
{
	struct opts o;
	struct ig_topo topo;
	struct run r = {.o = &o};
	uint64_t before[NCOUNTERS];

	ig_workload_init("tiermove", &topo);
	parse(argc, argv, &o);
	tiers_load(&r.tiers);
	r.demotion = demotion_enabled();
	r.rate_limit = read_number("/proc/sys/kernel/numa_balancing_promote_rate_limit_MBps");
	r.balancing = read_number("/proc/sys/kernel/numa_balancing");
	thp_mode(r.thp, sizeof(r.thp));
	pfn_nodes_load(&r.pfn);
	r.len = ig_round_up(o.size, PAGE);
	r.pages = r.len / PAGE;
	r.hot_pages = ig_round_up(o.hot, PAGE) / PAGE;
	r.cap = (size_t)((o.phase_s / o.interval) + 3) * (size_t)(o.phases + 1) + 4;
	r.samples = ig_xcalloc(r.cap, sizeof(*r.samples), "sample table");
	r.ph = ig_xcalloc((size_t)o.phases + 1, sizeof(*r.ph), "phase table");
	r.mem = ig_map_anon(r.len, 0);
	if (!r.mem)
		ig_die(IG_EXIT_ENV, errno, "mmap of %zu bytes", r.len);

	ig_stop_on_signals();
	r.t0 = ig_now();
	/* The first touch fills the bound nodes; what does not fit is what reclaim demotes (or OOM). */
	phase_begin(&r.ph[0], 0, before);
	first_touch(&r);
	r.ph[0].touches = r.pages;
	phase_end(&r.ph[0], ig_now() - r.t0, before);
	run_sample(&r, 0, 0);
	fprintf(stderr, "%s: pid %d touched %zu pages in %.3fs\n", ig_prog, (int)getpid(), r.pages, r.ph[0].end);
	for (int k = 1; k <= o.phases && !ig_stop_requested; k++)
		run_phase(&r, k);
	print_result(&r, &topo);
	ig_unmap_anon(r.mem, r.len);
	free(r.samples);
	free(r.ph);
	return 0;
}
