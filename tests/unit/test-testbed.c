/*
 * testbed against libvirt's test driver (test:///default: in-process, no
 * QEMU): `down` destroys only what vnuma created; the state dir is checked.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <libvirt/libvirt.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "testbed/testbed-priv.h"
#include "testbed/down.h"
#include "testbed/hotplug-guest.h"
#include "testbed/testbed.h"
#include "testbed/up-codec.h"
#include "testbed/share.h"
#include "util/alloc.h"
#include "util/cleanup.h"
#include "util/strbuf.h"
#include "util/clock.h"

static char state[] = "/tmp/vn-test-testbed-XXXXXX";

static int setup(void **s)
{
	return mkdtemp(state) ? 0 : -1;
}

static int teardown(void **s)
{
	char cmd[256];
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", state);
	return system(cmd) == 0 ? 0 : -1;
}

static struct vn_topology *one_node(void)
{
	struct vn_topology *t = calloc(1, sizeof(*t));
	struct vn_error err = {0};

	t->nnodes = 1;
	t->ncpus_total = 1;
	vn_cpulist_parse("0", &t->nodes[0].cpus, &err);
	t->nodes[0].ncpus = 1;
	t->nodes[0].memory = 256u << 20;
	t->distance[0][0] = 10;
	return t;
}

static bool exists(struct vn_virt *v, const char *name)
{
	struct vn_virt_domain *d = NULL;
	struct vn_error err = {0};
	bool found = vn_virt_domain_lookup(v, name, &d, &err) == 0;

	vn_virt_domain_free(d);
	vn_error_clear(&err);
	return found;
}

/* A vnuma guest on the test driver, running. */
static struct vn_virt_domain *create_guest(struct vn_virt *v, const struct vn_topology *t, const char *name)
{
	struct vn_domain_opts o = {
		.name = name,
		.accel = VN_ACCEL_TCG,
		.kernel = "/boot/vmlinuz",
		.meta = {.topology_name = "one", .kernel_id = "k1"},
	};
	struct vn_virt_domain *d = NULL;
	struct vn_error err = {0};

	if (vn_virt_domain_create(v, t, &o, &d, &err) < 0)
		fail_msg("create: %s", err.msg);
	return d;
}

static void test_down_only_ours(void **s)
{
	struct vn_testbed_ctx ctx;
	struct vn_virt *v = NULL;
	struct vn_error err = {0};
	_cleanup_topology_ struct vn_topology *t = one_node();
	unsigned n = 99;

	assert_int_equal(vn_testbed_ctx_init(&ctx, state, "test:///default", &err), 0);
	/* Held open so the test driver's state outlives each vn_testbed_down() connection. */
	assert_int_equal(vn_virt_open("test:///default", state, 1000, &v, &err), 0);
	vn_virt_domain_free(create_guest(v, t, "vn-ours"));

	/* test:///default ships "test", a running domain vnuma did not create. */
	assert_true(exists(v, "test"));
	assert_int_equal(vn_testbed_down(&ctx, "test", &n, &err), -EINVAL);
	assert_int_equal(err.kind, VN_ERR_INPUT);
	assert_int_equal(n, 0);
	assert_non_null(strstr(
		err.msg,
		"'test' on test:///default is a running domain without vnuma's metadata: vnuma did not create it"));
	vn_error_clear(&err);
	assert_true(exists(v, "test"));

	assert_int_equal(vn_testbed_down(&ctx, "vn-ours", &n, &err), 0);
	assert_int_equal(n, 1);
	assert_false(exists(v, "vn-ours"));

	/* --all: every vnuma guest (none left), never "test". */
	assert_int_equal(vn_testbed_down(&ctx, NULL, &n, &err), 0);
	assert_int_equal(n, 0);
	assert_true(exists(v, "test"));
	vn_virt_close(v);
	vn_testbed_ctx_clear(&ctx);
}

