/*
 * The content-addressed kernel cache: the keys (source identity, config
 * inputs, patch contents), CACHE/kernels/<key>/ with its kernel.json, and
 * listing what is there.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <json-c/json.h>
#include <limits.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "kernel/kernel-priv.h"
#include "kernel/kernel.h"
#include "util/alloc.h"
#include "util/cleanup.h"
#include "util/dir.h"
#include "util/file.h"
#include "util/state.h"

void vn_kernel_hash_str(struct vn_sha256 *c, const char *s)
{
	/* Length-prefixed so that ("ab","c") and ("a","bc") differ. */
	uint64_t n = strlen(s);
	vn_sha256_update(c, &n, sizeof(n));
	vn_sha256_update(c, s, n);
}

int vn_kernel_hash_file(struct vn_sha256 *c, const char *path, struct vn_error *err)
{
	_cleanup_free_ char *s = NULL;
	size_t len = 0;
	int rc = vn_file_read(path, VN_FILE_STATE_MAX, &s, &len, err);
	if (rc < 0)
		return rc;
	uint64_t n = len;
	vn_sha256_update(c, &n, sizeof(n));
	vn_sha256_update(c, s, len);
	return 0;
}

/* The patches' contents, in order, then the digest as hex into out. */
static int finish_with_patches(struct vn_sha256 *c, const struct vn_recipe *r, char out[VN_SHA256_HEX_LEN + 1],
			       struct vn_error *err)
{
	uint8_t d[VN_SHA256_LEN];
	int rc;

	for (size_t i = 0; i < r->npatches; i++)
		if ((rc = vn_kernel_hash_file(c, r->patches[i], err)) < 0)
			return rc;
	vn_sha256_final(c, d);
	vn_sha256_hex(d, out);
	return 0;
}

int vn_kernel_cache_key(const struct vn_recipe *r, enum vn_arch arch, bool debug, const char *source_id,
			char key[VN_SHA256_HEX_LEN + 1], char config_hash[VN_SHA256_HEX_LEN + 1], struct vn_error *err)
{
	const struct vn_recipe_config *cf = vn_recipe_config_for(r, arch);
	struct vn_sha256 c;
	uint8_t d[VN_SHA256_LEN];
	int rc;

	vn_sha256_init(&c);
	vn_kernel_hash_str(&c, "vnuma-kernel-config-v1");
	/* x86's keys predate other architectures: only another one adds its name, so x86 caches stay valid. */
	if (arch != VN_ARCH_X86_64) {
		vn_kernel_hash_str(&c, "arch");
		vn_kernel_hash_str(&c, vn_arch_name(arch));
	}
	vn_kernel_hash_str(&c, cf->base ? cf->base : "");
	/*
	 * Contents, not names: two recipes sharing a fragment from different
	 * folders share one incremental build tree. A fragment taken from the
	 * kernel tree is named; its content is covered by the source identity.
	 * "require" is a check on the result, not an input, so it is left out.
	 */
	for (size_t i = 0; i < cf->nfragments; i++) {
		if (cf->fragments[i])
			rc = vn_kernel_hash_file(&c, cf->fragments[i], err);
		else
			vn_kernel_hash_str(&c, cf->fragment_names[i]), rc = 0;
		if (rc < 0)
			return rc;
	}
	/*
	 * A selftest's config is the tree's, so like a fragment from the tree it
	 * is named here and its bytes are in the source identity (and in the
	 * patches' hash where a patch changes it). Only a recipe that names one
	 * adds anything: other keys are unchanged.
	 */
	if (cf->nselftests)
		vn_kernel_hash_str(&c, "selftests");
	for (size_t i = 0; i < cf->nselftests; i++)
		vn_kernel_hash_str(&c, cf->selftests[i]);
	/*
	 * Keys predate debug builds: only a debug one adds its fragment, so the
	 * kernels built without stay where they are. Another config, so another
	 * build tree too: switching debug on and off rebuilds nothing.
	 */
	if (debug) {
		vn_kernel_hash_str(&c, "debug");
		vn_kernel_hash_str(&c, vn_kernel_debug_fragment(arch));
	}
	vn_sha256_final(&c, d);
	vn_sha256_hex(d, config_hash);

	vn_sha256_init(&c);
	vn_kernel_hash_str(&c, "vnuma-kernel-v1");
	vn_kernel_hash_str(&c, source_id);
	vn_kernel_hash_str(&c, config_hash);
	return finish_with_patches(&c, r, key, err);
}

