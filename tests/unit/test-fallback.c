#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "topology/fallback.h"
#include "util/cleanup.h"
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

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_amd4_before_and_after),
		cmocka_unit_test(test_amd8_two_socket),
		cmocka_unit_test(test_memoryless_and_cpuless),
		cmocka_unit_test(test_parse_log_and_diff),
		cmocka_unit_test(test_model_names),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
