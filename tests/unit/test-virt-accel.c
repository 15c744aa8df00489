/*
 * The accelerator decision against a fake world: a fake clock, a fake console
 * and a fake libvirt, one per way a host's KVM can be (absent, refusing to
 * start, silent, working), plus cached and forced verdicts.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <sys/wait.h>
#include <stdlib.h>
#include <signal.h>

#include "virt/virt-priv.h"

struct behaviour {
	const char *start_error; /* NULL: starts */
	long progress_at;        /* ms after start the kernel prints; -1: never */
	long dies_at;            /* ms after start QEMU exits; -1: never */
};

struct fake {
	long now;
	bool kvm_offered;
	int cached; /* -1: no cache line */
	const char *cached_reason;
	struct behaviour kvm, tcg;
	/* observed */
	int starts[2], abandons, puts;
	enum vn_accel put_verdict;
	char put_reason[VN_ACCEL_DETAIL_MAX];
	char notes[2048];
	/* the running attempt */
	bool up;
	enum vn_accel cur;
	long started;
};

static const struct behaviour *cur_b(struct fake *f)
{
	return f->cur == VN_ACCEL_KVM ? &f->kvm : &f->tcg;
}

static long f_now(void *d)
{
	return ((struct fake *)d)->now;
}

static void f_sleep(void *d, long ms)
{
	((struct fake *)d)->now += ms;
}

static bool f_offered(void *d, char *why, size_t len)
{
	snprintf(why, len, "no /dev/kvm");
	return ((struct fake *)d)->kvm_offered;
}

static int f_cache_get(void *d, enum vn_accel *v, char *reason, size_t len)
{
	struct fake *f = d;

	if (f->cached < 0)
		return -ENOENT;
	*v = (enum vn_accel)f->cached;
	snprintf(reason, len, "%s", f->cached_reason ? f->cached_reason : "");
	return 0;
}

static void f_cache_put(void *d, enum vn_accel v, const char *reason)
{
	struct fake *f = d;

	f->puts++;
	f->put_verdict = v;
	snprintf(f->put_reason, sizeof(f->put_reason), "%s", reason);
}

static int f_start(void *d, enum vn_accel a, struct vn_error *err)
{
	struct fake *f = d;

	assert_false(f->up); /* every failed attempt was abandoned before the next */
	f->cur = a;
	f->starts[a == VN_ACCEL_KVM]++;
	if (cur_b(f)->start_error)
		return vn_infra_error(err, -EIO, "cannot start domain 'g' (%s): %s", vn_accel_name(a),
				      cur_b(f)->start_error);
	f->up = true;
	f->started = f->now;
	return 0;
}

static bool f_running(void *d)
{
	struct fake *f = d;
	const struct behaviour *b = cur_b(f);

	return f->up && (b->dies_at < 0 || f->now - f->started < b->dies_at);
}

/* The fake console: what SeaBIOS prints at once, then the kernel's first lines at progress_at. */
static bool f_progressed(void *d)
{
	struct fake *f = d;
	const struct behaviour *b = cur_b(f);
	char console[256] = "SeaBIOS (version 1.16.2-debian-1.16.2-1)\r\nBooting from ROM..\r\n"
			    "Probing EDD (edd=off to disable)... ok\r\n";

	if (f->up && b->progress_at >= 0 && f->now - f->started >= b->progress_at)
		strcat(console, "[    0.000000] Linux version 6.1.0-57-amd64\r\n");
	return vn_console_shows_kernel(console, strlen(console));
}

static void f_abandon(void *d)
{
	struct fake *f = d;

	f->abandons++;
	f->up = false;
}

static void f_notify(void *d, const char *line)
{
	struct fake *f = d;

	strncat(f->notes, line, sizeof(f->notes) - strlen(f->notes) - 2);
	strcat(f->notes, "\n");
}

static const struct behaviour works = {NULL, 300, -1};
static const struct behaviour tcg_works = {NULL, 5700, -1};
static const struct behaviour silent = {NULL, -1, -1};
static const struct behaviour msr = {"internal error: qemu unexpectedly closed the monitor: "
				     "error: failed to set MSR 0x48b to 0x1582e00000000",
				     -1, -1};