int vn_kernel_patches_hash(const struct vn_recipe *r, char out[VN_SHA256_HEX_LEN + 1], struct vn_error *err)
{
	struct vn_sha256 c;

	vn_sha256_init(&c);
	vn_kernel_hash_str(&c, "vnuma-patches-v1");
	return finish_with_patches(&c, r, out, err);
}

static int write_meta(const char *path, const struct vn_kernel_built *b, const struct vn_kernel_work *w)
{
	const struct vn_recipe *r = w->r;
	struct json_object *o = json_object_new_object(), *p = json_object_new_array(), *f = json_object_new_array();
	json_object_object_add(o, "key", json_object_new_string(b->key));
	json_object_object_add(o, "recipe", json_object_new_string(b->recipe));
	json_object_object_add(o, "recipe_path", json_object_new_string(b->recipe_path ? b->recipe_path : ""));
	json_object_object_add(o, "tree", json_object_new_string(r->tree));
	json_object_object_add(o, "source_id", json_object_new_string(b->source_id));
	if (b->commit)
		json_object_object_add(o, "commit", json_object_new_string(b->commit));
	/* The commit alone (--rev), or HEAD with the checkout's uncommitted diff: which to build again. */
	if (b->commit && w->o->rev)
		json_object_object_add(o, "commit_only", json_object_new_boolean(true));
	json_object_object_add(o, "config_hash", json_object_new_string(b->config_hash));
	json_object_object_add(o, "arch", json_object_new_string(vn_arch_name(w->o->arch)));
	/* Only where set: an entry without it reads as it did before debug builds. */
	if (w->debug)
		json_object_object_add(o, "debug", json_object_new_boolean(true));
	if (w->r->tree_path)
		json_object_object_add(o, "tree_path", json_object_new_string(w->r->tree_path));
	json_object_object_add(o, "config_base", json_object_new_string(w->cf->base));
	for (size_t i = 0; i < w->cf->nfragments; i++)
		json_object_array_add(f, json_object_new_string(w->cf->fragment_names[i]));
	json_object_object_add(o, "fragments", f);
	if (w->cf->nselftests) {
		struct json_object *st = json_object_new_array();
		for (size_t i = 0; i < w->cf->nselftests; i++)
			json_object_array_add(st, json_object_new_string(w->cf->selftests[i]));
		json_object_object_add(o, "selftests", st);
	}
	for (size_t i = 0; i < b->npatches; i++)
		json_object_array_add(p, json_object_new_string(b->patches[i]));
	json_object_object_add(o, "patches", p);
	json_object_object_add(o, "release", json_object_new_string(b->release ? b->release : ""));
	json_object_object_add(o, "version", json_object_new_string(b->version ? b->version : ""));
	json_object_object_add(o, "size", json_object_new_int64(b->size));
	json_object_object_add(o, "build_s", json_object_new_double(b->build_s));
	json_object_object_add(o, "built_at", json_object_new_int64((int64_t)time(NULL)));
	int rc = json_object_to_file_ext(path, o, JSON_C_TO_STRING_PRETTY | JSON_C_TO_STRING_NOSLASHESCAPE) < 0 ? -EIO
														: 0;
	json_object_put(o);
	return rc;
}

static const char *jstr(struct json_object *o, const char *k)
{
	struct json_object *v;
	return json_object_object_get_ex(o, k, &v) && json_object_is_type(v, json_type_string)
		       ? json_object_get_string(v)
		       : NULL;
}

