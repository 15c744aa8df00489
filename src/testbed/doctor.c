/*
 * Can this host run vnuma, and what to fix: each check says what it found;
 * a failure says how to fix it. The accelerator checks boot a real kernel,
 * since a /dev/kvm that exists proves nothing (see virt/accel.c).
 */
#include <errno.h>
#include <fcntl.h>
#include <pwd.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <time.h>
#include <unistd.h>

#include "kernel/kernel.h"
#include "testbed/doctor.h"

#include "kernel/vmlinux.h"
#include "testbed/testbed.h"
#include "util/alloc.h"
#include "util/arch.h"
#include "util/cleanup.h"
#include "util/interrupt.h"
#include "util/clock.h"
#include "util/paths.h"
#include "util/spawn.h"
#include "util/strbuf.h"

/* The probe guest: one node is enough to see a kernel start. */
static const char probe_topology[] = "<topology name='vnuma-probe'>"
				     "<cpu sockets='1' cores='1' threads='1'/>"
				     "<node id='0' cpus='0' memory='128M'/>"
				     "<distances><row node='0'>10</row></distances>"
				     "</topology>";

/* The doctor waits this long (ms) for another vnuma to let go of the embedded driver. */
#define VN_DOCTOR_LOCK_WAIT_MS 10000

#define MIB (1024.0 * 1024.0)
#define GIB (1024.0 * MIB)

__attribute__((format(printf, 5, 6))) static struct vn_check *add(struct vn_doctor *d, const char *name,
								  enum vn_check_verdict v, const char *fix,
								  const char *fmt, ...)
{
	va_list ap;

	if (d->n == VN_DOCTOR_MAX_CHECKS)
		return &d->checks[d->n - 1];
	struct vn_check *c = &d->checks[d->n++];
	memset(c, 0, sizeof(*c));
	snprintf(c->name, sizeof(c->name), "%s", name);
	c->verdict = v;
	snprintf(c->fix, sizeof(c->fix), "%s", fix ? fix : "");
	va_start(ap, fmt);
	vsnprintf(c->detail, sizeof(c->detail), fmt, ap);
	va_end(ap);
	return c;
}

const char *vn_check_verdict_name(enum vn_check_verdict v)
{
	switch (v) {
	case VN_CHECK_OK: return "ok";
	case VN_CHECK_WARN: return "warn";
	case VN_CHECK_FAIL: return "FAIL";
	case VN_CHECK_SKIP: return "skip";
	}
	return "?";
}

static void check_state_dir(struct vn_doctor *d, const char *dir)
{
	_cleanup_free_ char *probe = NULL;
	struct stat sb;

	if (stat(dir, &sb) < 0) {
		add(d, "state-dir", VN_CHECK_FAIL, "create it, or point VNUMA_STATE_DIR elsewhere", "%s: %s", dir,
		    strerror(errno));
		return;
	}
	probe = vn_xasprintf("%s/.doctor-XXXXXX", dir);
	int fd = mkstemp(probe);
	if (fd < 0) {
		add(d, "state-dir", VN_CHECK_FAIL, "make it writable, or point VNUMA_STATE_DIR elsewhere",
		    "%s is not writable: %s", dir, strerror(errno));
		return;
	}
	close(fd);
	unlink(probe);
	if (sb.st_uid != geteuid() || (sb.st_mode & 022))
		add(d, "state-dir", VN_CHECK_WARN, "chown it to this user and chmod 0700",
		    "%s is writable, but mode %04o owner uid %u: other users could tamper with guests", dir,
		    (unsigned)(sb.st_mode & 07777), (unsigned)sb.st_uid);
	else
		add(d, "state-dir", VN_CHECK_OK, NULL, "%s (writable, mode %04o)", dir, (unsigned)(sb.st_mode & 07777));
}

static void check_file(struct vn_doctor *d, const char *name, const char *path, const char *what, const char *pkg)
{
	char fix[128];

	snprintf(fix, sizeof(fix), "apt-get install %s", pkg);
	if (access(path, X_OK) == 0)
		add(d, name, VN_CHECK_OK, NULL, "%s (%s)", path, what);
	else
		add(d, name, VN_CHECK_FAIL, fix, "%s missing: %s is packed into every guest image", path, what);
}

