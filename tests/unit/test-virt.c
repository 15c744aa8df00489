/*
 * virt lifecycle against libvirt's test driver (test:///default: in-process,
 * no daemon, no QEMU), plus the console-log tail and guest-dir helpers.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>

#include "util/cleanup.h"
#include "util/clock.h"
#include "util/file.h"
#include "util/interrupt.h"
#include "virt/virt-priv.h"
#include "testutil.h"
#include "tmpdir.h"

VN_TEST_TMPDIR(state, "virt")

static struct vn_topology *two_nodes(void)
{
	return vn_test_two_nodes((const uint64_t[]){256, 256});
}

static void test_lifecycle(void **s)
{
	struct vn_virt *v = NULL;
	struct vn_error err = {0};
	_cleanup_topology_ struct vn_topology *t = two_nodes();

	assert_int_equal(vn_virt_open("test:///default", state, 1000, &v, &err), 0);
	char why[256];
	assert_false(vn_virt_kvm_offered(v, why, sizeof(why))); /* the test driver offers no kvm */
	assert_non_null(strstr(why, "kvm"));
	unsetenv("VNUMA_ACCEL");

	struct vn_domain_opts o = {
		.name = "vn-t1",
		.accel = VN_ACCEL_AUTO,
		.kernel = "/boot/vmlinuz",
		.meta = {.topology_name = "two", .kernel_id = "k1"},
	};
	struct vn_virt_domain *d = NULL;
	if (vn_virt_domain_create(v, t, &o, &d, &err) < 0)
		fail_msg("create: %s", err.msg);
	assert_int_equal(vn_virt_domain_accel(d), VN_ACCEL_TCG);
	assert_non_null(strstr(vn_virt_domain_accel_reason(d), "no usable KVM"));
	char path[4096];
	snprintf(path, sizeof(path), "%s/guests/vn-t1/domain.xml", state);
	assert_int_equal(access(path, R_OK), 0);
	struct stat sb;
	snprintf(path, sizeof(path), "%s/guests/vn-t1", state);
	assert_int_equal(stat(path, &sb), 0);
	assert_int_equal(sb.st_mode & 0777, 0700);

	/* A second guest with the same name is bad input, not a redefinition. */
	struct vn_virt_domain *dup = NULL;
	assert_int_equal(vn_virt_domain_create(v, t, &o, &dup, &err), -EINVAL);
	assert_int_equal(err.kind, VN_ERR_INPUT);
	vn_error_clear(&err);

	struct vn_virt_domain_info *list = NULL;
	size_t n = 0;
	assert_int_equal(vn_virt_domain_list(v, &list, &n, &err), 0);
	/* test:///default ships a domain named "test" without our metadata: not listed. */
	assert_int_equal(n, 1);
	assert_string_equal(list[0].name, "vn-t1");
	assert_true(list[0].running);
	assert_string_equal(list[0].meta.topology_name, "two");
	assert_string_equal(list[0].meta.accel, "tcg");
	vn_virt_domain_info_free(list, n);

	struct vn_virt_domain *l = NULL;
	assert_int_equal(vn_virt_domain_lookup(v, "vn-t1", &l, &err), 0);
	struct vn_domain_meta m;
	assert_int_equal(vn_virt_domain_metadata(l, &m, &err), 0);
	assert_string_equal(m.kernel_id, "k1");
	vn_domain_meta_clear(&m);
	assert_int_equal(vn_virt_domain_wait_shutoff(l, 200, &err), -ETIMEDOUT);
	vn_error_clear(&err);
	assert_int_equal(vn_virt_domain_destroy(l, &err), 0);
	assert_int_equal(access(path, F_OK), -1);
	vn_virt_domain_free(l);
	vn_virt_domain_free(d);

	assert_int_equal(vn_virt_domain_lookup(v, "vn-t1", &l, &err), -EINVAL);
	assert_int_equal(err.kind, VN_ERR_INPUT);
	vn_virt_close(v);
}

