/*
 * Runs each in-guest workload program on the host with tiny sizes and short
 * durations, parses its one-line JSON result with json-c and checks that the
 * fields exist and are sane. The host is usually a 1-node machine (node 0
 * only), which is enough to check the plumbing; the NUMA behaviour itself is
 * checked by the scenarios in real guests. The helpers they share are
 * tested in test-inguest.c.
 */
#include "inguest/buf.h"
#include "topology/limits.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <json-c/json.h>

#include <cmocka.h>

#define RUN_TIMEOUT_S 60

struct run {
	int rc; /* exit status, or 128+signal */
	char *out, *err;
	json_object *json; /* last stdout line, parsed; NULL if none */
};

static const char *prog_path(const char *name)
{
	static char path[4096];
	const char *dir = getenv("VN_BINARY_DIR");

	if (dir) {
		snprintf(path, sizeof(path), "%s/src/workloads/vnuma-wl-%s", dir, name);
		if (access(path, X_OK) == 0)
			return path;
	}
	snprintf(path, sizeof(path), "%s/vnuma-wl-%s", VN_WL_DIR, name);
	return path;
}

static void append(char **buf, size_t *len, const char *data, size_t n)
{
	char *b = realloc(*buf, *len + n + 1);

	assert_non_null(b);
	memcpy(b + *len, data, n);
	*len += n;
	b[*len] = '\0';
	*buf = b;
}

/* Runs vnuma-wl-NAME with a NULL-terminated argument list. */
static void run_prog(struct run *r, const char *name, ...)
{
	const char *argv[64];
	int argc = 0, po[2], pe[2], st;
	va_list ap;
	size_t olen = 0, elen = 0;
	pid_t pid;
	time_t deadline = time(NULL) + RUN_TIMEOUT_S;

	memset(r, 0, sizeof(*r));
	argv[argc++] = prog_path(name);
	va_start(ap, name);
	while (argc < 63 && (argv[argc] = va_arg(ap, const char *)) != NULL)
		argc++;
	va_end(ap);
	argv[argc] = NULL;

	assert_int_equal(pipe2(po, O_CLOEXEC), 0);
	assert_int_equal(pipe2(pe, O_CLOEXEC), 0);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		dup2(po[1], 1);
		dup2(pe[1], 2);
		execv(argv[0], (char *const *)argv);
		fprintf(stderr, "exec %s: %s\n", argv[0], strerror(errno));
		_exit(127);
	}
	close(po[1]);
	close(pe[1]);
	r->out = strdup("");
	r->err = strdup("");
	struct pollfd pf[2] = {{.fd = po[0], .events = POLLIN}, {.fd = pe[0], .events = POLLIN}};
	int open_fds = 2;
	while (open_fds > 0) {
		if (time(NULL) > deadline) {
			kill(pid, SIGKILL);
			fail_msg("%s did not finish within %d s", name, RUN_TIMEOUT_S);
		}
		if (poll(pf, 2, 1000) < 0 && errno != EINTR)
			fail_msg("poll: %s", strerror(errno));
		for (int i = 0; i < 2; i++) {
			char buf[8192];
			ssize_t n;

			if (pf[i].fd < 0 || !(pf[i].revents & (POLLIN | POLLHUP | POLLERR)))
				continue;
			n = read(pf[i].fd, buf, sizeof(buf));
			if (n > 0) {
				if (i == 0)
					append(&r->out, &olen, buf, (size_t)n);
				else
					append(&r->err, &elen, buf, (size_t)n);
			} else if (n == 0 || errno != EINTR) {
				close(pf[i].fd);
				pf[i].fd = -1;
				open_fds--;
			}
		}
	}
	assert_int_equal(waitpid(pid, &st, 0), pid);
	r->rc = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);

	if (olen && r->out[0] == '{')
		r->json = json_tokener_parse(r->out);
}

static void run_free(struct run *r)
{
	if (r->json)
		json_object_put(r->json);
	free(r->out);
	free(r->err);
}

static void expect_ok(struct run *r, const char *workload)
{
	if (r->rc != 0 || !r->json)
		fail_msg("%s: rc=%d stdout=%s stderr=%s", workload, r->rc, r->out, r->err);
	/* Exactly one JSON line on stdout, nothing after it. */
	char *nl = strchr(r->out, '\n');
	assert_non_null(nl);
	assert_true(nl[1] == '\0');
	json_object *w;
	assert_true(json_object_object_get_ex(r->json, "workload", &w));
	assert_string_equal(json_object_get_string(w), workload);
}

