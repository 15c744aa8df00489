/* vnuma up --node-memory: every memory node at one size, as text and as the typed topology (issue 46). */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "topology/node-memory.h"
#include "util/cleanup.h"
#include "util/file.h"

#define MiB (UINT64_C(1) << 20)

static const char hotplug_xml[] = "<topology name='hp'>\n"
				  "  <cpu sockets='1' cores='4' threads='1'/>\n"
				  "  <node id='0' cpus='0-1' memory='256M'/>\n"
				  "  <node id='1' cpus='2' memory='512M'/>\n"
				  "  <node id='2' cpus='3' memory='0' hotplug='256M'/>\n"
				  "</topology>\n";

/* Memory nodes get the size; the memory-less one stays so, its hotplug memory and the CPUs as they were. */
static void test_sizes(void **state)
{
	struct vn_topology *t = NULL;
	_cleanup_free_ char *text = NULL;
	struct vn_error err = {0};
	size_t len = 0;

	(void)state;
	if (vn_topology_node_memory(hotplug_xml, strlen(hotplug_xml), "hp.xml", 1024 * MiB, &text, &len, &t, &err) < 0)
		fail_msg("%s", err.msg);
	assert_int_equal(t->nnodes, 3);
	assert_true(t->nodes[0].memory == 1024 * MiB && t->nodes[1].memory == 1024 * MiB);
	assert_true(t->nodes[2].memory == 0 && t->nodes[2].hotplug_memory == 256 * MiB);
	assert_int_equal(t->nodes[0].ncpus, 2);
	assert_string_equal(t->path, "hp.xml");
	/* The text says so too: it is the copy the guest dir keeps. */
	assert_int_equal(len, strlen(text));
	assert_non_null(strstr(text, "<node id=\"1\" cpus=\"2\" memory=\"1024M\"/>"));
	assert_non_null(strstr(text, "memory=\"0\" hotplug=\"256M\""));
	vn_topology_free(t);
}

/* The shipped CXL shape: its slow nodes stay slow at the new size; 1G+1M is no whole 128M blocks there. */
static void test_slow_nodes(void **state)
{
	const char *src = getenv("VN_SOURCE_DIR");
	char path[4096];
	_cleanup_free_ char *buf = NULL, *text = NULL;
	struct vn_topology *t = NULL;
	struct vn_error err = {0};
	size_t n = 0, len = 0;

	(void)state;
	assert_non_null(src);
	snprintf(path, sizeof(path), "%s/topologies/4node-cxl-tiered.xml", src);
	assert_int_equal(vn_file_read(path, 1 << 20, &buf, &n, &err), 0);
	if (vn_topology_node_memory(buf, n, path, 512 * MiB, &text, &len, &t, &err) < 0)
		fail_msg("%s", err.msg);
	for (unsigned i = 0; i < 4; i++)
		assert_true(t->nodes[i].memory == 512 * MiB);
	assert_int_equal(t->nodes[2].memory_kind, VN_MEMORY_CXL);
	assert_int_equal(t->nodes[3].memory_kind, VN_MEMORY_CXL);
	vn_topology_free(t);
	t = NULL;
	free(text);
	text = NULL;
	assert_int_equal(vn_topology_node_memory(buf, n, path, 1025 * MiB, &text, &len, &t, &err), -EINVAL);
	assert_int_equal(err.kind, VN_ERR_INPUT);
	assert_non_null(strstr(err.msg, "128M memory blocks"));
	assert_null(t);
	vn_error_clear(&err);
}

/* Under 128M, or not whole MiB: refused, nothing made. */
static void test_refused(void **state)
{
	struct vn_topology *t = NULL;
	char *text = NULL;
	struct vn_error err = {0};
	size_t len = 0;

	(void)state;
	assert_true(vn_topology_node_memory(hotplug_xml, strlen(hotplug_xml), "hp.xml", 64 * MiB, &text, &len, &t,
					    &err) < 0);
	assert_int_equal(err.kind, VN_ERR_INPUT);
	assert_non_null(strstr(err.msg, "under 128M"));
	vn_error_clear(&err);
	assert_true(vn_topology_node_memory(hotplug_xml, strlen(hotplug_xml), "hp.xml", 256 * MiB + 4096, &text, &len,
					    &t, &err) < 0);
	assert_non_null(strstr(err.msg, "whole number of MiB"));
	vn_error_clear(&err);
	assert_null(t);
	assert_null(text);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_sizes),
		cmocka_unit_test(test_slow_nodes),
		cmocka_unit_test(test_refused),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
