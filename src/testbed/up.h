/* vnuma up: boot a topology and wait for its agent, then check fidelity (up.c, in a child by child.c). */
#pragma once

#include <stdbool.h>

#include "kernel/build.h"
#include "testbed/testbed.h"
#include "topology/fallback.h"
#include "virt/domain-xml.h" /* enum vn_accel; its name: vn_up_result_accel_name() */

/*
 * Virtual time: QEMU's -icount shift=auto,sleep=off (TCG only, and
 * single-threaded): guest time advances by instructions executed and skips
 * idle time. QEMU 7.2 hangs an x86 guest's secondary CPU bring-up with any
 * fixed shift (0, 3, 6 tried; docs/noise.md), so the shift is "auto",
 * which QEMU retunes to the host's speed. VNUMA_ICOUNT_SHIFT=0..10 asks
 * for a fixed one, for a QEMU where that boots. The guest's TSC then runs
 * at 1 GHz of virtual time: VN_TESTBED_ICOUNT_LPJ (HZ=250) is given on its
 * command line, since calibrating the delay loop of each secondary CPU
 * under icount takes minutes.
 */
#define VN_TESTBED_ICOUNT_LPJ "lpj=4000000"
/* Virtual time: the lead of the guest's clock over the host's a guest starts with (boot.c), and its settling. */
#define VN_TESTBED_ICOUNT_LEAD_S   1800
#define VN_TESTBED_ICOUNT_SETTLE_S 1.5

/* vnuma up's default boot deadline, QEMU's start until the agent answers (a first-use kernel build is not counted), in ms. */
#define VN_TESTBED_BOOT_MS 180000

/*
 * Boot progress: stage is "defining", "booting", "kernel started", "agent
 * answered", "fidelity checked", "restoring" and "restored" (a guest from a
 * booted snapshot), "saving" and "saved" (the snapshot a boot makes), or
 * "note" for a line worth keeping (KVM given up for TCG); detail may be NULL.
 */
typedef void (*vn_up_progress_fn)(void *data, const char *stage, const char *detail);

/* Where a boot reports; NULL members are silent. Both are called with data. */
struct vn_up_progress {
	vn_kernel_progress_fn build; /* a recipe kernel built on first use */
	vn_up_progress_fn stage;     /* the boot's stages, and a guest image built on first use */
	void *data;
};

struct vn_up_opts {
	const char *topology;    /* path, or a name (vn_topology_find) */
	const char *name;        /* NULL: derived from the topology (or name_prefix) */
	const char *name_prefix; /* NULL: the topology's name */
	const char *kernel;      /* NULL/"stock" or a bzImage path */
	const char *modules;     /* modules dir for --kernel */
	const char *append;      /* extra kernel arguments */
	int timeout_s;           /* boot + agent deadline (a first-use kernel build is not counted) */
	struct vn_up_progress progress;
	enum vn_fallback_model model;
	bool model_given;        /* --kernel-model: else the guest's release picks the era */
	const char *const *with; /* host Debian packages added to the guest image (NULL-terminated), or NULL */
	const char *image;       /* a guest image recipe (guest-images/NAME.json, testbed/image.h), or NULL */
	const char *arch;        /* the guest's architecture (util/arch.h names), NULL: the host's */
	bool cold;               /* boot even where a snapshot of this guest could be restored (testbed/warm.h) */
	uint64_t node_memory;    /* every node with memory gets this many bytes, not its file's (0: the file's) */
	bool virtual_time;       /* -icount (above): forces TCG */
	/*
	 * Load the locality plugin (testbed/locality.h), counting into the guest
	 * dir's VN_GUEST_LOCALITY. Plugins are TCG's: the guest boots under TCG
	 * whatever the accelerator verdict, and says so.
	 */
	bool locality;
	/* Host files in the guest (testbed/share.h): --share and --file specs, NULL-terminated, or NULL. */
	const char *const *share;
	const char *const *files;
	const char *files_base; /* relative host paths in them start here (a scenario's dir); NULL: the cwd */
};

/* A file a guest on another host needed there: sent by this boot, or found there already. */
enum vn_artifact_how { VN_ARTIFACT_UPLOADED, VN_ARTIFACT_REUSED };
struct vn_artifact {
	char *volume;
	enum vn_artifact_how how;
};
struct vn_artifact_list {
	unsigned n;
	struct vn_artifact *v;
};
void vn_artifact_list_clear(struct vn_artifact_list *l);

struct vn_up_result {
	char *name;
	char *guest_dir, *console_log;
	char *kernel_release, *kernel_version, *kernel_recipe;
	char *kernel_config_sha256; /* NULL when the kernel's .config is unknown */
	char **kernel_patches;      /* patch names of a recipe kernel in the order applied, NULL-terminated, or NULL */
	char *topology_path;
	char *arch; /* the guest's architecture */
	enum vn_accel accel;
	char *accel_reason; /* why that accelerator: proven, forced, cached, or why KVM was not usable */
	double boot_s;      /* domain start (or restore) until the agent answered */
	/* A guest restored from a booted snapshot (its key, hex), else booted (snapshot NULL, or the one it made). */
	bool restored;
	char *snapshot;
	double clock_step_s;  /* restored: how far waking it set its clock forward */
	char *icount;         /* virtual time: QEMU's -icount value ("shift=auto,sleep=off"); NULL: real time */
	double icount_lead_s; /* and how far the guest's clock led the host's when it was handed over */
	/* The guest's vCPUs, and the CPUs of the host it runs on (0: unknown): more of the one, and vCPUs share. */
	unsigned vcpus, host_cpus;
	/* Fidelity: what the guest sees against what was asked for. */
	bool fidelity_ok;
	char *fidelity_report; /* human-readable; diff lines when not ok */
	/* A guest on another host: what went there (n is 0 for a local guest). */
	struct vn_artifact_list artifacts;
};
void vn_up_result_clear(struct vn_up_result *r);
/* "tcg" or "kvm": the testbed's word for r->accel, so that a layer above names it without calling into virt. */
const char *vn_up_result_accel_name(const struct vn_up_result *r);

/*
 * Boot and wait for the agent, then check fidelity. A guest that panics or
 * does not answer is destroyed and reported as VN_ERR_INFRA with the console
 * tail and the path of its kept logs (STATE_DIR/failed/NAME-UTC) in err->detail. A fidelity mismatch is not an error here: the guest
 * stays up and r->fidelity_ok is false.
 */
int vn_testbed_up(const struct vn_testbed_ctx *ctx, const struct vn_up_opts *o, struct vn_up_result *r,
		  struct vn_error *err);