static json_object *get(json_object *o, const char *key)
{
	json_object *v = NULL;

	if (!json_object_object_get_ex(o, key, &v))
		fail_msg("missing key '%s' in %s", key, json_object_to_json_string(o));
	return v;
}

static double num(json_object *o, const char *key)
{
	json_object *v = get(o, key);

	if (!json_object_is_type(v, json_type_double) && !json_object_is_type(v, json_type_int))
		fail_msg("key '%s' is not a number: %s", key, json_object_to_json_string(v));
	return json_object_get_double(v);
}

static int64_t inum(json_object *o, const char *key)
{
	json_object *v = get(o, key);

	assert_true(json_object_is_type(v, json_type_int));
	return json_object_get_int64(v);
}

static json_object *arr(json_object *o, const char *key, size_t want_len)
{
	json_object *v = get(o, key);

	assert_true(json_object_is_type(v, json_type_array));
	if (want_len != (size_t)-1)
		assert_int_equal(json_object_array_length(v), want_len);
	return v;
}

/* Sum of a {"node":count} object; every key must be a node number. */
static int64_t node_sum(json_object *o)
{
	int64_t sum = 0;

	assert_true(json_object_is_type(o, json_type_object));
	json_object_object_foreach(o, k, v)
	{
		char *end;
		long n = strtol(k, &end, 10);
		assert_true(*k && !*end && n >= 0 && n < VN_MAX_NODES);
		assert_true(json_object_is_type(v, json_type_int));
		assert_true(json_object_get_int64(v) >= 0);
		sum += json_object_get_int64(v);
	}
	return sum;
}

static void check_placement(json_object *o, const char *sampled_key, const char *nodes_key, const char *np_key,
			    const char *other_key)
{
	int64_t sampled = inum(o, sampled_key);
	int64_t on_nodes = node_sum(get(o, nodes_key));

	assert_true(sampled > 0);
	assert_int_equal(on_nodes + inum(o, np_key) + inum(o, other_key), sampled);
	/* The memory was touched and is not swapped: every page is on a node. */
	assert_int_equal(on_nodes, sampled);
}

static char *tmp_path(const char *tag)
{
	static char p[256];

	snprintf(p, sizeof(p), "/tmp/vnuma-wl-test-%d-%s", (int)getpid(), tag);
	return p;
}

static int read_pidfile(const char *path, long *pids, int max)
{
	FILE *f = fopen(path, "r");
	int n = 0;

	assert_non_null(f);
	while (n < max && fscanf(f, "%ld", &pids[n]) == 1)
		n++;
	fclose(f);
	unlink(path);
	return n;
}

/* ---- programs ---- */

static void test_stream(void **state)
{
	struct run r;
	const char *pf = tmp_path("stream.pid");
	static const char *const kernels[] = {"copy", "scale", "add", "triad"};
	long pids[8];

	run_prog(&r, "stream", "--size", "3M", "--procs", "2", "--duration", "0.3", "--pidfile", pf, NULL);
	expect_ok(&r, "stream");
	assert_int_equal(inum(r.json, "procs"), 2);
	assert_true(inum(r.json, "iterations_total") >= 2);
	for (int k = 0; k < 4; k++) {
		json_object *kj = get(get(r.json, "kernels"), kernels[k]);
		assert_true(num(kj, "best_mbps") > 0);
		assert_true(num(kj, "avg_mbps") > 0);
		assert_true(num(kj, "avg_mbps") <= num(kj, "best_mbps") * 1.0001);
	}
	assert_int_equal(node_sum(get(r.json, "procs_per_node_end")), 2);
	json_object *ps = arr(r.json, "processes", 2);
	assert_int_equal(read_pidfile(pf, pids, 8), 2);
	for (size_t i = 0; i < 2; i++) {
		json_object *p = json_object_array_get_idx(ps, i);
		assert_int_equal(inum(p, "pid"), pids[i]);
		assert_true(inum(p, "node") >= 0 && inum(p, "node") < inum(r.json, "nodes"));
		assert_true(inum(p, "cpu") >= 0);
		assert_true(inum(p, "iterations") >= 1);
		assert_true(num(get(p, "triad"), "best_mbps") > 0);
		check_placement(p, "pages_sampled", "pages_per_node", "pages_not_present", "pages_other");
		/* 3 MiB over 3 arrays: 768 pages, all sampled. */
		assert_true(inum(p, "pages_sampled") >= 765);
	}
	num(r.json, "local_fraction_end");
	run_free(&r);
}

