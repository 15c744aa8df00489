/*
 * libguestfs behind vnuma's errors. One handle per call, its default error
 * handler silenced (it prints), its messages captured and turned into a
 * struct vn_error that says which image, which path and what to do.
 */
#include "guest/disk.h"

#include <archive.h>
#include <archive_entry.h>
#include <errno.h>
#include <fcntl.h>
#include <guestfs.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "util/alloc.h"
#include "util/cleanup.h"
#include "util/dir.h"
#include "util/interrupt.h"

struct disk {
	guestfs_h *g;
	const char *image;
	FILE *log;
	int event; /* the log's callback, -1: none */
};

static void disk_close(struct disk *d)
{
	if (d->g)
		guestfs_close(d->g);
	if (d->log)
		fclose(d->log);
	d->g = NULL;
	d->log = NULL;
}
#define _cleanup_disk_ _cleanup_(disk_close)

const char *vn_disk_format(const char *image)
{
	unsigned char magic[4] = {0};
	_cleanup_close_ int fd = open(image, O_RDONLY | O_CLOEXEC);

	if (fd >= 0 && read(fd, magic, sizeof(magic)) == (ssize_t)sizeof(magic) && memcmp(magic, "QFI\xfb", 4) == 0)
		return "qcow2";
	return "raw";
}

/* libguestfs's last message, or a fallback; libguestfs keeps it until the next call. */
static const char *last_error(const struct disk *d)
{
	const char *m = guestfs_last_error(d->g);
	return m && *m ? m : "unknown libguestfs error";
}

/* An operation on the mounted image failed: no space is the environment's; the rest names the path. */
static int op_failed(const struct disk *d, const char *what, const char *path, struct vn_error *err)
{
	int e = guestfs_last_errno(d->g);

	if (e == ENOSPC)
		return vn_infra_error(err, -ENOSPC, "%s: %s %s: no space left in the image (%s)", d->image, what, path,
				      last_error(d));
	if (e == ENOENT || e == ENOTDIR)
		return vn_input_error(err, "%s: %s %s: no such file or directory in the image", d->image, what, path);
	return vn_infra_error(err, e ? -e : -EIO, "%s: %s %s: %s", d->image, what, path, last_error(d));
}

static void on_event(guestfs_h *g, void *opaque, uint64_t event, int handle, int flags, const char *buf, size_t len,
		     const uint64_t *array, size_t array_len)
{
	FILE *log = opaque;

	fwrite(buf, 1, len, log);
	if (event != GUESTFS_EVENT_APPLIANCE && (!len || buf[len - 1] != '\n'))
		fputc('\n', log);
}

/* A handle on image with the backend vnuma needs, not yet launched. */
static int disk_handle(struct disk *d, const char *image, const char *format, bool readonly,
		       const struct vn_disk_opts *o, struct vn_error *err)
{
	memset(d, 0, sizeof(*d));
	d->image = image;
	d->event = -1;
	d->g = guestfs_create();
	if (!d->g)
		return vn_infra_error(err, -EIO, "%s: cannot create a libguestfs handle", image);
	guestfs_set_error_handler(d->g, NULL, NULL);
	/* No libvirt daemon runs for vnuma (it embeds libvirt's driver): QEMU directly, unless the user chose. */
	const char *backend = getenv("LIBGUESTFS_BACKEND");
	if ((!backend || !*backend) && guestfs_set_backend(d->g, "direct") < 0)
		return vn_infra_error(err, -EIO, "%s: libguestfs backend: %s", image, last_error(d));
	if (o && o->force_tcg) {
		char *settings[] = {"force_tcg", NULL};
		if (guestfs_set_backend_settings(d->g, settings) < 0)
			return vn_infra_error(err, -EIO, "%s: libguestfs backend settings: %s", image, last_error(d));
	}
	if (o && o->log) {
		d->log = fopen(o->log, "ae");
		if (!d->log)
			return vn_infra_error(err, -errno, "log %s: %s", o->log, strerror(errno));
		setvbuf(d->log, NULL, _IOLBF, 0);
		guestfs_set_verbose(d->g, 1);
		d->event = guestfs_set_event_callback(
			d->g, on_event, GUESTFS_EVENT_LIBRARY | GUESTFS_EVENT_WARNING | GUESTFS_EVENT_APPLIANCE, 0,
			d->log);
	}
	if (format && guestfs_add_drive_opts(d->g, image, GUESTFS_ADD_DRIVE_OPTS_FORMAT, format,
					     GUESTFS_ADD_DRIVE_OPTS_READONLY, readonly ? 1 : 0, -1) < 0) {
		if (access(image, F_OK) < 0)
			return vn_input_error(err, "%s: no such image", image);
		return vn_infra_error(err, -EIO, "%s: %s", image, last_error(d));
	}
	return 0;
}

