/* The testbed's own: the work vn_testbed_up/down do in a child process (child.c). */
#pragma once

#include <limits.h>
#include <stdint.h>

#include "testbed/hotplug-guest.h"
#include "testbed/testbed.h"
#include "testbed/up.h"
#include "util/arch.h"
#include "util/isolate.h"
#include "virt/virt.h"

/*
 * The deadlines of the testbed's children (util/isolate.h): what each waits
 * on, with room, so that only a child stuck for good is killed. Up's child
 * also builds a recipe's kernel or a guest image on first use; after a
 * signal, a child tearing down a half-booted guest gets VN_TESTBED_STOP_MS.
 */
#define VN_TESTBED_BUILD_ALLOW_MS (4 * 3600 * 1000)
#define VN_TESTBED_LIBVIRT_MS     120000
#define VN_TESTBED_STOP_MS        10000

static inline int vn_testbed_connect_ms(const struct vn_testbed_ctx *ctx)
{
	return ctx->connect_timeout_ms > 0 ? ctx->connect_timeout_ms : VN_VIRT_CONNECT_TIMEOUT_MS;
}

/* A child that opens libvirt (waiting for the state dir or a host at most so long) and does short work there. */
static inline struct vn_isolate_limits vn_testbed_libvirt_limits(const struct vn_testbed_ctx *ctx, int64_t work_ms)
{
	int64_t ms = (int64_t)ctx->lock_timeout_ms + vn_testbed_connect_ms(ctx) + work_ms;

	return (struct vn_isolate_limits){
		.timeout_ms = ms < INT_MAX ? (int)ms : INT_MAX,
		.stop_ms = VN_TESTBED_STOP_MS,
	};
}

int vn_testbed_up_here(const struct vn_testbed_ctx *ctx, const struct vn_up_opts *o, struct vn_up_result *r,
		       struct vn_error *err);
int vn_testbed_down_here(const struct vn_testbed_ctx *ctx, const char *name, unsigned *count, struct vn_error *err);
int vn_testbed_down_keep_here(const struct vn_testbed_ctx *ctx, const char *name, char **kept, struct vn_error *err);

/* hotplug-guest.c's guest half, for its tests: the script for a plan, and what its output says. */
char *vn_testbed_hotplug_script(const struct vn_hotplug_req *q, const struct vn_hotplug_plan *p);
int vn_testbed_hotplug_report(const char *out, const struct vn_hotplug_req *q, struct vn_hotplug_result *r,
			      struct vn_error *err);

/* The in-guest programs of architecture a as "HOST:GUEST" pairs (agent, sampler, workloads), NULL-terminated. */
int vn_testbed_helper_files(enum vn_arch a, char ***out, struct vn_error *err);

/* The firmware for PVH boots (QEMU's own minimal one; SeaBIOS when it is missing). */
#define VN_TESTBED_QBOOT "/usr/share/qemu/qboot.rom"

