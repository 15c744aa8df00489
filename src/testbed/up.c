/* vnuma up, in the process that holds libvirt: resolve, build, stage, boot, check fidelity. */
#include "testbed/up.h"
#include "testbed/agent-session.h"
#include "testbed/arch-root.h"
#include "testbed/fidelity.h"
#include "testbed/guest-image.h"
#include "testbed/image.h"
#include "testbed/locality.h"
#include "testbed/testbed.h"
#include "testbed/testbed-priv.h"
#include "testbed/share.h"
#include "testbed/warm.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "guest/image-recipe.h"
#include "guest/initramfs.h"
#include "topology/arch.h"
#include "topology/find.h"
#include "topology/node-memory.h"
#include "util/alloc.h"
#include "util/cleanup.h"
#include "util/clock.h"
#include "util/file.h"
#include "util/name.h"
#include "util/sha256.h"
#include "util/state.h"
#include "util/strbuf.h"
#include "virt/save.h"
#include "virt/storage.h"

const char *vn_up_result_accel_name(const struct vn_up_result *r)
{
	return vn_accel_name(r->accel);
}

void vn_up_result_clear(struct vn_up_result *r)
{
	vn_free_all(r->name, r->guest_dir, r->console_log, r->kernel_release, r->kernel_version, r->kernel_recipe,
		    r->kernel_config_sha256, r->topology_path, r->accel_reason, r->fidelity_report, r->arch,
		    r->snapshot, r->icount);
	vn_strv_free(r->kernel_patches);
	vn_artifact_list_clear(&r->artifacts);
	memset(r, 0, sizeof(*r));
}

/*
 * "4node-amd", then "4node-amd-2", ... the first name no domain uses and no
 * guest dir here has: the runs of a matrix spread over hosts boot at once,
 * each host knowing only its own domains, and share this state dir, so a
 * name is taken by creating its dir (the boot then uses it).
 */
static int pick_name(struct vn_virt *v, const char *state_dir, const char *base, char **out, struct vn_error *err)
{
	_cleanup_free_ char *guests = vn_state_guests_dir(state_dir);

	if (mkdir(guests, 0700) < 0 && errno != EEXIST)
		return vn_infra_error(err, -errno, "cannot create %s: %s", guests, strerror(errno));
	for (int i = 1; i < 100; i++) {
		_cleanup_free_ char *name = NULL;
		_cleanup_virt_domain_ struct vn_virt_domain *d = NULL;
		struct vn_error e = {0};

		if (i == 1)
			name = vn_xstrdup(base);
		else
			name = vn_xasprintf("%s-%d", base, i);
		if (vn_virt_domain_lookup(v, name, &d, &e) < 0) {
			vn_error_clear(&e);
			_cleanup_free_ char *dir = vn_state_guest_dir(state_dir, name);
			if (mkdir(dir, 0700) < 0) {
				if (errno == EEXIST)
					continue;
				return vn_infra_error(err, -errno, "cannot create %s: %s", dir, strerror(errno));
			}
			*out = steal_pointer(&name);
			return 0;
		}
	}
	return vn_infra_error(err, -EEXIST, "99 guests named %s-N exist already; take some down", base);
}

/* An initramfs recipe's packages, then up's own --with ones, NULL-terminated. */
static int recipe_with(const char *path, const char *const *extra, char ***out, struct vn_error *err)
{
	_cleanup_image_recipe_ struct vn_image_recipe *r = NULL;
	size_t n = 0;
	int rc;

	if ((rc = vn_image_recipe_load(path, &r, err)) < 0)
		return rc;
	char **v = vn_xcalloc(1, sizeof(char *));
	for (char **p = r->with; *p; p++) {
		v = vn_xreallocarray(v, n + 2, sizeof(char *));
		v[n++] = vn_xstrdup(*p);
		v[n] = NULL;
	}
	for (const char *const *p = extra; p && *p; p++) {
		v = vn_xreallocarray(v, n + 2, sizeof(char *));
		v[n++] = vn_xstrdup(*p);
		v[n] = NULL;
	}
	*out = v;
	return 0;
}

/*
 * --with packages go into the initramfs, which a disk image's root replaces at
 * switch_root: refused before anything is built, the recipe's own "with"
 * (or "packages") is where they belong.
 */
static int disk_with_refused(const char *image, const char *pkg, struct vn_error *err)
{
	_cleanup_image_recipe_ struct vn_image_recipe *r = NULL;
	_cleanup_free_ char *path = NULL;
	int rc;

	if ((rc = vn_image_recipe_find(image, &path, err)) < 0 || (rc = vn_image_recipe_load(path, &r, err)) < 0)
		return rc;
	if (r->kind != VN_IMAGE_DISK)
		return 0;
	return vn_input_error(err,
			      "--with %s: --image %s is a disk whose root replaces the initramfs the packages would go "
			      "into; list them in %s's \"%s\" instead",
			      pkg, image, path, r->root == VN_IMAGE_ROOT_DEBOOTSTRAP ? "packages" : "with");
}

