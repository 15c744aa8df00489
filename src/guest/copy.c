/* vnuma cp (copy.h): resolving targets, walking trees, temporary names, verification. */
#include "guest/copy-priv.h"

#include "util/alloc.h"
#include "util/cleanup.h"
#include "util/dir.h"
#include "util/file.h"
#include "util/interrupt.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

/* Deeper guest trees than this are refused: a hostile guest could nest forever. */
#define MAX_DEPTH 128

struct copy {
	struct vn_agent *a;
	const struct vn_copy_opts *o;
	struct vn_copy_stats *st;
	uint64_t done;    /* bytes of the files finished before the current one */
	unsigned entries; /* out: files and directories met so far, against max_files */
	uint64_t max_bytes;
	unsigned max_files;
	mode_t umask; /* out: the process's, applied unless preserve_mode */
	/* Files awaiting the guest's checksum: their guest paths and the digests of the bytes copied. */
	char **paths;
	uint8_t (*digests)[VN_SHA256_LEN];
	size_t n, cap;
};

static void progress(void *data, uint64_t bytes)
{
	struct copy *c = data;

	c->st->bytes = c->done + bytes;
	if (c->o->progress)
		c->o->progress(c->o->data, c->st);
}

static void file_done(struct copy *c, const char *guest_path, const uint8_t digest[VN_SHA256_LEN], uint64_t bytes)
{
	if (c->n == c->cap) {
		c->cap = c->cap ? 2 * c->cap : 16;
		c->paths = vn_xreallocarray(c->paths, c->cap, sizeof(*c->paths));
		c->digests = vn_xreallocarray(c->digests, c->cap, sizeof(*c->digests));
	}
	c->paths[c->n] = vn_xstrdup(guest_path);
	memcpy(c->digests[c->n++], digest, VN_SHA256_LEN);
	c->done += bytes;
	c->st->files++;
	progress(c, 0);
}

static void pending_clear(struct copy *c)
{
	for (size_t i = 0; i < c->n; i++)
		free(c->paths[i]);
	c->n = 0;
}

/* The guest's sha256sum of every file copied must equal the digest of what crossed the channel. */
static int verify(struct copy *c, struct vn_error *err)
{
	_cleanup_free_ uint8_t(*guest)[VN_SHA256_LEN] = vn_xcalloc(c->n ? c->n : 1, VN_SHA256_LEN);
	char h1[VN_SHA256_HEX_LEN + 1], h2[VN_SHA256_HEX_LEN + 1];
	int rc = vn_agent_sha256(c->a, (const char *const *)c->paths, c->n, guest, err);

	for (size_t i = 0; rc == 0 && i < c->n; i++)
		if (memcmp(guest[i], c->digests[i], VN_SHA256_LEN))
			rc = vn_infra_error(err, -EIO, "%s: %s: checksum mismatch: copied sha256 %s, the guest's %s",
					    vn_agent_guest(c->a), c->paths[i], vn_sha256_hex(c->digests[i], h1),
					    vn_sha256_hex(guest[i], h2));
	pending_clear(c);
	return rc;
}

static char *join(const char *dir, const char *name)
{
	size_t len = strlen(dir);

	return vn_xasprintf("%s%s%s", dir, len && dir[len - 1] == '/' ? "" : "/", name);
}

/* The last component of a path, without trailing slashes ("/a/b/" is "b"). */
static char *base_name(const char *path)
{
	size_t end = strlen(path), start;

	while (end > 1 && path[end - 1] == '/')
		end--;
	start = end;
	while (start && path[start - 1] != '/')
		start--;
	return vn_xasprintf("%.*s", (int)(end - start), path + start);
}

static char *dir_name(const char *path)
{
	_cleanup_free_ char *b = base_name(path);
	size_t len = strlen(path);

	while (len > 1 && path[len - 1] == '/')
		len--;
	len -= strlen(b);
	while (len > 1 && path[len - 1] == '/')
		len--;
	if (!len)
		return vn_xstrdup(".");
	return vn_xasprintf("%.*s", (int)len, path);
}