static void test_stream_threads_iterations(void **state)
{
	struct run r;

	run_prog(&r, "stream", "--size", "1M", "--threads", "2", "--iterations", "3", NULL);
	expect_ok(&r, "stream");
	assert_int_equal(inum(r.json, "threads"), 2);
	assert_int_equal(inum(r.json, "iterations_total"), 3);
	assert_true(json_object_is_type(get(r.json, "duration_s"), json_type_null));
	assert_true(num(get(get(r.json, "kernels"), "copy"), "best_mbps") > 0);
	run_free(&r);
}

static void test_memfollow(void **state)
{
	struct run r;
	const char *pf = tmp_path("memfollow.pid");
	long pid;
	double prev_t = -1;

	run_prog(&r, "memfollow", "--size", "4", "--duration", "1", "--interval", "0.2", "--move-to-node", "0",
		 "--move-at", "0.3", "--pattern", "random", "--pidfile", pf, NULL);
	expect_ok(&r, "memfollow");
	assert_int_equal(read_pidfile(pf, &pid, 1), 1);
	assert_int_equal(pid, inum(r.json, "pid"));
	int64_t pages = inum(r.json, "pages");
	assert_int_equal(pages, 1024);
	assert_int_equal(inum(r.json, "pages_sampled"), pages);
	assert_string_equal(json_object_get_string(get(r.json, "pattern")), "random");
	assert_true(inum(r.json, "touches") > 0);
	json_object *mv = get(r.json, "move");
	assert_int_equal(inum(mv, "to_node"), 0);
	assert_true(json_object_get_boolean(get(mv, "ok")));
	assert_true(num(mv, "done_at_s") >= 0.3);
	/* On the host nothing changes node, so memory never "follows". */
	if (inum(r.json, "nodes") == 1) {
		assert_true(json_object_is_type(get(r.json, "node_change_s"), json_type_null));
		assert_true(num(r.json, "local_fraction_end") == 1.0);
	}
	json_object *ss = arr(r.json, "samples", (size_t)-1);
	assert_true(json_object_array_length(ss) >= 5);
	for (size_t i = 0; i < json_object_array_length(ss); i++) {
		json_object *s = json_object_array_get_idx(ss, i);
		double t = num(s, "t");
		assert_true(t > prev_t);
		prev_t = t;
		assert_true(inum(s, "cpu_node") >= 0);
		assert_true(inum(s, "cpu") >= 0);
		/* pages_per_node sums to the page count (all pages are queried at this size). */
		assert_int_equal(node_sum(get(s, "pages_per_node")), pages);
		assert_int_equal(inum(s, "not_present"), 0);
		assert_int_equal(inum(s, "other"), 0);
	}
	assert_true(prev_t >= 0.99);
	run_free(&r);
}

static void test_memfollow_sampled(void **state)
{
	struct run r;

	run_prog(&r, "memfollow", "--size", "2M", "--duration", "0.3", "--interval", "0.1", "--max-sample", "100",
		 NULL);
	expect_ok(&r, "memfollow");
	assert_int_equal(inum(r.json, "pages"), 512);
	assert_int_equal(inum(r.json, "pages_sampled"), 100);
	assert_true(json_object_is_type(get(r.json, "move"), json_type_null));
	assert_string_equal(json_object_get_string(get(r.json, "pattern")), "seq");
	assert_true(inum(r.json, "passes") > 0);
	json_object *ss = arr(r.json, "samples", (size_t)-1);
	for (size_t i = 0; i < json_object_array_length(ss); i++)
		assert_int_equal(node_sum(get(json_object_array_get_idx(ss, i), "pages_per_node")), 100);
	run_free(&r);
}

