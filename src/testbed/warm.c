/* Booted snapshots: their key, their files under CACHE/warm, their lock and their cap (warm.h). */
#include "testbed/warm.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "util/alloc.h"
#include "util/cleanup.h"
#include "util/clock.h"
#include "util/dir.h"
#include "util/interrupt.h"
#include "util/parse.h"
#include "util/sha256.h"
#include "util/state.h"
#include "util/strbuf.h"

/*
 * Bump when what a snapshot holds changes meaning: every older one is then
 * another key. 2: the device set holds VN_AGENT_NPORTS agent channels, and a
 * snapshot restores its own; one from before had a single channel.
 */
#define WARM_KEY_VERSION 2

int vn_warm_key(const struct vn_warm_key_in *in, char hex[VN_WARM_KEY_LEN + 1], struct vn_error *err)
{
	/* Stand-ins for the guest's own paths: the same for every guest, so only the machine counts. */
	struct vn_domain_opts o = {
		.name = "vnuma-warm",
		.arch = in->arch,
		.accel = in->accel,
		.kernel = "/warm/kernel",
		.initrd = "/warm/initrd",
		.loader = in->loader_sha256 ? "/warm/loader" : NULL,
		.cmdline = in->cmdline,
		.console_log = "/warm/guest/console.log",
		.console_pipe = "/warm/guest/console.pipe",
		.agent_socket = "/warm/guest/agent.sock",
		.disk_dir = "/warm/guest",
		.qemu_args = in->qemu_args,
		.nqemu_args = in->nqemu_args,
		.shares = in->shares,
		.nshares = in->nshares,
		.meta = {.topology_name = in->t->name},
	};
	_cleanup_free_ char *xml = NULL;
	_cleanup_strbuf_ struct vn_strbuf b = VN_STRBUF_INIT;
	uint8_t digest[VN_SHA256_LEN];
	int rc;

	if ((rc = vn_domain_xml_build(in->t, &o, &xml, err)) < 0)
		return vn_error_prefix(err, "the snapshot key's domain XML");
	vn_strbuf_printf(&b, "vnuma warm %d\nkernel %s\ninitrd %s\nloader %s\nqemu %lu\n", WARM_KEY_VERSION,
			 in->kernel_sha256, in->initrd_sha256, in->loader_sha256 ? in->loader_sha256 : "-",
			 in->qemu_version);
	vn_strbuf_printf(&b, "%s", xml);
	struct vn_sha256 c;
	vn_sha256_init(&c);
	vn_sha256_update(&c, b.s, b.len);
	vn_sha256_final(&c, digest);
	vn_sha256_hex(digest, hex);
	return 0;
}

int vn_warm_cache_max(uint64_t *max, struct vn_error *err)
{
	const char *env = getenv("VNUMA_WARM_CACHE_MAX");

	*max = VN_WARM_CACHE_MAX;
	if (!env || !*env)
		return 0;
	if (strcmp(env, "0") == 0) {
		*max = 0;
		return 0;
	}
	if (vn_size_parse_range(env, 1, UINT64_C(1) << 50, max, err) < 0)
		return vn_error_prefix(err, "$VNUMA_WARM_CACHE_MAX");
	return 0;
}

int vn_warm_open(const char *cache, const char *key, struct vn_warm *w, struct vn_error *err)
{
	_cleanup_free_ char *dir = vn_cache_warm_dir(cache);
	int rc;

	memset(w, 0, sizeof(*w));
	w->lock_fd = -1;
	if ((rc = vn_mkdir_p(dir, 0700, err)) < 0)
		return rc;
	snprintf(w->key, sizeof(w->key), "%s", key);
	w->cache = vn_xstrdup(cache);
	w->save = vn_cache_warm_file(cache, key, VN_WARM_SAVE);
	w->console = vn_cache_warm_file(cache, key, VN_WARM_CONSOLE);
	w->lock = vn_cache_warm_file(cache, key, VN_WARM_LOCK);
	return 0;
}

