#include "testbed/arch-root.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "util/alloc.h"
#include "util/cleanup.h"
#include "util/dir.h"
#include "util/spawn.h"
#include "util/strbuf.h"

/* Marks a root whose every package unpacked (a failed fetch leaves none). */
#define ROOT_DONE ".vnuma-complete"

static int apt_failed(enum vn_arch a, const char *what, const char *out, struct vn_error *err)
{
	const struct vn_arch_info *ai = vn_arch_info(a);

	return vn_infra_error(err, -ENOENT,
			      "%s for %s failed (%.300s); Debian's %s packages are needed: run scripts/setup.sh "
			      "--arches, or: dpkg --add-architecture %s && apt-get update",
			      what, ai->name, out ? out : "", ai->deb, ai->deb);
}

/* linux-image-FLAVOUR is a metapackage: the kernel is the package it depends on. */
static int kernel_package(enum vn_arch a, char **pkg, struct vn_error *err)
{
	const struct vn_arch_info *ai = vn_arch_info(a);
	_cleanup_free_ char *meta = vn_xasprintf("linux-image-%s:%s", ai->flavour, ai->deb);
	_cleanup_strbuf_ struct vn_strbuf out = VN_STRBUF_INIT;
	struct vn_spawn_opts so = VN_SPAWN_OPTS_INIT;
	const char *argv[] = {"apt-cache", "depends", "--important", meta, NULL};
	int rc;

	so.capture = &out;
	if ((rc = vn_spawn_run(argv, &so, err)) < 0)
		return rc;
	if (rc != 0)
		return apt_failed(a, "apt-cache depends", out.s, err);
	for (char *save = NULL, *l = strtok_r(out.s ? out.s : (char[]){0}, "\n", &save); l;
	     l = strtok_r(NULL, "\n", &save)) {
		char *p = strstr(l, "Depends: linux-image-");
		if (!p)
			continue;
		p += strlen("Depends: ");
		p[strcspn(p, ": \t<>")] = '\0';
		*pkg = vn_xasprintf("%s:%s", p, ai->deb);
		return 0;
	}
	return apt_failed(a, "finding the kernel package behind linux-image", meta, err);
}

static int unpack_all(const char *dl, const char *root, struct vn_error *err)
{
	DIR *d = opendir(dl);
	int rc = 0;

	if (!d)
		return vn_infra_error(err, -errno, "%s: %s", dl, strerror(errno));
	for (struct dirent *e; rc == 0 && (e = readdir(d));) {
		size_t n = strlen(e->d_name);
		if (n < 5 || strcmp(e->d_name + n - 4, ".deb") != 0)
			continue;
		_cleanup_free_ char *deb = vn_xasprintf("%s/%s", dl, e->d_name);
		const char *argv[] = {"dpkg-deb", "-x", deb, root, NULL};
		if ((rc = vn_spawn_run(argv, NULL, err)) > 0)
			rc = vn_infra_error(err, -EIO, "dpkg-deb -x %s failed (exit %d)", deb, rc);
	}
	closedir(d);
	return rc;
}

/* libkmod reads depmod's indexes, which a package's postinst would have made. */
static int run_depmod(const char *root, struct vn_error *err)
{
	_cleanup_free_ char *mods = vn_xasprintf("%s/lib/modules", root);
	DIR *d = opendir(mods);
	int rc = 0;

	if (!d)
		return vn_infra_error(err, -ENOENT, "the kernel package brought no %s", mods);
	for (struct dirent *e; rc == 0 && (e = readdir(d));) {
		if (e->d_name[0] == '.')
			continue;
		const char *argv[] = {"depmod", "-b", root, e->d_name, NULL};
		if ((rc = vn_spawn_run(argv, NULL, err)) > 0)
			rc = vn_infra_error(err, -EIO, "depmod -b %s %s failed (exit %d)", root, e->d_name, rc);
	}
	closedir(d);
	return rc;
}

