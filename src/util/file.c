#include "util/file.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "util/cleanup.h"
#include "util/alloc.h"

static const char *kind_of(mode_t m)
{
	return S_ISFIFO(m)                ? "a FIFO"
	       : S_ISDIR(m)               ? "a directory"
	       : S_ISSOCK(m)              ? "a socket"
	       : S_ISCHR(m) || S_ISBLK(m) ? "a device"
					  : "not a regular file";
}

int vn_file_read(const char *path, size_t max, char **data, size_t *len, struct vn_error *err)
{
	struct stat st;
	size_t n = 0, cap;

	/* O_NONBLOCK: opening a FIFO without a writer would otherwise block right here. */
	_cleanup_close_ int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
	if (fd < 0)
		return vn_error_set(err, VN_ERR_INPUT, -errno, "%s: cannot open: %s", path, strerror(errno));
	if (fstat(fd, &st) < 0)
		return vn_input_error(err, "%s: cannot stat: %s", path, strerror(errno));
	if (!S_ISREG(st.st_mode))
		return vn_input_error(err, "%s: is %s, not a regular file", path, kind_of(st.st_mode));
	if ((size_t)st.st_size > max)
		return vn_error_set(err, VN_ERR_INPUT, -EFBIG, "%s: larger than %zu bytes", path, max);
	/* A file may grow while we read it; the limit holds whatever fstat said. */
	cap = (size_t)st.st_size + 1;
	_cleanup_free_ char *buf = vn_xmalloc(cap + 1);
	for (;;) {
		if (n == cap) {
			if (cap > max)
				return vn_error_set(err, VN_ERR_INPUT, -EFBIG, "%s: larger than %zu bytes", path, max);
			size_t ncap = cap * 2 > max + 1 ? max + 1 : cap * 2;
			buf = vn_xreallocarray(buf, ncap + 1, 1);
			cap = ncap;
		}
		ssize_t r = read(fd, buf + n, cap - n);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0)
			return vn_input_error(err, "%s: cannot read: %s", path, strerror(errno));
		if (r == 0)
			break;
		n += (size_t)r;
	}
	if (n > max)
		return vn_error_set(err, VN_ERR_INPUT, -EFBIG, "%s: larger than %zu bytes", path, max);
	buf[n] = '\0';
	*len = n;
	*data = steal_pointer(&buf);
	return 0;
}

/* PATH.tmp.PID.N beside path: same directory, so rename() is atomic. */
static int open_temp(const char *path, mode_t mode, char **tmp)
{
	static atomic_uint counter;

	for (int tries = 0; tries < 100; tries++) {
		*tmp = vn_xasprintf("%s.tmp.%ld.%u", path, (long)getpid(), atomic_fetch_add(&counter, 1));
		int fd = open(*tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC | O_NOCTTY, mode);
		if (fd >= 0)
			return fd;
		int e = errno;
		free(*tmp);
		*tmp = NULL;
		if (e != EEXIST)
			return -e;
	}
	return -EEXIST;
}