static void check_cow(const char *backing)
{
	struct run r;
	const char *pf = tmp_path("cow.pid");
	long pids[4];

	run_prog(&r, "anon-cow-rand", "--size", "8M", "--procs", "2", "--duration", "0.3", "--backing", backing,
		 "--pidfile", pf, NULL);
	expect_ok(&r, "anon-cow-rand");
	assert_string_equal(json_object_get_string(get(r.json, "backing")), backing);
	assert_int_equal(inum(r.json, "size_bytes"), 8 << 20);
	assert_true(inum(r.json, "ops_total") > 0);
	assert_true(num(r.json, "ops_per_s") > 0);
	assert_true(num(r.json, "bytes_per_s") > num(r.json, "ops_per_s") * 7.99);
	json_object *cs = arr(r.json, "children", 2);
	assert_int_equal(read_pidfile(pf, pids, 4), 2);
	int64_t sum = 0;
	for (size_t i = 0; i < 2; i++) {
		json_object *c = json_object_array_get_idx(cs, i);
		assert_int_equal(inum(c, "pid"), pids[i]);
		assert_true(inum(c, "ops") > 0);
		assert_true(num(c, "ops_per_s") > 0);
		/* The children write all over the parent's area: copy-on-write faults. */
		assert_true(inum(c, "minflt") > 0);
		sum += inum(c, "ops");
	}
	assert_int_equal(sum, inum(r.json, "ops_total"));
	run_free(&r);
}

static void test_cow_none(void **state)
{
	check_cow("none");
}

static void test_cow_thp(void **state)
{
	check_cow("thp");
}

static void test_cow_hugetlb(void **state)
{
	long long free_pages = ig_meminfo_value("/proc/meminfo", "HugePages_Free");
	long long hp_kb = ig_meminfo_value("/proc/meminfo", "Hugepagesize");
	struct run r;

	if (hp_kb > 0 && free_pages >= (8LL << 10) / hp_kb * 3 + 1) {
		check_cow("hugetlb");
		return;
	}
	/* No (or too few) huge pages reserved: a clear failure, exit 3. */
	run_prog(&r, "anon-cow-rand", "--size", "8M", "--procs", "2", "--duration", "0.3", "--backing", "hugetlb",
		 NULL);
	assert_int_equal(r.rc, 3);
	assert_null(r.json);
	assert_non_null(strstr(r.err, "hugetlb"));
	assert_non_null(strstr(r.err, "HugePages_Free"));
	run_free(&r);
}

static void test_groupfair(void **state)
{
	struct run r;
	const char *pf = tmp_path("gf.pid");
	long pids[4];

	run_prog(&r, "groupfair", "--threads", "3", "--burners", "1", "--duration", "0.5", "--work-ms", "2",
		 "--pidfile", pf, NULL);
	expect_ok(&r, "groupfair");
	assert_string_equal(json_object_get_string(get(r.json, "mode")), "NORMAL");
	assert_int_equal(inum(r.json, "threads"), 3);
	assert_true(inum(r.json, "rounds") >= 2);
	assert_true(inum(r.json, "work") > 0);
	json_object *rs = get(r.json, "round_s");
	assert_true(num(rs, "min") > 0 && num(rs, "min") <= num(rs, "avg") && num(rs, "avg") <= num(rs, "max"));
	json_object *tl = arr(r.json, "thread_list", 3);
	for (size_t i = 0; i < 3; i++) {
		json_object *t = json_object_array_get_idx(tl, i);
		assert_true(inum(t, "tid") > 0);
		assert_true(num(t, "cpu_s") > 0);
		assert_true(num(t, "cpu_s") <= num(t, "wall_s") * 1.05 + 0.01);
		assert_true(inum(t, "last_node") >= 0);
	}
	assert_true(inum(r.json, "samples") > 0);
	json_object *pn = arr(r.json, "per_node", (size_t)inum(r.json, "nodes"));
	double total = 0;
	for (size_t i = 0; i < json_object_array_length(pn); i++) {
		json_object *n = json_object_array_get_idx(pn, i);
		assert_true(inum(n, "cpus") >= 0);
		assert_true(num(n, "avg_running") <= num(n, "avg_threads") + 1e-9);
		total += num(n, "avg_threads");
	}
	/* Every sample sees all three threads somewhere. */
	assert_true(total > 2.99 && total < 3.01);
	arr(r.json, "avg_threads_per_node", json_object_array_length(pn));
	json_object *bp = arr(r.json, "burner_pids", 1);
	assert_int_equal(read_pidfile(pf, pids, 4), 2);
	assert_int_equal(pids[0], inum(r.json, "pid"));
	assert_int_equal(pids[1], json_object_get_int64(json_object_array_get_idx(bp, 0)));
	/* The burner is gone. */
	assert_true(kill((pid_t)pids[1], 0) < 0);
	run_free(&r);
}

