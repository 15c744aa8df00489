/*
 * boot.c: how a guest boots and how long vnuma waits for it: the PVH or
 * bzImage path, proven per kernel (vn_testbed_boot_path), and one boot
 * attempt of a guest (vn_testbed_boot_attempt) with its failure kept.
 */
#include "testbed/up.h"
#include "testbed/testbed-priv.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>
#include <unistd.h>

#include "guest/agent.h"
#include "guest/disk.h"
#include "kernel/kernel.h"
#include "testbed/locality.h"
#include "topology/tiers.h"
#include "util/alloc.h"
#include "util/cleanup.h"
#include "util/clock.h"
#include "util/dir.h"
#include "util/file.h"
#include "util/interrupt.h"
#include "util/parse.h"
#include "util/state.h"
#include "virt/save.h"

/* The "Kernel panic - not syncing: ..." line, if the console has one (malloc'd). */
static char *console_panic_line(const char *log_path)
{
	_cleanup_free_ char *tail = NULL;
	struct vn_error e = {0};

	if (vn_console_log_tail(log_path, 200, &tail, &e) < 0)
		return NULL;
	char *p = strstr(tail, "Kernel panic");
	if (!p)
		return NULL;
	return vn_xstrndup(p, strcspn(p, "\r\n"));
}

/* Boot failure: guest destroyed, its logs kept, the console tail and where they are into detail. */
__attribute__((format(printf, 5, 6))) static int boot_failed(struct vn_virt_domain *d, const char *log_path,
							     struct vn_error *err, int code, const char *fmt, ...)
{
	char msg[1024];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	_cleanup_free_ char *tail = NULL;
	_cleanup_free_ char *kept = NULL;
	struct vn_error e = {0};

	vn_console_log_tail(log_path, VN_CONSOLE_TAIL_LINES, &tail, &e);
	vn_error_clear(&e);
	if (vn_virt_domain_destroy_keep(d, &kept, &e) < 0) {
		vn_error_clear(&e);
		vn_virt_domain_destroy(d, &e); /* keeping the logs failed; still leave nothing running */
	}
	vn_error_clear(&e);
	vn_infra_error(err, code, "%s", msg);
	vn_console_failure_detail(err, tail, kept);
	return err->code;
}

void vn_testbed_progress(const struct vn_up_opts *o, const char *stage, const char *fmt, ...)
{
	char detail[1024];
	va_list ap;

	if (!o->progress.stage)
		return;
	va_start(ap, fmt);
	vsnprintf(detail, sizeof(detail), fmt, ap);
	va_end(ap);
	o->progress.stage(o->progress.data, stage, detail);
}

static void accel_notice(void *data, const char *line)
{
	const struct vn_up_opts *o = data;

	if (o->progress.stage)
		o->progress.stage(o->progress.data, "note", line);
}

/*
 * How the kernel boots: its PVH vmlinux where it has one (seconds faster
 * under TCG: no in-guest decompression of an XZ kernel), under qboot (no
 * SeaBIOS handover) unless the topology has devices; else, or with
 * VNUMA_BOOT=bzimage, the bzImage under SeaBIOS. A PVH path is proven per
 * kernel and state dir like an accelerator. Until a PVH boot of a kernel has
 * answered here (marked "proven" beside the cached vmlinux), a PVH boot gets
 * half the deadline; if it fails (silent, panic, no agent) its logs go to
 * STATE/failed and the bzImage boots instead, and when that answers the
 * kernel's PVH path is marked "stalled" and not tried again. The fidelity check
 * proves on every boot that the guest still sees the topology.
 */