static const struct vn_accel_limits lim = {.kvm_proof_ms = VN_KVM_PROOF_MS, .tcg_proof_ms = VN_TCG_PROOF_MS};

static struct fake world(bool offered, struct behaviour kvm)
{
	return (struct fake){.kvm_offered = offered, .cached = -1, .kvm = kvm, .tcg = tcg_works};
}

static int decide(struct fake *f, const char *force, struct vn_accel_verdict *v, struct vn_error *err)
{
	const struct vn_accel_ops ops = {
		.data = f,
		.now_ms = f_now,
		.sleep_ms = f_sleep,
		.kvm_offered = f_offered,
		.cache_get = f_cache_get,
		.cache_put = f_cache_put,
		.start = f_start,
		.running = f_running,
		.progressed = f_progressed,
		.abandon = f_abandon,
		.notify = f_notify,
	};
	return vn_accel_boot(&ops, force, &lim, v, err);
}

static void test_no_dev_kvm(void **s)
{
	struct fake f = world(false, works);
	struct vn_accel_verdict v;
	struct vn_error err = {0};

	assert_int_equal(decide(&f, NULL, &v, &err), 0);
	assert_int_equal(v.accel, VN_ACCEL_TCG);
	assert_string_equal(v.reason, "no usable KVM: no /dev/kvm");
	assert_int_equal(f.starts[1], 0);
	assert_int_equal(f.puts, 0); /* nothing to prove: looking at /dev/kvm is cheap */
	assert_true(f.up);
}

static void test_kvm_fails_to_start(void **s)
{
	struct fake f = world(true, msr);
	struct vn_accel_verdict v;
	struct vn_error err = {0};

	assert_int_equal(decide(&f, NULL, &v, &err), 0);
	assert_int_equal(v.accel, VN_ACCEL_TCG);
	assert_non_null(strstr(v.reason, "failed to set MSR"));
	assert_non_null(strstr(f.notes, "using TCG"));
	assert_int_equal(f.starts[1], 1);
	assert_int_equal(f.starts[0], 1);
	assert_int_equal(f.abandons, 0); /* a failed start leaves nothing to abandon */
	assert_int_equal(f.puts, 1);
	assert_int_equal(f.put_verdict, VN_ACCEL_TCG);
	assert_non_null(strstr(f.put_reason, "failed to set MSR"));
}

/* What libvirt 9.0 hands over on a host whose KVM fails with `failed to set MSR`: warnings first, the cause, an assertion. */
static const char msr_multiline[] =
	"internal error: qemu unexpectedly closed the monitor: 2026-12-02T04:29:57.950723Z qemu-system-x86_64: "
	"-accel kvm: warning: Number of SMP cpus requested (4) exceeds the recommended cpus supported by KVM (2)\n"
	"2026-12-02T04:29:57.950770Z qemu-system-x86_64: -accel kvm: warning: Number of hotpluggable cpus requested "
	"(4) exceeds the recommended cpus supported by KVM (2)\n"
	"2026-12-02T04:29:58.010000Z qemu-system-x86_64: warning: host doesn't support requested feature: "
	"CPUID.01H:ECX.pni [bit 0]\n"
	"2026-12-02T04:29:58.020000Z qemu-system-x86_64: error: failed to set MSR 0x10a to 0x69\n"
	"qemu-system-x86_64: ../../target/i386/kvm/kvm.c:3183: kvm_buf_set_msrs: Assertion `ret == "
	"cpu->kvm_msr_buf->nmsrs' failed.";

