#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <math.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "metrics/samples.h"
#include "util/alloc.h"
#include "util/cleanup.h"
#include "util/strbuf.h"

#define CHILD_MIB 8

static const char *sampler_path(void)
{
	const char *p = getenv("VN_SAMPLER");
	return p ? p : VN_SAMPLER_PATH;
}

/* If not 0, the sampler runs with this few descriptors (soft and hard limit). */
static rlim_t sampler_nofile;

/* fork(), the child's stdout into the pipe out; 0 in the child, which holds no other end of it. */
static pid_t fork_piped(int out[2])
{
	assert_int_equal(pipe(out), 0);
	pid_t pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		dup2(out[1], 1);
		close(out[0]);
		close(out[1]);
	}
	return pid;
}

/* Everything the sampler prints until it exits; its exit status in *rc. */
static char *run_sampler(char *const argv[], int *rc)
{
	int out[2];
	pid_t pid = fork_piped(out);
	if (pid == 0) {
		if (sampler_nofile) {
			struct rlimit rl = {sampler_nofile, sampler_nofile};
			setrlimit(RLIMIT_NOFILE, &rl);
		}
		execv(sampler_path(), argv);
		_exit(127);
	}
	close(out[1]);
	char *buf = NULL;
	size_t len = 0;
	time_t deadline = time(NULL) + 30;
	for (;;) {
		struct pollfd pfd = {.fd = out[0], .events = POLLIN};
		if (time(NULL) > deadline) {
			kill(pid, SIGKILL);
			fail_msg("vnuma-sample did not finish within 30 s");
		}
		if (poll(&pfd, 1, 1000) <= 0)
			continue;
		char chunk[65536];
		ssize_t r = read(out[0], chunk, sizeof(chunk));
		if (r <= 0)
			break;
		buf = realloc(buf, len + (size_t)r + 1);
		assert_non_null(buf);
		memcpy(buf + len, chunk, (size_t)r);
		len += (size_t)r;
		buf[len] = '\0';
	}
	close(out[0]);
	int status;
	assert_int_equal(waitpid(pid, &status, 0), pid);
	*rc = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
	return buf ? buf : strdup("");
}

/* A child that owns CHILD_MIB of touched anonymous memory, then sleeps; named comm if not NULL. */
static pid_t start_toucher(const char *comm)
{
	int ready[2];
	assert_int_equal(pipe(ready), 0);
	pid_t pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		if (comm)
			prctl(PR_SET_NAME, comm, 0, 0, 0);
		/* mmap and volatile stores: an optimiser may drop a malloc+memset nobody reads. */
		size_t n = (size_t)CHILD_MIB << 20;
		volatile char *m = mmap(NULL, n, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (m == MAP_FAILED)
			_exit(1);
		for (size_t i = 0; i < n; i += 4096)
			m[i] = 1;
		/*
		 * 64 mappings, not one: numa_maps then runs past a page, which the
		 * kernel hands out a page at a time, and all of it must be summed.
		 */
		for (size_t i = 0; i < n; i += 2 << 17)
			mprotect((char *)m + i, 1 << 17, PROT_READ);
		if (write(ready[1], "x", 1) != 1)
			_exit(1);
		for (;;)
			pause();
	}
	close(ready[1]);
	char c;
	assert_int_equal(read(ready[0], &c, 1), 1);
	close(ready[0]);
	return pid;
}

/* The sampler's output with OPTIONS... --pid CHILD (it must exit 0); the child is killed and reaped after. */
static char *sample_child(pid_t child, ...)
{
	char *argv[16] = {"vnuma-sample"}, pidarg[32];
	int argc = 1, rc;
	va_list ap;

	va_start(ap, child);
	while (argc < 13 && (argv[argc] = va_arg(ap, char *)) != NULL)
		argc++;
	va_end(ap);
	snprintf(pidarg, sizeof(pidarg), "%d", (int)child);
	argv[argc++] = "--pid";
	argv[argc++] = pidarg;
	argv[argc] = NULL;
	char *text = run_sampler(argv, &rc);
	kill(child, SIGKILL);
	waitpid(child, NULL, 0);
	assert_int_equal(rc, 0);
	return text;
}

