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
#include "inguest/buf.h"
#include "inguest/cpustat.h"
#include "inguest/json.h"
#include "inguest/mem.h"
#include "inguest/opt.h"
#include "inguest/prog.h"
#include "inguest/stats.h"
#include "inguest/time.h"
#include "inguest/topo.h"

#include <errno.h>
#include <fcntl.h>
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
	uint64_t work; /* spin iterations per round; 0 = calibrate from work_ms */
	int work_pct;  /* then scaled to this % of it: a known change of work for calibrating compare */
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

static struct ig_topo topo;
/* Sampler accumulators. */
static uint64_t nsamples;
static uint64_t sum_threads[VN_MAX_NODES], sum_running[VN_MAX_NODES], max_threads[VN_MAX_NODES];
static uint64_t sum_cpu_stacked; /* samples x CPUs holding >1 running benchmark thread */
/* /proc/stat at the start and end of the measured window (static: a CPU table each). */
static struct ig_cpustat stat0, stat1;
static bool have_stat;

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
		double t0 = ig_thread_cpu_time();
		spin(n);
		t = ig_thread_cpu_time() - t0;
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
	double w0 = ig_now(), c0 = ig_thread_cpu_time();

	t->tid = (pid_t)syscall(SYS_gettid);
	/* Everyone has a tid: start together, and let the sampler go. */
	if (pthread_barrier_wait(&barrier) == PTHREAD_BARRIER_SERIAL_THREAD)
		started = 1;
	for (;;) {
		spin(o.work);
		int r = pthread_barrier_wait(&barrier);
		if (r == PTHREAD_BARRIER_SERIAL_THREAD) {
			double now = ig_now();
			if (nrounds == round_cap) {
				round_cap = round_cap ? 2 * round_cap : 1024;
				round_times = ig_xrealloc(round_times, round_cap, sizeof(*round_times), "round times");
			}
			round_times[nrounds] = now - round_t0;
			nrounds++;
			round_t0 = now;
			if ((o.rounds && nrounds >= o.rounds) || (o.duration > 0 && now - bench_t0 >= o.duration))
				stop_flag = 1;
		}
		pthread_barrier_wait(&barrier);
		if (stop_flag)
			break;
	}
	t->cpu_s = ig_thread_cpu_time() - c0;
	t->wall_s = ig_now() - w0;
	ig_getcpu(&t->last_cpu, NULL);
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
	uint16_t *per_cpu = ig_xcalloc(IG_MAX_CPUS, sizeof(*per_cpu), "per-CPU counts");

	while (!started && !sampler_stop)
		ig_sleep(0.001);
	while (!sampler_stop && !stop_flag) {
		uint64_t cnt[VN_MAX_NODES] = {0}, run[VN_MAX_NODES] = {0};
		int seen = 0;
		uint64_t stacked = 0;

		if (per_cpu)
			memset(per_cpu, 0, IG_MAX_CPUS * sizeof(*per_cpu));
		for (int i = 0; i < o.threads; i++) {
			char st;
			int cpu, node;

			if (!threads[i].tid || read_task(threads[i].tid, &st, &cpu) < 0)
				continue;
			node = ig_topo_node_of_cpu(&topo, cpu);
			if (node < 0 || node >= VN_MAX_NODES)
				continue;
			seen++;
			cnt[node]++;
			if (st == 'R') {
				run[node]++;
				if (per_cpu && cpu < IG_MAX_CPUS && ++per_cpu[cpu] == 2)
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
			for (int n = 0; n < VN_MAX_NODES; n++) {
				sum_threads[n] += cnt[n];
				sum_running[n] += run[n];
				if (cnt[n] > max_threads[n])
					max_threads[n] = cnt[n];
			}
		}
		ig_sleep(o.sample_ms / 1000.0);
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
	return ig_write_file(path, val);
}

static void parse(int argc, char **argv)
{
	static const struct ig_opt opts[] = {
		{"threads", IG_OPT_INT, .dst = &o.threads, .min = 1, .max = 4096,
		 .help = "barrier-synchronised spinning threads (default: online CPUs)"},
		{"work", IG_OPT_U64, .dst = &o.work, .min = 1, .max = 1ULL << 50,
		 .help = "spin iterations per thread per round (default: calibrated to --work-ms)"},
		{"work-pct", IG_OPT_INT, .dst = &o.work_pct, .min = 1, .max = 10000, .arg = "P",
		 .help = "do P% of that work per round (default 100; 105: 5% more, a known change to detect)"},
		{"work-ms", IG_OPT_SECONDS, .dst = &o.work_ms, .min_s = 0.001, .arg = "MS",
		 .help = "calibrated work per round when --work is not given (default 20)"},
		{"rounds", IG_OPT_U64, .dst = &o.rounds, .min = 1, .max = 1ULL << 40,
		 .help = "stop after N rounds ..."},
		{"duration", IG_OPT_SECONDS, .dst = &o.duration, .min_s = 0.001,
		 .help = "... or after S seconds (default 10 s)"},
		{"burners", IG_OPT_INT, .dst = &o.burners, .min = 0, .max = 4096, .arg = "M",
		 .help = "CPU-burner processes (default 0)"},
		{"burner-cgroup", IG_OPT_STRING, .dst = &o.burner_cgroup,
		 .help = "put the burners in this cgroup (GROUP); default: the benchmark's (NORMAL)"},
		{"bench-cgroup", IG_OPT_STRING, .dst = &o.bench_cgroup,
		 .help = "put the benchmark (and burners without --burner-cgroup) in this cgroup"},
		{"sample-ms", IG_OPT_SECONDS, .dst = &o.sample_ms, .min_s = 0.1, .arg = "MS",
		 .help = "thread placement sample period (default 10)"},
		{"pidfile", IG_OPT_STRING, .dst = &o.pidfile,
		 .help = "write the benchmark pid, then the burner pids, there"},
		{0}};
	long ncpu = sysconf(_SC_NPROCESSORS_ONLN);

	o = (struct opts){.threads = ncpu > 0 ? (int)ncpu : 1, .work_ms = 20, .sample_ms = 10, .work_pct = 100};
	ig_opts_parse(argc, argv, opts, NULL);
	if (!o.rounds && o.duration <= 0)
		o.duration = 10;
	for (int i = 0; i < 2; i++) {
		const char *dir = i ? o.bench_cgroup : o.burner_cgroup;
		char path[4096];

		if (!dir)
			continue;
		snprintf(path, sizeof(path), "%s/cgroup.procs", dir);
		if (access(path, W_OK) < 0)
			ig_bad_option(i ? "bench-cgroup" : "burner-cgroup", dir,
				      "no writable cgroup.procs there (create the cgroup first)");
	}
}

/* The burners, each spinning in --burner-cgroup once it joined; burners[0] is this process. */
static pid_t *start_burners(void)
{
	pid_t *burners = ig_xcalloc((size_t)o.burners + 1, sizeof(*burners), "burner table");
	burners[0] = getpid();
	for (int i = 0; i < o.burners; i++) {
		int pfd[2];
		char st = 0;

		if (pipe2(pfd, O_CLOEXEC) < 0)
			ig_die(IG_EXIT_ENV, errno, "pipe");
		fflush(stdout);
		pid_t pid = fork();
		if (pid < 0)
			ig_die(IG_EXIT_ENV, errno, "fork of burner %d", i);
		if (pid == 0) {
			ig_child_setup();
			close(pfd[0]);
			if (o.burner_cgroup && join_cgroup(o.burner_cgroup, getpid()) < 0)
				st = 1;
			if (write(pfd[1], &st, 1) != 1 || st)
				_exit(IG_EXIT_ENV);
			close(pfd[1]);
			for (;;)
				spin(1 << 20);
		}
		close(pfd[1]);
		if (read(pfd[0], &st, 1) != 1 || st) {
			kill(pid, SIGKILL);
			for (int k = 1; k <= i; k++)
				kill(burners[k], SIGKILL);
			ig_die(IG_EXIT_ENV, 0, "burner %d could not join cgroup %s", i, o.burner_cgroup);
		}
		close(pfd[0]);
		burners[i + 1] = pid;
	}

	return burners;
}

/* Threads per node over the samples, against each node's CPUs. */
static void json_nodes(struct ig_json *j)
{
	double worst_excess = 0;
	ig_json_arr_begin(j, "per_node");
	for (int n = 0; n < topo.nr_nodes; n++) {
		if (!topo.online[n])
			continue;
		double avg = nsamples ? (double)sum_threads[n] / (double)nsamples : 0;
		double avg_run = nsamples ? (double)sum_running[n] / (double)nsamples : 0;
		if (avg - topo.node_cpus[n] > worst_excess)
			worst_excess = avg - topo.node_cpus[n];
		ig_json_obj_begin(j, NULL);
		ig_json_int(j, "node", n);
		ig_json_int(j, "cpus", topo.node_cpus[n]);
		ig_json_double(j, "avg_threads", avg);
		ig_json_double(j, "avg_running", avg_run);
		ig_json_uint(j, "max_threads", max_threads[n]);
		ig_json_obj_end(j);
	}
	ig_json_arr_end(j);
	/* The largest (average threads - CPUs) over nodes; 0 when no node is oversubscribed. */
	ig_json_double(j, "max_node_excess", worst_excess);
	/* lb_fairness-style line: average threads per node, in node order. */
	ig_json_arr_begin(j, "avg_threads_per_node");
	for (int n = 0; n < topo.nr_nodes; n++)
		if (topo.online[n])
			ig_json_double(j, NULL, nsamples ? (double)sum_threads[n] / (double)nsamples : 0);
	ig_json_arr_end(j);
}

static void print_result(const pid_t *burners, double elapsed)
{
	struct ig_json j;

	/* Round 0 includes thread start-up: keep it out of the statistics when there are more. */
	size_t nr = nrounds < round_cap ? nrounds : round_cap;
	struct ig_stats rs;
	ig_stats_compute(nr > 1 ? round_times + 1 : round_times, nr > 1 ? nr - 1 : nr, &rs);

	double *cpu_s = ig_xcalloc((size_t)o.threads, sizeof(double), "CPU times");
	struct ig_stats ts;
	for (int i = 0; i < o.threads; i++)
		cpu_s[i] = threads[i].cpu_s;
	ig_stats_compute(cpu_s, (size_t)o.threads, &ts);

	ig_json_result_begin(&j, &topo);
	ig_json_str(&j, "mode", !o.burners ? "none" : o.burner_cgroup ? "GROUP" : "NORMAL");
	ig_json_int(&j, "threads", o.threads);
	ig_json_int(&j, "burners", o.burners);
	ig_json_str(&j, "bench_cgroup", o.bench_cgroup);
	ig_json_str(&j, "burner_cgroup", o.burner_cgroup ? o.burner_cgroup : o.bench_cgroup);
	ig_json_uint(&j, "work", o.work);
	ig_json_int(&j, "work_pct", o.work_pct);
	ig_json_uint(&j, "rounds", nrounds);
	ig_json_double(&j, "elapsed_s", elapsed);
	ig_json_double(&j, "rounds_per_s", ig_rate((double)nrounds, elapsed));
	ig_json_stats(&j, "round_s", &rs);
	ig_json_stats(&j, "thread_cpu_s", &ts);
	ig_json_uint(&j, "samples", nsamples);
	ig_json_double(&j, "sample_ms", o.sample_ms);
	/* Average number of CPUs running two or more benchmark threads at once. */
	ig_json_double(&j, "avg_stacked_cpus", nsamples ? (double)sum_cpu_stacked / (double)nsamples : 0);

	/*
	 * Idle CPUs while benchmark threads stack are the load balancer's
	 * failure itself. In virtual time every busy vCPU takes its turn of one
	 * instruction stream, so a rate there scales with 1/busy_cpus
	 * (docs/noise.md).
	 */
	double busy = have_stat ? ig_cpustat_busy_cpus(&stat0, &stat1) : -1;
	if (busy >= 0)
		ig_json_double(&j, "busy_cpus", busy);

	json_nodes(&j);

	ig_json_arr_begin(&j, "thread_list");
	for (int i = 0; i < o.threads; i++) {
		struct thread *t = &threads[i];

		ig_json_obj_begin(&j, NULL);
		ig_json_int(&j, "tid", t->tid);
		ig_json_double(&j, "cpu_s", t->cpu_s);
		ig_json_double(&j, "wall_s", t->wall_s);
		ig_json_int(&j, "last_cpu", t->last_cpu);
		ig_json_int(&j, "last_node", ig_topo_node_of_cpu(&topo, t->last_cpu));
		ig_json_uint(&j, "cpu_changes_seen", t->migrations_seen);
		ig_json_obj_end(&j);
	}
	ig_json_arr_end(&j);
	ig_json_arr_begin(&j, "burner_pids");
	for (int i = 1; i <= o.burners; i++)
		ig_json_int(&j, NULL, burners[i]);
	ig_json_arr_end(&j);
	ig_json_result_end(&j);
	free(cpu_s);
}

int main(int argc, char **argv)
{
	pid_t *burners;
	pthread_t sth;
	double t0, elapsed;
	int r;

	ig_workload_init("groupfair", &topo);
	parse(argc, argv);

	if (o.bench_cgroup && (r = join_cgroup(o.bench_cgroup, getpid())) < 0)
		ig_die(IG_EXIT_ENV, -r, "cannot move the benchmark into cgroup %s", o.bench_cgroup);

	/*
	 * Calibrated alone, before the burners spin: beside them, the thread's
	 * CPU time counts their turns too wherever vCPUs take turns (TCG on
	 * fewer host cores, and always in virtual time, where every vCPU shares
	 * one instruction stream), and the work came out 0.2M-1.2M iterations
	 * from one run to the next (docs/noise.md).
	 */
	if (!o.work)
		o.work = calibrate(o.work_ms);
	burners = start_burners();
	/* Scaled in integers: 105% of 200000 is exactly 210000 iterations. */
	if (o.work_pct != 100)
		o.work = o.work * (uint64_t)o.work_pct / 100 ? o.work * (uint64_t)o.work_pct / 100 : 1;

	threads = ig_xcalloc((size_t)o.threads, sizeof(*threads), "thread table");
	pthread_barrier_init(&barrier, NULL, (unsigned)o.threads);
	if ((r = pthread_create(&sth, NULL, sampler, NULL)) != 0)
		ig_die(IG_EXIT_ENV, r, "pthread_create (sampler)");
	for (int i = 0; i < o.threads; i++) {
		threads[i].idx = i;
		threads[i].prev_cpu = -1;
	}
	have_stat = ig_cpustat_read(&stat0) == 0;
	t0 = ig_now();
	round_t0 = t0;
	bench_t0 = t0;
	for (int i = 1; i < o.threads; i++)
		if ((r = pthread_create(&threads[i].th, NULL, bench_thread, &threads[i])) != 0)
			ig_die(IG_EXIT_ENV, r, "pthread_create (thread %d)", i);
	if (o.pidfile && (r = ig_write_pidfile(o.pidfile, burners, (size_t)o.burners + 1)) < 0)
		fprintf(stderr, "%s: cannot write pidfile %s: %s\n", ig_prog, o.pidfile, strerror(-r));
	bench_thread(&threads[0]);
	for (int i = 1; i < o.threads; i++)
		pthread_join(threads[i].th, NULL);
	elapsed = ig_now() - t0;
	have_stat = have_stat && ig_cpustat_read(&stat1) == 0;
	sampler_stop = 1;
	pthread_join(sth, NULL);

	for (int i = 1; i <= o.burners; i++) {
		kill(burners[i], SIGKILL);
		waitpid(burners[i], NULL, 0);
	}

	print_result(burners, elapsed);
	free(threads);
	free(burners);
	free(round_times);
	return 0;
}
