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
#include "common.h"

#include <errno.h>
#include <getopt.h>
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
	size_t max_sample;
	const char *pidfile;
};

#define MAX_THREADS 256

struct inst_result {
	pid_t pid;
	uint64_t ops;
	double elapsed;
	uint64_t thread_ops[MAX_THREADS];
	int thread_last_node[MAX_THREADS];
	uint64_t node_samples[WL_MAX_NODES]; /* getcpu samples of all threads, per node */
	struct wl_placement placement;
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
	uint64_t node_samples[WL_MAX_NODES];
};

static void *worker(void *arg)
{
	struct thr *t = arg;
	struct inst *in = t->in;
	size_t lines = in->len / LINE, per = in->len / (size_t)in->o->threads;
	size_t lo = per * (size_t)t->idx, hi = t->idx == in->o->threads - 1 ? in->len : lo + per;
	uint64_t seed = wl_seed((uint64_t)t->idx * 7919 + (uint64_t)getpid()), ops = 0, acc = 0;
	int node;

	memset(in->heap + lo, 0x11, hi - lo); /* first touch of this thread's slice */
	pthread_barrier_wait(&in->start);      /* heap ready */
	pthread_barrier_wait(&in->start);      /* go */
	while (!in->stop) {
		for (int k = 0; k < 256; k++) {
			uint64_t *w = NULL;
			for (int l = 0; l < in->o->txn_lines; l++) {
				uint64_t x = wl_rand_next(&seed);
				w = (uint64_t *)(in->heap + (x % lines) * LINE);
				acc += *w;
			}
			*w = acc + 1; /* read-modify-write */
			ops++;
		}
		wl_getcpu(NULL, &node);
		if (node >= 0 && node < WL_MAX_NODES)
			t->node_samples[node]++;
	}
	in->r->thread_ops[t->idx] = ops;
	wl_getcpu(NULL, &node);
	in->r->thread_last_node[t->idx] = node;
	return NULL;
}

static void instance(const struct opts *o, struct wl_team *team, struct inst_result *r)
{
	struct inst in = { .o = o, .r = r };
	struct thr *ts = calloc((size_t)o->threads, sizeof(*ts));
	int e;

	r->pid = getpid();
	in.len = (o->size + 4095) & ~(size_t)4095;
	in.heap = wl_map_anon(in.len, 0);
	if (!in.heap || !ts) {
		fprintf(stderr, "%s: instance %d: cannot map %zu bytes: %s\n", wl_prog, (int)getpid(),
			in.len, strerror(errno));
		_exit(WL_EXIT_ENV);
	}
	pthread_barrier_init(&in.start, NULL, (unsigned)o->threads + 1);
	for (int i = 0; i < o->threads; i++) {
		ts[i].in = &in;
		ts[i].idx = i;
		if ((e = pthread_create(&ts[i].th, NULL, worker, &ts[i])) != 0) {
			fprintf(stderr, "%s: pthread_create: %s\n", wl_prog, strerror(e));
			_exit(WL_EXIT_ENV);
		}
	}
	pthread_barrier_wait(&in.start);
	wl_team_ready(team);
	in.t0 = wl_now();
	pthread_barrier_wait(&in.start);
	wl_sleep(o->duration);
	in.stop = 1;
	for (int i = 0; i < o->threads; i++) {
		pthread_join(ts[i].th, NULL);
		r->ops += r->thread_ops[i];
		for (int n = 0; n < WL_MAX_NODES; n++)
			r->node_samples[n] += ts[i].node_samples[n];
	}
	r->elapsed = wl_now() - in.t0;
	wl_placement_query(in.heap, in.len, 4096, o->max_sample, &r->placement);
	_exit(0);
}

static void usage(void)
{
	printf("usage: vnuma-wl-multi-instance [options]\n"
	       "  --instances K      instances (forked processes) (default 1)\n"
	       "  --threads T        threads per instance (default 2, at most %d)\n"
	       "  --size SIZE        heap per instance (default 64M; bare number = MiB)\n"
	       "  --duration S       run time (default 10)\n"
	       "  --txn-lines N      cache lines read per transaction (default 8)\n"
	       "  --max-sample N     heap pages queried per instance at the end (default 16384, 0 = all)\n"
	       "  --pidfile PATH     write the instance pids there once their heaps are touched\n",
	       MAX_THREADS);
}

static void parse(int argc, char **argv, struct opts *o)
{
	static const struct option lo[] = {
		{ "instances", required_argument, NULL, 'k' },
		{ "threads", required_argument, NULL, 't' },
		{ "size", required_argument, NULL, 's' },
		{ "duration", required_argument, NULL, 'd' },
		{ "txn-lines", required_argument, NULL, 'l' },
		{ "max-sample", required_argument, NULL, 'm' },
		{ "pidfile", required_argument, NULL, 'P' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 }
	};
	const char *size_arg = "64M";
	int c;

	*o = (struct opts){ .instances = 1, .threads = 2, .txn_lines = 8, .size = 64ULL << 20,
			    .duration = 10, .max_sample = 16384 };
	opterr = 0;
	while ((c = getopt_long(argc, argv, "", lo, NULL)) != -1) {
		switch (c) {
		case 'k': o->instances = (int)wl_opt_uint("instances", optarg, 1, 1024); break;
		case 't': o->threads = (int)wl_opt_uint("threads", optarg, 1, MAX_THREADS); break;
		case 's': o->size = wl_opt_size("size", optarg); size_arg = optarg; break;
		case 'd': o->duration = wl_opt_seconds("duration", optarg, 0.001); break;
		case 'l': o->txn_lines = (int)wl_opt_uint("txn-lines", optarg, 1, 4096); break;
		case 'm': o->max_sample = wl_opt_uint("max-sample", optarg, 0, 1ULL << 30); break;
		case 'P': o->pidfile = optarg; break;
		case 'h': usage(); exit(0);
		default: wl_unknown_option(argv[optind - 1]);
		}
	}
	if (optind < argc)
		wl_unknown_option(argv[optind]);
	if (o->size < (uint64_t)o->threads * 4096)
		wl_bad_option("size", size_arg, "need at least one page per thread");
}

