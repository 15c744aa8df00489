/*
 * Domain XML builder: golden files (VN_UPDATE_GOLDEN=1 rewrites them), the
 * memory-less address math, and a round trip through libvirt's test driver.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <libxml/parser.h>
#include <libxml/xpath.h>
#include <libvirt/libvirt.h>
#include <libvirt/virterror.h>

#include "domain-schema.h"
#include "golden.h"
#include "testutil.h"
#include "util/cleanup.h"
#include "virt/domain-xml-parse.h"
#include "virt/domain-xml.h"

#define MiB (UINT64_C(1) << 20)

/* nodes given as cpulists ("" = CPU-less) and MiB; distances row-major or NULL for 10/20. */
static struct vn_topology *mk(unsigned n, const char *const *cpus, const uint64_t *mib, const uint8_t *dist)
{
	struct vn_topology *t = calloc(1, sizeof(*t));
	struct vn_error err = {0};

	assert_non_null(t);
	t->name = strdup("hand-made");
	t->nnodes = n;
	for (unsigned i = 0; i < n; i++) {
		t->nodes[i].id = i;
		assert_int_equal(vn_cpulist_parse(cpus[i], &t->nodes[i].cpus, &err), 0);
		t->nodes[i].ncpus = vn_cpuset_count(&t->nodes[i].cpus);
		t->ncpus_total += t->nodes[i].ncpus;
		t->nodes[i].memory = mib[i] * MiB;
		for (unsigned j = 0; j < n; j++)
			t->distance[i][j] = dist ? dist[i * n + j] : (i == j ? 10 : 20);
	}
	t->distances_given = dist != NULL;
	return t;
}

static struct vn_domain_opts base_opts(const char *name)
{
	return (struct vn_domain_opts){
		.name = name,
		.accel = VN_ACCEL_TCG,
		.kernel = "/boot/vmlinuz-test",
		.initrd = "/boot/initrd-test",
		.cmdline = "quiet",
		.console_pipe = "/state/guests/g/console.pipe",
		.agent_socket = "/state/guests/g/agent.sock",
		.meta = {.topology_name = "hand-made", .topology_path = "/topologies/t.xml", .kernel_id = "6.1.0-test"},
	};
}

static void golden(const char *file, const char *got)
{
	vn_test_golden("domain", file, got, "generated XML");
}

static char *build_ok(const struct vn_topology *t, const struct vn_domain_opts *o)
{
	struct vn_error err = {0};
	char *xml = NULL;

	int rc = vn_domain_xml_build(t, o, &xml, &err);
	if (rc < 0)
		fail_msg("build failed: %s", err.msg);
	return xml;
}

static void test_2node(void **state)
{
	const char *cpus[] = {"0-1", "2-3"};
	const uint64_t mem[] = {512, 512};
	struct vn_topology *t = mk(2, cpus, mem, NULL);
	struct vn_domain_opts o = base_opts("vnuma-2node");
	_cleanup_free_ char *xml = build_ok(t, &o);

	golden("2node.xml", xml);
	assert_non_null(strstr(xml, "<topology sockets='2' dies='1' cores='2' threads='1'/>"));
	assert_non_null(strstr(xml, "<acpi/>"));
	assert_null(strstr(xml, "<loader"));
	/* The PVH path: a firmware ROM in place of SeaBIOS, before the kernel. */
	o.loader = "/usr/share/qemu/qboot.rom";
	_cleanup_free_ char *pvh = build_ok(t, &o);
	assert_non_null(strstr(pvh, "<type arch='x86_64' machine='q35'>hvm</type>\n    <loader readonly='yes' "
				    "type='rom'>/usr/share/qemu/qboot.rom</loader>\n    <kernel>"));
	vn_topology_free(t);
}

static void test_4node_kvm(void **state)
{
	const char *cpus[] = {"0-1", "2-3", "4-5", "6-7"};
	const uint64_t mem[] = {256, 256, 256, 256};
	const uint8_t d[] = {10, 12, 32, 32, 12, 10, 32, 32, 32, 32, 10, 12, 32, 32, 12, 10};
	struct vn_topology *t = mk(4, cpus, mem, d);
	struct vn_domain_opts o = base_opts("vnuma-4node");
	o.accel = VN_ACCEL_KVM;
	o.uuid = "5e3b4c1a-9f0e-4a57-b1e2-0c7d5a3f9e11";
	o.emulator = "/usr/bin/qemu-system-x86_64";
	_cleanup_free_ char *xml = build_ok(t, &o);

	golden("4node-10-12-32.xml", xml);
	assert_non_null(strstr(xml, "<domain type='kvm'>"));
	assert_non_null(strstr(xml, "host-passthrough"));
	vn_topology_free(t);
}