/*
 * One boot, as phases over one state (crun's libcrun_container_run): each
 * phase takes what the ones before it acquired and returns <0 with err set;
 * up_state_clear() releases whatever was acquired, on every path.
 */
struct up_state {
	const struct vn_testbed_ctx *ctx;
	const struct vn_up_opts *o;
	struct vn_up_result *r;
	char *topo_path, *name, *kernel_id, *cmdline, *cache, *initrd;
	char *topo_text; /* the bytes t was parsed from */
	size_t topo_len;
	struct vn_topology *t;
	struct vn_kernel *k;
	enum vn_arch arch;
	char *arch_root;         /* another architecture's Debian packages, unpacked (arch-root.h) */
	struct vn_guest_arch ga; /* what the guest image needs of it */
	double deadline;         /* the boot's, from after a possible first-use kernel build */
	struct vn_image *im;
	char **with; /* a recipe's packages and --with, or NULL: --with alone */
	bool disk;   /* a disk image is the root */
	struct vn_boot_choice bc;
	struct vn_virt *v; /* NULL once closed, or held with a remote guest */
	bool remote;
	/* Another host's copies of what boots (vn_testbed_remote_stage), and the disk image's virtual size. */
	char *r_image, *r_initrd, *r_loader, *r_root;
	uint64_t root_size;
	char *icount;              /* virtual time: -icount's value */
	bool icount_auto;          /* ... shift=auto: settled after each boot and restore */
	char *vt_cmdline;          /* and the kernel's arguments then */
	struct vn_boot_attempt at; /* its domain and agent, once it answered */
	double boot_s;
	/* A booted snapshot: the one restored, or the one this boot makes (make), holding its lock. */
	struct vn_warm warm;
	bool warm_on, make, saved;
	enum vn_accel warm_accel;
	struct vn_domain_share *shares;
	unsigned nshares;
};

static void up_state_clear(struct up_state *s)
{
	vn_testbed_boot_attempt_clear(&s->at);
	vn_testbed_boot_choice_clear(&s->bc);
	vn_warm_clear(&s->warm);
	vn_virt_close(s->v);
	vn_image_freep(&s->im);
	vn_kernel_freep(&s->k);
	vn_topology_freep(&s->t);
	vn_strv_free(s->with);
	vn_share_free_all(s->shares, s->nshares);
	vn_free_all(s->topo_path, s->topo_text, s->name, s->kernel_id, s->cmdline, s->cache, s->initrd, s->r_image,
		    s->r_initrd, s->r_loader, s->r_root, s->arch_root, s->icount, s->vt_cmdline);
}

/*
 * --node-memory: the topology booted (its domain XML, warm key, fidelity
 * check and the guest dir's copy) is the file's with every memory node at
 * that size, refused where the nodes together want more than this host has.
 */
static int up_node_memory(struct up_state *s, struct vn_error *err)
{
	_cleanup_topology_ struct vn_topology *t = NULL;
	_cleanup_free_ char *text = NULL;
	char want[32], have[32];
	size_t len;
	int rc;

	if (!s->o->node_memory)
		return 0;
	if ((rc = vn_topology_node_memory(s->topo_text, s->topo_len, s->topo_path, s->o->node_memory, &text, &len, &t,
					  err)) < 0)
		return vn_error_prefix(err, "--node-memory");
	uint64_t host = (uint64_t)sysconf(_SC_PHYS_PAGES) * (uint64_t)sysconf(_SC_PAGESIZE);
	uint64_t total = vn_topology_total_memory(t);
	if (total > host)
		return vn_input_error(err, "--node-memory: %s's nodes would have %s in all, more than this host's %s",
				      t->name, vn_size_format(total, want, sizeof(want)),
				      vn_size_format(host, have, sizeof(have)));
	vn_topology_free(steal_pointer(&s->t));
	s->t = steal_pointer(&t);
	free(s->topo_text);
	s->topo_text = steal_pointer(&text);
	s->topo_len = len;
	return 0;
}