void vn_warm_clear(struct vn_warm *w)
{
	if (w->lock_fd >= 0)
		close(w->lock_fd); /* the lock goes with it */
	vn_free_all(w->cache, w->save, w->console, w->lock);
	memset(w, 0, sizeof(*w));
	w->lock_fd = -1;
}

bool vn_warm_ready(const struct vn_warm *w)
{
	struct stat sb;

	return w->save && lstat(w->save, &sb) == 0 && S_ISREG(sb.st_mode) && sb.st_size > 0;
}

/*
 * Try once to take the lock file at path. Prune unlinks a dropped snapshot's
 * lock while holding it, so a lock taken on a file no longer at path is no lock:
 * it is given up and the caller tries again. 1: held in *fd; 0: busy; <0: -errno.
 */
static int warm_lock_try(const char *path, int *fd)
{
	struct stat a, b;

	for (;;) {
		int f = open(path, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600);
		if (f < 0)
			return -errno;
		if (flock(f, LOCK_EX | LOCK_NB) < 0) {
			int e = errno;
			close(f);
			return e == EWOULDBLOCK || e == EINTR ? 0 : -e;
		}
		if (fstat(f, &a) == 0 && lstat(path, &b) == 0 && a.st_dev == b.st_dev && a.st_ino == b.st_ino) {
			*fd = f;
			return 1;
		}
		close(f);
	}
}

int vn_warm_lock(struct vn_warm *w, double until, struct vn_error *err)
{
	int fd = -1, rc;

	if (w->lock_fd >= 0)
		return 0;
	while ((rc = warm_lock_try(w->lock, &fd)) == 0) {
		if (vn_was_interrupted())
			return vn_infra_error(err, -EINTR, "interrupted");
		if (vn_now_s() > until)
			return vn_infra_error(err, -ETIMEDOUT, "another process still makes snapshot %.16s", w->key);
		usleep(200 * 1000);
	}
	if (rc < 0)
		return vn_infra_error(err, rc, "cannot lock %s: %s", w->lock, strerror(-rc));
	w->lock_fd = fd;
	return 0;
}

void vn_warm_unlock(struct vn_warm *w)
{
	if (w->lock_fd >= 0)
		close(w->lock_fd);
	w->lock_fd = -1;
}

void vn_warm_touch(const struct vn_warm *w)
{
	utimensat(AT_FDCWD, w->save, NULL, AT_SYMLINK_NOFOLLOW);
}

void vn_warm_drop(const struct vn_warm *w)
{
	unlink(w->save);
	unlink(w->console);
}

static bool is_key(const char *s, size_t len)
{
	if (len != VN_WARM_KEY_LEN)
		return false;
	for (size_t i = 0; i < len; i++)
		if (!isxdigit((unsigned char)s[i]) || isupper((unsigned char)s[i]))
			return false;
	return true;
}

static int entry_cmp(const void *a, const void *b)
{
	const struct vn_warm_entry *x = a, *y = b;

	return x->used < y->used ? -1 : x->used > y->used ? 1 : strcmp(x->key, y->key);
}

static uint64_t disk_bytes(int dirfd, const char *name)
{
	struct stat sb;

	return fstatat(dirfd, name, &sb, AT_SYMLINK_NOFOLLOW) == 0 && S_ISREG(sb.st_mode) ? (uint64_t)sb.st_blocks * 512
											  : 0;
}