int vn_testbed_icount(const struct vn_up_opts *o, char **out, bool *auto_shift, struct vn_error *err)
{
	const char *shift = getenv("VNUMA_ICOUNT_SHIFT"), *accel = getenv("VNUMA_ACCEL");
	struct vn_error e = {0};
	long n;

	*out = NULL;
	*auto_shift = false;
	if (!o->virtual_time)
		return 0;
	if (accel && strcmp(accel, "kvm") == 0)
		return vn_input_error(err, "VNUMA_ACCEL=kvm: virtual time counts instructions, which only TCG can");
	if (!shift || !*shift || strcmp(shift, "auto") == 0) {
		*out = vn_xstrdup("shift=auto,sleep=off");
		*auto_shift = true;
		return 0;
	}
	if (vn_int_parse(shift, 0, 10, &n, &e) < 0) {
		vn_input_error(err, "VNUMA_ICOUNT_SHIFT=%s: %s (0..10 or auto)", shift, e.msg);
		vn_error_clear(&e);
		return err->code;
	}
	*out = vn_xasprintf("shift=%ld,sleep=off", n);
	return 0;
}

void vn_testbed_boot_choice_clear(struct vn_boot_choice *bc)
{
	free(bc->pvh);
	memset(bc, 0, sizeof(*bc));
}

static char *pvh_marker(const char *pvh, const char *what)
{
	return vn_xasprintf("%s.%s", pvh, what);
}

/* The PVH verdict for this vmlinux, as a marker file beside it (why, for a stall). */
void vn_testbed_pvh_mark(const char *pvh, const char *what, const char *why)
{
	_cleanup_free_ char *path = pvh_marker(pvh, what);
	struct vn_error e = {0};

	vn_file_write_atomic(path, why ? why : "", why ? strlen(why) : 0, 0644, &e);
	vn_error_clear(&e);
}

int vn_testbed_boot_path(const struct vn_topology *t, const char *bzimage, const char *cache, struct vn_boot_choice *bc,
			 struct vn_error *err)
{
	const char *want = getenv("VNUMA_BOOT");

	if (want && *want && strcmp(want, "bzimage") != 0 && strcmp(want, "pvh") != 0)
		return vn_input_error(err, "VNUMA_BOOT=%s: expected pvh or bzimage", want);
	if (want && strcmp(want, "bzimage") == 0)
		return 0;
	char *pvh = NULL;
	int rc = vn_kernel_pvh_image(bzimage, cache, &pvh, err);
	if (rc < 0)
		return vn_error_prefix(err, "extracting the PVH vmlinux of %s", bzimage);
	if (rc == 0)
		return 0;
	_cleanup_free_ char *stalled = pvh_marker(pvh, "stalled"), *proven = pvh_marker(pvh, "proven");
	/* A stall seen here is not tried again, unless VNUMA_BOOT=pvh asks for it. */
	if (!want && access(stalled, F_OK) == 0) {
		free(pvh);
		return 0;
	}
	bc->pvh = pvh;
	bc->proven = access(proven, F_OK) == 0;
	/*
	 * qboot numbers no buses behind a PCIe expander bus, so QEMU's ACPI then
	 * gives each expander a one-bus range and Linux cannot reach the devices
	 * behind its root ports; SeaBIOS does (fw_cfg etc/extra-pci-roots).
	 */
	if (!t->ndevices_total && access(VN_TESTBED_QBOOT, R_OK) == 0)
		bc->loader = VN_TESTBED_QBOOT;
	return 0;
}

/*
 * The topology's disks, sparse raw images of the declared size in the guest
 * dir (vn_domain_disk_image), so they cost nothing until the guest writes
 * and go with the dir when the guest is destroyed. O_TRUNC: a stale dir's
 * image must not hand the new guest old data.
 */
