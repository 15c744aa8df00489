#include "testbed/testbed.h"
#include "testbed/testbed-priv.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <glob.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "guest/disk.h"
#include "guest/image-recipe.h"
#include "guest/initramfs.h"
#include "testbed/image.h"
#include "kernel/kernel.h"
#include "util/cleanup.h"
#include "util/dir.h"
#include "util/file.h"
#include "util/interrupt.h"
#include "util/paths.h"
#include "util/name.h"
#include "util/sha256.h"
#include "util/spawn.h"
#include "util/strbuf.h"
#include "util/clock.h"
#include "util/alloc.h"
#include "util/state.h"

/*
 * The state dir holds guest sockets, console logs and libvirt's config (which
 * says what QEMU runs as). One another user can write to, or that someone
 * else owns, could hand us their guests or their qemu.conf: refuse it, as
 * bad input (exit 2): retrying cannot help, the user has to fix the setting.
 */
static int state_dir_check(const char *dir, struct vn_error *err)
{
	struct stat st;

	if (lstat(dir, &st) < 0)
		return vn_infra_error(err, -errno, "state directory %s: %s", dir, strerror(errno));
	if (!S_ISDIR(st.st_mode))
		return vn_input_error(err, "state directory %s is not a directory", dir);
	if (st.st_uid != geteuid())
		return vn_input_error(err,
				      "state directory %s belongs to uid %u, not to you (uid %u); use your own "
				      "(--state-dir or VNUMA_STATE_DIR)",
				      dir, (unsigned)st.st_uid, (unsigned)geteuid());
	if (st.st_mode & (S_IWGRP | S_IWOTH))
		return vn_input_error(err,
				      "state directory %s is writable by %s (mode %04o): others could plant guests, "
				      "sockets or libvirt config there; chmod 700 it or use another",
				      dir, st.st_mode & S_IWOTH ? "everyone" : "its group",
				      (unsigned)(st.st_mode & 07777));
	return 0;
}

int vn_testbed_ctx_init(struct vn_testbed_ctx *ctx, const char *state_dir, const char *uri, struct vn_error *err)
{
	_cleanup_free_ char *buf = NULL;
	int rc;

	memset(ctx, 0, sizeof(*ctx));
	if ((rc = vn_state_locate(state_dir, &buf, err)) < 0)
		return rc;
	if ((rc = vn_mkdir_p(buf, 0700, err)) < 0)
		return rc;
	ctx->state_dir = realpath(buf, NULL);
	ctx->uri = uri;
	ctx->lock_timeout_ms = VN_TESTBED_LOCK_WAIT_MS;
	if (!ctx->state_dir)
		return vn_infra_error(err, -errno, "state directory %s: %s", buf, strerror(errno));
	if ((rc = state_dir_check(ctx->state_dir, err)) < 0) {
		vn_testbed_ctx_clear(ctx);
		return rc;
	}
	return 0;
}

int vn_testbed_guest_names(const char *state_dir, char ***names, struct vn_error *err)
{
	_cleanup_free_ char *buf = NULL, *dir = NULL;
	size_t n = 0;
	int rc;

	if ((rc = vn_state_locate(state_dir, &buf, err)) < 0)
		return rc;
	dir = vn_state_guests_dir(buf);
	char **v = vn_xcalloc(1, sizeof(*v));
	DIR *d = opendir(dir);
	struct dirent *de;
	while (d && (de = readdir(d))) {
		if (de->d_name[0] == '.' || (de->d_type != DT_DIR && de->d_type != DT_UNKNOWN))
			continue;
		v = vn_xreallocarray(v, n + 2, sizeof(*v));
		v[n] = vn_xstrdup(de->d_name);
		v[++n] = NULL;
	}
	if (d)
		closedir(d);
	*names = v;
	return (int)n;
}

void vn_testbed_ctx_clear(struct vn_testbed_ctx *ctx)
{
	free(ctx->state_dir);
	ctx->state_dir = NULL;
}

