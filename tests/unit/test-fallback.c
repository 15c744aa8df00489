#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "topology/fallback.h"
#include "util/cleanup.h"
#include "util/file.h"
#include "util/strbuf.h"

/* A topology with one CPU per node (or none, or no memory) and a given matrix. */
static struct vn_topology *make(unsigned n, const unsigned *matrix, const char *kinds)
{
	struct vn_strbuf b = VN_STRBUF_INIT;
	struct vn_topology *t = NULL;
	struct vn_error err = {0};
	unsigned cpu = 0;

	vn_strbuf_printf(&b, "<topology name='t'>\n");
	for (unsigned i = 0; i < n; i++) {
		char k = kinds ? kinds[i] : 'n';
		if (k == 'c') /* CPU-less */
			vn_strbuf_printf(&b, "<node id='%u' cpus='' memory='64M'/>\n", i);
		else if (k == 'm') /* memory-less */
			vn_strbuf_printf(&b, "<node id='%u' cpus='%u' memory='0'/>\n", i, cpu++);
		else
			vn_strbuf_printf(&b, "<node id='%u' cpus='%u' memory='64M'/>\n", i, cpu++);
	}
	vn_strbuf_printf(&b, "<distances>\n");
	for (unsigned i = 0; i < n; i++) {
		vn_strbuf_printf(&b, "<row node='%u'>", i);
		for (unsigned j = 0; j < n; j++)
			vn_strbuf_printf(&b, "%u ", matrix[i * n + j]);
		vn_strbuf_printf(&b, "</row>\n");
	}
	vn_strbuf_printf(&b, "</distances></topology>\n");
	if (vn_topology_parse(b.s, b.len, "gen.xml", &t, &err) != 0)
		fail_msg("%s", err.msg);
	vn_strbuf_free(&b);
	return t;
}

static const unsigned amd4[] = {10, 12, 32, 32, 12, 10, 32, 32, 32, 32, 10, 12, 32, 32, 12, 10};

static unsigned amd8[64];

static void fill_amd8(void)
{
	for (unsigned i = 0; i < 8; i++)
		for (unsigned j = 0; j < 8; j++)
			amd8[i * 8 + j] = i == j ? 10 : (i / 4 == j / 4 ? 12 : 32);
}

static char *lists(const struct vn_topology *t, enum vn_fallback_model m)
{
	struct vn_fallback_opts o = VN_FALLBACK_OPTS_DEFAULT;
	struct vn_fallback f;

	o.model = m;
	vn_fallback_compute(t, &o, &f);
	return vn_fallback_format(&f);
}

/* Tables published with 54d032ced983 (the 4-node AMD report). */
static void test_amd4_before_and_after(void **state)
{
	_cleanup_topology_ struct vn_topology *t = make(4, amd4, NULL);
	_cleanup_free_ char *before = lists(t, VN_FALLBACK_RESET);
	_cleanup_free_ char *after = lists(t, VN_FALLBACK_ACCUMULATE);
	_cleanup_free_ char *now = lists(t, VN_FALLBACK_SAME_PENALTY);

	assert_string_equal(before, "Fallback order for Node 0: 0 1 2 3 \n"
				    "Fallback order for Node 1: 1 0 3 2 \n"
				    "Fallback order for Node 2: 2 3 0 1 \n"
				    "Fallback order for Node 3: 3 2 0 1 \n");
	assert_string_equal(after, "Fallback order for Node 0: 0 1 2 3 \n"
				   "Fallback order for Node 1: 1 0 3 2 \n"
				   "Fallback order for Node 2: 2 3 0 1 \n"
				   "Fallback order for Node 3: 3 2 1 0 \n");
	assert_string_equal(now, after);
}

