/*
 * vnuma-wl-memfollow: does memory follow the task?
 *
 * Allocates --size with the default memory policy on whatever CPUs it was
 * started on (the caller places it: numactl --cpunodebind, taskset, the
 * scenario runner's sched_setaffinity), touches it all, then keeps touching
 * it (one read-modify-write per page, sequential or random) for --duration.
 * Every --interval it records where its pages live (move_pages(2) in query
 * mode, over all pages or an even sample) and which CPU/node it runs on.
 *
 * It can move itself (--move-to-node N --move-at S: sched_setaffinity to node
 * N's CPUs, memory policy untouched), or be moved from outside (--pidfile
 * tells the controller its pid once its memory is touched).
 */
#include "inguest/buf.h"
#include "inguest/json.h"
#include "inguest/mem.h"
#include "inguest/opt.h"
#include "inguest/placement.h"
#include "inguest/prog.h"
#include "inguest/time.h"
#include "inguest/topo.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define PAGE        IG_PAGE_SIZE
#define CHUNK_PAGES 256 /* pages touched between clock checks */

struct sample {
	double t;
	int cpu, cpu_node;
	uint64_t passes;
	double query_s;
	struct ig_placement pl;
};

struct opts {
	uint64_t size;
	double duration, interval, move_at;
	int move_to_node;
	int random; /* page order: 0 sequential, 1 random */
	uint64_t max_sample;
	const char *pidfile;
};

static void parse(int argc, char **argv, struct opts *o)
{
	static const struct ig_opt_choice patterns[] = {
		{"seq", 0}, {"sequential", 0}, {"random", 1}, {"rand", 1}, {NULL}};
	const char *at_arg = NULL, *size_arg = NULL;
	const struct ig_opt opts[] = {
		{"size", IG_OPT_SIZE, .dst = &o->size, .given = &size_arg,
		 .help = "memory to allocate and touch (default 64M; bare number = MiB)"},
		{"duration", IG_OPT_SECONDS, .dst = &o->duration, .min_s = 0.001,
		 .help = "how long to keep touching it (default 10)"},
		{"interval", IG_OPT_SECONDS, .dst = &o->interval, .min_s = 0.001,
		 .help = "placement sample period (default 1)"},
		{"pattern", IG_OPT_CHOICE, .dst = &o->random, .choices = patterns, .why = "expected seq or random",
		 .arg = "seq|random", .help = "page order of the touch loop (default seq)"},
		{"move-to-node", IG_OPT_INT, .dst = &o->move_to_node, .min = 0, .max = VN_MAX_NODES - 1,
		 .help = "move itself to node N's CPUs (sched_setaffinity) ..."},
		{"move-at", IG_OPT_SECONDS, .dst = &o->move_at, .min_s = 0, .given = &at_arg,
		 .help = "... at S seconds after the start of the touch loop (default 0)"},
		{"max-sample", IG_OPT_U64, .dst = &o->max_sample, .min = 0, .max = 1ULL << 30,
		 .help = "pages queried per sample (default 65536, 0 = all)"},
		{"pidfile", IG_OPT_STRING, .dst = &o->pidfile,
		 .help = "write its pid there once the memory is touched"},
		{0}};

	*o = (struct opts){.size = 64ULL << 20,
			   .duration = 10,
			   .interval = 1,
			   .move_to_node = -1,
			   .max_sample = IG_DEFAULT_MAX_SAMPLE};
	ig_opts_parse(argc, argv, opts, NULL);
	if (at_arg && o->move_to_node < 0)
		ig_bad_option("move-at", at_arg, "needs --move-to-node");
	if (o->move_to_node >= 0) {
		cpu_set_t set;
		char val[16];

		snprintf(val, sizeof(val), "%d", o->move_to_node);
		int r = ig_node_cpus(o->move_to_node, &set);

		/* Node 0 always exists, even on a kernel without NUMA (no sysfs nodes). */
		if (r < 0 && !(o->move_to_node == 0 && r == -ENOENT))
			ig_bad_option("move-to-node", val, "no such node");
		if (r == 0 && CPU_COUNT(&set) == 0)
			ig_bad_option("move-to-node", val, "the node has no CPUs");
	}
	ig_check_size("size", size_arg, o->size, PAGE, 1, "page");
}

static void take_sample(struct sample *s, double t, char *mem, size_t len, const struct opts *o, uint64_t passes)
{
	double q0 = ig_now();

	s->t = t;
	s->passes = passes;
	ig_getcpu(&s->cpu, &s->cpu_node);
	ig_placement_query(mem, len, PAGE, o->max_sample, &s->pl);
	s->query_s = ig_now() - q0;
}

