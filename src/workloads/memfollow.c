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

int main(int argc, char **argv)
{
	struct opts o;
	struct ig_topo topo;
	struct sample *samples;
	size_t nsamples = 0, cap;
	char *mem;
	size_t len, pages;
	int start_cpu, start_node, r;
	uint64_t seed, touches = 0, passes = 0;
	double t0, now, next_sample, touch_t0;
	bool moved = false;
	double moved_at = -1;
	int move_err = 0;
	struct ig_json j;

	ig_workload_init("memfollow", &topo);
	parse(argc, argv, &o);

	len = ig_round_up(o.size, PAGE);
	pages = len / PAGE;
	cap = (size_t)(o.duration / o.interval) + 4;
	samples = ig_xcalloc(cap, sizeof(*samples), "sample table");
	mem = ig_map_anon(len, 0);
	if (!mem)
		ig_die(IG_EXIT_ENV, errno, "mmap of %zu bytes", len);

	ig_getcpu(&start_cpu, &start_node);
	/* First touch: the pages land on (or near) the node we start on. */
	touch_t0 = ig_now();
	memset(mem, 1, len);
	touch_t0 = ig_now() - touch_t0;

	if (o.pidfile) {
		pid_t self = getpid();
		r = ig_write_pidfile(o.pidfile, &self, 1);
		if (r < 0)
			ig_die(IG_EXIT_ENV, -r, "cannot write pidfile %s", o.pidfile);
	}
	fprintf(stderr, "%s: pid %d touched %zu pages on node %d in %.3fs\n", ig_prog, (int)getpid(), pages, start_node,
		touch_t0);

	/* SIGTERM/SIGINT end the run early; the result is still printed. */
	ig_stop_on_signals();
	seed = ig_seed(1);
	t0 = ig_now();
	take_sample(&samples[nsamples++], 0, mem, len, &o, 0);
	next_sample = o.interval;
	size_t pos = 0;
	for (;;) {
		for (int k = 0; k < CHUNK_PAGES; k++) {
			size_t p;
			if (o.random) {
				p = (size_t)(ig_rand_next(&seed) % pages);
			} else {
				p = pos++;
				if (pos == pages) {
					pos = 0;
					passes++;
				}
			}
			/* Read-modify-write one word per page. */
			volatile uint64_t *w = (volatile uint64_t *)(mem + p * PAGE + ((p * 64) & (PAGE - 64)));
			*w = *w + 1;
		}
		touches += CHUNK_PAGES;
		if (o.random && touches / pages > passes)
			passes = touches / pages;
		now = ig_now() - t0;
		if (!moved && o.move_to_node >= 0 && now >= o.move_at) {
			r = ig_move_to_node(0, o.move_to_node);
			moved = true;
			moved_at = now;
			if (r < 0) {
				move_err = r;
				fprintf(stderr, "%s: cannot move to node %d: %s\n", ig_prog, o.move_to_node,
					strerror(-r));
			}
		}
		if (now >= next_sample || now >= o.duration || ig_stop_requested) {
			if (nsamples == cap) {
				cap *= 2;
				samples = ig_xrealloc(samples, cap, sizeof(*samples), "sample table");
			}
			take_sample(&samples[nsamples++], now, mem, len, &o, passes);
			struct sample *s = &samples[nsamples - 1];
			fprintf(stderr, "%s: t=%.2f cpu=%d node=%d local=%.3f\n", ig_prog, s->t, s->cpu, s->cpu_node,
				local_fraction(s));
			while (next_sample <= now)
				next_sample += o.interval;
			if (now >= o.duration || ig_stop_requested)
				break;
		}
	}
	double elapsed = ig_now() - t0;

	/* When did it change node (moved by itself or from outside), and when did memory follow? */
	double change_t = -1;
	for (size_t i = 1; i < nsamples; i++) {
		if (samples[i].cpu_node != start_node) {
			change_t = moved && move_err == 0 ? moved_at : samples[i].t;
			break;
		}
	}
	double follow50 = -1, follow90 = -1;
	if (change_t >= 0) {
		for (size_t i = 0; i < nsamples; i++) {
			if (samples[i].t < change_t || samples[i].cpu_node == start_node)
				continue;
			double f = local_fraction(&samples[i]);
			if (follow50 < 0 && f >= 0.5)
				follow50 = samples[i].t - change_t;
			if (follow90 < 0 && f >= 0.9)
				follow90 = samples[i].t - change_t;
		}
	}

	ig_json_result_begin(&j, &topo);
	ig_json_uint(&j, "size_bytes", len);
	ig_json_uint(&j, "page_size", PAGE);
	ig_json_uint(&j, "pages", pages);
	ig_json_uint(&j, "pages_sampled", samples[0].pl.sampled);
	ig_json_str(&j, "pattern", o.random ? "random" : "seq");
	ig_json_double(&j, "duration_s", o.duration);
	ig_json_double(&j, "interval_s", o.interval);
	ig_json_double(&j, "elapsed_s", elapsed);
	ig_json_bool(&j, "interrupted", ig_stop_requested);
	ig_json_double(&j, "first_touch_s", touch_t0);
	ig_json_int(&j, "start_cpu", start_cpu);
	ig_json_int(&j, "start_node", start_node);
	ig_json_int(&j, "end_cpu", samples[nsamples - 1].cpu);
	ig_json_int(&j, "end_node", samples[nsamples - 1].cpu_node);
	ig_json_uint(&j, "touches", touches);
	ig_json_uint(&j, "passes", passes);
	ig_json_double(&j, "touches_per_s", ig_rate((double)touches, elapsed));
	if (o.move_to_node >= 0) {
		ig_json_obj_begin(&j, "move");
		ig_json_int(&j, "to_node", o.move_to_node);
		ig_json_double(&j, "at_s", o.move_at);
		ig_json_time(&j, "done_at_s", moved_at);
		ig_json_bool(&j, "ok", moved && !move_err);
		if (move_err)
			ig_json_str(&j, "error", strerror(-move_err));
		ig_json_obj_end(&j);
	} else {
		ig_json_null(&j, "move");
	}
	ig_json_time(&j, "node_change_s", change_t);
	/* Seconds from the node change until >=50% / >=90% of the pages were local. */
	ig_json_time(&j, "follow50_s", follow50);
	ig_json_time(&j, "follow90_s", follow90);
	ig_json_double(&j, "local_fraction_end", local_fraction(&samples[nsamples - 1]));
	if (samples[nsamples - 1].pl.err)
		ig_json_str(&j, "placement_error", strerror(-samples[nsamples - 1].pl.err));
	ig_json_arr_begin(&j, "samples");
	for (size_t i = 0; i < nsamples; i++) {
		struct sample *s = &samples[i];

		ig_json_obj_begin(&j, NULL);
		ig_json_double(&j, "t", s->t);
		ig_json_int(&j, "cpu", s->cpu);
		ig_json_int(&j, "cpu_node", s->cpu_node);
		ig_json_node_counts(&j, "pages_per_node", &topo, s->pl.per_node);
		ig_json_uint(&j, "not_present", s->pl.not_present);
		ig_json_uint(&j, "other", s->pl.other);
		ig_json_double(&j, "local_fraction", local_fraction(s));
		ig_json_uint(&j, "passes", s->passes);
		ig_json_double(&j, "query_s", s->query_s);
		ig_json_obj_end(&j);
	}
	ig_json_arr_end(&j);
	ig_json_result_end(&j);
	ig_unmap_anon(mem, len);
	free(samples);
	return 0;
}