/* vnuma list's verb: vnuma's guests with what booted them and their state, never another tool's ("test"). */
static void test_guest_list(void **s)
{
	struct vn_testbed_ctx ctx;
	struct vn_virt *v = NULL;
	struct vn_error err = {0};
	_cleanup_topology_ struct vn_topology *t = one_node();
	struct vn_testbed_guest *list = NULL;
	size_t n = 99;

	assert_int_equal(vn_testbed_ctx_init(&ctx, state, "test:///default", &err), 0);
	assert_int_equal(vn_virt_open("test:///default", state, 1000, &v, &err), 0);
	vn_virt_domain_free(create_guest(v, t, "vn-listed"));
	vn_virt_domain_free(create_guest(v, t, "vn-paused"));
	/* Paused as a panicked guest kept for its dump is: QEMU there, the guest not running. */
	virConnectPtr c = virConnectOpen("test:///default");
	virDomainPtr dom = c ? virDomainLookupByName(c, "vn-paused") : NULL;
	assert_non_null(dom);
	assert_int_equal(virDomainSuspend(dom), 0);
	virDomainFree(dom);
	assert_int_equal(vn_testbed_guest_list(&ctx, &list, &n, &err), 0);
	assert_int_equal(n, 2);
	assert_string_equal(list[0].name, "vn-listed");
	assert_non_null(list[0].topology_name);
	assert_string_equal(list[0].state, "running");
	assert_string_equal(list[1].name, "vn-paused");
	assert_true(list[1].running);
	assert_string_equal(list[1].state, "paused");
	vn_testbed_guest_list_free(list, n);
	assert_int_equal(vn_testbed_down(&ctx, "vn-listed", (unsigned[]){0}, &err), 0);
	assert_int_equal(vn_testbed_down(&ctx, "vn-paused", (unsigned[]){0}, &err), 0);
	assert_int_equal(vn_testbed_guest_list(&ctx, &list, &n, &err), 0);
	assert_int_equal(n, 0);
	vn_testbed_guest_list_free(list, n);
	virConnectClose(c);
	vn_virt_close(v);
	vn_testbed_ctx_clear(&ctx);
}

static void test_state_dir_checked(void **s)
{
	struct vn_testbed_ctx ctx;
	struct vn_error err = {0};
	char dir[512];

	snprintf(dir, sizeof(dir), "%s/shared", state);
	assert_int_equal(mkdir(dir, 0700), 0);
	assert_int_equal(vn_testbed_ctx_init(&ctx, dir, NULL, &err), 0);
	vn_testbed_ctx_clear(&ctx);

	assert_int_equal(chmod(dir, 0777), 0);
	assert_int_equal(vn_testbed_ctx_init(&ctx, dir, NULL, &err), -EINVAL);
	assert_int_equal(err.kind, VN_ERR_INPUT);
	assert_non_null(strstr(err.msg, "is writable by everyone (mode 0777)"));
	assert_null(ctx.state_dir);
	vn_error_clear(&err);

	assert_int_equal(chmod(dir, 0770), 0);
	assert_int_equal(vn_testbed_ctx_init(&ctx, dir, NULL, &err), -EINVAL);
	assert_non_null(strstr(err.msg, "writable by its group"));
	vn_error_clear(&err);

	assert_int_equal(chmod(dir, 0700), 0);
	if (geteuid() == 0) {
		assert_int_equal(chown(dir, 65534, 65534), 0);
		assert_int_equal(vn_testbed_ctx_init(&ctx, dir, NULL, &err), -EINVAL);
		assert_non_null(strstr(err.msg, "belongs to uid 65534, not to you"));
		vn_error_clear(&err);
	}
}

/* The hotplug script's numbers come from the plan; its output is the guest's, parsed strictly. */
static void test_hotplug_guest_half(void **s)
{
	struct vn_hotplug_req q = {.name = "g", .node = 3, .memory = 256u << 20, .timeout_ms = 30000};
	struct vn_hotplug_plan p = {.ndimms = 1};
	struct vn_hotplug_result r;
	struct vn_error err = {0};

	p.dimms[0] = (struct vn_domain_dimm){.alias = "dimm0", .node = 3, .bytes = 256u << 20, .base = 1ull << 32};
	_cleanup_free_ char *sh = vn_testbed_hotplug_script(&q, &p);
	assert_non_null(strstr(sh, "b=$((4294967296 / bs)); e=$(((4294967296 + 268435456) / bs))"));
	assert_non_null(strstr(sh, "echo online_movable > $f"));
	q.remove = true;
	_cleanup_free_ char *off = vn_testbed_hotplug_script(&q, &p);
	assert_non_null(strstr(off, "echo offline > $f"));
	q.remove = false;

	static const char out[] = "builds_before 1\nmem_before 0-2\nblock 32\nblock 33\n"
				  "builds_after 2\nmem_after 0-3\n"
				  "node 0 0 | 262144\nnode 1 1 | 262144\nnode 2 | 262144\nnode 3 3-4 | 262144\n"
				  "node 999 0 | 1\nnode 3 junk\n";
	memset(&r, 0, sizeof(r));
	assert_int_equal(vn_testbed_hotplug_report(out, &q, &r, &err), 0);
	assert_int_equal(r.blocks, 2);
	assert_int_equal(r.rebuilds, 1);
	assert_true(r.node_memtotal == 256ull << 20);
	assert_true(vn_cpuset_has(&r.node_cpus, 4));
	assert_true(r.seen.memory[3] && r.seen.cpus[3] && !r.seen.cpus[2]);
	/* An offline's rebuild still saw the node in N_MEMORY. */
	q.remove = true;
	static const char gone[] = "builds_before 2\nmem_before 0-3\nbuilds_after 3\nmem_after 0-2\n";
	memset(&r, 0, sizeof(r));
	assert_int_equal(vn_testbed_hotplug_report(gone, &q, &r, &err), 0);
	assert_true(r.seen.memory[3]);
	assert_int_equal(r.rebuilds, 1);
	/* A script that never got to the end says nothing it can be judged by. */
	memset(&r, 0, sizeof(r));
	assert_int_equal(vn_testbed_hotplug_report("builds_before 1\n", &q, &r, &err), -EBADMSG);
	vn_error_clear(&err);
}

