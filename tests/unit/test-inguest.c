/*
 * The in-guest support library (src/inguest): JSON writer, option table and
 * values, cpulists, the node directory, page placement counts, files. What
 * the programs do with it is tested by running them (test-workloads.c,
 * test-samples.c).
 */
#include "inguest/buf.h"
#include "inguest/cpustat.h"
#include "inguest/json.h"
#include "inguest/mem.h"
#include "inguest/opt.h"
#include "inguest/placement.h"
#include "inguest/prog.h"
#include "inguest/stats.h"
#include "inguest/team.h"
#include "inguest/time.h"
#include "inguest/topo.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <json-c/json.h>

#include <cmocka.h>

static json_object *get(json_object *o, const char *key)
{
	json_object *v = NULL;

	if (!json_object_object_get_ex(o, key, &v))
		fail_msg("missing key '%s' in %s", key, json_object_to_json_string(o));
	return v;
}

static json_object *parse(const struct ig_json *j)
{
	json_object *o = json_tokener_parse(j->b.s);

	if (!o)
		fail_msg("not JSON: %s", j->b.s);
	return o;
}

/* ---- JSON ---- */

static void test_json_escape(void **state)
{
	struct ig_json j;
	json_object *o;

	ig_json_init(&j);
	ig_json_obj_begin(&j, NULL);
	ig_json_str(&j, "s", "q\"b\\n\nt\t\x01\x7f caf\xc3\xa9 \xff end");
	ig_json_str(&j, "k\"ey", "v");
	ig_json_double(&j, "nan", 0.0 / 0.0);
	ig_json_double(&j, "big", 1e300);
	ig_json_int(&j, "neg", -5);
	ig_json_null(&j, "nothing");
	ig_json_str(&j, "nullstr", NULL);
	ig_json_arr_begin(&j, "a");
	ig_json_bool(&j, NULL, true);
	ig_json_obj_begin(&j, NULL);
	ig_json_obj_end(&j);
	ig_json_arr_end(&j);
	ig_json_obj_end(&j);

	o = parse(&j);
	assert_string_equal(json_object_get_string(get(o, "s")), "q\"b\\n\nt\t\x01\x7f caf\xc3\xa9 \xef\xbf\xbd end");
	assert_string_equal(json_object_get_string(get(o, "k\"ey")), "v");
	assert_true(json_object_is_type(get(o, "nan"), json_type_null));
	assert_true(json_object_get_double(get(o, "big")) > 1e299);
	assert_int_equal(json_object_get_int64(get(o, "neg")), -5);
	assert_true(json_object_is_type(get(o, "nullstr"), json_type_null));
	assert_int_equal(json_object_array_length(get(o, "a")), 2);
	json_object_put(o);
	ig_json_free(&j);
}

/* A task's comm: counted bytes, a UTF-8 sequence cut by the count, surrogates, overlongs. */
static void test_json_str_n(void **state)
{
	struct ig_json j;
	json_object *o;
	/* "é" then the first byte of another "é", which the count cuts off. */
	static const char comm[] = "wl\xc3\xa9\xc3\xa9";

	ig_json_init(&j);
	ig_json_obj_begin(&j, NULL);
	ig_json_str_n(&j, "cut", comm, 5);
	ig_json_str_n(&j, "nul", "a\0b", 3);
	ig_json_str_n(&j, "surrogate", "\xed\xa0\x80", 3);
	ig_json_str_n(&j, "overlong", "\xc0\xaf\xe0\x80\xaf", 5);
	ig_json_str_n(&j, "four", "\xf0\x9f\x98\x80", 4);
	ig_json_str_n(&j, "state", "R", 1);
	ig_json_obj_end(&j);

	/* The bytes themselves: a cut sequence is one replacement, not a read past n. */
	assert_non_null(strstr(j.b.s, "\"cut\":\"wl\xc3\xa9\\ufffd\""));
	assert_non_null(strstr(j.b.s, "\"nul\":\"a\\u0000b\""));
	o = parse(&j);
	assert_string_equal(json_object_get_string(get(o, "surrogate")), "\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd");
	assert_string_equal(json_object_get_string(get(o, "overlong")),
			    "\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd");
	assert_string_equal(json_object_get_string(get(o, "four")), "\xf0\x9f\x98\x80");
	assert_string_equal(json_object_get_string(get(o, "state")), "R");
	json_object_put(o);
	ig_json_free(&j);
}