/*
 * What each architecture's cached image starts with: x86's bzImage its boot
 * header's "HdrS" at 0x202, arm64's Image its "ARM\x64" at 0x38, ppc64le's
 * vmlinux an ELF header. An empty or torn file has none of them.
 */
static bool image_whole(const char *path, enum vn_arch arch)
{
	static const struct {
		off_t off;
		const char *magic;
	} m[] = {[VN_ARCH_X86_64] = {0x202, "HdrS"},
		 [VN_ARCH_ARM64] = {0x38, "ARM\x64"},
		 [VN_ARCH_PPC64LE] = {0, "\x7f"
					 "ELF"}}; /* also any vmlinux's */
	_cleanup_close_ int fd = open(path, O_RDONLY | O_CLOEXEC);
	char buf[4];

	return fd >= 0 && (size_t)arch < VN_ARRAY_SIZE(m) && m[arch].magic && pread(fd, buf, 4, m[arch].off) == 4 &&
	       memcmp(buf, m[arch].magic, 4) == 0;
}

static struct vn_kernel_built *load_json(const char *dir, struct json_object *o, enum vn_arch arch)
{
	struct json_object *v;
	struct vn_kernel_built *b = vn_xcalloc(1, sizeof(*b));

	b->dir = vn_xstrdup(dir);
	b->arch = arch;
	b->image = vn_xasprintf("%s/%s", dir, vn_arch_info(b->arch)->kimage);
	b->config = vn_xasprintf("%s/config", dir);
	b->log = vn_xasprintf("%s/build.log", dir);
	b->key = vn_xstrdup_or_null(jstr(o, "key"));
	b->recipe = vn_xstrdup_or_null(jstr(o, "recipe"));
	b->recipe_path = vn_xstrdup_or_null(jstr(o, "recipe_path"));
	b->source_id = vn_xstrdup_or_null(jstr(o, "source_id"));
	b->commit = vn_xstrdup_or_null(jstr(o, "commit"));
	b->config_hash = vn_xstrdup_or_null(jstr(o, "config_hash"));
	b->release = vn_xstrdup_or_null(jstr(o, "release"));
	b->version = vn_xstrdup_or_null(jstr(o, "version"));
	b->tree_path = vn_xstrdup_or_null(jstr(o, "tree_path"));
	b->commit_only = json_object_object_get_ex(o, "commit_only", &v) && json_object_get_boolean(v);
	if (json_object_object_get_ex(o, "debug", &v) && json_object_get_boolean(v)) {
		b->debug = true;
		b->vmlinux = vn_xasprintf("%s/vmlinux", dir);
		b->gdb_py = vn_xasprintf("%s/vmlinux-gdb.py", dir);
	}
	if (json_object_object_get_ex(o, "build_s", &v))
		b->build_s = json_object_get_double(v);
	if (json_object_object_get_ex(o, "patches", &v) && json_object_is_type(v, json_type_array)) {
		b->npatches = json_object_array_length(v);
		b->patches = vn_xcalloc(b->npatches + 1, sizeof(char *));
		for (size_t i = 0; i < b->npatches; i++)
			b->patches[i] = vn_xstrdup_or_null(json_object_get_string(json_object_array_get_idx(v, i)));
	}
	return b;
}

/* Fill b from CACHE/kernels/<key>/kernel.json; -ENOENT when it is not there, -EINVAL when it is not whole. */
int vn_kernel_cache_load(const char *dir, struct vn_kernel_built **out)
{
	_cleanup_free_ char *path = vn_xasprintf("%s/kernel.json", dir);
	struct json_object *o;
	enum vn_arch arch = VN_ARCH_X86_64; /* before arches: no "arch", an x86 bzImage */
	struct stat st;

	if (access(path, F_OK) != 0 && access(dir, F_OK) != 0)
		return -ENOENT;
	if (!(o = json_object_from_file(path)) || !json_object_is_type(o, json_type_object) ||
	    (jstr(o, "arch") && vn_arch_parse(jstr(o, "arch"), "arch", &arch, NULL) < 0)) {
		json_object_put(o);
		return -EINVAL;
	}
	struct vn_kernel_built *b = load_json(dir, o, arch);
	json_object_put(o);
	b->size = stat(b->image, &st) == 0 ? (long long)st.st_size : -1;
	/* What serving it needs: its identity, an image that is one, and a debug build's vmlinux and scripts. */
	if (!b->key || !b->source_id || !b->config_hash || !b->recipe || b->size <= 0 || !image_whole(b->image, arch) ||
	    (b->debug && (!image_whole(b->vmlinux, VN_ARCH_PPC64LE) || !vn_is_file(b->gdb_py)))) {
		vn_kernel_built_free(b);
		return -EINVAL;
	}
	*out = b;
	return 0;
}

