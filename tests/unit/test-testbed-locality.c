/* The locality map and latency model of a topology (testbed/locality.c). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>

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

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_map),
		cmocka_unit_test(test_pieces),
		cmocka_unit_test(test_latency),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
