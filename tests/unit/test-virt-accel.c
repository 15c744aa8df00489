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
	char put_reason[VN_ACCEL_REASON_MAX];
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

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_no_dev_kvm),
		cmocka_unit_test(test_kvm_fails_to_start),
		cmocka_unit_test(test_kvm_silent),
		cmocka_unit_test(test_kvm_dies),
		cmocka_unit_test(test_kvm_proven),
		cmocka_unit_test(test_cached_tcg),
		cmocka_unit_test(test_cached_kvm_still_works),
		cmocka_unit_test(test_cached_kvm_broke),
		cmocka_unit_test(test_tcg_silent_too_is_not_cached),
		cmocka_unit_test(test_forced),
		cmocka_unit_test(test_console_detector),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