/* The topology and the kernel; a derived name is checked before any work. */
static int up_resolve(struct up_state *s, struct vn_error *err)
{
	const struct vn_up_opts *o = s->o;
	int rc;

	if (o->name && (rc = vn_guest_name_check(o->name, err)) < 0)
		return rc;
	s->arch = vn_arch_host();
	if ((o->arch && (rc = vn_arch_parse(o->arch, "--arch", &s->arch, err)) < 0) ||
	    (rc = vn_topology_find(o->topology, &s->topo_path, err)) < 0 ||
	    (rc = vn_topology_load_text(s->topo_path, &s->t, &s->topo_text, &s->topo_len, err)) < 0 ||
	    (rc = up_node_memory(s, err)) < 0 || (rc = vn_topology_arch_check(s->t, s->arch, err)) < 0)
		return rc;
	/* A derived name (topology or scenario name, "-N" added later) obeys the same rule, checked before any work. */
	if (!o->name && (rc = vn_guest_name_check(o->name_prefix ? o->name_prefix : s->t->name, err)) < 0)
		return vn_error_prefix(err, "%s",
				       o->name_prefix ? "the guest name derived from the scenario"
						      : "the guest name derived from the topology (use --name)");
	_cleanup_free_ char *kcache = vn_state_kernels_dir(s->ctx->state_dir);
	_cleanup_free_ char *cache = vn_state_cache_dir(s->ctx->state_dir);
	/* Another architecture's kernel and busybox: Debian's packages, fetched on first use. */
	if (s->arch != vn_arch_host()) {
		vn_testbed_progress(o, "defining", "%s: Debian's kernel and busybox (downloaded on first use)",
				    vn_arch_name(s->arch));
		if ((rc = vn_testbed_arch_root(s->arch, cache, &s->arch_root, err)) < 0)
			return rc;
		s->ga = (struct vn_guest_arch){.arch = s->arch, .root = s->arch_root};
	}
	struct vn_kernel_resolve_opts ko = {
		.cache_dir = kcache,
		.progress = o->progress.build,
		.progress_data = o->progress.data,
		.root = s->arch_root,
		.arch = s->arch,
	};
	if ((rc = vn_kernel_resolve_with(o->kernel, o->modules, &ko, &s->k, err)) < 0)
		return rc;
	/* The boot deadline starts after a possible first-use kernel build. */
	s->deadline = vn_now_s() + (o->timeout_s > 0 ? o->timeout_s : VN_TESTBED_BOOT_MS / 1000);
	return 0;
}

/* The guest image (a recipe built on first use, then either a disk root or --with packages) and the boot path. */
static int up_image(struct up_state *s, struct vn_error *err)
{
	const struct vn_up_opts *o = s->o;
	int rc;

	if (o->image && o->with && *o->with && (rc = disk_with_refused(o->image, *o->with, err)) < 0)
		return rc;
	if (o->image) {
		if ((rc = vn_image_build(s->ctx, o->image, s->arch, o->progress.stage, o->progress.data, &s->im, err)) <
		    0)
			return rc;
		s->disk = s->im->kind == VN_IMAGE_DISK;
		if (!s->disk && (rc = recipe_with(s->im->recipe, o->with, &s->with, err)) < 0)
			return rc;
	}
	s->cache = vn_state_cache_dir(s->ctx->state_dir);
	if ((rc = vn_testbed_guest_image(s->cache, s->k, s->arch_root ? &s->ga : NULL,
					 s->with ? (const char *const *)s->with : o->with, s->disk, &s->initrd, err)) <
	    0)
		return rc;
	/* PVH and qboot are x86's; another architecture's kernel boots as its package has it. */
	return s->arch_root ? 0 : vn_testbed_boot_path(s->t, s->k->image, s->cache, &s->bc, err);
}

static int up_stage(struct up_state *s, const char *local, char **remote, struct vn_error *err)
{
	return vn_testbed_remote_stage(s->v, s->ctx, local, remote, &s->r->artifacts, err);
}

/* Another host has none of our files: what boots goes there first, once per content. */
static int up_connect(struct up_state *s, struct vn_error *err)
{
	const struct vn_testbed_ctx *ctx = s->ctx;
	int rc;

	if ((rc = vn_virt_open_within(ctx->uri, ctx->state_dir, ctx->lock_timeout_ms, ctx->connect_timeout_ms, &s->v,
				      err)) < 0)
		return rc;
	s->remote = vn_virt_is_remote(s->v);
	if (!s->remote)
		return 0;
	/* A disk image goes too; its overlay and the topology's disks are made there for each guest. */
	if (s->disk && ((rc = vn_testbed_qcow2_size(s->im->path, &s->root_size, err)) < 0 ||
			(rc = up_stage(s, s->im->path, &s->r_root, err)) < 0))
		return rc;
	if ((rc = up_stage(s, s->initrd, &s->r_initrd, err)) < 0 ||
	    (rc = up_stage(s, s->bc.pvh ? s->bc.pvh : s->k->image, &s->r_image, err)) < 0)
		return rc;
	return s->bc.loader ? up_stage(s, s->bc.loader, &s->r_loader, err) : 0;
}