static void test_kvm_fails_multiline(void **s)
{
	struct fake f = world(true, (struct behaviour){msr_multiline, -1, -1});
	struct vn_accel_verdict v;
	struct vn_error err = {0};

	assert_int_equal(decide(&f, NULL, &v, &err), 0);
	assert_int_equal(v.accel, VN_ACCEL_TCG);
	/* One short line on the terminal, said once, with the cause and not the warnings before it. */
	assert_string_equal(f.notes, "KVM: QEMU failed to start under KVM (failed to set MSR 0x10a; nested "
				     "virtualization?); using TCG\n");
	assert_string_equal(
		v.reason,
		"no usable KVM: QEMU failed to start under KVM (failed to set MSR 0x10a; nested virtualization?)");
	/* All of it, as one line, in the detail and the cache: doctor and the next up read it there. */
	assert_null(strchr(v.detail, '\n'));
	assert_non_null(strstr(v.detail, "exceeds the recommended cpus"));
	assert_non_null(strstr(v.detail, "Assertion `ret == cpu->kvm_msr_buf->nmsrs' failed."));
	assert_non_null(strstr(f.put_reason, "kvm_buf_set_msrs: Assertion"));

	/* The next up reads that detail back from the cache and says the same short thing. */
	struct fake g = world(true, works);
	g.cached = VN_ACCEL_TCG;
	g.cached_reason = f.put_reason;
	assert_int_equal(decide(&g, NULL, &v, &err), 0);
	assert_string_equal(v.reason, "cached verdict: QEMU failed to start under KVM (failed to set MSR 0x10a; "
				      "nested virtualization?)");
	assert_string_equal(v.detail, f.put_reason);
}

static void test_summarize(void **s)
{
	char out[VN_ACCEL_REASON_MAX], flat[256];

	/* Another cause than the MSR: the error line, past libvirt's wrapper, the timestamp and the program. */
	vn_accel_summarize("QEMU did not start under KVM: cannot start domain 'g' (kvm): internal error: qemu "
			   "unexpectedly closed the monitor: 2026-12-02T04:29:57.950723Z qemu-system-x86_64: -accel "
			   "kvm: warning: slow | 2026-12-02T04:29:57.950770Z qemu-system-x86_64: error: failed to "
			   "initialize kvm: Permission denied",
			   out, sizeof(out));
	assert_string_equal(out, "QEMU failed to start under KVM (failed to initialize kvm: Permission denied)");
	/* Only warnings: the first one, rather than nothing. */
	vn_accel_summarize("qemu-system-x86_64: warning: a\nqemu-system-x86_64: warning: b", out, sizeof(out));
	assert_string_equal(out, "warning: a");
	/* A reason of our own stays as it is. */
	vn_accel_summarize("no /dev/kvm", out, sizeof(out));
	assert_string_equal(out, "no /dev/kvm");
	/* Long text is cut, and nothing unprintable reaches a terminal. */
	char lng[400];
	memset(lng, 'x', sizeof(lng) - 1);
	lng[0] = '\033';
	lng[sizeof(lng) - 1] = '\0';
	vn_accel_summarize(lng, out, sizeof(out));
	assert_true(strlen(out) <= 103);
	assert_int_equal(out[0], '?');
	assert_non_null(strstr(out, "..."));
	/* Lines joined for a cache line; blank lines and the trailing newline dropped. */
	vn_accel_oneline("a\n\nb\r\nc\n", flat, sizeof(flat));
	assert_string_equal(flat, "a | b | c");
	vn_accel_oneline("abcdef", flat, 4);
	assert_string_equal(flat, "abc");
}

static void test_kvm_silent(void **s)
{
	struct fake f = world(true, silent);
	struct vn_accel_verdict v;
	struct vn_error err = {0};

	assert_int_equal(decide(&f, NULL, &v, &err), 0);
	assert_int_equal(v.accel, VN_ACCEL_TCG);
	assert_non_null(strstr(v.reason, "/dev/kvm is present but the guest made no progress in 5 s"));
	assert_non_null(strstr(f.notes, "KVM: /dev/kvm is present but the guest made no progress in 5 s "
					"(nested virtualization?); using TCG"));
	assert_int_equal(f.abandons, 1);
	/* Given up at the deadline, not after the long agent timeout; TCG then proved itself. */
	assert_true(f.now >= VN_KVM_PROOF_MS && f.now < VN_KVM_PROOF_MS + 100 + tcg_works.progress_at);
	assert_int_equal(f.puts, 1);
	assert_int_equal(f.put_verdict, VN_ACCEL_TCG);
}

