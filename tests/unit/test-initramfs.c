#include <archive.h>
#include <archive_entry.h>
#include <dirent.h>
#include <errno.h>
#include <ftw.h>
#include <limits.h>
#include <setjmp.h>
#include <stdbool.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "guest/initramfs.h"
#include "util/cleanup.h"
#include "util/sha256.h"

static char *sha_hex(const void *data, size_t len, size_t split)
{
	struct vn_sha256 c;
	uint8_t d[VN_SHA256_LEN];
	static char hex[VN_SHA256_HEX_LEN + 1];

	vn_sha256_init(&c);
	/* Feeding in two pieces exercises the partial-block path. */
	vn_sha256_update(&c, data, split);
	vn_sha256_update(&c, (const char *)data + split, len - split);
	vn_sha256_final(&c, d);
	return vn_sha256_hex(d, hex);
}

static void test_sha256_vectors(void **state)
{
	const char *abc = "abc";
	const char *two = "abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq";

	assert_string_equal(sha_hex("", 0, 0), "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
	assert_string_equal(sha_hex(abc, 3, 1), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
	for (size_t split = 0; split <= strlen(two); split += 7)
		assert_string_equal(sha_hex(two, strlen(two), split),
				    "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");

	size_t n = 1000000;
	char *a = malloc(n);
	assert_non_null(a);
	memset(a, 'a', n);
	assert_string_equal(sha_hex(a, n, 63), "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
	free(a);
}

static void test_sha256_file(void **state)
{
	char path[] = "/tmp/vn-sha-XXXXXX";
	int fd = mkstemp(path);
	uint8_t d[VN_SHA256_LEN];
	char hex[VN_SHA256_HEX_LEN + 1];
	struct vn_error err = {0};

	assert_true(fd >= 0);
	assert_int_equal(write(fd, "abc", 3), 3);
	close(fd);
	assert_int_equal(vn_sha256_file(path, d, &err), 0);
	assert_string_equal(vn_sha256_hex(d, hex), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
	unlink(path);
	assert_true(vn_sha256_file(path, d, &err) < 0);
	assert_non_null(strstr(err.msg, path));
	vn_error_clear(&err);
}

/* ---- image tests ---- */

struct fixture {
	char dir[64]; /* temp root: cache/ and inputs */
	char cache[96];
	char agent[96];
	char release[256];
	char moddir[PATH_MAX];
};

static int rm_cb(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	return remove(path);
}

/* The modules of an installed kernel: the running one if present, else any. */
static bool find_release(char *out, size_t len)
{
	struct utsname u;
	char path[PATH_MAX];

	if (uname(&u) == 0) {
		snprintf(path, sizeof(path), "/lib/modules/%s/modules.dep", u.release);
		if (access(path, R_OK) == 0) {
			snprintf(out, len, "%s", u.release);
			return true;
		}
	}
	DIR *d = opendir("/lib/modules");
	if (!d)
		return false;
	bool found = false;
	for (struct dirent *de; !found && (de = readdir(d));) {
		if (de->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "/lib/modules/%s/modules.dep", de->d_name);
		if (access(path, R_OK) == 0) {
			snprintf(out, len, "%s", de->d_name);
			found = true;
		}
	}
	closedir(d);
	return found;
}

static void write_text(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");
	assert_non_null(f);
	fputs(text, f);
	fclose(f);
	chmod(path, 0755);
}

static int setup(void **state)
{
	struct fixture *fx = calloc(1, sizeof(*fx));

	if (!fx)
		return -1;
	snprintf(fx->dir, sizeof(fx->dir), "/tmp/vn-initramfs-XXXXXX");
	if (!mkdtemp(fx->dir))
		return -1;
	snprintf(fx->cache, sizeof(fx->cache), "%s/cache", fx->dir);
	snprintf(fx->agent, sizeof(fx->agent), "%s/agent", fx->dir);
	write_text(fx->agent, "#!/bin/sh\nexec sleep 3600\n");
	if (find_release(fx->release, sizeof(fx->release)))
		snprintf(fx->moddir, sizeof(fx->moddir), "/lib/modules/%s", fx->release);
	*state = fx;
	return 0;
}

static int teardown(void **state)
{
	struct fixture *fx = *state;

	nftw(fx->dir, rm_cb, 16, FTW_DEPTH | FTW_PHYS);
	free(fx);
	return 0;
}

static bool have_host_inputs(const struct fixture *fx)
{
	if (!fx->release[0]) {
		print_message("skipped: no /lib/modules/*/modules.dep (linux-image-amd64)\n");
		return false;
	}
	if (access("/bin/busybox", X_OK) || access("/usr/bin/numactl", X_OK)) {
		print_message("skipped: needs busybox-static and numactl\n");
		return false;
	}
	return true;
}

struct item {
	char *path;
	mode_t mode;
	char *symlink;
	char *data; /* small files only */
};

struct image {
	struct item v[4096];
	size_t n;
};

static void image_free(struct image *img)
{
	for (size_t i = 0; i < img->n; i++) {
		free(img->v[i].path);
		free(img->v[i].symlink);
		free(img->v[i].data);
	}
	free(img);
}

static struct image *image_read(const char *path)
{
	struct image *img = calloc(1, sizeof(*img));
	struct archive *a = archive_read_new();
	struct archive_entry *e;

	assert_non_null(img);
	archive_read_support_filter_all(a);
	archive_read_support_format_all(a);
	assert_int_equal(archive_read_open_filename(a, path, 65536), ARCHIVE_OK);
	while (archive_read_next_header(a, &e) == ARCHIVE_OK) {
		assert_true(img->n < VN_ARRAY_SIZE(img->v));
		struct item *it = &img->v[img->n++];
		it->path = strdup(archive_entry_pathname(e));
		it->mode = archive_entry_mode(e);
		if (archive_entry_symlink(e))
			it->symlink = strdup(archive_entry_symlink(e));
		la_int64_t size = archive_entry_size(e);
		if (S_ISREG(it->mode) && size < 65536) {
			it->data = calloc(1, (size_t)size + 1);
			assert_int_equal(archive_read_data(a, it->data, (size_t)size), size);
		}
	}
	archive_read_free(a);
	return img;
}

static struct item *image_get(struct image *img, const char *path)
{
	for (size_t i = 0; i < img->n; i++)
		if (strcmp(img->v[i].path, path) == 0)
			return &img->v[i];
	return NULL;
}

static void assert_present(struct image *img, const char *path)
{
	if (!image_get(img, path))
		fail_msg("%s missing from the image", path);
}

/* The host's modules.dep dependencies of REL, as a space-separated string. */
static char *host_deps(const char *moddir, const char *rel)
{
	char path[PATH_MAX + 16], *line = NULL, *out = NULL;
	size_t cap = 0;
	snprintf(path, sizeof(path), "%s/modules.dep", moddir);
	FILE *f = fopen(path, "r");
	assert_non_null(f);
	while (getline(&line, &cap, f) > 0) {
		char *colon = strchr(line, ':');
		if (colon && (size_t)(colon - line) == strlen(rel) && strncmp(line, rel, strlen(rel)) == 0) {
			line[strcspn(line, "\n")] = '\0';
			out = strdup(colon + 1);
			break;
		}
	}
	free(line);
	fclose(f);
	assert_non_null(out);
	return out;
}

static double now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

static void test_build_image(void **state)
{
	struct fixture *fx = *state;
	char extra[256];
	const char *modules[] = {"virtio_pci", "virtio-console", NULL};
	const char *extras[] = {extra, NULL};
	struct vn_initramfs_spec spec = {
		.kernel_release = fx->release,
		.modules = modules,
		.extra_files = extras,
	};
	struct vn_error err = {0};
	_cleanup_free_ char *path = NULL, *again = NULL, *changed = NULL;

	if (!have_host_inputs(fx))
		skip();
	snprintf(extra, sizeof(extra), "%s:" VN_INITRAMFS_AGENT_PATH, fx->agent);

	double t0 = now();
	int r = vn_initramfs_build(&spec, fx->cache, &path, &err);
	if (r < 0)
		fail_msg("%s", err.msg);
	double t1 = now();
	struct stat st1, st2;
	assert_int_equal(stat(path, &st1), 0);
	print_message("cold build %.3f s, %lld bytes: %s\n", t1 - t0, (long long)st1.st_size, path);

	struct image *img = image_read(path);
	struct item *init = image_get(img, "init");
	assert_non_null(init);
	assert_true(S_ISREG(init->mode) && (init->mode & 0111));
	assert_non_null(strstr(init->data, "vnuma-init: modules loaded"));
	struct item *bb = image_get(img, "bin/busybox");
	assert_non_null(bb);
	assert_true(S_ISREG(bb->mode) && (bb->mode & 0111));
	struct item *sh = image_get(img, "bin/sh");
	assert_non_null(sh);
	assert_string_equal(sh->symlink, "busybox");
	assert_present(img, "bin/cttyhack");
	assert_present(img, "usr/bin/numactl");
	assert_present(img, "usr/bin/numastat");
	assert_present(img, "usr/bin/vnuma-agent");
	assert_present(img, "lib64/ld-linux-x86-64.so.2");
	assert_present(img, "lib/x86_64-linux-gnu/libnuma.so.1");
	assert_present(img, "lib/x86_64-linux-gnu/libc.so.6");
	assert_present(img, "etc/passwd");
	assert_present(img, "proc");
	assert_present(img, "dev/console");
	/* Parents precede children, or the kernel's unpacker drops the child. */
	for (size_t i = 0; i < img->n; i++) {
		char parent[PATH_MAX];
		snprintf(parent, sizeof(parent), "%s", img->v[i].path);
		char *slash = strrchr(parent, '/');
		if (!slash)
			continue;
		*slash = '\0';
		bool seen = false;
		for (size_t j = 0; j < i && !seen; j++)
			seen = strcmp(img->v[j].path, parent) == 0 && S_ISDIR(img->v[j].mode);
		if (!seen)
			fail_msg("%s comes before its directory", img->v[i].path);
	}

	/* The order file: every module's dependencies come before it, all present. */
	struct item *order = image_get(img, "etc/vnuma/modules");
	assert_non_null(order);
	char prefix[512];
	snprintf(prefix, sizeof(prefix), "/lib/modules/%s/", fx->release);
	char *list = strdup(order->data), *save = NULL;
	char *done[64];
	size_t n_done = 0;
	bool saw_pci = false, saw_console = false, saw_virtio = false;
	for (char *m = strtok_r(list, "\n", &save); m; m = strtok_r(NULL, "\n", &save)) {
		assert_int_equal(strncmp(m, prefix, strlen(prefix)), 0);
		const char *rel = m + strlen(prefix);
		assert_present(img, m + 1);
		char *deps = host_deps(fx->moddir, rel), *s2 = NULL;
		for (char *d = strtok_r(deps, " ", &s2); d; d = strtok_r(NULL, " ", &s2)) {
			bool before = false;
			for (size_t j = 0; j < n_done; j++)
				before |= strcmp(done[j], d) == 0;
			if (!before)
				fail_msg("%s is listed before its dependency %s", rel, d);
		}
		free(deps);
		saw_pci |= strstr(rel, "/virtio_pci.ko") != NULL;
		saw_console |= strstr(rel, "/virtio_console.ko") != NULL;
		saw_virtio |= strstr(rel, "/virtio.ko") != NULL;
		assert_true(n_done < VN_ARRAY_SIZE(done));
		done[n_done++] = strdup(rel);
	}
	for (size_t j = 0; j < n_done; j++)
		free(done[j]);
	free(list);
	/* Debian has them as modules; another kernel may build them in. */
	if (strstr(fx->release, "amd64"))
		assert_true(saw_pci && saw_console && saw_virtio);
	image_free(img);

	/* Unchanged inputs: same path, file untouched, and fast. */
	t0 = now();
	r = vn_initramfs_build(&spec, fx->cache, &again, &err);
	t1 = now();
	assert_int_equal(r, 0);
	print_message("cached build %.3f s\n", t1 - t0);
	assert_string_equal(path, again);
	assert_int_equal(stat(again, &st2), 0);
	assert_int_equal(st1.st_ino, st2.st_ino);
	assert_true(st1.st_mtim.tv_sec == st2.st_mtim.tv_sec && st1.st_mtim.tv_nsec == st2.st_mtim.tv_nsec);
	assert_true(t1 - t0 < 1.0);

	/* Changed extra file content: a new image. */
	write_text(fx->agent, "#!/bin/sh\nexec sleep 7200\n");
	r = vn_initramfs_build(&spec, fx->cache, &changed, &err);
	if (r < 0)
		fail_msg("%s", err.msg);
	assert_string_not_equal(path, changed);
	assert_int_equal(access(path, F_OK), 0);

	/* No temp files left behind. */
	DIR *d = opendir(fx->cache);
	int files = 0;
	for (struct dirent *de; (de = readdir(d));) {
		if (de->d_name[0] == '.' && (de->d_name[1] == '\0' || de->d_name[1] == '.'))
			continue;
		if (strcmp(de->d_name, "digests") == 0) /* the inputs' digests, remembered (util/sha256.h) */
			continue;
		assert_int_equal(strncmp(de->d_name, "initramfs-", 10), 0);
		files++;
	}
	closedir(d);
	assert_int_equal(files, 2);
}

static void test_no_modules(void **state)
{
	struct fixture *fx = *state;
	struct vn_initramfs_spec spec = {0};
	struct vn_error err = {0};
	_cleanup_free_ char *path = NULL;

	if (access("/bin/busybox", X_OK) || access("/usr/bin/numactl", X_OK))
		skip();
	int r = vn_initramfs_build(&spec, fx->cache, &path, &err);
	if (r < 0)
		fail_msg("%s", err.msg);
	struct image *img = image_read(path);
	struct item *order = image_get(img, "etc/vnuma/modules");
	assert_non_null(order);
	assert_string_equal(order->data, "");
	image_free(img);
}

static void expect_error(const struct fixture *fx, const struct vn_initramfs_spec *spec, enum vn_error_kind kind,
			 const char *needle1, const char *needle2)
{
	struct vn_error err = {0};
	char *path = NULL;

	assert_true(vn_initramfs_build(spec, fx->cache, &path, &err) < 0);
	assert_null(path);
	assert_int_equal(err.kind, kind);
	if (!strstr(err.msg, needle1) || (needle2 && !strstr(err.msg, needle2)))
		fail_msg("unexpected message: %s", err.msg);
	vn_error_clear(&err);
}

static void test_errors(void **state)
{
	struct fixture *fx = *state;
	const char *bad_module[] = {"no_such_module_xyz", NULL};
	const char *bad_extra[] = {"no-colon-here", NULL};
	const char *rel_extra[] = {"/bin/true:usr/bin/x", NULL};
	const char *missing_extra[] = {"/nonexistent/agent:/usr/bin/vnuma-agent", NULL};
	const char *dup_extra[2] = {NULL, NULL};
	char dup[256];

	if (!have_host_inputs(fx))
		skip();

	struct vn_initramfs_spec spec = {.busybox = "/nonexistent/busybox"};
	expect_error(fx, &spec, VN_ERR_INFRA, "/nonexistent/busybox", "busybox-static");
	spec.busybox = "/usr/bin/numactl"; /* dynamically linked */
	expect_error(fx, &spec, VN_ERR_INFRA, "statically linked", "busybox-static");

	spec = (struct vn_initramfs_spec){.kernel_release = fx->release, .modules = bad_module};
	char dep[PATH_MAX + 16];
	snprintf(dep, sizeof(dep), "%s/modules.dep", fx->moddir);
	expect_error(fx, &spec, VN_ERR_INPUT, "no_such_module_xyz", dep);
	spec.kernel_release = "0.0-no-such-kernel";
	expect_error(fx, &spec, VN_ERR_INFRA, "/lib/modules/0.0-no-such-kernel/modules.dep", "linux-image-");
	spec.kernel_release = NULL;
	expect_error(fx, &spec, VN_ERR_INPUT, "no kernel release", NULL);

	spec = (struct vn_initramfs_spec){.extra_files = bad_extra};
	expect_error(fx, &spec, VN_ERR_INPUT, "no-colon-here", NULL);
	spec.extra_files = rel_extra;
	expect_error(fx, &spec, VN_ERR_INPUT, "usr/bin/x", NULL);
	const char *dotdot_extra[] = {"/bin/true:/usr/bin/..", NULL};
	spec.extra_files = dotdot_extra;
	expect_error(fx, &spec, VN_ERR_INPUT, "plain absolute path", NULL);
	spec.extra_files = missing_extra;
	expect_error(fx, &spec, VN_ERR_INFRA, "/nonexistent/agent", NULL);
	snprintf(dup, sizeof(dup), "%s:/init", fx->agent);
	dup_extra[0] = dup;
	spec.extra_files = dup_extra;
	expect_error(fx, &spec, VN_ERR_INPUT, "already in the image", NULL);

	/* Nothing half-written stays in the cache. */
	DIR *d = opendir(fx->cache);
	if (d) {
		for (struct dirent *de; (de = readdir(d));)
			if (strncmp(de->d_name, ".initramfs-", 11) == 0)
				fail_msg("temp file %s left behind", de->d_name);
		closedir(d);
	}
}

/* A dynamically linked extra file brings its libraries; a dir target keeps the name. */
static void test_extra_program(void **state)
{
	struct fixture *fx = *state;
	const char *extras[] = {"/usr/bin/numactl:" VN_INITRAMFS_WORKLOAD_DIR "/", NULL};
	struct vn_initramfs_spec spec = {.extra_files = extras};
	struct vn_error err = {0};
	_cleanup_free_ char *path = NULL;

	if (!have_host_inputs(fx))
		skip();
	int r = vn_initramfs_build(&spec, fx->cache, &path, &err);
	if (r < 0)
		fail_msg("%s", err.msg);
	struct image *img = image_read(path);
	struct item *w = image_get(img, "usr/lib/vnuma/numactl");
	assert_non_null(w);
	assert_true(S_ISREG(w->mode));
	/* The second copy of numactl is an alias of the first, not a new file. */
	struct item *n = image_get(img, "usr/bin/numactl");
	assert_non_null(n);
	assert_non_null(n->symlink);
	assert_string_equal(n->symlink, "/usr/lib/vnuma/numactl");
	image_free(img);
}

/* What the kernel's own tests need of the userland (issue 46): accounts, numactl's tools, df, modprobe's tree. */
static void test_test_userland(void **state)
{
	struct fixture *fx = *state;
	const char *modules[] = {"virtio_pci", NULL};
	const char *share[] = {VN_INITRAMFS_SHARE_MODULES, NULL};
	struct vn_initramfs_spec spec = {.kernel_release = fx->release, .modules = modules, .share_modules = share};
	struct vn_error err = {0};
	_cleanup_free_ char *path = NULL;
	char p[512];

	if (!have_host_inputs(fx) || access("/usr/bin/memhog", X_OK))
		skip();
	if (vn_initramfs_build(&spec, fx->cache, &path, &err) < 0)
		fail_msg("%s", err.msg);
	struct image *img = image_read(path);
	struct item *pw = image_get(img, "etc/passwd"), *gr = image_get(img, "etc/group");
	assert_non_null(strstr(pw->data, "\nnobody:x:65534:65534:"));
	assert_non_null(strstr(gr->data, "\nnogroup:x:65534:"));
	struct item *mtab = image_get(img, "etc/mtab");
	assert_non_null(mtab);
	assert_string_equal(mtab->symlink, "/proc/mounts");
	assert_present(img, "usr/bin/memhog");
	assert_present(img, "usr/bin/migratepages");
	assert_present(img, "usr/bin/migspeed");
	/* The tree is mounted by a script the host runs, not by modprobe (busybox sh runs the applet, never a script). */
	assert_null(image_get(img, "sbin/modprobe"));
	struct item *mp = image_get(img, VN_INITRAMFS_MODULES_MOUNT + 1);
	assert_non_null(mp);
	assert_true(S_ISREG(mp->mode) && (mp->mode & 0111));
	assert_non_null(strstr(mp->data, "vnuma-modules"));
	/* No index promising modules the image lacks: they come with the tree. */
	snprintf(p, sizeof(p), "lib/modules/%s/modules.dep", fx->release);
	assert_null(image_get(img, p));
	if (strstr(fx->release, "amd64")) {
		assert_present(img, "etc/vnuma/modules.devname");
		struct item *sh = image_get(img, "etc/vnuma/modules-share");
		assert_non_null(sh);
		assert_non_null(strstr(sh->data, "/9pnet_virtio.ko\n"));
		assert_non_null(strstr(sh->data, "/9p.ko\n"));
		snprintf(p, sizeof(p), "lib/modules/%s/kernel/fs/9p/9p.ko", fx->release);
		assert_present(img, p);
		/* In the image, not loaded at boot. */
		assert_null(strstr(image_get(img, "etc/vnuma/modules")->data, "9p"));
	}
	image_free(img);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_sha256_vectors),
		cmocka_unit_test(test_sha256_file),
		cmocka_unit_test_setup_teardown(test_build_image, setup, teardown),
		cmocka_unit_test_setup_teardown(test_no_modules, setup, teardown),
		cmocka_unit_test_setup_teardown(test_errors, setup, teardown),
		cmocka_unit_test_setup_teardown(test_extra_program, setup, teardown),
		cmocka_unit_test_setup_teardown(test_test_userland, setup, teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