static void test_groupfair_rounds(void **state)
{
	struct run r;

	run_prog(&r, "groupfair", "--threads", "2", "--rounds", "20", "--work", "10000", NULL);
	expect_ok(&r, "groupfair");
	assert_string_equal(json_object_get_string(get(r.json, "mode")), "none");
	assert_int_equal(inum(r.json, "rounds"), 20);
	assert_int_equal(inum(get(r.json, "round_s"), "n"), 19);
	assert_int_equal(inum(r.json, "work"), 10000);
	run_free(&r);
}

static void test_multi_instance(void **state)
{
	struct run r;
	const char *pf = tmp_path("mi.pid");
	long pids[4];

	run_prog(&r, "multi-instance", "--instances", "2", "--threads", "2", "--size", "2M", "--duration", "0.3",
		 "--pidfile", pf, NULL);
	expect_ok(&r, "multi-instance");
	assert_true(num(r.json, "ops_per_s_total") > 0);
	json_object *il = arr(r.json, "instance_list", 2);
	assert_int_equal(read_pidfile(pf, pids, 4), 2);
	for (size_t i = 0; i < 2; i++) {
		json_object *in = json_object_array_get_idx(il, i);
		assert_int_equal(inum(in, "pid"), pids[i]);
		assert_true(inum(in, "ops") > 0);
		assert_true(num(in, "ops_per_s") > 0);
		check_placement(in, "pages_sampled", "pages_per_node", "pages_not_present", "pages_other");
		assert_int_equal(inum(in, "pages_sampled"), 512);
		assert_true(inum(in, "mem_node") >= 0);
		assert_true(num(in, "mem_node_fraction") > 0.5);
		assert_true(inum(in, "thread_node") >= 0);
		arr(in, "threads_last_node", 2);
		json_object *to = arr(in, "threads_ops", 2);
		assert_int_equal(json_object_get_int64(json_object_array_get_idx(to, 0)) +
					 json_object_get_int64(json_object_array_get_idx(to, 1)),
				 inum(in, "ops"));
		double f = 0;
		json_object_object_foreach(get(in, "thread_node_fraction"), k, v)
		{
			(void)k;
			f += json_object_get_double(v);
		}
		assert_true(f > 0.999 && f < 1.001);
	}
	run_free(&r);
}

