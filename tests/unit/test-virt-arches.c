/*
 * The domain XML of the other architectures (arm64 on virt, ppc64le on
 * pseries): golden files (VN_UPDATE_GOLDEN=1 rewrites them), each valid
 * against libvirt's own domain schema (/usr/share/libvirt/schemas/domain.rng,
 * the one virt-xml-validate uses: libvirt's test driver knows only x86 guests),
 * and what tells them apart from x86's.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <libxml/parser.h>
#include <libxml/relaxng.h>

#include "domain-schema.h"
#include "golden.h"
#include "testutil.h"
#include "topology/arch.h"
#include "util/cleanup.h"
#include "virt/domain-xml.h"

static const uint8_t dist4[] = {10, 12, 32, 32, 12, 10, 32, 32, 32, 32, 10, 12, 32, 32, 12, 10};

static struct vn_topology *four_nodes(void)
{
	struct vn_topology *t = calloc(1, sizeof(*t));
	struct vn_error err = {0};
	const char *cpus[] = {"0-1", "2-3", "4-5", "6-7"};

	assert_non_null(t);
	t->name = strdup("hand-made");
	t->nnodes = 4;
	for (unsigned i = 0; i < 4; i++) {
		t->nodes[i].id = i;
		assert_int_equal(vn_cpulist_parse(cpus[i], &t->nodes[i].cpus, &err), 0);
		t->nodes[i].ncpus = 2;
		t->nodes[i].memory = UINT64_C(256) << 20;
		for (unsigned j = 0; j < 4; j++)
			t->distance[i][j] = dist4[i * 4 + j];
	}
	t->ncpus_total = 8;
	t->distances_given = true;
	return t;
}

static char *build(enum vn_arch a)
{
	_cleanup_topology_ struct vn_topology *t = four_nodes();
	struct vn_domain_opts o = {
		.name = "vnuma-arch",
		.arch = a,
		.accel = VN_ACCEL_TCG,
		.kernel = "/state/cache/arches/x/root/boot/vmlinuz-test",
		.initrd = "/state/cache/initramfs-test.cpio.gz",
		.console_pipe = "/state/guests/g/console.pipe",
		.agent_socket = "/state/guests/g/agent.sock",
		.meta = {.topology_name = "hand-made", .topology_path = "/topologies/t.xml", .kernel_id = "stock"},
	};
	struct vn_error err = {0};
	char *xml = NULL;

	if (vn_domain_xml_build(t, &o, &xml, &err) < 0)
		fail_msg("build: %s", err.msg);
	return xml;
}

static void schema_valid(const char *xml)
{
	if (vn_test_domain_schema_check(xml) != 0)
		fail_msg("not valid against %s:\n%s", VN_TEST_DOMAIN_RNG, xml);
}

static void test_arm64(void **state)
{
	_cleanup_free_ char *xml = build(VN_ARCH_ARM64);

	vn_test_golden("domain", "arm64-4node.xml", xml, "generated XML");
	schema_valid(xml);
	assert_non_null(strstr(xml, "<type arch='aarch64' machine='virt'>hvm</type>"));
	/* A device tree, not ACPI: no firmware boots the kernel. */
	assert_null(strstr(xml, "<acpi/>"));
	assert_non_null(strstr(xml, "<gic version='3'/>"));
	assert_non_null(strstr(xml, "<model fallback='forbid'>cortex-a57</model>"));
	assert_non_null(strstr(xml, "console=ttyAMA0 panic=-1"));
	assert_non_null(strstr(xml, "<sibling id='2' value='32'/>"));
}

static void test_ppc64le(void **state)
{
	_cleanup_free_ char *xml = build(VN_ARCH_PPC64LE);

	vn_test_golden("domain", "ppc64le-4node.xml", xml, "generated XML");
	schema_valid(xml);
	assert_non_null(strstr(xml, "<type arch='ppc64le' machine='pseries'>hvm</type>"));
	assert_null(strstr(xml, "<acpi/>"));
	assert_null(strstr(xml, "<model"));
	assert_non_null(strstr(xml, "console=hvc0 panic=-1"));
	assert_non_null(strstr(xml, "<sibling id='1' value='12'/>"));
}

/* The x86 domain is still x86's, and the schema check can fail. */
static void test_x86_and_schema(void **state)
{
	_cleanup_free_ char *xml = build(VN_ARCH_X86_64);

	schema_valid(xml);
	assert_non_null(strstr(xml, "<type arch='x86_64' machine='q35'>hvm</type>"));
	assert_non_null(strstr(xml, "console=ttyS0 panic=-1"));
	_cleanup_free_ char *bad = strdup(xml);
	memcpy(strstr(bad, "<acpi/>"), "<acpx/>", 7); /* well-formed, not a libvirt feature */
	assert_int_not_equal(vn_test_domain_schema_check(bad), 0);
}

/* The model's boot-time state per architecture: only pseries sees CPUs in nodes. */
static void test_fallback_state(void **state)
{
	struct vn_fallback_opts o = VN_FALLBACK_OPTS_DEFAULT;

	vn_topology_arch_fallback(VN_ARCH_X86_64, &o);
	assert_false(o.cpus_visible);
	vn_topology_arch_fallback(VN_ARCH_ARM64, &o);
	assert_false(o.cpus_visible);
	vn_topology_arch_fallback(VN_ARCH_PPC64LE, &o);
	assert_true(o.cpus_visible);
}

static void test_arch_parse(void **state)
{
	struct vn_error err = {0};
	enum vn_arch a;

	assert_int_equal(vn_arch_parse("aarch64", "--arch", &a, &err), 0);
	assert_int_equal(a, VN_ARCH_ARM64);
	assert_int_equal(vn_arch_parse("ppc64el", "--arch", &a, &err), 0);
	assert_int_equal(a, VN_ARCH_PPC64LE);
	assert_int_equal(vn_arch_parse("amd64", "--arch", &a, &err), 0);
	assert_int_equal(a, VN_ARCH_X86_64);
	assert_true(vn_arch_parse("riscv64", "--arch", &a, &err) < 0);
	assert_string_equal(err.msg, "--arch: 'riscv64': expected x86_64, arm64 or ppc64le");
	vn_error_clear(&err);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_arm64),          cmocka_unit_test(test_ppc64le),
		cmocka_unit_test(test_x86_and_schema), cmocka_unit_test(test_fallback_state),
		cmocka_unit_test(test_arch_parse),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