static void test_real_sampler(void **state)
{
	pid_t child = start_toucher(NULL);
	char *text = sample_child(child, "--interval", "0.1", "--duration", "0.5", NULL);

	struct vn_samples s;
	struct vn_error err = {0};
	int r = vn_samples_parse(text, "samples.jsonl", &s, &err);
	if (r < 0)
		fail_msg("%s", err.msg);
	assert_false(s.truncated);
	assert_true(s.n >= 3);
	for (unsigned i = 0; i < s.n; i++) {
		const struct vn_sample *x = &s.v[i];
		struct json_object *v;
		if (i)
			assert_true(x->t > s.v[i - 1].t);
		assert_true(x->uptime > 0);
		assert_true(json_object_object_get_ex(x->vmstat, "nr_free_pages", &v));
		assert_true(x->nnodes >= 1);
		assert_true(x->node_online[0]);
		assert_non_null(x->meminfo[0]);
		assert_true(json_object_object_get_ex(x->meminfo[0], "MemTotal_kB", &v));
		assert_true(json_object_object_get_ex(x->numastat[0], "numa_hit", &v));
		assert_true(json_object_object_get_ex(json_object_object_get(x->json, "cost"), "cpu_s", &v));
		assert_true(x->cost_cpu_s >= 0 && x->cost_wall_s > 0);

		const struct vn_sample_proc *p = vn_sample_proc_find(x, child);
		if (!p)
			fail_msg("sample %u: child %d not among procs", i, (int)child);
		if (p->mem_kb[0] < 7000)
			fail_msg("sample %u: child has %.0f kB on node 0, want >= 7000", i, p->mem_kb[0]);
		assert_int_equal(p->nthreads, 1);
		assert_int_equal(p->threads[0].tid, child);
		assert_true(p->threads[0].cpu >= 0 && p->threads[0].cpu < sysconf(_SC_NPROCESSORS_CONF));
		assert_int_equal(p->threads[0].node, 0);
		assert_true(p->threads[0].state == 'S' || p->threads[0].state == 'R');
		/* Only the child is watched: the test process is its parent, not a descendant. */
		assert_null(vn_sample_proc_find(x, getpid()));
		assert_true(vn_samples_local_fraction(x, NULL, 0) > 0.99);
	}
	double mean, max;
	vn_samples_cost(&s, &mean, &max);
	assert_true(mean > 0 && max >= mean);
	print_message("vnuma-sample on this host: %u samples, sampler CPU per sample mean %.3f ms, max %.3f ms\n", s.n,
		      mean * 1e3, max * 1e3);
	vn_samples_free(&s);
	free(text);

	/* --mem-every 2: numa_maps only on even samples; the others say so by leaving memory out. */
	child = start_toucher(NULL);
	text = sample_child(child, "--interval", "0.05", "--duration", "0.2", "--mem-every", "2", NULL);
	assert_int_equal(vn_samples_parse(text, NULL, &s, &err), 0);
	assert_true(s.n >= 3);
	for (unsigned i = 0; i < s.n; i++) {
		const struct vn_sample_proc *p = vn_sample_proc_find(&s.v[i], child);
		assert_non_null(p);
		assert_int_equal(p->have_mem, i % 2 == 0);
		assert_int_equal(isnan(vn_samples_local_fraction(&s.v[i], NULL, 0)) != 0, i % 2 != 0);
	}
	vn_samples_free(&s);
	free(text);
}

/* The whole of a /proc or /sys file, as the test reads it (NULL if it cannot). */
static char *slurp(const char *path)
{
	FILE *f = fopen(path, "re");
	if (!f)
		return NULL;
	char *buf = malloc(1 << 20);
	assert_non_null(buf);
	size_t n = fread(buf, 1, (1 << 20) - 1, f);
	buf[n] = '\0';
	fclose(f);
	return buf;
}