/* Removes a failed copy even after Ctrl-C, which ends every agent wait at once. */
static void guest_cleanup(struct copy *c, const char *path)
{
	sig_atomic_t sig = vn_interrupted;
	struct vn_error ignored = {0};

	vn_interrupted = 0;
	vn_agent_remove(c->a, path, true, &ignored);
	if (sig)
		vn_interrupted = sig;
}

/* ---- host to guest ---- */

VN_DEFINE_CLEANUP(DIR *, closedir);

static int put_file(struct copy *c, const char *host, const char *guest, unsigned mode, bool top, struct vn_error *err)
{
	uint8_t digest[VN_SHA256_LEN];
	uint64_t bytes = 0;
	struct stat st;
	int rc;

	/* Inside a tree the entry was lstat()ed as a regular file: it must still be one. */
	_cleanup_close_ int fd = open(host, O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY | (top ? 0 : O_NOFOLLOW));
	if (fd < 0)
		return vn_input_error(err, "%s: %s", host, strerror(errno));
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode))
		return vn_input_error(err, "%s: not a regular file", host);
	rc = vn_agent_put(c->a, fd, guest, mode, progress, c, digest, &bytes, err);
	if (rc < 0)
		return rc;
	file_done(c, guest, digest, bytes);
	return 0;
}

static int put_tree(struct copy *c, const char *host, const char *guest, unsigned mode, struct vn_error *err)
{
	struct dirent *de;
	int rc;

	/* 0700 while it fills, so a read-only directory can be filled; its own mode once full. */
	if ((rc = vn_agent_mkdir(c->a, guest, 0700, err)) < 0)
		return rc;
	_cleanup_(closedirp) DIR *dir = opendir(host);
	if (!dir)
		return vn_input_error(err, "%s: %s", host, strerror(errno));
	while ((errno = 0, de = readdir(dir))) {
		struct stat st;

		if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
			continue;
		_cleanup_free_ char *h = join(host, de->d_name);
		_cleanup_free_ char *g = join(guest, de->d_name);
		if (lstat(h, &st) < 0)
			return vn_input_error(err, "%s: %s", h, strerror(errno));
		if (S_ISREG(st.st_mode))
			rc = put_file(c, h, g, st.st_mode & 07777, false, err);
		else if (S_ISDIR(st.st_mode))
			rc = put_tree(c, h, g, st.st_mode & 07777, err);
		else
			c->st->skipped++;
		if (rc < 0)
			return rc;
	}
	if (errno)
		return vn_input_error(err, "%s: %s", host, strerror(errno));
	c->st->dirs++;
	return vn_agent_chmod(c->a, guest, mode, err);
}

static int in_one(struct copy *c, const char *src, const char *dst, bool dst_is_dir, struct vn_error *err)
{
	struct vn_agent_stat ts, ps;
	struct stat st;
	int rc;

	if (stat(src, &st) < 0)
		return vn_input_error(err, "%s: %s", src, strerror(errno));
	if (S_ISDIR(st.st_mode) && !c->o->recursive)
		return vn_input_error(err, "%s is a directory (copy it with -r)", src);
	if (!S_ISDIR(st.st_mode) && !S_ISREG(st.st_mode))
		return vn_input_error(err, "%s: not a regular file or a directory", src);
	_cleanup_free_ char *name = base_name(src);
	if (dst_is_dir && (!strcmp(name, ".") || !strcmp(name, "..") || !strcmp(name, "/")))
		return vn_input_error(err, "%s: name the directory itself, not '%s'", src, name);
	_cleanup_free_ char *target = dst_is_dir ? join(dst, name) : vn_xstrdup(dst);
	_cleanup_free_ char *parent = dir_name(target);
	if ((rc = vn_agent_stat(c->a, parent, true, &ps, err)) < 0 && rc != -ENOENT)
		return rc;
	vn_error_clear(err);
	if (rc < 0 || ps.type != VN_AGENT_DIR)
		return vn_input_error(err, "%s: %s is not a directory in the guest", vn_agent_guest(c->a), parent);
	rc = vn_agent_stat(c->a, target, true, &ts, err);
	if (rc < 0 && rc != -ENOENT)
		return rc;
	if (rc == 0 && (S_ISDIR(st.st_mode) || ts.type == VN_AGENT_DIR))
		return vn_input_error(err, "%s: %s exists%s", vn_agent_guest(c->a), target,
				      ts.type == VN_AGENT_DIR ? " and is a directory (vnuma cp does not merge trees)"
							      : ", and is not a directory");
	vn_error_clear(err);
	_cleanup_free_ char *tmp = vn_xasprintf("%s.vnuma-tmp", target);
	guest_cleanup(c, tmp); /* a previous copy's leftover */
	if (S_ISDIR(st.st_mode))
		rc = put_tree(c, src, tmp, st.st_mode & 07777, err);
	else
		rc = put_file(c, src, tmp, st.st_mode & 07777, true, err);
	if (rc == 0)
		rc = verify(c, err);
	if (rc == 0)
		rc = vn_agent_rename(c->a, tmp, target, err);
	if (rc < 0) {
		pending_clear(c);
		guest_cleanup(c, tmp);
	}
	return rc;
}