static void test_cpuless_hmat(void **state)
{
	const char *cpus[] = {"0-1", "2-3", ""};
	const uint64_t mem[] = {512, 512, 1024};
	const uint8_t d[] = {10, 20, 17, 20, 10, 28, 17, 28, 10};
	struct vn_topology *t = mk(3, cpus, mem, d);
	vn_test_cxl_hmat(t);
	struct vn_domain_opts o = base_opts("vnuma-cxl");
	_cleanup_free_ char *xml = build_ok(t, &o);

	golden("cpuless-hmat.xml", xml);
	assert_non_null(strstr(xml, "<cell id='2' memory='1048576' unit='KiB'>"));
	/* 5000 MB/s as QEMU/ACPI count it (MiB/s) is 5120000 KiB/s. */
	assert_non_null(strstr(xml, "target='2' type='access' value='5120000' unit='KiB'"));
	vn_topology_free(t);
}

static void test_memless(void **state)
{
	const char *cpus[] = {"0-1", "2-3"};
	const uint64_t mem[] = {512, 0};
	struct vn_topology *t = mk(2, cpus, mem, NULL);
	struct vn_domain_opts o = base_opts("vnuma-memless");
	_cleanup_free_ char *xml = build_ok(t, &o);

	golden("memless.xml", xml);
	assert_non_null(strstr(xml, "<cell id='1' cpus='2-3' memory='2048' unit='KiB'>"));
	assert_non_null(strstr(xml, "memmap=2048K$0x20000000"));
	vn_topology_free(t);
}

/* A slow node boots memory-less and gets its memory from an NVDIMM of memory + one block (docs/tiering.md). */
static void test_slow_node(void **state)
{
	const char *cpus[] = {"0-1", ""};
	const uint64_t mem[] = {512, 256};
	struct vn_topology *t = mk(2, cpus, mem, NULL);
	t->nodes[1].memory_kind = VN_MEMORY_CXL;
	struct vn_domain_opts o = base_opts("vnuma-slow");
	o.disk_dir = "/g";
	_cleanup_free_ char *xml = build_ok(t, &o);

	assert_non_null(strstr(xml, "<cell id='1' memory='2048' unit='KiB'>"));
	assert_non_null(strstr(xml, "memmap=2048K$0x20000000"));
	/*
	 * 512M + 2M cells, + 384M of NVDIMM; one slot more than hotplug's. <pmem/>: libvirt
	 * preallocates a file-backed NVDIMM without it (all 384M touched before boot).
	 */
	assert_non_null(strstr(xml, "<maxMemory slots='17' unit='KiB'>919552</maxMemory>"));
	assert_non_null(strstr(xml, "<memory unit='KiB'>526336</memory>"));
	assert_non_null(
		strstr(xml, "<memory model='nvdimm'>\n      <source>\n        <path>/g/disk-node1-pmem.img</path>\n"
			    "        <pmem/>\n      </source>\n      <target>\n        <size unit='KiB'>393216</size>\n"
			    "        <node>1</node>\n"));
	vn_topology_free(t);
}

/*
 * Two DRAM nodes and two slow ones (4node-cxl-tiered): the stand-ins grow to
 * 128M, reserved all the same, so that the NVDIMMs' locality addresses start
 * past the DRAM cells' (docs/locality.md, "Tiered shapes").
 */
static void test_slow_standin(void **state)
{
	const char *cpus[] = {"0-1", "2-3", "", ""};
	const uint64_t mem[] = {256, 256, 256, 256};
	struct vn_topology *t = mk(4, cpus, mem, NULL);
	t->nodes[2].memory_kind = VN_MEMORY_CXL;
	t->nodes[3].memory_kind = VN_MEMORY_CXL;
	struct vn_domain_opts o = base_opts("vnuma-standin");
	o.disk_dir = "/g";
	_cleanup_free_ char *xml = build_ok(t, &o);

	assert_non_null(strstr(xml, "<cell id='2' memory='131072' unit='KiB'>"));
	assert_non_null(strstr(xml, "<cell id='3' memory='131072' unit='KiB'>"));
	assert_non_null(strstr(xml, "memmap=131072K$0x20000000 memmap=131072K$0x28000000"));
	/* 768M of cells, + 2 x 384M of NVDIMM. */
	assert_non_null(strstr(xml, "<memory unit='KiB'>786432</memory>"));
	assert_non_null(strstr(xml, "<maxMemory slots='18' unit='KiB'>1572864</maxMemory>"));
	vn_topology_free(t);
	(void)state;
}