/* Phases move the hot window on; each phase has its counters (or null) and placement samples over every page. */
static void test_tiermove(void **state)
{
	struct run r;
	int64_t total = 0;

	run_prog(&r, "tiermove", "--size", "4M", "--hot", "1M", "--phases", "3", "--phase-s", "0.2", "--interval",
		 "0.05", NULL);
	expect_ok(&r, "tiermove");
	assert_int_equal(inum(r.json, "pages"), 1024);
	assert_int_equal(inum(r.json, "pages_sampled"), 1024);
	/* The mode promotion's "mode" judges by, as the host has it (null without NUMA balancing). */
	json_type nbt = json_object_get_type(get(r.json, "numa_balancing"));
	assert_true(nbt == json_type_int || nbt == json_type_null);
	if (nbt == json_type_int)
		assert_true(inum(r.json, "numa_balancing") >= 0 && inum(r.json, "numa_balancing") <= 3);
	json_object_object_foreach(get(r.json, "pages_max_per_node"), k, v)
	{
		(void)k;
		total += json_object_get_int64(v);
	}
	assert_true(total >= 1024);
	json_object *ph = arr(r.json, "phases", 4);
	for (size_t i = 0; i < 4; i++) {
		json_object *p = json_object_array_get_idx(ph, i);
		assert_int_equal(inum(p, "phase"), (int64_t)i);
		/* The window moves on by its own size: 256 pages a phase. */
		assert_int_equal(inum(p, "hot_first_page"), i ? (int64_t)(i - 1) * 256 : 0);
		assert_true(num(p, "touches_per_s") > 0);
		json_object *vm = get(p, "vmstat");
		assert_int_equal(json_object_object_length(vm), 9);
		assert_true(json_object_object_get_ex(vm, "pageoutrun", NULL));
		assert_true(json_object_object_get_ex(vm, "zone_reclaim_failed", NULL));
		json_object *smp = get(p, "samples");
		assert_true(json_object_array_length(smp) >= 1);
		json_object *last = json_object_array_get_idx(smp, json_object_array_length(smp) - 1);
		int64_t hot = 0;
		json_object_object_foreach(get(last, "hot_pages_per_node"), hk, hv)
		{
			(void)hk;
			hot += json_object_get_int64(hv);
		}
		assert_int_equal(hot, 256);
		get(last, "pages_per_tier");
		/* Nothing NUMA-balancing-hinted on the host: pagemap places no page move_pages could not. */
		assert_int_equal(inum(last, "hinting"), 0);
		assert_int_equal(inum(last, "hot_hinting"), 0);
		/* One tier or none on a host: the whole window is on the top tier from the phase's first sample. */
		json_object *t90 = get(p, "to_top_90_s");
		if (i && json_object_get_type(get(r.json, "tiers")) != json_type_null)
			assert_true(json_object_get_double(t90) < 0.04 && num(p, "hot_on_top_end") == 1.0);
		/* A hot phase's first sample is taken as it starts (the window before promotion moved any of it). */
		if (i)
			assert_true(num(json_object_array_get_idx(smp, 0), "t") - num(p, "start_s") < 0.04);
	}
	if (json_object_get_type(get(r.json, "tiers")) != json_type_null) {
		assert_true(num(r.json, "to_top_90_s_mean") < 0.04);
		assert_int_equal(inum(r.json, "to_top_90_reached"), 3);
		assert_int_equal(json_object_object_length(get(r.json, "to_top_90_s_by_phase")), 3);
		assert_true(num(get(r.json, "to_top_90_s_by_phase"), "3") < 0.04);
		assert_true(num(r.json, "hot_on_top_end_mean") == 1.0);
	}
	run_free(&r);
	/* --hot-from: the first window starts there and moves on from it. */
	run_prog(&r, "tiermove", "--size", "4M", "--hot", "1M", "--hot-from", "2M", "--phases", "2", "--phase-s", "0.1",
		 "--interval", "0.05", NULL);
	expect_ok(&r, "tiermove");
	ph = arr(r.json, "phases", 3);
	assert_int_equal(inum(json_object_array_get_idx(ph, 1), "hot_first_page"), 512);
	assert_int_equal(inum(json_object_array_get_idx(ph, 2), "hot_first_page"), 768);
	run_free(&r);
	/* --first-touch-node 0: every page starts on node 0 (the host has one at least). */
	run_prog(&r, "tiermove", "--size", "4M", "--hot", "1M", "--first-touch-node", "0", "--phases", "1", "--phase-s",
		 "0.1", "--interval", "0.05", NULL);
	expect_ok(&r, "tiermove");
	assert_int_equal(inum(get(r.json, "pages_max_per_node"), "0"), 1024);
	ph = arr(r.json, "phases", 2);
	/* The host's node 0 is far above its low watermark: a 4M first touch takes every page. */
	assert_true(json_object_object_get_ex(r.json, "demotion_enabled", NULL));
	run_free(&r);
	run_prog(&r, "tiermove", "--size", "4M", "--hot", "1M", "--stop-at-low", "0", "--phases", "1", "--phase-s",
		 "0.1", "--interval", "0.05", NULL);
	expect_ok(&r, "tiermove");
	assert_int_equal(inum(get(r.json, "stop_at_low"), "node"), 0);
	assert_false(json_object_get_boolean(get(get(r.json, "stop_at_low"), "reached")));
	assert_int_equal(inum(r.json, "pages"), 1024);
	ph = arr(r.json, "phases", 2);
	/* A counter the kernel lacks is listed, and null in every phase. */
	json_object *miss = get(r.json, "counters_missing");
	for (size_t i = 0; i < json_object_array_length(miss); i++) {
		const char *c = json_object_get_string(json_object_array_get_idx(miss, i));
		json_object *vm = get(json_object_array_get_idx(ph, 0), "vmstat"), *cv = NULL;
		assert_true(json_object_object_get_ex(vm, c, &cv));
		assert_null(cv);
	}
	run_free(&r);
}

