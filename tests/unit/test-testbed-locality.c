/* The locality map and latency model of a topology (testbed/locality.c). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "testbed/locality.h"

static struct vn_topology *load(const char *name)
{
	char path[4096];
	struct vn_topology *t = NULL;
	struct vn_error err = {0};
	snprintf(path, sizeof(path), "%s/topologies/%s", getenv("VN_SOURCE_DIR"), name);
	if (vn_topology_load(path, &t, &err) < 0)
		fail_msg("%s: %s", path, err.msg);
	return t;
}

/* QEMU 7.2's plugin addresses: cell i at twice the sum of the cells before it. */
static void test_map(void **state)
{
	struct vn_topology *t = load("4node-cxl.xml");
	struct vn_loc_map m;
	vn_testbed_locality_map(t, &m);
	assert_int_equal(m.nnodes, 4);
	assert_int_equal(m.nranges, 4);
	const uint64_t M = 1 << 20;
	for (unsigned i = 0; i < 4; i++) {
		assert_int_equal(m.ranges[i].node, i);
		assert_int_equal(m.ranges[i].lo, 2 * i * 256 * M);
		assert_int_equal(m.ranges[i].hi, 2 * i * 256 * M + 256 * M);
	}
	assert_int_equal(m.ncpus, 4);
	assert_int_equal(m.cpu_node[1], 0);
	assert_int_equal(m.cpu_node[2], 1);
	vn_topology_free(t);
}

/* HMAT where given (one direction standing for both), else 100 ns x SLIT / 10. */
static void test_latency(void **state)
{
	struct vn_topology *t = load("4node-cxl.xml");
	double lat[16];
	vn_testbed_locality_latency(t, lat);
	assert_float_equal(lat[0 * 4 + 0], 90, 0);
	assert_float_equal(lat[0 * 4 + 1], 150, 0);
	assert_float_equal(lat[1 * 4 + 0], 150, 0); /* 0 -> 1 stands for both */
	assert_float_equal(lat[1 * 4 + 3], 210, 0);
	assert_float_equal(lat[2 * 4 + 3], 260, 0); /* no HMAT pair: SLIT 26 */
	vn_topology_free(t);
	t = load("2node.xml");
	vn_testbed_locality_latency(t, lat);
	assert_float_equal(lat[0], 100, 0);
	assert_float_equal(lat[1], 210, 0);
	vn_topology_free(t);
}

/*
 * The DIMM measured on 4node-amd-hotplug (tests/fixtures/hmp): plugin
 * addresses 0x30500000-0x40500000, of which the last 5M are also node 2's
 * cell (its range 0x40000000-0x50000000): that part is nobody's.
 */
static void test_pieces(void **state)
{
	struct vn_topology *t = load("4node-amd-hotplug.xml");
	struct vn_loc_map m;
	struct vn_loc_range p[8];
	vn_testbed_locality_map(t, &m);
	assert_true(m.ranges[2].lo == 0x40000000 && m.ranges[2].hi == 0x50000000);
	unsigned n = vn_testbed_locality_pieces(&m, 0x30500000, 0x40500000, 3, p, 8);
	assert_int_equal(n, 2);
	assert_true(p[0].lo == 0x30500000 && p[0].hi == 0x40000000 && p[0].node == 3);
	assert_true(p[1].lo == 0x40000000 && p[1].hi == 0x40500000 && p[1].node == VN_LOC_NODE_NONE);
	/* Past every cell: one piece, the node's. */
	n = vn_testbed_locality_pieces(&m, UINT64_C(1) << 40, (UINT64_C(1) << 40) + 4096, 3, p, 8);
	assert_true(n == 1 && p[0].node == 3);
	/* From inside node 0 across node 1 into node 2: shared, own, shared, own, shared. */
	n = vn_testbed_locality_pieces(&m, 0x08000000, 0x48000000, 1, p, 8);
	assert_int_equal(n, 5);
	assert_true(p[0].node == VN_LOC_NODE_NONE && p[0].hi == 0x10000000);
	assert_true(p[1].node == 1 && p[1].lo == 0x10000000 && p[1].hi == 0x20000000);
	assert_true(p[4].node == VN_LOC_NODE_NONE && p[4].lo == 0x40000000 && p[4].hi == 0x48000000);
	/* Bounded by max. */
	assert_int_equal(vn_testbed_locality_pieces(&m, 0x08000000, 0x48000000, 1, p, 2), 2);
	vn_topology_free(t);
}