static int create_disk_images(const struct vn_topology *t, const char *dir, struct vn_error *err)
{
	for (unsigned i = 0; i < t->nnodes; i++) {
		/* QEMU would create it too, but under the guest's own name and without O_TRUNC. */
		if (vn_node_is_slow(&t->nodes[i])) {
			_cleanup_free_ char *img = vn_guest_pmem_path(dir, i);
			_cleanup_close_ int fd = open(img, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0600);
			if (fd < 0 || ftruncate(fd, (off_t)vn_domain_nvdimm_bytes(&t->nodes[i])) < 0)
				return vn_infra_error(err, -errno, "cannot create node %u's NVDIMM file %s: %s", i, img,
						      strerror(errno));
		}
		for (unsigned k = 0; k < t->nodes[i].ndevices; k++) {
			const struct vn_device *d = &t->nodes[i].devices[k];
			if (d->kind != VN_DEVICE_DISK)
				continue;
			_cleanup_free_ char *img = vn_domain_disk_image(dir, i, k);
			_cleanup_close_ int fd = open(img, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0600);
			if (fd < 0 || ftruncate(fd, (off_t)d->size) < 0)
				return vn_infra_error(err, -errno, "cannot create node %u's disk image %s: %s", i, img,
						      strerror(errno));
		}
	}
	return 0;
}

void vn_testbed_boot_attempt_clear(struct vn_boot_attempt *at)
{
	vn_agent_close(at->a);
	vn_virt_domain_free(at->d);
	vn_free_all(at->dir, at->sock, at->log, at->root_disk, at->disk_dir, at->disk_prefix, at->plugin_opt);
	at->a = NULL;
	at->d = NULL;
	at->dir = at->sock = at->log = at->root_disk = at->disk_dir = at->disk_prefix = at->plugin_opt = NULL;
}

/* The domain a boot attempt (or a restore) starts, all of it borrowed from at. */
static struct vn_domain_opts boot_dopts(struct vn_boot_attempt *at)
{
	at->nqemu_args = 0;
	if (at->icount) {
		at->qemu_args[at->nqemu_args++] = "-icount";
		at->qemu_args[at->nqemu_args++] = at->icount;
	}
	if (at->plugin_opt) {
		at->qemu_args[at->nqemu_args++] = "-plugin";
		at->qemu_args[at->nqemu_args++] = at->plugin_opt;
	}
	return (struct vn_domain_opts){
		.name = at->name,
		.arch = at->arch,
		/* Virtual time and plugins are TCG's alone: no KVM probe. */
		.accel = at->icount || at->plugin_opt ? VN_ACCEL_TCG : VN_ACCEL_AUTO,
		.accel_reason =
			at->plugin_opt ? "locality accounting needs TCG (a TCG plugin counts the accesses)" : NULL,
		.qemu_args = at->qemu_args,
		.nqemu_args = at->nqemu_args,
		.shares = at->shares,
		.nshares = at->nshares,
		.kernel = at->image,
		.loader = at->loader,
		.initrd = at->initrd,
		.cmdline = at->cmdline, /* the builder adds what the topology needs */
		.root_disk = at->root_disk,
		.modules_share = at->modules_dir,
		.disk_dir = at->disk_dir,
		.disk_prefix = at->disk_prefix,
		.console_log = at->log,
		.agent_socket = at->sock,
		.meta = {.topology_name = at->t->name,
			 .topology_path = at->topo_path,
			 .kernel = at->kernel,
			 .kernel_id = at->kernel_id,
			 .guest_dir = at->dir},
		.notify = accel_notice,
		.notify_data = (void *)at->o,
	};
}