int vn_kernel_cache_get(const char *final, const char *key, struct vn_kernel_built **out, char **why)
{
	_cleanup_kernel_built_ struct vn_kernel_built *b = NULL;
	int rc = vn_kernel_cache_load(final, &b);

	*why = NULL;
	if (rc == -ENOENT)
		return rc;
	if (rc == 0 && strcmp(b->key, key) == 0) {
		*out = steal_pointer(&b);
		return 0;
	}
	/* Torn (a crash before its files reached the disk) or another key's: kept aside to look at, and rebuilt. */
	_cleanup_free_ char *kdir = vn_xstrdup(final), *bad = NULL;
	*strrchr(kdir, '/') = '\0';
	bad = vn_xasprintf("%s/.bad", kdir);
	mkdir(bad, 0755);
	free(bad);
	bad = vn_xasprintf("%s/.bad/%s-%lld-%d", kdir, strrchr(final, '/') + 1, (long long)time(NULL), (int)getpid());
	if (rename(final, bad) < 0 && errno != ENOENT)
		vn_rm_rf(final);
	*why = vn_xasprintf("%s: %s, moved to %s", final, rc == 0 ? "another key's entry" : "a broken entry", bad);
	return -ENOENT;
}

/*
 * Only x86's image carries its release in a header; any build has it in
 * O=/include/config/kernel.release, and the banner's build string in
 * include/generated/utsversion.h (6.1; compile.h before).
 */
static int built_release(const struct vn_kernel_work *w, const char *image, struct vn_kernel_built *b,
			 struct vn_error *err)
{
	_cleanup_free_ char *rel = NULL, *uts = NULL, *p = NULL, *q = NULL;
	int rc;

	if (w->o->arch == VN_ARCH_X86_64)
		return vn_kernel_image_release(image, &b->release, &b->version, err);
	p = vn_xasprintf("%s/include/config/kernel.release", w->obj);
	if ((rc = vn_file_read(p, 4096, &rel, &(size_t){0}, err)) < 0)
		return rc;
	rel[strcspn(rel, "\n")] = '\0';
	if (!rel[0])
		return vn_infra_error(err, -EINVAL, "%s is empty", p);
	q = vn_xasprintf("%s/include/generated/utsversion.h", w->obj);
	if (vn_file_read(q, 4096, &uts, &(size_t){0}, NULL) == 0 && strstr(uts, "UTS_VERSION \"")) {
		char *s = strstr(uts, "UTS_VERSION \"") + 13;
		s[strcspn(s, "\"")] = '\0';
		b->version = vn_xasprintf("%s %s", rel, s);
	} else
		b->version = vn_xstrdup(rel);
	b->release = steal_pointer(&rel);
	return 0;
}

/* fsync a file or a folder (its entries); -errno. */
static int sync_path(const char *path)
{
	_cleanup_close_ int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	return fsync(fd) < 0 && errno != EINVAL ? -errno : 0;
}

/* A .py of OBJ/scripts/gdb/linux, as the file it links to (into the tree, which the next build changes). */
static int copy_gdb_module(const char *from_dir, const char *to_dir, const char *name, struct vn_error *err)
{
	_cleanup_free_ char *from = vn_xasprintf("%s/%s", from_dir, name), *to = vn_xasprintf("%s/%s", to_dir, name);
	size_t n = strlen(name);
	int rc;

	if (n < 4 || strcmp(name + n - 3, ".py") != 0 || !vn_is_file(from))
		return 0;
	if ((rc = vn_file_copy(from, to)) < 0)
		return vn_infra_error(err, rc, "copying %s: %s", from, strerror(-rc));
	return 0;
}