/* The guest's name: --name unless a domain has it, else the first free one derived (pick_name). */
static int up_name(struct up_state *s, struct vn_error *err)
{
	const struct vn_up_opts *o = s->o;

	if (!o->name)
		return pick_name(s->v, s->ctx->state_dir, o->name_prefix ? o->name_prefix : s->t->name, &s->name, err);
	_cleanup_virt_domain_ struct vn_virt_domain *old = NULL;
	struct vn_error e = {0};
	if (vn_virt_domain_lookup(s->v, o->name, &old, &e) == 0)
		return vn_input_error(err, "a guest named '%s' exists already ('vnuma down %s' first)", o->name,
				      o->name);
	vn_error_clear(&e);
	s->name = vn_xstrdup(o->name);
	return 0;
}

/* The boot attempt up_boot() makes first: the PVH vmlinux when there is one, else the bzImage. */
static void up_attempt_init(struct up_state *s)
{
	const struct vn_up_opts *o = s->o;
	const struct vn_kernel *k = s->k;

	/* A disk root: the initramfs mounts /dev/vda and switches to the image's init. */
	if (s->disk)
		s->cmdline = vn_xasprintf("root=/dev/vda vnuma.init=%s%s%s", s->im->init ? s->im->init : "/init",
					  o->append ? " " : "", o->append ? o->append : "");
	s->kernel_id = vn_xasprintf("%s %s", k->recipe, k->version);
	s->at = (struct vn_boot_attempt){
		.shares = s->shares,
		.nshares = s->nshares,
		.v = s->v,
		.t = s->t,
		.o = o,
		.name = s->name,
		.topo_path = s->topo_path,
		.topo_text = s->topo_text,
		.topo_len = s->topo_len,
		.kernel = k->image,
		.kernel_id = s->kernel_id,
		.release = k->release,
		.initrd = s->remote ? s->r_initrd : s->initrd,
		.cmdline = s->cmdline ? s->cmdline : o->append,
		.root_image = s->disk ? (s->remote ? s->r_root : s->im->path) : NULL,
		.root_image_size = s->root_size,
		/* Our path names nothing on another host; a disk root has no script to mount it. */
		.modules_dir = s->remote || s->disk ? NULL : k->modules_dir,
		.image = s->remote   ? s->r_image
			 : s->bc.pvh ? s->bc.pvh
				     : k->image,
		.loader = s->remote ? s->r_loader : s->bc.loader,
		.arch = s->arch,
		.until = s->deadline,
		.icount = s->icount,
		.icount_auto = s->icount_auto,
	};
	if (s->icount) {
		s->vt_cmdline = vn_xasprintf(VN_TESTBED_ICOUNT_LPJ "%s%s", s->at.cmdline ? " " : "",
					     s->at.cmdline ? s->at.cmdline : "");
		s->at.cmdline = s->vt_cmdline;
	}
	/* A PVH path not yet proven for this kernel here gets half the deadline, then the bzImage gets the rest. */
	if (s->bc.pvh && !s->bc.proven)
		s->at.until = vn_now_s() + (s->deadline - vn_now_s()) / 2;
}

/* A PVH boot not yet proven failed: the bzImage gets the rest of the deadline, and decides whose fault it was. */
static int up_boot_bzimage(struct up_state *s, struct vn_error *err)
{
	_cleanup_free_ char *why = vn_xstrdup(err->msg);
	_cleanup_free_ char *failed = vn_state_failed_dir(s->ctx->state_dir);
	int rc;

	vn_testbed_progress(s->o, "booting", "%s; its logs are in %s; booting the bzImage instead", why, failed);
	vn_error_clear(err);
	vn_testbed_boot_attempt_clear(&s->at);
	s->at.image = s->k->image;
	s->at.loader = NULL;
	s->at.until = s->deadline;
	free(s->r_image);
	s->r_image = NULL;
	if (s->remote) {
		if ((rc = up_stage(s, s->k->image, &s->r_image, err)) < 0)
			return rc;
		s->at.image = s->r_image;
	}
	if ((rc = vn_testbed_boot_attempt(&s->at, err)) < 0)
		return rc;
	/* Only a kernel that boots the other way has a PVH problem, rather than a boot problem. */
	vn_testbed_pvh_mark(s->bc.pvh, "stalled", why);
	return 0;
}

/* A digest (hex) of a file that boots, memoized by file identity in CACHE/digests. */
static int up_digest(struct up_state *s, const char *path, char hex[VN_SHA256_HEX_LEN + 1], struct vn_error *err)
{
	_cleanup_free_ char *memo = vn_cache_digests_dir(s->cache);
	uint8_t d[VN_SHA256_LEN];
	int rc;

	if ((rc = vn_sha256_file_memo(path, memo, d, err)) < 0)
		return rc;
	vn_sha256_hex(d, hex);
	return 0;
}

/*
 * Whether this guest can be restored from (or saved as) a booted snapshot,
 * and its key: a local guest with an initramfs root (a disk root's writes
 * are not in the snapshot), unless --cold or a cache cap of 0 says no. The
 * accelerator is the one it will run on: forced, else the proven verdict,
 * else TCG (a guest that ends up elsewhere makes no snapshot).
 */
