/* Growable buffers and whole files (buf.c). */
#pragma once

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* A growable, always NUL-terminated byte buffer; {0} is an empty one. Out of memory exits 3. */
struct ig_buf {
	char *s;
	size_t len, cap;
};
/* Room for n more bytes (plus the NUL). */
void ig_buf_reserve(struct ig_buf *b, size_t n);
void ig_buf_add(struct ig_buf *b, const char *s, size_t n);
__attribute__((format(printf, 2, 3))) void ig_buf_printf(struct ig_buf *b, const char *fmt, ...);
/* Empties it, keeping the memory. */
void ig_buf_clear(struct ig_buf *b);
void ig_buf_free(struct ig_buf *b);

/* The whole file into b (emptied first; "" on error). Returns 0 or -errno. */
int ig_read_file(const char *path, struct ig_buf *b);
/* The same from fd's offset to EOF. */
int ig_read_fd(int fd, struct ig_buf *b);
/* write(2) until all of s is written; 0 or -errno. */
int ig_write_all(int fd, const char *s, size_t n);
/* Writes the whole string to path (e.g. cgroup.procs); 0 or -errno. */
int ig_write_file(const char *path, const char *s);
/* Writes the pids, one per line, to path atomically (tmp + rename); 0 or -errno. */
int ig_write_pidfile(const char *path, const pid_t *pids, size_t n);
/* A "Key:   N kB" value from /proc/meminfo-like files, in the file's unit; -1 if absent. */
long long ig_meminfo_value(const char *path, const char *key);