static void test_json_fixed_mark_reset(void **state)
{
	struct ig_json j;
	struct ig_json_mark m;

	ig_json_init(&j);
	ig_json_obj_begin(&j, NULL);
	ig_json_fixed(&j, "t", 1.5, 6);
	ig_json_fixed(&j, "u", 12345.67, 2);
	ig_json_fixed(&j, "inf", 1.0 / 0.0, 3);
	ig_json_arr_begin(&j, "procs");
	/* A first element taken back: the next one is then the first, no comma. */
	m = ig_json_mark(&j);
	ig_json_obj_begin(&j, NULL);
	ig_json_int(&j, "pid", 1);
	ig_json_arr_begin(&j, "threads");
	ig_json_rewind(&j, m);
	ig_json_obj_begin(&j, NULL);
	ig_json_int(&j, "pid", 2);
	ig_json_obj_end(&j);
	/* A second element taken back: the array goes on after the first. */
	m = ig_json_mark(&j);
	ig_json_obj_begin(&j, NULL);
	ig_json_int(&j, "pid", 3);
	ig_json_rewind(&j, m);
	ig_json_int(&j, NULL, 4);
	ig_json_arr_end(&j);
	ig_json_obj_end(&j);
	assert_string_equal(j.b.s, "{\"t\":1.500000,\"u\":12345.67,\"inf\":null,\"procs\":[{\"pid\":2},4]}");

	/* reset: a new document in the same memory. */
	ig_json_reset(&j);
	ig_json_obj_begin(&j, NULL);
	ig_json_uint(&j, "seq", 18446744073709551615ULL);
	ig_json_obj_end(&j);
	assert_string_equal(j.b.s, "{\"seq\":18446744073709551615}");
	ig_json_free(&j);
}

/* ig_json_print: the line plus '\n' on stdout, the text itself unchanged; a closed reader is -EPIPE. */
static void test_json_print(void **state)
{
	struct ig_json j;
	int p[2], saved = dup(1);
	char got[64] = {0};

	ig_json_init(&j);
	ig_json_obj_begin(&j, NULL);
	ig_json_int(&j, "a", 1);
	ig_json_obj_end(&j);
	assert_int_equal(pipe(p), 0);
	dup2(p[1], 1);
	assert_int_equal(ig_json_print(&j), 0);
	close(p[0]);
	void (*old)(int) = signal(SIGPIPE, SIG_IGN);
	int r = ig_json_print(&j);
	signal(SIGPIPE, old);
	dup2(saved, 1);
	close(saved);
	close(p[1]);
	assert_int_equal(r, -EPIPE);
	assert_string_equal(j.b.s, "{\"a\":1}");
	ig_json_free(&j);

	/* What the first print wrote, read back through a fresh pipe. */
	assert_int_equal(pipe(p), 0);
	saved = dup(1);
	dup2(p[1], 1);
	ig_json_init(&j);
	ig_json_arr_begin(&j, NULL);
	ig_json_arr_end(&j);
	assert_int_equal(ig_json_print(&j), 0);
	dup2(saved, 1);
	close(saved);
	close(p[1]);
	assert_int_equal(read(p[0], got, sizeof(got) - 1), 3);
	assert_string_equal(got, "[]\n");
	close(p[0]);
	ig_json_free(&j);
}

static void test_stats(void **state)
{
	double v[] = {5, 1, 4, 2, 3};
	struct ig_stats s;
	struct ig_json j;
	json_object *o;

	ig_stats_compute(v, 5, &s);
	assert_true(s.min == 1 && s.max == 5 && s.avg == 3 && s.p50 == 3 && s.n == 5);
	ig_json_init(&j);
	ig_json_stats(&j, NULL, &s);
	o = parse(&j);
	assert_int_equal(json_object_get_int64(get(o, "n")), 5);
	assert_true(json_object_get_double(get(o, "stddev")) > 1.58 && json_object_get_double(get(o, "stddev")) < 1.59);
	json_object_put(o);
	ig_json_free(&j);
	ig_stats_compute(v, 0, &s);
	assert_int_equal(s.n, 0);
	assert_true(s.avg != s.avg); /* NaN: nothing measured */
}

/* ---- option values and the option table ---- */

