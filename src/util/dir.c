#include "util/dir.h"

#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "util/alloc.h"
#include "util/cleanup.h"
#include "util/strbuf.h"

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

static int rm_one(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)st;
	(void)ftw;
	int rc = flag == FTW_DP ? rmdir(path) : unlink(path);
	return rc < 0 && errno != ENOENT ? -errno : 0;
}

int vn_rm_rf(const char *path)
{
	struct stat st;

	if (lstat(path, &st) < 0)
		return errno == ENOENT ? 0 : -errno;
	if (!S_ISDIR(st.st_mode))
		return unlink(path) < 0 && errno != ENOENT ? -errno : 0;
	int rc = nftw(path, rm_one, 32, FTW_DEPTH | FTW_PHYS | FTW_MOUNT);
	return rc < 0 ? -errno : rc;
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