static void test_memless_ranges(void **state)
{
	struct vn_error err = {0};
	struct vn_gpa_range r[2];
	unsigned n;
	_cleanup_free_ char *extra = NULL;

	/* 2815 MiB + dummy: total 2817 MiB >= 2816, so lowmem is 2 GiB and the dummy lands above 4 GiB. */
	const char *cpus[] = {"0", "1"};
	const uint64_t mem[] = {2815, 0};
	struct vn_topology *t = mk(2, cpus, mem, NULL);
	assert_int_equal(vn_domain_cell_ranges(t, 1, r, &n, &err), 0);
	assert_int_equal(n, 1);
	assert_int_equal(r[0].start, (UINT64_C(4) << 30) + (2815 - 2048) * MiB);
	assert_int_equal(r[0].size, 2 * MiB);

	/* A dummy straddling 2 GiB is split around the PCI hole. */
	const char *cpus3[] = {"0", "1", "2"};
	const uint64_t mem3[] = {2047, 0, 1024};
	struct vn_topology *t3 = mk(3, cpus3, mem3, NULL);
	assert_int_equal(vn_domain_cell_ranges(t3, 1, r, &n, &err), 0);
	assert_int_equal(n, 2);
	assert_int_equal(r[0].start, 2047 * MiB);
	assert_int_equal(r[0].size, MiB);
	assert_int_equal(r[1].start, UINT64_C(4) << 30);
	assert_int_equal(r[1].size, MiB);
	assert_int_equal(vn_domain_cmdline_extra(t3, VN_ARCH_X86_64, &extra, &err), 0);
	assert_string_equal(extra, "console=ttyS0 panic=-1 memmap=1024K$0x7ff00000 memmap=1024K$0x100000000");

	/* A node 0 without memory never gets here: the topology parser refuses it (tests/topology-bad). */
	vn_topology_free(t);
	vn_topology_free(t3);
}

static void test_cpu_layout(void **state)
{
	struct vn_error err = {0};
	struct vn_cpu_layout l;

	const char *uneq[] = {"0-2", "3"};
	const uint64_t mem[] = {256, 256};
	struct vn_topology *t = mk(2, uneq, mem, NULL);
	assert_int_equal(vn_domain_cpu_layout(t, &l, &err), 0);
	assert_int_equal(l.sockets, 4);
	assert_int_equal(l.cores, 1);
	vn_topology_free(t);

	const char *even[] = {"0-3", "4-7"};
	t = mk(2, even, mem, NULL);
	assert_int_equal(vn_domain_cpu_layout(t, &l, &err), 0);
	assert_int_equal(l.sockets, 2);
	assert_int_equal(l.cores, 4);
	vn_topology_free(t);

	/* 4+2: sockets of two cores keep every socket inside a node. */
	const char *six[] = {"0-3", "4-5"};
	t = mk(2, six, mem, NULL);
	assert_int_equal(vn_domain_cpu_layout(t, &l, &err), 0);
	assert_int_equal(l.sockets, 3);
	assert_int_equal(l.cores, 2);
	vn_topology_free(t);

	/* Interleaved numbering: only single-CPU sockets avoid spanning nodes. */
	const char *inter[] = {"0,2", "1,3"};
	t = mk(2, inter, mem, NULL);
	assert_int_equal(vn_domain_cpu_layout(t, &l, &err), 0);
	assert_int_equal(l.sockets, 4);
	vn_topology_free(t);

	t = mk(2, even, mem, NULL);
	t->cpu_topology_given = true;
	t->sockets = 2, t->dies = 1, t->cores = 2, t->threads = 2;
	assert_int_equal(vn_domain_cpu_layout(t, &l, &err), 0);
	assert_int_equal(l.threads, 2);
	vn_topology_free(t);
}

static void test_escaping(void **state)
{
	const char *cpus[] = {"0"};
	const uint64_t mem[] = {256};
	struct vn_topology *t = mk(1, cpus, mem, NULL);
	struct vn_domain_opts o = base_opts("a&b<c>'d\"e");
	o.kernel = "/k/it's & <weird>";
	o.cmdline = "foo='bar & baz'";
	o.meta.topology_path = "/t/<&'\">.xml";
	_cleanup_free_ char *xml = build_ok(t, &o);

	golden("escaping.xml", xml);
	assert_non_null(strstr(xml, "<name>a&amp;b&lt;c&gt;&apos;d&quot;e</name>"));

	/* The metadata element parses back to the original strings. */
	const char *m0 = strstr(xml, "<vnuma:vnuma");
	const char *m1 = strstr(xml, "</vnuma:vnuma>");
	assert_non_null(m0);
	_cleanup_free_ char *meta = strndup(m0, (size_t)(m1 - m0) + strlen("</vnuma:vnuma>"));
	struct vn_domain_meta md;
	struct vn_error err = {0};
	assert_int_equal(vn_domain_meta_parse(meta, &md, &err), 0);
	assert_string_equal(md.topology_path, "/t/<&'\">.xml");
	assert_string_equal(md.kernel, "/k/it's & <weird>");
	assert_string_equal(md.accel, "tcg");
	vn_domain_meta_clear(&md);

	char *bad = NULL;
	o.name = "line\nbreak";
	assert_int_equal(vn_domain_xml_build(t, &o, &bad, &err), -EINVAL);
	assert_null(bad);
	vn_topology_free(t);
}