/*
 * 4node-cxl-tiered's accesses grouped by the model's tiers and priced by its
 * HMAT latencies (0->0 90 ns, 0->1 150 standing for 1->0 too, 0->2 210,
 * 0->3 300, 1->1 90, 1->3 210), worked by hand:
 *   memory_tier4 (nodes 0-1): 1e6 x 90 + 5e5 x 90 + 3e5 x 150 ns = 0.18 s
 *   memory_tier22 (2-3): 2e6 x 210 + 1e5 x 300 + 4e5 x 210 ns = 0.534 s
 * (by SLIT, 14 and 24 x 10 ns, memory_tier22 would be 0.36 s).
 */
static void test_tier_cost(void **state)
{
	struct vn_topology *t = load("4node-cxl-tiered.xml");
	int group_of[VN_MAX_NODES], ids[VN_MAX_NODES];
	double lat[16];
	struct vn_loc_counts c;
	struct vn_loc_group g[VN_MAX_NODES], none;

	/* 6.12 puts the expanders by their HMAT figures (docs/tiering.md): memory_tier50. */
	assert_int_equal(vn_testbed_locality_tiers(t, VN_TIER_MODEL_6_12, group_of, ids), 2);
	assert_int_equal(ids[1], 50);
	assert_int_equal(vn_testbed_locality_tiers(t, VN_TIER_MODEL_6_1, group_of, ids), 2);
	assert_int_equal(ids[0], 4);
	assert_int_equal(ids[1], 22);
	assert_int_equal(group_of[0], 0);
	assert_int_equal(group_of[1], 0);
	assert_int_equal(group_of[2], 1);
	assert_int_equal(group_of[3], 1);
	vn_testbed_locality_latency(t, lat);
	vn_loc_counts_init(&c, 4);
	*vn_loc_at(&c, 0, 0, VN_LOC_USER_LOAD) = 1000000;
	*vn_loc_at(&c, 0, 2, VN_LOC_USER_STORE) = 1500000;
	*vn_loc_at(&c, 0, 2, VN_LOC_KERNEL_LOAD) = 500000;
	*vn_loc_at(&c, 0, 3, VN_LOC_USER_LOAD) = 100000;
	*vn_loc_at(&c, 1, 1, VN_LOC_KERNEL_STORE) = 500000;
	*vn_loc_at(&c, 1, 0, VN_LOC_USER_LOAD) = 300000;
	*vn_loc_at(&c, 1, 3, VN_LOC_USER_STORE) = 400000;
	vn_loc_by_group(&c, lat, group_of, 2, g, &none);
	assert_int_equal(g[0].accesses, 1800000);
	assert_int_equal(g[0].user, 1300000);
	assert_float_equal(g[0].model_s, 0.18, 1e-12);
	assert_int_equal(g[1].accesses, 2500000);
	assert_int_equal(g[1].user, 2000000);
	assert_float_equal(g[1].model_s, 0.534, 1e-12);
	assert_int_equal(none.accesses, 0);
	/* The tiers split the run's modeled time, nothing more or less. */
	assert_float_equal(g[0].model_s + g[1].model_s, vn_loc_model_s(&c, lat), 1e-12);
	/* A node in no tier (-1) is counted apart. */
	group_of[3] = -1;
	vn_loc_by_group(&c, lat, group_of, 2, g, &none);
	assert_int_equal(none.accesses, 500000);
	assert_float_equal(none.model_s, 0.114, 1e-12);
	assert_float_equal(g[1].model_s, 0.42, 1e-12);
	vn_loc_counts_clear(&c);
	vn_topology_free(t);
	(void)state;
}

