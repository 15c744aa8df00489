#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "topology/topology.h"
#include "util/cleanup.h"

static const char good[] = "<topology name=\"4node-amd\">\n"
			   "  <description>test</description>\n"
			   "  <cpu sockets=\"2\" cores=\"2\" threads=\"1\"/>\n"
			   "  <node id=\"0\" cpus=\"0-1\" memory=\"512M\"/>\n"
			   "  <node id=\"1\" cpus=\"2-3\" memory=\"512M\"/>\n"
			   "  <node id=\"2\" cpus=\"\" memory=\"1G\"/>\n"
			   "  <node id=\"3\" cpus=\"\" memory=\"256M\"/>\n"
			   "  <distances>\n"
			   "    <row node=\"0\">10 12 32 32</row>\n"
			   "    <row node=\"1\">12 10 32 32</row>\n"
			   "    <row node=\"2\">32 32 10 12</row>\n"
			   "    <row node=\"3\">32 32 12 10</row>\n"
			   "  </distances>\n"
			   "  <hmat>\n"
			   "    <latency initiator=\"0\" target=\"2\" ns=\"180\"/>\n"
			   "    <bandwidth initiator=\"0\" target=\"2\" mbps=\"20000\"/>\n"
			   "  </hmat>\n"
			   "</topology>\n";

static void test_parse_good(void **state)
{
	_cleanup_topology_ struct vn_topology *t = NULL;
	struct vn_error err = {0};

	assert_int_equal(vn_topology_parse(good, strlen(good), "good.xml", &t, &err), 0);
	assert_string_equal(t->name, "4node-amd");
	assert_int_equal(t->nnodes, 4);
	assert_int_equal(t->ncpus_total, 4);
	assert_int_equal(t->nodes[0].ncpus, 2);
	assert_int_equal(t->nodes[2].ncpus, 0);
	assert_true(t->nodes[2].memory == 1ull << 30);
	assert_int_equal(t->distance[3][2], 12);
	assert_int_equal(t->distance[0][3], 32);
	assert_int_equal(t->nhmat, 2);
	assert_int_equal(t->hmat[1].type, VN_HMAT_BANDWIDTH);
	assert_int_equal(t->sockets, 2);
	assert_null(vn_topology_warnings(t));
	assert_int_equal(vn_topology_cpu_node(t, 3), 1);
}

static void test_default_distances_and_asymmetry(void **state)
{
	static const char nodist[] = "<topology name='x'><node id='1' cpus='1' memory='64M'/>"
				     "<node id='0' cpus='0' memory='64M'/></topology>";
	static const char asym[] = "<topology name='x'><node id='0' cpus='0' memory='64M'/>"
				   "<node id='1' cpus='1' memory='64M'/><distances><row node='0'>10 20</row>"
				   "<row node='1'>30 10</row></distances></topology>";
	_cleanup_topology_ struct vn_topology *t = NULL, *a = NULL;
	struct vn_error err = {0};

	assert_int_equal(vn_topology_parse(nodist, strlen(nodist), "n.xml", &t, &err), 0);
	assert_int_equal(t->distance[0][1], 20);
	assert_int_equal(t->distance[1][1], 10);
	_cleanup_free_ char *w = vn_topology_warnings(t);
	assert_non_null(strstr(w, "10 local / 20 remote"));

	assert_int_equal(vn_topology_parse(asym, strlen(asym), "a.xml", &a, &err), 0);
	_cleanup_free_ char *w2 = vn_topology_warnings(a);
	assert_non_null(strstr(w2, "asymmetric"));
}