/*
 * A debug build's vmlinux (ppc64le's image is it already) and the gdb
 * scripts: OBJ/vmlinux-gdb.py finds its modules in scripts/gdb/ beside
 * itself (abspath, not realpath, of its own file), so they are copied as
 * files, the tree's symlinks followed, into the same shape.
 */
static int install_debug(const struct vn_kernel_work *w, const char *staging, struct vn_error *err)
{
	_cleanup_free_ char *from = vn_xasprintf("%s/vmlinux", w->obj), *to = vn_xasprintf("%s/vmlinux", staging);
	_cleanup_free_ char *mods = vn_xasprintf("%s/scripts/gdb/linux", w->obj);
	_cleanup_free_ char *mods_to = vn_xasprintf("%s/scripts/gdb/linux", staging);
	int rc;

	if (strcmp(vn_arch_info(w->o->arch)->kimage, "vmlinux") != 0 && (rc = vn_file_copy(from, to)) < 0)
		return vn_infra_error(err, rc, "copying %s: %s", from, strerror(-rc));
	free(from);
	free(to);
	from = vn_xasprintf("%s/vmlinux-gdb.py", w->obj);
	to = vn_xasprintf("%s/vmlinux-gdb.py", staging);
	if ((rc = vn_file_copy(from, to)) < 0)
		return vn_infra_error(err, rc, "copying %s (make scripts_gdb's): %s", from, strerror(-rc));
	if ((rc = vn_mkdir_p(mods_to, 0755, err)) < 0)
		return rc;
	DIR *d = opendir(mods);
	if (!d)
		return vn_infra_error(err, -errno, "%s (make scripts_gdb's): %s", mods, strerror(errno));
	for (struct dirent *e; rc == 0 && (e = readdir(d));)
		rc = copy_gdb_module(mods, mods_to, e->d_name, err);
	closedir(d);
	return rc;
}

int vn_kernel_cache_install(const struct vn_kernel_work *w, const char *staging, const char *final,
			    struct vn_kernel_built *b, struct vn_error *err)
{
	char from[PATH_MAX], to[PATH_MAX];
	struct stat st;
	int rc;

	const struct vn_arch_info *ai = vn_arch_info(w->o->arch);
	snprintf(from, sizeof(from), "%s/%s", w->obj, ai->kimage_path);
	snprintf(to, sizeof(to), "%s/%s", staging, ai->kimage);
	if ((rc = vn_file_copy(from, to)) < 0)
		return vn_infra_error(err, rc, "copying %s: %s", from, strerror(-rc));
	b->arch = w->o->arch;
	if ((rc = built_release(w, to, b, err)) < 0)
		return rc;
	b->size = stat(to, &st) == 0 ? (long long)st.st_size : 0;
	snprintf(from, sizeof(from), "%s/.config", w->obj);
	snprintf(to, sizeof(to), "%s/config", staging);
	if ((rc = vn_file_copy(from, to)) < 0)
		return vn_infra_error(err, rc, "copying %s: %s", from, strerror(-rc));
	if (w->debug && (rc = install_debug(w, staging, err)) < 0)
		return rc;
	snprintf(to, sizeof(to), "%s/kernel.json", staging);
	if ((rc = write_meta(to, b, w)) < 0)
		return vn_infra_error(err, rc, "writing %s", to);
	/* On the disk before the entry appears: a crash must not leave a whole-looking folder of empty files. */
	const char *const files[] = {ai->kimage, "config",         "kernel.json",       "build.log",
				     "vmlinux",  "vmlinux-gdb.py", "scripts/gdb/linux", "."};
	for (size_t i = 0; i < VN_ARRAY_SIZE(files); i++) {
		snprintf(to, sizeof(to), "%s/%s", staging, files[i]);
		if ((rc = sync_path(to)) < 0 && rc != -ENOENT)
			return vn_infra_error(err, rc, "fsync %s: %s", to, strerror(-rc));
	}
	if (rename(staging, final) < 0) {
		/* Someone else installed the same key meanwhile: theirs is as good. */
		if (errno != ENOTEMPTY && errno != EEXIST)
			return vn_infra_error(err, -errno, "rename %s: %s", staging, strerror(errno));
		vn_rm_rf(staging);
	}
	snprintf(to, sizeof(to), "%s/..", final);
	sync_path(to);
	return 0;
}