/* 4node-io's shape: a disk on node 2, a NIC and a second disk on node 3. */
static struct vn_topology *mk_io(void)
{
	const char *cpus[] = {"0", "1", "2", "3"};
	const uint64_t mem[] = {256, 256, 256, 256};
	const uint8_t d[] = {10, 12, 32, 32, 12, 10, 32, 32, 32, 32, 10, 12, 32, 32, 12, 10};
	struct vn_topology *t = mk(4, cpus, mem, d);

	t->nodes[2].devices[0] = (struct vn_device){.kind = VN_DEVICE_DISK, .size = 64 * MiB};
	t->nodes[2].ndevices = 1;
	t->nodes[3].devices[0] = (struct vn_device){.kind = VN_DEVICE_NIC};
	t->nodes[3].devices[1] = (struct vn_device){.kind = VN_DEVICE_DISK, .size = 1024 * MiB};
	t->nodes[3].ndevices = 2;
	t->ndevices_total = 3;
	return t;
}

static void test_devices(void **state)
{
	struct vn_topology *t = mk_io();
	struct vn_domain_opts o = base_opts("vnuma-io");
	struct vn_error err = {0};
	char *bad = NULL;

	assert_int_equal(vn_domain_xml_build(t, &o, &bad, &err), -EINVAL);
	assert_non_null(strstr(err.msg, "node 2 has a disk"));
	assert_null(bad);
	vn_error_clear(&err);
	o.disk_dir = "/state/guests/g";
	_cleanup_free_ char *xml = build_ok(t, &o);
	golden("devices.xml", xml);
	assert_non_null(strstr(xml, "<target busNr='128'>\n        <node>2</node>"));
	assert_non_null(strstr(xml, "<target busNr='136'>\n        <node>3</node>"));
	assert_non_null(strstr(xml, "<source file='/state/guests/g/disk-node3-1.img'/>"));
	_cleanup_free_ char *img = vn_domain_disk_image("/d", 2, 0);
	assert_string_equal(img, "/d/disk-node2-0.img");
	vn_topology_free(t);
}

/* A root disk (up --image) is vda on pcie-root; the topology's disks follow as vdb, vdc. */
static void test_root_disk(void **state)
{
	struct vn_topology *t = mk_io();
	struct vn_domain_opts o = base_opts("vnuma-root");

	o.disk_dir = "/state/guests/g";
	o.root_disk = "/state/guests/g/root.qcow2";
	_cleanup_free_ char *xml = build_ok(t, &o);
	golden("root-disk.xml", xml);
	assert_non_null(strstr(xml, "<driver name='qemu' type='qcow2'/>\n      <source "
				    "file='/state/guests/g/root.qcow2'/>\n      <target dev='vda' bus='virtio'/>"));
	assert_non_null(strstr(xml, "disk-node2-0.img'/>\n      <target dev='vdb'"));
	assert_non_null(strstr(xml, "disk-node3-1.img'/>\n      <target dev='vdc'"));
	vn_topology_free(t);

	/* root='yes' on the topology's first disk: the image's overlay is that disk, on node 2's expander. */
	t = mk_io();
	t->nodes[2].devices[0].root = true;
	_cleanup_free_ char *on_node = build_ok(t, &o);
	assert_null(strstr(on_node, "disk-node2-0.img"));
	assert_non_null(strstr(on_node, "<driver name='qemu' type='qcow2'/>\n      <source "
					"file='/state/guests/g/root.qcow2'/>\n      <target dev='vda' bus='virtio'/>\n"
					"      <address type='pci' domain='0x0000' bus='0x02'"));
	assert_non_null(strstr(on_node, "disk-node3-1.img'/>\n      <target dev='vdb'"));
	assert_null(strstr(strstr(on_node, "root.qcow2") + 1, "root.qcow2")); /* not on pcie-root as well */
	vn_topology_free(t);
}