/* -icount's value from --virtual-time and VNUMA_ICOUNT_SHIFT, and whether QEMU retunes its shift (settled by up). */
static void test_icount_choice(void **s)
{
	struct vn_up_opts real = {0}, vt = {.virtual_time = true};
	struct vn_error err = {0};
	char *icount = NULL;
	bool autos = true;
	/* The process's own settings, put back at the end: later tests see what they were given. */
	const char *a0 = getenv("VNUMA_ACCEL"), *s0 = getenv("VNUMA_ICOUNT_SHIFT");
	_cleanup_free_ char *accel0 = a0 ? vn_xstrdup(a0) : NULL, *shift0 = s0 ? vn_xstrdup(s0) : NULL;

	unsetenv("VNUMA_ACCEL");
	unsetenv("VNUMA_ICOUNT_SHIFT");
	assert_int_equal(vn_testbed_icount(&real, &icount, &autos, &err), 0);
	assert_null(icount);
	assert_false(autos);
	assert_int_equal(vn_testbed_icount(&vt, &icount, &autos, &err), 0);
	assert_string_equal(icount, "shift=auto,sleep=off");
	assert_true(autos);
	free(icount);
	setenv("VNUMA_ICOUNT_SHIFT", "3", 1);
	assert_int_equal(vn_testbed_icount(&vt, &icount, &autos, &err), 0);
	assert_string_equal(icount, "shift=3,sleep=off");
	assert_false(autos);
	free(icount);
	setenv("VNUMA_ICOUNT_SHIFT", "auto", 1);
	assert_int_equal(vn_testbed_icount(&vt, &icount, &autos, &err), 0);
	assert_true(autos);
	free(icount);
	/* A shift past QEMU's, or not a number: the variable named, exit 2. */
	setenv("VNUMA_ICOUNT_SHIFT", "11", 1);
	assert_int_not_equal(vn_testbed_icount(&vt, &icount, &autos, &err), 0);
	assert_int_equal(err.kind, VN_ERR_INPUT);
	assert_non_null(strstr(err.msg, "VNUMA_ICOUNT_SHIFT=11"));
	assert_null(icount);
	vn_error_clear(&err);
	unsetenv("VNUMA_ICOUNT_SHIFT");
	setenv("VNUMA_ACCEL", "kvm", 1);
	assert_int_not_equal(vn_testbed_icount(&vt, &icount, &autos, &err), 0);
	assert_int_equal(err.kind, VN_ERR_INPUT);
	vn_error_clear(&err);
	unsetenv("VNUMA_ACCEL");
	if (accel0)
		setenv("VNUMA_ACCEL", accel0, 1);
	if (shift0)
		setenv("VNUMA_ICOUNT_SHIFT", shift0, 1);
}

/*
 * Settling asks QEMU's monitor, which the test driver has not: a failure to
 * observe the clock is infrastructure's (exit 3), and the guest is not left
 * running. A fixed shift, or real time, is not settled and asks nothing.
 */