/* The guest's dir with its disks; on failure nothing of it is left. */
static int boot_dir(struct vn_boot_attempt *at, struct vn_error *err)
{
	int rc;

	if ((rc = vn_virt_guest_dir(at->v, at->name, &at->dir, err)) < 0)
		return rc;
	/* What hotplug reads later: the file up named may be gone by then (a CI job's workspace), or changed. */
	_cleanup_free_ char *topo = vn_guest_dir_file(at->dir, VN_GUEST_TOPOLOGY);
	if (at->topo_text && (rc = vn_file_write_atomic(topo, at->topo_text, at->topo_len, 0600, err)) < 0) {
		vn_rm_rf(at->dir);
		return rc;
	}
	/* Another host's disks are volumes there, which go with the domain. */
	if (vn_virt_is_remote(at->v) && (rc = vn_testbed_remote_disks(at, err)) < 0) {
		vn_rm_rf(at->dir);
		return rc;
	}
	/* Nothing of this guest exists yet but its dir: take it back whole. */
	if (!vn_virt_is_remote(at->v) && (rc = create_disk_images(at->t, at->dir, err)) < 0) {
		vn_rm_rf(at->dir);
		return rc;
	}
	/* The cached image is only ever a backing file: the guest writes its own overlay, which goes with its dir. */
	if (at->root_image && !vn_virt_is_remote(at->v)) {
		at->root_disk = vn_guest_dir_file(at->dir, VN_GUEST_ROOT_DISK);
		if ((rc = vn_disk_overlay(at->root_image, at->root_disk, err)) < 0) {
			vn_rm_rf(at->dir);
			return rc;
		}
	}
	at->sock = vn_guest_dir_file(at->dir, VN_GUEST_AGENT_SOCK);
	at->log = vn_guest_dir_file(at->dir, VN_GUEST_CONSOLE_LOG);
	return 0;
}

/* The wait for the agent, in short slices, so that a panic or a dead QEMU ends it early. */
static int boot_wait(struct vn_boot_attempt *at, struct vn_error *err)
{
	const struct vn_up_opts *o = at->o;
	bool kernel_seen = false;
	int rc;

	if (vn_virt_is_remote(at->v))
		rc = vn_testbed_remote_agent(at->d, at->name, &at->a, err);
	else
		rc = vn_agent_connect(at->sock, (int)((at->until - vn_now_s()) * 1000), &at->a, err);
	if (rc < 0) {
		char why[VN_ERROR_MSG_MAX];
		snprintf(why, sizeof(why), "%s", err->msg);
		vn_error_clear(err);
		return boot_failed(at->d, at->log, err, rc, "guest %s: %s", at->name, why);
	}
	for (;;) {
		struct vn_error e = {0};
		bool running = true;

		if (vn_was_interrupted())
			return boot_failed(at->d, at->log, err, -EINTR,
					   "interrupted while waiting for guest %s; destroyed it", at->name);
		if (vn_virt_domain_is_running(at->d, &running, &e) < 0 || !running) {
			vn_error_clear(&e);
			return boot_failed(at->d, at->log, err, -ECHILD,
					   "guest %s stopped during boot (kernel panic or QEMU exit)", at->name);
		}
		_cleanup_free_ char *panic = console_panic_line(at->log);
		if (panic)
			return boot_failed(at->d, at->log, err, -EIO, "guest %s: %s", at->name, panic);
		if (!at->restored && !kernel_seen && (kernel_seen = vn_console_log_shows_kernel(at->log)))
			vn_testbed_progress(o, "kernel started", "%.1f s after start", vn_now_s() - at->t0);
		if (vn_now_s() > at->until)
			return boot_failed(at->d, at->log, err, -ETIMEDOUT,
					   "guest %s: agent did not answer within %.0f s (%s%s%s)", at->name,
					   at->until - at->t0,
					   vn_virt_domain_accel(at->d) == VN_ACCEL_KVM ? "KVM" : "TCG",
					   at->restored              ? ", restored"
					   : at->image == at->kernel ? ""
								     : ", PVH",
					   at->restored  ? ""
					   : kernel_seen ? ", the kernel started"
							 : ", the kernel printed nothing");
		if (vn_agent_hello(at->a, 1500, NULL, &e) == 0)
			return 0;
		vn_error_clear(&e);
	}
}

/*
 * The host's time and fresh random bytes for a guest that answered. A
 * restored guest has its snapshot's clock and random state; a booted one
 * has a CRNG that is not ready yet (under TCG it takes the first blocking
 * read about a second of jitter to get there, inside whatever asked), and
 * a clock set from the RTC to the second.
 */
