/*
 * vnuma image build|list: recipes into the content-addressed image cache.
 * The busybox disk root is the default initramfs's own tree (the same
 * builder, without kernel modules: the boot initramfs brings those), so the
 * two userlands cannot drift apart; a Debian root comes from debootstrap.
 */
#include "testbed/arch-root.h"
#include "testbed/image.h"
#include "testbed/guest-image.h"
#include "testbed/testbed.h"
#include "testbed/testbed-priv.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <json-c/json.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "guest/image-recipe.h"
#include "kernel/kernel.h"
#include "util/alloc.h"
#include "util/cleanup.h"
#include "util/clock.h"
#include "util/dir.h"
#include "util/file.h"
#include "util/json.h"
#include "util/sha256.h"
#include "util/spawn.h"
#include "util/state.h"
#include "virt/virt.h"

/* Bumped when what a build makes of the same inputs changes. */
#define IMAGE_FORMAT "vnuma-image-1"

void vn_image_free(struct vn_image *im)
{
	if (!im)
		return;
	free(im->name);
	free(im->key);
	free(im->path);
	free(im->log);
	free(im->recipe);
	free(im->init);
	free(im);
}

void vn_testbed_disk_opts(const struct vn_testbed_ctx *ctx, struct vn_disk_opts *o, char *why, size_t len)
{
	const char *force = getenv("VNUMA_ACCEL");
	char reason[VN_ACCEL_DETAIL_MAX] = "", brief[VN_ACCEL_REASON_MAX];
	enum vn_accel verdict;

	memset(o, 0, sizeof(*o));
	if (force && strcmp(force, "kvm") == 0) {
		snprintf(why, len, "KVM (VNUMA_ACCEL=kvm)");
	} else if (force && strcmp(force, "tcg") == 0) {
		o->force_tcg = true;
		snprintf(why, len, "TCG (VNUMA_ACCEL=tcg)");
	} else if (vn_virt_accel_cached_host(ctx->state_dir, &verdict, reason, sizeof(reason)) == 0) {
		o->force_tcg = verdict != VN_ACCEL_KVM;
		vn_accel_summarize(reason, brief, sizeof(brief));
		snprintf(why, len, "%s (cached verdict: %s)", o->force_tcg ? "TCG" : "KVM", brief);
	} else {
		/* Unproven: a /dev/kvm that exists may still make the appliance's QEMU abort. */
		o->force_tcg = true;
		snprintf(why, len, "TCG (no accelerator verdict yet; 'vnuma doctor' proves one)");
	}
}

struct build {
	const struct vn_testbed_ctx *ctx;
	const struct vn_image_recipe *r;
	enum vn_arch arch;
	vn_kernel_progress_fn progress;
	void *progress_data;
	char *dir, *base; /* STATE/cache/images, NAME-KEY16 */
	char *log;
	FILE *logf;
	struct vn_disk_opts dopts;
};