static int up_warm_key(struct up_state *s, struct vn_error *err)
{
	const char *force = getenv("VNUMA_ACCEL");
	char kernel[VN_SHA256_HEX_LEN + 1], initrd[VN_SHA256_HEX_LEN + 1], loader[VN_SHA256_HEX_LEN + 1];
	char key[VN_WARM_KEY_LEN + 1], reason[8];
	_cleanup_free_ char *plugin = NULL;
	const char *qemu_args[4];
	size_t nqemu_args = 0;
	unsigned long qemu = 0;
	uint64_t max;
	int rc;

	if (s->o->cold || s->remote || s->disk)
		return 0;
	/*
	 * A restored pseries guest (QEMU 7.2, TCG) never answers again: seen
	 * with Debian's ppc64el kernel and a built one, whose first boot then
	 * waited out the deadline. It boots each time.
	 */
	if (s->arch == VN_ARCH_PPC64LE)
		return 0;
	if ((rc = vn_warm_cache_max(&max, err)) < 0)
		return rc;
	if (!max)
		return 0;
	if (force && (strcmp(force, "kvm") == 0 || strcmp(force, "tcg") == 0))
		s->warm_accel = strcmp(force, "kvm") == 0 ? VN_ACCEL_KVM : VN_ACCEL_TCG;
	else if (force && *force)
		return 0; /* $VNUMA_ACCEL's other words are the accelerator code's to refuse */
	else if (s->icount || s->o->locality || vn_virt_accel_cached(s->v, &s->warm_accel, reason, sizeof(reason)) < 0)
		s->warm_accel = VN_ACCEL_TCG; /* virtual time and plugins are TCG's alone */
	/*
	 * A snapshot in virtual time, or counting, is another machine: the key
	 * has QEMU's extra arguments as boot_dopts() passes them. The plugin's
	 * counter file is in the guest's dir, which a restore moves to the new
	 * guest's (virt/save.c), so the key has a stand-in for it. A restored
	 * guest's map is proven again by its run, as a booted one's is.
	 */
	if (s->icount) {
		qemu_args[nqemu_args++] = "-icount";
		qemu_args[nqemu_args++] = s->icount;
	}
	if (s->o->locality) {
		if ((rc = vn_testbed_locality_arg(s->t, "/warm/guest", &plugin, err)) < 0)
			return rc;
		qemu_args[nqemu_args++] = "-plugin";
		qemu_args[nqemu_args++] = plugin;
	}
	if ((rc = up_digest(s, s->at.image, kernel, err)) < 0 || (rc = up_digest(s, s->at.initrd, initrd, err)) < 0 ||
	    (s->at.loader && (rc = up_digest(s, s->at.loader, loader, err)) < 0) ||
	    (rc = vn_virt_hypervisor_version(s->v, &qemu, err)) < 0)
		return rc;
	struct vn_warm_key_in in = {
		.t = s->t,
		.kernel_sha256 = kernel,
		.initrd_sha256 = initrd,
		.loader_sha256 = s->at.loader ? loader : NULL,
		.cmdline = s->at.cmdline,
		.qemu_args = nqemu_args ? qemu_args : NULL,
		.nqemu_args = nqemu_args,
		.qemu_version = qemu,
		.accel = s->warm_accel,
		.arch = s->arch,
		.shares = s->at.shares,
		.nshares = s->at.nshares,
	};
	if ((rc = vn_warm_key(&in, key, err)) < 0 || (rc = vn_warm_open(s->cache, key, &s->warm, err)) < 0)
		return rc;
	s->warm_on = true;
	return 0;
}

/* The boot's deadline from now (a PVH path not yet proven gets half of it first, as up_attempt_init gives). */
static void up_deadline_restart(struct up_state *s)
{
	s->deadline = vn_now_s() + (s->o->timeout_s > 0 ? s->o->timeout_s : VN_TESTBED_BOOT_MS / 1000);
	s->at.until = s->deadline;
	if (s->bc.pvh && !s->bc.proven)
		s->at.until = vn_now_s() + (s->deadline - vn_now_s()) / 2;
}

/*
 * 1: restored from the snapshot; 0: to boot, making the snapshot (holding
 * its lock) if warm. The lock is held through a restore too (the file's
 * XML is renamed for each guest), so boots of one key take turns, and wait
 * for the one making it. A snapshot that does not restore, whatever the
 * reason (truncated, corrupt, from another QEMU), is deleted and this boot
 * makes it again.
 */
