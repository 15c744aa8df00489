/*
 * vnuma-wl-multi-instance: K instances of a multi-threaded, memory-heavy
 * transaction loop, a stand-in for SPECjbb with 1 vs K JVMs (Srikar/Mel's
 * NUMA-balancing placement threads).
 *
 * Each instance is a forked process with --threads threads sharing one heap
 * of --size bytes (first-touched in slices by its threads, like a JVM heap).
 * A transaction reads --txn-lines random cache lines of the heap and writes
 * one of them back. At the end each instance reports its ops/s, where its
 * heap lives (move_pages query over a sample) and which nodes its threads
 * ran on (getcpu every 256 transactions).
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

#define LINE 64

struct opts {
	int instances, threads, txn_lines;
	uint64_t size;
	double duration;
	uint64_t max_sample;
	const char *pidfile;
};

#define MAX_THREADS 256

struct inst_result {
	struct ig_worker w; /* ops: transactions */
	uint64_t thread_ops[MAX_THREADS];
	int thread_last_node[MAX_THREADS];
	uint64_t node_samples[VN_MAX_NODES]; /* getcpu samples of all threads, per node */
	struct ig_placement placement;
};

struct inst {
	const struct opts *o;
	char *heap;
	size_t len;
	pthread_barrier_t start;
	volatile int stop;
	struct inst_result *r;
	double t0;
};

struct thr {
	struct inst *in;
	int idx;
	pthread_t th;
	uint64_t node_samples[VN_MAX_NODES];
};

static void *worker(void *arg)
{
	struct thr *t = arg;
	struct inst *in = t->in;
	size_t lines = in->len / LINE, per = in->len / (size_t)in->o->threads;
	size_t lo = per * (size_t)t->idx, hi = t->idx == in->o->threads - 1 ? in->len : lo + per;
	uint64_t seed = ig_seed((uint64_t)t->idx * 7919 + (uint64_t)getpid()), ops = 0, acc = 0;
	int node;

	memset(in->heap + lo, 0x11, hi - lo); /* first touch of this thread's slice */
	pthread_barrier_wait(&in->start);     /* heap ready */
	pthread_barrier_wait(&in->start);     /* go */
	while (!in->stop) {
		for (int k = 0; k < 256; k++) {
			uint64_t *w = NULL;
			for (int l = 0; l < in->o->txn_lines; l++) {
				uint64_t x = ig_rand_next(&seed);
				w = (uint64_t *)(in->heap + (x % lines) * LINE);
				acc += *w;
			}
			*w = acc + 1; /* read-modify-write */
			ops++;
		}
		ig_getcpu(NULL, &node);
		if (node >= 0 && node < VN_MAX_NODES)
			t->node_samples[node]++;
	}
	in->r->thread_ops[t->idx] = ops;
	ig_getcpu(NULL, &node);
	in->r->thread_last_node[t->idx] = node;
	return NULL;
}

/* An instance of the team: its heap, its threads, then the transactions. */
static void instance(struct ig_team *team, int idx, const void *ctx, void *result)
{
	const struct opts *o = ctx;
	struct inst_result *r = result;
	struct inst in = {.o = o, .r = r};
	struct thr *ts = ig_xcalloc((size_t)o->threads, sizeof(*ts), "thread table");
	int e;

	in.len = ig_round_up(o->size, IG_PAGE_SIZE);
	in.heap = ig_map_anon(in.len, 0);
	if (!in.heap) {
		fprintf(stderr, "%s: instance %d: cannot map %zu bytes: %s\n", ig_prog, (int)getpid(), in.len,
			strerror(errno));
		_exit(IG_EXIT_ENV);
	}
	pthread_barrier_init(&in.start, NULL, (unsigned)o->threads + 1);
	for (int i = 0; i < o->threads; i++) {
		ts[i].in = &in;
		ts[i].idx = i;
		if ((e = pthread_create(&ts[i].th, NULL, worker, &ts[i])) != 0) {
			fprintf(stderr, "%s: pthread_create: %s\n", ig_prog, strerror(e));
			_exit(IG_EXIT_ENV);
		}
	}
	pthread_barrier_wait(&in.start);
	ig_team_ready(team);
	in.t0 = ig_now();
	pthread_barrier_wait(&in.start);
	ig_sleep(o->duration);
	in.stop = 1;
	for (int i = 0; i < o->threads; i++) {
		pthread_join(ts[i].th, NULL);
		r->w.ops += r->thread_ops[i];
		for (int n = 0; n < VN_MAX_NODES; n++)
			r->node_samples[n] += ts[i].node_samples[n];
	}
	r->w.elapsed = ig_now() - in.t0;
	ig_placement_query(in.heap, in.len, IG_PAGE_SIZE, o->max_sample, &r->placement);
	_exit(0);
}