static void test_kvm_dies(void **s)
{
	struct fake f = world(true, (struct behaviour){NULL, -1, 800});
	struct vn_accel_verdict v;
	struct vn_error err = {0};

	assert_int_equal(decide(&f, NULL, &v, &err), 0);
	assert_int_equal(v.accel, VN_ACCEL_TCG);
	assert_non_null(strstr(v.reason, "died 0.8 s after start"));
	/* No need to wait out the deadline: TCG started right after the death. */
	assert_true(f.now < 800 + 100 + tcg_works.progress_at);
}

static void test_kvm_proven(void **s)
{
	struct fake f = world(true, works);
	struct vn_accel_verdict v;
	struct vn_error err = {0};

	assert_int_equal(decide(&f, NULL, &v, &err), 0);
	assert_int_equal(v.accel, VN_ACCEL_KVM);
	assert_string_equal(v.reason, "proven: kernel printed 0.3 s after start");
	assert_int_equal(f.starts[0], 0);
	assert_int_equal(f.puts, 1);
	assert_int_equal(f.put_verdict, VN_ACCEL_KVM);
	assert_string_equal(f.notes, "");
}

static void test_cached_tcg(void **s)
{
	struct fake f = world(true, works);
	struct vn_accel_verdict v;
	struct vn_error err = {0};

	f.cached = VN_ACCEL_TCG;
	f.cached_reason = "/dev/kvm is present but the guest made no progress in 5 s (nested virtualization?)";
	assert_int_equal(decide(&f, NULL, &v, &err), 0);
	assert_int_equal(v.accel, VN_ACCEL_TCG);
	assert_non_null(strstr(v.reason, "cached verdict: /dev/kvm is present"));
	assert_int_equal(f.starts[1], 0);
	assert_int_equal(f.puts, 0);
	assert_int_equal(f.now, 0); /* no probing at all */
}

static void test_cached_kvm_still_works(void **s)
{
	struct fake f = world(true, works);
	struct vn_accel_verdict v;
	struct vn_error err = {0};

	f.cached = VN_ACCEL_KVM;
	assert_int_equal(decide(&f, NULL, &v, &err), 0);
	assert_int_equal(v.accel, VN_ACCEL_KVM);
	assert_non_null(strstr(v.reason, "re-proven"));
	assert_int_equal(f.starts[1], 1);
}

static void test_cached_kvm_broke(void **s)
{
	struct fake f = world(true, silent);
	struct vn_accel_verdict v;
	struct vn_error err = {0};

	f.cached = VN_ACCEL_KVM;
	assert_int_equal(decide(&f, NULL, &v, &err), 0);
	assert_int_equal(v.accel, VN_ACCEL_TCG);
	assert_int_equal(f.starts[1], 2); /* probed once more before giving up */
	assert_int_equal(f.abandons, 2);
	assert_non_null(strstr(f.notes, "probing once more"));
	assert_int_equal(f.put_verdict, VN_ACCEL_TCG);
}

static void test_tcg_silent_too_is_not_cached(void **s)
{
	struct fake f = world(true, silent);
	struct vn_accel_verdict v;
	struct vn_error err = {0};

	f.tcg = silent; /* a kernel that prints nothing anywhere is not KVM's fault */
	assert_int_equal(decide(&f, NULL, &v, &err), 0);
	assert_int_equal(v.accel, VN_ACCEL_TCG);
	assert_int_equal(f.puts, 0);
}