static int fetch(enum vn_arch a, const char *dl, const char *root, struct vn_error *err)
{
	static const char *const pkgs[] = {VN_ARCH_ROOT_PACKAGES};
	const struct vn_arch_info *ai = vn_arch_info(a);
	_cleanup_free_ char *kpkg = NULL;
	_cleanup_strbuf_ struct vn_strbuf out = VN_STRBUF_INIT;
	struct vn_spawn_opts so = VN_SPAWN_OPTS_INIT;
	const char *argv[5 + VN_ARRAY_SIZE(pkgs)] = {"apt-get", "download", "-q"}; /* NULL-terminated */
	char *names[VN_ARRAY_SIZE(pkgs)] = {0};
	int rc;

	if ((rc = kernel_package(a, &kpkg, err)) < 0)
		return rc;
	argv[3] = kpkg;
	for (size_t i = 0; i < VN_ARRAY_SIZE(pkgs); i++)
		argv[4 + i] = names[i] = vn_xasprintf("%s:%s", pkgs[i], ai->deb);
	so.cwd = dl;
	so.capture = &out;
	rc = vn_spawn_run(argv, &so, err);
	for (size_t i = 0; i < VN_ARRAY_SIZE(pkgs); i++)
		free(names[i]);
	if (rc > 0)
		return apt_failed(a, "apt-get download", out.s, err);
	if (rc < 0 || (rc = unpack_all(dl, root, err)) < 0 || (rc = run_depmod(root, err)) < 0)
		return rc;
	return 0;
}

/*
 * Fetch into a fresh dir beside the root, marked complete there, and renamed
 * into place whole: the rename alone publishes a root, so a reader never
 * sees one half-unpacked or being replaced.
 */
static int fetch_publish(enum vn_arch a, const char *base, const char *dir, struct vn_error *err)
{
	_cleanup_free_ char *tmpl = vn_xasprintf("%s/tmp-XXXXXX", base);
	int rc;

	if (!mkdtemp(tmpl))
		return vn_infra_error(err, -errno, "%s: %s", tmpl, strerror(errno));
	_cleanup_free_ char *dl = vn_xasprintf("%s/debs", tmpl), *troot = vn_xasprintf("%s/root", tmpl);
	_cleanup_free_ char *tdone = vn_xasprintf("%s/" ROOT_DONE, troot);
	if ((rc = vn_mkdir_p(dl, 0755, err)) == 0 && (rc = vn_mkdir_p(troot, 0755, err)) == 0 &&
	    (rc = fetch(a, dl, troot, err)) == 0) {
		int fd = creat(tdone, 0644);
		vn_rm_rf(dir); /* an older layout's, without its marker: we hold the lock */
		if (fd < 0 || rename(troot, dir) < 0)
			rc = vn_infra_error(err, -errno, "%s: %s", dir, strerror(errno));
		if (fd >= 0)
			close(fd);
	}
	vn_rm_rf(tmpl);
	return rc;
}

int vn_testbed_arch_root(enum vn_arch a, const char *cache_dir, char **root, struct vn_error *err)
{
	_cleanup_free_ char *base = vn_xasprintf("%s/arches/%s", cache_dir, vn_arch_name(a));
	_cleanup_free_ char *dir = vn_xasprintf("%s/root", base);
	_cleanup_free_ char *done = vn_xasprintf("%s/" ROOT_DONE, dir);
	_cleanup_free_ char *lock = vn_xasprintf("%s/lock", base);
	int rc;

	if (access(done, F_OK) == 0) {
		*root = steal_pointer(&dir);
		return 0;
	}
	/* Runs that start together fetch once: the others wait here, then find the root made. */
	if ((rc = vn_mkdir_p(base, 0755, err)) < 0)
		return rc;
	_cleanup_close_ int lfd = open(lock, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0644);
	if (lfd < 0 || flock(lfd, LOCK_EX) < 0)
		return vn_infra_error(err, -errno, "%s: %s", lock, strerror(errno));
	if (access(done, F_OK) != 0 && (rc = fetch_publish(a, base, dir, err)) < 0)
		return vn_error_prefix(err, "fetching Debian's %s kernel and busybox", vn_arch_name(a));
	*root = steal_pointer(&dir);
	return 0;
}