static void test_guest_dir_names(void **s)
{
	struct vn_virt *v = NULL;
	struct vn_error err = {0};
	char *dir = NULL;

	assert_int_equal(vn_virt_open("test:///default", state, 1000, &v, &err), 0);
	assert_int_equal(vn_virt_guest_dir(v, "..", &dir, &err), -EINVAL);
	vn_error_clear(&err);
	assert_int_equal(vn_virt_guest_dir(v, "a/b", &dir, &err), -EINVAL);
	vn_error_clear(&err);
	assert_int_equal(vn_virt_guest_dir(v, "ok", &dir, &err), 0);
	assert_int_equal(vn_virt_guest_dir_remove(dir, &err), 0);
	free(dir);
	vn_virt_close(v);
}

/* Failed guests' dirs are kept under STATE/failed, newest 10 only, and never overwrite each other. */
static void test_failed_kept(void **s)
{
	struct vn_virt *v = NULL;
	struct vn_error err = {0};
	char path[4096];

	assert_int_equal(vn_virt_open("test:///default", state, 1000, &v, &err), 0);
	for (int i = 1; i <= 12; i++) {
		char name[16], *dir = NULL, *kept = NULL;
		snprintf(name, sizeof(name), "f%d", i % 2 ? 1 : i); /* one name fails again within the second */
		assert_int_equal(vn_virt_guest_dir(v, name, &dir, &err), 0);
		snprintf(path, sizeof(path), "%s/console.log", dir);
		FILE *f = fopen(path, "w");
		fprintf(f, "attempt %d\n", i);
		fclose(f);
		snprintf(path, sizeof(path), "%s/console.pipe", dir);
		assert_int_equal(mkfifo(path, 0600), 0);
		assert_int_equal(vn_virt_guest_dir_keep(v, name, &kept, &err), 0);
		assert_non_null(strstr(kept, "/failed/"));
		assert_int_not_equal(access(dir, F_OK), 0); /* moved, not copied */
		snprintf(path, sizeof(path), "%s/console.log", kept);
		assert_int_equal(access(path, R_OK), 0);
		/* The console keeper's FIFO is no log: a reader of the archive would block on it. */
		snprintf(path, sizeof(path), "%s/console.pipe", kept);
		assert_int_not_equal(access(path, F_OK), 0);
		free(dir);
		free(kept);
	}
	snprintf(path, sizeof(path), "ls '%s/failed' | wc -l | grep -qx 10", state);
	assert_int_equal(system(path), 0);
	/* The oldest two (attempts 1 and 2) went; attempt 3 stays. */
	snprintf(path, sizeof(path), "grep -lx 'attempt [12]' '%s'/failed/*/console.log >/dev/null", state);
	assert_int_not_equal(system(path), 0);
	snprintf(path, sizeof(path), "grep -lx 'attempt 3' '%s'/failed/*/console.log >/dev/null", state);
	assert_int_equal(system(path), 0);
	vn_virt_close(v);
}

static void test_open_failure(void **s)
{
	struct vn_virt *v = NULL;
	struct vn_error err = {0};

	assert_true(vn_virt_open("nosuchdriver:///x", state, 100, &v, &err) < 0);
	assert_int_equal(err.kind, VN_ERR_INFRA);
	assert_non_null(strstr(err.msg, "nosuchdriver:///x"));
}