static void test_amd8_two_socket(void **state)
{
	fill_amd8();
	_cleanup_topology_ struct vn_topology *t = make(8, amd8, NULL);
	_cleanup_free_ char *before = lists(t, VN_FALLBACK_RESET);
	_cleanup_free_ char *after = lists(t, VN_FALLBACK_SAME_PENALTY);

	for (int n = 4; n < 8; n++) {
		char want[64];
		snprintf(want, sizeof(want), "Node %d: %d", n, n);
		char *line = strstr(before, want);
		assert_non_null(line);
		assert_memory_equal(strchr(line, '\n') - 8, "0 1 2 3 ", 8);
	}
	assert_non_null(strstr(after, "Fallback order for Node 5: 5 6 7 4 1 2 3 0 \n"));
	assert_non_null(strstr(after, "Fallback order for Node 6: 6 7 4 5 2 3 0 1 \n"));
	assert_non_null(strstr(after, "Fallback order for Node 7: 7 4 5 6 3 0 1 2 \n"));
}

/*
 * A memory-less node still leads its own list (find_next_best_node() returns
 * the local node before looking at N_MEMORY) but appears in no other list.
 */
static void test_memoryless_and_cpuless(void **state)
{
	_cleanup_topology_ struct vn_topology *t = make(4, amd4, "nmnc");
	struct vn_fallback_opts o = VN_FALLBACK_OPTS_DEFAULT;
	struct vn_fallback f;

	vn_fallback_compute(t, &o, &f);
	assert_int_equal(f.len[1], 4);
	assert_int_equal(f.order[1][0], 1);
	assert_int_equal(f.order[1][1], 0); /* nearest memory to the memory-less node */
	for (unsigned n = 0; n < 4; n++) {
		if (n == 1)
			continue;
		assert_int_equal(f.len[n], 3);
		for (unsigned i = 0; i < f.len[n]; i++)
			assert_int_not_equal(f.order[n][i], 1);
	}
	assert_int_equal(f.order[3][0], 3); /* the CPU-less node has memory: it leads its list */

	/* With CPUs visible, headless node 2 wins ties against nodes with CPUs. */
	static const unsigned flat[] = {10, 20, 20, 20, 10, 20, 20, 20, 10};
	_cleanup_topology_ struct vn_topology *t3 = make(3, flat, "nnc");
	o.cpus_visible = true;
	vn_fallback_compute(t3, &o, &f);
	assert_int_equal(f.order[0][1], 2);
	o.cpus_visible = false;
	vn_fallback_compute(t3, &o, &f);
	assert_int_equal(f.order[0][1], 1);
}

/* The seed's case as its authors tested the fix: node 3 memory-less at boot, memory hot-added later. */
static const char hotplug4[] = "<topology name='h'>\n"
			       "<node id='0' cpus='0' memory='256M'/>\n"
			       "<node id='1' cpus='1' memory='256M'/>\n"
			       "<node id='2' cpus='2' memory='256M'/>\n"
			       "<node id='3' cpus='3-4' memory='0' hotplug='512M' hotplug-cpus='4'/>\n"
			       "<distances><row node='0'>10 12 32 32</row><row node='1'>12 10 32 32</row>\n"
			       "<row node='2'>32 32 10 12</row><row node='3'>32 32 12 10</row></distances>\n"
			       "</topology>\n";

static char *rebuilt(const struct vn_topology *t, enum vn_fallback_model m, const struct vn_fallback_state *s)
{
	struct vn_fallback_opts o = VN_FALLBACK_OPTS_DEFAULT;
	struct vn_fallback f;

	o.model = m;
	vn_fallback_compute_state(t, &o, s, &f);
	return vn_fallback_format(&f);
}