/*
 * 4node-cxl-tiered as QEMU 7.2 laid it out (docs/locality.md, "Tiered
 * shapes"): the slow nodes' stand-ins grow to 128M so that the NVDIMMs' RAM
 * blocks (ram_addr after the 768M of cells) start where node 1's cell ends
 * in plugin addresses (2 * 256M + 256M); each NVDIMM is its node's range,
 * first in the map, and no range of a node with boot memory meets one.
 */
static void test_tiered_map(void **state)
{
	struct vn_topology *t = load("4node-cxl-tiered.xml");
	struct vn_error err = {0};
	struct vn_loc_map m;
	const uint64_t M = 1 << 20;

	vn_testbed_locality_map(t, &m);
	assert_int_equal(m.nranges, 4);
	assert_int_equal(m.ranges[0].node, 2);
	assert_int_equal(m.ranges[0].lo, 768 * M);
	assert_int_equal(m.ranges[0].hi, 1152 * M);
	assert_int_equal(m.ranges[1].node, 3);
	assert_int_equal(m.ranges[1].lo, 1152 * M);
	assert_int_equal(m.ranges[1].hi, 1536 * M);
	assert_int_equal(m.ranges[2].node, 0);
	assert_int_equal(m.ranges[2].lo, 0);
	assert_int_equal(m.ranges[2].hi, 256 * M);
	assert_int_equal(m.ranges[3].node, 1);
	assert_int_equal(m.ranges[3].lo, 512 * M);
	assert_int_equal(m.ranges[3].hi, 768 * M);
	assert_int_equal(m.ncpus, 4);
	assert_int_equal(m.cpu_node[3], 1);
	assert_int_equal(vn_testbed_locality_supported(t, &err), 0);
	vn_topology_free(t);
	/* Eight DRAM cells before two slow nodes: 896M stand-ins, node 7's cell ending where the NVDIMMs start. */
	t = load("8node-snc-cxl.xml");
	vn_testbed_locality_map(t, &m);
	assert_int_equal(m.nranges, 10);
	assert_int_equal(m.ranges[0].node, 8);
	assert_int_equal(m.ranges[0].lo, 3840 * M);
	assert_int_equal(m.ranges[9].node, 7);
	assert_int_equal(m.ranges[9].hi, 3840 * M);
	assert_int_equal(vn_testbed_locality_supported(t, &err), 0);
	vn_topology_free(t);
	(void)state;
}

/*
 * A CPU-less DRAM node between two slow ones: node 3's cell sits at
 * 2 (512M + s), the NVDIMMs at 768M + 2 s, for any stand-in s: refused as
 * bad input, naming both nodes; its stand-ins stay 2M. A plain shape is not.
 */
static void test_tiered_refused(void **state)
{
	static const char xml[] = "<topology name='split'><node id='0' cpus='0' memory='256M'/>"
				  "<node id='1' cpus='1' memory='256M'/>"
				  "<node id='2' cpus='' memory='256M' memory-kind='cxl'/>"
				  "<node id='3' cpus='' memory='256M'/>"
				  "<node id='4' cpus='' memory='256M' memory-kind='cxl'/></topology>";
	struct vn_topology *t = NULL;
	struct vn_error err = {0};
	char *arg = NULL;

	if (vn_topology_parse(xml, sizeof(xml) - 1, "split", &t, &err) < 0)
		fail_msg("%s", err.msg);
	assert_int_equal(vn_testbed_locality_supported(t, &err), -EINVAL);
	assert_non_null(strstr(err.msg,
			       "locality cannot count split: node 2's NVDIMM (plugin addresses "
			       "0x30400000-0x48400000) shares addresses with node 3's memory (0x40400000-0x50400000)"));
	vn_error_clear(&err);
	assert_true(vn_testbed_locality_arg(t, "/tmp/g", &arg, &err) < 0);
	assert_null(arg);
	vn_error_clear(&err);
	vn_topology_free(t);
	t = load("4node-cxl.xml");
	assert_int_equal(vn_testbed_locality_supported(t, &err), 0);
	vn_topology_free(t);
	(void)state;
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_map),        cmocka_unit_test(test_pieces),
		cmocka_unit_test(test_latency),    cmocka_unit_test(test_tier_cost),
		cmocka_unit_test(test_tiered_map), cmocka_unit_test(test_tiered_refused),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