static void test_opt_values(void **state)
{
	ig_prog = "test";
	assert_int_equal(ig_opt_size("size", "200M"), 200ULL << 20);
	assert_int_equal(ig_opt_size("size", "64"), 64ULL << 20);
	assert_int_equal(ig_opt_size("size", "1.5G"), 3ULL << 29);
	assert_int_equal(ig_opt_size("size", "512K"), 512ULL << 10);
	assert_int_equal(ig_opt_size("size", "2MiB"), 2ULL << 20);
	assert_int_equal(ig_opt_size("size", "4096B"), 4096);
	assert_true(ig_opt_seconds("d", "250ms", 0) > 0.2499 && ig_opt_seconds("d", "250ms", 0) < 0.2501);
	assert_true(ig_opt_seconds("d", "2", 0) == 2.0);
	assert_true(ig_opt_seconds("d", "0", 0) == 0.0);
	assert_true(ig_opt_seconds("d", "2m", 0) == 120.0);
	assert_int_equal(ig_opt_uint("n", "17", 1, 20), 17);
}

struct parsed {
	uint64_t size, count;
	int n, choice;
	double secs;
	const char *str, *size_given;
	int calls;
	char seen[64];
};

static void on_call(const struct ig_opt *opt, const char *val)
{
	struct parsed *p = opt->dst;

	p->calls++;
	strncat(p->seen, val, sizeof(p->seen) - strlen(p->seen) - 2);
	strcat(p->seen, ",");
}

static struct parsed P;

static const struct ig_opt_choice choices[] = {{"seq", 0}, {"random", 1}, {"rand", 1}, {NULL}};

static const struct ig_opt table[] = {
	{"size", IG_OPT_SIZE, .dst = &P.size, .given = &P.size_given},
	{"count", IG_OPT_U64, .dst = &P.count, .min = 0, .max = 1000},
	{"n", IG_OPT_INT, .dst = &P.n, .min = 1, .max = 8, .short_name = 'n'},
	{"secs", IG_OPT_SECONDS, .dst = &P.secs, .min_s = 0.5},
	{"str", IG_OPT_STRING, .dst = &P.str, .arg = "TEXT", .help = "any text"},
	{"pattern", IG_OPT_CHOICE, .dst = &P.choice, .choices = choices, .why = "expected seq or random"},
	{"match", IG_OPT_CALL, .dst = &P, .call = on_call, .short_name = 'm'},
	{0}};

/* fork(), the child's stdout and stderr both into pe[1] and its messages named "test"; 0 in the child. */
static pid_t fork_captured(int pe[2])
{
	assert_int_equal(pipe(pe), 0);
	pid_t pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		dup2(pe[1], 2);
		dup2(pe[1], 1);
		ig_prog = "test";
	}
	return pid;
}

/* Parses args in a child; returns its exit status (0 when parsing returned) and its stdout + stderr in err. */
static int parse_child(char *err, size_t errsz, ...)
{
	char *argv[16] = {"test"};
	int argc = 1, pe[2], st;
	va_list ap;

	va_start(ap, errsz);
	while (argc < 15 && (argv[argc] = va_arg(ap, char *)) != NULL)
		argc++;
	va_end(ap);
	pid_t pid = fork_captured(pe);
	if (pid == 0) {
		optind = 0;
		ig_opts_parse(argc, argv, table, "a note\n");
		_exit(0);
	}
	close(pe[1]);
	ssize_t n = read(pe[0], err, errsz - 1);
	err[n > 0 ? n : 0] = '\0';
	close(pe[0]);
	assert_int_equal(waitpid(pid, &st, 0), pid);
	assert_true(WIFEXITED(st));
	return WEXITSTATUS(st);
}

