/*
 * A running testbed: a topology booted into a guest whose agent answers.
 * This layer composes topology + kernel + guest image + virt; the CLI's
 * up/down/list/status/exec/shell/collect and the scenario runner stand on it.
 */
#pragma once

#include <stdbool.h>

/* Timeouts, in ms. */
/* Connect and hello to a guest that is up (exec, collect, status, run after boot). */
#define VN_TESTBED_AGENT_MS 10000
/* Waiting for another vnuma process to let go of the embedded driver. */
#define VN_TESTBED_LOCK_WAIT_MS 120000
/* The firmware for PVH boots (QEMU's own minimal one; SeaBIOS when it is missing). */
#define VN_TESTBED_QBOOT "/usr/share/qemu/qboot.rom"
/* vnuma up's default boot deadline, QEMU's start until the agent answers (a first-use kernel build is not counted). */
#define VN_TESTBED_BOOT_MS 180000

#include "guest/agent.h"
#include "kernel/build.h"
#include "kernel/kernel.h"
#include "topology/fallback.h"
#include "topology/find.h"
#include "topology/topology.h"
#include "util/error.h"
#include "virt/virt.h"

/* Where vnuma keeps its state and how it reaches libvirt. */
struct vn_testbed_ctx {
	char *state_dir; /* --state-dir, $VNUMA_STATE_DIR, $XDG_STATE_HOME/vnuma, /var/lib/vnuma (root) */
	const char *uri; /* NULL: $VNUMA_URI or the embedded driver */
	/* Another host's storage pool dir, where vnuma's "vnuma" pool goes if it has none (NULL: the default). */
	const char *pool_dir;
	int lock_timeout_ms;
	int connect_timeout_ms; /* a daemon's open (vn_virt_open_within); 0: VN_VIRT_CONNECT_TIMEOUT_MS */
};

int vn_testbed_ctx_init(struct vn_testbed_ctx *ctx, const char *state_dir, const char *uri, struct vn_error *err);
void vn_testbed_ctx_clear(struct vn_testbed_ctx *ctx);

/*
 * Names of the guests with a directory in the state dir (state_dir NULL: the
 * default one), NULL-terminated, unsorted; creates nothing. For completion:
 * cheap, and needs no libvirt. Returns the count.
 */
int vn_testbed_guest_names(const char *state_dir, char ***names, struct vn_error *err);

/*
 * Boot progress: stage is "defining", "booting", "kernel started", "agent
 * answered", "fidelity checked", or "note" for a line worth keeping (KVM
 * given up for TCG); detail may be NULL.
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
	const char *const *with; /* host Debian packages added to the guest image (NULL-terminated), or NULL */
	const char *image;       /* a guest image recipe (guest-images/NAME.json, testbed/image.h), or NULL */
};

struct vn_up_result {
	char *name;
	char *guest_dir, *console_log;
	char *kernel_release, *kernel_version, *kernel_recipe;
	char *kernel_config_sha256; /* NULL when the kernel's .config is unknown */
	char *kernel_patches;       /* space-separated patch names of a recipe kernel, or NULL */
	char *topology_path;
	enum vn_accel accel;
	char *accel_reason; /* why that accelerator: proven, forced, cached, or why KVM was not usable */
	double boot_s;      /* domain start until the agent answered */
	/* Fidelity: what the guest sees against what was asked for. */
	bool fidelity_ok;
	char *fidelity_report; /* human-readable; diff lines when not ok */
	/* A guest on another host: what went there, "VOLUME uploaded|reused" each (NULL-terminated), else NULL. */
	char **artifacts;
};
void vn_up_result_clear(struct vn_up_result *r);

/*
 * Boot and wait for the agent, then check fidelity. A guest that panics or
 * does not answer is destroyed and reported as VN_ERR_INFRA with the console
 * tail and the path of its kept logs (STATE_DIR/failed/NAME-UTC) in err->detail. A fidelity mismatch is not an error here: the guest
 * stays up and r->fidelity_ok is false.
 */
int vn_testbed_up(const struct vn_testbed_ctx *ctx, const struct vn_up_opts *o, struct vn_up_result *r,
		  struct vn_error *err);

