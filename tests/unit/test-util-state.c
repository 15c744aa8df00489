/*
 * util/state.h, the state dir's one map: every path it names, for one STATE,
 * spelled as the code spelled it by hand before the module existed (a cache
 * the new spelling missed would be orphaned), and the default STATE's
 * fallbacks.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "util/alloc.h"
#include "util/cleanup.h"
#include "util/state.h"

#define S "/var/tmp/st"

static void eq(char *got, const char *want)
{
	assert_non_null(got);
	assert_string_equal(got, want);
	free(got);
}

static void test_state_paths(void **state)
{
	(void)state;
	eq(vn_state_guests_dir(S), S "/guests");
	eq(vn_state_guest_dir(S, "4node"), S "/guests/4node");
	eq(vn_state_guest_file(S, "4node", VN_GUEST_AGENT_SOCK), S "/guests/4node/agent.sock");
	eq(vn_state_guest_file(S, "4node", VN_GUEST_CONSOLE_LOG), S "/guests/4node/console.log");
	eq(vn_state_failed_dir(S), S "/failed");
	eq(vn_state_failed_entry(S, "4node", "20261202T050000Z", 1), S "/failed/4node-20261202T050000Z");
	eq(vn_state_failed_entry(S, "4node", "20261202T050000Z", 3), S "/failed/4node-20261202T050000Z-3");
	eq(vn_state_accel_cache(S), S "/accel.cache");
	eq(vn_state_embed_root(S), S "/libvirt");
	eq(vn_state_embed_pidfile(S, "4node"), S "/libvirt/run/qemu/4node.pid");
	eq(vn_state_embed_qemu_log(S, "4node"), S "/libvirt/log/qemu/4node.log");
	eq(vn_state_libvirt_log(S), S "/libvirt.log");
	eq(vn_state_driver_queue(S), S "/driver.queue");
	eq(vn_state_pool_lock(S, "0123456789abcdef0123456789abcdef"), S "/pool-0123456789abcdef.lock");
	eq(vn_state_cache_dir(S), S "/cache");
	eq(vn_state_kernels_dir(S), S "/cache/kernels");
	eq(vn_state_images_dir(S), S "/cache/images");
	eq(vn_state_uploads_dir(S), S "/cache/uploads");
	eq(vn_state_upload_lock(S, "ff00"), S "/cache/uploads/ff00.lock");
	eq(vn_cache_vmlinux_dir(S "/cache"), S "/cache/vmlinux");
	eq(vn_cache_warm_dir(S "/cache"), S "/cache/warm");
	eq(vn_cache_warm_file(S "/cache", "ab", VN_WARM_SAVE), S "/cache/warm/ab.save");
	eq(vn_cache_warm_file(S "/cache", "ab", VN_WARM_CONSOLE), S "/cache/warm/ab.console");
	eq(vn_cache_warm_file(S "/cache", "ab", VN_WARM_LOCK), S "/cache/warm/ab.lock");
	eq(vn_cache_warm_temp(S "/cache", "ab", 42), S "/cache/warm/.ab.save.42");
	eq(vn_cache_digests_dir(S "/cache"), S "/cache/digests");
	eq(vn_cache_initramfs(S "/cache", "ab12"), S "/cache/initramfs-ab12.cpio");
	eq(vn_cache_initramfs_temp(S "/cache", "0123456789abcdef0123"), S "/cache/.initramfs-0123456789abcdef.XXXXXX");
	eq(vn_guest_dir_file(S "/guests/4node", VN_GUEST_DOMAIN_XML), S "/guests/4node/domain.xml");
	eq(vn_guest_dir_file(S "/guests/4node", VN_GUEST_TOPOLOGY), S "/guests/4node/topology.xml");
	eq(vn_guest_dir_file(S "/guests/4node", VN_GUEST_ROOT_DISK), S "/guests/4node/root.qcow2");
	eq(vn_guest_dir_file(S "/failed/x", VN_GUEST_QEMU_LOG), S "/failed/x/qemu.log");
	eq(vn_guest_disk_path(S "/guests/4node", 2, 1), S "/guests/4node/disk-node2-1.img");
	/* What a socket path's length check adds to STATE. */
	assert_int_equal(vn_state_agent_sock_len(S, "4node"), strlen(S "/guests/4node/agent-3.sock"));
	eq(vn_state_agent_channel(S "/guests/4node/agent.sock", 0), S "/guests/4node/agent.sock");
	eq(vn_state_agent_channel(S "/guests/4node/agent.sock", 3), S "/guests/4node/agent-3.sock");
	eq(vn_state_agent_channel("/tmp/other", 1), "/tmp/other-1");
	eq(vn_state_agent_channel_lock(S "/guests/4node/agent.sock", 2), S "/guests/4node/agent-2.sock.lock");
}

static void test_state_locate(void **state)
{
	(void)state;
	_cleanup_free_ char *p = NULL;
	struct vn_error err = {0};

	setenv("VNUMA_STATE_DIR", "/e", 1);
	setenv("XDG_STATE_HOME", "/x", 1);
	setenv("HOME", "/h", 1);
	assert_int_equal(vn_state_locate("/given", &p, &err), 0);
	eq(steal_pointer(&p), "/given");
	assert_int_equal(vn_state_locate(NULL, &p, &err), 0);
	eq(steal_pointer(&p), "/e");
	setenv("VNUMA_STATE_DIR", "", 1);
	assert_int_equal(vn_state_locate(NULL, &p, &err), 0);
	eq(steal_pointer(&p), "/x/vnuma");
	unsetenv("VNUMA_STATE_DIR");
	unsetenv("XDG_STATE_HOME");
	assert_int_equal(vn_state_locate(NULL, &p, &err), 0);
	eq(steal_pointer(&p), geteuid() == 0 ? "/var/lib/vnuma" : "/h/.local/state/vnuma");
	if (geteuid() != 0) {
		unsetenv("HOME");
		assert_true(vn_state_locate(NULL, &p, &err) < 0);
		assert_null(p);
		assert_string_equal(err.msg, "no state directory: set VNUMA_STATE_DIR or HOME");
		vn_error_clear(&err);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_state_paths),
		cmocka_unit_test(test_state_locate),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