/* The value of KEY in "key value" or "Node N key:   value kB" text, as the kernel printed it; NULL if absent. */
static const char *kv_find(const char *text, const char *key, char *out, size_t outsz)
{
	for (const char *line = text; *line;) {
		const char *p = line, *eol = strchr(line, '\n');
		line = eol ? eol + 1 : line + strlen(line);
		if (strncmp(p, "Node ", 5) == 0)
			p = strchr(p + 5, ' ') + 1;
		while (*p == ' ')
			p++;
		size_t kl = strcspn(p, " :\t");
		if (kl != strlen(key) || strncmp(p, key, kl) != 0)
			continue;
		p += kl + strspn(p + kl, " :\t");
		size_t vl = strcspn(p, " \n");
		snprintf(out, outsz, "%.*s", (int)vl, p);
		return out;
	}
	return NULL;
}

/*
 * The sampler copies the kernel's counters into its line without parsing
 * them when that gives the same text: every key of the file is there, in
 * its order, and the counters that read the same before and after it ran
 * have the kernel's value. A few of those moved and came back while it ran
 * (its own mappings count in nr_mapped): at most one in ten may differ.
 */
static void expect_counters(struct json_object *obj, const char *before, const char *after, const char *what)
{
	unsigned stable = 0, differ = 0, n = 0;
	json_object_object_foreach(obj, key, val)
	{
		char k[128], b[64], a[64];
		snprintf(k, sizeof(k), "%s", key);
		size_t kl = strlen(k);
		if (kl > 3 && strcmp(k + kl - 3, "_kB") == 0 && !kv_find(before, k, b, sizeof(b)))
			k[kl - 3] = '\0';
		if (!kv_find(before, k, b, sizeof(b)) || !kv_find(after, k, a, sizeof(a)))
			fail_msg("%s: %s is not in the kernel's file", what, key);
		n++;
		if (strcmp(a, b) != 0)
			continue;
		stable++;
		if (strcmp(json_object_to_json_string(val), b) != 0) {
			print_message("%s: %s is %s, the kernel said %s before and after\n", what, key,
				      json_object_to_json_string(val), b);
			differ++;
		}
	}
	/* Every line of the file is a member. */
	unsigned lines = 0;
	for (const char *p = before; *p; p++)
		lines += *p == '\n';
	assert_int_equal(n, lines);
	assert_true(stable > 0);
	if (differ * 10 > stable)
		fail_msg("%s: %u of %u stable counters differ from the kernel's text", what, differ, stable);
}

static void test_counters_verbatim(void **state)
{
	char *argv[] = {"vnuma-sample", "--interval", "1", "--duration", "0.001", NULL};
	const char *files[] = {"/proc/vmstat", "/sys/devices/system/node/node0/meminfo",
			       "/sys/devices/system/node/node0/numastat"};
	char *before[3], *after[3];
	int rc;

	for (int i = 0; i < 3; i++)
		before[i] = slurp(files[i]);
	char *text = run_sampler(argv, &rc);
	for (int i = 0; i < 3; i++)
		after[i] = slurp(files[i]);
	assert_int_equal(rc, 0);
	struct vn_samples s;
	struct vn_error err = {0};
	if (vn_samples_parse(text, NULL, &s, &err) < 0)
		fail_msg("%s", err.msg);
	assert_int_equal(s.n, 1);
	expect_counters(s.v[0].vmstat, before[0], after[0], files[0]);
	if (before[1] && before[2]) {
		expect_counters(s.v[0].meminfo[0], before[1], after[1], files[1]);
		expect_counters(s.v[0].numastat[0], before[2], after[2], files[2]);
	}
	vn_samples_free(&s);
	free(text);
	for (int i = 0; i < 3; i++) {
		free(before[i]);
		free(after[i]);
	}
}