void vn_doctor_check_debug(struct vn_doctor *d, const char *root, const char *release)
{
	static const char *const tools[] = {"/usr/bin/gdb", "/usr/bin/crash", "/usr/bin/drgn"};
	struct vn_vmlinux v;
	struct vn_error e = {0};
	char missing[64] = "";

	if (vn_vmlinux_find(root, NULL, release, &v, &e) < 0)
		add(d, "kernel-debug", VN_CHECK_WARN, NULL, "%s", e.msg);
	else if (v.path)
		add(d, "kernel-debug", VN_CHECK_OK, NULL, "%s (build id %s)", v.path, v.build_id ? v.build_id : "none");
	else
		add(d, "kernel-debug", VN_CHECK_WARN, "for vnuma debug and dumps read with crash and drgn", "%s",
		    v.hint);
	vn_error_clear(&e);
	vn_vmlinux_clear(&v);
	for (size_t i = 0; i < sizeof(tools) / sizeof(tools[0]); i++)
		if (access(tools[i], X_OK) != 0)
			snprintf(missing + strlen(missing), sizeof(missing) - strlen(missing), " %s",
				 strrchr(tools[i], '/') + 1);
	if (*missing)
		add(d, "debug-tools", VN_CHECK_WARN, "apt-get install gdb crash python3-drgn", "missing:%s", missing);
	else
		add(d, "debug-tools", VN_CHECK_OK, NULL, "gdb, crash, drgn");
}

static void check_resources(struct vn_doctor *d, const char *state_dir)
{
	char line[256];
	long long avail_kb = -1;
	_cleanup_fclose_ FILE *f = fopen("/proc/meminfo", "re");

	while (f && fgets(line, sizeof(line), f))
		if (sscanf(line, "MemAvailable: %lld kB", &avail_kb) == 1)
			break;
	/* The 8-node topologies take 2 GiB of guest memory; QEMU adds its own. */
	if (avail_kb < 0)
		add(d, "memory", VN_CHECK_WARN, NULL, "cannot read MemAvailable from /proc/meminfo");
	else
		add(d, "memory", avail_kb * 1024.0 >= 3 * GIB ? VN_CHECK_OK : VN_CHECK_WARN,
		    avail_kb * 1024.0 >= 3 * GIB ? NULL : "free memory: the larger topologies need ~3 GiB",
		    "%.1f GiB available", avail_kb * 1024.0 / GIB);

	struct statvfs vfs;
	if (statvfs(state_dir, &vfs) < 0) {
		add(d, "disk", VN_CHECK_WARN, NULL, "cannot statvfs %s: %s", state_dir, strerror(errno));
		return;
	}
	double free_b = (double)vfs.f_bavail * (double)vfs.f_frsize;
	/* Guests need little; a kernel built from source needs ~4 GiB of tree and objects. */
	enum vn_check_verdict v = free_b >= 5 * GIB ? VN_CHECK_OK : free_b >= 0.5 * GIB ? VN_CHECK_WARN : VN_CHECK_FAIL;
	add(d, "disk", v, v == VN_CHECK_OK ? NULL : "free disk space: booting needs ~0.5 GiB, kernel builds ~5 GiB",
	    "%.1f GiB free under %s", free_b / GIB, state_dir);
}

/* Boot the kernel alone until it prints; *secs is how long that took. 0, or why it did not in why. */
static int probe_boot(struct vn_virt *v, const struct vn_topology *t, const char *kernel, enum vn_accel accel,
		      long limit_ms, double *secs, char *why, size_t len)
{
	char name[64];
	struct vn_virt_domain *dom = NULL;
	struct vn_error err = {0};

	snprintf(name, sizeof(name), "vnuma-doctor-%s-%d", vn_accel_name(accel), (int)getpid());
	struct vn_domain_opts o = {
		.name = name,
		.accel = accel,
		.kernel = kernel,
		.meta = {.topology_name = t->name, .kernel_id = "doctor probe"},
	};
	double t0 = vn_now_s();
	if (vn_virt_domain_create(v, t, &o, &dom, &err) < 0) {
		/* All of QEMU's lines, joined: the cause comes after its warnings. */
		char flat[VN_ACCEL_DETAIL_MAX - 64];
		vn_accel_oneline(err.msg, flat, sizeof(flat));
		snprintf(why, len, "QEMU did not start under %s: %s", accel == VN_ACCEL_KVM ? "KVM" : "TCG", flat);
		vn_error_clear(&err);
		return -1;
	}
	int rc = -1;
	bool running = true;
	for (;;) {
		*secs = vn_now_s() - t0;
		if (vn_console_log_shows_kernel(vn_virt_domain_console_log(dom))) {
			rc = 0;
			break;
		}
		if (vn_virt_domain_is_running(dom, &running, &err) < 0 || !running) {
			snprintf(why, len, "the guest stopped %.1f s after start without printing", *secs);
			break;
		}
		if (vn_was_interrupted()) {
			snprintf(why, len, "interrupted");
			break;
		}
		if (*secs * 1000 >= (double)limit_ms) {
			snprintf(why, len, "the guest made no progress in %.0f s", (double)limit_ms / 1000);
			break;
		}
		usleep(50 * 1000);
	}
	vn_error_clear(&err);
	vn_virt_domain_destroy(dom, &err);
	vn_error_clear(&err);
	vn_virt_domain_free(dom);
	return rc;
}