static void test_forced(void **s)
{
	struct vn_accel_verdict v;
	struct vn_error err = {0};

	struct fake f = world(true, works);
	assert_int_equal(decide(&f, "tcg", &v, &err), 0);
	assert_int_equal(v.accel, VN_ACCEL_TCG);
	assert_string_equal(v.reason, "forced by VNUMA_ACCEL=tcg");
	assert_int_equal(f.starts[1], 0);
	assert_int_equal(f.puts, 0);

	f = world(false, works);
	assert_int_equal(decide(&f, "kvm", &v, &err), 0);
	assert_int_equal(v.accel, VN_ACCEL_KVM);
	assert_non_null(strstr(v.reason, "forced by VNUMA_ACCEL=kvm"));

	/* Forced but silent: no fallback, and no waiting out the agent timeout either. */
	f = world(true, silent);
	assert_int_equal(decide(&f, "kvm", &v, &err), -ETIMEDOUT);
	assert_int_equal(err.kind, VN_ERR_INFRA);
	assert_non_null(strstr(err.msg, "forced"));
	assert_int_equal(f.starts[0], 0);
	assert_int_equal(f.abandons, 1);
	vn_error_clear(&err);

	f = world(true, msr);
	assert_true(decide(&f, "kvm", &v, &err) < 0);
	assert_non_null(strstr(err.msg, "failed to set MSR"));
	vn_error_clear(&err);

	f = world(true, works);
	assert_int_equal(decide(&f, "fast", &v, &err), -EINVAL);
	assert_int_equal(err.kind, VN_ERR_INPUT);
	assert_int_equal(f.starts[0] + f.starts[1], 0);
	vn_error_clear(&err);
}

static void test_console_detector(void **s)
{
#define SHOWS(str) vn_console_shows_kernel(str, strlen(str))
	assert_false(SHOWS(""));
	assert_false(
		SHOWS("SeaBIOS (version 1.16.2)\r\nBooting from ROM..\r\nProbing EDD (edd=off to disable)... ok\r\n"));
	assert_true(SHOWS("Booting from ROM..\r\n[    0.000000] Command line: console=ttyS0\r\n"));
	assert_true(SHOWS("[ 1234.567890] x"));
	assert_true(SHOWS("Linux version 6.1.0 (no timestamps)"));
	assert_true(SHOWS("vnuma-init: modules loaded\r\n")); /* a `quiet` kernel */
	assert_false(SHOWS("[ 12.3] not printk"));
	assert_false(SHOWS("x[    0.000000] mid-line"));
	assert_false(SHOWS("[    0.000000"));
#undef SHOWS
}

/* The kernel's last words, as the console log holds them (\r\n, timestamps, a panic's trace after it). */
static void test_console_death(void **s)
{
#define SCAN(str, at) vn_console_death_scan(str, strlen(str), at)
	size_t at = 99;

	assert_int_equal(SCAN("", NULL), VN_DEATH_NONE);
	assert_int_equal(SCAN("[    1.0] Run /init as init process\r\nvnuma-init: ready\r\n", NULL), VN_DEATH_NONE);
	assert_int_equal(SCAN("[   12.41] ACPI: PM: Preparing to enter system sleep state S5\r\n"
			      "[   12.42] reboot: Power down\r\n",
			      &at),
			 VN_DEATH_POWEROFF);
	assert_int_equal(at, strlen("[   12.41] ACPI: PM: Preparing to enter system sleep state S5\r\n[   12.42] "));
	assert_int_equal(SCAN("[ 5.75] sysrq: Resetting\r\n", NULL), VN_DEATH_REBOOT);
	assert_int_equal(SCAN("[ 5.75] reboot: Restarting system\r\n", NULL), VN_DEATH_REBOOT);
	assert_int_equal(SCAN("[ 5.75] reboot: System halted\r\n", NULL), VN_DEATH_HALT);
	/* A panic resets the machine (panic=-1): the panic is the cause, whatever follows it. */
	assert_int_equal(SCAN("[ 6.01] sysrq: Trigger a crash\r\n[ 6.01] Kernel panic - not syncing: sysrq triggered "
			      "crash\r\n[ 6.01] Call Trace:\r\n[ 6.02] reboot: Restarting system\r\n",
			      &at),
			 VN_DEATH_PANIC);
	assert_int_equal(at, strlen("[ 6.01] sysrq: Trigger a crash\r\n[ 6.01] "));
	/* Bytes, not a string: a NUL before the marker does not hide it. */
	const char nul[] = "x\0reboot: Power down";
	assert_int_equal(vn_console_death_scan(nul, sizeof(nul) - 1, NULL), VN_DEATH_POWEROFF);
	/* A marker cut short is not one. */
	assert_int_equal(SCAN("reboot: Power dow", NULL), VN_DEATH_NONE);
	assert_string_equal(vn_console_death_name(VN_DEATH_PANIC), "panicked");
	assert_string_equal(vn_console_death_name(VN_DEATH_POWEROFF), "powered off");
#undef SCAN
}