/* A host that accepts and never answers: the open gives up at its deadline, or at once when interrupted. */
static void test_open_silent_host(void **s)
{
	struct vn_virt *v = NULL;
	struct vn_error err = {0};
	struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
	socklen_t alen = sizeof(a);
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	char uri[128];

	/* The kernel completes the handshake for the backlog: accepted, and nothing ever read or written. */
	assert_true(fd >= 0);
	assert_int_equal(bind(fd, (struct sockaddr *)&a, sizeof(a)), 0);
	assert_int_equal(listen(fd, 8), 0);
	assert_int_equal(getsockname(fd, (struct sockaddr *)&a, &alen), 0);
	snprintf(uri, sizeof(uri), "qemu+tcp://127.0.0.1:%u/system", ntohs(a.sin_port));

	int64_t t0 = vn_now_ms();
	assert_int_equal(vn_virt_open_within(uri, state, 1000, 500, &v, &err), -ETIMEDOUT);
	int64_t took = vn_now_ms() - t0;
	assert_true(took >= 500);
	assert_true(took < 3000);
	assert_null(v);
	assert_int_equal(err.kind, VN_ERR_INFRA);
	char want[512];
	snprintf(want, sizeof(want),
		 "cannot open %s: no answer within 0.5 s (a hosts line's timeout=SECONDS sets how long to wait)", uri);
	assert_string_equal(err.msg, want);
	vn_error_clear(&err);

	vn_interrupted = SIGTERM;
	t0 = vn_now_ms();
	assert_int_equal(vn_virt_open_within(uri, state, 1000, 60000, &v, &err), -EINTR);
	assert_true(vn_now_ms() - t0 < 1000);
	assert_non_null(strstr(err.msg, "interrupted while connecting to qemu+tcp://127.0.0.1:"));
	vn_interrupted = 0;
	vn_error_clear(&err);
	close(fd);
}

/* qemu:///embed?root=DIR: DIR is set up as vnuma's own root is, unless its qemu.conf is the user's. */
static void test_embed_root(void **s)
{
	struct vn_error err = {0};
	char uri[4200], conf[4200];
	_cleanup_free_ char *text = NULL, *r = NULL;
	size_t len;

	assert_null(vn_virt_embed_root("qemu:///system"));
	assert_null(vn_virt_embed_root("qemu:///embed"));
	assert_null(vn_virt_embed_root("qemu:///embed?root="));
	r = vn_virt_embed_root("qemu:///embed?x=1&root=/tmp/a%20b;y=2");
	assert_string_equal(r, "/tmp/a b");

	snprintf(uri, sizeof(uri), "qemu:///embed?root=%s/own", state);
	snprintf(conf, sizeof(conf), "%s/own/etc/qemu.conf", state);
	assert_int_equal(vn_virt_embed_root_prepare(uri, &err), 0);
	assert_int_equal(vn_file_read(conf, 4096, &text, &len, &err), 0);
	assert_non_null(strstr(text, "stdio_handler = \"file\""));
	if (geteuid() == 0)
		assert_non_null(strstr(text, "user = \"root\""));

	snprintf(uri, sizeof(uri), "qemu:///embed?root=%s/theirs", state);
	snprintf(conf, sizeof(conf), "%s/theirs", state);
	assert_int_equal(mkdir(conf, 0700), 0);
	snprintf(conf, sizeof(conf), "%s/theirs/etc", state);
	assert_int_equal(mkdir(conf, 0700), 0);
	snprintf(conf, sizeof(conf), "%s/theirs/etc/qemu.conf", state);
	assert_int_equal(vn_file_write_atomic(conf, "user = \"qemu\"\n", 14, 0600, &err), 0);
	assert_int_equal(vn_virt_embed_root_prepare(uri, &err), 0);
	free(text);
	text = NULL;
	assert_int_equal(vn_file_read(conf, 4096, &text, &len, &err), 0);
	assert_string_equal(text, "user = \"qemu\"\n");

	/* Theirs too when too big to be read whole: never overwritten for that. */
	char big[8192];
	memset(big, '#', sizeof(big));
	assert_int_equal(vn_file_write_atomic(conf, big, sizeof(big), 0600, &err), 0);
	assert_int_equal(vn_virt_embed_root_prepare(uri, &err), 0);
	struct stat st;
	assert_int_equal(stat(conf, &st), 0);
	assert_int_equal(st.st_size, sizeof(big));
	assert_null(vn_virt_embed_root("qemu:///embed?root=/a%00b"));
}