static void check_accelerators(struct vn_doctor *d, struct vn_virt *v, const char *kernel)
{
	_cleanup_topology_ struct vn_topology *t = NULL;
	struct vn_error err = {0};
	char why[VN_ACCEL_DETAIL_MAX], kvm_why[VN_ACCEL_DETAIL_MAX] = "", reason[VN_ACCEL_REASON_MAX + 64];
	double secs = 0;
	bool kvm_ok = false, tcg_ok = false;
	const char *kvm_fix = "guests will use TCG; for KVM enable nested virtualization (or use bare metal)";

	if (vn_topology_parse(probe_topology, sizeof(probe_topology) - 1, "probe", &t, &err) < 0) {
		add(d, "tcg-probe", VN_CHECK_FAIL, NULL, "internal: %s", err.msg);
		vn_error_clear(&err);
		return;
	}

	if (access("/dev/kvm", F_OK) < 0) {
		add(d, "kvm", VN_CHECK_SKIP, "for KVM speed: a host with VT-x/AMD-V, or nested virtualization enabled",
		    "no /dev/kvm: guests run under TCG (slower, but every check works)");
		add(d, "kvm-probe", VN_CHECK_SKIP, NULL, "no /dev/kvm");
	} else if (!vn_virt_kvm_offered(v, why, sizeof(why))) {
		add(d, "kvm", VN_CHECK_WARN, "add this user to group kvm, or run as root", "%s", why);
		add(d, "kvm-probe", VN_CHECK_SKIP, NULL, "KVM not offered");
	} else {
		add(d, "kvm", VN_CHECK_OK, NULL, "/dev/kvm present and accessible");
		if (probe_boot(v, t, kernel, VN_ACCEL_KVM, VN_KVM_PROOF_MS, &secs, why, sizeof(why)) == 0) {
			kvm_ok = true;
			add(d, "kvm-probe", VN_CHECK_OK, NULL, "kernel printed %.2f s after start", secs)->seconds =
				secs;
			snprintf(reason, sizeof(reason), "proven by vnuma doctor: kernel printed %.2f s after start",
				 secs);
			vn_virt_accel_remember(v, VN_ACCEL_KVM, reason);
		} else if (strncmp(why, "QEMU did not start", 18) == 0) {
			/* The short cause first: a long QEMU text is cut at the row's end, not before its cause. */
			char brief[VN_ACCEL_REASON_MAX];
			snprintf(kvm_why, sizeof(kvm_why), "%s", why);
			vn_accel_summarize(kvm_why, brief, sizeof(brief));
			add(d, "kvm-probe", VN_CHECK_WARN, kvm_fix, "/dev/kvm is present but %s; QEMU said: %s", brief,
			    why)
				->seconds = secs;
		} else {
			snprintf(kvm_why, sizeof(kvm_why), "/dev/kvm is present but %.*s (nested virtualization?)",
				 (int)sizeof(kvm_why) - 64, why);
			add(d, "kvm-probe", VN_CHECK_WARN, kvm_fix, "%s", kvm_why)->seconds = secs;
		}
	}

	if (probe_boot(v, t, kernel, VN_ACCEL_TCG, VN_TCG_PROOF_MS, &secs, why, sizeof(why)) == 0) {
		tcg_ok = true;
		add(d, "tcg-probe", VN_CHECK_OK, NULL, "kernel printed %.2f s after start", secs)->seconds = secs;
		if (!kvm_ok && *kvm_why)
			vn_virt_accel_remember(v, VN_ACCEL_TCG, kvm_why);
	} else {
		add(d, "tcg-probe", VN_CHECK_FAIL,
		    "see STATE_DIR/libvirt.log and the QEMU packages (apt-get install qemu-system-x86)", "%s", why)
			->seconds = secs;
	}
	d->can_boot = kvm_ok || tcg_ok;
	d->accel = kvm_ok ? VN_ACCEL_KVM : VN_ACCEL_TCG;
	add(d, "accelerator", d->can_boot ? VN_CHECK_OK : VN_CHECK_FAIL, d->can_boot ? NULL : "fix the probes above",
	    "%s",
	    kvm_ok   ? "guests will run under KVM"
	    : tcg_ok ? "guests will run under TCG"
		     : "no accelerator boots a guest");
}

/*
 * The other architectures (docs/arches.md): what `up --arch` needs installed.
 * Not probed by a boot: the first one downloads the architecture's kernel.
 * A missing piece is a warning, not a failure: x86 guests boot without it.
 */