static void stage(struct build *b, const char *name, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void stage(struct build *b, const char *name, const char *fmt, ...)
{
	char line[1024];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	if (b->logf) {
		fprintf(b->logf, "== %s: %s\n", name, line);
		fflush(b->logf);
	}
	if (b->progress)
		b->progress(b->progress_data, name, line);
}

/*
 * The busybox root: the default guest image, as an initramfs in the cache.
 * A disk's has no kernel modules (the boot initramfs of whichever kernel
 * boots it brings them); an initramfs recipe's has the stock kernel's, so
 * that it boots as it is.
 */
static int busybox_root(struct build *b, char **cpio, struct vn_error *err)
{
	_cleanup_free_ char *cache = vn_state_cache_dir(b->ctx->state_dir);
	_cleanup_free_ char *kcache = vn_state_kernels_dir(b->ctx->state_dir);
	_cleanup_free_ char *arch_root = NULL;
	_cleanup_kernel_ struct vn_kernel *k = NULL;
	struct vn_kernel none = {0};
	struct vn_kernel_resolve_opts ko = {.cache_dir = kcache, .arch = b->arch};
	struct vn_guest_arch ga = {.arch = b->arch};
	int rc;

	/* Another architecture's busybox, numactl and libraries: its Debian packages, as a guest of it boots with. */
	if (b->arch != vn_arch_host()) {
		if ((rc = vn_testbed_arch_root(b->arch, cache, &arch_root, err)) < 0)
			return rc;
		ga.root = ko.root = arch_root;
	}
	if (b->r->kind == VN_IMAGE_INITRAMFS && (rc = vn_kernel_resolve_with("stock", NULL, &ko, &k, err)) < 0)
		return rc;
	return vn_testbed_guest_image(cache, k ? k : &none, arch_root ? &ga : NULL, (const char *const *)b->r->with,
				      false, cpio, err);
}

/* The key: the recipe's bytes and the digest of what goes in (the initramfs builder's own key). */
static void make_key(const struct vn_image_recipe *r, enum vn_arch arch, const char *root_id,
		     char hex[VN_SHA256_HEX_LEN + 1])
{
	struct vn_sha256 h;
	uint8_t d[VN_SHA256_LEN];

	vn_sha256_init(&h);
	vn_sha256_update(&h, IMAGE_FORMAT, sizeof(IMAGE_FORMAT));
	vn_sha256_update(&h, r->sha256, strlen(r->sha256) + 1);
	/* x86's keys predate other architectures: only another one adds its name. */
	if (arch != VN_ARCH_X86_64)
		vn_sha256_update(&h, vn_arch_name(arch), strlen(vn_arch_name(arch)) + 1);
	if (root_id)
		vn_sha256_update(&h, root_id, strlen(root_id) + 1);
	vn_sha256_final(&h, d);
	vn_sha256_hex(d, hex);
}

/* A Debian root's own inputs besides the recipe: the in-guest programs vnuma puts in it. */
static int helpers_digest(char hex[VN_SHA256_HEX_LEN + 1], struct vn_error *err)
{
	_cleanup_strv_ char **helpers = NULL;
	struct vn_sha256 h;
	uint8_t d[VN_SHA256_LEN];
	int rc;

	if ((rc = vn_testbed_helper_files(vn_arch_host(), &helpers, err)) < 0)
		return rc;
	vn_sha256_init(&h);
	for (char **p = helpers; *p; p++) {
		_cleanup_free_ char *host = vn_xstrndup(*p, strcspn(*p, ":"));
		if ((rc = vn_sha256_file(host, d, err)) < 0)
			return rc;
		vn_sha256_update(&h, *p, strlen(*p) + 1);
		vn_sha256_update(&h, d, sizeof(d));
	}
	vn_sha256_final(&h, d);
	vn_sha256_hex(d, hex);
	return 0;
}

static void log_line(void *data, const char *line)
{
	struct build *b = data;
	if (b->logf) {
		fprintf(b->logf, "%s\n", line);
		fflush(b->logf);
	}
}

static int run_logged(struct build *b, const char *what, const char *const *argv, struct vn_error *err)
{
	struct vn_spawn_opts so = VN_SPAWN_OPTS_INIT;
	so.line = log_line;
	so.line_data = b;
	int rc = vn_spawn_run(argv, &so, err);
	if (rc < 0)
		return vn_error_prefix(err, "%s", what);
	if (rc != 0)
		return vn_infra_error(err, -EIO, "%s failed (exit %d); see the build log %s", what, rc, b->log);
	return 0;
}

/* The agent as a systemd service: started at boot, restarted when it dies, as the busybox init does. */
static const char agent_unit[] = "[Unit]\n"
				 "Description=vnuma guest agent\n"
				 "After=dev-virtio\\x2dports-org.vnuma.agent.0.device systemd-modules-load.service\n"
				 "\n[Service]\n"
				 "ExecStart=/usr/bin/vnuma-agent\n"
				 "Restart=always\nRestartSec=1\n"
				 "\n[Install]\nWantedBy=multi-user.target\n";

/*
 * A chroot's mounts (debootstrap mounts /proc and /sys in it and may be
 * stopped before it unmounts them) go before the tree does, deepest first;
 * the tree is then removed without crossing into any file system left.
 */
static void remove_root(const char *dir)
{
	char line[PATH_MAX + 256];
	size_t n = strlen(dir);

	for (int pass = 0; pass < 8; pass++) {
		char deepest[PATH_MAX] = "";
		_cleanup_fclose_ FILE *f = fopen("/proc/self/mounts", "re");
		while (f && fgets(line, sizeof(line), f)) {
			char mp[PATH_MAX];
			if (sscanf(line, "%*s %4095s", mp) == 1 && strncmp(mp, dir, n) == 0 && mp[n] == '/' &&
			    strlen(mp) > strlen(deepest))
				snprintf(deepest, sizeof(deepest), "%s", mp);
		}
		if (!*deepest || umount2(deepest, MNT_DETACH) < 0)
			break;
	}
	vn_rm_rf(dir);
}

/* A Debian root from the archive into dir, the helpers in, the agent enabled; then a tar of it. */
static int debootstrap_root(struct build *b, const char *dir, const char *tar, struct vn_error *err)
{
	const struct vn_image_recipe *r = b->r;
	_cleanup_free_ char *include = NULL;
	_cleanup_strv_ char **helpers = NULL;
	int rc;

	struct vn_strbuf inc = VN_STRBUF_INIT;
	vn_strbuf_printf(&inc, "--include=systemd-sysv");
	for (size_t i = 0; i < r->npackages; i++)
		vn_strbuf_printf(&inc, ",%s", r->packages[i]);
	include = vn_strbuf_steal(&inc);
	stage(b, "debootstrap", "%s from %s with %zu packages (minutes)", r->suite, r->mirror, r->npackages);
	const char *argv[] = {"debootstrap", "--variant=minbase", include, r->suite, dir, r->mirror, NULL};
	if ((rc = run_logged(b, "debootstrap", argv, err)) < 0)
		return rc;
	stage(b, "helpers", "the agent, sampler and workloads; the agent as a service");
	if ((rc = vn_testbed_helper_files(vn_arch_host(), &helpers, err)) < 0)
		return rc;
	for (char **p = helpers; *p; p++) {
		char *colon = strchr(*p, ':');
		*colon = '\0';
		_cleanup_free_ char *dst = vn_xasprintf("%s%s", dir, colon + 1);
		_cleanup_free_ char *parent = vn_xstrndup(dst, (size_t)(strrchr(dst, '/') - dst));
		if ((rc = vn_mkdir_p(parent, 0755, err)) < 0 || (rc = vn_file_copy_atomic(*p, dst, err)) < 0)
			return rc;
		chmod(dst, 0755);
	}
	_cleanup_free_ char *unit = vn_xasprintf("%s/etc/systemd/system/vnuma-agent.service", dir);
	_cleanup_free_ char *wants = vn_xasprintf("%s/etc/systemd/system/multi-user.target.wants", dir);
	_cleanup_free_ char *link = vn_xasprintf("%s/vnuma-agent.service", wants);
	_cleanup_free_ char *host = vn_xasprintf("%s/etc/hostname", dir);
	if ((rc = vn_file_write_text(unit, agent_unit, err)) < 0 || (rc = vn_mkdir_p(wants, 0755, err)) < 0 ||
	    (rc = vn_file_write_text(host, "vnuma\n", err)) < 0)
		return rc;
	unlink(link);
	if (symlink("/etc/systemd/system/vnuma-agent.service", link) < 0)
		return vn_infra_error(err, -errno, "%s: %s", link, strerror(errno));
	/* A serial console login, and no root password: the guest is a throwaway test box. */
	const char *pw[] = {"chroot", dir, "passwd", "-d", "root", NULL};
	if ((rc = run_logged(b, "passwd -d root", pw, err)) < 0)
		return rc;
	const char *clean[] = {"chroot", dir, "apt-get", "clean", NULL};
	if ((rc = run_logged(b, "apt-get clean", clean, err)) < 0)
		return rc;
	stage(b, "tar", "packing the root");
	const char *tarv[] = {"tar", "--numeric-owner", "--xattrs", "-C", dir, "-cf", tar, ".", NULL};
	return run_logged(b, "tar of the root", tarv, err);
}

static int write_meta(struct build *b, const struct vn_image *im, struct vn_error *err)
{
	_cleanup_json_ struct json_object *o = json_object_new_object();
	json_object_object_add(o, "name", json_object_new_string(im->name));
	json_object_object_add(o, "kind", json_object_new_string(vn_image_kind_name(im->kind)));
	json_object_object_add(o, "key", json_object_new_string(im->key));
	json_object_object_add(o, "image", json_object_new_string(im->path));
	json_object_object_add(o, "recipe", json_object_new_string(im->recipe));
	json_object_object_add(o, "arch", json_object_new_string(vn_arch_name(im->arch)));
	if (im->init)
		json_object_object_add(o, "init", json_object_new_string(im->init));
	json_object_object_add(o, "build_s", json_object_new_double(im->build_s));
	json_object_object_add(o, "built", json_object_new_int64((int64_t)time(NULL)));
	_cleanup_free_ char *path = vn_xasprintf("%s/%s.json", b->dir, b->base);
	const char *s = json_object_to_json_string_ext(o, JSON_C_TO_STRING_PRETTY);
	return vn_file_write_atomic(path, s, strlen(s), 0644, err);
}

static long long file_bytes(const char *path)
{
	struct stat st;
	return stat(path, &st) == 0 ? (long long)st.st_blocks * 512 : 0;
}

static int read_meta(const char *path, struct vn_image **out, struct vn_error *err)
{
	_cleanup_free_ char *text = NULL;
	_cleanup_json_ struct json_object *o = NULL;
	size_t len;
	int rc;

	if ((rc = vn_file_read(path, 1 << 16, &text, &len, err)) < 0)
		return rc;
	if (!(o = json_tokener_parse(text)) || !json_object_is_type(o, json_type_object))
		return vn_infra_error(err, -EINVAL, "%s: not an image record", path);
	struct vn_image *im = vn_xcalloc(1, sizeof(*im));
	struct json_object *v;
#define STR(key, field)                                                                        \
	if (json_object_object_get_ex(o, key, &v) && json_object_is_type(v, json_type_string)) \
		im->field = vn_xstrdup(json_object_get_string(v));
	STR("name", name)
	STR("key", key)
	STR("image", path)
	STR("recipe", recipe)
	STR("init", init)
#undef STR
	if (json_object_object_get_ex(o, "build_s", &v))
		im->build_s = json_object_get_double(v);
	/* Records from before other architectures are x86's; a name we do not know is an incomplete record. */
	im->arch = VN_ARCH_X86_64;
	bool arch_ok = !json_object_object_get_ex(o, "arch", &v) ||
		       vn_arch_parse(json_object_get_string(v), "arch", &im->arch, NULL) == 0;
	/* The record is ours, but a file on disk: a kind we do not know is an incomplete record, never a guess. */
	const char *kind = json_object_object_get_ex(o, "kind", &v) ? json_object_get_string(v) : NULL;
	bool known = kind && (strcmp(kind, "disk") == 0 || strcmp(kind, "initramfs") == 0);
	im->kind = known && strcmp(kind, "disk") == 0 ? VN_IMAGE_DISK : VN_IMAGE_INITRAMFS;
	if (!im->name || !known || !arch_ok || !im->key || !im->path) {
		vn_image_free(im);
		return vn_infra_error(err, -EINVAL, "%s: incomplete image record", path);
	}
	im->log = vn_xstrndup(path, strlen(path) - 5);
	char *l = vn_xasprintf("%s.log", im->log);
	free(im->log);
	im->log = l;
	im->size = file_bytes(im->path);
	*out = im;
	return 0;
}

/*
 * A disk image: the root (busybox's packed one, or debootstrap's) as a tar,
 * unpacked into a fresh qcow2 by one appliance launch, renamed into place
 * when whole.
 */
static int build_disk(struct build *b, const char *root, const char *image, struct vn_image *im, struct vn_error *err)
{
	const struct vn_image_recipe *r = b->r;
	_cleanup_free_ char *tar = vn_xasprintf("%s/.%s.tar", b->dir, b->base);
	_cleanup_free_ char *tmp = vn_xasprintf("%s/.%s.qcow2", b->dir, b->base);
	char why[VN_ACCEL_REASON_MAX + 64], sz[32];
	int rc;

	vn_testbed_disk_opts(b->ctx, &b->dopts, why, sizeof(why));
	fprintf(b->logf, "== appliance: %s\n", why);
	fflush(b->logf);
	unlink(tmp);
	if (r->root == VN_IMAGE_ROOT_BUSYBOX) {
		stage(b, "tar", "the root as a tar archive");
		rc = vn_archive_to_tar(root, tar, err);
		im->init = "/init";
	} else {
		_cleanup_free_ char *rootdir = vn_xasprintf("%s/.%s.root", b->dir, b->base);
		remove_root(rootdir);
		rc = debootstrap_root(b, rootdir, tar, err);
		remove_root(rootdir);
		im->init = "/sbin/init";
	}
	if (rc == 0) {
		stage(b, "disk", "qcow2 of %s, ext4, the root unpacked, fstab (one appliance launch; TCG: ~25 s)",
		      vn_size_format(r->size, sz, sizeof(sz)));
		b->dopts.log = b->log;
		fflush(b->logf);
		if ((rc = vn_disk_create(tmp, r->size, r->name, tar, &b->dopts, err)) < 0)
			vn_error_prefix(err, "building %s (log: %s)", r->name, b->log);
		else if (chmod(tmp, 0644) < 0 || rename(tmp, image) < 0)
			rc = vn_infra_error(err, -errno, "%s: %s", image, strerror(errno));
	}
	unlink(tmp);
	unlink(tar);
	return rc;
}

int vn_image_build(const struct vn_testbed_ctx *ctx, const char *recipe, enum vn_arch arch,
		   vn_kernel_progress_fn progress, void *progress_data, struct vn_image **out, struct vn_error *err)
{
	_cleanup_free_ char *path = NULL, *root = NULL, *image = NULL, *meta = NULL;
	_cleanup_image_recipe_ struct vn_image_recipe *r = NULL;
	char key[VN_SHA256_HEX_LEN + 1];
	struct build b = {.ctx = ctx, .arch = arch, .progress = progress, .progress_data = progress_data};
	double t0 = vn_now_s();
	int rc;

	if ((rc = vn_image_recipe_find(recipe, &path, err)) < 0 || (rc = vn_image_recipe_load(path, &r, err)) < 0)
		return rc;
	b.r = r;
	/*
	 * debootstrap's second stage configures the packages by running the
	 * root's own programs (chroot ROOT dpkg --configure): another
	 * architecture's need qemu-user-static registered with binfmt_misc,
	 * which vnuma does not set up (it is the host's, for every process).
	 */
	if (arch != vn_arch_host() && r->kind == VN_IMAGE_DISK && r->root == VN_IMAGE_ROOT_DEBOOTSTRAP)
		return vn_input_error(err,
				      "%s: a debootstrap root cannot be built for %s here: its second stage runs "
				      "%s programs (needs qemu-user-static and binfmt_misc); a busybox root (\"root\": "
				      "\"busybox\", e.g. guest-images/tiny.json) can",
				      path, vn_arch_name(arch), vn_arch_name(arch));
	b.dir = vn_state_images_dir(ctx->state_dir);
	if ((rc = vn_mkdir_p(b.dir, 0700, err)) < 0)
		goto cleanup;
	/* The busybox root's inputs are hashed (and packed: cached) before the key exists. */
	if (r->kind == VN_IMAGE_INITRAMFS || r->root == VN_IMAGE_ROOT_BUSYBOX) {
		stage(&b, "root", "busybox, numactl, agent, sampler, workloads%s", r->nwith ? ", --with packages" : "");
		if ((rc = busybox_root(&b, &root, err)) < 0)
			goto cleanup;
	}
	char helpers[VN_SHA256_HEX_LEN + 1] = "";
	if (r->kind == VN_IMAGE_DISK && r->root == VN_IMAGE_ROOT_DEBOOTSTRAP && (rc = helpers_digest(helpers, err)) < 0)
		goto cleanup;
	make_key(r, arch, root ? strrchr(root, '/') + 1 : helpers, key);
	b.base = vn_xasprintf("%s-%.16s", r->name, key);
	meta = vn_xasprintf("%s/%s.json", b.dir, b.base);
	image = vn_xasprintf("%s/%s.%s", b.dir, b.base, r->kind == VN_IMAGE_DISK ? "qcow2" : "cpio.gz");
	if (access(meta, F_OK) == 0 && access(image, F_OK) == 0) {
		if ((rc = read_meta(meta, out, err)) == 0)
			(*out)->cached = true;
		goto cleanup;
	}
	b.log = vn_xasprintf("%s/%s.log", b.dir, b.base);
	b.logf = fopen(b.log, "we");
	if (!b.logf) {
		rc = vn_infra_error(err, -errno, "build log %s: %s", b.log, strerror(errno));
		goto cleanup;
	}
	stage(&b, "recipe", "%s (%s, key %.16s)", path, vn_image_kind_name(r->kind), key);
	struct vn_image im = {
		.name = r->name, .kind = r->kind, .key = key, .path = image, .recipe = path, .arch = arch};
	rc = r->kind == VN_IMAGE_INITRAMFS ? vn_file_copy_atomic(root, image, err)
					   : build_disk(&b, root, image, &im, err);
	if (rc < 0)
		goto cleanup;
	im.build_s = vn_now_s() - t0;
	if ((rc = write_meta(&b, &im, err)) < 0)
		goto cleanup;
	stage(&b, "done", "%s in %.1f s", image, im.build_s);
	rc = read_meta(meta, out, err);
cleanup:
	if (b.logf)
		fclose(b.logf);
	free(b.dir);
	free(b.base);
	free(b.log);
	return rc;
}

static int by_name(const void *a, const void *b)
{
	const struct vn_image *x = *(struct vn_image *const *)a, *y = *(struct vn_image *const *)b;
	int c = strcmp(x->name, y->name);
	return c ? c : strcmp(x->key, y->key);
}

int vn_image_list(const struct vn_testbed_ctx *ctx, struct vn_image ***out, size_t *n, struct vn_error *err)
{
	_cleanup_free_ char *dir = vn_state_images_dir(ctx->state_dir);
	struct vn_image **v = NULL;
	struct dirent *de;
	DIR *d = opendir(dir);

	*n = 0;
	while (d && (de = readdir(d))) {
		size_t len = strlen(de->d_name);
		struct vn_image *im = NULL;
		struct vn_error e = {0};
		if (de->d_name[0] == '.' || len < 6 || strcmp(de->d_name + len - 5, ".json") != 0)
			continue;
		_cleanup_free_ char *p = vn_xasprintf("%s/%s", dir, de->d_name);
		if (read_meta(p, &im, &e) < 0 || access(im->path, F_OK) < 0) {
			vn_error_clear(&e);
			vn_image_free(im);
			continue;
		}
		v = vn_xreallocarray(v, *n + 1, sizeof(*v));
		v[(*n)++] = im;
	}
	if (d)
		closedir(d);
	if (*n)
		qsort(v, *n, sizeof(*v), by_name);
	*out = v;
	return 0;
}

int vn_testbed_postmortem_hold(const char *guest_dir, const char *aside, struct vn_error *err)
{
	_cleanup_free_ char *overlay = vn_guest_dir_file(guest_dir, VN_GUEST_ROOT_DISK);
	int rc;

	if (access(overlay, F_OK) < 0)
		return 0;
	unlink(aside);
	if (link(overlay, aside) == 0)
		return 1;
	if ((rc = vn_file_copy_atomic(overlay, aside, err)) < 0)
		return rc;
	return 1;
}

int vn_testbed_postmortem(const struct vn_testbed_ctx *ctx, const char *aside, const char *out_dir,
			  struct vn_error *err)
{
	static const char *const paths[] = {VN_POSTMORTEM_PATHS, NULL};
	struct vn_disk_opts o;
	char why[VN_ACCEL_REASON_MAX + 64];
	unsigned missing = 0;

	vn_testbed_disk_opts(ctx, &o, why, sizeof(why));
	/* Under a temporary name until whole: a crash leaves no post-mortem rather than half of one. */
	_cleanup_free_ char *partial = vn_xasprintf("%s.partial", out_dir);
	vn_rm_rf(partial);
	int rc = vn_disk_extract(aside, paths, partial, true, &missing, &o, err);
	unlink(aside);
	if (rc == 0 && rename(partial, out_dir) < 0)
		rc = vn_infra_error(err, -errno, "cannot rename %s to %s: %s", partial, out_dir, strerror(errno));
	if (rc < 0)
		vn_rm_rf(partial);
	return rc;
}