static void test_opts_parse(void **state)
{
	char *argv[] = {"test", "--size",    "2M",   "--count", "7", "-n", "3", "--secs", "750ms", "--str",
			"x",    "--pattern", "rand", "--match", "a", "-m", "b", "--n=4",  NULL};
	char err[512];

	memset(&P, 0, sizeof(P));
	P.choice = -1;
	optind = 0;
	ig_opts_parse(18, argv, table, NULL);
	assert_int_equal(P.size, 2ULL << 20);
	assert_string_equal(P.size_given, "2M");
	assert_int_equal(P.count, 7);
	assert_int_equal(P.n, 4); /* the last one given wins */
	assert_true(P.secs == 0.75);
	assert_string_equal(P.str, "x");
	assert_int_equal(P.choice, 1);
	assert_int_equal(P.calls, 2);
	assert_string_equal(P.seen, "a,b,");

	/* --help is made from the table: the value named by the type, the choices or .arg. */
	assert_int_equal(parse_child(err, sizeof(err), "--help", NULL), 0);
	assert_string_equal(err, "usage: test [options]\n"
				 "  --size SIZE\n"
				 "  --count N\n"
				 "  -n, --n N\n"
				 "  --secs S\n"
				 "  --str TEXT             any text\n"
				 "  --pattern seq|random|rand\n"
				 "  -m, --match N\n"
				 "a note\n");

	/* Each failure: exit 2, one line naming the option (and the value). */
	static const struct {
		const char *args[3];
		const char *want;
	} bad[] = {
		{{"--size", "banana"}, "invalid value 'banana' for --size"},
		{{"--count", "1001"}, "invalid value '1001' for --count: must be between 0 and 1000"},
		{{"-n", "9"}, "invalid value '9' for --n"},
		{{"--secs", "0.1"}, "invalid value '0.1' for --secs: must be at least 0.5 seconds"},
		{{"--pattern", "zigzag"}, "invalid value 'zigzag' for --pattern: expected seq or random"},
		{{"--frobnicate"}, "unknown or incomplete option '--frobnicate'"},
		{{"-x"}, "unknown or incomplete option '-x'"},
		{{"--count"}, "unknown or incomplete option '--count'"},
		{{"-m"}, "unknown or incomplete option '-m'"},
		{{"--str", "s", "extra"}, "unknown or incomplete option 'extra'"},
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		int rc = parse_child(err, sizeof(err), bad[i].args[0], bad[i].args[1], bad[i].args[2], NULL);
		if (rc != 2 || !strstr(err, bad[i].want) || strchr(err, '\n') != err + strlen(err) - 1)
			fail_msg("%s: rc %d, stderr '%s', want 2 and '%s'", bad[i].args[0], rc, err, bad[i].want);
	}
	assert_int_equal(parse_child(err, sizeof(err), "--help", NULL), 0);
	assert_int_equal(parse_child(err, sizeof(err), "-h", NULL), 0);
	assert_int_equal(parse_child(err, sizeof(err), NULL), 0);
	assert_string_equal(err, "");
}

/* ---- cpulists, nodes, placement ---- */

static int collect(long lo, long hi, void *arg)
{
	char *s = arg;

	sprintf(s + strlen(s), "[%ld,%ld]", lo, hi);
	return hi == 99 ? -ENOSPC : 0;
}

static void test_cpulist(void **state)
{
	cpu_set_t set;
	char seen[128] = "";

	assert_int_equal(ig_parse_cpulist("0-3,8,10-11\n", &set), 0);
	assert_int_equal(CPU_COUNT(&set), 7);
	assert_true(CPU_ISSET(8, &set) && CPU_ISSET(11, &set) && !CPU_ISSET(9, &set));
	assert_int_equal(ig_parse_cpulist("", &set), 0);
	assert_int_equal(CPU_COUNT(&set), 0);
	assert_int_equal(ig_parse_cpulist("3-1", &set), -EINVAL);
	assert_int_equal(ig_parse_cpulist("a", &set), -EINVAL);
	assert_int_equal(ig_parse_cpulist("0-", &set), -EINVAL);
	assert_int_equal(ig_parse_cpulist("1,2;", &set), -EINVAL);
	assert_int_equal(ig_parse_cpulist("1024", &set), -EINVAL); /* beyond CPU_SETSIZE */

	assert_int_equal(ig_cpulist_ranges("0-1,5,7-9\n", collect, seen), 0);
	assert_string_equal(seen, "[0,1][5,5][7,9]");
	seen[0] = '\0';
	assert_int_equal(ig_cpulist_ranges("1,99,200", collect, seen), -ENOSPC);
	assert_string_equal(seen, "[1,1][99,99]");
}

static void put(const char *dir, const char *name, const char *text)
{
	char path[512];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	f = fopen(path, "w");
	assert_non_null(f);
	fputs(text, f);
	fclose(f);
}

/* A node directory like sysfs's: online = 0-LAST, node N has CPU N (node 1: none). */
static char *fake_node_dir(int last)
{
	static char dir[] = "/tmp/vn-inguest-nodes-XXXXXX";
	char name[64], cpus[16], online[16];

	strcpy(dir + strlen(dir) - 6, "XXXXXX");
	assert_non_null(mkdtemp(dir));
	snprintf(online, sizeof(online), "0-%d\n", last);
	put(dir, "online", online);
	for (int n = 0; n <= last; n++) {
		snprintf(name, sizeof(name), "%s/node%d", dir, n);
		assert_int_equal(mkdir(name, 0755), 0);
		snprintf(name, sizeof(name), "node%d/cpulist", n);
		snprintf(cpus, sizeof(cpus), "%d\n", n);
		put(dir, name, n == 1 ? "\n" : cpus);
	}
	return dir;
}