/* ---- guest to host ---- */

mode_t vn_copy_host_mode(unsigned mode, bool dir, bool preserve, mode_t mask)
{
	/* The sticky bit only restricts, and 01777 without it is worse than with it; it means nothing on a file. */
	mode_t m = (mode_t)(mode & (dir ? 01777 : 0777));

	return preserve ? m : m & ~(mask & 0777);
}

/* Counts one more file or directory against max_files. */
static int count_entry(struct copy *c, const char *guest, struct vn_error *err)
{
	if (++c->entries <= c->max_files)
		return 0;
	return vn_infra_error(err, -EFBIG,
			      "%s: %s: more than %u files and directories (raise --max-files to copy more)",
			      vn_agent_guest(c->a), guest, c->max_files);
}

/* Before a byte is asked for: the size the guest claims must fit the budget and the host's free space. */
static int size_check(struct copy *c, const char *guest, uint64_t size, int fd, struct vn_error *err)
{
	struct statvfs vfs;

	if (size > c->max_bytes || c->done > c->max_bytes - size)
		return vn_infra_error(
			err, -EFBIG,
			"%s: %s: the guest says it is %llu bytes, which with the %llu bytes copied before "
			"it is over %llu (raise --max-bytes to copy more)",
			vn_agent_guest(c->a), guest, (unsigned long long)size, (unsigned long long)c->done,
			(unsigned long long)c->max_bytes);
	if (fstatvfs(fd, &vfs) == 0 && (uint64_t)vfs.f_bavail * vfs.f_frsize < size)
		return vn_infra_error(
			err, -ENOSPC,
			"%s: %s: the guest says it is %llu bytes, and the host's file system has %llu free",
			vn_agent_guest(c->a), guest, (unsigned long long)size,
			(unsigned long long)((uint64_t)vfs.f_bavail * vfs.f_frsize));
	return 0;
}

/* Streams the guest file into fd (a fresh host file) and sets its mode. */
static int get_file(struct copy *c, const char *guest, const struct vn_agent_stat *gs, int fd, struct vn_error *err)
{
	uint8_t digest[VN_SHA256_LEN];
	int rc;

	if ((rc = count_entry(c, guest, err)) < 0 || (rc = size_check(c, guest, gs->size, fd, err)) < 0)
		return rc;
	/* vn_agent_get asks for exactly gs->size bytes and refuses a chunk longer than it asked for. */
	if ((rc = vn_agent_get(c->a, guest, gs->size, fd, progress, c, digest, err)) < 0)
		return rc;
	if (fchmod(fd, vn_copy_host_mode(gs->mode, false, c->o->preserve_mode, c->umask)) < 0)
		return vn_infra_error(err, -errno, "chmod of the copy of %s: %s", guest, strerror(errno));
	file_done(c, guest, digest, gs->size);
	return 0;
}