/* boot.c: the boot path and one boot attempt (vn_testbed_up_here runs one, or two after a failed PVH boot). */
void vn_testbed_progress(const struct vn_up_opts *o, const char *stage, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

struct vn_boot_choice {
	char *pvh;          /* the vmlinux to boot, NULL for the bzImage */
	const char *loader; /* NULL: SeaBIOS */
	bool proven;        /* a PVH boot of this kernel answered here before */
};

/* One boot of a guest: its dir, its domain, the wait for its agent. */
struct vn_boot_attempt {
	struct vn_virt *v;
	const struct vn_topology *t;
	const struct vn_up_opts *o;
	const char *name, *initrd, *release, *cmdline;
	const char *root_image;  /* a cached disk image for the root, or NULL: the initramfs is the root */
	const char *modules_dir; /* shared over 9p, mounted by up_modules; NULL: none (another host, a disk root) */
	char *topo_path, *kernel, *kernel_id; /* for the domain's metadata */
	const char *image, *loader;           /* what boots: the bzImage or the PVH vmlinux, and the firmware */
	enum vn_arch arch;                    /* the guest's */
	const char *icount;                   /* virtual time: -icount's value (TCG forced); NULL: real time */
	bool icount_auto;                     /* ... with shift=auto, which up settles (vn_testbed_icount_settle) */
	char *plugin_opt;                     /* -plugin's value when counting locality (testbed/locality.h) */
	const char *qemu_args[4];             /* what boot_dopts() passes QEMU: -icount, -plugin */
	size_t nqemu_args;
	const struct vn_domain_share *shares; /* the guest's shared directories (share.h) */
	unsigned nshares;
	const char *topo_text; /* the bytes of topo_path up parsed: the guest dir's copy */
	size_t topo_len;
	double until;             /* give up waiting for the agent then */
	uint64_t root_image_size; /* another host's: the image's virtual size, for its overlay volume */
	/* out */
	char *dir, *sock, *log, *root_disk;
	char *disk_dir, *disk_prefix; /* another host's: the pool dir and GUEST@ its disk volumes are named with */
	struct vn_virt_domain *d;
	struct vn_agent *a;
	double t0;
	bool restored;         /* from a snapshot, not booted */
	int64_t clock_step_ns; /* restored: how far waking it moved its clock */
};

void vn_testbed_boot_choice_clear(struct vn_boot_choice *bc);
/*
 * -icount's value for o (NULL: real time), and whether its shift is QEMU's to
 * retune; bad VNUMA_ICOUNT_SHIFT, or VNUMA_ACCEL=kvm with virtual time: input error.
 */
int vn_testbed_icount(const struct vn_up_opts *o, char **out, bool *auto_shift, struct vn_error *err);
int vn_testbed_boot_path(const struct vn_topology *t, const char *bzimage, const char *cache, struct vn_boot_choice *bc,
			 struct vn_error *err);
/* The PVH verdict for this vmlinux, "proven" or "stalled" (with why), as a marker file beside it. */
void vn_testbed_pvh_mark(const char *pvh, const char *what, const char *why);
/* 0 with the agent answering; else the guest destroyed and its logs kept, -ETIMEDOUT at at->until. */
int vn_testbed_boot_attempt(struct vn_boot_attempt *at, struct vn_error *err);
void vn_testbed_boot_attempt_clear(struct vn_boot_attempt *at);
/*
 * Virtual time with shift=auto: wait (idle) until the guest's clock leads
 * the host's by VN_TESTBED_ICOUNT_LEAD_S, which puts QEMU's shift at 0 for
 * the run (boot.c says why); *lead_s the lead then. Nothing to do (0, lead
 * 0) in real time or with a fixed shift. Its failures are a boot's.
 */
int vn_testbed_icount_settle(struct vn_boot_attempt *at, double *lead_s, struct vn_error *err);
/*
 * The same guest started from the snapshot save (its boot's console log
 * boot_log, its key for the log), on accel; at->dir is made unless a save
 * of it left it there. Once its agent answers it is woken (vn_agent_wake:
 * the host's time, random bytes from the host). Its failures are a boot's.
 */
int vn_testbed_restore_attempt(struct vn_boot_attempt *at, const char *save, const char *boot_log, const char *key,
			       enum vn_accel accel, struct vn_error *err);

/*
 * remote.c: guests on another host. Their connection is held by this
 * process (hold) until they are taken down (release, destroying them or
 * not); lookup finds a held one or opens a connection and holds it.
 */
void vn_testbed_remote_hold(const char *name, struct vn_virt *v, struct vn_virt_domain *d);
struct vn_virt_domain *vn_testbed_remote_held(const char *name);
struct vn_virt *vn_testbed_remote_conn(const char *name);
int vn_testbed_remote_release(const char *name, bool destroy, struct vn_error *err);
int vn_testbed_remote_lookup(const struct vn_testbed_ctx *ctx, const char *name, struct vn_virt_domain **out,
			     struct vn_error *err);
/* A local file onto v's host as a volume named by its content; its volume and whether it was sent appended to log. */
int vn_testbed_remote_stage(struct vn_virt *v, const struct vn_testbed_ctx *ctx, const char *local, char **remote,
			    struct vn_artifact_list *log, struct vn_error *err);
/* An agent connection over the guest's channel stream, its errors naming the guest. */
int vn_testbed_remote_agent(struct vn_virt_domain *d, const char *name, struct vn_agent **out, struct vn_error *err);
/*
 * A boot attempt's disks on another host, as volumes of its pool named
 * GUEST@...: the topology's disks (raw, empty) and a disk image's overlay
 * (qcow2 over the uploaded image). They go when the domain is destroyed.
 */
int vn_testbed_remote_disks(struct vn_boot_attempt *at, struct vn_error *err);
/* The virtual size of a local qcow2 image, from its header. */
int vn_testbed_qcow2_size(const char *path, uint64_t *size, struct vn_error *err);