static void parse(int argc, char **argv, struct opts *o)
{
	const char *size_arg = "64M";
	const struct ig_opt opts[] = {
		{"instances", IG_OPT_INT, .dst = &o->instances, .min = 1, .max = 1024, .arg = "K",
		 .help = "instances (forked processes) (default 1)"},
		{"threads", IG_OPT_INT, .dst = &o->threads, .min = 1, .max = MAX_THREADS, .arg = "T",
		 .help = "threads per instance (default 2, at most " IG_STR(MAX_THREADS) ")"},
		{"size", IG_OPT_SIZE, .dst = &o->size, .given = &size_arg,
		 .help = "heap per instance (default 64M; bare number = MiB)"},
		{"duration", IG_OPT_SECONDS, .dst = &o->duration, .min_s = 0.001, .help = "run time (default 10)"},
		{"txn-lines", IG_OPT_INT, .dst = &o->txn_lines, .min = 1, .max = 4096,
		 .help = "cache lines read per transaction (default 8)"},
		{"max-sample", IG_OPT_U64, .dst = &o->max_sample, .min = 0, .max = 1ULL << 30,
		 .help = "heap pages queried per instance at the end (default 16384, 0 = all)"},
		{"pidfile", IG_OPT_STRING, .dst = &o->pidfile,
		 .help = "write the instance pids there once their heaps are touched"},
		{0}};

	*o = (struct opts){
		.instances = 1, .threads = 2, .txn_lines = 8, .size = 64ULL << 20, .duration = 10, .max_sample = 16384};
	ig_opts_parse(argc, argv, opts, NULL);
	ig_check_size("size", size_arg, o->size, IG_PAGE_SIZE, (uint64_t)o->threads, "thread");
}

int main(int argc, char **argv)
{
	struct opts o;
	struct ig_topo topo;
	double elapsed;

	ig_workload_init("multi-instance", &topo);
	parse(argc, argv, &o);
	struct inst_result *res =
		ig_team_run_all(o.instances, o.pidfile, instance, &o, sizeof(*res), "instances", NULL, &elapsed);

	struct ig_team_totals tot = ig_team_totals(res, o.instances, sizeof(*res));

	struct ig_json j;
	ig_json_result_begin(&j, &topo);
	ig_json_int(&j, "instances", o.instances);
	ig_json_int(&j, "threads", o.threads);
	ig_json_uint(&j, "size_bytes", ig_round_up(o.size, IG_PAGE_SIZE));
	ig_json_int(&j, "txn_lines", o.txn_lines);
	ig_json_double(&j, "duration_s", o.duration);
	ig_json_double(&j, "elapsed_s", elapsed);
	ig_json_double(&j, "ops_per_s_total", tot.ops_per_s);
	ig_json_double(&j, "ops_per_s_per_instance", tot.ops_per_s / o.instances);
	struct ig_locality loc = {0};
	ig_json_arr_begin(&j, "instance_list");
	for (int i = 0; i < o.instances; i++) {
		struct inst_result *r = &res[i];
		int thread_node = ig_node_busiest(r->node_samples);
		int mem_node = ig_placement_main_node(&r->placement);

		ig_json_obj_begin(&j, NULL);
		ig_json_int(&j, "instance", i);
		ig_json_worker(&j, &r->w);
		ig_json_placement(&j, &topo, &r->placement);
		ig_json_int(&j, "mem_node", mem_node);
		ig_json_double(&j, "mem_node_fraction", ig_placement_fraction(&r->placement, mem_node));
		/* Fraction of the threads' getcpu samples per node. */
		ig_json_node_shares(&j, "thread_node_fraction", &topo, r->node_samples);
		ig_json_int(&j, "thread_node", thread_node);
		ig_json_arr_begin(&j, "threads_last_node");
		for (int t = 0; t < o.threads; t++)
			ig_json_int(&j, NULL, r->thread_last_node[t]);
		ig_json_arr_end(&j);
		ig_json_arr_begin(&j, "threads_ops");
		for (int t = 0; t < o.threads; t++)
			ig_json_uint(&j, NULL, r->thread_ops[t]);
		ig_json_arr_end(&j);
		ig_json_obj_end(&j);
		if (thread_node >= 0)
			ig_locality_add(&loc, &r->placement, thread_node);
	}
	ig_json_arr_end(&j);
	/* Sampled heap pages on the node where their instance's threads mostly ran. */
	ig_json_double(&j, "local_fraction", ig_locality_fraction(&loc));
	ig_json_result_end(&j);
	return 0;
}
