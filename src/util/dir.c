#include "util/dir.h"

#include <errno.h>
#include <fcntl.h>
#include <fts.h>
#include <dirent.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "util/alloc.h"
#include "util/cleanup.h"

static int mkdir_one(const char *dir, mode_t mode, struct vn_error *err)
{
	struct stat st;

	if (mkdir(dir, mode) == 0)
		return 0;
	int e = errno;
	/* EEXIST alone is not enough: a file in the way is an error. */
	if (e == EEXIST && stat(dir, &st) == 0 && S_ISDIR(st.st_mode))
		return 0;
	if (e == EEXIST)
		e = ENOTDIR;
	return vn_infra_error(err, -e, "cannot create %s: %s", dir, strerror(e));
}

int vn_mkdir_p(const char *path, mode_t mode, struct vn_error *err)
{
	_cleanup_free_ char *buf = vn_xstrdup(path);
	int rc;

	if (!*buf)
		return vn_infra_error(err, -ENOENT, "cannot create a directory with an empty name");
	for (char *s = buf + 1; *s; s++) {
		if (*s != '/' || s[-1] == '/')
			continue;
		*s = '\0';
		rc = mkdir_one(buf, mode, err);
		*s = '/';
		if (rc < 0)
			return rc;
	}
	return mkdir_one(buf, mode, err);
}

VN_DEFINE_CLEANUP(DIR *, closedir);

static int rm_entry(int dfd, const char *name, dev_t dev);

/*
 * Empties the directory open at fd (taken), entry by entry relative to it:
 * no path is resolved again, so a directory swapped for a symlink meanwhile
 * is not followed. Goes on past a failure; returns the first.
 */
static int rm_children(int fd, dev_t dev)
{
	_cleanup_(closedirp) DIR *d = fdopendir(fd);
	struct dirent *de;
	int rc = 0, r;

	if (!d) {
		rc = -errno;
		close(fd);
		return rc;
	}
	while ((errno = 0, de = readdir(d))) {
		if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
			continue;
		if ((r = rm_entry(dirfd(d), de->d_name, dev)) < 0 && !rc)
			rc = r;
	}
	if (errno && !rc)
		rc = -errno;
	return rc;
}

