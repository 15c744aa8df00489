#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "topology/fallback.h"
#include "topology/random.h"
#include "topology/tiers.h"
#include "util/cleanup.h"
#include "util/alloc.h"
#include "util/file.h"
#include "util/strbuf.h"

/* kinds: 'n' CPU + DRAM, 'c' CPU-less DRAM, 'm' memory-less with a CPU, 's' slow (CXL), CPU-less. */
static struct vn_topology *make(unsigned n, const unsigned *matrix, const char *kinds)
{
	struct vn_strbuf b = VN_STRBUF_INIT;
	struct vn_topology *t = NULL;
	struct vn_error err = {0};
	unsigned cpu = 0;

	vn_strbuf_printf(&b, "<topology name='t'>\n");
	for (unsigned i = 0; i < n; i++) {
		if (kinds[i] == 's')
			vn_strbuf_printf(&b, "<node id='%u' cpus='' memory='128M' memory-kind='cxl'/>\n", i);
		else if (kinds[i] == 'c')
			vn_strbuf_printf(&b, "<node id='%u' cpus='' memory='128M'/>\n", i);
		else
			vn_strbuf_printf(&b, "<node id='%u' cpus='%u' memory='%s'/>\n", i, cpu++,
					 kinds[i] == 'm' ? "0" : "128M");
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

static char *model(const struct vn_topology *t)
{
	_cleanup_free_ struct vn_tiers *tr = calloc(1, sizeof(*tr));
	vn_tiers_compute(t, VN_TIER_MODEL_6_1, tr);
	return vn_tiers_format(tr);
}

/* Example 1 of the comment above node_demotion in mm/memory-tiers.c (6.1): two DRAM, two PMEM nodes. */
static void test_kernel_example_1(void **state)
{
	static const unsigned d[] = {10, 20, 30, 40, 20, 10, 40, 30, 30, 40, 10, 40, 40, 30, 40, 10};
	_cleanup_topology_ struct vn_topology *t = make(4, d, "nnss");
	_cleanup_free_ char *s = model(t);

	assert_string_equal(s, "memory_tier4: 0-1\n"
			       "memory_tier22: 2-3\n"
			       "Node 0: memory_tier4, demotes to 2 (distance 30), else to 2-3\n"
			       "Node 1: memory_tier4, demotes to 3 (distance 30), else to 2-3\n"
			       "Node 2: memory_tier22, lowest tier, demotes nowhere\n"
			       "Node 3: memory_tier22, lowest tier, demotes nowhere\n");
}

/* Example 2 there: a CPU-less DRAM node is DRAM on 6.1, one tier, no demotion at all (the 4node-cxl). */
static void test_kernel_example_2(void **state)
{
	static const unsigned d[] = {10, 20, 30, 20, 10, 30, 30, 30, 10};
	_cleanup_topology_ struct vn_topology *t = make(3, d, "nnc");
	_cleanup_free_ struct vn_tiers *tr = calloc(1, sizeof(*tr));

	vn_tiers_compute(t, VN_TIER_MODEL_6_1, tr);
	_cleanup_free_ char *s = vn_tiers_format_sysfs(tr);
	assert_string_equal(s, "memory_tier4: 0-2\n");
	for (unsigned n = 0; n < 3; n++)
		assert_int_equal(tr->npreferred[n], 0);
	assert_true(tr->tier[0].top);
}

/* 4node-cxl's SLIT with its expanders onlined by kmem: each socket demotes to its own expander. */
static void test_4node_cxl(void **state)
{
	static const unsigned d[] = {10, 21, 14, 24, 21, 10, 24, 14, 14, 24, 10, 26, 24, 14, 26, 10};
	_cleanup_topology_ struct vn_topology *t = make(4, d, "nnss");
	_cleanup_free_ struct vn_tiers *tr = calloc(1, sizeof(*tr));
	_cleanup_free_ char *s = model(t);

	assert_string_equal(s, "memory_tier4: 0-1\n"
			       "memory_tier22: 2-3\n"
			       "Node 0: memory_tier4, demotes to 2 (distance 14), else to 2-3\n"
			       "Node 1: memory_tier4, demotes to 3 (distance 14), else to 2-3\n"
			       "Node 2: memory_tier22, lowest tier, demotes nowhere\n"
			       "Node 3: memory_tier22, lowest tier, demotes nowhere\n");
	vn_tiers_compute(t, VN_TIER_MODEL_6_1, tr);
	assert_true(tr->tier[0].top);
	assert_false(tr->tier[1].top);
	assert_int_equal(tr->tier[1].id, 22);
}

/* 8node-snc plus two expanders per socket (8-9 on socket 0, 10-11 on 1): both of a socket's are preferred. */
static void test_8node_snc_slow(void **state)
{
	unsigned d[12 * 12];
	for (unsigned i = 0; i < 12; i++)
		for (unsigned j = 0; j < 12; j++) {
			unsigned si = i < 8 ? i / 4 : (i - 8) / 2, sj = j < 8 ? j / 4 : (j - 8) / 2;
			bool slow = i >= 8 || j >= 8, both = i >= 8 && j >= 8;
			d[i * 12 + j] = i == j ? 10
					: both ? (si == sj ? 20 : 26)
					: slow ? (si == sj ? 14 : 24)
					       : (si == sj ? 12 : 21);
		}
	_cleanup_topology_ struct vn_topology *t = make(12, d, "nnnnnnnnssss");
	_cleanup_free_ char *s = model(t);

	assert_string_equal(s, "memory_tier4: 0-7\n"
			       "memory_tier22: 8-11\n"
			       "Node 0: memory_tier4, demotes to 8-9 (distance 14), else to 8-11\n"
			       "Node 1: memory_tier4, demotes to 8-9 (distance 14), else to 8-11\n"
			       "Node 2: memory_tier4, demotes to 8-9 (distance 14), else to 8-11\n"
			       "Node 3: memory_tier4, demotes to 8-9 (distance 14), else to 8-11\n"
			       "Node 4: memory_tier4, demotes to 10-11 (distance 14), else to 8-11\n"
			       "Node 5: memory_tier4, demotes to 10-11 (distance 14), else to 8-11\n"
			       "Node 6: memory_tier4, demotes to 10-11 (distance 14), else to 8-11\n"
			       "Node 7: memory_tier4, demotes to 10-11 (distance 14), else to 8-11\n"
			       "Node 8: memory_tier22, lowest tier, demotes nowhere\n"
			       "Node 9: memory_tier22, lowest tier, demotes nowhere\n"
			       "Node 10: memory_tier22, lowest tier, demotes nowhere\n"
			       "Node 11: memory_tier22, lowest tier, demotes nowhere\n");
}

/*
 * find_next_best_node() adds 1 for a node numbered below the source, so for
 * CPU-less DRAM node 2 slow node 1 (20, ranked 21) ties slow node 3 (21);
 * node_load[] left by the last zonelist build (1: 3, 3: 2, worked by hand
 * from build_zonelists()) takes 3 first, and 1 at another distance stops
 * the loop: the kernel demotes to the farther node. A memory-less node is
 * in no tier.
 */
static void test_farther_node_wins_a_tie(void **state)
{
	static const unsigned d[] = {10, 20, 20, 20, 20, 10, 20, 25, 20, 20, 10, 21, 20, 25, 21, 10};
	_cleanup_topology_ struct vn_topology *t = make(4, d, "nscs");
	_cleanup_free_ char *s = model(t);

	assert_string_equal(s, "memory_tier4: 0,2\n"
			       "memory_tier22: 1,3\n"
			       "Node 0: memory_tier4, demotes to 1,3 (distance 20), else to 1,3\n"
			       "Node 1: memory_tier22, lowest tier, demotes nowhere\n"
			       "Node 2: memory_tier4, demotes to 3 (distance 21), else to 1,3\n"
			       "Node 3: memory_tier22, lowest tier, demotes nowhere\n");

	static const unsigned d3[] = {10, 20, 30, 20, 10, 30, 30, 30, 10};
	_cleanup_topology_ struct vn_topology *m = make(3, d3, "nms");
	_cleanup_free_ char *ms = model(m);
	assert_string_equal(ms, "memory_tier4: 0\n"
				"memory_tier22: 2\n"
				"Node 0: memory_tier4, demotes to 2 (distance 30), else to 2\n"
				"Node 1: no memory, in no tier\n"
				"Node 2: memory_tier22, lowest tier, demotes nowhere\n");
}

/*
 * The demotion targets again, written as a sort rather than the kernel's
 * repeated minimum: the slow nodes ranked by find_next_best_node()'s key
 * ((distance + below + has CPUs) * MAX_NUMNODES + node_load, then id), the
 * run of the first one's distance taken.
 */
static unsigned rank_sorted(const struct vn_topology *t, const struct vn_fallback *zl, unsigned n, unsigned *out)
{
	long key[VN_MAX_NODES];
	unsigned k = 0;

	for (unsigned c = 0; c < t->nnodes; c++)
		if (vn_node_is_slow(&t->nodes[c])) {
			key[c] =
				(long)(t->distance[n][c] + (c < n) + (t->nodes[c].ncpus > 0)) * 1024 + zl->node_load[c];
			out[k++] = c;
		}
	for (unsigned i = 1; i < k; i++)
		for (unsigned j = i; j > 0 && key[out[j]] < key[out[j - 1]]; j--) {
			unsigned x = out[j];
			out[j] = out[j - 1];
			out[j - 1] = x;
		}
	unsigned len = k ? 1 : 0;
	while (len < k && t->distance[n][out[len]] == t->distance[n][out[0]])
		len++;
	return len;
}

static void check_random(uint64_t seed)
{
	_cleanup_free_ char *xml =
		vn_topology_random_xml(seed, 2, 12, VN_RANDOM_CPULESS | VN_RANDOM_MEMLESS | VN_RANDOM_SLOW);
	_cleanup_topology_ struct vn_topology *t = NULL;
	_cleanup_free_ struct vn_tiers *tr = calloc(1, sizeof(*tr));
	_cleanup_free_ struct vn_fallback *zl = calloc(1, sizeof(*zl));
	struct vn_fallback_opts fo = VN_FALLBACK_OPTS_DEFAULT;
	struct vn_fallback_state st = {0};
	struct vn_error err = {0};

	if (vn_topology_parse(xml, strlen(xml), "random.xml", &t, &err) != 0)
		fail_msg("seed %llu: %s", (unsigned long long)seed, err.msg);
	assert_true(vn_topology_has_slow_memory(t));
	vn_tiers_compute(t, VN_TIER_MODEL_6_1, tr);
	for (unsigned n = 0; n < t->nnodes; n++) {
		st.memory[n] = t->nodes[n].memory > 0;
		st.cpus[n] = t->nodes[n].ncpus > 0;
	}
	vn_fallback_compute_state(t, &fo, &st, zl);
	assert_int_equal(tr->ntiers, 2);
	assert_int_equal(tr->tier[0].id, 4);
	assert_int_equal(tr->tier[1].id, 22);
	for (unsigned n = 0; n < t->nnodes; n++) {
		const struct vn_node *node = &t->nodes[n];
		bool slow = vn_node_is_slow(node), dram = node->memory > 0 && !slow;
		/* Tiers: DRAM with memory on top, slow below, memory-less nowhere; lower_tier_mask the slow nodes. */
		assert_int_equal(tr->tier_of[n], slow ? 1 : dram ? 0 : -1);
		assert_int_equal(tr->tier[0].lower[n], slow);
		assert_false(tr->tier[1].lower[n]);
		unsigned want[VN_MAX_NODES], len = dram ? rank_sorted(t, zl, n, want) : 0;
		assert_int_equal(tr->npreferred[n], len);
		for (unsigned i = 0; i < len; i++)
			assert_true(tr->preferred[n][want[i]]);
		/* Every target in the next tier, all at one distance; the nearest ones when none ranks up. */
		unsigned dmin = 256;
		bool below = false;
		for (unsigned c = 0; c < t->nnodes; c++) {
			if (tr->preferred[n][c]) {
				assert_true(vn_node_is_slow(&t->nodes[c]));
				assert_int_equal(t->distance[n][c], tr->distance[n]);
			}
			if (vn_node_is_slow(&t->nodes[c]) && t->distance[n][c] < dmin)
				dmin = t->distance[n][c];
			below |= vn_node_is_slow(&t->nodes[c]) && c < n;
		}
		if (dram && !below)
			for (unsigned c = 0; c < t->nnodes; c++)
				assert_int_equal(tr->preferred[n][c],
						 vn_node_is_slow(&t->nodes[c]) && t->distance[n][c] == dmin);
	}
	assert_true(tr->tier[0].top);
	assert_false(tr->tier[1].top);
	/* Slow memory arrives through kmem after boot: the DRAM alone must boot Debian's 6.1 (128M did not). */
	uint64_t boot = 0;
	for (unsigned n = 0; n < t->nnodes; n++)
		if (!vn_node_is_slow(&t->nodes[n]))
			boot += t->nodes[n].memory;
	assert_true(boot >= 256ull << 20);
}

static void test_random_tiered_shapes(void **state)
{
	for (uint64_t seed = 1; seed <= 200; seed++)
		check_random(seed);
}

static void test_model_names(void **state)
{
	enum vn_tier_model m;
	struct vn_error err = {0};

	assert_int_equal(vn_tier_model_lookup("6.1", &m, &err), 0);
	assert_int_equal(vn_tier_model_lookup("kmem", &m, &err), 0);
	assert_int_not_equal(vn_tier_model_lookup("6.10", &m, &err), 0);
	assert_non_null(strstr(err.msg, "known: 6.1;"));
	vn_error_clear(&err);
}

/* The boot-time fallback lists leave slow nodes out but for their own (memory-less) lists; rebuilt ones take them in. */
/* The boot check's comparison: tiers in any order, trailing newline ignored; any other difference shown both ways. */
static void test_diff_against_guest(void **state)
{
	static const unsigned d[] = {10, 20, 20, 20, 10, 20, 20, 20, 10};
	_cleanup_topology_ struct vn_topology *t = make(3, d, "ncs");
	struct vn_tiers tr;

	vn_tiers_compute(t, VN_TIER_MODEL_6_1, &tr);
	const struct vn_tier_seen same[] = {{22, "2\n"}, {4, "0-1\n"}};
	assert_null(vn_tiers_diff(&tr, same, 2));
	/* Debian's 6.1 with slow memory as boot memory: one tier. */
	const struct vn_tier_seen flat[] = {{4, "0-2\n"}};
	_cleanup_free_ char *d1 = vn_tiers_diff(&tr, flat, 1);
	assert_string_equal(d1, "  expected (model 6.1):\n    memory_tier4: 0-1\n    memory_tier22: 2\n"
				"  guest:\n    memory_tier4: 0-2\n");
	_cleanup_free_ char *d2 = vn_tiers_diff(&tr, NULL, 0);
	assert_non_null(strstr(d2, "  guest:\n    (no memory tiers)\n"));
	/* Only a nodelist's first line counts: a guest cannot add lines to the report's guest side. */
	const struct vn_tier_seen extra[] = {{4, "0-1\n"}, {22, "2\nmemory_tier9: 1"}};
	assert_null(vn_tiers_diff(&tr, extra, 2));
	const struct vn_tier_seen junk[] = {{4, "0-1"}, {22, "2,x"}};
	_cleanup_free_ char *d3 = vn_tiers_diff(&tr, junk, 2);
	assert_non_null(strstr(d3, "  guest:\n    memory_tier4: 0-1\n    memory_tier22: 2,x\n"));
}

static void test_fallback_leaves_slow_out_at_boot(void **state)
{
	static const unsigned d[] = {10, 21, 14, 24, 21, 10, 24, 14, 14, 24, 10, 26, 24, 14, 26, 10};
	_cleanup_topology_ struct vn_topology *t = make(4, d, "nnss");
	struct vn_fallback_opts o = VN_FALLBACK_OPTS_DEFAULT;
	struct vn_fallback_state st;
	struct vn_fallback f;

	vn_fallback_compute(t, &o, &f);
	_cleanup_free_ char *boot = vn_fallback_format(&f);
	assert_string_equal(boot, "Fallback order for Node 0: 0 1 \nFallback order for Node 1: 1 0 \n"
				  "Fallback order for Node 2: 2 0 1 \nFallback order for Node 3: 3 1 0 \n");
	vn_fallback_state_hotplugged(t, &st);
	vn_fallback_compute_state(t, &o, &st, &f);
	_cleanup_free_ char *after = vn_fallback_format(&f);
	assert_string_equal(after, "Fallback order for Node 0: 0 2 1 3 \nFallback order for Node 1: 1 3 0 2 \n"
				   "Fallback order for Node 2: 2 0 1 3 \nFallback order for Node 3: 3 1 0 2 \n");
}

/* Replaces the first `from` after `after` in s (a malloc'd copy). */
static char *edit(const char *s, const char *after, const char *from, const char *to)
{
	const char *a = strstr(s, after), *p = a ? strstr(a, from) : NULL;
	struct vn_strbuf b = VN_STRBUF_INIT;

	assert_non_null(p);
	vn_strbuf_printf(&b, "%.*s%s%s", (int)(p - s), s, to, p + strlen(from));
	return vn_strbuf_steal(&b);
}

/*
 * A recorded 6.1 boot of 4node-cxl-tiered (TCG, 2026-12-06): the boot's
 * lists, kmem's one-node builds for nodes 2 and 3, and a rebuild as each
 * is onlined. Every build is checked, the last (with the slow nodes) too.
 */
static void test_fallback_builds_recorded(void **state)
{
	static const unsigned d[] = {10, 21, 14, 24, 21, 10, 24, 14, 14, 24, 10, 26, 24, 14, 26, 10};
	_cleanup_topology_ struct vn_topology *t = make(4, d, "nnss");
	struct vn_fallback_opts o = VN_FALLBACK_OPTS_DEFAULT;
	struct vn_error err = {0};
	const char *src = getenv("VN_SOURCE_DIR");
	char path[4096];
	_cleanup_free_ char *log = NULL, *diff = NULL;
	size_t len;

	snprintf(path, sizeof(path), "%s/tests/fixtures/tiers/4node-cxl-tiered-6.1.dmesg", src ? src : ".");
	assert_int_equal(vn_file_read(path, 1 << 20, &log, &len, &err), 0);
	assert_int_equal(vn_tiers_fallback_check(log, t, &o, &diff, &err), 0);
	if (diff)
		fail_msg("%s", diff);

	/* The lists the guest runs with, wrong: named as kmem's rebuild for node 3. */
	_cleanup_free_ char *late = edit(log, "3.948383", "1 3 0 2", "1 0 3 2");
	assert_int_equal(vn_tiers_fallback_check(late, t, &o, &diff, &err), 0);
	assert_non_null(diff);
	assert_string_equal(diff, "kmem onlines node 3 (memory on nodes 0-3, CPUs seen on nodes 0-1): Node 1: "
				  "expected 1 3 0 2, kernel printed 1 0 3 2\n");
	free(diff);
	/* kmem's own build of node 3's list. */
	_cleanup_free_ char *self = edit(log, "3.906499", "3 1 0", "3 0 1");
	assert_int_equal(vn_tiers_fallback_check(self, t, &o, &diff, &err), 0);
	assert_non_null(strstr(diff, "kmem adds, its own list only, node 3 (memory on nodes 0-1, CPUs seen on nodes "
				     "0-1): Node 3: expected 3 1 0, kernel printed 3 0 1\n"));
	free(diff);
	/* The boot's lists alone: the slow memory never came. */
	_cleanup_free_ char *boot = vn_xstrndup(log, (size_t)(strstr(log, "[    3.813173]") - log));
	assert_int_equal(vn_tiers_fallback_check(boot, t, &o, &diff, &err), 0);
	assert_non_null(strstr(diff, "the kernel printed 1 build of its lists, the model expects 5"));
	free(diff);
	diff = NULL;
}

/*
 * kmem's own build of a node coming online starts from a cleared
 * node_load[] (__build_all_zonelists(self)), not from the nodes before it
 * in a full pass: 8node-snc-cxl on 6.1 printed "9 4 5 6 7 0 1 2 3" for
 * node 9 (TCG, 2026-12-06), where a full pass would give 9 5 6 7 4 1 2 3 0.
 */
static void test_self_build_clears_node_load(void **state)
{
	static const unsigned d[] = {10, 12, 12, 12, 21, 21, 21, 21, 14, 24, 12, 10, 12, 12, 21, 21, 21, 21, 14, 24,
				     12, 12, 10, 12, 21, 21, 21, 21, 14, 24, 12, 12, 12, 10, 21, 21, 21, 21, 14, 24,
				     21, 21, 21, 21, 10, 12, 12, 12, 24, 14, 21, 21, 21, 21, 12, 10, 12, 12, 24, 14,
				     21, 21, 21, 21, 12, 12, 10, 12, 24, 14, 21, 21, 21, 21, 12, 12, 12, 10, 24, 14,
				     14, 14, 14, 14, 24, 24, 24, 24, 10, 26, 24, 24, 24, 24, 14, 14, 14, 14, 26, 10};
	_cleanup_topology_ struct vn_topology *t = make(10, d, "nnnnnnnnss");
	struct vn_fallback_opts o = VN_FALLBACK_OPTS_DEFAULT;
	struct vn_tiers_build b[VN_TIERS_BUILDS_MAX];
	struct vn_strbuf got = VN_STRBUF_INIT;

	unsigned n = vn_tiers_fallback_builds(t, &o, NULL, 0, b, VN_TIERS_BUILDS_MAX);
	assert_int_equal(n, 5);
	assert_true(b[2].f.present[9] && !b[2].f.present[8]);
	vn_fallback_put_list(&got, &b[2].f, 9);
	assert_string_equal(got.s, " 9 4 5 6 7 0 1 2 3");
	vn_strbuf_free(&got);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_kernel_example_1),
		cmocka_unit_test(test_kernel_example_2),
		cmocka_unit_test(test_4node_cxl),
		cmocka_unit_test(test_8node_snc_slow),
		cmocka_unit_test(test_farther_node_wins_a_tie),
		cmocka_unit_test(test_random_tiered_shapes),
		cmocka_unit_test(test_model_names),
		cmocka_unit_test(test_diff_against_guest),
		cmocka_unit_test(test_fallback_leaves_slow_out_at_boot),
		cmocka_unit_test(test_fallback_builds_recorded),
		cmocka_unit_test(test_self_build_clears_node_load),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