static int get_tree(struct copy *c, const char *guest, const char *host, unsigned mode, int depth, struct vn_error *err)
{
	struct vn_agent_dirent *ents = NULL;
	size_t n = 0;
	int rc;

	if (depth > MAX_DEPTH)
		return vn_infra_error(err, -ELOOP, "%s: %s: deeper than %d directories", vn_agent_guest(c->a), guest,
				      MAX_DEPTH);
	if ((rc = count_entry(c, guest, err)) < 0)
		return rc;
	if (mkdir(host, 0700) < 0)
		return vn_infra_error(err, -errno, "mkdir %s: %s", host, strerror(errno));
	if ((rc = vn_agent_readdir(c->a, guest, &ents, &n, err)) < 0)
		return rc;
	for (size_t i = 0; rc == 0 && i < n; i++) {
		_cleanup_free_ char *g = join(guest, ents[i].name);
		_cleanup_free_ char *h = join(host, ents[i].name);

		if (strlen(h) >= PATH_MAX) {
			rc = vn_infra_error(err, -ENAMETOOLONG, "%s: %s: name too long on the host",
					    vn_agent_guest(c->a), g);
		} else if (ents[i].st.type == VN_AGENT_FILE) {
			/* Our own fresh directory: O_EXCL|O_NOFOLLOW refuses whatever a duplicate name would reuse. */
			_cleanup_close_ int fd =
				open(h, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC | O_NOCTTY, 0600);
			rc = fd < 0 ? vn_infra_error(err, -errno, "%s: %s", h, strerror(errno))
				    : get_file(c, g, &ents[i].st, fd, err);
		} else if (ents[i].st.type == VN_AGENT_DIR) {
			rc = get_tree(c, g, h, ents[i].st.mode, depth + 1, err);
		} else {
			c->st->skipped++;
		}
	}
	vn_agent_dirents_free(ents, n);
	if (rc < 0)
		return rc;
	c->st->dirs++;
	/* The top stays 0700 until verified and renamed (out_tree): nobody else can reach inside meanwhile. */
	if (depth && chmod(host, vn_copy_host_mode(mode, true, c->o->preserve_mode, c->umask)) < 0)
		return vn_infra_error(err, -errno, "chmod %s: %s", host, strerror(errno));
	return 0;
}

static int out_file(struct copy *c, const char *src, const struct vn_agent_stat *gs, const char *target,
		    struct vn_error *err)
{
	struct vn_file_tmp t;
	int rc = vn_file_tmp_open(target, 0600, &t, err);

	if (rc < 0)
		return rc;
	rc = get_file(c, src, gs, t.fd, err);
	if (rc == 0)
		rc = verify(c, err);
	if (rc < 0) {
		vn_file_tmp_abort(&t);
		return rc;
	}
	return vn_file_tmp_commit(&t, err);
}

static int out_tree(struct copy *c, const char *src, const struct vn_agent_stat *gs, const char *target,
		    struct vn_error *err)
{
	_cleanup_free_ char *tmp = vn_xasprintf("%s.vnuma-tmp.XXXXXX", target);
	int rc;