static void test_log_tail(void **s)
{
	char path[4096];
	struct vn_error err = {0};
	char *tail = NULL;

	snprintf(path, sizeof(path), "%s/console.log", state);
	FILE *f = fopen(path, "w");
	fputs("one\r\ntwo\r\nthree\r\nfour\r\n\r\n", f);
	fclose(f);
	assert_int_equal(vn_console_log_tail(path, 2, &tail, &err), 0);
	assert_string_equal(tail, "three\nfour");
	free(tail);
	assert_int_equal(vn_console_log_tail(path, 10, &tail, &err), 0);
	assert_string_equal(tail, "one\ntwo\nthree\nfour");
	free(tail);
	/* A patched kernel's last words: the tail is bound for a terminal and for reports, so nothing raw. */
	f = fopen(path, "w");
	fputs("ok \xe2\x82\xac\r\nKernel panic - not syncing: "
	      "\x1b]0;PWNED\x07\x1b[2J\xc2\x9b\xff\xc0\xaf\xed\xa0\x80\r\n",
	      f);
	fclose(f);
	assert_int_equal(vn_console_log_tail(path, 2, &tail, &err), 0);
	assert_string_equal(tail, "ok \xe2\x82\xac\nKernel panic - not syncing: ?]0;PWNED??[2J???????");
	free(tail);
	snprintf(path, sizeof(path), "%s/missing.log", state);
	assert_int_equal(vn_console_log_tail(path, 3, &tail, &err), 0);
	assert_string_equal(tail, "");
	free(tail);
}

static off_t file_size(const char *path)
{
	struct stat sb;
	return stat(path, &sb) == 0 ? sb.st_size : -1;
}

static char *read_all(const char *path)
{
	FILE *f = fopen(path, "rb");
	char *buf = calloc(1, 1 << 20);
	size_t n = f ? fread(buf, 1, (1 << 20) - 1, f) : 0;
	if (f)
		fclose(f);
	buf[n] = '\0';
	return buf;
}

/* The console log's cap: exactly max bytes, the last line saying so, then only the kernel's last words. */
static void test_console_sink(void **s)
{
	char path[4096], flood[1000];
	struct vn_console_sink k;

	snprintf(path, sizeof(path), "%s/sink.log", state);
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_APPEND, 0600);
	assert_true(fd >= 0);
	memset(flood, 'x', sizeof(flood));
	vn_console_sink_init(&k, fd, 4096);
	for (int i = 0; i < 20; i++)
		assert_int_equal(vn_console_sink_write(&k, flood, sizeof(flood)), 0);
	assert_int_equal(file_size(path), 4096);
	char *log = read_all(path);
	assert_non_null(strstr(log, "xxx\r\n[vnuma: console log full at 4K; the guest runs on"));
	assert_true(log[4095] == '\n');
	assert_int_equal(vn_console_death_scan(log, strlen(log), NULL), VN_DEATH_NONE);
	free(log);

	/* A panic past the cap, split over two writes, still reaches the log: the death watch reads it. */
	assert_int_equal(vn_console_sink_write(&k, "yyyy[ 9.1] Kernel pan", 21), 0);
	assert_int_equal(vn_console_sink_write(&k, "ic - not syncing: boom\r\nzzzz", 28), 0);
	log = read_all(path);
	assert_string_equal(log + 4096, "Kernel panic - not syncing: boom\r\n");
	free(log);
	/* ... a few of them, not a flood of forged ones. */
	for (int i = 0; i < 100; i++)
		assert_int_equal(vn_console_sink_write(&k, "reboot: Power down\n", 19), 0);
	for (int i = 0; i < 20; i++)
		assert_int_equal(vn_console_sink_write(&k, flood, sizeof(flood)), 0);
	assert_int_equal(file_size(path), 4096 + 34 + 7 * 20);
	close(fd);
}

static void test_console_log_max(void **s)
{
	struct vn_error err = {0};
	uint64_t max;

	unsetenv("VNUMA_CONSOLE_LOG_MAX");
	assert_int_equal(vn_console_log_max(&max, &err), 0);
	assert_true(max == VN_CONSOLE_LOG_MAX);
	setenv("VNUMA_CONSOLE_LOG_MAX", "64K", 1);
	assert_int_equal(vn_console_log_max(&max, &err), 0);
	assert_true(max == 65536);
	static const char *const bad[] = {"1K", "2G", "lots", "-1", "0"};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		setenv("VNUMA_CONSOLE_LOG_MAX", bad[i], 1);
		assert_int_equal(vn_console_log_max(&max, &err), -EINVAL);
		assert_int_equal(err.kind, VN_ERR_INPUT);
		assert_non_null(strstr(err.msg, "$VNUMA_CONSOLE_LOG_MAX"));
		vn_error_clear(&err);
	}
	unsetenv("VNUMA_CONSOLE_LOG_MAX");
}