static void test_settle_without_monitor(void **s)
{
	struct vn_virt *v = NULL;
	struct vn_error err = {0};
	_cleanup_topology_ struct vn_topology *t = one_node();
	struct vn_up_opts uo = {.virtual_time = true};
	double lead = -1;

	assert_int_equal(vn_virt_open("test:///default", state, 1000, &v, &err), 0);
	struct vn_virt_domain *d = create_guest(v, t, "vn-vt");
	_cleanup_free_ char *log = vn_xasprintf("%s/vn-vt.console.log", state);
	struct vn_boot_attempt at = {
		.v = v, .o = &uo, .name = "vn-vt", .icount = "shift=3,sleep=off", .d = d, .log = log};

	at.until = vn_now_s() + 30;
	assert_int_equal(vn_testbed_icount_settle(&at, &lead, &err), 0);
	assert_true(lead == 0);
	assert_true(exists(v, "vn-vt"));

	at.icount = "shift=auto,sleep=off";
	at.icount_auto = true;
	assert_int_not_equal(vn_testbed_icount_settle(&at, &lead, &err), 0);
	assert_int_equal(err.kind, VN_ERR_INFRA);
	assert_non_null(strstr(err.msg, "cannot ask QEMU's monitor 'info jit' of 'vn-vt'"));
	assert_true(lead == 0);
	assert_false(exists(v, "vn-vt"));
	vn_error_clear(&err);
	vn_virt_domain_free(d);
	vn_virt_close(v);
}

/* --share: defaults (ro, /mnt/host/<basename>), rw, a resolved host path; refusals before any boot. */
static void test_share_parse(void **unused)
{
	struct vn_domain_share sh;
	struct vn_error err = {0};
	_cleanup_free_ char *dir = strdup("/tmp/vn-share-XXXXXX");

	assert_non_null(mkdtemp(dir));
	_cleanup_free_ char *link = vn_xasprintf("%s/../%s", dir, strrchr(dir, '/') + 1);
	assert_int_equal(vn_share_parse(link, NULL, &sh, &err), 0);
	assert_string_equal(sh.source, dir);
	_cleanup_free_ char *want = vn_xasprintf("/mnt/host/%s", strrchr(dir, '/') + 1);
	assert_string_equal(sh.guest_dir, want);
	assert_false(sh.rw);
	vn_free_all(sh.source, sh.guest_dir);
	_cleanup_free_ char *spec = vn_xasprintf("%s:/g:rw", dir);
	assert_int_equal(vn_share_parse(spec, NULL, &sh, &err), 0);
	assert_string_equal(sh.guest_dir, "/g");
	assert_true(sh.rw);
	vn_free_all(sh.source, sh.guest_dir);
	const char *bad[] = {":g", ":/g:rx", ":/", ":/a/../b", ":/a,b", "/nope"};
	for (size_t i = 0; i < sizeof(bad) / sizeof(*bad); i++) {
		_cleanup_free_ char *b = vn_xasprintf("%s%s", i ? dir : "", bad[i]);
		assert_int_equal(vn_share_parse(b, NULL, &sh, &err), -EINVAL);
		vn_error_clear(&err);
	}
	assert_int_equal(vn_share_parse("/etc/passwd", NULL, &sh, &err), -EINVAL);
	vn_error_clear(&err);
	const char *two[] = {dir, spec, NULL};
	_cleanup_free_ char *dup = vn_xasprintf("%s:/g", dir);
	const char *same[] = {spec, dup, NULL};
	struct vn_domain_share *v;
	unsigned n;
	assert_int_equal(vn_share_parse_all(two, NULL, &v, &n, &err), 0);
	assert_int_equal(n, 2);
	vn_share_free_all(v, n);
	assert_int_equal(vn_share_parse_all(same, NULL, &v, &n, &err), -EINVAL);
	assert_non_null(strstr(err.msg, "already the guest path"));
	vn_error_clear(&err);
	rmdir(dir);
}