static void test_rebuilt_after_hotplug(void **state)
{
	_cleanup_topology_ struct vn_topology *t = NULL;
	struct vn_error err = {0};
	struct vn_fallback_state s;

	if (vn_topology_parse(hotplug4, strlen(hotplug4), "hotplug4.xml", &t, &err) != 0)
		fail_msg("%s", err.msg);
	/* At boot node 3 is in no list but its own (the 6.1 guest printed exactly these). */
	_cleanup_free_ char *boot = lists(t, VN_FALLBACK_SAME_PENALTY);
	assert_string_equal(boot, "Fallback order for Node 0: 0 1 2 \n"
				  "Fallback order for Node 1: 1 0 2 \n"
				  "Fallback order for Node 2: 2 0 1 \n"
				  "Fallback order for Node 3: 3 2 1 0 \n");
	/* Rebuilt once node 3's memory is online: the seed's "after" table, as the 6.1 guest printed it. */
	vn_fallback_state_hotplugged(t, &s);
	assert_true(s.memory[3] && s.cpus[3]);
	_cleanup_free_ char *after = rebuilt(t, VN_FALLBACK_SAME_PENALTY, &s);
	assert_string_equal(after, "Fallback order for Node 0: 0 1 2 3 \n"
				   "Fallback order for Node 1: 1 0 3 2 \n"
				   "Fallback order for Node 2: 2 3 0 1 \n"
				   "Fallback order for Node 3: 3 2 1 0 \n");
	_cleanup_free_ char *accumulate = rebuilt(t, VN_FALLBACK_ACCUMULATE, &s);
	assert_string_equal(after, accumulate);
	/* And its "before" table on a kernel without the fix. */
	_cleanup_free_ char *before = rebuilt(t, VN_FALLBACK_RESET, &s);
	assert_string_equal(before, "Fallback order for Node 0: 0 1 2 3 \n"
				    "Fallback order for Node 1: 1 0 3 2 \n"
				    "Fallback order for Node 2: 2 3 0 1 \n"
				    "Fallback order for Node 3: 3 2 0 1 \n");

	/* The boot state: absent vCPU 4 is not counted, node 3 has no memory. */
	struct vn_fallback_opts o = VN_FALLBACK_OPTS_DEFAULT;
	o.cpus_visible = true;
	vn_fallback_state_boot(t, &o, &s);
	assert_false(s.memory[3]);
	assert_true(s.cpus[3]);
	_cleanup_free_ char *text = vn_fallback_state_format(t, &s);
	assert_string_equal(text, "memory on nodes 0-2, CPUs seen on nodes 0-3");
}

/* A rebuild sees CPUs: a CPU-less memory node then wins ties it lost at boot. */
static void test_rebuilt_sees_cpus(void **state)
{
	static const unsigned flat[] = {10, 20, 20, 20, 10, 20, 20, 20, 10};
	_cleanup_topology_ struct vn_topology *t = make(3, flat, "nnc");
	struct vn_fallback_opts o = VN_FALLBACK_OPTS_DEFAULT;
	struct vn_fallback_state s;
	struct vn_fallback boot, re;

	vn_fallback_state_boot(t, &o, &s);
	vn_fallback_compute_state(t, &o, &s, &boot);
	vn_fallback_state_hotplugged(t, &s);
	vn_fallback_compute_state(t, &o, &s, &re);
	assert_int_equal(boot.order[0][1], 1);
	assert_int_equal(re.order[0][1], 2);
	_cleanup_free_ char *diff = vn_fallback_diff(&re, &boot);
	assert_non_null(strstr(diff, "Node 0: expected 0 2 1, kernel printed 0 1 2"));
}

static void test_parse_builds(void **state)
{
	const char *log = "[    0.000000] Fallback order for Node 0: 0 1 2 \n"
			  "[    0.000000] Fallback order for Node 1: 1 0 2 \n"
			  "[    0.000000] Fallback order for Node 2: 2 0 1 \n"
			  "[    0.000000] Fallback order for Node 3: 3 2 1 0 \n"
			  "[    0.000001] Built 4 zonelists, mobility grouping on.\n"
			  "[   15.703807] Fallback order for Node 0: 0 1 2 3 \n"
			  "[   15.704161] Fallback order for Node 1: 1 0 3 2 \n"
			  "[   15.704193] Fallback order for Node 2: 2 3 0 1 \n"
			  "[   15.704223] Fallback order for Node 3: 3 2 1 0 \n"
			  "[   38.432428] Fallback order for Node 0: 0 1 2 3 \n";
	struct vn_fallback b[VN_FALLBACK_BUILDS_MAX];
	struct vn_error err = {0};
	unsigned n;

	assert_int_equal(vn_fallback_parse_builds(log, b, VN_FALLBACK_BUILDS_MAX, &n, &err), 0);
	assert_int_equal(n, 3);
	assert_int_equal(b[0].len[0], 3);
	assert_int_equal(b[1].len[0], 4);
	assert_int_equal(b[1].order[3][2], 1);
	assert_int_equal(b[1].nnodes, 4);
	assert_int_equal(b[2].nnodes, 1); /* a build cut short by the end of the log */
	/* The boot build is what parse_log reads. */
	struct vn_fallback first;
	assert_int_equal(vn_fallback_parse_log(log, &first, &err), 0);
	assert_null(vn_fallback_diff(&first, &b[0]));
	/* More builds than kept: counted, not stored. */
	assert_int_equal(vn_fallback_parse_builds(log, b, 1, &n, &err), 0);
	assert_int_equal(n, 3);
	assert_int_equal(vn_fallback_parse_builds("Fallback order for Node x", b, 2, &n, &err), -EBADMSG);
	vn_error_clear(&err);
}