int vn_warm_list(const char *cache, struct vn_warm_entry **out, size_t *n, struct vn_error *err)
{
	_cleanup_free_ char *dir = vn_cache_warm_dir(cache);
	struct vn_warm_entry *v = NULL;
	size_t k = 0, cap = 0;
	DIR *d = opendir(dir);

	*out = NULL;
	*n = 0;
	if (!d)
		return errno == ENOENT ? 0 : vn_infra_error(err, -errno, "cannot open %s: %s", dir, strerror(errno));
	for (struct dirent *e; (e = readdir(d));) {
		const char *dot = strrchr(e->d_name, '.');
		struct stat sb;
		if (!dot || strcmp(dot + 1, VN_WARM_SAVE) != 0 || !is_key(e->d_name, (size_t)(dot - e->d_name)) ||
		    fstatat(dirfd(d), e->d_name, &sb, AT_SYMLINK_NOFOLLOW) < 0 || !S_ISREG(sb.st_mode))
			continue;
		if (k == cap)
			v = vn_xreallocarray(v, cap = cap * 2 + 8, sizeof(*v));
		memcpy(v[k].key, e->d_name, VN_WARM_KEY_LEN);
		v[k].key[VN_WARM_KEY_LEN] = '\0';
		char console[VN_WARM_KEY_LEN + 16];
		snprintf(console, sizeof(console), "%s.%s", v[k].key, VN_WARM_CONSOLE);
		v[k].bytes = (uint64_t)sb.st_blocks * 512 + disk_bytes(dirfd(d), console);
		v[k].used = sb.st_mtim.tv_sec;
		k++;
	}
	closedir(d);
	if (k)
		qsort(v, k, sizeof(*v), entry_cmp);
	*out = v;
	*n = k;
	return 0;
}

/*
 * A snapshot being written is .KEY.save.PID, PID the writer's (util/state.h):
 * one whose writer is gone (killed mid-save) would never be listed, nor pruned.
 */
static void warm_prune_orphans(const char *cache)
{
	_cleanup_free_ char *dir = vn_cache_warm_dir(cache);
	DIR *d = opendir(dir);

	if (!d)
		return;
	for (struct dirent *e; (e = readdir(d));) {
		const char *name = e->d_name, *tail = name + 1 + VN_WARM_KEY_LEN;
		struct vn_error perr = {0};
		uint64_t pid;
		if (name[0] != '.' || strnlen(name, 1 + VN_WARM_KEY_LEN + 1) <= VN_WARM_KEY_LEN ||
		    !is_key(name + 1, VN_WARM_KEY_LEN) ||
		    strncmp(tail, "." VN_WARM_SAVE ".", strlen(VN_WARM_SAVE) + 2) ||
		    vn_count_parse(tail + strlen(VN_WARM_SAVE) + 2, 1, INT32_MAX, &pid, &perr) < 0) {
			vn_error_clear(&perr);
			continue;
		}
		if (kill((pid_t)pid, 0) < 0 && errno == ESRCH)
			unlinkat(dirfd(d), name, 0);
	}
	closedir(d);
}

int vn_warm_prune(const char *cache, uint64_t max, const char *keep, unsigned *removed, struct vn_error *err)
{
	struct vn_warm_entry *v = NULL;
	uint64_t total = 0;
	size_t n = 0;
	int rc;

	*removed = 0;
	warm_prune_orphans(cache);
	if ((rc = vn_warm_list(cache, &v, &n, err)) < 0)
		return rc;
	for (size_t i = 0; i < n; i++)
		total += v[i].bytes;
	for (size_t i = 0; i < n && total > max; i++) {
		if (keep && strcmp(v[i].key, keep) == 0)
			continue;
		/* One a boot is making or restoring from (it holds the lock) stays: the next prune may take it. */
		_cleanup_free_ char *lp = vn_cache_warm_file(cache, v[i].key, VN_WARM_LOCK);
		_cleanup_close_ int lfd = -1;
		if (warm_lock_try(lp, &lfd) <= 0)
			continue;
		struct vn_warm w = {.save = vn_cache_warm_file(cache, v[i].key, VN_WARM_SAVE),
				    .console = vn_cache_warm_file(cache, v[i].key, VN_WARM_CONSOLE)};
		vn_warm_drop(&w);
		free(w.save);
		free(w.console);
		/* Held, so a waiter finds its file gone and takes a new one (warm_lock_try). */
		unlink(lp);
		total -= v[i].bytes;
		(*removed)++;
	}
	free(v);
	return 0;
}