int vn_write_all(int fd, const void *buf, size_t len)
{
	const char *p = buf;

	while (len) {
		ssize_t n = write(fd, p, len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return n < 0 ? -errno : -EIO;
		p += n;
		len -= (size_t)n;
	}
	return 0;
}

/* fsync, close, rename; on failure the temp file goes. */
static int commit_temp(int fd, char *tmp, const char *path, int rc, struct vn_error *err)
{
	if (rc == 0 && fsync(fd) < 0 && errno != EINVAL)
		rc = -errno;
	if (close(fd) < 0 && rc == 0)
		rc = -errno;
	if (rc == 0 && rename(tmp, path) < 0)
		rc = -errno;
	if (rc < 0) {
		unlink(tmp);
		vn_infra_error(err, rc, "cannot write %s: %s", path, strerror(-rc));
	}
	free(tmp);
	return rc;
}

int vn_file_write_atomic(const char *path, const void *data, size_t len, mode_t mode, struct vn_error *err)
{
	char *tmp = NULL;
	int fd = open_temp(path, mode, &tmp);

	if (fd < 0)
		return vn_infra_error(err, fd, "cannot write %s: %s", path, strerror(-fd));
	return commit_temp(fd, tmp, path, vn_write_all(fd, data, len), err);
}

int vn_file_tmp_open(const char *path, mode_t mode, struct vn_file_tmp *t, struct vn_error *err)
{
	*t = (struct vn_file_tmp){.path = path};
	t->fd = open_temp(path, mode, &t->tmp);
	if (t->fd < 0)
		return vn_infra_error(err, t->fd, "cannot write %s: %s", path, strerror(-t->fd));
	return 0;
}

int vn_file_tmp_commit(struct vn_file_tmp *t, struct vn_error *err)
{
	int rc = commit_temp(t->fd, t->tmp, t->path, 0, err);

	t->fd = -1;
	t->tmp = NULL;
	return rc;
}

void vn_file_tmp_abort(struct vn_file_tmp *t)
{
	if (t->fd >= 0)
		close(t->fd);
	if (t->tmp)
		unlink(t->tmp);
	free(t->tmp);
	t->fd = -1;
	t->tmp = NULL;
}

int vn_file_write_text(const char *path, const char *text, struct vn_error *err)
{
	return vn_file_write_atomic(path, text, strlen(text), 0644, err);
}

int vn_file_copy_atomic(const char *from, const char *path, struct vn_error *err)
{
	char buf[65536];
	struct stat st;
	int rc = 0;

	_cleanup_close_ int in = open(from, O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
	if (in < 0)
		return vn_infra_error(err, -errno, "cannot read %s: %s", from, strerror(errno));
	if (fstat(in, &st) < 0 || !S_ISREG(st.st_mode))
		return vn_infra_error(err, -EINVAL, "%s: not a regular file", from);
	char *tmp = NULL;
	int fd = open_temp(path, 0644, &tmp);
	if (fd < 0)
		return vn_infra_error(err, fd, "cannot write %s: %s", path, strerror(-fd));
	for (;;) {
		ssize_t n = read(in, buf, sizeof(buf));
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			rc = -errno;
			break;
		}
		if (n == 0 || (rc = vn_write_all(fd, buf, (size_t)n)) < 0)
			break;
	}
	return commit_temp(fd, tmp, path, rc, err);
}

int vn_file_create_stream(const char *path, FILE **out, struct vn_error *err)
{
	if (unlink(path) < 0 && errno != ENOENT)
		return vn_infra_error(err, -errno, "cannot replace %s: %s", path, strerror(errno));
	int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC | O_NOCTTY, 0644);
	if (fd < 0)
		return vn_infra_error(err, -errno, "cannot write %s: %s", path, strerror(errno));
	FILE *f = fdopen(fd, "w");
	if (!f)
		vn_oom(); /* its buffer: fdopen fails on nothing else for a file we just opened */
	*out = f;
	return 0;
}

int vn_dir_create(const char *path, struct vn_error *err)
{
	_cleanup_free_ char *buf = vn_xstrdup(path);
	struct stat st;

	for (char *p = buf + 1; *p; p++) {
		if (*p != '/')
			continue;
		*p = '\0';
		if (mkdir(buf, 0755) < 0 && errno != EEXIST)
			return vn_infra_error(err, -errno, "cannot create %s: %s", buf, strerror(errno));
		*p = '/';
	}
	if (mkdir(buf, 0755) < 0 && errno != EEXIST)
		return vn_infra_error(err, -errno, "cannot create %s: %s", path, strerror(errno));
	if (lstat(buf, &st) < 0)
		return vn_infra_error(err, -errno, "cannot create %s: %s", path, strerror(errno));
	if (!S_ISDIR(st.st_mode))
		return vn_infra_error(err, -ENOTDIR, "%s exists and is %s, not a directory", path,
				      S_ISLNK(st.st_mode) ? "a symlink" : "a file");
	return 0;
}

int vn_dir_nonempty(const char *dir)
{
	DIR *d = opendir(dir);

	if (!d)
		return errno == ENOENT ? 0 : -errno;
	int found = 0;
	for (struct dirent *e; !found && (e = readdir(d));)
		found = strcmp(e->d_name, ".") != 0 && strcmp(e->d_name, "..") != 0;
	closedir(d);
	return found;
}

int vn_file_write(const char *path, const char *s)
{
	_cleanup_fclose_ FILE *f = fopen(path, "we");
	if (!f)
		return -errno;
	fputs(s, f);
	return fflush(f) == 0 && !ferror(f) ? 0 : -EIO;
}

int vn_file_copy(const char *from, const char *to)
{
	_cleanup_close_ int in = open(from, O_RDONLY | O_CLOEXEC);
	struct stat st;
	char buf[65536];
	ssize_t n;

	if (in < 0 || fstat(in, &st) < 0)
		return -errno;
	_cleanup_close_ int out = open(to, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, st.st_mode & 07777);
	if (out < 0)
		return -errno;
	while ((n = read(in, buf, sizeof(buf))) > 0 || (n < 0 && errno == EINTR)) {
		if (n < 0)
			continue;
		for (ssize_t off = 0; off < n;) {
			ssize_t w = write(out, buf + off, (size_t)(n - off));
			if (w < 0 && errno == EINTR)
				continue;
			if (w <= 0)
				return w < 0 ? -errno : -EIO;
			off += w;
		}
	}
	return n < 0 ? -errno : 0;
}