static void sleep_s(double s)
{
	struct timespec ts = {(time_t)s, (long)((s - (double)(time_t)s) * 1e9)};
	while (nanosleep(&ts, &ts) < 0)
		;
}

static void *short_thread(void *arg)
{
	sleep_s(0.4);
	return arg;
}

/* The sample's process with this comm, or NULL. */
static const struct vn_sample_proc *proc_by_comm(const struct vn_sample *x, const char *comm)
{
	for (unsigned i = 0; i < x->nprocs; i++)
		if (strcmp(x->procs[i].comm, comm) == 0)
			return &x->procs[i];
	return NULL;
}

/* True if the samples where f(x) holds form one unbroken run, and there is one. */
static bool one_run(const struct vn_samples *s, const char *comm, unsigned *first, unsigned *last)
{
	bool seen = false, ended = false;
	for (unsigned i = 0; i < s->n; i++) {
		bool in = proc_by_comm(&s->v[i], comm) != NULL;
		if (in && ended)
			return false;
		if (in && !seen)
			*first = i;
		if (in)
			*last = i;
		ended = ended || (seen && !in);
		seen = seen || in;
	}
	return seen;
}

/* Which samples hold comm, as a row of 1 (its thread count) and '.', for the failure message. */
static const char *presence(const struct vn_samples *s, const char *comm)
{
	static char row[512];
	size_t k = 0;
	for (unsigned i = 0; i < s->n && k + 2 < sizeof(row); i++) {
		const struct vn_sample_proc *p = proc_by_comm(&s->v[i], comm);
		row[k++] = p ? (char)('0' + (p->nthreads > 9 ? 9 : p->nthreads)) : '.';
	}
	row[k] = '\0';
	return row;
}

/*
 * The sampler keeps its process and thread tables (open stat files) from
 * one sample to the next, and reads kernel threads again only when the
 * kernel hands out a pid: a process that appears, is renamed into the
 * match without a new pid, gains and loses a thread, or exits, must still
 * show in exactly the samples where it is there.
 */
static void test_procs_come_and_go(void **state)
{
	/* Names of this test's run only: the sampler sees every process on the host, a concurrent run's too. */
	char pfx[16], name_a[32], name_b[32];
	snprintf(pfx, sizeof(pfx), "vt%u-", (unsigned)getpid() % 100000u);
	snprintf(name_a, sizeof(name_a), "%sa", pfx);
	snprintf(name_b, sizeof(name_b), "%sb", pfx);
	pid_t orch = fork();
	assert_true(orch >= 0);
	if (orch == 0) {
		prctl(PR_SET_NAME, "tst-orch", 0, 0, 0);
		pid_t b = fork();
		if (b == 0) {
			prctl(PR_SET_NAME, "tst-sleeper", 0, 0, 0);
			sleep_s(0.6);
			/* No new pid: only reading user processes again each sample finds it. */
			prctl(PR_SET_NAME, name_b, 0, 0, 0);
			for (;;)
				pause();
		}
		sleep_s(0.3);
		pid_t a = fork();
		if (a == 0) {
			prctl(PR_SET_NAME, name_a, 0, 0, 0);
			sleep_s(0.3);
			pthread_t t;
			if (pthread_create(&t, NULL, short_thread, NULL) != 0)
				_exit(1);
			pthread_join(t, NULL);
			sleep_s(0.4);
			_exit(0);
		}
		waitpid(a, NULL, 0);
		sleep_s(0.4);
		kill(b, SIGKILL);
		waitpid(b, NULL, 0);
		_exit(0);
	}
	char *argv[] = {"vnuma-sample", "--interval", "0.05", "--duration", "2.4", "--match", pfx, NULL};
	int rc;
	char *text = run_sampler(argv, &rc);
	int status;
	assert_int_equal(waitpid(orch, &status, 0), orch);
	assert_int_equal(rc, 0);

	struct vn_samples s;
	struct vn_error err = {0};
	if (vn_samples_parse(text, NULL, &s, &err) < 0)
		fail_msg("%s", err.msg);
	unsigned a0 = 0, a1 = 0, b0 = 0, b1 = 0;
	if (!one_run(&s, name_a, &a0, &a1))
		fail_msg("%s is not in one unbroken run of samples: %s", name_a, presence(&s, name_a));
	if (!one_run(&s, name_b, &b0, &b1))
		fail_msg("%s (renamed, no new pid) is not in one unbroken run of samples: %s", name_b,
			 presence(&s, name_b));
	/* Each is gone before the end, and neither was there from the start. */
	assert_true(a0 > 0 && a1 + 1 < s.n);
	assert_true(b0 > 0 && b1 + 1 < s.n);
	/* a's threads: 1, then 2 while the thread lives, then 1 again. */
	unsigned phase = 0;
	for (unsigned i = a0; i <= a1; i++) {
		unsigned n = proc_by_comm(&s.v[i], name_a)->nthreads;
		if (phase == 0 && n == 2)
			phase = 1;
		else if (phase == 1 && n == 1)
			phase = 2;
		else if (n != (phase == 1 ? 2u : 1u))
			fail_msg("sample %u: %s has %u threads in phase %u", i, name_a, n, phase);
	}
	assert_int_equal(phase, 2);
	for (unsigned i = 0; i < s.n; i++)
		assert_null(proc_by_comm(&s.v[i], "tst-orch"));
	vn_samples_free(&s);
	free(text);
}