static double local_fraction(const struct sample *s)
{
	return ig_placement_fraction(&s->pl, s->cpu_node);
}

/* One run: its memory, what the touch loop did, the samples it took. */
struct run {
	const struct opts *o;
	char *mem;
	size_t len, pages;
	struct sample *samples;
	size_t nsamples, cap;
	int start_cpu, start_node;
	uint64_t touches, passes;
	double touch_s, elapsed;
	bool moved;
	double moved_at;
	int move_err;
};

/* A sample at now seconds, into a table grown as needed. */
static struct sample *run_sample(struct run *r, double now)
{
	if (r->nsamples == r->cap) {
		r->cap *= 2;
		r->samples = ig_xrealloc(r->samples, r->cap, sizeof(*r->samples), "sample table");
	}
	take_sample(&r->samples[r->nsamples++], now, r->mem, r->len, r->o, r->passes);
	return &r->samples[r->nsamples - 1];
}

/* --move-to-node, once its time came. */
static void run_move(struct run *r, double now)
{
	const struct opts *o = r->o;

	if (r->moved || o->move_to_node < 0 || now < o->move_at)
		return;
	int rc = ig_move_to_node(0, o->move_to_node);
	r->moved = true;
	r->moved_at = now;
	if (rc < 0) {
		r->move_err = rc;
		fprintf(stderr, "%s: cannot move to node %d: %s\n", ig_prog, o->move_to_node, strerror(-rc));
	}
}

/* Touch the pages (in order or at random) until --duration or a stop signal, sampling every --interval. */
static void run_touch(struct run *r)
{
	const struct opts *o = r->o;
	uint64_t seed = ig_seed(1);
	double t0 = ig_now(), next_sample;
	size_t pos = 0;

	run_sample(r, 0);
	next_sample = o->interval;
	for (;;) {
		for (int k = 0; k < CHUNK_PAGES; k++) {
			size_t p;
			if (o->random) {
				p = (size_t)(ig_rand_next(&seed) % r->pages);
			} else {
				p = pos++;
				if (pos == r->pages) {
					pos = 0;
					r->passes++;
				}
			}
			/* Read-modify-write one word per page. */
			volatile uint64_t *w = (volatile uint64_t *)(r->mem + p * PAGE + ((p * 64) & (PAGE - 64)));
			*w = *w + 1;
		}
		r->touches += CHUNK_PAGES;
		if (o->random && r->touches / r->pages > r->passes)
			r->passes = r->touches / r->pages;
		double now = ig_now() - t0;
		run_move(r, now);
		if (now >= next_sample || now >= o->duration || ig_stop_requested) {
			struct sample *s = run_sample(r, now);
			fprintf(stderr, "%s: t=%.2f cpu=%d node=%d local=%.3f\n", ig_prog, s->t, s->cpu, s->cpu_node,
				local_fraction(s));
			while (next_sample <= now)
				next_sample += o->interval;
			if (now >= o->duration || ig_stop_requested)
				break;
		}
	}
	r->elapsed = ig_now() - t0;
}

/* When it changed node (moved by itself or from outside), -1 if never. */
static double run_node_change(const struct run *r)
{
	for (size_t i = 1; i < r->nsamples; i++)
		if (r->samples[i].cpu_node != r->start_node)
			return r->moved && r->move_err == 0 ? r->moved_at : r->samples[i].t;
	return -1;
}

/* Seconds from the node change until >=50% / >=90% of the pages were local (-1: not seen). */
static void run_follow(const struct run *r, double change_t, double *follow50, double *follow90)
{
	*follow50 = *follow90 = -1;
	if (change_t < 0)
		return;
	for (size_t i = 0; i < r->nsamples; i++) {
		if (r->samples[i].t < change_t || r->samples[i].cpu_node == r->start_node)
			continue;
		double f = local_fraction(&r->samples[i]);
		if (*follow50 < 0 && f >= 0.5)
			*follow50 = r->samples[i].t - change_t;
		if (*follow90 < 0 && f >= 0.9)
			*follow90 = r->samples[i].t - change_t;
	}
}

