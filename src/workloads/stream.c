/*
 * vnuma-wl-stream: STREAM copy/scale/add/triad with N forked processes.
 *
 * Built for the 4.17 "memory does not follow the task" case: 20 processes of
 * ~200 MiB each started on node 1, half of them moved to node 0 by the
 * scheduler (or the scenario runner). Each process reports its bandwidth,
 * the node it ran on per iteration and at the end, and where its memory sits
 * at the end (move_pages query over a sample of its pages).
 */
#include "inguest/json.h"
#include "inguest/mem.h"
#include "inguest/opt.h"
#include "inguest/placement.h"
#include "inguest/prog.h"
#include "inguest/team.h"
#include "inguest/time.h"
#include "inguest/topo.h"

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

enum { K_COPY, K_SCALE, K_ADD, K_TRIAD, K_NR };
static const char *const kernel_names[K_NR] = {"copy", "scale", "add", "triad"};
static const int kernel_arrays[K_NR] = {2, 2, 3, 3}; /* arrays touched per element */

struct proc_result {
	struct ig_worker w; /* ops: measured iterations (after the warm-up) */
	int start_cpu, start_node, cpu, node;
	double best_t[K_NR], sum_t[K_NR];
	uint64_t iter_node[VN_MAX_NODES];
	struct ig_placement placement;
};

struct opts {
	uint64_t size;
	int procs, threads;
	double duration; /* -1: not given, --iterations counts instead */
	uint64_t iterations;
	uint64_t max_sample;
	const char *pidfile;
};

struct shared {
	double *a, *b, *c;
	size_t n;
	int threads;
	double scalar; /* STREAM's q, a variable as in STREAM */
	pthread_barrier_t barrier;
	volatile int stop;
};

struct worker {
	struct shared *s;
	int idx;
	pthread_t th;
	struct proc_result *res; /* only thread 0 records */
	const struct opts *o;
};

static void slice(const struct shared *s, int idx, size_t *lo, size_t *hi)
{
	size_t per = s->n / (size_t)s->threads;

	*lo = per * (size_t)idx;
	*hi = idx == s->threads - 1 ? s->n : *lo + per;
}

static void run_kernel(struct shared *s, int k, size_t lo, size_t hi)
{
	double *restrict a = s->a, *restrict b = s->b, *restrict c = s->c;
	/*
	 * Read once into a register: a constant the compiler reloads from
	 * .rodata per element (it did, for scale and triad) is a load from the
	 * binary's page cache, on whatever node that is, and with --locality it
	 * counted as a fifth of the arrays' accesses (docs/locality.md).
	 */
	const double q = s->scalar;

	switch (k) {
	case K_COPY:
		for (size_t i = lo; i < hi; i++)
			c[i] = a[i];
		break;
	case K_SCALE:
		for (size_t i = lo; i < hi; i++)
			b[i] = q * c[i];
		break;
	case K_ADD:
		for (size_t i = lo; i < hi; i++)
			c[i] = a[i] + b[i];
		break;
	case K_TRIAD:
		for (size_t i = lo; i < hi; i++)
			a[i] = b[i] + q * c[i];
		break;
	}
}

static void *thread_main(void *arg)
{
	struct worker *w = arg;
	struct shared *s = w->s;
	struct proc_result *r = w->res;
	size_t lo, hi;
	double start = 0, t0 = 0;
	uint64_t iter = 0;

	slice(s, w->idx, &lo, &hi);
	if (w->idx == 0)
		start = ig_now();
	for (;;) {
		pthread_barrier_wait(&s->barrier);
		if (s->stop)
			break;
		for (int k = 0; k < K_NR; k++) {
			if (w->idx == 0)
				t0 = ig_now();
			run_kernel(s, k, lo, hi);
			pthread_barrier_wait(&s->barrier);
			if (w->idx == 0 && iter > 0) { /* iteration 0 is the warm-up, as in STREAM */
				double t = ig_now() - t0;
				r->sum_t[k] += t;
				if (r->best_t[k] == 0 || t < r->best_t[k])
					r->best_t[k] = t;
			}
		}
		if (w->idx == 0) {
			int node;

			ig_getcpu(NULL, &node);
			if (iter > 0 && node >= 0 && node < VN_MAX_NODES)
				r->iter_node[node]++; /* measured iterations only */
			iter++;
			if (w->o->duration > 0) {
				if (ig_now() - start >= w->o->duration && iter >= 2)
					s->stop = 1;
			} else if (iter >= w->o->iterations + 1) {
				s->stop = 1;
			}
		}
	}
	if (w->idx == 0) {
		r->w.ops = iter > 0 ? iter - 1 : 0;
		r->w.elapsed = ig_now() - start;
	}
	return NULL;
}