/* The kernel's modules tree is a read-only 9p share on pcie-root, the tag the guest's modprobe mounts. */
static void test_modules_share(void **state)
{
	struct vn_topology *t = mk_io();
	struct vn_domain_opts o = base_opts("vnuma-mods");

	o.disk_dir = "/state/guests/g";
	_cleanup_free_ char *none = build_ok(t, &o);
	assert_null(strstr(none, "<filesystem"));
	o.modules_share = "/lib/modules/6.1.0-57-amd64";
	_cleanup_free_ char *xml = build_ok(t, &o);
	assert_non_null(strstr(xml, "<filesystem type='mount' accessmode='passthrough'>\n      <source "
				    "dir='/lib/modules/6.1.0-57-amd64'/>\n      <target dir='vnuma-modules'/>\n"
				    "      <readonly/>\n    </filesystem>\n"));
	vn_topology_free(t);
}

static void silent(void *ud, virErrorPtr e)
{
}

/* Define xml on libvirt's test driver, checked against its schema, and return what it writes back. */
static char *roundtrip(const char *xml, virConnectPtr *c, virDomainPtr *dom)
{
	virSetErrorFunc(NULL, silent);
	*c = virConnectOpen("test:///default");
	assert_non_null(*c);
	*dom = virDomainDefineXMLFlags(*c, xml, VIR_DOMAIN_DEFINE_VALIDATE);
	if (!*dom)
		fail_msg("define: %s", virGetLastErrorMessage());
	char *back = virDomainGetXMLDesc(*dom, 0);
	assert_non_null(back);
	return back;
}

static void roundtrip_end(virConnectPtr c, virDomainPtr dom)
{
	virDomainUndefine(dom);
	virDomainFree(dom);
	virConnectClose(c);
}

/* libvirt's test driver parses and re-serialises like the real one, without a daemon. */
static void test_libvirt_roundtrip(void **state)
{
	const char *cpus[] = {"0-1", "2-3", "4-5", ""};
	const uint64_t mem[] = {256, 256, 0, 512};
	const uint8_t d[] = {10, 12, 32, 40, 12, 10, 32, 40, 32, 32, 10, 12, 41, 42, 13, 10};
	struct vn_topology *t = mk(4, cpus, mem, d);
	struct vn_hmat_entry h[] = {{.initiator = 0, .target = 3, .type = VN_HMAT_LATENCY, .value = 300},
				    {.initiator = 0, .target = 3, .type = VN_HMAT_BANDWIDTH, .value = 4000}};
	t->hmat = malloc(sizeof(h));
	memcpy(t->hmat, h, sizeof(h));
	t->nhmat = 2;
	struct vn_domain_opts o = base_opts("vnuma-roundtrip");
	o.agent_socket = NULL; /* the test driver does not do unix channels' paths checks, but keep it minimal */
	_cleanup_free_ char *xml = build_ok(t, &o);

	virConnectPtr c;
	virDomainPtr dom;
	char *back = roundtrip(xml, &c, &dom);
	assert_non_null(strstr(back, "<cell id='0' cpus='0-1' memory='262144' unit='KiB'>"));
	assert_non_null(strstr(back, "<cell id='3' memory='524288' unit='KiB'>"));
	assert_non_null(strstr(back, "<sibling id='1' value='42'/>"));
	assert_non_null(strstr(back, "<sibling id='2' value='13'/>"));
	assert_non_null(strstr(back, "<latency initiator='0' target='3' type='access' value='300'/>"));
	assert_non_null(strstr(back, "<bandwidth initiator='0' target='3' type='access' value='4096000' unit='KiB'/>"));
	assert_non_null(strstr(back, "memmap=2048K$0x20000000"));
	assert_non_null(strstr(back, "<acpi/>"));

	char *meta = virDomainGetMetadata(dom, VIR_DOMAIN_METADATA_ELEMENT, VN_XMLNS, 0);
	assert_non_null(meta);
	struct vn_domain_meta md;
	struct vn_error err = {0};
	if (vn_domain_meta_parse(meta, &md, &err) < 0)
		fail_msg("%s: %s", err.msg, meta);
	assert_string_equal(md.topology_name, "hand-made");
	assert_string_equal(md.kernel_id, "6.1.0-test");
	vn_domain_meta_clear(&md);
	free(meta);
	free(back);
	roundtrip_end(c, dom);
	vn_topology_free(t);
}

/*
 * Passthrough arguments (-icount, -plugin): the qemu namespace appears only
 * when there are some, libvirt's schema takes them and writes them back in
 * order, and a control character or too many are refused.
 */