static int disk_launch(struct disk *d, const struct vn_disk_opts *o, struct vn_error *err)
{
	if (vn_was_interrupted())
		return vn_infra_error(err, -EINTR, "%s: interrupted", d->image);
	if (guestfs_launch(d->g) < 0) {
		vn_infra_error(err, -EIO, "%s: the libguestfs appliance did not start: %s", d->image, last_error(d));
		vn_error_set_detail(err, o && o->log ? "the appliance's messages are in the log"
						     : "check with: LIBGUESTFS_BACKEND=direct "
						       "LIBGUESTFS_BACKEND_SETTINGS=force_tcg libguestfs-test-tool");
		return err->code;
	}
	/* Past the launch the daemon's verbose trace is a line per 8 KiB chunk: keep its messages, not that. */
	if (d->event >= 0) {
		guestfs_delete_event_callback(d->g, d->event);
		d->event = guestfs_set_event_callback(d->g, on_event, GUESTFS_EVENT_LIBRARY | GUESTFS_EVENT_WARNING, 0,
						      d->log);
	}
	return 0;
}

/* Shorter mountpoints first, so / is mounted before /boot. */
static int mp_cmp(const void *a, const void *b)
{
	const char *const *x = a, *const *y = b;
	size_t lx = strlen(x[0]), ly = strlen(y[0]);
	return lx < ly ? -1 : lx > ly;
}

/* The operating system's filesystems as inspection finds them, else the first filesystem that mounts. */
static int disk_mount(struct disk *d, bool readonly, struct vn_error *err)
{
	int (*mnt)(guestfs_h *, const char *, const char *) = readonly ? guestfs_mount_ro : guestfs_mount;
	_cleanup_strv_ char **roots = guestfs_inspect_os(d->g);

	if (roots && roots[0]) {
		_cleanup_strv_ char **mps = guestfs_inspect_get_mountpoints(d->g, roots[0]);
		size_t n = 0;
		while (mps && mps[n])
			n += 2;
		if (n) {
			qsort(mps, n / 2, 2 * sizeof(char *), mp_cmp);
			for (size_t i = 0; i < n; i += 2)
				if (mnt(d->g, mps[i + 1], mps[i]) < 0 && strcmp(mps[i], "/") == 0)
					return vn_infra_error(err, -EIO, "%s: mounting its root %s: %s", d->image,
							      mps[i + 1], last_error(d));
			return 0;
		}
	}
	_cleanup_strv_ char **fs = guestfs_list_filesystems(d->g);
	for (size_t i = 0; fs && fs[i] && fs[i + 1]; i += 2) {
		if (strcmp(fs[i + 1], "swap") == 0 || strcmp(fs[i + 1], "unknown") == 0)
			continue;
		if (mnt(d->g, fs[i], "/") == 0)
			return 0;
	}
	return vn_input_error(err, "%s: no Linux filesystem found in the image", d->image);
}

static int disk_finish(struct disk *d, struct vn_error *err)
{
	/* Writes reach the image only once the appliance has synced and QEMU exited. */
	if (guestfs_shutdown(d->g) < 0)
		return vn_infra_error(err, -EIO, "%s: closing the image: %s", d->image, last_error(d));
	return 0;
}