/*
 * With too few descriptors to keep one per process, the sampler reads the
 * rest by path: the same processes, threads and memory, no process lost.
 */
static void test_few_descriptors(void **state)
{
	pid_t child = start_toucher("vnuma-tst-fd");
	sampler_nofile = 16;
	char *text = sample_child(child, "--interval", "0.05", "--duration", "0.2", NULL);
	sampler_nofile = 0;

	struct vn_samples s;
	struct vn_error err = {0};
	if (vn_samples_parse(text, NULL, &s, &err) < 0)
		fail_msg("%s", err.msg);
	assert_true(s.n >= 3);
	for (unsigned i = 0; i < s.n; i++) {
		const struct vn_sample_proc *p = vn_sample_proc_find(&s.v[i], child);
		if (!p)
			fail_msg("sample %u: child %d not among procs with 16 descriptors", i, (int)child);
		assert_string_equal(p->comm, "vnuma-tst-fd");
		assert_true(p->have_mem && p->mem_kb[0] >= 7000);
		assert_int_equal(p->nthreads, 1);
		assert_true(json_object_object_length(s.v[i].vmstat) > 10);
	}
	vn_samples_free(&s);
	free(text);
}

static void test_sigterm_stops_cleanly(void **state)
{
	int out[2];
	pid_t pid = fork_piped(out);
	if (pid == 0) {
		execl(sampler_path(), "vnuma-sample", "--interval", "10", (char *)NULL);
		_exit(127);
	}
	close(out[1]);
	/* The first line comes at once; then it sleeps ten seconds unless the signal cuts that short. */
	char buf[65536];
	assert_true(read(out[0], buf, sizeof(buf)) > 0);
	kill(pid, SIGTERM);
	int status;
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFEXITED(status));
	assert_int_equal(WEXITSTATUS(status), 0);
	close(out[0]);
}

static void test_bad_options(void **state)
{
	char *argv[] = {"vnuma-sample", "--interval", "abc", NULL};
	int rc;
	char *text = run_sampler(argv, &rc);
	assert_int_equal(rc, 2);
	assert_string_equal(text, "");
	free(text);
}

/*
 * A comm is whatever bytes a program chose: quotes, control characters and
 * invalid UTF-8 still give a line json-c reads, with U+FFFD for the stray byte.
 */