static void rm_node_dir(const char *dir, int last)
{
	char path[512];

	for (int n = 0; n <= last; n++) {
		snprintf(path, sizeof(path), "%s/node%d/cpulist", dir, n);
		unlink(path);
		snprintf(path, sizeof(path), "%s/node%d", dir, n);
		rmdir(path);
	}
	snprintf(path, sizeof(path), "%s/online", dir);
	unlink(path);
	rmdir(dir);
}

/*
 * A valid 65-node topology: node 64 is a node like the others, not "other".
 * (The workloads once stopped at 64 nodes while the model allows 128.)
 */
static void test_node_64_counted(void **state)
{
	static struct ig_topo t;
	char *dir = fake_node_dir(64);

	ig_topo_load_at(&t, dir);
	assert_true(t.numa);
	assert_int_equal(t.nr_nodes, 65);
	assert_true(t.online[64]);
	assert_int_equal(t.node_cpus[64], 1);
	assert_int_equal(t.node_cpus[1], 0);
	assert_int_equal(ig_topo_node_of_cpu(&t, 64), 64);
	assert_int_equal(ig_topo_node_of_cpu(&t, 1), -1);
	assert_int_equal(t.nr_cpus, 65);
	rm_node_dir(dir, 64);

	/* move_pages status values: nodes 0, 63, 64 (twice), 127; beyond the model; not present; an error. */
	static struct ig_placement p;
	const int status[] = {0, 63, 64, 64, 127, VN_MAX_NODES, -ENOENT, -EFAULT};
	memset(&p, 0, sizeof(p));
	ig_placement_count(&p, status, sizeof(status) / sizeof(status[0]));
	assert_int_equal(p.per_node[0], 1);
	assert_int_equal(p.per_node[63], 1);
	assert_int_equal(p.per_node[64], 2);
	assert_int_equal(p.per_node[127], 1);
	assert_int_equal(p.not_present, 1);
	assert_int_equal(p.other, 2);
	assert_int_equal(ig_placement_main_node(&p), 64);

	/* And the result line names node 64 with its count. */
	struct ig_json j;
	ig_json_init(&j);
	ig_json_node_counts(&j, NULL, &t, p.per_node);
	json_object *o = parse(&j);
	/* The 65 online nodes, and node 127, which is offline but holds a page. */
	assert_int_equal(json_object_object_length(o), 66);
	assert_int_equal(json_object_get_int64(get(o, "64")), 2);
	assert_int_equal(json_object_get_int64(get(o, "127")), 1);
	json_object_put(o);

	/* The same nodes as shares of the 5 counted on nodes; all zero, zero shares, not a division by 0. */
	ig_json_reset(&j);
	ig_json_node_shares(&j, NULL, &t, p.per_node);
	o = parse(&j);
	assert_int_equal(json_object_object_length(o), 66);
	assert_true(json_object_get_double(get(o, "64")) == 2.0 / 5);
	assert_true(json_object_get_double(get(o, "127")) == 1.0 / 5);
	assert_true(json_object_get_double(get(o, "1")) == 0);
	json_object_put(o);
	static const uint64_t none[VN_MAX_NODES];
	assert_int_equal(ig_node_busiest(none), -1);
	ig_json_reset(&j);
	ig_json_node_shares(&j, NULL, &t, none);
	o = parse(&j);
	assert_int_equal(json_object_object_length(o), 65);
	assert_true(json_object_get_double(get(o, "0")) == 0);
	json_object_put(o);
	ig_json_free(&j);
}