static int check_guest_path(const char *image, const char *what, const char *p, struct vn_error *err)
{
	if (!p || p[0] != '/')
		return vn_input_error(err, "%s: %s '%s': the path in the image must be absolute", image, what,
				      p ? p : "");
	if (strstr(p, "/../") || (strlen(p) >= 3 && strcmp(p + strlen(p) - 3, "/..") == 0))
		return vn_input_error(err, "%s: %s '%s': '..' is not allowed", image, what, p);
	return 0;
}

int vn_disk_inject(const char *image, const char *const *files, const char *const *mkdirs, const struct vn_disk_opts *o,
		   struct vn_error *err)
{
	_cleanup_disk_ struct disk d = {0};
	int rc;

	/* Everything the caller can get wrong on the host is checked before the appliance costs its 20 s. */
	for (const char *const *p = mkdirs; p && *p; p++)
		if ((rc = check_guest_path(image, "--mkdir", *p, err)) < 0)
			return rc;
	for (const char *const *p = files; p && *p; p++) {
		const char *colon = strrchr(*p, ':');
		struct stat st;
		if (!colon || colon == *p)
			return vn_input_error(err, "--file %s: expected SRC:DST", *p);
		_cleanup_free_ char *src = vn_xstrndup(*p, (size_t)(colon - *p));
		if ((rc = check_guest_path(image, "--file destination", colon + 1, err)) < 0)
			return rc;
		if (stat(src, &st) < 0)
			return vn_input_error(err, "--file %s: %s: %s", *p, src, strerror(errno));
		if (!S_ISREG(st.st_mode))
			return vn_input_error(err, "--file %s: %s is not a regular file", *p, src);
	}
	if (access(image, W_OK) < 0)
		return vn_input_error(err, "%s: %s", image, strerror(errno));
	if ((rc = disk_handle(&d, image, vn_disk_format(image), false, o, err)) < 0 ||
	    (rc = disk_launch(&d, o, err)) < 0 || (rc = disk_mount(&d, false, err)) < 0)
		return rc;
	for (const char *const *p = mkdirs; p && *p; p++)
		if (guestfs_mkdir_p(d.g, *p) < 0)
			return op_failed(&d, "--mkdir", *p, err);
	for (const char *const *p = files; p && *p; p++) {
		const char *colon = strrchr(*p, ':');
		_cleanup_free_ char *src = vn_xstrndup(*p, (size_t)(colon - *p));
		_cleanup_free_ char *parent = vn_xstrndup(colon + 1, (size_t)(strrchr(colon + 1, '/') - (colon + 1)));
		const char *dst = colon + 1;
		struct stat st;
		if (*parent && guestfs_is_dir(d.g, parent) <= 0)
			return vn_input_error(
				err, "%s: --file %s: directory %s does not exist in the image (add --mkdir %s)", image,
				*p, parent, parent);
		if (guestfs_is_dir(d.g, dst) > 0)
			return vn_input_error(err, "%s: --file %s: %s is a directory in the image; name the file",
					      image, *p, dst);
		if (guestfs_upload(d.g, src, dst) < 0)
			return op_failed(&d, "writing", dst, err);
		if (stat(src, &st) == 0 && guestfs_chmod(d.g, (int)(st.st_mode & 07777), dst) < 0)
			return op_failed(&d, "chmod", dst, err);
	}
	return disk_finish(&d, err);
}

/* A relative name without a ".." component. */
static bool name_ok(const char *n)
{
	if (n[0] == '/')
		return false;
	for (const char *p = n; (p = strstr(p, "..")); p += 2)
		if ((p == n || p[-1] == '/') && (p[2] == '\0' || p[2] == '/'))
			return false;
	return true;
}

/*
 * A tree out of the image, unpacked on the host as if the archive were
 * hostile, into the directory open at dirfd (dir: its name, for messages).
 */