static int up_restore(struct up_state *s, struct vn_error *err)
{
	int rc;

	if ((rc = up_warm_key(s, err)) < 0 || !s->warm_on)
		return rc;
	/* Waiting on another boot of this key takes at most half the deadline, and is not this boot's time. */
	rc = vn_warm_lock(&s->warm, vn_now_s() + (s->deadline - vn_now_s()) / 2, err);
	if (rc == 0 || rc == -ETIMEDOUT)
		up_deadline_restart(s);
	if (rc == -ETIMEDOUT) {
		/* Another boot of this key is still at it: this one boots, and leaves the snapshot to it. */
		vn_testbed_progress(s->o, "note", "%s; booting without it", err->msg);
		vn_error_clear(err);
		vn_warm_clear(&s->warm);
		s->warm_on = false;
		return 0;
	}
	if (rc < 0)
		return rc;
	if (!vn_warm_ready(&s->warm)) {
		s->make = true;
		return 0;
	}
	rc = vn_testbed_restore_attempt(&s->at, s->warm.save, s->warm.console, s->warm.key, s->warm_accel, err);
	if (rc == 0) {
		vn_warm_unlock(&s->warm);
		vn_warm_touch(&s->warm);
		return 1;
	}
	if (rc == -EINTR || err->kind == VN_ERR_INPUT)
		return rc;
	/* QEMU's own words end libvirt's message, over lines: one line here. */
	for (char *p = err->msg; *p; p++)
		if (*p == '\n' || *p == '\r')
			*p = ' ';
	vn_testbed_progress(s->o, "note", "snapshot %.16s did not restore (%s); deleted it, booting", s->warm.key,
			    err->msg);
	vn_error_clear(err);
	vn_warm_drop(&s->warm);
	vn_testbed_boot_attempt_clear(&s->at);
	s->make = true;
	return 0;
}

static int up_boot(struct up_state *s, struct vn_error *err)
{
	bool trial = s->bc.pvh && !s->bc.proven;
	int rc;

	if ((rc = vn_testbed_icount(s->o, &s->icount, &s->icount_auto, err)) < 0)
		return rc;
	up_attempt_init(s);
	if ((rc = up_restore(s, err)) != 0) {
		s->boot_s = vn_now_s() - s->at.t0;
		if (rc > 0)
			vn_testbed_progress(s->o, "agent answered", "%.1f s after the restore", s->boot_s);
		return rc < 0 ? rc : 0;
	}
	rc = vn_testbed_boot_attempt(&s->at, err);
	s->boot_s = vn_now_s() - s->at.t0;
	if (rc == 0)
		vn_testbed_progress(s->o, "agent answered", "%.1f s after start", s->boot_s);
	/* Anything but Ctrl-C or bad input: the bzImage decides whether PVH or the kernel is at fault. */
	/* ... and a host that went away took both with it. */
	if (rc < 0 && rc != -EINTR && err->kind == VN_ERR_INFRA && trial && vn_virt_alive(s->v))
		return up_boot_bzimage(s, err);
	if (rc == 0 && trial)
		vn_testbed_pvh_mark(s->bc.pvh, "proven", NULL);
	return rc;
}

/* The boot's console log, as the snapshot's: a restored guest's log begins with it. */
static int up_save_console(struct up_state *s, struct vn_error *err)
{
	return vn_file_copy_atomic(s->at.log, s->warm.console, err);
}

/*
 * A guest this boot is to make the snapshot of, once its fidelity held:
 * saved (which stops it), the file renamed into place whole, and restored
 * at once, so the guest the user gets is the same as every later one of
 * this key. A save that fails leaves no snapshot and fails the boot.
 */
/* A save or its restore failed: nothing of the guest is left running, its logs kept (STATE/failed). */
static int up_save_failed(struct up_state *s, int rc, struct vn_error *err)
{
	_cleanup_free_ char *kept = NULL;
	struct vn_error e = {0};

	vn_warm_drop(&s->warm);
	/* A restore that failed waiting for the agent destroyed its guest already; one that never started has none. */
	if (s->at.d && !s->at.restored)
		vn_virt_domain_destroy_keep(s->at.d, &kept, &e);
	else if (!s->at.d)
		vn_virt_guest_dir_keep(s->v, s->name, &kept, &e);
	vn_error_clear(&e);
	if (kept)
		vn_error_prefix(err, "saving the booted guest (its logs are in %s)", kept);
	return rc;
}

/*
 * The save did not happen (a full disk, say): libvirt resumes a guest whose
 * save failed, and that guest is the one the user asked for, so it is kept,
 * its agent connected again, and the boot goes on without a snapshot. Only a
 * guest that is no longer running fails the boot.
 */