/* Whether the keeper still reads fifo: a writer's non-blocking open fails with ENXIO once nobody does. */
static bool keeper_gone(const char *fifo)
{
	for (int i = 0; i < 200; i++) {
		int fd = open(fifo, O_WRONLY | O_NONBLOCK);
		if (fd < 0 && errno == ENXIO)
			return true;
		if (fd >= 0)
			close(fd);
		usleep(10 * 1000);
	}
	return false;
}

/* The local console's keeper: FIFO to log through the sink, for as long as the writer (QEMU) holds it. */
static void test_console_keeper(void **s)
{
	char fifo[4096], log[4096], flood[4096];
	struct vn_error err = {0};
	int ctl, other[2];

	snprintf(fifo, sizeof(fifo), "%s/console.pipe", state);
	snprintf(log, sizeof(log), "%s/console.log", state);
	/* An fd of ours without O_CLOEXEC (libvirt's embed root lock is one): the keeper must not hold it. */
	assert_int_equal(pipe(other), 0);
	assert_int_equal(vn_console_keeper_start(fifo, log, 8192, false, &ctl, &err), 0);
	close(other[1]);
	char c;
	assert_int_equal(read(other[0], &c, 1), 0);
	close(other[0]);

	/* QEMU opens the FIFO while the domain starts, then the starter lets the keeper go on its own. */
	int w = open(fifo, O_WRONLY);
	assert_true(w >= 0);
	close(ctl);
	memset(flood, 'x', sizeof(flood));
	for (int i = 0; i < 64; i++)
		assert_int_equal(write(w, flood, sizeof(flood)), (ssize_t)sizeof(flood));
	assert_int_equal(write(w, "Kernel panic - not syncing: boom\n", 33), 33);
	assert_false(keeper_gone(fifo) && "the keeper ended while QEMU held the FIFO");
	close(w);
	assert_true(keeper_gone(fifo));
	char *text = read_all(log);
	assert_non_null(strstr(text, "[vnuma: console log full at 8K;"));
	assert_string_equal(text + 8192, "Kernel panic - not syncing: boom\r\n");
	free(text);

	/* A start that failed: nobody ever opened the FIFO, the keeper ends when ctl closes. */
	assert_int_equal(vn_console_keeper_start(fifo, log, 8192, false, &ctl, &err), 0);
	assert_int_equal(file_size(log), 0);
	close(ctl);
	assert_true(keeper_gone(fifo));
}

/* Another host (streams, volumes) or this one (its files): by the URI's host part and transport. */
static void test_uri_remote(void **unused)
{
	assert_true(vn_virt_uri_is_remote("qemu+ssh://vnuma@big1/system"));
	assert_true(vn_virt_uri_is_remote("qemu+tcp://127.0.0.1:16599/session"));
	assert_true(vn_virt_uri_is_remote("qemu://big1/system"));
	assert_true(vn_virt_uri_is_remote("qemu+tls://big1/system?no_verify=1"));
	assert_false(vn_virt_uri_is_remote("qemu:///system"));
	assert_false(vn_virt_uri_is_remote("qemu:///embed?root=/var/lib/vnuma/libvirt"));
	assert_false(vn_virt_uri_is_remote("qemu+unix:///system?socket=/run/x.sock"));
	assert_false(vn_virt_uri_is_remote("test:///default"));
	assert_false(vn_virt_uri_is_remote("not a uri"));
	assert_false(vn_virt_uri_is_remote(""));
}

/*
 * A restore's XML (virt/save.c): the saved guest's name, uuid and guest-dir
 * paths become the new guest's, and so does its metadata: the topology file
 * and kernel the new up named, not the saving up's (gone with its workspace).
 */