static int boot_wake(struct vn_boot_attempt *at, struct vn_error *err)
{
	uint8_t seed[64];
	struct timespec now;
	struct vn_error e = {0};

	if (getrandom(seed, sizeof(seed), 0) != (ssize_t)sizeof(seed))
		return boot_failed(at->d, at->log, err, -EIO, "guest %s: no random bytes for its pool: %s", at->name,
				   strerror(errno));
	clock_gettime(CLOCK_REALTIME, &now);
	if (vn_agent_wake(at->a, (int64_t)now.tv_sec * 1000000000 + now.tv_nsec, seed, sizeof(seed), 10000,
			  &at->clock_step_ns, &e) < 0) {
		char why[VN_ERROR_MSG_MAX];
		snprintf(why, sizeof(why), "%s", e.msg);
		vn_error_clear(&e);
		return boot_failed(at->d, at->log, err, -EIO, "guest %s: %s", at->name, why);
	}
	return 0;
}

/*
 * Virtual time with shift=auto: QEMU retunes the shift (2^shift ns of guest
 * time per instruction) at each of its adjustments, every 100 ms of guest
 * time and every second of the host's, raising it while the guest's clock
 * lags the host's and lowering it while it leads. A guest just booted or
 * restored tracks the host's clock at a shift of about 3, so a workload
 * timed then measures the host's speed (0.4M-5M ops/s where the settled
 * guest does 6.2M). Idle, with sleep=off, the guest's clock skips ahead
 * (~190 s a second here); once it leads, every adjustment lowers the shift
 * until 0, and there it stays while the lead lasts: one instruction, one
 * nanosecond. A busy guest spends the lead at about a second per second, so
 * a run starts with VN_TESTBED_ICOUNT_LEAD_S of it. The lead must also have
 * grown by VN_TESTBED_ICOUNT_SETTLE_S of guest time while positive: more
 * than ten adjustments, each a step down (a restore may reset the shift).
 */
int vn_testbed_icount_settle(struct vn_boot_attempt *at, double *lead_s, struct vn_error *err)
{
	double first = 0, lead = 0, t0 = vn_now_s();
	bool leading = false;

	*lead_s = 0;
	if (!at->icount_auto)
		return 0;
	vn_testbed_progress(at->o, "settling", "virtual time: the guest's clock to lead the host's by %d s",
			    VN_TESTBED_ICOUNT_LEAD_S);
	for (;;) {
		struct vn_error e = {0};
		if (vn_virt_domain_icount_lead(at->d, &lead, &e) < 0) {
			char why[VN_ERROR_MSG_MAX];
			snprintf(why, sizeof(why), "%s", e.msg);
			vn_error_clear(&e);
			return boot_failed(at->d, at->log, err, -EIO, "%s", why);
		}
		/* Growth counts from the latest moment the guest took the lead. */
		if (lead <= 0) {
			leading = false;
		} else if (!leading) {
			leading = true;
			first = lead;
		}
		if (leading && lead >= VN_TESTBED_ICOUNT_LEAD_S && lead - first >= VN_TESTBED_ICOUNT_SETTLE_S)
			break;
		if (vn_was_interrupted())
			return boot_failed(at->d, at->log, err, -EINTR,
					   "interrupted while guest %s's clock settled; destroyed it", at->name);
		if (vn_now_s() > at->until)
			return boot_failed(at->d, at->log, err, -ETIMEDOUT,
					   "guest %s: virtual time: its clock leads the host's by %.1f s after %.0f s "
					   "(%d s wanted): the guest does not idle",
					   at->name, lead, vn_now_s() - t0, VN_TESTBED_ICOUNT_LEAD_S);
		usleep(50 * 1000);
	}
	*lead_s = lead;
	vn_testbed_progress(at->o, "settled", "the guest's clock leads the host's by %.0f s (%.1f s)", lead,
			    vn_now_s() - t0);
	return 0;
}