static void test_odd_comm(void **state)
{
	pid_t child = start_toucher("wl\"\x01\xff\\x");
	char *text = sample_child(child, "--interval", "0.1", "--duration", "0.1", "--mem-every", "1000", NULL);

	struct vn_samples s;
	struct vn_error err = {0};
	if (vn_samples_parse(text, NULL, &s, &err) < 0)
		fail_msg("%s: %s", err.msg, text);
	assert_int_equal(s.n, 2);
	const struct vn_sample_proc *p = vn_sample_proc_find(&s.v[0], child);
	assert_non_null(p);
	assert_string_equal(p->comm, "wl\"\x01\xef\xbf\xbd\\x");
	assert_non_null(strstr(text, "\"comm\":\"wl\\\"\\u0001\\ufffd\\\\x\""));
	/* --mem-every 1000: memory on sample 0 only. */
	assert_true(p->have_mem);
	assert_false(vn_sample_proc_find(&s.v[1], child)->have_mem);
	vn_samples_free(&s);
	free(text);
}

/* Two nodes; pid 100 has 1000 kB on node 0 and 3000 on node 1 and two of its three threads on node 1. */
#define LINE(T, R0, R1)                                                                                        \
	"{\"seq\":0,\"t\":" #T ",\"uptime\":12.5,\"vmstat\":{\"nr_free_pages\":10,\"numa_pages_migrated\":0}," \
	"\"nodes\":[{\"node\":0,\"numastat\":{\"numa_hit\":1},\"meminfo\":{\"MemTotal_kB\":1}},"               \
	"{\"node\":1,\"numastat\":{\"numa_hit\":2},\"meminfo\":{\"MemTotal_kB\":2}}],"                         \
	"\"procs\":[{\"pid\":100,\"comm\":\"vnuma-wl-a (x)\",\"mem_kb_per_node\":{\"0\":1000,\"1\":3000},"     \
	"\"threads\":[{\"tid\":100,\"cpu\":2,\"node\":1,\"state\":\"R\"},{\"tid\":101,\"cpu\":3,\"node\":1,"   \
	"\"state\":\"S\"},{\"tid\":102,\"cpu\":0,\"node\":0,\"state\":\"R\"}]},"                               \
	"{\"pid\":200,\"comm\":\"vnuma-wl-b\",\"mem_kb_per_node\":{\"0\":2000,\"1\":0},"                       \
	"\"threads\":[{\"tid\":200,\"cpu\":1,\"node\":0,\"state\":\"S\"}]}],"                                  \
	"\"running_per_node\":{\"0\":" #R0 ",\"1\":" #R1 "},\"cost\":{\"cpu_s\":0.002,\"wall_s\":0.003}}\n"

static void test_fractions_two_nodes(void **state)
{
	struct vn_samples s;
	struct vn_error err = {0};
	const char *text = LINE(0.5, 1, 2) "\n" LINE(1.5, 3, 0);

	assert_int_equal(vn_samples_parse(text, NULL, &s, &err), 0);
	assert_int_equal(s.n, 2);
	const struct vn_sample *x = &s.v[0];
	assert_int_equal(x->nnodes, 2);
	assert_int_equal(x->nprocs, 2);
	assert_string_equal(x->procs[0].comm, "vnuma-wl-a (x)");
	assert_int_equal(x->procs[0].threads_on_node[1], 2);
	assert_int_equal(x->procs[0].threads[2].node, 0);

	int p100[] = {100}, p200[] = {200}, none[] = {999};
	assert_float_equal(vn_samples_fraction_on_node(x, NULL, 0, 0), 3000.0 / 6000, 1e-9);
	assert_float_equal(vn_samples_fraction_on_node(x, p100, 1, 0), 0.25, 1e-9);
	assert_float_equal(vn_samples_fraction_on_node(x, p100, 1, 1), 0.75, 1e-9);
	assert_true(isnan(vn_samples_fraction_on_node(x, none, 1, 0)));
	/* Home of 100 is node 1 (two threads of three), of 200 node 0. */
	assert_float_equal(vn_samples_local_fraction(x, p100, 1), 0.75, 1e-9);
	assert_float_equal(vn_samples_local_fraction(x, p200, 1), 1.0, 1e-9);
	assert_float_equal(vn_samples_local_fraction(x, NULL, 0), 5000.0 / 6000, 1e-9);

	double avg[2];
	vn_samples_avg_running(&s, avg, 2);
	assert_float_equal(avg[0], 2.0, 1e-9);
	assert_float_equal(avg[1], 1.0, 1e-9);
	double mean, max;
	vn_samples_cost(&s, &mean, &max);
	assert_float_equal(mean, 0.002, 1e-9);
	assert_float_equal(max, 0.002, 1e-9);
	vn_samples_free(&s);
}