/* A worker's areas summed into one placement, the share on a node, locality over workers; sizes, rates, times. */
static void test_placement_sums(void **state)
{
	static struct ig_placement a, b;
	struct ig_locality loc = {0};

	a.sampled = 4, a.per_node[0] = 3, a.not_present = 1;
	b.sampled = 4, b.per_node[1] = 2, b.other = 2, b.err = -EPERM;
	ig_placement_add(&a, &b);
	assert_int_equal(a.sampled, 8);
	assert_int_equal(a.per_node[0], 3);
	assert_int_equal(a.per_node[1], 2);
	assert_int_equal(a.not_present, 1);
	assert_int_equal(a.other, 2);
	assert_int_equal(a.err, -EPERM);
	b.err = -EFAULT;
	ig_placement_add(&a, &b); /* the first error is kept */
	assert_int_equal(a.err, -EPERM);
	assert_true(ig_placement_fraction(&a, 0) == 3.0 / 12);
	assert_true(ig_placement_fraction(&a, -1) == 0);
	assert_true(ig_placement_fraction(&a, VN_MAX_NODES) == 0);
	memset(&b, 0, sizeof(b));
	assert_true(ig_placement_fraction(&b, 0) == 0); /* nothing sampled */

	assert_true(ig_locality_fraction(&loc) == 0);
	ig_locality_add(&loc, &a, 1);  /* 4 of 12 local */
	ig_locality_add(&loc, &a, -1); /* a worker on no node: sampled, none local */
	assert_int_equal(loc.local, 4);
	assert_int_equal(loc.sampled, 24);
	assert_true(ig_locality_fraction(&loc) == 4.0 / 24);

	/* Sizes rounded up to whole pages, base or huge. */
	assert_int_equal(ig_round_up(1, IG_PAGE_SIZE), 4096);
	assert_int_equal(ig_round_up(8192, IG_PAGE_SIZE), 8192);
	assert_int_equal(ig_round_up(0, IG_PAGE_SIZE), 0);
	assert_int_equal(ig_round_up(3ULL << 20, 2UL << 20), 4UL << 20);

	assert_true(ig_rate(10, 4) == 2.5);
	assert_true(ig_rate(10, 0) == 0);

	/* A time that never came is null. */
	struct ig_json j;
	ig_json_init(&j);
	ig_json_obj_begin(&j, NULL);
	ig_json_time(&j, "never", -1);
	ig_json_time(&j, "at", 0);
	ig_json_obj_end(&j);
	assert_string_equal(j.b.s, "{\"never\":null,\"at\":0}");
	ig_json_free(&j);
}

/* The model's last node (127) is read; a kernel listing more is cut at the model's limit. */
static void test_node_limit_edge(void **state)
{
	static struct ig_topo t;
	char *dir = fake_node_dir(VN_MAX_NODES);

	ig_topo_load_at(&t, dir);
	assert_int_equal(t.nr_nodes, VN_MAX_NODES);
	assert_true(t.online[VN_MAX_NODES - 1]);
	assert_int_equal(ig_topo_node_of_cpu(&t, VN_MAX_NODES - 1), VN_MAX_NODES - 1);
	assert_int_equal(ig_topo_node_of_cpu(&t, VN_MAX_NODES), -1);
	rm_node_dir(dir, VN_MAX_NODES);

	/* No node directory: one node with every CPU. */
	ig_topo_load_at(&t, "/nonexistent/node");
	assert_false(t.numa);
	assert_int_equal(t.nr_nodes, 1);
	assert_int_equal(ig_topo_node_of_cpu(&t, 0), 0);
}

static void test_topo_this_host(void **state)
{
	static struct ig_topo t;
	int cpu, node;

	ig_topo_load(&t);
	assert_true(t.nr_nodes >= 1);
	assert_true(t.nr_cpus >= 1);
	ig_getcpu(&cpu, &node);
	assert_int_equal(ig_topo_node_of_cpu(&t, cpu), node);
}

/* ---- the out-of-memory policy ---- */

/* In a child: stdout holds unflushed text, then fn runs; returns the exit status, all output in out. */
static int oom_child(void (*fn)(void), bool worker, char *out, size_t outsz)
{
	int pe[2], st;

	pid_t pid = fork_captured(pe);
	if (pid == 0) {
		setvbuf(stdout, NULL, _IOFBF, 4096);
		printf("parent's-buffer\n"); /* unflushed, as a parent's output is when it forks without a flush */
		if (worker) {
			/* What a forked worker has: the buffer copied, ig_child_setup run. */
			ig_in_child = true;
			if (fork() == 0) {
				fn();
				_exit(0);
			}
			int wst;
			wait(&wst);
			fflush(stdout);
			_exit(WIFEXITED(wst) ? WEXITSTATUS(wst) : 99);
		}
		fn();
		_exit(0);
	}
	close(pe[1]);
	size_t n = 0;
	ssize_t r;
	while (n < outsz - 1 && (r = read(pe[0], out + n, outsz - 1 - n)) > 0)
		n += (size_t)r;
	out[n] = '\0';
	close(pe[0]);
	assert_int_equal(waitpid(pid, &st, 0), pid);
	assert_true(WIFEXITED(st));
	return WEXITSTATUS(st);
}

static void overflowing_realloc(void)
{
	ig_xrealloc(NULL, SIZE_MAX / 2, 4, "sample table");
}