static void test_parse_log_and_diff(void **state)
{
	static const char log[] = "[    0.012345] Built 4 zonelists, mobility grouping on.\n"
				  "[    0.010000] Fallback order for Node 0: 0 1 2 3 \n"
				  "[    0.010001] Fallback order for Node 1: 1 0 3 2 \n"
				  "[    0.010002] Fallback order for Node 2: 2 3 0 1 \n"
				  "[    0.010003] Fallback order for Node 3: 3 2 0 1 \n"
				  "[   12.000000] Fallback order for Node 3: 3 2 1 0 \n";
	_cleanup_topology_ struct vn_topology *t = make(4, amd4, NULL);
	struct vn_fallback_opts o = VN_FALLBACK_OPTS_DEFAULT;
	struct vn_fallback model, kernel;
	struct vn_error err = {0};

	assert_int_equal(vn_fallback_parse_log(log, &kernel, &err), 0);
	assert_int_equal(kernel.nnodes, 4);
	assert_int_equal(kernel.order[3][2], 0); /* the boot-time line wins over a later rebuild */
	vn_fallback_compute(t, &o, &model);
	_cleanup_free_ char *d = vn_fallback_diff(&model, &kernel);
	assert_non_null(d);
	assert_string_equal(d, "Node 3: expected 3 2 1 0, kernel printed 3 2 0 1\n");
	o.model = VN_FALLBACK_RESET;
	vn_fallback_compute(t, &o, &model);
	assert_null(vn_fallback_diff(&model, &kernel));
}

static void test_model_names(void **state)
{
	enum vn_fallback_model m;
	struct vn_error err = {0};

	assert_int_equal(vn_fallback_model_lookup("pre-5.15", &m, &err), 0);
	assert_int_equal(m, VN_FALLBACK_RESET);
	assert_int_equal(vn_fallback_model_lookup("6.1", &m, &err), 0);
	assert_int_equal(m, VN_FALLBACK_SAME_PENALTY);
	assert_int_not_equal(vn_fallback_model_lookup("4.0", &m, &err), 0);
	assert_non_null(strstr(err.msg, "known: pre-5.15, 5.15, 5.18"));
}

/*
 * 6.12's find_next_best_node() takes the local node only from N_MEMORY: a
 * memory-less node is not in its own list, and the first node it takes is
 * penalised like any new distance group (node_load[0] += 1), which moves
 * node 3 ahead of 2. 5.18's lists keep the node first.
 */
static void test_memoryless_left_out_on_6_12(void **state)
{
	_cleanup_topology_ struct vn_topology *t = make(4, amd4, "nmnc");
	enum vn_fallback_model m;
	struct vn_error err = {0};

	_cleanup_free_ char *old = lists(t, VN_FALLBACK_SAME_PENALTY);
	_cleanup_free_ char *now = lists(t, VN_FALLBACK_SKIP_MEMORYLESS);
	assert_string_equal(old, "Fallback order for Node 0: 0 2 3 \nFallback order for Node 1: 1 0 3 2 \n"
				 "Fallback order for Node 2: 2 3 0 \nFallback order for Node 3: 3 2 0 \n");
	assert_string_equal(now, "Fallback order for Node 0: 0 2 3 \nFallback order for Node 1: 0 3 2 \n"
				 "Fallback order for Node 2: 2 3 0 \nFallback order for Node 3: 3 2 0 \n");
	assert_int_equal(vn_fallback_model_lookup("6.12", &m, &err), 0);
	assert_int_equal(m, VN_FALLBACK_SKIP_MEMORYLESS);
}