static void append(const char *path, const char *text)
{
	FILE *f = fopen(path, "a");

	assert_non_null(f);
	fputs(text, f);
	fclose(f);
}

/* The watch reads only the console's new bytes, and a marker split between two reads is still seen. */
static void test_watch_console(void **s)
{
	char dir[] = "/tmp/vn-watch.XXXXXX", path[64];
	struct vn_error err = {0};

	assert_non_null(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/console.log", dir);
	/* No console yet: nothing to say. */
	struct vn_virt_watch *w = vn_virt_watch_new(NULL, "g", path);
	assert_int_equal(vn_virt_watch_check(w, &err), 0);
	append(path, "[    1.0] Run /init as init process\r\nvnuma-init: ready\r\n");
	assert_int_equal(vn_virt_watch_check(w, &err), 0);
	append(path, "[   12.4] reboot: Power");
	assert_int_equal(vn_virt_watch_check(w, &err), 0);
	append(path, " down\r\n");
	assert_int_equal(vn_virt_watch_check(w, &err), -EHOSTDOWN);
	assert_int_equal(err.kind, VN_ERR_INFRA);
	assert_non_null(strstr(err.msg, "guest g powered off (console: \"reboot: Power down\")"));
	assert_non_null(err.detail);
	assert_non_null(strstr(err.detail, "--- last lines of the console log ---\n"));
	assert_non_null(strstr(err.detail, "vnuma-init: ready\n"));
	vn_error_clear(&err);
	/* Dead stays dead. */
	assert_int_equal(vn_virt_watch_check(w, &err), -EHOSTDOWN);
	vn_error_clear(&err);
	vn_virt_watch_free(w);

	/* A console truncated by a new boot is read again from its start. */
	w = vn_virt_watch_new(NULL, "g", path);
	assert_int_equal(vn_virt_watch_check(w, &err), -EHOSTDOWN);
	vn_error_clear(&err);
	vn_virt_watch_free(w);
	FILE *f = fopen(path, "w");
	fputs("booting again\r\n", f);
	fclose(f);
	w = vn_virt_watch_new(NULL, "g", path);
	assert_int_equal(vn_virt_watch_check(w, &err), 0);
	f = fopen(path, "w");
	fputs("[ 1.0] Kernel panic - not syncing: VFS\r\n", f);
	fclose(f);
	assert_int_equal(vn_virt_watch_check(w, &err), -EHOSTDOWN);
	assert_non_null(strstr(err.msg, "guest g panicked (console: \"Kernel panic - not syncing: VFS\")"));
	vn_error_clear(&err);
	vn_virt_watch_free(w);

	/* The guest's words reach the message and its console tail with no escape sequence and as UTF-8. */
	w = vn_virt_watch_new(NULL, "g", path);
	f = fopen(path, "w");
	fputs("[ 1.0] Kernel panic - not syncing: \x1b]0;PWNED\x07\x1b[2J\xff\xc2\x85x\r\n", f);
	fclose(f);
	assert_int_equal(vn_virt_watch_check(w, &err), -EHOSTDOWN);
	assert_non_null(strstr(err.msg, "(console: \"Kernel panic - not syncing: ?]0;PWNED??[2J??x\")"));
	assert_non_null(err.detail);
	assert_non_null(strstr(err.detail, "not syncing: ?]0;PWNED??[2J??x\n"));
	vn_error_clear(&err);
	vn_virt_watch_free(w);

	/* A long-lived guest's console: its last words are found by the first check, its megabytes unread. */
	f = fopen(path, "w");
	for (int i = 0; i < 3 * 16384; i++)
		fputs("[ 1.0] a line of 64 bytes of console chatter .................\r\n", f);
	fputs("[ 9.9] reboot: Power down\r\n", f);
	fclose(f);
	w = vn_virt_watch_new(NULL, "g", path);
	assert_int_equal(vn_virt_watch_check(w, &err), -EHOSTDOWN);
	vn_error_clear(&err);
	vn_virt_watch_free(w);
	unlink(path);
	rmdir(dir);
}

/* Under the embedded driver the watch also sees QEMU go, by the pid in libvirt's pid file. */
static void test_watch_qemu_pid(void **s)
{
	char dir[] = "/tmp/vn-watch.XXXXXX", path[128], log[128];
	struct vn_error err = {0};

	assert_non_null(mkdtemp(dir));
	snprintf(log, sizeof(log), "%s/console.log", dir);
	append(log, "vnuma-init: ready\r\n");
	snprintf(path, sizeof(path), "%s/libvirt/run/qemu", dir);
	char cmd[256];
	snprintf(cmd, sizeof(cmd), "mkdir -p %s", path);
	assert_int_equal(system(cmd), 0);
	/* A stand-in QEMU: a process whose command line names the guest as libvirt's -name does. */
	pid_t pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		setpgid(0, 0); /* its sleep goes with it */
		execl("/bin/sh", "sh", "-c", "sleep 30; :", "-name", "guest=g,debug-threads=on", (char *)NULL);
		_exit(127);
	}
	usleep(100 * 1000);
	snprintf(path, sizeof(path), "%s/libvirt/run/qemu/g.pid", dir);
	FILE *f = fopen(path, "w");
	fprintf(f, "%d", (int)pid);
	fclose(f);
	struct vn_virt_watch *w = vn_virt_watch_new(dir, "g", log);
	assert_int_equal(vn_virt_watch_check(w, &err), 0);
	/* A pid that is not this guest's QEMU (another guest's, or any process's) is not watched. */
	snprintf(path, sizeof(path), "%s/libvirt/run/qemu/h.pid", dir);
	f = fopen(path, "w");
	fprintf(f, "%d", (int)pid);
	fclose(f);
	struct vn_virt_watch *other = vn_virt_watch_new(dir, "h", log);
	snprintf(path, sizeof(path), "%s/libvirt/run/qemu/g.pid", dir);
	f = fopen(path, "w");
	fprintf(f, "%d", (int)getpid());
	fclose(f);
	struct vn_virt_watch *self = vn_virt_watch_new(dir, "g", log);
	kill(-pid, SIGKILL);
	waitpid(pid, NULL, 0);
	assert_int_equal(vn_virt_watch_check(w, &err), -EHOSTDOWN);
	char want[96];
	snprintf(want, sizeof(want), "guest g: its QEMU process (pid %d) ended", (int)pid);
	assert_string_equal(err.msg, want);
	vn_error_clear(&err);
	assert_int_equal(vn_virt_watch_check(other, &err), 0);
	assert_int_equal(vn_virt_watch_check(self, &err), 0);
	vn_virt_watch_free(w);
	vn_virt_watch_free(other);
	vn_virt_watch_free(self);
	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	assert_int_equal(system(cmd), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_no_dev_kvm),
		cmocka_unit_test(test_kvm_fails_to_start),
		cmocka_unit_test(test_kvm_fails_multiline),
		cmocka_unit_test(test_summarize),
		cmocka_unit_test(test_kvm_silent),
		cmocka_unit_test(test_kvm_dies),
		cmocka_unit_test(test_kvm_proven),
		cmocka_unit_test(test_cached_tcg),
		cmocka_unit_test(test_cached_kvm_still_works),
		cmocka_unit_test(test_cached_kvm_broke),
		cmocka_unit_test(test_tcg_silent_too_is_not_cached),
		cmocka_unit_test(test_forced),
		cmocka_unit_test(test_console_detector),
		cmocka_unit_test(test_console_death),
		cmocka_unit_test(test_watch_console),
		cmocka_unit_test(test_watch_qemu_pid),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