/*
 * The guest image for kernel k: busybox, numactl, k's modules, the agent, the
 * sampler and the workloads, and the files of the host's Debian packages
 * named in with (NULL-terminated, optional: "bash-static", "grep"), in an
 * initramfs cached in cache_dir under its contents' digest (so a second call
 * only checks the cache). A package that is not installed is an input error.
 * disk_root: the initramfs also loads ext4, to mount a disk image's root.
 */
int vn_testbed_guest_image(const char *cache_dir, const struct vn_kernel *k, const char *const *with, bool disk_root,
			   char **initrd, struct vn_error *err);
/* At most this many files of one --with package go into the image. */
#define VN_TESTBED_PACKAGE_FILES_MAX 4096

/*
 * Look up a guest vnuma created: a domain without vnuma's metadata (another
 * tool's, or libvirt's test driver's "test") is an input error naming it.
 */
int vn_testbed_lookup(struct vn_virt *v, const char *name, struct vn_virt_domain **out, struct vn_error *err);

/* Destroy one guest (name, via vn_testbed_lookup) or every vnuma guest (name NULL); *count says how many. */
int vn_testbed_down(const struct vn_testbed_ctx *ctx, const char *name, unsigned *count, struct vn_error *err);

/*
 * Whether ctx's host answers, and how many guests of vcpus and memory bytes
 * it takes at once (its CPUs and 3/4 of its memory); in a child process, so
 * the caller never holds libvirt (or its threads) itself.
 */
int vn_testbed_host_probe(const struct vn_testbed_ctx *ctx, unsigned vcpus, uint64_t memory, unsigned *capacity,
			  struct vn_error *err);

/*
 * The accelerator v's host really gives guests, proven by a probe boot (one
 * node, the stock kernel, uploaded there first when the host is another) as
 * every boot proves it (virt.h: KVM only once the kernel printed within 5 s,
 * else TCG), with why; the verdict is cached for that host.
 */
int vn_testbed_accel_probe(struct vn_virt *v, const struct vn_testbed_ctx *ctx, enum vn_accel *accel, char *reason,
			   size_t len, struct vn_error *err);

/*
 * A guest that died under a command (vn_agent_watch_fired()): destroyed like
 * a failed boot, its logs kept as STATE_DIR/failed/NAME-UTC, and that path
 * added to the detail of why, the error that reported the death.
 */
int vn_testbed_down_failed(const struct vn_testbed_ctx *ctx, const char *name, struct vn_error *why,
			   struct vn_error *err);

/*
 * Agent connection to a running guest, by name. Local guests need no libvirt
 * connection (their channel's socket is in the guest dir); a guest on another
 * host is reached over its channel stream, the connection held by this process.
 * Its waits end within about 2 s of the guest's death (powered off, reset,
 * panicked: the console's last words; its QEMU gone) with an infrastructure
 * error naming the cause, the console tail in its detail (virt/virt.h's watch).
 */
int vn_testbed_agent(const struct vn_testbed_ctx *ctx, const char *name, int timeout_ms, struct vn_agent **out,
		     struct vn_error *err);

/*
 * Compare the running guest with the topology: node distances, CPUs per node,
 * which nodes have memory, and the boot-time fallback lists against the model.
 */
int vn_testbed_fidelity(struct vn_agent *a, const struct vn_topology *t, enum vn_fallback_model model, bool *ok,
			char **report, struct vn_error *err);

/*
 * One snapshot into dir: vmstat, per-node numastat/meminfo/vmstat/distance/
 * cpulist, numactl -H, dmesg, cmdline, version, and snapshot.json holding
 * all of it parsed.
 */
int vn_testbed_collect(struct vn_agent *a, const char *dir, struct vn_error *err);