static int rm_entry(int dfd, const char *name, dev_t dev)
{
	struct stat st;
	int rc;

	if (fstatat(dfd, name, &st, AT_SYMLINK_NOFOLLOW) < 0)
		return errno == ENOENT ? 0 : -errno;
	if (!S_ISDIR(st.st_mode))
		return unlinkat(dfd, name, 0) < 0 && errno != ENOENT ? -errno : 0;
	/* Another file system mounted here stays, and so does its mount point (the parent's rmdir fails). */
	if (st.st_dev != dev)
		return 0;
	int fd = openat(dfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
	if (fd < 0 && (errno == ELOOP || errno == ENOTDIR)) /* no longer a directory: removed as what it is now */
		return unlinkat(dfd, name, 0) < 0 && errno != ENOENT ? -errno : 0;
	if (fd < 0)
		return errno == ENOENT ? 0 : -errno;
	if (fstat(fd, &st) < 0 || st.st_dev != dev) {
		close(fd);
		return 0;
	}
	rc = rm_children(fd, dev);
	if (unlinkat(dfd, name, AT_REMOVEDIR) < 0 && errno != ENOENT && !rc)
		rc = -errno;
	return rc;
}

int vn_rm_rf(const char *path)
{
	_cleanup_free_ char *buf = vn_xstrdup(path);
	size_t len = strlen(buf);
	struct stat st;

	if (lstat(path, &st) < 0)
		return errno == ENOENT ? 0 : -errno;
	if (!S_ISDIR(st.st_mode))
		return unlink(path) < 0 && errno != ENOENT ? -errno : 0;
	/* The path up to its last component is the caller's; below it, only file descriptors. */
	while (len > 1 && buf[len - 1] == '/')
		buf[--len] = '\0';
	char *slash = strrchr(buf, '/');
	const char *name = slash ? slash + 1 : buf;
	if (!strcmp(name, ".") || !strcmp(name, "..") || !*name)
		return -EINVAL;
	const char *parent = !slash ? "." : slash == buf ? "/" : buf;
	if (slash && slash != buf)
		*slash = '\0';
	_cleanup_close_ int pfd = open(parent, O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_PATH);
	if (pfd < 0)
		return -errno;
	return rm_entry(pfd, name, st.st_dev);
}

/* One component beneath fd: a directory, never through a symlink (-ELOOP), made when create and missing. */
static int beneath_one(int fd, const char *shown, const char *name, bool create, mode_t mode, struct vn_error *err)
{
	struct stat st;

	for (int tries = 0; tries < 2; tries++) {
		int nfd = openat(fd, name, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		if (nfd >= 0)
			return nfd;
		int e = errno;
		if (e == ENOENT && create && mkdirat(fd, name, mode) < 0 && errno != EEXIST)
			e = errno;
		else if (e == ENOENT && create)
			continue;
		if (fstatat(fd, name, &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISLNK(st.st_mode))
			return vn_error_set(err, VN_ERR_INPUT, -ELOOP, "%s is a symlink, not followed", shown);
		return vn_error_set(err, e == ENOENT || e == ENOTDIR ? VN_ERR_INPUT : VN_ERR_INFRA, -e, "%s: %s", shown,
				    e == ENOTDIR ? "not a directory" : strerror(e));
	}
	return vn_infra_error(err, -EAGAIN, "%s: created, then gone", shown);
}

int vn_dir_beneath(int dirfd, const char *dir, const char *rel, bool create, mode_t mode, struct vn_error *err)
{
	_cleanup_free_ char *buf = vn_xstrdup(rel);
	_cleanup_free_ char *shown = vn_xstrdup(dir);
	char *save = NULL;
	int fd = openat(dirfd, ".", O_PATH | O_DIRECTORY | O_CLOEXEC);

	if (fd < 0)
		return vn_infra_error(err, -errno, "%s: %s", dir, strerror(errno));
	for (char *c = strtok_r(buf, "/", &save); c; c = strtok_r(NULL, "/", &save)) {
		if (!strcmp(c, "."))
			continue;
		char *next = vn_xasprintf("%s/%s", shown, c);
		free(shown);
		shown = next;
		int nfd = strcmp(c, "..") ? beneath_one(fd, shown, c, create, mode, err)
					  : vn_input_error(err, "%s: '..' does not stay beneath %s", shown, dir);
		close(fd);
		if (nfd < 0)
			return nfd;
		fd = nfd;
	}
	return fd;
}

bool vn_path_has_symlink(const char *dir, const char *rel)
{
	_cleanup_close_ int dfd = open(dir, O_PATH | O_DIRECTORY | O_CLOEXEC);
	int fd = dfd < 0 ? -errno : vn_dir_beneath(dfd, dir, rel, false, 0, NULL);

	if (fd >= 0)
		close(fd);
	return fd == -ELOOP;
}

bool vn_is_dir(const char *path)
{
	struct stat st;
	return stat(path, &st) == 0 && S_ISDIR(st.st_mode);
}

bool vn_is_file(const char *path)
{
	struct stat st;
	return stat(path, &st) == 0 && S_ISREG(st.st_mode);
}

uint64_t vn_dir_usage(const char *path)
{
	char *const paths[] = {(char *)path, NULL};
	/* FTS_PHYSICAL: links are counted, not followed; FTS_XDEV: nothing mounted below. */
	FTS *f = fts_open(paths, FTS_PHYSICAL | FTS_XDEV | FTS_NOCHDIR, NULL);
	uint64_t sum = 0;

	if (!f)
		return 0;
	for (FTSENT *e; (e = fts_read(f));)
		if (e->fts_info != FTS_DP && e->fts_info != FTS_NS && e->fts_info != FTS_ERR && e->fts_statp)
			sum += (uint64_t)e->fts_statp->st_blocks * 512;
	fts_close(f);
	return sum;
}