void vn_up_result_clear(struct vn_up_result *r)
{
	vn_free_all(r->name, r->guest_dir, r->console_log, r->kernel_release, r->kernel_version, r->kernel_recipe,
		    r->kernel_config_sha256, r->topology_path, r->accel_reason, r->fidelity_report);
	vn_strv_free(r->kernel_patches);
	vn_artifact_list_clear(&r->artifacts);
	memset(r, 0, sizeof(*r));
}

int vn_topology_find_near(const char *arg, const char *near_dir, char **path, struct vn_error *err)
{
	return vn_paths_find(arg, "topology", "topologies", ".xml", near_dir, path, err);
}

int vn_topology_find(const char *arg, char **path, struct vn_error *err)
{
	return vn_topology_find_near(arg, NULL, path, err);
}

/* In-guest programs (agent, sampler, tracer, workloads) from vnuma's helper dirs (util/paths.h). */
int vn_testbed_helper_files(char ***out, struct vn_error *err)
{
	struct vn_paths p;
	char agent[PATH_MAX + 16] = "", sampler[PATH_MAX + 16] = "", tracer[PATH_MAX + 16] = "";
	int rc;

	if ((rc = vn_paths_self(&p, err)) < 0)
		return rc;
	glob_t g = {0};
	for (unsigned i = 0; i < p.nhelper_dirs; i++) {
		char pat[PATH_MAX + 16], f[PATH_MAX + 16];
		snprintf(f, sizeof(f), "%s/vnuma-agent", p.helper_dirs[i]);
		if (!agent[0] && access(f, X_OK) == 0)
			memcpy(agent, f, sizeof(f));
		snprintf(f, sizeof(f), "%s/vnuma-sample", p.helper_dirs[i]);
		if (!sampler[0] && access(f, X_OK) == 0)
			memcpy(sampler, f, sizeof(f));
		snprintf(f, sizeof(f), "%s/vnuma-trace", p.helper_dirs[i]);
		if (!tracer[0] && access(f, X_OK) == 0)
			memcpy(tracer, f, sizeof(f));
		snprintf(pat, sizeof(pat), "%s/vnuma-wl-*", p.helper_dirs[i]);
		glob(pat, i ? GLOB_APPEND : 0, NULL, &g);
	}
	if (!agent[0]) {
		globfree(&g);
		return vn_infra_error(err, -ENOENT,
				      "guest agent vnuma-agent not found in %s%s%s (build the vnuma-agent target, or "
				      "set VNUMA_HELPER_DIR)",
				      p.helper_dirs[0], p.nhelper_dirs > 1 ? " or " : "",
				      p.nhelper_dirs > 1 ? p.helper_dirs[1] : "");
	}

	char **v = vn_xcalloc(g.gl_pathc + 4, sizeof(char *));
	size_t k = 0;
	v[k++] = vn_xasprintf("%s:%s", agent, VN_INITRAMFS_AGENT_PATH);
	if (sampler[0])
		v[k++] = vn_xasprintf("%s:%s/vnuma-sample", sampler, VN_INITRAMFS_WORKLOAD_DIR);
	if (tracer[0])
		v[k++] = vn_xasprintf("%s:%s/vnuma-trace", tracer, VN_INITRAMFS_WORKLOAD_DIR);
	for (size_t i = 0; i < g.gl_pathc; i++) {
		const char *base = strrchr(g.gl_pathv[i], '/') + 1;
		v[k++] = vn_xasprintf("%s:%s/%s", g.gl_pathv[i], VN_INITRAMFS_WORKLOAD_DIR, base);
	}
	globfree(&g);
	*out = v;
	return 0;
}