/* Staging folders of builds that died (killed, crashed) are garbage once their process is gone. */
void vn_kernel_cache_sweep(const char *kdir)
{
	DIR *d = opendir(kdir);
	if (!d)
		return;
	for (struct dirent *e; (e = readdir(d));) {
		const char *dash = strrchr(e->d_name, '-');
		char p[PATH_MAX];
		if (strncmp(e->d_name, ".tmp-", 5) != 0 || !dash)
			continue;
		long pid = strtol(dash + 1, NULL, 10);
		if (pid <= 0 || (kill((pid_t)pid, 0) == 0 || errno != ESRCH))
			continue;
		snprintf(p, sizeof(p), "%s/%s", kdir, e->d_name);
		vn_rm_rf(p);
	}
	closedir(d);
}

struct vn_kernel_built *vn_kernel_built_new(const struct vn_recipe *r)
{
	struct vn_kernel_built *b = vn_xcalloc(1, sizeof(*b));
	b->recipe = vn_xstrdup(r->name);
	b->recipe_path = vn_xstrdup_or_null(r->path);
	b->npatches = r->npatches;
	b->patches = vn_xcalloc(r->npatches + 1, sizeof(char *));
	for (size_t i = 0; i < r->npatches; i++)
		b->patches[i] = vn_xstrdup(r->patch_names[i]);
	return b;
}

static int cmp_built(const void *a, const void *b)
{
	const struct vn_kernel_built *x = *(struct vn_kernel_built *const *)a, *y = *(struct vn_kernel_built *const *)b;
	return strcmp(x->recipe ? x->recipe : "", y->recipe ? y->recipe : "");
}

int vn_kernel_cache_list(const char *cache_dir, struct vn_kernel_built ***out, size_t *n, struct vn_error *err)
{
	_cleanup_free_ char *kdir = NULL;
	struct vn_kernel_built **v = NULL;
	DIR *d;

	(void)err;
	*out = NULL;
	*n = 0;
	kdir = vn_xasprintf("%s/kernels", cache_dir);
	if (!(d = opendir(kdir)))
		return 0;
	for (struct dirent *e; (e = readdir(d));) {
		char p[PATH_MAX];
		struct vn_kernel_built *b;
		if (e->d_name[0] == '.' || strncmp(e->d_name, "failed-", 7) == 0)
			continue;
		snprintf(p, sizeof(p), "%s/%s", kdir, e->d_name);
		if (vn_kernel_cache_load(p, &b) < 0)
			continue;
		v = vn_xreallocarray(v, *n + 1, sizeof(*v));
		v[(*n)++] = b;
	}
	closedir(d);
	if (*n)
		qsort(v, *n, sizeof(*v), cmp_built);
	*out = v;
	return 0;
}

int vn_kernel_cache_dir_default(char **out, struct vn_error *err)
{
	_cleanup_free_ char *state = NULL;
	int rc;

	*out = NULL;
	if ((rc = vn_state_locate(NULL, &state, err)) < 0)
		return rc;
	*out = vn_state_kernels_dir(state);
	return 0;
}

void vn_kernel_built_free(struct vn_kernel_built *b)
{
	if (!b)
		return;
	vn_free_all(b->dir, b->image, b->config, b->log, b->key, b->config_hash, b->source_id, b->commit, b->release,
		    b->version, b->recipe, b->recipe_path, b->tree_path, b->vmlinux, b->gdb_py);
	vn_strv_free_n(b->patches, b->npatches);
	free(b);
}