static int unpack_tree(const char *tar, int dirfd, const char *dir, struct vn_error *err)
{
	/*
	 * Names are made absolute under the directory's path as the kernel has
	 * it for the descriptor: no symlink in it (the user's own or an earlier
	 * extract's), so libarchive's symlink check can refuse every one below.
	 */
	char fdpath[64], real[PATH_MAX];
	snprintf(fdpath, sizeof(fdpath), "/proc/self/fd/%d", dirfd);
	ssize_t n = readlink(fdpath, real, sizeof(real) - 1);
	if (n < 0)
		return vn_infra_error(err, -errno, "%s: %s", dir, strerror(errno));
	real[n] = '\0';
	struct archive *a = archive_read_new(), *w = archive_write_disk_new();
	struct archive_entry *e;
	int rc = 0, r;

	archive_read_support_format_tar(a);
	archive_write_disk_set_options(w, ARCHIVE_EXTRACT_SECURE_SYMLINKS | ARCHIVE_EXTRACT_SECURE_NODOTDOT |
						  ARCHIVE_EXTRACT_TIME | ARCHIVE_EXTRACT_PERM |
						  ARCHIVE_EXTRACT_NO_OVERWRITE);
	if (archive_read_open_filename(a, tar, 1 << 16) != ARCHIVE_OK) {
		rc = vn_infra_error(err, -EIO, "%s: %s", tar, archive_error_string(a));
		goto cleanup;
	}
	while ((r = archive_read_next_header(a, &e)) == ARCHIVE_OK) {
		const char *name = archive_entry_pathname(e);
		const char *hard = archive_entry_hardlink(e);
		if (!name || !name_ok(name) || (hard && !name_ok(hard))) {
			rc = vn_input_error(err, "the image's tree has an unsafe name '%s'", name ? name : "");
			goto cleanup;
		}
		while (name[0] == '.' && name[1] == '/')
			name += 2;
		if (!*name || strcmp(name, ".") == 0)
			continue;
		_cleanup_free_ char *full = vn_xasprintf("%s/%s", real, name);
		/* Devices and FIFOs are of no use after the fact; setuid bits neither. */
		mode_t type = archive_entry_filetype(e);
		if (type != AE_IFREG && type != AE_IFDIR && type != AE_IFLNK)
			continue;
		archive_entry_set_perm(e, archive_entry_perm(e) & 0777);
		archive_entry_set_pathname(e, full);
		if (hard) {
			_cleanup_free_ char *hl = vn_xasprintf("%s/%s", real, hard);
			archive_entry_set_hardlink(e, hl);
		}
		if (archive_write_header(w, e) < ARCHIVE_WARN) {
			rc = vn_infra_error(err, -EIO, "%s: %s", full, archive_error_string(w));
			goto cleanup;
		}
		const void *buf;
		size_t len;
		int64_t off;
		while ((r = archive_read_data_block(a, &buf, &len, &off)) == ARCHIVE_OK)
			if (archive_write_data_block(w, buf, len, off) < ARCHIVE_OK) {
				rc = vn_infra_error(err, -EIO, "%s: %s", full, archive_error_string(w));
				goto cleanup;
			}
		archive_write_finish_entry(w);
	}
	if (r != ARCHIVE_EOF)
		rc = vn_infra_error(err, -EIO, "%s: %s", tar, archive_error_string(a));
cleanup:
	archive_read_free(a);
	archive_write_free(w);
	return rc;
}