/* Overflowing sizes, not merely huge ones: ASan's allocator aborts on those instead of returning NULL. */
static void huge_calloc(void)
{
	ig_xcalloc(SIZE_MAX / 2, 4, "thread table");
}

static void test_oom_policy(void **state)
{
	char out[512];

	/* One policy everywhere: exit 3 (IG_EXIT_ENV), one line naming what could not be had. */
	assert_int_equal(oom_child(overflowing_realloc, false, out, sizeof(out)), IG_EXIT_ENV);
	assert_non_null(strstr(out, "test: sample table: Cannot allocate memory\n"));
	assert_int_equal(oom_child(huge_calloc, false, out, sizeof(out)), IG_EXIT_ENV);
	assert_non_null(strstr(out, "test: thread table: Cannot allocate memory\n"));
	/* A worker leaves with _exit: the buffer it inherited is written once, by its parent, not twice. */
	assert_int_equal(oom_child(huge_calloc, true, out, sizeof(out)), IG_EXIT_ENV);
	char *first = strstr(out, "parent's-buffer");
	assert_non_null(first);
	assert_null(strstr(first + 1, "parent's-buffer"));
	/* Sizes that fit are allocated, zeroed, and grown. */
	int *p = ig_xcalloc(4, sizeof(int), "x");
	assert_int_equal(p[3], 0);
	p = ig_xrealloc(p, 1024, sizeof(int), "x");
	p[1023] = 1;
	free(p);
	ig_in_child = false;
}

/* ---- forked workers ---- */

struct team_slot {
	struct ig_worker w;
	int slot;
};

static void team_worker(struct ig_team *t, int i, const void *ctx, void *result)
{
	struct team_slot *r = result;

	r->slot = *(const int *)ctx + i; /* prepared */
	ig_team_ready(t);
	r->slot += 1000; /* started */
	r->w.ops = 10 * (uint64_t)(i + 1);
	r->w.elapsed = 2;
	_exit(i == 2 ? 1 : 0);
}

static void test_team_run(void **state)
{
	struct team_slot *slots = ig_map_shared(4 * sizeof(*slots));
	char pidfile[] = "/tmp/vn-inguest-pids-XXXXXX";
	struct ig_buf b = {0};
	int failed = -1, fd = mkstemp(pidfile);

	assert_true(fd >= 0);
	close(fd);
	ig_prog = "test";
	const int base = 100;
	double s = ig_team_run(4, pidfile, team_worker, &base, slots, sizeof(*slots), &failed);
	assert_true(s >= 0 && s < 30);
	assert_int_equal(failed, 1); /* worker 2 exited 1 */
	for (int i = 0; i < 4; i++)
		assert_int_equal(slots[i].slot, 1100 + i);
	/* The pidfile names the four workers, one per line, as their heads do. */
	assert_int_equal(ig_read_file(pidfile, &b), 0);
	char *p = b.s;
	for (int i = 0; i < 4; i++) {
		char *end;
		assert_int_equal(strtol(p, &end, 10), slots[i].w.pid);
		assert_true(slots[i].w.pid > 0 && *end == '\n');
		p = end + 1;
	}
	assert_string_equal(p, "");

	/* Ops summed, and each worker's rate (10/2, 20/2, ...) summed. */
	struct ig_team_totals tot = ig_team_totals(slots, 4, sizeof(*slots));
	assert_int_equal(tot.ops, 100);
	assert_true(tot.ops_per_s == 50);
	struct ig_json j;
	ig_json_init(&j);
	ig_json_obj_begin(&j, NULL);
	slots[0].w.pid = 42;
	ig_json_worker(&j, &slots[0].w);
	ig_json_obj_end(&j);
	assert_string_equal(j.b.s, "{\"pid\":42,\"ops\":10,\"elapsed_s\":2,\"ops_per_s\":5}");
	ig_json_free(&j);

	unlink(pidfile);
	ig_buf_free(&b);
	ig_unmap_anon(slots, 4 * sizeof(*slots));
}

/* ---- files ---- */

