/*
 * vnuma-wl-groupfair: the "lb_fairness" GROUP vs NORMAL test (Phil Auld's
 * NAS lu.C + stress burners, on the CFS load-balance rework thread).
 *
 * N threads each spin a fixed amount of work per round and then wait at a
 * pthread barrier, so a round takes as long as its slowest thread: two
 * benchmark threads stacked on one CPU double the round time. M CPU-burner
 * processes run alongside, either in their own cgroup (GROUP: they carry
 * full group load) or in the benchmark's cgroup (NORMAL). A sampler thread
 * reads every benchmark thread's last CPU (/proc/self/task/TID/stat field 39)
 * every --sample-ms and maps it to a node; the result is the average number
 * of benchmark threads (and of running ones) per node, to compare with the
 * node's CPU count.
 */
#include "common.h"

#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

struct opts {
	int threads, burners;
	uint64_t work;      /* spin iterations per round; 0 = calibrate from work_ms */
	double work_ms;
	uint64_t rounds;
	double duration;
	double sample_ms;
	const char *burner_cgroup, *bench_cgroup, *pidfile;
};

struct thread {
	pthread_t th;
	int idx;
	pid_t tid;
	double cpu_s, wall_s;
	int last_cpu;
	uint64_t migrations_seen; /* sampler saw a different CPU than the previous sample */
	int prev_cpu;
};

static struct opts o;
static struct thread *threads;
static pthread_barrier_t barrier;
static volatile int stop_flag, sampler_stop;
static volatile int started;
static double *round_times;
static size_t nrounds, round_cap;
static double round_t0, bench_t0;
static volatile uint64_t sink;

static struct wl_topo topo;
/* Sampler accumulators. */
static uint64_t nsamples;
static uint64_t sum_threads[WL_MAX_NODES], sum_running[WL_MAX_NODES], max_threads[WL_MAX_NODES];
static uint64_t sum_cpu_stacked; /* samples x CPUs holding >1 running benchmark thread */

static inline void spin(uint64_t n)
{
	uint64_t x = sink;

	for (uint64_t i = 0; i < n; i++)
		x = x * 6364136223846793005ULL + 1442695040888963407ULL;
	sink = x;
}

static uint64_t calibrate(double ms)
{
	uint64_t n = 1 << 16;
	double t;

	for (;;) {
		double t0 = wl_thread_cpu_time();
		spin(n);
		t = wl_thread_cpu_time() - t0;
		if (t > 0.02 || n > (1ULL << 40))
			break;
		n *= 2;
	}
	double per_ms = (double)n / (t * 1000.0);
	uint64_t w = (uint64_t)(per_ms * ms);
	return w ? w : 1;
}

static void *bench_thread(void *arg)
{
	struct thread *t = arg;
	double w0 = wl_now(), c0 = wl_thread_cpu_time();

	t->tid = (pid_t)syscall(SYS_gettid);
	/* Everyone has a tid: start together, and let the sampler go. */
	if (pthread_barrier_wait(&barrier) == PTHREAD_BARRIER_SERIAL_THREAD)
		started = 1;
	for (;;) {
		spin(o.work);
		int r = pthread_barrier_wait(&barrier);
		if (r == PTHREAD_BARRIER_SERIAL_THREAD) {
			double now = wl_now();
			if (nrounds == round_cap) {
				size_t cap = round_cap ? 2 * round_cap : 1024;
				double *n = realloc(round_times, cap * sizeof(*n));
				if (n) {
					round_times = n;
					round_cap = cap;
				}
			}
			if (nrounds < round_cap)
				round_times[nrounds] = now - round_t0;
			nrounds++;
			round_t0 = now;
			if ((o.rounds && nrounds >= o.rounds) ||
			    (o.duration > 0 && now - bench_t0 >= o.duration))
				stop_flag = 1;
		}
		pthread_barrier_wait(&barrier);
		if (stop_flag)
			break;
	}
	t->cpu_s = wl_thread_cpu_time() - c0;
	t->wall_s = wl_now() - w0;
	wl_getcpu(&t->last_cpu, NULL);
	return NULL;
}

