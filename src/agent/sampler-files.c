/*
 * The sampler's files kept open: each read again from offset 0, so a file
 * opened once serves every sample (sampler-priv.h).
 */
#include "agent/sampler-priv.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <unistd.h>

/*
 * Reading at 0 makes procfs and sysfs generate the text anew, so a file
 * opened once serves every sample without the open and close (a third of a
 * read's cost under TCG). A file of many records (/proc/vmstat, numa_maps)
 * may come a page at a time, so it is read from 0 until EOF: a pread at
 * each offset would make the kernel generate everything before it again.
 */
int read_records(int fd, struct ig_buf *b)
{
	ig_buf_clear(b);
	if (fd < 0)
		return -ENOENT;
	if (lseek(fd, 0, SEEK_SET) < 0)
		return -errno;
	return ig_read_fd(fd, b);
}

/* A file of one record (the kernel makes all of its text in one go) is one pread into a buffer that holds it. */
int pread_all(int fd, struct ig_buf *b)
{
	ssize_t r;

	ig_buf_clear(b);
	if (fd < 0)
		return -ENOENT;
	ig_buf_reserve(b, 4096);
	do
		r = pread(fd, b->s, b->cap - 1, 0);
	while (r < 0 && errno == EINTR);
	if (r < 0) {
		int e = -errno;
		ig_buf_clear(b);
		return e;
	}
	/* It filled the buffer, so perhaps it is not all there: read to EOF instead. */
	if ((size_t)r == b->cap - 1)
		return read_records(fd, b);
	b->len = (size_t)r;
	b->s[b->len] = '\0';
	return 0;
}

static int vopen(const char *fmt, va_list ap)
{
	char path[96];

	vsnprintf(path, sizeof(path), fmt, ap);
	return open(path, O_RDONLY | O_CLOEXEC);
}

int open_ro(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	int fd = vopen(fmt, ap);
	va_end(ap);
	return fd;
}

long fd_ceiling = 1024 - 8;

int open_kept(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	int fd = vopen(fmt, ap);
	va_end(ap);
	if (fd >= fd_ceiling) {
		close(fd);
		return NOT_KEPT;
	}
	return fd < 0 && (errno == EMFILE || errno == ENFILE) ? NOT_KEPT : fd;
}

int read_kept(int fd, struct ig_buf *b, const char *fmt, ...)
{
	char path[96];
	va_list ap;

	if (fd != NOT_KEPT)
		return pread_all(fd, b);
	va_start(ap, fmt);
	vsnprintf(path, sizeof(path), fmt, ap);
	va_end(ap);
	return ig_read_file(path, b);
}

void close_fd(int *fd)
{
	if (*fd >= 0)
		close(*fd);
	*fd = -1;
}