static void test_files(void **state)
{
	char dir[] = "/tmp/vn-inguest-files-XXXXXX", path[128];
	struct ig_buf b = {0};
	char big[10000];
	pid_t pids[] = {12, 345};

	assert_non_null(mkdtemp(dir));
	memset(big, 'x', sizeof(big) - 1);
	big[sizeof(big) - 1] = '\0';
	put(dir, "big", big);
	snprintf(path, sizeof(path), "%s/big", dir);
	assert_int_equal(ig_read_file(path, &b), 0);
	assert_int_equal(b.len, sizeof(big) - 1);
	assert_int_equal(strlen(b.s), sizeof(big) - 1);
	assert_int_equal(ig_write_file(path, "Key:   42 kB\nOther: 7\n"), 0);
	assert_int_equal(ig_meminfo_value(path, "Key"), 42);
	assert_int_equal(ig_meminfo_value(path, "Other"), 7);
	assert_int_equal(ig_meminfo_value(path, "Ke"), -1);
	unlink(path);
	assert_int_equal(ig_read_file(path, &b), -ENOENT);
	assert_string_equal(b.s, "");

	snprintf(path, sizeof(path), "%s/pids", dir);
	assert_int_equal(ig_write_pidfile(path, pids, 2), 0);
	assert_int_equal(ig_read_file(path, &b), 0);
	assert_string_equal(b.s, "12\n345\n");
	unlink(path);
	rmdir(dir);

	ig_buf_clear(&b);
	ig_buf_printf(&b, "%s-%d", "a", 1);
	ig_buf_printf(&b, "%0300d", 5); /* longer than the room reserved first */
	assert_int_equal(b.len, 3 + 300);
	assert_int_equal(strlen(b.s), b.len);
	ig_buf_free(&b);
}

/* /proc/stat's cpuN lines: busy over total per CPU, summed; guest time not counted twice. */
static void test_cpustat(void **state)
{
	static struct ig_cpustat a, b;
	(void)state;

	assert_int_equal(ig_cpustat_parse("cpu  9 9 9 9 9 9 9 9 0 0\n"
					  "cpu0 100 0 50 850 0 0 0 0 0 0\n"
					  "cpu2 10 0 0 990 0 0 0 0 5 0\n"
					  "intr 1 2 3\nctxt 77\n",
					  &a),
			 0);
	assert_int_equal(a.nr_cpus, 3);
	assert_true(a.present[0] && !a.present[1] && a.present[2]);
	assert_int_equal(a.busy[0], 150);
	assert_int_equal(a.total[0], 1000);
	assert_int_equal(a.busy[2], 10);
	/* cpu0 busy for all of its next 1000 ticks, cpu2 for half of its 200 (its tick stopped while idle), cpu3 new. */
	assert_int_equal(ig_cpustat_parse("cpu0 1000 0 150 850 0 0 0 0 0 0\n"
					  "cpu2 20 0 0 1090 0 30 30 30 0 0\n"
					  "cpu3 5 0 0 5\n",
					  &b),
			 0);
	assert_int_equal(b.total[2], 1200);
	assert_true(fabs(ig_cpustat_busy_cpus(&a, &b) - 1.5) < 1e-12);
	assert_true(ig_cpustat_busy_cpus(&a, &a) == -1);

	/* Malformed lines and CPUs past the table are refused. */
	assert_int_equal(ig_cpustat_parse("cpu0 1 2 3\n", &b), -EINVAL);
	assert_int_equal(ig_cpustat_parse("cpu0 1 2 3 x\n", &b), -EINVAL);
	assert_int_equal(ig_cpustat_parse("cpu0 1 2 3 4x\n", &b), -EINVAL);
	assert_int_equal(ig_cpustat_parse("cpux 1 2 3 4\n", &b), -EINVAL);
	assert_int_equal(ig_cpustat_parse("cpu4096 1 2 3 4\n", &b), -EINVAL);
	assert_int_equal(ig_cpustat_parse("cpu99999999999999999999 1 2 3 4\n", &b), -EINVAL);
	/* This machine's own. */
	assert_int_equal(ig_cpustat_read(&a), 0);
	assert_true(a.nr_cpus >= 1 && a.present[0] && a.total[0] > 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_json_escape),     cmocka_unit_test(test_oom_policy),
		cmocka_unit_test(test_json_str_n),      cmocka_unit_test(test_json_fixed_mark_reset),
		cmocka_unit_test(test_json_print),      cmocka_unit_test(test_stats),
		cmocka_unit_test(test_opt_values),      cmocka_unit_test(test_opts_parse),
		cmocka_unit_test(test_cpulist),         cmocka_unit_test(test_node_64_counted),
		cmocka_unit_test(test_node_limit_edge), cmocka_unit_test(test_placement_sums),
		cmocka_unit_test(test_topo_this_host),  cmocka_unit_test(test_team_run),
		cmocka_unit_test(test_files),           cmocka_unit_test(test_cpustat),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