static void test_qemu_args(void **state)
{
	const uint64_t mib[] = {256, 256};
	struct vn_topology *t = vn_test_two_nodes(mib);
	struct vn_domain_opts o = base_opts("vnuma-qemu-args");
	_cleanup_free_ char *plain = build_ok(t, &o);
	assert_null(strstr(plain, "xmlns:qemu"));

	const char *args[] = {"-icount", "shift=5,sleep=off", "-plugin", "/usr/lib/x/p.so,map=a&b"};
	o.qemu_args = args;
	o.nqemu_args = VN_ARRAY_SIZE(args);
	o.agent_socket = NULL;
	_cleanup_free_ char *xml = build_ok(t, &o);
	golden("qemu-args.xml", xml);
	/* libvirt's test driver drops other drivers' namespaces: its schema is the check here. */
	assert_int_equal(vn_test_domain_schema_check(xml), 0);
	assert_non_null(strstr(xml, "<qemu:commandline>\n    <qemu:arg value='-icount'/>\n    <qemu:arg "
				    "value='shift=5,sleep=off'/>\n    <qemu:arg value='-plugin'/>\n    <qemu:arg "
				    "value='/usr/lib/x/p.so,map=a&amp;b'/>\n  </qemu:commandline>\n</domain>\n"));
	/* The check can fail: an element the namespace does not have. */
	_cleanup_free_ char *wrong = strdup(xml);
	memcpy(strstr(wrong, "<qemu:arg value='-icount'/>"), "<qemu:xyz", 9);
	assert_int_not_equal(vn_test_domain_schema_check(wrong), 0);

	struct vn_error err = {0};
	char *bad = NULL;
	const char *ctl[] = {"-icount", "shift=5\n-bios x"};
	o.qemu_args = ctl;
	o.nqemu_args = 2;
	assert_int_equal(vn_domain_xml_build(t, &o, &bad, &err), -EINVAL);
	assert_non_null(strstr(err.msg, "extra QEMU argument contains a control character"));
	vn_error_clear(&err);
	o.nqemu_args = VN_DOMAIN_MAX_QEMU_ARGS + 1;
	assert_int_equal(vn_domain_xml_build(t, &o, &bad, &err), -EINVAL);
	assert_null(bad);
	vn_error_clear(&err);
	vn_topology_free(t);
}

/* The expander buses, root ports and devices as libvirt's parser (and its schema) takes them. */
static void test_libvirt_roundtrip_devices(void **state)
{
	struct vn_topology *t = mk_io();
	struct vn_domain_opts o = base_opts("vnuma-roundtrip-io");
	o.agent_socket = NULL;
	o.disk_dir = "/state/guests/g";
	_cleanup_free_ char *xml = build_ok(t, &o);

	virConnectPtr c;
	virDomainPtr dom;
	char *back = roundtrip(xml, &c, &dom);
	assert_non_null(strstr(back, "model='pcie-expander-bus'"));
	assert_non_null(strstr(back, "<node>2</node>"));
	assert_non_null(strstr(back, "<node>3</node>"));
	assert_non_null(strstr(back, "<interface type='user'>"));
	assert_non_null(strstr(back, "<source file='/state/guests/g/disk-node2-0.img'/>"));
	assert_non_null(strstr(back, "<target dev='vdb' bus='virtio'/>"));
	free(back);
	roundtrip_end(c, dom);
	vn_topology_free(t);
}

/* The text of XPath expr (a string() or count() one) over doc, malloc'd. */
static char *xpath_str(xmlDoc *doc, const char *expr)
{
	xmlXPathContext *ctx = xmlXPathNewContext(doc);
	xmlXPathObject *r = xmlXPathEvalExpression((const xmlChar *)expr, ctx);
	assert_non_null(r);
	xmlChar *s = xmlXPathCastToString(r);
	char *out = strdup((const char *)s);
	xmlFree(s);
	xmlXPathFreeObject(r);
	xmlXPathFreeContext(ctx);
	return out;
}

static void assert_xpath(xmlDoc *doc, const char *expr, const char *want)
{
	_cleanup_free_ char *got = xpath_str(doc, expr);
	if (strcmp(got, want) != 0)
		fail_msg("%s: '%s', want '%s'", expr, got, want);
}

/*
 * Shares: one 9p <filesystem> each, read-only on the host side unless rw,
 * as libvirt reads them back; the NUMA cells and memory backing untouched
 * (no shared memory, which virtiofs would need); bad ones refused.
 */