struct bad_case {
	const char *prog;
	const char *args[4];
	const char *want_opt, *want_val;
};

static void test_bad_options(void **state)
{
	static const struct bad_case cases[] = {
		{"stream", {"--size", "banana"}, "--size", "banana"},
		{"stream", {"--procs", "0"}, "--procs", "'0'"},
		{"stream", {"--duration", "soon"}, "--duration", "soon"},
		{"stream", {"--frobnicate"}, "--frobnicate", NULL},
		{"stream", {"extra-arg"}, "extra-arg", NULL},
		{"memfollow", {"--pattern", "zigzag"}, "--pattern", "zigzag"},
		{"memfollow", {"--move-to-node", "63"}, "--move-to-node", "'63'"},
		/* The range is the model's (VN_MAX_NODES): 64 is a node id, only not one this host has. */
		{"memfollow", {"--move-to-node", "64"}, "--move-to-node", "'64' for --move-to-node: no such node"},
		{"memfollow",
		 {"--move-to-node", "128"},
		 "--move-to-node",
		 "'128' for --move-to-node: must be between 0 and 127"},
		{"memfollow", {"--size", "12Q"}, "--size", "12Q"},
		{"anon-cow-rand", {"--backing", "foo"}, "--backing", "foo"},
		{"anon-cow-rand", {"--procs", "-3"}, "--procs", "-3"},
		{"groupfair", {"--threads", "x"}, "--threads", "'x'"},
		{"groupfair", {"--burner-cgroup", "/nonexistent/cg"}, "--burner-cgroup", "/nonexistent/cg"},
		{"multi-instance", {"--duration", "-1"}, "--duration", "-1"},
		{"multi-instance", {"--threads", "100000"}, "--threads", "100000"},
		{"multi-instance", {"--size"}, "--size", NULL},
		{"tiermove", {"--hot", "512M"}, "--hot", "512M"},
		{"tiermove", {"--phases", "0"}, "--phases", "'0'"},
		{"tiermove", {"--hot-from", "330M"}, "--hot-from", "'330M'"},
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		const struct bad_case *c = &cases[i];
		struct run r;

		run_prog(&r, c->prog, c->args[0], c->args[1], c->args[2], NULL);
		if (r.rc != 2)
			fail_msg("%s %s: rc=%d (want 2), stderr=%s", c->prog, c->args[0], r.rc, r.err);
		assert_null(r.json);
		assert_string_equal(r.out, "");
		/* One line naming the option and the value. */
		char *nl = strchr(r.err, '\n');
		assert_non_null(nl);
		assert_true(nl[1] == '\0');
		if (!strstr(r.err, c->want_opt) || (c->want_val && !strstr(r.err, c->want_val)))
			fail_msg("%s: message '%s' does not name %s %s", c->prog, r.err, c->want_opt,
				 c->want_val ? c->want_val : "");
		run_free(&r);
	}
}

static void test_help(void **state)
{
	static const char *const progs[] = {"stream",    "memfollow",      "anon-cow-rand",
					    "groupfair", "multi-instance", "tiermove"};

	for (size_t i = 0; i < sizeof(progs) / sizeof(progs[0]); i++) {
		struct run r;

		run_prog(&r, progs[i], "--help", NULL);
		assert_int_equal(r.rc, 0);
		assert_non_null(strstr(r.out, "usage: vnuma-wl-"));
		run_free(&r);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_stream),
		cmocka_unit_test(test_stream_threads_iterations),
		cmocka_unit_test(test_memfollow),
		cmocka_unit_test(test_memfollow_sampled),
		cmocka_unit_test(test_cow_none),
		cmocka_unit_test(test_cow_thp),
		cmocka_unit_test(test_cow_hugetlb),
		cmocka_unit_test(test_groupfair),
		cmocka_unit_test(test_groupfair_rounds),
		cmocka_unit_test(test_multi_instance),
		cmocka_unit_test(test_tiermove),
		cmocka_unit_test(test_bad_options),
		cmocka_unit_test(test_help),
	};

	signal(SIGPIPE, SIG_IGN);
	return cmocka_run_group_tests(tests, NULL, NULL);
}