static void test_save_xml_renamed(void **s)
{
	char xml[4096];
	snprintf(xml, sizeof(xml),
		 "<domain type=\"qemu\">\n  <name>a</name>\n  <uuid>11111111-2222-4333-8444-555555555555</uuid>\n"
		 "  <metadata>\n    <vnuma:vnuma xmlns:vnuma=\"" VN_XMLNS "\">\n"
		 "      <vnuma:topology name=\"4node\" path=\"/ws1/t.xml\"/>\n"
		 "      <vnuma:kernel path=\"/ws1/bzImage\" id=\"r1 6.1\"/>\n      <vnuma:accel>tcg</vnuma:accel>\n"
		 "      <vnuma:guest-dir>%s/guests/a</vnuma:guest-dir>\n    </vnuma:vnuma>\n  </metadata>\n"
		 "  <memory unit=\"KiB\">1048576</memory>\n"
		 "  <channel type=\"unix\"><source mode=\"bind\" path=\"%s/guests/a/agent.sock\"/></channel>\n"
		 "</domain>\n",
		 state, state);
	char dir_b[4096];
	snprintf(dir_b, sizeof(dir_b), "%s/guests/b", state);
	struct vn_domain_opts o = {
		.name = "b",
		.accel = VN_ACCEL_TCG,
		.meta = {.topology_name = "4node",
			 .topology_path = "/ws2/t.xml",
			 .kernel = "/ws2/bzImage",
			 .kernel_id = "r2 6.1",
			 .guest_dir = dir_b},
	};
	_cleanup_free_ char *out = vn_virt_save_xml_renamed(state, xml, &o, "99999999-2222-4333-8444-555555555555");

	assert_non_null(out);
	assert_non_null(strstr(out, "<name>b</name>"));
	assert_non_null(strstr(out, "<uuid>99999999-2222-4333-8444-555555555555</uuid>"));
	assert_null(strstr(out, "/ws1/"));
	assert_null(strstr(out, "/guests/a"));
	assert_non_null(strstr(out, "/guests/b/agent.sock\"/></channel>\n</domain>\n"));
	assert_non_null(strstr(out, "</metadata>\n  <memory unit=\"KiB\">1048576</memory>\n"));
	const char *m0 = strstr(out, "<vnuma:vnuma"), *m1 = strstr(out, "</vnuma:vnuma>");
	assert_non_null(m0);
	assert_non_null(m1);
	_cleanup_free_ char *meta = strndup(m0, (size_t)(m1 - m0) + strlen("</vnuma:vnuma>"));
	struct vn_domain_meta m;
	struct vn_error err = {0};
	assert_int_equal(vn_domain_meta_parse(meta, &m, &err), 0);
	assert_string_equal(m.topology_path, "/ws2/t.xml");
	assert_string_equal(m.topology_name, "4node");
	assert_string_equal(m.kernel, "/ws2/bzImage");
	assert_string_equal(m.kernel_id, "r2 6.1");
	assert_string_equal(m.guest_dir, dir_b);
	assert_string_equal(m.accel, "tcg");
	vn_domain_meta_clear(&m);

	/* Not a save of ours: no metadata to make the new guest's. */
	char *bare = strstr(xml, "  <metadata>");
	memmove(bare, strstr(xml, "  <memory"), strlen(strstr(xml, "  <memory")) + 1);
	assert_null(vn_virt_save_xml_renamed(state, xml, &o, "99999999-2222-4333-8444-555555555555"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_lifecycle),        cmocka_unit_test(test_guest_dir_names),
		cmocka_unit_test(test_failed_kept),      cmocka_unit_test(test_open_failure),
		cmocka_unit_test(test_log_tail),         cmocka_unit_test(test_uri_remote),
		cmocka_unit_test(test_open_silent_host), cmocka_unit_test(test_embed_root),
		cmocka_unit_test(test_console_sink),     cmocka_unit_test(test_console_log_max),
		cmocka_unit_test(test_console_keeper),   cmocka_unit_test(test_save_xml_renamed),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