static void test_shares(void **state)
{
	const char *cpus[] = {"0-1", "2-3"};
	const uint64_t mem[] = {256, 256};
	struct vn_topology *t = mk(2, cpus, mem, NULL);
	struct vn_domain_share sh[] = {{.source = "/srv/tests", .guest_dir = "/mnt/host/tests"},
				       {.source = "/srv/o'ut", .guest_dir = "/out", .rw = true}};
	struct vn_domain_opts o = base_opts("vnuma-share");
	o.agent_socket = NULL;
	o.shares = sh;
	o.nshares = 2;
	_cleanup_free_ char *xml = build_ok(t, &o);

	virConnectPtr c;
	virDomainPtr dom;
	char *back = roundtrip(xml, &c, &dom);
	xmlDoc *doc = xmlReadMemory(back, (int)strlen(back), "back.xml", NULL, XML_PARSE_NONET);
	assert_non_null(doc);
	assert_xpath(doc, "count(/domain/devices/filesystem)", "2");
	assert_xpath(doc, "string(/domain/devices/filesystem[1]/@type)", "mount");
	assert_xpath(doc, "string(/domain/devices/filesystem[1]/@accessmode)", "mapped");
	assert_xpath(doc, "string(/domain/devices/filesystem[1]/source/@dir)", "/srv/tests");
	assert_xpath(doc, "string(/domain/devices/filesystem[1]/target/@dir)", "vnshare0");
	assert_xpath(doc, "count(/domain/devices/filesystem[1]/readonly)", "1");
	assert_xpath(doc, "string(/domain/devices/filesystem[2]/source/@dir)", "/srv/o'ut");
	assert_xpath(doc, "string(/domain/devices/filesystem[2]/target/@dir)", "vnshare1");
	assert_xpath(doc, "count(/domain/devices/filesystem[2]/readonly)", "0");
	assert_xpath(doc, "count(/domain/devices/filesystem/driver[@type='virtiofs'])", "0");
	assert_xpath(doc, "count(/domain/memoryBacking)", "0");
	assert_xpath(doc, "count(/domain/cpu/numa/cell)", "2");
	assert_xpath(doc, "count(/domain/cpu/numa/cell[@memAccess])", "0");
	assert_xpath(doc, "string(/domain/cpu/numa/cell[2]/@memory)", "262144");
	xmlFreeDoc(doc);
	free(back);
	roundtrip_end(c, dom);

	struct vn_error err = {0};
	char *bad = NULL;
	struct vn_domain_share many[VN_DOMAIN_MAX_SHARES + 1];
	for (unsigned i = 0; i <= VN_DOMAIN_MAX_SHARES; i++)
		many[i] = (struct vn_domain_share){.source = "/srv", .guest_dir = "/g"};
	o.shares = many;
	o.nshares = VN_DOMAIN_MAX_SHARES + 1;
	assert_int_equal(vn_domain_xml_build(t, &o, &bad, &err), -EINVAL);
	assert_non_null(strstr(err.msg, "at most 8"));
	vn_error_clear(&err);
	struct vn_domain_share rel = {.source = "srv", .guest_dir = "/g"};
	o.shares = &rel;
	o.nshares = 1;
	assert_true(vn_domain_xml_build(t, &o, &bad, &err) < 0);
	assert_non_null(strstr(err.msg, "not an absolute path"));
	vn_error_clear(&err);
	o.shares = sh;
	o.streams = true;
	assert_true(vn_domain_xml_build(t, &o, &bad, &err) < 0);
	assert_non_null(strstr(err.msg, "another host"));
	vn_error_clear(&err);
	assert_null(bad);
	vn_topology_free(t);
}

/* The seed's 4-node machine, node 3 memory-less at boot with 512M and a second vCPU to plug in. */
static struct vn_topology *mk_hotplug(void)
{
	const char *cpus[] = {"0", "1", "2", "3-4"};
	const uint64_t mem[] = {256, 256, 256, 0};
	const uint8_t d[] = {10, 12, 32, 32, 12, 10, 32, 32, 32, 32, 10, 12, 32, 32, 12, 10};
	struct vn_topology *t = mk(4, cpus, mem, d);

	t->nodes[3].hotplug_memory = 512 * MiB;
	t->hotplug_memory_total = 512 * MiB;
	vn_cpuset_set(&t->nodes[3].hotplug_cpus, 4);
	t->nodes[3].nhotplug_cpus = 1;
	t->nhotplug_cpus_total = 1;
	return t;
}