/* A boot's result across the fork: every member written, read back, written again to the same bytes; bad text refused. */
static void test_up_result_codec(void **unused)
{
	(void)unused;
	char *patches[] = {"a.patch", "b \"q\".patch", NULL};
	struct vn_up_result r = {.name = "g1",
				 .guest_dir = "/s/guests/g1",
				 .console_log = "/s/c.log",
				 .kernel_release = "6.1.0",
				 .kernel_version = "#1 SMP",
				 .kernel_recipe = "fallback-revert",
				 .kernel_config_sha256 = NULL,
				 .kernel_patches = patches,
				 .topology_path = "/t/2node.xml",
				 .arch = "x86_64",
				 .accel = VN_ACCEL_KVM,
				 .accel_reason = "proven",
				 .boot_s = 1.25,
				 .restored = true,
				 .snapshot = "ab12",
				 .clock_step_s = -0.5,
				 .icount = "shift=auto",
				 .icount_lead_s = 1e-9,
				 .vcpus = 4,
				 .host_cpus = 2,
				 .fidelity_ok = true,
				 .fidelity_report = "ok\n\x01"};
	struct vn_up_result back;
	struct vn_error err = {0};
	_cleanup_free_ char *text = vn_up_result_text(&r);

	assert_int_equal(vn_up_result_parse(text, "answer", &back, &err), 0);
	_cleanup_free_ char *again = vn_up_result_text(&back);
	assert_string_equal(again, text);
	assert_string_equal(back.name, "g1");
	assert_null(back.kernel_config_sha256);
	assert_string_equal(back.kernel_patches[1], "b \"q\".patch");
	assert_null(back.kernel_patches[2]);
	assert_int_equal(back.accel, VN_ACCEL_KVM);
	assert_true(back.boot_s == 1.25 && back.clock_step_s == -0.5 && back.icount_lead_s == 1e-9);
	assert_true(back.restored && back.fidelity_ok);
	assert_int_equal(back.vcpus, 4);
	assert_int_equal(back.host_cpus, 2);
	vn_up_result_clear(&back);

	/* An empty one (a child that failed before booting) too. */
	struct vn_up_result none = {0};
	_cleanup_free_ char *empty = vn_up_result_text(&none);
	assert_int_equal(vn_up_result_parse(empty, "answer", &back, &err), 0);
	assert_null(back.name);
	assert_null(back.kernel_patches);
	vn_up_result_clear(&back);

	const struct {
		const char *from, *to, *want;
	} bad[] = {
		{"\"accel\":1", "\"accel\":7", "answer: $.accel: expected 0 (tcg) or 1 (kvm), got 7"},
		{"\"accel\":1", "\"accel\":\"kvm\"", "answer: $.accel: "},
		{"\"vcpus\":4", "\"vcpus\":-4", "answer: $.vcpus: "},
		{"\"boot_s\":1.25", "\"boot_s\":\"1.25\"", "answer: $.boot_s: "},
		{"\"restored\":true", "\"restored\":1", "answer: $.restored: expected true or false"},
		{"\"name\":\"g1\"", "\"name\":5", "answer: $.name: "},
		{"\"name\":\"g1\"", "\"nome\":\"g1\"", "answer: $: "},
		{"\"host_cpus\":2", "\"host_cpus\":null", "answer: $.host_cpus: "},
		{"\"kernel_patches\":[\"a.patch\"", "\"kernel_patches\":[3", "answer: $.kernel_patches[0]: "},
		{"{", "[{", "answer:"},
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		char *at = strstr(text, bad[i].from);
		assert_non_null(at);
		_cleanup_free_ char *t =
			vn_xasprintf("%.*s%s%s", (int)(at - text), text, bad[i].to, at + strlen(bad[i].from));
		assert_true(vn_up_result_parse(t, "answer", &back, &err) < 0);
		assert_int_equal(err.kind, VN_ERR_INPUT);
		if (!strstr(err.msg, bad[i].want))
			fail_msg("%s\ngave: %s\nwant: %s", t, err.msg, bad[i].want);
		vn_error_clear(&err);
		vn_up_result_clear(&back);
	}
	/* Bounded: over the size, or more patches than a recipe has. */
	char *big = vn_xcalloc(VN_UP_TEXT_MAX + 2, 1);
	memset(big, ' ', VN_UP_TEXT_MAX + 1);
	assert_true(vn_up_result_parse(big, "answer", &back, &err) < 0);
	assert_non_null(strstr(err.msg, "over "));
	vn_error_clear(&err);
	free(big);
	struct vn_strbuf many = VN_STRBUF_INIT;
	vn_strbuf_printf(&many,
			 "{\"accel\":0,\"boot_s\":0,\"fidelity_ok\":false,\"restored\":false,"
			 "\"clock_step_s\":0,\"icount_lead_s\":0,\"vcpus\":0,\"host_cpus\":0,\"kernel_patches\":[");
	for (int i = 0; i <= VN_UP_PATCHES_MAX; i++)
		vn_strbuf_printf(&many, "%s\"p\"", i ? "," : "");
	vn_strbuf_printf(&many, "]}");
	assert_true(vn_up_result_parse(many.s, "answer", &back, &err) < 0);
	assert_non_null(strstr(err.msg, "answer: $.kernel_patches: more than 4096 patches"));
	vn_error_clear(&err);
	vn_up_result_clear(&back);
	vn_strbuf_free(&many);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_down_only_ours),    cmocka_unit_test(test_guest_list),
		cmocka_unit_test(test_state_dir_checked), cmocka_unit_test(test_hotplug_guest_half),
		cmocka_unit_test(test_icount_choice),     cmocka_unit_test(test_settle_without_monitor),
		cmocka_unit_test(test_share_parse),       cmocka_unit_test(test_up_result_codec),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
