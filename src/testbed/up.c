/* vnuma up, in the process that holds libvirt: resolve, build, stage, boot, check fidelity. */
#include "topology/find.h"
#include "testbed/up.h"
#include "testbed/fidelity.h"
#include "testbed/guest-image.h"
#include "testbed/image.h"
#include "testbed/testbed.h"
#include "testbed/testbed-priv.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "guest/image-recipe.h"
#include "util/alloc.h"
#include "util/cleanup.h"
#include "util/clock.h"
#include "util/name.h"
#include "util/sha256.h"
#include "util/state.h"
#include "util/strbuf.h"

void vn_up_result_clear(struct vn_up_result *r)
{
	vn_free_all(r->name, r->guest_dir, r->console_log, r->kernel_release, r->kernel_version, r->kernel_recipe,
		    r->kernel_config_sha256, r->kernel_patches, r->topology_path, r->accel_reason, r->fidelity_report);
	vn_strv_free(r->artifacts);
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

int vn_testbed_up_here(const struct vn_testbed_ctx *ctx, const struct vn_up_opts *o, struct vn_up_result *r,
		       struct vn_error *err)
{
	_cleanup_free_ char *topo_path = NULL, *initrd = NULL, *cache = NULL;
	_cleanup_free_ char *dir = NULL, *sock = NULL, *log = NULL, *name = NULL, *kernel_id = NULL;
	_cleanup_topology_ struct vn_topology *t = NULL;
	_cleanup_kernel_ struct vn_kernel *k = NULL;
	_cleanup_virt_domain_ struct vn_virt_domain *d = NULL;
	_cleanup_agent_ struct vn_agent *a = NULL;
	struct vn_virt *v = NULL;
	double deadline;
	int rc;

	memset(r, 0, sizeof(*r));
	if (o->name && (rc = vn_guest_name_check(o->name, err)) < 0)
		return rc;
	if ((rc = vn_topology_find(o->topology, &topo_path, err)) < 0 ||
	    (rc = vn_topology_load(topo_path, &t, err)) < 0)
		return rc;
	/* A derived name (topology or scenario name, "-N" added later) obeys the same rule, checked before any work. */
	if (!o->name && (rc = vn_guest_name_check(o->name_prefix ? o->name_prefix : t->name, err)) < 0)
		return vn_error_prefix(err, "%s",
				       o->name_prefix ? "the guest name derived from the scenario"
						      : "the guest name derived from the topology (use --name)");
	_cleanup_free_ char *kcache = NULL;
	kcache = vn_state_kernels_dir(ctx->state_dir);
	struct vn_kernel_resolve_opts ko = {
		.cache_dir = kcache,
		.progress = o->progress.build,
		.progress_data = o->progress.data,
	};
	if ((rc = vn_kernel_resolve_with(o->kernel, o->modules, &ko, &k, err)) < 0)
		return rc;
	/* The boot deadline starts after a possible first-use kernel build. */
	deadline = vn_now_s() + (o->timeout_s > 0 ? o->timeout_s : VN_TESTBED_BOOT_MS / 1000);

	/* A guest image recipe: built on first use (cached after), then either a disk root or --with packages. */
	_cleanup_image_ struct vn_image *im = NULL;
	_cleanup_strv_ char **with = NULL;
	bool disk = false;
	if (o->image) {
		if ((rc = vn_image_build(ctx, o->image, o->progress.stage, o->progress.data, &im, err)) < 0)
			return rc;
		disk = strcmp(im->kind, "disk") == 0;
		if (!disk && (rc = recipe_with(im->recipe, o->with, &with, err)) < 0)
			return rc;
	}
	cache = vn_state_cache_dir(ctx->state_dir);
	if ((rc = vn_testbed_guest_image(cache, k, with ? (const char *const *)with : o->with, disk, &initrd, err)) < 0)
		return rc;
	struct vn_boot_choice bc = {0};
	if ((rc = vn_testbed_boot_path(t, k->image, cache, &bc, err)) < 0)
		return rc;

	if ((rc = vn_virt_open_within(ctx->uri, ctx->state_dir, ctx->lock_timeout_ms, ctx->connect_timeout_ms, &v,
				      err)) < 0) {
		vn_testbed_boot_choice_clear(&bc);
		return rc;
	}
	/* Another host has none of our files: what boots goes there first, once per content. */
	_cleanup_free_ char *r_image = NULL, *r_initrd = NULL, *r_loader = NULL, *r_root = NULL;
	uint64_t root_size = 0;
	bool remote = vn_virt_is_remote(v);
	if (remote) {
		/* A disk image goes too; its overlay and the topology's disks are made there for each guest. */
		if (disk && ((rc = vn_testbed_qcow2_size(im->path, &root_size, err)) < 0 ||
			     (rc = vn_testbed_remote_stage(v, ctx, im->path, &r_root, &r->artifacts, err)) < 0))
			;
		else if ((rc = vn_testbed_remote_stage(v, ctx, initrd, &r_initrd, &r->artifacts, err)) == 0 &&
			 (rc = vn_testbed_remote_stage(v, ctx, bc.pvh ? bc.pvh : k->image, &r_image, &r->artifacts,
						       err)) == 0 &&
			 bc.loader)
			rc = vn_testbed_remote_stage(v, ctx, bc.loader, &r_loader, &r->artifacts, err);
		if (rc < 0) {
			vn_virt_close(v);
			vn_testbed_boot_choice_clear(&bc);
			return rc;
		}
	}
	if (o->name) {
		struct vn_virt_domain *old = NULL;
		struct vn_error e = {0};
		if (vn_virt_domain_lookup(v, o->name, &old, &e) == 0) {
			vn_virt_domain_free(old);
			vn_virt_close(v);
			vn_testbed_boot_choice_clear(&bc);
			return vn_input_error(err, "a guest named '%s' exists already ('vnuma down %s' first)", o->name,
					      o->name);
		}
		vn_error_clear(&e);
		name = vn_xstrdup(o->name);
	} else if ((rc = pick_name(v, ctx->state_dir, o->name_prefix ? o->name_prefix : t->name, &name, err)) < 0) {
		vn_virt_close(v);
		vn_testbed_boot_choice_clear(&bc);
		return rc;
	}
	/* A disk root: the initramfs mounts /dev/vda and switches to the image's init. */
	_cleanup_free_ char *cmdline = NULL;
	if (disk)
		cmdline = vn_xasprintf("root=/dev/vda vnuma.init=%s%s%s", im->init ? im->init : "/init",
				       o->append ? " " : "", o->append ? o->append : "");
	kernel_id = vn_xasprintf("%s %s", k->recipe, k->version);

	struct vn_boot_attempt at = {
		.v = v,
		.t = t,
		.o = o,
		.name = name,
		.topo_path = topo_path,
		.kernel = k->image,
		.kernel_id = kernel_id,
		.release = k->release,
		.initrd = remote ? r_initrd : initrd,
		.cmdline = cmdline ? cmdline : o->append,
		.root_image = disk ? (remote ? r_root : im->path) : NULL,
		.root_image_size = root_size,
		.image = remote   ? r_image
			 : bc.pvh ? bc.pvh
				  : k->image,
		.loader = remote ? r_loader : bc.loader,
		.until = deadline,
	};
	/* A PVH path not yet proven for this kernel here gets half the deadline, then the bzImage gets the rest. */
	if (bc.pvh && !bc.proven)
		at.until = vn_now_s() + (deadline - vn_now_s()) / 2;
	rc = vn_testbed_boot_attempt(&at, err);
	/* Anything but Ctrl-C or bad input: the bzImage decides whether PVH or the kernel is at fault. */
	/* ... and a host that went away took both with it. */
	if (rc < 0 && rc != -EINTR && err->kind == VN_ERR_INFRA && bc.pvh && !bc.proven && vn_virt_alive(v)) {
		_cleanup_free_ char *why = vn_xstrdup(err->msg);
		_cleanup_free_ char *failed = vn_state_failed_dir(ctx->state_dir);
		vn_testbed_progress(o, "booting", "%s; its logs are in %s; booting the bzImage instead", why, failed);
		vn_error_clear(err);
		vn_testbed_boot_attempt_clear(&at);
		at.image = k->image;
		at.loader = NULL;
		at.until = deadline;
		free(r_image);
		r_image = NULL;
		rc = 0;
		if (remote && (rc = vn_testbed_remote_stage(v, ctx, k->image, &r_image, &r->artifacts, err)) == 0)
			at.image = r_image;
		/* Only a kernel that boots the other way has a PVH problem, rather than a boot problem. */
		if (rc == 0 && (rc = vn_testbed_boot_attempt(&at, err)) == 0)
			vn_testbed_pvh_mark(bc.pvh, "stalled", why);
	} else if (rc == 0 && bc.pvh && !bc.proven) {
		vn_testbed_pvh_mark(bc.pvh, "proven", NULL);
	}
	vn_testbed_boot_choice_clear(&bc);
	if (rc < 0) {
		vn_testbed_boot_attempt_clear(&at);
		vn_virt_close(v);
		return rc;
	}
	dir = steal_pointer(&at.dir);
	sock = steal_pointer(&at.sock);
	log = steal_pointer(&at.log);
	d = steal_pointer(&at.d);
	a = steal_pointer(&at.a);
	double t0 = at.t0;
	r->boot_s = vn_now_s() - t0;
	r->accel = vn_virt_domain_accel(d);
	r->accel_reason = vn_xstrdup(vn_virt_domain_accel_reason(d));
	vn_testbed_progress(o, "agent answered", "%.1f s after start", r->boot_s);
	/* A remote guest's streams need its connection: held until it is taken down. */
	if (remote)
		vn_testbed_remote_hold(name, v, steal_pointer(&d));
	else
		vn_virt_close(v);

	r->name = vn_xstrdup(name);
	r->guest_dir = vn_xstrdup(dir);
	r->console_log = vn_xstrdup(log);
	r->kernel_release = vn_xstrdup(k->release);
	r->kernel_version = vn_xstrdup(k->version);
	r->kernel_recipe = vn_xstrdup(k->recipe);
	r->topology_path = vn_xstrdup(topo_path);
	if (k->npatches) {
		struct vn_strbuf pb = VN_STRBUF_INIT;
		for (size_t i = 0; i < k->npatches; i++)
			vn_strbuf_printf(&pb, "%s%s", i ? " " : "", k->patches[i]);
		r->kernel_patches = vn_strbuf_steal(&pb);
	}
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
	if ((rc = vn_testbed_fidelity(a, t, o->model, &r->fidelity_ok, &r->fidelity_report, err)) < 0)
		return rc;
	vn_testbed_progress(o, "fidelity checked", "%s", r->fidelity_ok ? "ok" : "MISMATCH");
	return 0;
}