/* vnuma doctor: can this host run vnuma, and what to fix. */
enum vn_check_verdict { VN_CHECK_OK, VN_CHECK_WARN, VN_CHECK_FAIL, VN_CHECK_SKIP };
struct vn_check {
	char name[32];
	enum vn_check_verdict verdict;
	char detail[VN_ERROR_MSG_MAX / 4];
	char fix[256];  /* for warn / fail: what to do */
	double seconds; /* probes: how long the kernel took to print */
};
#define VN_DOCTOR_MAX_CHECKS 24
struct vn_doctor {
	struct vn_check checks[VN_DOCTOR_MAX_CHECKS];
	size_t n;
	bool can_boot;       /* some accelerator got a kernel to print */
	enum vn_accel accel; /* the one guests will use */
};
/*
 * Run every check: state dir, libvirt-qemu user, QEMU, busybox, numactl, the
 * stock kernel, memory, disk, libvirt and QEMU versions, /dev/kvm, and real
 * KVM and TCG probe boots (proven verdicts go into the accelerator cache).
 * Problems are checks, not errors: err is for the doctor itself failing.
 */
int vn_doctor_run(const struct vn_testbed_ctx *ctx, struct vn_doctor *d, struct vn_error *err);
/* No check failed and some accelerator boots. */
bool vn_doctor_ok(const struct vn_doctor *d);
const char *vn_check_verdict_name(enum vn_check_verdict v);

/*
 * Run a command in the guest and collect stdout (exit code must be 0): at most
 * VN_AGENT_EXEC_BUF_MAX bytes, then a line saying the output was truncated.
 */
int vn_testbed_run(struct vn_agent *a, const char *const *argv, double timeout_s, char **out, struct vn_error *err);

/*
 * vnuma hotplug: memory or vCPUs into (or memory out of) one node of a
 * running guest. The libvirt half (the request checked against the topology
 * the guest booted, its hotplug= and hotplug-cpus=; a DIMM plugged or
 * unplugged; vCPUs plugged) runs in a child process like up/down. The guest
 * half is one shell script: it waits for the new memory blocks and onlines
 * them (online_movable or online_kernel, /sys/devices/system/memory/memoryN/
 * state), offlines a DIMM's blocks before it is unplugged, and onlines
 * plugged vCPUs (/sys/devices/system/cpu/cpuN/online). Memory is added one
 * DIMM a call and removed in whole DIMMs, the latest first. vCPUs are not
 * unplugged (QEMU 7.2 does not survive it here).
 */
enum vn_hotplug_online { VN_ONLINE_MOVABLE, VN_ONLINE_KERNEL };

/* The most vCPUs one hotplug plugs, as QEMU's q35 machine has at most 288 (`vnuma hotplug --cpus`, a scenario's). */
#define VN_HOTPLUG_CPUS_MAX 288

struct vn_hotplug_req {
	const char *name;
	unsigned node;
	uint64_t memory; /* bytes, a whole number of 128M blocks; 0: none */
	unsigned cpus;   /* vCPUs; 0: none */
	bool remove;     /* take memory out of the node instead */
	enum vn_hotplug_online online;
	int timeout_ms; /* for the guest to show the new devices */
};

/* What the libvirt half decided: the DIMM plugged (or those to unplug), the vCPUs plugged. */
struct vn_hotplug_plan {
	struct vn_domain_dimm dimms[VN_DOMAIN_DIMMS_MAX];
	size_t ndimms;
	struct vn_cpuset cpus;
};

struct vn_hotplug_result {
	unsigned blocks;            /* memory blocks onlined (or offlined) */
	uint64_t node_memtotal;     /* the node's MemTotal afterwards, bytes */
	struct vn_cpuset cpus;      /* vCPUs plugged */
	struct vn_cpuset node_cpus; /* the node's cpulist afterwards */
	unsigned rebuilds;          /* builds of the fallback lists the change made the kernel print */
	/* What such a rebuild saw: N_MEMORY (after an online, before an offline) and the nodes with CPUs online. */
	struct vn_fallback_state seen;
};

#define VN_HOTPLUG_TIMEOUT_MS 30000

/* Runs a shell script of ours in the guest and hands back its stdout (exit 0 required). */
typedef int (*vn_hotplug_sh_fn)(void *data, const char *script, char **out, struct vn_error *err);

/* sh NULL: over an agent connection of its own. */
int vn_testbed_hotplug(const struct vn_testbed_ctx *ctx, const struct vn_hotplug_req *q, vn_hotplug_sh_fn sh,
		       void *sh_data, struct vn_hotplug_result *r, struct vn_error *err);