/* The same layout vn_virt_guest_dir() creates; computed here so exec needs no libvirt. */
static void guest_paths(const struct vn_testbed_ctx *ctx, const char *name, char **dir, char **sock)
{
	*dir = vn_state_guest_dir(ctx->state_dir, name);
	*sock = vn_state_guest_file(ctx->state_dir, name, VN_GUEST_AGENT_SOCK);
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

/* Where a package's files may go into the guest: programs, libraries, their data; never docs. */
static bool package_path_ok(const char *path)
{
	static const char *const in[] = {"/bin/",   "/sbin/",    "/usr/bin/",     "/usr/sbin/",  "/lib/",
					 "/lib64/", "/usr/lib/", "/usr/libexec/", "/usr/share/", "/etc/"};
	static const char *const out[] = {"/usr/share/doc/",    "/usr/share/man/",     "/usr/share/info/",
					  "/usr/share/locale/", "/usr/share/lintian/", "/usr/share/bug/"};
	bool ok = false;

	for (size_t i = 0; i < VN_ARRAY_SIZE(in); i++)
		ok |= strncmp(path, in[i], strlen(in[i])) == 0;
	for (size_t i = 0; i < VN_ARRAY_SIZE(out); i++)
		ok &= strncmp(path, out[i], strlen(out[i])) != 0;
	/* The initramfs takes "HOST:GUEST" pairs: a name with a colon or a newline cannot be one. */
	return ok && !strpbrk(path, ":\n");
}

/*
 * A Debian package installed on the host, as "HOST:GUEST" pairs of its
 * regular files (same path in the guest; the builder brings ELF libraries
 * along). A static build (bash-static's /bin/bash-static) also answers to its
 * plain name, so "#!/bin/bash" scripts run.
 */
static int package_files(const char *pkg, char ***files, size_t *n, struct vn_error *err)
{
	_cleanup_strbuf_ struct vn_strbuf list = VN_STRBUF_INIT;
	struct vn_spawn_opts so = VN_SPAWN_OPTS_INIT;
	size_t added = 0;

	if (!*pkg || strspn(pkg, "abcdefghijklmnopqrstuvwxyz0123456789+.-") != strlen(pkg) ||
	    !isalnum((unsigned char)*pkg))
		return vn_input_error(err, "--with %s: not a Debian package name", pkg);
	so.capture = &list;
	const char *argv[] = {"dpkg-query", "-L", pkg, NULL};
	int rc = vn_spawn_run(argv, &so, err);
	if (rc < 0)
		return vn_error_prefix(err, "--with %s", pkg);
	if (rc != 0)
		return vn_input_error(err, "--with %s: the package is not installed on this host (apt-get install %s)",
				      pkg, pkg);
	for (char *save = NULL, *l = strtok_r(list.s ? list.s : (char[]){0}, "\n", &save); l;
	     l = strtok_r(NULL, "\n", &save)) {
		struct stat st;
		if (!package_path_ok(l) || stat(l, &st) < 0 || !S_ISREG(st.st_mode))
			continue;
		if (added++ == VN_TESTBED_PACKAGE_FILES_MAX)
			return vn_input_error(err, "--with %s: more than %d files; too big for the guest image", pkg,
					      VN_TESTBED_PACKAGE_FILES_MAX);
		*files = vn_xreallocarray(*files, *n + 3, sizeof(char *));
		(*files)[(*n)++] = vn_xasprintf("%s:%s", l, l);
		size_t len = strlen(l);
		if (len > 7 && strcmp(l + len - 7, "-static") == 0 && strstr(l, "bin/"))
			(*files)[(*n)++] = vn_xasprintf("%s:%.*s", l, (int)(len - 7), l);
		(*files)[*n] = NULL;
	}
	if (!added)
		return vn_input_error(err, "--with %s: the package has no programs or libraries to add", pkg);
	return 0;
}

int vn_testbed_guest_image(const char *cache_dir, const struct vn_kernel *k, const char *const *with, bool disk_root,
			   char **initrd, struct vn_error *err)
{
	static const char *const modules[] = {VN_INITRAMFS_DEFAULT_MODULES, NULL};
	/* A disk root: the initramfs mounts it and switches to it (ext4 is a module in Debian's kernel, and the
	 * crc32c it asks the crypto API for is one no modules.dep names). */
	static const char *const disk_modules[] = {VN_INITRAMFS_DEFAULT_MODULES, "ext4", "crc32c_generic", NULL};
	_cleanup_strv_ char **files = NULL;
	int rc;

	if ((rc = vn_testbed_helper_files(&files, err)) < 0)
		return rc;
	size_t n = 0;
	while (files[n])
		n++;
	for (const char *const *p = with; p && *p; p++)
		if ((rc = package_files(*p, &files, &n, err)) < 0)
			return rc;
	struct vn_initramfs_spec spec = {
		.kernel_release = k->modules_dir ? k->release : NULL,
		.modules_dir = k->modules_dir,
		.modules = !k->modules_dir ? NULL
			   : disk_root     ? disk_modules
					   : modules,
		.extra_files = (const char *const *)files,
	};
	if ((rc = vn_initramfs_build(&spec, cache_dir, initrd, err)) < 0)
		return vn_error_prefix(err, "building the guest initramfs");
	return 0;
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
		disk = im->kind == VN_IMAGE_DISK;
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
	if ((rc = vn_testbed_fidelity(a, t, o->model, &r->fidelity_ok, &r->fidelity_report, err)) < 0)
		return rc;
	vn_testbed_progress(o, "fidelity checked", "%s", r->fidelity_ok ? "ok" : "MISMATCH");
	return 0;
}

int vn_testbed_lookup(struct vn_virt *v, const char *name, struct vn_virt_domain **out, struct vn_error *err)
{
	struct vn_virt_domain *d = NULL;
	struct vn_domain_meta m;
	struct vn_error e = {0};
	bool running = false;
	int rc;

	if ((rc = vn_virt_domain_lookup(v, name, &d, err)) < 0)
		return rc;
	/* Only what vnuma created: a domain without our metadata belongs to someone else. */
	if (vn_virt_domain_metadata(d, &m, &e) < 0) {
		vn_error_clear(&e);
		vn_virt_domain_is_running(d, &running, &e);
		vn_error_clear(&e);
		vn_virt_domain_free(d);
		return vn_input_error(err,
				      "'%s' on %s is a %s domain without vnuma's metadata: vnuma did not create it "
				      "and leaves it alone (use virsh)",
				      name, vn_virt_uri(v), running ? "running" : "stopped");
	}
	vn_domain_meta_clear(&m);
	*out = d;
	return 0;
}

int vn_testbed_down_here(const struct vn_testbed_ctx *ctx, const char *name, unsigned *count, struct vn_error *err)
{
	struct vn_virt *v = NULL;
	int rc;

	*count = 0;
	if (name && vn_testbed_remote_held(name)) {
		rc = vn_testbed_remote_release(name, true, err);
		*count = rc == 0;
		return rc;
	}
	if ((rc = vn_virt_open_within(ctx->uri, ctx->state_dir, ctx->lock_timeout_ms, ctx->connect_timeout_ms, &v,
				      err)) < 0)
		return rc;
	if (name) {
		struct vn_virt_domain *d = NULL;
		if ((rc = vn_testbed_lookup(v, name, &d, err)) == 0) {
			rc = vn_virt_domain_destroy(d, err);
			vn_virt_domain_free(d);
			*count += rc == 0;
		}
	} else {
		struct vn_virt_domain_info *list = NULL;
		size_t n = 0;
		rc = vn_virt_domain_list(v, &list, &n, err);
		for (size_t i = 0; rc == 0 && i < n; i++) {
			struct vn_virt_domain *d = NULL;
			if ((rc = vn_virt_domain_lookup(v, list[i].name, &d, err)) < 0)
				break;
			rc = vn_virt_domain_destroy(d, err);
			vn_virt_domain_free(d);
			*count += rc == 0;
		}
		vn_virt_domain_info_free(list, n);
	}
	vn_virt_close(v);
	return rc;
}

int vn_testbed_down_keep_here(const struct vn_testbed_ctx *ctx, const char *name, char **kept, struct vn_error *err)
{
	_cleanup_virt_domain_ struct vn_virt_domain *d = NULL;
	struct vn_virt *v = NULL;
	int rc;

	*kept = NULL;
	struct vn_virt_domain *held = vn_testbed_remote_held(name);
	if (held) {
		struct vn_error e = {0};
		if ((rc = vn_virt_domain_destroy_keep(held, kept, err)) < 0)
			vn_virt_domain_destroy(held, &e);
		vn_error_clear(&e);
		vn_testbed_remote_release(name, false, &e);
		vn_error_clear(&e);
		return rc;
	}
	if ((rc = vn_virt_open_within(ctx->uri, ctx->state_dir, ctx->lock_timeout_ms, ctx->connect_timeout_ms, &v,
				      err)) < 0)
		return rc;
	if ((rc = vn_testbed_lookup(v, name, &d, err)) == 0 && (rc = vn_virt_domain_destroy_keep(d, kept, err)) < 0) {
		/* Keeping the logs failed; still leave nothing running. */
		struct vn_error e = {0};
		vn_virt_domain_destroy(d, &e);
		vn_error_clear(&e);
	}
	vn_virt_close(v);
	return rc;
}

/* The watch of a connection to a guest (vn_agent_set_watch): virt/watch.c. */
static int watch_check(void *data, struct vn_error *err)
{
	return vn_virt_watch_check(data, err);
}

static void watch_free(void *data)
{
	vn_virt_watch_free(data);
}

int vn_testbed_agent(const struct vn_testbed_ctx *ctx, const char *name, int timeout_ms, struct vn_agent **out,
		     struct vn_error *err)
{
	_cleanup_free_ char *dir = NULL, *sock = NULL;
	struct stat st;
	int rc;

	if ((rc = vn_guest_name_check(name, err)) < 0)
		return rc;
	guest_paths(ctx, name, &dir, &sock);
	if (vn_virt_uri_is_remote(ctx->uri)) {
		struct vn_virt_domain *d = NULL;
		if ((rc = vn_testbed_remote_lookup(ctx, name, &d, err)) < 0 ||
		    (rc = vn_testbed_remote_agent(d, name, out, err)) < 0)
			return rc;
	} else {
		if (stat(dir, &st) != 0)
			return vn_input_error(err, "no guest named '%s' (see 'vnuma list')", name);
		if ((rc = vn_agent_connect(sock, timeout_ms, out, err)) < 0)
			return rc;
	}
	/*
	 * Before hello, so that a guest that is already dead is named so at
	 * once. QEMU's pid file is the embedded driver's; a daemon's is not ours
	 * (a remote guest's console is streamed into the same local log).
	 */
	_cleanup_free_ char *log = vn_guest_dir_file(dir, VN_GUEST_CONSOLE_LOG);
	const char *pid_root = vn_virt_uri_is_embedded(ctx->uri) ? ctx->state_dir : NULL;
	struct vn_virt_watch *w = vn_virt_watch_new(pid_root, name, log);
	struct vn_virt *held = vn_testbed_remote_conn(name);
	if (held)
		vn_virt_watch_connection(w, held);
	vn_agent_set_watch(*out, watch_check, w, watch_free);
	rc = vn_agent_hello(*out, timeout_ms, NULL, err);
	if (rc < 0) {
		vn_agent_close(*out);
		*out = NULL;
	}
	return rc;
}

int vn_testbed_run(struct vn_agent *a, const char *const *argv, double timeout_s, char **out, struct vn_error *err)
{
	struct vn_strbuf so = VN_STRBUF_INIT, se = VN_STRBUF_INIT;
	bool cut = false;
	struct vn_agent_exec_opts o = {
		.argv = argv,
		.stdin_fd = -1,
		.stdout_fd = -1,
		.stderr_fd = -1,
		.stdout_buf = &so,
		.stderr_buf = &se,
		.timeout_s = timeout_s,
		.truncated = &cut,
	};
	int status = -1;
	int rc = vn_agent_exec(a, &o, &status, err);

	/* Capped by the guest layer; whoever reads the output (dmesg in a snapshot) is told. */
	if (cut)
		vn_strbuf_printf(&so, "\n[vnuma: output of '%s' truncated at %u MiB]\n", argv[0],
				 VN_AGENT_EXEC_BUF_MAX >> 20);

	if (rc == 0 && status != 0) {
		char tail[200 + 4];
		/* The start of what it said on stderr, made safe for one line. */
		rc = vn_infra_error(err, -EIO, "guest command '%s' exited with %d: %s", argv[0], status,
				    vn_excerpt(se.s ? se.s : "", se.len, 200, tail));
	}
	vn_strbuf_free(&se);
	if (rc < 0) {
		vn_strbuf_free(&so);
		return rc;
	}
	*out = vn_strbuf_steal(&so);
	return 0;
}