static void test_hotplug(void **state)
{
	struct vn_topology *t = mk_hotplug();
	struct vn_domain_opts o = base_opts("vnuma-hotplug");
	_cleanup_free_ char *xml = build_ok(t, &o);

	golden("hotplug.xml", xml);
	/* 768M + 2M of cells and 512M to come. */
	assert_non_null(strstr(xml, "<maxMemory slots='16' unit='KiB'>1312768</maxMemory>"));
	assert_non_null(strstr(xml, "<vcpu placement='static' current='4'>5</vcpu>"));
	assert_non_null(strstr(xml, "<vcpu id='4' enabled='no' hotpluggable='yes'/>"));
	/* Memory-less at boot, as before: the 2 MiB stand-in and its reservation. */
	assert_non_null(strstr(xml, "<cell id='3' cpus='3-4' memory='2048' unit='KiB'>"));
	assert_non_null(strstr(xml, "memmap=2048K$0x30000000"));

	virConnectPtr c;
	virDomainPtr dom;
	o.agent_socket = NULL;
	_cleanup_free_ char *plain = build_ok(t, &o);
	char *back = roundtrip(plain, &c, &dom);
	assert_non_null(strstr(back, "<maxMemory slots='16' unit='KiB'>1312768</maxMemory>"));
	assert_non_null(strstr(back, "<vcpu placement='static' current='4'>5</vcpu>"));
	assert_non_null(strstr(back, "<vcpu id='4' enabled='no' hotpluggable='yes'"));
	free(back);
	roundtrip_end(c, dom);
	vn_topology_free(t);
}

/* What libvirt writes back for a live domain after two DIMMs and a vCPU were plugged. */
static void test_live_xml_parse(void **state)
{
	static const char live[] =
		"<domain type='qemu' id='1'><name>g</name><vcpu placement='static' current='5'>5</vcpu>"
		"<vcpus><vcpu id='0' enabled='yes' hotpluggable='no' order='1'/>"
		"<vcpu id='3' enabled='yes' hotpluggable='no' order='4'/>"
		"<vcpu id='4' enabled='no' hotpluggable='yes'/><vcpu id='x' enabled='yes'/></vcpus>"
		"<devices><memory model='dimm'><target><size unit='KiB'>262144</size><node>3</node></target>"
		"<alias name='dimm0'/><address type='dimm' slot='0' base='0x100000000'/></memory>"
		"<memory model='nvdimm'><target><size unit='KiB'>1024</size><node>1</node></target></memory>"
		"<memory model='dimm'><target><size unit='KiB'>131072</size><node>2</node></target>"
		"<alias name='dimm1'/><address type='dimm' slot='1' base='0x150000000'/></memory>"
		"</devices></domain>";
	struct vn_domain_dimm d[4];
	struct vn_cpuset on;
	struct vn_error err = {0};

	assert_int_equal(vn_domain_dimms_parse(live, d, 4, &err), 2);
	assert_string_equal(d[0].alias, "dimm0");
	assert_int_equal(d[0].node, 3);
	assert_true(d[0].bytes == 256 * MiB);
	assert_true(d[0].base == UINT64_C(0x100000000));
	assert_string_equal(d[1].alias, "dimm1");
	assert_int_equal(d[1].node, 2);
	assert_int_equal(vn_domain_dimms_parse(live, d, 1, &err), 1);
	assert_int_equal(vn_domain_vcpus_parse(live, &on, &err), 0);
	assert_true(vn_cpuset_has(&on, 0) && vn_cpuset_has(&on, 3));
	assert_false(vn_cpuset_has(&on, 4));
	assert_int_equal(vn_cpuset_count(&on), 2);
	/* Without <vcpus> every vCPU is there. */
	assert_int_equal(vn_domain_vcpus_parse("<domain><vcpu>3</vcpu></domain>", &on, &err), 0);
	assert_int_equal(vn_cpuset_count(&on), 3);
	assert_int_equal(vn_domain_dimms_parse("<domain", d, 4, &err), -EINVAL);
	vn_error_clear(&err);

	_cleanup_free_ char *x = vn_domain_dimm_xml(3, 512 * MiB);
	assert_string_equal(x, "<memory model='dimm'>\n  <target>\n    <size unit='KiB'>524288</size>\n"
			       "    <node>3</node>\n  </target>\n</memory>\n");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_2node),          cmocka_unit_test(test_4node_kvm),
		cmocka_unit_test(test_cpuless_hmat),   cmocka_unit_test(test_memless),
		cmocka_unit_test(test_slow_node),      cmocka_unit_test(test_slow_standin),
		cmocka_unit_test(test_memless_ranges), cmocka_unit_test(test_cpu_layout),
		cmocka_unit_test(test_escaping),       cmocka_unit_test(test_libvirt_roundtrip),
		cmocka_unit_test(test_devices),        cmocka_unit_test(test_libvirt_roundtrip_devices),
		cmocka_unit_test(test_hotplug),        cmocka_unit_test(test_live_xml_parse),
		cmocka_unit_test(test_root_disk),      cmocka_unit_test(test_modules_share),
		cmocka_unit_test(test_qemu_args),      cmocka_unit_test(test_shares),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
