/* Guest files through its agent: small reads and writes, and for vnuma cp (agent-file.c) stat, readdir, chunked put/get, digests; every path is the guest's. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "util/error.h"
#include "util/sha256.h"

struct vn_agent;

/* Reads a whole guest file (up to 64 MiB); *data is NUL-terminated for convenience, caller frees. */
int vn_agent_read_file(struct vn_agent *a, const char *path, int timeout_ms, char **data, size_t *len,
		       struct vn_error *err);
/*
 * The same for n files, with every request in flight at once: one round
 * trip instead of n (a snapshot's twenty small /proc and /sys files).
 * data[i] gets paths[i]'s text; on an error none is kept.
 */
int vn_agent_read_files(struct vn_agent *a, const char *const *paths, size_t n, int timeout_ms, char **data,
			struct vn_error *err);

enum {
	VN_AGENT_WRITE_APPEND = 1 << 0,
};
/* Writes (creates or truncates, or appends) a guest file; mode < 0: 0644 on creation, else set exactly. */
int vn_agent_write_file(struct vn_agent *a, const char *path, const void *data, size_t len, int mode, unsigned flags,
			int timeout_ms, struct vn_error *err);

enum vn_agent_ftype { VN_AGENT_FILE = 1, VN_AGENT_DIR, VN_AGENT_LINK, VN_AGENT_OTHER };
struct vn_agent_stat {
	enum vn_agent_ftype type;
	unsigned mode; /* permission bits, 07777 */
	uint64_t size;
};
/* lstat(), or stat() with follow. A guest errno comes back as -errno (-ENOENT: missing), an infra error. */
int vn_agent_stat(struct vn_agent *a, const char *path, bool follow, struct vn_agent_stat *st, struct vn_error *err);

struct vn_agent_dirent {
	char *name; /* one checked path component (no '/', not "." or "..", no control characters) */
	struct vn_agent_stat st;
};
/* A directory's entries (without "." and ".."), not followed; free with vn_agent_dirents_free(). */
int vn_agent_readdir(struct vn_agent *a, const char *path, struct vn_agent_dirent **ents, size_t *n,
		     struct vn_error *err);
void vn_agent_dirents_free(struct vn_agent_dirent *e, size_t n);
/* mkdir with exactly mode; chmod; rename; remove (recursive: rm -rf, symlinks not followed). */
int vn_agent_mkdir(struct vn_agent *a, const char *path, unsigned mode, struct vn_error *err);
int vn_agent_chmod(struct vn_agent *a, const char *path, unsigned mode, struct vn_error *err);
int vn_agent_rename(struct vn_agent *a, const char *from, const char *to, struct vn_error *err);
int vn_agent_remove(struct vn_agent *a, const char *path, bool recursive, struct vn_error *err);

/* Chunk size of vn_agent_put()/vn_agent_get(), and how many are in flight at once. */
#define VN_AGENT_CHUNK  (1u << 20)
#define VN_AGENT_WINDOW 4

/* Called after each chunk the guest acknowledged (put) or sent (get) with the bytes so far. */
typedef void (*vn_agent_progress_fn)(void *data, uint64_t bytes);

/*
 * Streams host fd to its EOF into the guest file path (created or truncated;
 * mode set exactly once the last chunk is written), VN_AGENT_WINDOW chunks
 * of VN_AGENT_CHUNK bytes in flight; memory stays bounded by the window.
 * digest: the SHA-256 of the bytes sent; *bytes how many. A full guest
 * filesystem is VN_ERR_INFRA/-ENOSPC saying so.
 */
int vn_agent_put(struct vn_agent *a, int fd, const char *path, unsigned mode, vn_agent_progress_fn progress, void *data,
		 uint8_t digest[VN_SHA256_LEN], uint64_t *bytes, struct vn_error *err);
/*
 * Streams size bytes of the guest file path to host fd, chunked like
 * vn_agent_put(); a file shorter than size is an error (it changed).
 * digest: the SHA-256 of the bytes received.
 */
int vn_agent_get(struct vn_agent *a, const char *path, uint64_t size, int fd, vn_agent_progress_fn progress, void *data,
		 uint8_t digest[VN_SHA256_LEN], struct vn_error *err);
/*
 * The guest's own SHA-256 of each file (busybox sha256sum reading it back in
 * the guest, an implementation apart from the copy's), in batches.
 */
int vn_agent_sha256(struct vn_agent *a, const char *const *paths, size_t n, uint8_t (*digests)[VN_SHA256_LEN],
		    struct vn_error *err);
