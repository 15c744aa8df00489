/*
 * The selftests cache: keys, selftests.json, and what makes an entry whole
 * enough to serve (a guest that runs a torn binary reports the cache, not the kernel).
 */
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <json-c/json.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "kernel/kernel-priv.h"
#include "kernel/selftests.h"
#include "util/alloc.h"
#include "util/cleanup.h"
#include "util/dir.h"
#include "util/sha256.h"

void vn_selftests_key(const char *source_id, enum vn_arch arch, char *const *tests, size_t n, char out[65])
{
	uint8_t d[VN_SHA256_LEN];
	struct vn_sha256 c;

	vn_sha256_init(&c);
	vn_kernel_hash_str(&c, "vnuma-selftests-v1");
	vn_kernel_hash_str(&c, source_id);
	vn_kernel_hash_str(&c, vn_arch_name(arch));
	for (size_t i = 0; i < n; i++)
		vn_kernel_hash_str(&c, tests[i]);
	vn_sha256_final(&c, d);
	vn_sha256_hex(d, out);
}

bool vn_selftests_program_ok(const char *path, enum vn_arch arch)
{
	_cleanup_close_ int fd = open(path, O_RDONLY | O_CLOEXEC);
	unsigned char h[sizeof(Elf64_Ehdr)];
	struct stat st;

	if (fd < 0 || fstat(fd, &st) < 0 || !S_ISREG(st.st_mode) || !(st.st_mode & S_IXUSR))
		return false;
	ssize_t got = pread(fd, h, sizeof(h), 0);
	if (got >= 2 && h[0] == '#' && h[1] == '!')
		return true;
	if (got != (ssize_t)sizeof(h) || memcmp(h, ELFMAG, SELFMAG) != 0 || h[EI_CLASS] != ELFCLASS64 ||
	    h[EI_DATA] != ELFDATA2LSB)
		return false;
	Elf64_Ehdr e;
	memcpy(&e, h, sizeof(e));
	return e.e_machine == vn_arch_info(arch)->elf_machine && (e.e_type == ET_EXEC || e.e_type == ET_DYN);
}

static const char *jstr(struct json_object *o, const char *k)
{
	struct json_object *v;
	return json_object_object_get_ex(o, k, &v) && json_object_is_type(v, json_type_string)
		       ? json_object_get_string(v)
		       : NULL;
}

/* The entry at dir as its json says; NULL when the json or any test is not whole. */
static struct vn_selftests *load(const char *dir, struct json_object *o)
{
	_cleanup_selftests_ struct vn_selftests *t = vn_xcalloc(1, sizeof(*t));
	struct json_object *v;
	const char *arch = jstr(o, "arch"), *sub = jstr(o, "subdir");

	if (!arch || vn_arch_parse(arch, "arch", &t->arch, NULL) < 0 || !sub ||
	    (strcmp(sub, "vm") != 0 && strcmp(sub, "mm") != 0) || !jstr(o, "key") || !jstr(o, "source_id") ||
	    !json_object_object_get_ex(o, "tests", &v) || !json_object_is_type(v, json_type_array) ||
	    !json_object_array_length(v))
		return NULL;
	t->dir = vn_xstrdup(dir);
	t->subdir = vn_xstrdup(sub);
	t->key = vn_xstrdup(jstr(o, "key"));
	t->source_id = vn_xstrdup(jstr(o, "source_id"));
	t->tree = vn_xstrdup_or_null(jstr(o, "tree"));
	for (size_t i = 0; i < json_object_array_length(v); i++) {
		const char *name = json_object_get_string(json_object_array_get_idx(v, i));
		_cleanup_free_ char *p = vn_xasprintf("%s/%s/%s", dir, sub, name ? name : "");
		if (!name || !*name || strchr(name, '/') || !vn_selftests_program_ok(p, t->arch))
			return NULL;
		vn_strv_push(&t->tests, &t->ntests, name);
	}
	if (json_object_object_get_ex(o, "build_s", &v))
		t->build_s = json_object_get_double(v);
	return steal_pointer(&t);
}