/* 0 with the agent answering; else the guest destroyed and its logs kept (boot_failed), -ETIMEDOUT at at->until. */
int vn_testbed_boot_attempt(struct vn_boot_attempt *at, struct vn_error *err)
{
	const struct vn_up_opts *o = at->o;
	const struct vn_topology *t = at->t;
	int rc;

	at->restored = false;
	if ((rc = boot_dir(at, err)) < 0)
		return rc;
	if (o->locality && (rc = vn_testbed_locality_arg(t, at->dir, &at->plugin_opt, err)) < 0) {
		vn_rm_rf(at->dir);
		return rc;
	}
	struct vn_domain_opts dopts = boot_dopts(at);
	vn_testbed_progress(o, "defining", "%s: %u nodes, %u vCPUs, kernel %s%s%s%s", at->name, t->nnodes,
			    t->ncpus_total, at->release, at->image == at->kernel ? "" : " (PVH)",
			    at->arch == vn_arch_host() ? "" : ", ",
			    at->arch == vn_arch_host() ? "" : vn_arch_name(at->arch));
	at->t0 = vn_now_s();
	if ((rc = vn_virt_domain_create(at->v, t, &dopts, &at->d, err)) < 0)
		return rc;
	if (at->icount)
		vn_testbed_progress(o, "booting", "TCG in virtual time (-icount %s)", at->icount);
	else
		vn_testbed_progress(o, "booting", "%s (%s)",
				    vn_virt_domain_accel(at->d) == VN_ACCEL_KVM ? "KVM" : "TCG",
				    vn_virt_domain_accel_reason(at->d));
	if ((rc = boot_wait(at, err)) < 0)
		return rc;
	return boot_wake(at, err);
}

/*
 * The restored guest's console log begins with its boot's, then a line
 * saying where it was restored from; what it prints from then on follows.
 */
static void restore_console(struct vn_boot_attempt *at, const char *boot_log, const char *key)
{
	_cleanup_close_ int in = open(boot_log, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
	_cleanup_close_ int out = open(at->log, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0600);
	char buf[64 * 1024];
	ssize_t n;

	if (out < 0)
		return;
	while (in >= 0 && (n = read(in, buf, sizeof(buf))) > 0)
		if (vn_write_all(out, buf, (size_t)n) < 0)
			return;
	n = snprintf(buf, sizeof(buf), "\r\n[vnuma: restored from snapshot %.16s]\r\n", key);
	(void)vn_write_all(out, buf, (size_t)n);
}

int vn_testbed_restore_attempt(struct vn_boot_attempt *at, const char *save, const char *boot_log, const char *key,
			       enum vn_accel accel, struct vn_error *err)
{
	int rc;

	at->restored = true;
	if (!at->dir && (rc = boot_dir(at, err)) < 0)
		return rc;
	/* A counting guest's plugin makes its file anew (O_EXCL): the one the saved boot counted into goes. */
	_cleanup_free_ char *counts = vn_guest_dir_file(at->dir, VN_GUEST_LOCALITY);
	if (unlink(counts) < 0 && errno != ENOENT)
		return vn_infra_error(err, -errno, "%s: %s", counts, strerror(errno));
	restore_console(at, boot_log, key);
	struct vn_domain_opts dopts = boot_dopts(at);
	dopts.accel = accel;
	vn_testbed_progress(at->o, "restoring", "%s from snapshot %.16s", at->name, key);
	at->t0 = vn_now_s();
	if ((rc = vn_virt_domain_restore(at->v, &dopts, save, &at->d, err)) < 0)
		return rc;
	vn_testbed_progress(at->o, "restored", "QEMU loaded it in %.1f s", vn_now_s() - at->t0);
	if ((rc = boot_wait(at, err)) < 0)
		return rc;
	return boot_wake(at, err);
}