static void json_samples(struct ig_json *j, const struct run *r, const struct ig_topo *topo)
{
	ig_json_arr_begin(j, "samples");
	for (size_t i = 0; i < r->nsamples; i++) {
		const struct sample *s = &r->samples[i];

		ig_json_obj_begin(j, NULL);
		ig_json_double(j, "t", s->t);
		ig_json_int(j, "cpu", s->cpu);
		ig_json_int(j, "cpu_node", s->cpu_node);
		ig_json_node_counts(j, "pages_per_node", topo, s->pl.per_node);
		ig_json_uint(j, "not_present", s->pl.not_present);
		ig_json_uint(j, "other", s->pl.other);
		ig_json_double(j, "local_fraction", local_fraction(s));
		ig_json_uint(j, "passes", s->passes);
		ig_json_double(j, "query_s", s->query_s);
		ig_json_obj_end(j);
	}
	ig_json_arr_end(j);
}

static void print_result(const struct run *r, const struct ig_topo *topo)
{
	const struct opts *o = r->o;
	const struct sample *last = &r->samples[r->nsamples - 1];
	double change_t = run_node_change(r), follow50, follow90;
	struct ig_json j;

	run_follow(r, change_t, &follow50, &follow90);
	ig_json_result_begin(&j, topo);
	ig_json_uint(&j, "size_bytes", r->len);
	ig_json_uint(&j, "page_size", PAGE);
	ig_json_uint(&j, "pages", r->pages);
	ig_json_uint(&j, "pages_sampled", r->samples[0].pl.sampled);
	ig_json_str(&j, "pattern", o->random ? "random" : "seq");
	ig_json_double(&j, "duration_s", o->duration);
	ig_json_double(&j, "interval_s", o->interval);
	ig_json_double(&j, "elapsed_s", r->elapsed);
	ig_json_bool(&j, "interrupted", ig_stop_requested);
	ig_json_double(&j, "first_touch_s", r->touch_s);
	ig_json_int(&j, "start_cpu", r->start_cpu);
	ig_json_int(&j, "start_node", r->start_node);
	ig_json_int(&j, "end_cpu", last->cpu);
	ig_json_int(&j, "end_node", last->cpu_node);
	ig_json_uint(&j, "touches", r->touches);
	ig_json_uint(&j, "passes", r->passes);
	ig_json_double(&j, "touches_per_s", ig_rate((double)r->touches, r->elapsed));
	if (o->move_to_node >= 0) {
		ig_json_obj_begin(&j, "move");
		ig_json_int(&j, "to_node", o->move_to_node);
		ig_json_double(&j, "at_s", o->move_at);
		ig_json_time(&j, "done_at_s", r->moved_at);
		ig_json_bool(&j, "ok", r->moved && !r->move_err);
		if (r->move_err)
			ig_json_str(&j, "error", strerror(-r->move_err));
		ig_json_obj_end(&j);
	} else {
		ig_json_null(&j, "move");
	}
	ig_json_time(&j, "node_change_s", change_t);
	ig_json_time(&j, "follow50_s", follow50);
	ig_json_time(&j, "follow90_s", follow90);
	ig_json_double(&j, "local_fraction_end", local_fraction(last));
	if (last->pl.err)
		ig_json_str(&j, "placement_error", strerror(-last->pl.err));
	json_samples(&j, r, topo);
	ig_json_result_end(&j);
}

int main(int argc, char **argv)
{
	struct opts o;
	struct ig_topo topo;
	struct run r = {.o = &o, .moved_at = -1};

	ig_workload_init("memfollow", &topo);
	parse(argc, argv, &o);

	r.len = ig_round_up(o.size, PAGE);
	r.pages = r.len / PAGE;
	r.cap = (size_t)(o.duration / o.interval) + 4;
	r.samples = ig_xcalloc(r.cap, sizeof(*r.samples), "sample table");
	r.mem = ig_map_anon(r.len, 0);
	if (!r.mem)
		ig_die(IG_EXIT_ENV, errno, "mmap of %zu bytes", r.len);

	ig_getcpu(&r.start_cpu, &r.start_node);
	/* First touch: the pages land on (or near) the node we start on. */
	r.touch_s = ig_now();
	memset(r.mem, 1, r.len);
	r.touch_s = ig_now() - r.touch_s;

	if (o.pidfile) {
		pid_t self = getpid();
		int rc = ig_write_pidfile(o.pidfile, &self, 1);
		if (rc < 0)
			ig_die(IG_EXIT_ENV, -rc, "cannot write pidfile %s", o.pidfile);
	}
	fprintf(stderr, "%s: pid %d touched %zu pages on node %d in %.3fs\n", ig_prog, (int)getpid(), r.pages,
		r.start_node, r.touch_s);

	/* SIGTERM/SIGINT end the run early; the result is still printed. */
	ig_stop_on_signals();
	run_touch(&r);
	print_result(&r, &topo);
	ig_unmap_anon(r.mem, r.len);
	free(r.samples);
	return 0;
}