int vn_selftests_cache_get(const char *final, const char *key, struct vn_selftests **out)
{
	_cleanup_free_ char *path = vn_xasprintf("%s/selftests.json", final), *parent = NULL, *bad = NULL;
	struct json_object *o;
	struct vn_selftests *t = NULL;

	if (access(final, F_OK) != 0)
		return -ENOENT;
	if ((o = json_object_from_file(path)) && json_object_is_type(o, json_type_object))
		t = load(final, o);
	json_object_put(o);
	if (t && strcmp(t->key, key) == 0) {
		*out = t;
		return 0;
	}
	vn_selftests_free(t);
	/* Torn or another key's: kept aside to look at, and built again. */
	parent = vn_xstrdup(final);
	*strrchr(parent, '/') = '\0';
	bad = vn_xasprintf("%s/.bad", parent);
	mkdir(bad, 0755);
	free(bad);
	bad = vn_xasprintf("%s/.bad/%s-%lld-%d", parent, strrchr(final, '/') + 1, (long long)time(NULL), (int)getpid());
	if (rename(final, bad) < 0)
		vn_rm_rf(final);
	return -ENOENT;
}

static int sync_path(const char *path)
{
	_cleanup_close_ int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	return fsync(fd) < 0 && errno != EINVAL ? -errno : 0;
}

static int write_json(const struct vn_selftests *t, const char *path)
{
	struct json_object *o = json_object_new_object(), *a = json_object_new_array();

	json_object_object_add(o, "key", json_object_new_string(t->key));
	json_object_object_add(o, "source_id", json_object_new_string(t->source_id));
	json_object_object_add(o, "tree", json_object_new_string(t->tree ? t->tree : ""));
	json_object_object_add(o, "arch", json_object_new_string(vn_arch_name(t->arch)));
	json_object_object_add(o, "subdir", json_object_new_string(t->subdir));
	for (size_t i = 0; i < t->ntests; i++)
		json_object_array_add(a, json_object_new_string(t->tests[i]));
	json_object_object_add(o, "tests", a);
	json_object_object_add(o, "build_s", json_object_new_double(t->build_s));
	json_object_object_add(o, "built_at", json_object_new_int64((int64_t)time(NULL)));
	int rc = json_object_to_file_ext(path, o, JSON_C_TO_STRING_PRETTY | JSON_C_TO_STRING_NOSLASHESCAPE) < 0 ? -EIO
														: 0;
	json_object_put(o);
	return rc;
}

int vn_selftests_cache_install(const struct vn_selftests *t, const char *staging, const char *final,
			       struct vn_error *err)
{
	char p[PATH_MAX];
	int rc;

	snprintf(p, sizeof(p), "%s/selftests.json", staging);
	if ((rc = write_json(t, p)) < 0)
		return vn_infra_error(err, rc, "writing %s", p);
	/* On the disk before the entry appears: a crash must not leave a whole-looking folder of empty files. */
	for (size_t i = 0; i < t->ntests; i++) {
		snprintf(p, sizeof(p), "%s/%s/%s", staging, t->subdir, t->tests[i]);
		if ((rc = sync_path(p)) < 0)
			return vn_infra_error(err, rc, "fsync %s: %s", p, strerror(-rc));
	}
	const char *const rest[] = {"selftests.json", "build.log", t->subdir, "."};
	for (size_t i = 0; i < VN_ARRAY_SIZE(rest); i++) {
		snprintf(p, sizeof(p), "%s/%s", staging, rest[i]);
		if ((rc = sync_path(p)) < 0 && rc != -ENOENT)
			return vn_infra_error(err, rc, "fsync %s: %s", p, strerror(-rc));
	}
	if (rename(staging, final) < 0) {
		/* Someone else installed the same key meanwhile: theirs is as good. */
		if (errno != ENOTEMPTY && errno != EEXIST)
			return vn_infra_error(err, -errno, "rename %s: %s", staging, strerror(errno));
		vn_rm_rf(staging);
	}
	snprintf(p, sizeof(p), "%s/..", final);
	sync_path(p);
	return 0;
}

void vn_selftests_free(struct vn_selftests *t)
{
	if (!t)
		return;
	vn_free_all(t->dir, t->subdir, t->key, t->source_id, t->tree);
	vn_strv_free_n(t->tests, t->ntests);
	free(t);
}