int main(int argc, char **argv)
{
	struct opts o;
	struct wl_topo topo;
	struct wl_team team;
	struct inst_result *res;
	struct wl_json j;
	double t0, elapsed;
	int failed;

	wl_init("vnuma-wl-multi-instance");
	parse(argc, argv, &o);
	wl_topo_load(&topo);
	res = wl_map_shared(sizeof(*res) * (size_t)o.instances);
	wl_team_init(&team, o.instances);
	for (int i = 0; i < o.instances; i++)
		if (wl_team_fork(&team, i) == 0)
			instance(&o, &team, &res[i]);
	wl_team_go(&team, o.pidfile);
	t0 = wl_now();
	failed = wl_team_wait(&team);
	elapsed = wl_now() - t0;
	if (failed)
		wl_die(WL_EXIT_ENV, 0, "%d of %d instances failed", failed, o.instances);

	double total = 0;
	for (int i = 0; i < o.instances; i++)
		if (res[i].elapsed > 0)
			total += (double)res[i].ops / res[i].elapsed;

	wl_json_init(&j);
	wl_json_obj_begin(&j, NULL);
	wl_json_header(&j, "multi-instance", &topo);
	wl_json_int(&j, "instances", o.instances);
	wl_json_int(&j, "threads", o.threads);
	wl_json_uint(&j, "size_bytes", (o.size + 4095) & ~(uint64_t)4095);
	wl_json_int(&j, "txn_lines", o.txn_lines);
	wl_json_double(&j, "duration_s", o.duration);
	wl_json_double(&j, "elapsed_s", elapsed);
	wl_json_double(&j, "ops_per_s_total", total);
	wl_json_double(&j, "ops_per_s_per_instance", total / o.instances);
	uint64_t local = 0, sampled = 0;
	wl_json_arr_begin(&j, "instance_list");
	for (int i = 0; i < o.instances; i++) {
		struct inst_result *r = &res[i];
		uint64_t ns = 0, best = 0;
		int thread_node = -1;

		for (int n = 0; n < WL_MAX_NODES; n++) {
			ns += r->node_samples[n];
			if (r->node_samples[n] > best) {
				best = r->node_samples[n];
				thread_node = n;
			}
		}
		int mem_node = wl_placement_main_node(&r->placement);
		wl_json_obj_begin(&j, NULL);
		wl_json_int(&j, "instance", i);
		wl_json_int(&j, "pid", r->pid);
		wl_json_uint(&j, "ops", r->ops);
		wl_json_double(&j, "elapsed_s", r->elapsed);
		wl_json_double(&j, "ops_per_s", r->elapsed > 0 ? (double)r->ops / r->elapsed : 0);
		wl_json_uint(&j, "pages_sampled", r->placement.sampled);
		wl_json_node_counts(&j, "pages_per_node", &topo, r->placement.per_node);
		wl_json_uint(&j, "pages_not_present", r->placement.not_present);
		wl_json_uint(&j, "pages_other", r->placement.other);
		if (r->placement.err)
			wl_json_str(&j, "placement_error", strerror(-r->placement.err));
		wl_json_int(&j, "mem_node", mem_node);
		wl_json_double(&j, "mem_node_fraction",
			       mem_node >= 0 && r->placement.sampled
				       ? (double)r->placement.per_node[mem_node] / (double)r->placement.sampled
				       : 0);
		/* Fraction of the threads' getcpu samples per node. */
		wl_json_obj_begin(&j, "thread_node_fraction");
		for (int n = 0; n < WL_MAX_NODES; n++) {
			char k[16];
			if (!(n < topo.nr_nodes && topo.online[n]) && !r->node_samples[n])
				continue;
			snprintf(k, sizeof(k), "%d", n);
			wl_json_double(&j, k, ns ? (double)r->node_samples[n] / (double)ns : 0);
		}
		wl_json_obj_end(&j);
		wl_json_int(&j, "thread_node", thread_node);
		wl_json_arr_begin(&j, "threads_last_node");
		for (int t = 0; t < o.threads; t++)
			wl_json_int(&j, NULL, r->thread_last_node[t]);
		wl_json_arr_end(&j);
		wl_json_arr_begin(&j, "threads_ops");
		for (int t = 0; t < o.threads; t++)
			wl_json_uint(&j, NULL, r->thread_ops[t]);
		wl_json_arr_end(&j);
		wl_json_obj_end(&j);
		if (thread_node >= 0) {
			local += r->placement.per_node[thread_node];
			sampled += r->placement.sampled;
		}
	}
	wl_json_arr_end(&j);
	/* Sampled heap pages on the node where their instance's threads mostly ran. */
	wl_json_double(&j, "local_fraction", sampled ? (double)local / (double)sampled : 0);
	wl_json_obj_end(&j);
	wl_json_print(&j);
	wl_json_free(&j);
	return 0;
}