static void expect_error(const char *text, const char *want)
{
	struct vn_samples s;
	struct vn_error err = {0};

	assert_true(vn_samples_parse(text, "samples.jsonl", &s, &err) < 0);
	assert_int_equal(err.kind, VN_ERR_INPUT);
	if (!strstr(err.msg, want))
		fail_msg("error '%s' does not contain '%s'", err.msg, want);
	assert_int_equal(s.n, 0);
	assert_null(s.v);
}

/* LINE(0, 0, 0) with the start of its "\"1\":3000" overwritten by patch (no longer than that). */
static char *patched_line(const char *patch)
{
	char *line = strdup(LINE(0, 0, 0));

	memcpy(strstr(line, "\"1\":3000"), patch, strlen(patch));
	return line;
}

static void expect_patched_error(const char *patch, const char *want)
{
	char *line = patched_line(patch);

	expect_error(line, want);
	free(line);
}

static void test_malformed(void **state)
{
	expect_error(LINE(0, 0, 0) LINE(1, 0, 0) "{\"t\": 2,\n" LINE(3, 0, 0), "samples.jsonl:3:");
	expect_error(LINE(0, 0, 0) "\n{\"t\":1} {\"t\":2}\n", "samples.jsonl:3: not one JSON value per line");
	expect_error(LINE(0, 0, 0) "{\"t\":1}\n", "samples.jsonl:2: sample: missing \"vmstat\"");
	expect_error("{\"t\":\"x\"}\n", "samples.jsonl:1: sample: \"t\" is not a number");
	expect_error("[1,2]\n", "samples.jsonl:1: a sample is a JSON object");
	/* A bad entry deep in a line still names the line. */
	expect_patched_error("\"x\"", "samples.jsonl:1: mem_kb_per_node: \"x\" is not a node id");
}

/* The host takes every node id the model allows (VN_MAX_NODES), as the sampler does: 64 was once a wall. */
static void test_high_node_ids(void **state)
{
	struct vn_samples s;
	struct vn_error err = {0};
	char *line = patched_line("\"64\":300"); /* same length: node 64 holds 300 kB */

	assert_int_equal(vn_samples_parse(line, NULL, &s, &err), 0);
	assert_float_equal(s.v[0].procs[0].mem_kb[64], 300, 1e-9);
	vn_samples_free(&s);
	free(line);
	expect_patched_error("\"128\":30", "node 128");
}

static void test_truncated_tail_and_empty(void **state)
{
	struct vn_samples s;
	struct vn_error err = {0};

	/* A run cut off mid-write leaves an unterminated half line: dropped, flagged. */
	assert_int_equal(vn_samples_parse(LINE(0, 0, 0) LINE(1, 0, 0) "{\"seq\":2,\"t\":2,\"vm", NULL, &s, &err), 0);
	assert_int_equal(s.n, 2);
	assert_true(s.truncated);
	vn_samples_free(&s);

	assert_int_equal(vn_samples_parse("", NULL, &s, &err), 0);
	assert_int_equal(s.n, 0);
	assert_false(s.truncated);
	double avg[1] = {42}, mean = 1, max = 1;
	vn_samples_avg_running(&s, avg, 1);
	vn_samples_cost(&s, &mean, &max);
	assert_float_equal(avg[0], 0, 0);
	assert_float_equal(mean, 0, 0);
	vn_samples_free(&s);
}