static void test_model_for_release(void **state)
{
	static const struct {
		const char *release;
		enum vn_fallback_model model;
	} cases[] = {
		{"6.12.95+deb12-amd64", VN_FALLBACK_SKIP_MEMORYLESS},
		{"6.13.0", VN_FALLBACK_SKIP_MEMORYLESS},
		{"6.1.0-28-amd64", VN_FALLBACK_SAME_PENALTY},
		{"5.18.0", VN_FALLBACK_SAME_PENALTY},
		{"5.17.15", VN_FALLBACK_ACCUMULATE},
		{"5.15.0-91-generic", VN_FALLBACK_ACCUMULATE},
		{"5.14.21", VN_FALLBACK_RESET},
		{"4.19.0-27-amd64", VN_FALLBACK_RESET},
	};
	enum vn_fallback_model m;

	for (unsigned i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		m = (enum vn_fallback_model)99; /* none: the call must set it */
		assert_true(vn_fallback_model_for_release(cases[i].release, &m));
		if (m != cases[i].model)
			fail_msg("%s: %s", cases[i].release, vn_fallback_model_name(m));
	}
	m = VN_FALLBACK_ACCUMULATE;
	assert_false(vn_fallback_model_for_release("linux", &m));
	assert_false(vn_fallback_model_for_release("6", &m));
	/* The guest's text: scanf would take these; one parser for both models refuses them. */
	assert_false(vn_fallback_model_for_release(" 6.12", &m));
	assert_false(vn_fallback_model_for_release("+6.12", &m));
	assert_false(vn_fallback_model_for_release("6.-1", &m));
	assert_false(vn_fallback_model_for_release("4294967302.1", &m));
	assert_false(vn_fallback_model_for_release(NULL, &m));
	assert_int_equal(m, VN_FALLBACK_ACCUMULATE);
}

/* A random shape with a memory-less node booted on Debian's 6.12 (tests/fixtures/fallback/README). */
static void test_recorded_6_12_memoryless(void **state)
{
	const char *src = getenv("VN_SOURCE_DIR");
	_cleanup_topology_ struct vn_topology *t = NULL;
	struct vn_fallback_opts o = VN_FALLBACK_OPTS_DEFAULT;
	_cleanup_free_ char *log = NULL, *diff = NULL;
	struct vn_fallback want, got;
	struct vn_error err = {0};
	char path[4096];
	size_t len;

	snprintf(path, sizeof(path), "%s/tests/fixtures/fallback/random-1.xml", src ? src : ".");
	if (vn_topology_load(path, &t, &err) != 0)
		fail_msg("%s", err.msg);
	snprintf(path, sizeof(path), "%s/tests/fixtures/fallback/random-1-6.12.dmesg", src ? src : ".");
	assert_int_equal(vn_file_read(path, 1 << 16, &log, &len, &err), 0);
	assert_int_equal(vn_fallback_parse_log(log, &got, &err), 0);
	assert_int_equal(vn_fallback_model_lookup("6.12", &o.model, &err), 0);
	vn_fallback_compute(t, &o, &want);
	diff = vn_fallback_diff(&want, &got);
	if (diff)
		fail_msg("%s", diff);
	o.model = VN_FALLBACK_SAME_PENALTY;
	vn_fallback_compute(t, &o, &want);
	diff = vn_fallback_diff(&want, &got);
	assert_string_equal(diff, "Node 5: expected 5 6 7 0 1 2 4 3, kernel printed 6 7 0 1 2 4 3\n");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_amd4_before_and_after),
		cmocka_unit_test(test_amd8_two_socket),
		cmocka_unit_test(test_memoryless_and_cpuless),
		cmocka_unit_test(test_parse_log_and_diff),
		cmocka_unit_test(test_rebuilt_after_hotplug),
		cmocka_unit_test(test_rebuilt_sees_cpus),
		cmocka_unit_test(test_parse_builds),
		cmocka_unit_test(test_model_names),
		cmocka_unit_test(test_memoryless_left_out_on_6_12),
		cmocka_unit_test(test_model_for_release),
		cmocka_unit_test(test_recorded_6_12_memoryless),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