static int up_save_unsaved(struct up_state *s, int rc, struct vn_error *err)
{
	struct vn_error e = {0};
	bool running = false;
	double left = s->at.until - vn_now_s();

	if (vn_virt_domain_is_running(s->at.d, &running, &e) < 0 || !running ||
	    vn_agent_connect(s->at.sock, (int)((left > 5 ? left : 5) * 1000), &s->at.a, &e) < 0) {
		vn_error_clear(&e);
		return up_save_failed(s, rc, err);
	}
	vn_testbed_progress(s->o, "note", "snapshot %.16s not saved (%s); the guest goes on without it", s->warm.key,
			    err->msg);
	vn_error_clear(err);
	vn_warm_drop(&s->warm); /* the console log copied for it, if that much was done */
	vn_warm_unlock(&s->warm);
	return 0;
}

static int up_save(struct up_state *s, struct vn_error *err)
{
	_cleanup_free_ char *tmp = NULL;
	uint64_t max;
	unsigned pruned = 0;
	int rc;

	if (!s->make || !s->r->fidelity_ok || vn_virt_domain_accel(s->at.d) != s->warm_accel)
		return 0;
	tmp = vn_cache_warm_temp(s->cache, s->warm.key, (long)getpid());
	vn_testbed_progress(s->o, "saving", "snapshot %.16s", s->warm.key);
	double t0 = vn_now_s();
	vn_agent_close(s->at.a);
	s->at.a = NULL;
	if ((rc = up_save_console(s, err)) < 0 || (rc = vn_virt_domain_save(s->at.d, tmp, err)) < 0) {
		unlink(tmp);
		return up_save_unsaved(s, rc, err);
	}
	if (rename(tmp, s->warm.save) < 0) {
		rc = vn_infra_error(err, -errno, "cannot rename %s to %s: %s", tmp, s->warm.save, strerror(errno));
		unlink(tmp);
		return up_save_failed(s, rc, err);
	}
	vn_virt_domain_free(s->at.d);
	s->at.d = NULL;
	if ((rc = vn_testbed_restore_attempt(&s->at, s->warm.save, s->warm.console, s->warm.key, s->warm_accel, err)) <
		    0 ||
	    (rc = vn_testbed_icount_settle(&s->at, &s->r->icount_lead_s, err)) < 0)
		return up_save_failed(s, rc, err);
	s->saved = true;
	vn_testbed_progress(s->o, "saved", "snapshot %.16s, restored in %.1f s", s->warm.key, vn_now_s() - t0);
	vn_warm_unlock(&s->warm);
	struct vn_error e = {0};
	if (vn_warm_cache_max(&max, &e) == 0 && vn_warm_prune(s->cache, max, s->warm.key, &pruned, &e) == 0 && pruned)
		vn_testbed_progress(s->o, "note", "%u older snapshots pruned (cache cap)", pruned);
	vn_error_clear(&e);
	return 0;
}

/* Virtual time chose TCG, whatever the host's verdict: the reason says so, and a KVM host says it gave KVM up. */
static void up_record_icount(struct up_state *s)
{
	struct vn_up_result *r = s->r;
	enum vn_accel cached;
	char why[64];

	bool kvm = !s->remote && vn_virt_accel_cached(s->v, &cached, why, sizeof(why)) == 0 && cached == VN_ACCEL_KVM;
	free(r->accel_reason);
	r->accel_reason = vn_xasprintf("virtual time (-icount %s) runs under TCG only%s", s->icount,
				       kvm ? "; KVM, proven on this host, was not used" : "");
	r->icount = vn_xstrdup(s->icount);
	if (kvm)
		vn_testbed_progress(s->o, "note", "virtual time: TCG, although KVM is proven on this host");
}

/*
 * Shares and files, refused before anything is built or booted. A 9p share
 * is mounted only after the snapshot is saved: QEMU refuses to save a guest
 * that has one mounted, and a restored guest mounts it afresh.
 */
static int up_host_files(struct up_state *s, struct vn_error *err)
{
	int rc;

	if ((rc = vn_share_parse_all(s->o->share, s->o->files_base, &s->shares, &s->nshares, err)) < 0 ||
	    (rc = vn_file_specs_check(s->o->files, s->o->files_base, err)) < 0)
		return rc;
	return 0;
}

static int up_mount(struct up_state *s, struct vn_error *err)
{
	int rc;

	if ((rc = vn_share_mount(s->at.a, s->shares, s->nshares, err)) < 0 ||
	    (rc = vn_files_put(s->at.a, s->o->files, s->o->files_base, err)) < 0)
		return rc;
	if (s->nshares || s->o->files)
		vn_testbed_progress(s->o, "host files", "%u share%s mounted, files copied", s->nshares,
				    s->nshares == 1 ? "" : "s");
	return 0;
}

/*
 * The kernel's whole modules tree, mounted in the guest now that any snapshot
 * is saved (QEMU saves no guest whose 9p export is mounted), so modprobe and
 * the kernel's request_module find every module. Not mounted, the guest still
 * works with the initramfs's modules: a note, not a failed up.
 */