/* Field 3 (state) and field 39 (processor) of /proc/self/task/TID/stat. */
static int read_task(pid_t tid, char *state, int *cpu)
{
	char path[64], buf[1024], *p;
	int fd, n;

	snprintf(path, sizeof(path), "/proc/self/task/%d/stat", (int)tid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	n = (int)read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return -1;
	buf[n] = '\0';
	p = strrchr(buf, ')'); /* comm may contain spaces */
	if (!p || p[1] != ' ')
		return -1;
	p += 2;
	*state = *p;
	/* p is at field 3; skip to field 39. */
	for (int f = 3; f < 39; f++) {
		p = strchr(p, ' ');
		if (!p)
			return -1;
		p++;
	}
	*cpu = atoi(p);
	return 0;
}

static void *sampler(void *arg)
{
	uint16_t *per_cpu = calloc(WL_MAX_CPUS, sizeof(*per_cpu));

	while (!started && !sampler_stop)
		wl_sleep(0.001);
	while (!sampler_stop && !stop_flag) {
		uint64_t cnt[WL_MAX_NODES] = { 0 }, run[WL_MAX_NODES] = { 0 };
		int seen = 0;
		uint64_t stacked = 0;

		if (per_cpu)
			memset(per_cpu, 0, WL_MAX_CPUS * sizeof(*per_cpu));
		for (int i = 0; i < o.threads; i++) {
			char st;
			int cpu, node;

			if (!threads[i].tid || read_task(threads[i].tid, &st, &cpu) < 0)
				continue;
			node = wl_topo_node_of_cpu(&topo, cpu);
			if (node < 0 || node >= WL_MAX_NODES)
				continue;
			seen++;
			cnt[node]++;
			if (st == 'R') {
				run[node]++;
				if (per_cpu && cpu < WL_MAX_CPUS && ++per_cpu[cpu] == 2)
					stacked++;
			}
			if (threads[i].prev_cpu >= 0 && threads[i].prev_cpu != cpu)
				threads[i].migrations_seen++;
			threads[i].prev_cpu = cpu;
		}
		/* Only whole snapshots: a thread may have just exited at the end. */
		if (seen == o.threads && !stop_flag) {
			nsamples++;
			sum_cpu_stacked += stacked;
			for (int n = 0; n < WL_MAX_NODES; n++) {
				sum_threads[n] += cnt[n];
				sum_running[n] += run[n];
				if (cnt[n] > max_threads[n])
					max_threads[n] = cnt[n];
			}
		}
		wl_sleep(o.sample_ms / 1000.0);
	}
	free(per_cpu);
	return NULL;
}

static int join_cgroup(const char *dir, pid_t pid)
{
	char path[4096], val[32];

	if (snprintf(path, sizeof(path), "%s/cgroup.procs", dir) >= (int)sizeof(path))
		return -ENAMETOOLONG;
	snprintf(val, sizeof(val), "%d\n", (int)pid);
	return wl_write_file(path, val);
}

static void usage(void)
{
	printf("usage: vnuma-wl-groupfair [options]\n"
	       "  --threads N            barrier-synchronised spinning threads (default: online CPUs)\n"
	       "  --work N               spin iterations per thread per round (default: calibrated to --work-ms)\n"
	       "  --work-ms MS           calibrated work per round when --work is not given (default 20)\n"
	       "  --rounds N             stop after N rounds ...\n"
	       "  --duration S           ... or after S seconds (default 10 s)\n"
	       "  --burners M            CPU-burner processes (default 0)\n"
	       "  --burner-cgroup PATH   put the burners in this cgroup (GROUP); default: the benchmark's (NORMAL)\n"
	       "  --bench-cgroup PATH    put the benchmark (and burners without --burner-cgroup) in this cgroup\n"
	       "  --sample-ms MS         thread placement sample period (default 10)\n"
	       "  --pidfile PATH         write the benchmark pid, then the burner pids, there\n");
}

static void parse(int argc, char **argv)
{
	static const struct option lo[] = {
		{ "threads", required_argument, NULL, 't' },
		{ "work", required_argument, NULL, 'w' },
		{ "work-ms", required_argument, NULL, 'W' },
		{ "rounds", required_argument, NULL, 'r' },
		{ "duration", required_argument, NULL, 'd' },
		{ "burners", required_argument, NULL, 'b' },
		{ "burner-cgroup", required_argument, NULL, 'B' },
		{ "bench-cgroup", required_argument, NULL, 'C' },
		{ "sample-ms", required_argument, NULL, 's' },
		{ "pidfile", required_argument, NULL, 'P' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 }
	};
	long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
	int c;

	o = (struct opts){ .threads = ncpu > 0 ? (int)ncpu : 1, .work_ms = 20, .sample_ms = 10 };
	opterr = 0;
	while ((c = getopt_long(argc, argv, "", lo, NULL)) != -1) {
		switch (c) {
		case 't': o.threads = (int)wl_opt_uint("threads", optarg, 1, 4096); break;
		case 'w': o.work = wl_opt_uint("work", optarg, 1, 1ULL << 50); break;
		case 'W': o.work_ms = wl_opt_seconds("work-ms", optarg, 0.001); break;
		case 'r': o.rounds = wl_opt_uint("rounds", optarg, 1, 1ULL << 40); break;
		case 'd': o.duration = wl_opt_seconds("duration", optarg, 0.001); break;
		case 'b': o.burners = (int)wl_opt_uint("burners", optarg, 0, 4096); break;
		case 'B': o.burner_cgroup = optarg; break;
		case 'C': o.bench_cgroup = optarg; break;
		case 's': o.sample_ms = wl_opt_seconds("sample-ms", optarg, 0.1); break;
		case 'P': o.pidfile = optarg; break;
		case 'h': usage(); exit(0);
		default: wl_unknown_option(argv[optind - 1]);
		}
	}
	if (optind < argc)
		wl_unknown_option(argv[optind]);
	if (!o.rounds && o.duration <= 0)
		o.duration = 10;
	for (int i = 0; i < 2; i++) {
		const char *dir = i ? o.bench_cgroup : o.burner_cgroup;
		char path[4096];

		if (!dir)
			continue;
		snprintf(path, sizeof(path), "%s/cgroup.procs", dir);
		if (access(path, W_OK) < 0)
			wl_bad_option(i ? "bench-cgroup" : "burner-cgroup", dir,
				      "no writable cgroup.procs there (create the cgroup first)");
	}
}

int main(int argc, char **argv)
{
	pid_t *burners = NULL;
	pthread_t sth;
	double t0, elapsed;
	struct wl_json j;
	int r;

	wl_init("vnuma-wl-groupfair");
	parse(argc, argv);
	wl_topo_load(&topo);

	if (o.bench_cgroup && (r = join_cgroup(o.bench_cgroup, getpid())) < 0)
		wl_die(WL_EXIT_ENV, -r, "cannot move the benchmark into cgroup %s", o.bench_cgroup);

	burners = calloc((size_t)o.burners + 1, sizeof(*burners));
	if (!burners)
		wl_die(WL_EXIT_ENV, ENOMEM, "burner table");
	burners[0] = getpid();
	for (int i = 0; i < o.burners; i++) {
		int pfd[2];
		char st = 0;

		if (pipe2(pfd, O_CLOEXEC) < 0)
			wl_die(WL_EXIT_ENV, errno, "pipe");
		fflush(stdout);
		pid_t pid = fork();
		if (pid < 0)
			wl_die(WL_EXIT_ENV, errno, "fork of burner %d", i);
		if (pid == 0) {
			wl_child_setup();
			close(pfd[0]);
			if (o.burner_cgroup && join_cgroup(o.burner_cgroup, getpid()) < 0)
				st = 1;
			if (write(pfd[1], &st, 1) != 1 || st)
				_exit(WL_EXIT_ENV);
			close(pfd[1]);
			for (;;)
				spin(1 << 20);
		}
		close(pfd[1]);
		if (read(pfd[0], &st, 1) != 1 || st) {
			kill(pid, SIGKILL);
			for (int k = 1; k <= i; k++)
				kill(burners[k], SIGKILL);
			wl_die(WL_EXIT_ENV, 0, "burner %d could not join cgroup %s", i, o.burner_cgroup);
		}
		close(pfd[0]);
		burners[i + 1] = pid;
	}

	if (!o.work)
		o.work = calibrate(o.work_ms);

	threads = calloc((size_t)o.threads, sizeof(*threads));
	if (!threads)
		wl_die(WL_EXIT_ENV, ENOMEM, "thread table");
	pthread_barrier_init(&barrier, NULL, (unsigned)o.threads);
	if ((r = pthread_create(&sth, NULL, sampler, NULL)) != 0)
		wl_die(WL_EXIT_ENV, r, "pthread_create (sampler)");
	for (int i = 0; i < o.threads; i++) {
		threads[i].idx = i;
		threads[i].prev_cpu = -1;
	}
	t0 = wl_now();
	round_t0 = t0;
	bench_t0 = t0;
	for (int i = 1; i < o.threads; i++)
		if ((r = pthread_create(&threads[i].th, NULL, bench_thread, &threads[i])) != 0)
			wl_die(WL_EXIT_ENV, r, "pthread_create (thread %d)", i);
	if (o.pidfile && (r = wl_write_pidfile(o.pidfile, burners, (size_t)o.burners + 1)) < 0)
		fprintf(stderr, "%s: cannot write pidfile %s: %s\n", wl_prog, o.pidfile, strerror(-r));
	bench_thread(&threads[0]);
	for (int i = 1; i < o.threads; i++)
		pthread_join(threads[i].th, NULL);
	elapsed = wl_now() - t0;
	sampler_stop = 1;
	pthread_join(sth, NULL);

	for (int i = 1; i <= o.burners; i++) {
		kill(burners[i], SIGKILL);
		waitpid(burners[i], NULL, 0);
	}

	/* Round 0 includes thread start-up: keep it out of the statistics when there are more. */
	size_t nr = nrounds < round_cap ? nrounds : round_cap;
	struct wl_stats rs;
	wl_stats_compute(nr > 1 ? round_times + 1 : round_times, nr > 1 ? nr - 1 : nr, &rs);

	double *cpu_s = calloc((size_t)o.threads, sizeof(double));
	struct wl_stats ts;
	for (int i = 0; i < o.threads; i++)
		cpu_s[i] = threads[i].cpu_s;
	wl_stats_compute(cpu_s, (size_t)o.threads, &ts);

	wl_json_init(&j);
	wl_json_obj_begin(&j, NULL);
	wl_json_header(&j, "groupfair", &topo);
	wl_json_str(&j, "mode", !o.burners ? "none" : o.burner_cgroup ? "GROUP" : "NORMAL");
	wl_json_int(&j, "threads", o.threads);
	wl_json_int(&j, "burners", o.burners);
	wl_json_str(&j, "bench_cgroup", o.bench_cgroup);
	wl_json_str(&j, "burner_cgroup", o.burner_cgroup ? o.burner_cgroup : o.bench_cgroup);
	wl_json_uint(&j, "work", o.work);
	wl_json_uint(&j, "rounds", nrounds);
	wl_json_double(&j, "elapsed_s", elapsed);
	wl_json_double(&j, "rounds_per_s", elapsed > 0 ? (double)nrounds / elapsed : 0);
	wl_json_stats(&j, "round_s", &rs);
	wl_json_stats(&j, "thread_cpu_s", &ts);
	wl_json_uint(&j, "samples", nsamples);
	wl_json_double(&j, "sample_ms", o.sample_ms);
	/* Average number of CPUs running two or more benchmark threads at once. */
	wl_json_double(&j, "avg_stacked_cpus", nsamples ? (double)sum_cpu_stacked / (double)nsamples : 0);

	double worst_excess = 0;
	wl_json_arr_begin(&j, "per_node");
	for (int n = 0; n < topo.nr_nodes; n++) {
		if (!topo.online[n])
			continue;
		double avg = nsamples ? (double)sum_threads[n] / (double)nsamples : 0;
		double avg_run = nsamples ? (double)sum_running[n] / (double)nsamples : 0;
		if (avg - topo.node_cpus[n] > worst_excess)
			worst_excess = avg - topo.node_cpus[n];
		wl_json_obj_begin(&j, NULL);
		wl_json_int(&j, "node", n);
		wl_json_int(&j, "cpus", topo.node_cpus[n]);
		wl_json_double(&j, "avg_threads", avg);
		wl_json_double(&j, "avg_running", avg_run);
		wl_json_uint(&j, "max_threads", max_threads[n]);
		wl_json_obj_end(&j);
	}
	wl_json_arr_end(&j);
	/* The largest (average threads - CPUs) over nodes; 0 when no node is oversubscribed. */
	wl_json_double(&j, "max_node_excess", worst_excess);
	/* lb_fairness-style line: average threads per node, in node order. */
	wl_json_arr_begin(&j, "avg_threads_per_node");
	for (int n = 0; n < topo.nr_nodes; n++)
		if (topo.online[n])
			wl_json_double(&j, NULL, nsamples ? (double)sum_threads[n] / (double)nsamples : 0);
	wl_json_arr_end(&j);

	wl_json_arr_begin(&j, "thread_list");
	for (int i = 0; i < o.threads; i++) {
		struct thread *t = &threads[i];

		wl_json_obj_begin(&j, NULL);
		wl_json_int(&j, "tid", t->tid);
		wl_json_double(&j, "cpu_s", t->cpu_s);
		wl_json_double(&j, "wall_s", t->wall_s);
		wl_json_int(&j, "last_cpu", t->last_cpu);
		wl_json_int(&j, "last_node", wl_topo_node_of_cpu(&topo, t->last_cpu));
		wl_json_uint(&j, "cpu_changes_seen", t->migrations_seen);
		wl_json_obj_end(&j);
	}
	wl_json_arr_end(&j);
	wl_json_arr_begin(&j, "burner_pids");
	for (int i = 1; i <= o.burners; i++)
		wl_json_int(&j, NULL, burners[i]);
	wl_json_arr_end(&j);
	wl_json_obj_end(&j);
	wl_json_print(&j);
	wl_json_free(&j);
	free(cpu_s);
	free(threads);
	free(burners);
	free(round_times);
	return 0;
}