static void *init_main(void *arg)
{
	struct worker *w = arg;
	size_t lo, hi;

	slice(w->s, w->idx, &lo, &hi);
	/* First touch by the thread that will use the slice. */
	for (size_t i = lo; i < hi; i++) {
		w->s->a[i] = 1.0;
		w->s->b[i] = 2.0;
		w->s->c[i] = 0.0;
	}
	return NULL;
}

static int run_threads(struct worker *ws, int n, void *(*fn)(void *))
{
	for (int i = 1; i < n; i++) {
		int e = pthread_create(&ws[i].th, NULL, fn, &ws[i]);
		if (e)
			return -e;
	}
	fn(&ws[0]);
	for (int i = 1; i < n; i++)
		pthread_join(ws[i].th, NULL);
	return 0;
}

/* A worker of the team: allocates and first-touches its arrays, then runs the kernels. */
static void child(struct ig_team *team, int idx, const void *ctx, void *result)
{
	const struct opts *o = ctx;
	struct proc_result *r = result;
	struct shared s = {0};
	struct worker *ws;
	int e;

	s.n = o->size / (3 * sizeof(double));
	s.threads = o->threads;
	s.scalar = 3.0;
	s.a = ig_map_anon(s.n * sizeof(double), 0);
	s.b = ig_map_anon(s.n * sizeof(double), 0);
	s.c = ig_map_anon(s.n * sizeof(double), 0);
	if (!s.a || !s.b || !s.c) {
		fprintf(stderr, "%s: pid %d: cannot map %zu bytes: %s\n", ig_prog, (int)getpid(),
			3 * s.n * sizeof(double), strerror(errno));
		_exit(IG_EXIT_ENV);
	}
	ws = ig_xcalloc((size_t)o->threads, sizeof(*ws), "thread table");
	for (int i = 0; i < o->threads; i++) {
		ws[i].s = &s;
		ws[i].idx = i;
		ws[i].res = r;
		ws[i].o = o;
	}
	pthread_barrier_init(&s.barrier, NULL, (unsigned)o->threads);
	e = run_threads(ws, o->threads, init_main);
	if (e < 0) {
		fprintf(stderr, "%s: pthread_create: %s\n", ig_prog, strerror(-e));
		_exit(IG_EXIT_ENV);
	}
	ig_getcpu(&r->start_cpu, &r->start_node);
	ig_team_ready(team);
	run_threads(ws, o->threads, thread_main);
	ig_getcpu(&r->cpu, &r->node);
	/* The three arrays' placement as one (r->placement starts zeroed: shared memory). */
	double *arrays[] = {s.a, s.b, s.c};
	for (int i = 0; i < 3; i++) {
		struct ig_placement p;

		ig_placement_query(arrays[i], s.n * sizeof(double), IG_PAGE_SIZE, o->max_sample / 3 + 1, &p);
		ig_placement_add(&r->placement, &p);
	}
	_exit(0);
}

static void parse(int argc, char **argv, struct opts *o)
{
	const char *size_arg = "64M";
	const struct ig_opt opts[] = {
		{"size", IG_OPT_SIZE, .dst = &o->size, .given = &size_arg,
		 .help = "per-process working set over the 3 arrays (default 64M; bare number = MiB)"},
		{"procs", IG_OPT_INT, .dst = &o->procs, .min = 1, .max = 4096, .help = "processes to fork (default 1)"},
		{"threads", IG_OPT_INT, .dst = &o->threads, .min = 1, .max = 1024,
		 .help = "threads per process (default 1)"},
		{"duration", IG_OPT_SECONDS, .dst = &o->duration, .min_s = 0.001,
		 .help = "repeat the kernels until S seconds have passed"},
		{"iterations", IG_OPT_U64, .dst = &o->iterations, .min = 1, .max = 1000000000,
		 .help = "or run N measured iterations (default 10)"},
		{"max-sample", IG_OPT_U64, .dst = &o->max_sample, .min = 3, .max = 1ULL << 30,
		 .help = "pages per process queried with move_pages at the end (default 65536)"},
		{"pidfile", IG_OPT_STRING, .dst = &o->pidfile,
		 .help = "write the worker pids there once all have touched their memory"},
		{0}};

	*o = (struct opts){.size = 64ULL << 20,
			   .procs = 1,
			   .threads = 1,
			   .duration = -1,
			   .iterations = 10,
			   .max_sample = IG_DEFAULT_MAX_SAMPLE};
	ig_opts_parse(argc, argv, opts, NULL);
	/* 16 elements of each of the 3 arrays per thread. */
	ig_check_size("size", size_arg, o->size, 3 * sizeof(double) * 16, (uint64_t)o->threads, "thread");
}