	if (!mkdtemp(tmp))
		return vn_infra_error(err, -errno, "cannot create %s: %s", tmp, strerror(errno));
	/* get_tree creates the directory it fills; mkdtemp only reserved the name. */
	rmdir(tmp);
	rc = get_tree(c, src, tmp, gs->mode, 0, err);
	if (rc == 0)
		rc = verify(c, err);
	_cleanup_close_ int fd = rc < 0 ? -1 : open(tmp, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (rc == 0 && fd < 0)
		rc = vn_infra_error(err, -errno, "%s: %s", tmp, strerror(errno));
	if (rc == 0 && rename(tmp, target) < 0)
		rc = vn_infra_error(err, -errno, "cannot rename %s to %s: %s", tmp, target, strerror(errno));
	if (rc < 0) {
		vn_rm_rf(tmp);
		return rc;
	}
	if (fchmod(fd, vn_copy_host_mode(gs->mode, true, c->o->preserve_mode, c->umask)) < 0)
		return vn_infra_error(err, -errno, "chmod %s: %s", target, strerror(errno));
	return 0;
}

static int out_one(struct copy *c, const char *src, const char *dst, bool dst_is_dir, struct vn_error *err)
{
	struct vn_agent_stat gs;
	struct stat ts;
	int rc;

	if (src[0] != '/')
		return vn_input_error(err, "%s: guest paths are absolute", src);
	rc = vn_agent_stat(c->a, src, true, &gs, err);
	if (rc == -ENOENT || rc == -ENOTDIR) {
		vn_error_clear(err);
		return vn_input_error(err, "%s: %s: %s", vn_agent_guest(c->a), src, strerror(-rc));
	}
	if (rc < 0)
		return rc;
	if (gs.type == VN_AGENT_DIR && !c->o->recursive)
		return vn_input_error(err, "%s: %s is a directory (copy it with -r)", vn_agent_guest(c->a), src);
	if (gs.type != VN_AGENT_DIR && gs.type != VN_AGENT_FILE)
		return vn_input_error(err, "%s: %s: not a regular file or a directory", vn_agent_guest(c->a), src);
	_cleanup_free_ char *name = base_name(src);
	if (dst_is_dir && (!strcmp(name, "/") || !strcmp(name, ".") || !strcmp(name, "..")))
		return vn_input_error(err, "%s: name the directory itself, not '%s'", src, name);
	_cleanup_free_ char *target = dst_is_dir ? join(dst, name) : vn_xstrdup(dst);
	if (lstat(target, &ts) == 0 && (gs.type == VN_AGENT_DIR || S_ISDIR(ts.st_mode)))
		return vn_input_error(err, "%s exists%s", target,
				      S_ISDIR(ts.st_mode) ? " and is a directory (vnuma cp does not merge trees)"
							  : ", and is not a directory");
	return gs.type == VN_AGENT_DIR ? out_tree(c, src, &gs, target, err) : out_file(c, src, &gs, target, err);
}

/* ---- both ---- */

static int copy_all(struct copy *c, const char *const *srcs, size_t n, const char *dst, bool dst_is_dir, bool in,
		    struct vn_error *err)
{
	int rc = 0;

	if (n > 1 && !dst_is_dir)
		return vn_input_error(err, "%s: copying %zu sources needs an existing directory", dst, n);
	for (size_t i = 0; rc == 0 && i < n; i++)
		rc = in ? in_one(c, srcs[i], dst, dst_is_dir, err) : out_one(c, srcs[i], dst, dst_is_dir, err);
	pending_clear(c);
	free(c->paths);
	free(c->digests);
	return rc;
}

int vn_copy_in(struct vn_agent *a, const char *const *srcs, size_t n, const char *dst, const struct vn_copy_opts *o,
	       struct vn_copy_stats *st, struct vn_error *err)
{
	struct copy c = {.a = a, .o = o, .st = st};
	struct vn_agent_stat ds;
	int rc;

	*st = (struct vn_copy_stats){0};
	if (dst[0] != '/')
		return vn_input_error(err, "%s: guest paths are absolute", dst);
	rc = vn_agent_stat(a, dst, true, &ds, err);
	if (rc < 0 && rc != -ENOENT && rc != -ENOTDIR)
		return rc;
	vn_error_clear(err);
	return copy_all(&c, srcs, n, dst, rc == 0 && ds.type == VN_AGENT_DIR, true, err);
}

int vn_copy_out(struct vn_agent *a, const char *const *srcs, size_t n, const char *dst, const struct vn_copy_opts *o,
		struct vn_copy_stats *st, struct vn_error *err)
{
	struct copy c = {.a = a,
			 .o = o,
			 .st = st,
			 .max_bytes = o->max_bytes ? o->max_bytes : VN_COPY_MAX_BYTES,
			 .max_files = o->max_files ? o->max_files : VN_COPY_MAX_FILES,
			 .umask = umask(0)};

	umask(c.umask);
	*st = (struct vn_copy_stats){0};
	return copy_all(&c, srcs, n, dst, vn_is_dir(dst), false, err);
}
