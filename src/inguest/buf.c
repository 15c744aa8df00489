/* Growable buffers, and files read or written whole. */
#include "inguest/buf.h"
#include "inguest/prog.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

void ig_buf_reserve(struct ig_buf *b, size_t n)
{
	if (b->len + n + 1 <= b->cap)
		return;
	size_t cap = b->cap ? b->cap : 1024;
	while (cap < b->len + n + 1)
		cap *= 2;
	b->s = ig_xrealloc(b->s, cap, 1, "buffer");
	b->cap = cap;
}

void ig_buf_add(struct ig_buf *b, const char *s, size_t n)
{
	ig_buf_reserve(b, n);
	memcpy(b->s + b->len, s, n);
	b->len += n;
	b->s[b->len] = '\0';
}

void ig_buf_printf(struct ig_buf *b, const char *fmt, ...)
{
	va_list ap;
	int n;

	ig_buf_reserve(b, 64);
	va_start(ap, fmt);
	n = vsnprintf(b->s + b->len, b->cap - b->len, fmt, ap);
	va_end(ap);
	if (n < 0) {
		b->s[b->len] = '\0';
		return;
	}
	if ((size_t)n >= b->cap - b->len) {
		ig_buf_reserve(b, (size_t)n);
		va_start(ap, fmt);
		vsnprintf(b->s + b->len, b->cap - b->len, fmt, ap);
		va_end(ap);
	}
	b->len += (size_t)n;
}

void ig_buf_clear(struct ig_buf *b)
{
	ig_buf_reserve(b, 0);
	b->len = 0;
	b->s[0] = '\0';
}

void ig_buf_free(struct ig_buf *b)
{
	free(b->s);
	*b = (struct ig_buf){0};
}

int ig_read_fd(int fd, struct ig_buf *b)
{
	ig_buf_clear(b);
	for (;;) {
		ig_buf_reserve(b, 4096);
		ssize_t r = read(fd, b->s + b->len, b->cap - b->len - 1);
		if (r < 0) {
			if (errno == EINTR)
				continue;
			int e = -errno;
			ig_buf_clear(b);
			return e;
		}
		if (r == 0)
			break;
		b->len += (size_t)r;
	}
	b->s[b->len] = '\0';
	return 0;
}

int ig_read_file(const char *path, struct ig_buf *b)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	if (fd < 0) {
		ig_buf_clear(b);
		return -errno;
	}
	int r = ig_read_fd(fd, b);
	close(fd);
	return r;
}

int ig_write_all(int fd, const char *s, size_t n)
{
	while (n) {
		ssize_t r = write(fd, s, n);
		if (r < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		s += r;
		n -= (size_t)r;
	}
	return 0;
}

int ig_write_file(const char *path, const char *s)
{
	int fd = open(path, O_WRONLY | O_CLOEXEC);
	size_t len = strlen(s);
	ssize_t n;

	if (fd < 0)
		return -errno;
	n = write(fd, s, len);
	if (n < 0 || (size_t)n != len) {
		int e = n < 0 ? -errno : -EIO;
		close(fd);
		return e;
	}
	if (close(fd) < 0)
		return -errno;
	return 0;
}

int ig_write_pidfile(const char *path, const pid_t *pids, size_t n)
{
	char tmp[4096];
	FILE *f;

	if (snprintf(tmp, sizeof(tmp), "%s.tmp.%d", path, (int)getpid()) >= (int)sizeof(tmp))
		return -ENAMETOOLONG;
	f = fopen(tmp, "we");
	if (!f)
		return -errno;
	for (size_t i = 0; i < n; i++)
		fprintf(f, "%d\n", (int)pids[i]);
	if (fclose(f) != 0) {
		int e = -errno;
		unlink(tmp);
		return e;
	}
	if (rename(tmp, path) < 0) {
		int e = -errno;
		unlink(tmp);
		return e;
	}
	return 0;
}

long long ig_meminfo_value(const char *path, const char *key)
{
	FILE *f = fopen(path, "re");
	char line[256];
	size_t klen = strlen(key);
	long long v = -1;

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f)) {
		if (!strncmp(line, key, klen) && line[klen] == ':') {
			v = strtoll(line + klen + 1, NULL, 10);
			break;
		}
	}
	fclose(f);
	return v;
}