/* The bytes kernel k moves in one pass over arrays of n elements. */
static double kernel_bytes(int k, size_t n)
{
	return (double)kernel_arrays[k] * sizeof(double) * (double)n;
}

/* A process's bandwidth in kernel k's best and its average iteration, MB/s; 0 when it measured none. */
static double best_mbps(const struct proc_result *r, int k, size_t n)
{
	return r->best_t[k] > 0 ? kernel_bytes(k, n) / r->best_t[k] / 1e6 : 0.0;
}

static double avg_mbps(const struct proc_result *r, int k, size_t n)
{
	return r->w.ops && r->sum_t[k] > 0 ? kernel_bytes(k, n) / (r->sum_t[k] / (double)r->w.ops) / 1e6 : 0.0;
}

static void json_kernel(struct ig_json *j, int k, double best, double avg)
{
	ig_json_obj_begin(j, kernel_names[k]);
	ig_json_double(j, "best_mbps", best);
	ig_json_double(j, "avg_mbps", avg);
	ig_json_obj_end(j);
}

int main(int argc, char **argv)
{
	struct opts o;
	struct ig_topo topo;
	double elapsed;

	ig_workload_init("stream", &topo);
	parse(argc, argv, &o);
	struct proc_result *res =
		ig_team_run_all(o.procs, o.pidfile, child, &o, sizeof(*res), "processes", NULL, &elapsed);

	size_t n = o.size / (3 * sizeof(double));
	struct ig_json j;
	ig_json_result_begin(&j, &topo);
	ig_json_int(&j, "procs", o.procs);
	ig_json_int(&j, "threads", o.threads);
	ig_json_uint(&j, "size_bytes", 3 * n * sizeof(double));
	ig_json_uint(&j, "array_elements", n);
	ig_json_time(&j, "duration_s", o.duration);
	ig_json_double(&j, "elapsed_s", elapsed);

	/* Per-kernel bandwidth summed over processes (as when N STREAM copies run at once). */
	ig_json_obj_begin(&j, "kernels");
	for (int k = 0; k < K_NR; k++) {
		double best = 0, avg = 0;

		for (int p = 0; p < o.procs; p++) {
			if (!res[p].w.ops || res[p].best_t[k] <= 0)
				continue;
			best += best_mbps(&res[p], k, n);
			avg += avg_mbps(&res[p], k, n);
		}
		json_kernel(&j, k, best, avg);
	}
	ig_json_obj_end(&j);

	uint64_t end_nodes[VN_MAX_NODES] = {0};
	for (int p = 0; p < o.procs; p++)
		if (res[p].node >= 0 && res[p].node < VN_MAX_NODES)
			end_nodes[res[p].node]++;
	ig_json_uint(&j, "iterations_total", ig_team_totals(res, o.procs, sizeof(*res)).ops);
	ig_json_node_counts(&j, "procs_per_node_end", &topo, end_nodes);

	struct ig_locality loc = {0};
	ig_json_arr_begin(&j, "processes");
	for (int p = 0; p < o.procs; p++) {
		struct proc_result *r = &res[p];

		ig_json_obj_begin(&j, NULL);
		ig_json_int(&j, "pid", r->w.pid);
		ig_json_int(&j, "start_cpu", r->start_cpu);
		ig_json_int(&j, "start_node", r->start_node);
		ig_json_int(&j, "cpu", r->cpu);
		ig_json_int(&j, "node", r->node);
		ig_json_uint(&j, "iterations", r->w.ops);
		ig_json_double(&j, "elapsed_s", r->w.elapsed);
		ig_json_node_counts(&j, "iterations_per_node", &topo, r->iter_node);
		for (int k = 0; k < K_NR; k++)
			json_kernel(&j, k, best_mbps(r, k, n), avg_mbps(r, k, n));
		ig_json_placement(&j, &topo, &r->placement);
		ig_locality_add(&loc, &r->placement, r->node);
		ig_json_obj_end(&j);
	}
	ig_json_arr_end(&j);
	/* Fraction of all sampled pages that sit on the node their process ended on. */
	ig_json_double(&j, "local_fraction_end", ig_locality_fraction(&loc));
	ig_json_result_end(&j);
	return 0;
}