int vn_disk_extract(const char *image, const char *const *paths, const char *dir, bool missing_ok, unsigned *missing,
		    const struct vn_disk_opts *o, struct vn_error *err)
{
	_cleanup_disk_ struct disk d = {0};
	int rc;

	if (missing)
		*missing = 0;
	for (const char *const *p = paths; p && *p; p++)
		if ((rc = check_guest_path(image, "path", *p, err)) < 0)
			return rc;
	if (access(image, R_OK) < 0)
		return vn_input_error(err, "%s: %s", image, strerror(errno));
	if ((rc = disk_handle(&d, image, vn_disk_format(image), true, o, err)) < 0 ||
	    (rc = disk_launch(&d, o, err)) < 0 || (rc = disk_mount(&d, true, err)) < 0)
		return rc;
	/* A missing path fails the command before anything is written on the host. */
	for (const char *const *p = paths; !missing_ok && p && *p; p++)
		if (guestfs_exists(d.g, *p) <= 0)
			return vn_input_error(err, "%s: %s: no such file or directory in the image", image, *p);
	if ((rc = vn_mkdir_p(dir, 0755, err)) < 0)
		return rc;
	/*
	 * DIR is the user's; everything beneath it is reached from its descriptor
	 * one component at a time, never through a symlink: the trees unpacked
	 * here keep the image's symlinks (/var/log/d -> /etc), and a later PATH,
	 * or a later extract into DIR, must not write through them.
	 */
	_cleanup_close_ int dfd = open(dir, O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (dfd < 0)
		return vn_infra_error(err, -errno, "%s: %s", dir, strerror(errno));
	for (const char *const *p = paths; p && *p; p++) {
		/* "/var/log/" and "/var/log" land in the same place. */
		_cleanup_free_ char *path = vn_xstrdup(*p);
		for (size_t n = strlen(path); n > 1 && path[n - 1] == '/'; n--)
			path[n - 1] = '\0';
		if (guestfs_exists(d.g, path) <= 0) {
			if (missing_ok) {
				(*missing)++;
				continue;
			}
			return vn_input_error(err, "%s: %s: no such file or directory in the image", image, path);
		}
		_cleanup_free_ char *out = vn_xasprintf("%s%s", dir, path);
		const char *slash = strrchr(path, '/'), *base = slash + 1;
		_cleanup_free_ char *parent = vn_xstrndup(path, (size_t)(slash - path));
		if (guestfs_is_dir(d.g, path) > 0) {
			_cleanup_close_ int ofd = vn_dir_beneath(dfd, dir, path, true, 0755, err);
			if (ofd < 0)
				return vn_error_prefix(err, "%s: extracting %s", image, path);
			char tmp[] = "/tmp/vnuma-extract-XXXXXX";
			_cleanup_close_ int fd = mkstemp(tmp);
			if (fd < 0)
				return vn_infra_error(err, -errno, "temporary file: %s", strerror(errno));
			rc = guestfs_tar_out(d.g, path, tmp) < 0 ? op_failed(&d, "reading", path, err) : 0;
			if (rc == 0)
				rc = unpack_tree(tmp, ofd, out, err);
			unlink(tmp);
			if (rc < 0)
				return rc;
		} else if (guestfs_is_file(d.g, path) > 0) {
			_cleanup_close_ int pfd = vn_dir_beneath(dfd, dir, parent, true, 0755, err);
			if (pfd < 0)
				return vn_error_prefix(err, "%s: extracting %s", image, path);
			/* Our own fresh file, written through its descriptor: libguestfs opens /dev/fd/N, not a name. */
			_cleanup_close_ int fd = openat(
				pfd, base, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC | O_NOCTTY, 0666);
			if (fd < 0 && errno == EEXIST)
				return vn_input_error(err, "%s exists already; extract into an empty directory", out);
			if (fd < 0)
				return vn_infra_error(err, -errno, "%s: %s", out, strerror(errno));
			char fdpath[64];
			snprintf(fdpath, sizeof(fdpath), "/dev/fd/%d", fd);
			if (guestfs_download(d.g, path, fdpath) < 0) {
				unlinkat(pfd, base, 0);
				return op_failed(&d, "reading", path, err);
			}
		} else {
			return vn_input_error(err, "%s: %s is neither a regular file nor a directory", image, path);
		}
	}
	return disk_finish(&d, err);
}

int vn_disk_create(const char *image, uint64_t size, const char *label, const char *root_tar,
		   const struct vn_disk_opts *o, struct vn_error *err)
{
	_cleanup_disk_ struct disk d = {0};
	int rc;

	if ((rc = disk_handle(&d, image, NULL, false, o, err)) < 0)
		return rc;
	if (guestfs_disk_create(d.g, image, "qcow2", (int64_t)size, -1) < 0)
		return vn_infra_error(err, -EIO, "%s: creating the image: %s", image, last_error(&d));
	if (guestfs_add_drive_opts(d.g, image, GUESTFS_ADD_DRIVE_OPTS_FORMAT, "qcow2", -1) < 0)
		return vn_infra_error(err, -EIO, "%s: %s", image, last_error(&d));
	if ((rc = disk_launch(&d, o, err)) < 0)
		return rc;
	if (guestfs_mkfs_opts(d.g, "ext4", "/dev/sda", GUESTFS_MKFS_OPTS_LABEL, label, -1) < 0)
		return op_failed(&d, "mkfs.ext4 on", "/dev/sda", err);
	if (guestfs_mount(d.g, "/dev/sda", "/") < 0)
		return op_failed(&d, "mounting", "/dev/sda", err);
	if (guestfs_tar_in(d.g, root_tar, "/") < 0)
		return op_failed(&d, "unpacking the root into", "/", err);
	static const char fstab[] = "# made by vnuma image build: the root is the whole virtio disk\n"
				    "/dev/vda / ext4 defaults 0 1\n";
	if (guestfs_mkdir_p(d.g, "/etc") < 0 || guestfs_write(d.g, "/etc/fstab", fstab, sizeof(fstab) - 1) < 0)
		return op_failed(&d, "writing", "/etc/fstab", err);
	return disk_finish(&d, err);
}

int vn_disk_overlay(const char *backing, const char *path, struct vn_error *err)
{
	_cleanup_disk_ struct disk d = {0};
	int rc;

	if ((rc = disk_handle(&d, path, NULL, false, NULL, err)) < 0)
		return rc;
	/* guestfs_disk_create runs qemu-img; no appliance. */
	if (guestfs_disk_create(d.g, path, "qcow2", -1, GUESTFS_DISK_CREATE_BACKINGFILE, backing,
				GUESTFS_DISK_CREATE_BACKINGFORMAT, vn_disk_format(backing), -1) < 0)
		return vn_infra_error(err, -EIO, "%s: creating the overlay over %s: %s", path, backing, last_error(&d));
	return 0;
}

int vn_archive_to_tar(const char *src, const char *tar_path, struct vn_error *err)
{
	struct archive *a = archive_read_new(), *w = archive_write_new();
	struct archive_entry *e;
	int rc = 0, r;

	archive_read_support_filter_all(a);
	archive_read_support_format_all(a);
	archive_write_set_format_pax_restricted(w);
	if (archive_read_open_filename(a, src, 1 << 16) != ARCHIVE_OK) {
		rc = vn_infra_error(err, -EIO, "%s: %s", src, archive_error_string(a));
		goto cleanup;
	}
	if (archive_write_open_filename(w, tar_path) != ARCHIVE_OK) {
		rc = vn_infra_error(err, -EIO, "%s: %s", tar_path, archive_error_string(w));
		goto cleanup;
	}
	while ((r = archive_read_next_header(a, &e)) == ARCHIVE_OK) {
		if (archive_write_header(w, e) < ARCHIVE_WARN) {
			rc = vn_infra_error(err, -EIO, "%s: %s", tar_path, archive_error_string(w));
			goto cleanup;
		}
		char buf[1 << 16];
		la_ssize_t n;
		while ((n = archive_read_data(a, buf, sizeof(buf))) > 0)
			if (archive_write_data(w, buf, (size_t)n) != n) {
				rc = vn_infra_error(err, -EIO, "%s: %s", tar_path, archive_error_string(w));
				goto cleanup;
			}
		if (n < 0) {
			r = (int)n;
			break;
		}
	}
	if (r != ARCHIVE_EOF)
		rc = vn_infra_error(err, -EIO, "%s: %s", src, archive_error_string(a));
	else if (archive_write_close(w) != ARCHIVE_OK)
		rc = vn_infra_error(err, -EIO, "%s: %s", tar_path, archive_error_string(w));
cleanup:
	archive_read_free(a);
	archive_write_free(w);
	return rc;
}