static void check_arches(struct vn_doctor *d)
{
	_cleanup_strbuf_ struct vn_strbuf foreign = VN_STRBUF_INIT;
	struct vn_spawn_opts so = VN_SPAWN_OPTS_INIT;
	const char *argv[] = {"dpkg", "--print-foreign-architectures", NULL};
	struct vn_paths p;
	struct vn_error e = {0};

	so.capture = &foreign;
	if (vn_spawn_run(argv, &so, &e) < 0 || vn_paths_self(&p, &e) < 0) {
		vn_error_clear(&e);
		return;
	}
	for (int a = 0; a < VN_ARCH_COUNT; a++) {
		const struct vn_arch_info *ai = vn_arch_info((enum vn_arch)a);
		char name[32], qemu[64], agent[PATH_MAX + 64];
		if ((enum vn_arch)a == vn_arch_host())
			continue;
		snprintf(name, sizeof(name), "arch-%s", ai->name);
		snprintf(qemu, sizeof(qemu), "/usr/bin/%s", ai->emulator);
		snprintf(agent, sizeof(agent), "%s/%s/vnuma-agent", p.arch_dir, ai->name);
		const char *missing = access(qemu, X_OK) != 0    ? qemu
				      : access(agent, X_OK) != 0 ? "its cross-built in-guest programs"
				      : !strstr(foreign.s ? foreign.s : "", ai->deb) ? "Debian's archive of it (dpkg)"
										     : NULL;
		if (missing)
			add(d, name, VN_CHECK_WARN, "scripts/setup.sh --arches, then rebuild",
			    "up --arch %s cannot boot: %s missing", ai->name, missing);
		else
			add(d, name, VN_CHECK_OK, NULL,
			    "up --arch %s: %s, cross-built programs, Debian's %s archive (its kernel is fetched on "
			    "first use)",
			    ai->name, qemu, ai->deb);
	}
}

int vn_doctor_run(const struct vn_testbed_ctx *ctx, struct vn_doctor *d, struct vn_error *err)
{
	_cleanup_kernel_ struct vn_kernel *k = NULL;
	struct vn_virt *v = NULL;
	struct vn_error e = {0};

	memset(d, 0, sizeof(*d));
	check_state_dir(d, ctx->state_dir);
	if (geteuid() == 0) {
		if (getpwnam("libvirt-qemu"))
			add(d, "libvirt-qemu", VN_CHECK_OK, NULL,
			    "user exists (libvirt's embedded driver needs it as root)");
		else
			add(d, "libvirt-qemu", VN_CHECK_FAIL, "scripts/setup.sh, or: useradd -r libvirt-qemu",
			    "user missing: libvirt's embedded driver refuses to start as root without it");
	}
	check_file(d, "qemu", "/usr/bin/qemu-system-x86_64", "the emulator", "qemu-system-x86");
	check_file(d, "busybox", "/bin/busybox", "the guest's shell and tools", "busybox-static");
	check_file(d, "numactl", "/usr/bin/numactl", "placement in the guest", "numactl");
	if (vn_kernel_resolve_with(NULL, NULL, NULL, &k, &e) == 0) {
		add(d, "kernel", VN_CHECK_OK, NULL, "stock kernel %s (%s)", k->release, k->image);
		vn_doctor_check_debug(d, "", k->release);
	} else
		add(d, "kernel", VN_CHECK_FAIL, "apt-get install linux-image-amd64", "%s", e.msg);
	vn_error_clear(&e);
	check_resources(d, ctx->state_dir);
	check_arches(d);

	/* A short lock wait: a doctor that hangs behind another vnuma says nothing. */
	if (vn_virt_open(ctx->uri, ctx->state_dir, VN_DOCTOR_LOCK_WAIT_MS, &v, &e) < 0) {
		add(d, "libvirt", VN_CHECK_FAIL,
		    "apt-get install libvirt-daemon-driver-qemu; details in STATE_DIR/libvirt.log", "%s", e.msg);
		vn_error_clear(&e);
		return 0;
	}
	unsigned long lv = 0, qv = 0;
	vn_virt_versions(v, &lv, &qv);
	add(d, "libvirt", VN_CHECK_OK, NULL, "libvirt %lu.%lu.%lu, QEMU %lu.%lu.%lu via %s", lv / 1000000,
	    lv / 1000 % 1000, lv % 1000, qv / 1000000, qv / 1000 % 1000, qv % 1000, vn_virt_uri(v));
	if (k)
		check_accelerators(d, v, k->image);
	vn_virt_close(v);
	return 0;
}

bool vn_doctor_ok(const struct vn_doctor *d)
{
	for (size_t i = 0; i < d->n; i++)
		if (d->checks[i].verdict == VN_CHECK_FAIL)
			return false;
	return d->can_boot;
}