/* Lines as the runner writes them to samples.jsonl: the host's clock first, then the sampler's fields. */
static char *host_lines(const double (*ht)[2], size_t n)
{
	struct vn_strbuf b = VN_STRBUF_INIT;
	const char *rest = strstr(LINE(0, 0, 0), "\"uptime\"");

	for (size_t i = 0; i < n; i++) {
		if (isnan(ht[i][0]))
			vn_strbuf_printf(&b, "{\"t\":%g,%s", ht[i][1], rest);
		else
			vn_strbuf_printf(&b, "{\"host_t\":%g,\"t\":%g,%s", ht[i][0], ht[i][1], rest);
	}
	return vn_strbuf_steal(&b);
}

static double lead_drop_of(const double (*ht)[2], size_t n)
{
	struct vn_samples s;
	struct vn_error err = {0};
	char *text = host_lines(ht, n);

	assert_int_equal(vn_samples_parse(text ? text : "", NULL, &s, &err), 0);
	assert_int_equal(s.n, n);
	double d = vn_samples_lead_drop(&s);
	vn_samples_free(&s);
	free(text);
	return d;
}

/* Virtual time's lead: guest seconds minus host seconds since the first stamped line, at its lowest. */
static void test_lead_drop(void **state)
{
	/* Unstamped, then busy (a guest second takes the host 4 to 5), then idle (the guest jumps 100 s). */
	static const double run[][2] = {{NAN, 0}, {10, 1}, {14, 2}, {20, 4}, {21, 104}};
	static const double gains[][2] = {{0, 0}, {1, 50}};
	static const double one[][2] = {{5, 0}, {NAN, 9}};

	assert_float_equal(lead_drop_of(run, 5), -7, 1e-9);
	assert_float_equal(lead_drop_of(gains, 2), 0, 0);
	assert_float_equal(lead_drop_of(one, 2), 0, 0);
	assert_float_equal(lead_drop_of(NULL, 0), 0, 0);
	expect_error("{\"host_t\":\"x\",\"t\":1}\n", "samples.jsonl:1: sample: \"host_t\" is not a number");
	/*
	 * The guest's own "host_t" after the runner's head would be the value a
	 * JSON parser keeps: only the head counts, so a guest cannot hide a lead
	 * that ran out (or invent one).
	 */
	const char *rest = strstr(LINE(0, 0, 0), "\"uptime\"");
	_cleanup_free_ char *forged = vn_xasprintf("{\"host_t\":0,\"t\":0,%s{\"host_t\":10,\"t\":1,\"host_t\":1,%s"
						   "{\"t\":2,\"host_t\":50,%s",
						   rest, rest, rest);
	struct vn_samples s;
	struct vn_error err = {0};
	assert_int_equal(vn_samples_parse(forged, NULL, &s, &err), 0);
	assert_float_equal(s.v[1].host_t, 10, 0);
	assert_true(isnan(s.v[2].host_t));
	assert_float_equal(vn_samples_lead_drop(&s), -9, 1e-9);
	vn_samples_free(&s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_fractions_two_nodes),   cmocka_unit_test(test_malformed),
		cmocka_unit_test(test_high_node_ids),         cmocka_unit_test(test_truncated_tail_and_empty),
		cmocka_unit_test(test_bad_options),           cmocka_unit_test(test_odd_comm),
		cmocka_unit_test(test_sigterm_stops_cleanly), cmocka_unit_test(test_real_sampler),
		cmocka_unit_test(test_counters_verbatim),     cmocka_unit_test(test_procs_come_and_go),
		cmocka_unit_test(test_few_descriptors),       cmocka_unit_test(test_lead_drop),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