static int up_modules(struct up_state *s, struct vn_error *err)
{
	static const char *const argv[] = {"/bin/sh", VN_INITRAMFS_MODULES_MOUNT, NULL};
	_cleanup_free_ char *out = NULL;
	struct vn_error e = {0};
	double t0 = vn_now_s();

	(void)err;
	if (!s->k->modules_dir)
		return 0; /* everything built in */
	if (!s->at.modules_dir) {
		vn_testbed_progress(s->o, "note",
				    "the kernel's modules tree is not in a guest %s: modprobe loads only "
				    "the initramfs's modules",
				    s->remote ? "on another host" : "with a disk root");
		return 0;
	}
	if (vn_testbed_run(s->at.a, argv, 30, &out, &e) < 0) {
		vn_testbed_progress(s->o, "note",
				    "the kernel's modules tree is not mounted in the guest (%s): modprobe "
				    "loads only the initramfs's modules",
				    e.msg);
		vn_error_clear(&e);
		return 0;
	}
	vn_testbed_progress(s->o, "modules", "the kernel's tree mounted in the guest in %.2f s", vn_now_s() - t0);
	return 0;
}

/* The agent answered: what booted, into the result; a remote guest's connection held, a local one's closed. */
static int up_record(struct up_state *s, struct vn_error *err)
{
	struct vn_up_result *r = s->r;
	const struct vn_kernel *k = s->k;

	(void)err;
	r->boot_s = s->boot_s;
	r->accel = vn_virt_domain_accel(s->at.d);
	r->accel_reason = vn_xstrdup(vn_virt_domain_accel_reason(s->at.d));
	r->restored =
		s->at.restored && !s->saved; /* a boot that made the snapshot was restored from it, still a boot */
	r->clock_step_s = s->at.restored ? (double)s->at.clock_step_ns / 1e9 : 0;
	if (s->warm_on && (r->restored || s->saved))
		r->snapshot = vn_xstrdup(s->warm.key);
	if (s->icount)
		up_record_icount(s);
	r->vcpus = s->t->ncpus_total;
	r->host_cpus = vn_virt_host_cpus(s->v);
	/* A remote guest's streams need its connection: held until it is taken down. */
	if (s->remote)
		vn_testbed_remote_hold(s->name, s->v, steal_pointer(&s->at.d));
	else
		vn_virt_close(s->v);
	s->v = s->at.v = NULL;

	r->name = vn_xstrdup(s->name);
	r->guest_dir = vn_xstrdup(s->at.dir);
	r->console_log = vn_xstrdup(s->at.log);
	r->kernel_release = vn_xstrdup(k->release);
	r->kernel_version = vn_xstrdup(k->version);
	r->kernel_recipe = vn_xstrdup(k->recipe);
	r->topology_path = vn_xstrdup(s->topo_path);
	r->arch = vn_xstrdup(vn_arch_name(s->arch));
	if (k->npatches)
		r->kernel_patches = vn_strv_copy(k->patches);
	if (k->config) {
		uint8_t digest[32];
		char hex[65];
		struct vn_error e = {0};
		if (vn_sha256_file(k->config, digest, &e) == 0) {
			vn_sha256_hex(digest, hex);
			r->kernel_config_sha256 = vn_xstrdup(hex);
		}
		vn_error_clear(&e);
	}
	return 0;
}

/* Virtual time: the guest's clock ahead of the host's, so that its shift is 0 (boot.c); saved so, too. */
static int up_settle(struct up_state *s, struct vn_error *err)
{
	return vn_testbed_icount_settle(&s->at, &s->r->icount_lead_s, err);
}

static int up_fidelity(struct up_state *s, struct vn_error *err)
{
	const enum vn_fallback_model *model = s->o->model_given ? &s->o->model : NULL;
	struct vn_up_result *r = s->r;
	int rc;

	if ((rc = vn_testbed_fidelity(s->at.a, s->t, model, s->arch, &r->fidelity_ok, &r->fidelity_report, err)) < 0)
		return rc;
	vn_testbed_progress(s->o, "fidelity checked", "%s", r->fidelity_ok ? "ok" : "MISMATCH");
	return 0;
}

int vn_testbed_up_here(const struct vn_testbed_ctx *ctx, const struct vn_up_opts *o, struct vn_up_result *r,
		       struct vn_error *err)
{
	static int (*const phases[])(struct up_state *, struct vn_error *) = {
		up_host_files, up_resolve, up_image, up_connect, up_name,  up_boot,
		up_fidelity,   up_settle,  up_save,  up_modules, up_mount, up_record,
	};
	struct up_state s = {.ctx = ctx, .o = o, .r = r};
	int rc = 0;

	memset(r, 0, sizeof(*r));
	for (size_t i = 0; i < VN_ARRAY_SIZE(phases) && rc >= 0; i++)
		rc = phases[i](&s, err);
	up_state_clear(&s);
	return rc;
}