/* Each malformed input must be refused with FILE:LINE and the offending value. */
static void test_errors_name_line_and_value(void **state)
{
	static const struct {
		const char *xml, *want;
	} cases[] = {
		{"<topology name='x'>\n<node id='0' cpus='0' memory='64M' color='red'/></topology>",
		 "e.xml:2: unknown attribute 'color'"},
		{"<topology name='x'>\n<node id='0' cpus='0-' memory='64M'/></topology>",
		 "e.xml:2: cpus: malformed cpulist '0-'"},
		{"<topology name='x'>\n<node id='0' cpus='0' memory='-5M'/></topology>",
		 "e.xml:2: memory: negative size '-5M'"},
		{"<topology name='x'>\n<node id='0' cpus='0' memory='64M'/>\n<node id='0' cpus='1' "
		 "memory='64M'/></topology>",
		 "e.xml:3: node id 0 defined twice"},
		{"<topology name='x'>\n<node id='0' cpus='0' memory='64M'/>\n<node id='2' cpus='1' "
		 "memory='64M'/></topology>",
		 "node 1 is missing"},
		{"<topology name='x'>\n<node id='0' cpus='0' memory='64M'/>\n<node id='1' cpus='2' "
		 "memory='64M'/></topology>",
		 "cpu 1 is in no node"},
		{"<topology name='x'>\n<node id='0' cpus='0-1' memory='64M'/>\n<node id='1' cpus='1' "
		 "memory='64M'/></topology>",
		 "e.xml:3: node 1: cpu 1 already belongs to node 0"},
		{"<topology name='x'>\n<node id='0' cpus='0' memory='64M'/>\n<node id='1' cpus='1' memory='64M'/>\n"
		 "<distances>\n<row node='0'>10 20</row>\n<row node='1'>20 11</row></distances></topology>",
		 "e.xml:6: row 1: local distance is 11"},
		{"<topology name='x'>\n<node id='0' cpus='0' memory='64M'/>\n<node id='1' cpus='1' memory='64M'/>\n"
		 "<distances>\n<row node='0'>10 20 30</row>\n<row node='1'>20 10</row></distances></topology>",
		 "e.xml:5: row 0 has 3 values, expected 2"},
		{"<topology name='x'>\n<node id='0' cpus='0' memory='64M'/>\n<node id='1' cpus='1' memory='64M'/>\n"
		 "<distances>\n<row node='0'>10 256</row>\n<row node='1'>20 10</row></distances></topology>",
		 "distance 256 is above 255"},
		{"<topology name='x'>\n<node id='0' cpus='' memory='0'/></topology>",
		 "node 0 has neither CPUs nor memory"},
		{"<topology name='x'>\n<node id='0' cpus='0' memory='0'/></topology>", "no node has memory"},
		{"<topology name='x'>\n<node id='128' cpus='0' memory='64M'/></topology>", "at most 128 nodes"},
		{"<topology name='x'>\n<numa/></topology>", "e.xml:2: unknown element <numa>"},
		{"<topology name='x'>\n<node id='0' cpus='0' memory='64M'>\n</topology>", "e.xml:3: malformed XML"},
		{"<topology name='x'>\n<cpu sockets='2' cores='3'/>\n<node id='0' cpus='0-3' memory='64M'/></topology>",
		 "sockets*dies*cores*threads = 2*1*3*1 = 6, but the nodes have 4 CPUs"},
		{"<topology name='x'>\n<node id='0' cpus='0' memory='64M'/>\n<hmat>\n<latency initiator='0' target='1' "
		 "ns='5'/>"
		 "</hmat></topology>",
		 "e.xml:4: hmat entry names node 1"},
	};
	for (size_t i = 0; i < VN_ARRAY_SIZE(cases); i++) {
		struct vn_topology *t = NULL;
		struct vn_error err = {0};
		int rc = vn_topology_parse(cases[i].xml, strlen(cases[i].xml), "e.xml", &t, &err);
		if (rc == 0 || !strstr(err.msg, cases[i].want))
			fail_msg("case %zu: want '%s', got rc=%d '%s'", i, cases[i].want, rc, err.msg);
		assert_int_equal(err.kind, VN_ERR_INPUT);
		assert_null(t);
	}
}

static void test_devices(void **state)
{
	static const char xml[] = "<topology name='x'>\n"
				  "<node id='0' cpus='0' memory='64M'/>\n"
				  "<node id='1' cpus='1' memory='64M'>\n"
				  "  <devices><disk size='1G'/><nic/><disk size='512M'/></devices>\n"
				  "</node>\n"
				  "</topology>\n";
	_cleanup_topology_ struct vn_topology *t = NULL;
	struct vn_error err = {0};

	if (vn_topology_parse(xml, strlen(xml), "d.xml", &t, &err) < 0)
		fail_msg("%s", err.msg);
	assert_int_equal(t->nodes[0].ndevices, 0);
	assert_int_equal(t->nodes[1].ndevices, 3);
	assert_int_equal(t->ndevices_total, 3);
	/* Kept in file order: the order of the node's root ports. */
	assert_int_equal(t->nodes[1].devices[0].kind, VN_DEVICE_DISK);
	assert_true(t->nodes[1].devices[0].size == 1ull << 30);
	assert_int_equal(t->nodes[1].devices[1].kind, VN_DEVICE_NIC);
	assert_true(t->nodes[1].devices[2].size == 512ull << 20);
	assert_int_equal(t->nodes[1].devices[1].line, 4);
	assert_string_equal(vn_device_kind_name(VN_DEVICE_NIC), "nic");
}

/* Every file we ship must load: they are what users start from. */
static void test_shipped_topologies(void **state)
{
	const char *src = getenv("VN_SOURCE_DIR");
	char dir[4096];
	int count = 0;

	assert_non_null(src);
	snprintf(dir, sizeof(dir), "%s/topologies", src);
	DIR *d = opendir(dir);
	assert_non_null(d);
	for (struct dirent *e; (e = readdir(d));) {
		size_t l = strlen(e->d_name);
		if (l < 5 || strcmp(e->d_name + l - 4, ".xml") != 0)
			continue;
		char path[8192];
		snprintf(path, sizeof(path), "%s/%s", dir, e->d_name);
		struct vn_topology *t = NULL;
		struct vn_error err = {0};
		if (vn_topology_load(path, &t, &err) != 0)
			fail_msg("%s", err.msg);
		assert_non_null(t->description);
		vn_topology_free(t);
		count++;
	}
	closedir(d);
	assert_true(count >= 8);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_parse_good),
		cmocka_unit_test(test_default_distances_and_asymmetry),
		cmocka_unit_test(test_errors_name_line_and_value),
		cmocka_unit_test(test_devices),
		cmocka_unit_test(test_shipped_topologies),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
