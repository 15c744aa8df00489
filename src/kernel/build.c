/*
 * Source builds, the orchestration: extract once per source identity
 * (source.c), patch a hardlink farm (patch.c), configure once per (source,
 * config) (config.c), make out of tree, install into a content-addressed
 * folder (cache.c). Every program runs through vn_spawn_run with an
 * explicit argv: paths from recipes never meet a shell.
 */
#include "kernel/build.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include "kernel/kernel-priv.h"
#include "util/alloc.h"
#include "util/cleanup.h"
#include "util/clock.h"
#include "util/dir.h"
#include "util/spawn.h"
#include "util/file.h"

void vn_kernel_say(const struct vn_kernel_work *w, const char *stage, const char *line)
{
	if (w->o->progress)
		w->o->progress(w->o->progress_data, stage, line);
}

bool vn_kernel_in_path(const char *tool)
{
	const char *path = getenv("PATH");
	_cleanup_free_ char *copy = vn_xstrdup(path && *path ? path : "/usr/bin:/bin");
	char *save = NULL;

	for (char *d = strtok_r(copy, ":", &save); d; d = strtok_r(NULL, ":", &save)) {
		char buf[PATH_MAX];
		snprintf(buf, sizeof(buf), "%s/%s", d, tool);
		if (access(buf, X_OK) == 0)
			return true;
	}
	return false;
}

/*
 * Lines that say a step failed for the machine's sake, not the source's: the
 * disk filled, or a compiler under make was killed (the OOM killer's SIGKILL
 * shows only here: make itself exits 2). dash says "Killed", make "Error 137".
 */
static const char *const killed_says[] = {
	"internal compiler error: Killed",
	"Killed signal terminated program",
	"terminated with signal 9",
	"signal 9",
	"Error 137",
	"Error 143",
};

static bool ends_with_word(const char *l, const char *w)
{
	size_t n = strlen(l), m = strlen(w);
	while (n && (l[n - 1] == ' ' || l[n - 1] == '\t'))
		n--;
	return n >= m && strncmp(l + n - m, w, m) == 0 && (n == m || l[n - m - 1] == ' ' || l[n - m - 1] == ']');
}

void vn_kernel_watch_line(void *data, const char *line)
{
	struct vn_kernel_watch *m = data;
	if (!m->nospace[0] && strstr(line, "No space left on device"))
		snprintf(m->nospace, sizeof(m->nospace), "%s", line);
	for (size_t i = 0; !m->killed[0] && i < VN_ARRAY_SIZE(killed_says); i++)
		if (strstr(line, killed_says[i]))
			snprintf(m->killed, sizeof(m->killed), "%s", line);
	if (!m->killed[0] && (ends_with_word(line, "Killed") || ends_with_word(line, "Terminated")))
		snprintf(m->killed, sizeof(m->killed), "%s", line);
	if (m->stage)
		vn_kernel_say(m->w, m->stage, line);
}

/* Under 1 MiB or no inode left where the build writes: what fails next is the disk, whatever the log says. */
static bool disk_full(const char *dir, char *say, size_t cap)
{
	struct statvfs sv;
	if (statvfs(dir, &sv) < 0)
		return false;
	unsigned long long avail = (unsigned long long)sv.f_bavail * sv.f_frsize;
	if (avail < (1ull << 20)) {
		snprintf(say, cap, "%llu KiB free", avail >> 10);
		return true;
	}
	if (sv.f_files && !sv.f_favail) {
		snprintf(say, cap, "no inode free");
		return true;
	}
	return false;
}

int vn_kernel_step_failed(const struct vn_kernel_watch *m, const char *what, int status, struct vn_error *err)
{
	const struct vn_kernel_work *w = m->w;
	char fs[64];

	if (m->nospace[0] || disk_full(w->obj, fs, sizeof(fs)) || disk_full(w->dir, fs, sizeof(fs)))
		return vn_infra_error(err, -ENOSPC,
				      "%s: %s failed: the disk is full (%s, on the filesystem of %s): free space, "
				      "then build again",
				      w->r->name, what, m->nospace[0] ? m->nospace : fs, w->obj);
	if (m->killed[0])
		return vn_infra_error(err, -ECHILD,
				      "%s: %s failed: a program it ran was killed (%s), the OOM killer's doing if "
				      "no one else's: build again, with fewer jobs if memory is short",
				      w->r->name, what, m->killed);
	return vn_input_error(err, "%s: %s failed (exit %d)", w->r->name, what, status);
}

int vn_kernel_make(const struct vn_kernel_work *w, const char *stage, const char *target, int jobs,
		   struct vn_error *err)
{
	char o_arg[PATH_MAX + 8], j_arg[32], arch_arg[64], cross_arg[128], cc_arg[160], what[96];
	struct vn_kernel_watch mw = {.w = w, .stage = w->o->progress ? stage : NULL};
	struct vn_spawn_opts so = {.cwd = w->src, .log_fd = w->log_fd, .line = vn_kernel_watch_line, .line_data = &mw};
	const struct vn_arch_info *ai = vn_arch_info(w->o->arch);
	const char *argv[8] = {"make", o_arg, j_arg};
	size_t a = 3;

	snprintf(o_arg, sizeof(o_arg), "O=%s", w->obj);
	snprintf(j_arg, sizeof(j_arg), "-j%d", jobs);
	/* Another architecture: the kernel's name for it and Debian's cross compiler (gcc-TRIPLET). */
	if (w->o->arch != vn_arch_host()) {
		snprintf(arch_arg, sizeof(arch_arg), "ARCH=%s", ai->karch);
		snprintf(cross_arg, sizeof(cross_arg), "CROSS_COMPILE=%s-", ai->triplet);
		argv[a++] = arch_arg;
		argv[a++] = cross_arg;
	}
	/* Where installed, ccache keeps what a bisection's or a rebuild's steps compiled once. */
	if (vn_kernel_in_path("ccache")) {
		snprintf(cc_arg, sizeof(cc_arg), "CC=ccache %s%sgcc", w->o->arch != vn_arch_host() ? ai->triplet : "",
			 w->o->arch != vn_arch_host() ? "-" : "");
		argv[a++] = cc_arg;
	}
	argv[a++] = target;
	argv[a] = NULL;
	int rc = vn_spawn_run(argv, &so, err);
	snprintf(what, sizeof(what), "make %s", target);
	return rc > 0 ? vn_kernel_step_failed(&mw, what, rc, err) : rc;
}

static int check_tools(const struct vn_recipe *r, enum vn_arch arch, struct vn_error *err)
{
	static const struct {
		const char *tool, *pkg;
	} tools[] = {
		{"gcc", "gcc"}, {"make", "make"},   {"flex", "flex"}, {"bison", "bison"},
		{"bc", "bc"},   {"patch", "patch"}, {"tar", "tar"},   {"perl", "perl"},
	};
	struct vn_strbuf missing = VN_STRBUF_INIT, pkgs = VN_STRBUF_INIT;

	for (size_t i = 0; i < VN_ARRAY_SIZE(tools); i++)
		if (!vn_kernel_in_path(tools[i].tool)) {
			vn_strbuf_printf(&missing, "%s%s (Debian package %s)", missing.len ? ", " : "", tools[i].tool,
					 tools[i].pkg);
			vn_strbuf_printf(&pkgs, " %s", tools[i].pkg);
		}
	if (r->tree_kind == VN_TREE_TARBALL && strstr(r->tree_path, ".xz") && !vn_kernel_in_path("xz")) {
		vn_strbuf_printf(&missing, "%sxz (Debian package xz-utils)", missing.len ? ", " : "");
		vn_strbuf_printf(&pkgs, " xz-utils");
	}
	if (arch != vn_arch_host()) {
		const char *t = vn_arch_info(arch)->triplet;
		_cleanup_free_ char *gcc = vn_xasprintf("%s-gcc", t);
		if (!vn_kernel_in_path(gcc)) {
			vn_strbuf_printf(&missing, "%s%s (Debian package gcc-%s)", missing.len ? ", " : "", gcc, t);
			vn_strbuf_printf(&pkgs, " gcc-%s", t);
		}
	}
	if (r->tree_kind == VN_TREE_GIT && !vn_kernel_in_path("git")) {
		vn_strbuf_printf(&missing, "%sgit (Debian package git)", missing.len ? ", " : "");
		vn_strbuf_printf(&pkgs, " git");
	}
	/* objtool links libelf; the certificate tools include OpenSSL headers. */
	if (access("/usr/include/libelf.h", F_OK) != 0 && access("/usr/include/gelf.h", F_OK) != 0) {
		vn_strbuf_printf(&missing, "%slibelf.h (Debian package libelf-dev)", missing.len ? ", " : "");
		vn_strbuf_printf(&pkgs, " libelf-dev");
	}
	if (access("/usr/include/openssl/opensslv.h", F_OK) != 0) {
		vn_strbuf_printf(&missing, "%sopenssl/opensslv.h (Debian package libssl-dev)", missing.len ? ", " : "");
		vn_strbuf_printf(&pkgs, " libssl-dev");
	}
	int rc = 0;
	if (missing.len)
		rc = vn_infra_error(err, -ENOENT, "building kernels needs: %s; install with: apt-get install%s",
				    missing.s, pkgs.s);
	vn_strbuf_free(&missing);
	vn_strbuf_free(&pkgs);
	return rc;
}

char *vn_kernel_log_tail(const char *path, int nlines)
{
	_cleanup_free_ char *s = NULL;
	size_t len = 0;
	if (vn_file_read(path, VN_FILE_STATE_MAX, &s, &len, NULL) < 0 || !len)
		return NULL;
	const char *p = s + len;
	while (p > s && nlines >= 0) {
		p--;
		if (*p == '\n')
			nlines--;
	}
	return vn_xstrdup(p == s ? p : p + 1);
}

/* The build proper, with the lock held: worktree, patches, config, make, install into final. */
static int build_locked(const struct vn_kernel_work *w, const char *sid, const char *commit, const char *diff,
			const char *chash, const char *phash, int jobs, const char *staging, const char *final,
			double t0, struct vn_kernel_built *b, struct vn_error *err)
{
	struct vn_kernel_work wt = *w;
	_cleanup_free_ char *pristine = NULL;
	int rc;

	if (w->r->tree_kind == VN_TREE_GIT) {
		if ((rc = vn_kernel_source_checkout(&wt, commit, diff, err)) < 0)
			return rc;
	} else {
		if ((rc = vn_kernel_source_extract(&wt, sid, &pristine, err)) < 0)
			return rc;
		wt.pristine = pristine;
		if ((rc = vn_kernel_source_worktree(&wt, err)) < 0)
			return rc;
	}
	if ((rc = vn_mkdir_p(wt.obj, 0755, err)) < 0)
		return rc;
	if ((rc = vn_kernel_patches_sync(&wt, phash, err)) < 0 ||
	    (rc = vn_kernel_configure(&wt, chash, jobs, err)) < 0 || (rc = vn_kernel_config_check(&wt, err)) < 0)
		return rc;
	if ((rc = vn_kernel_make(&wt, "build", vn_arch_info(w->o->arch)->kimage, jobs, err)) < 0)
		return rc;
	/* The gdb scripts are "all"'s, not the image's: constants.py is generated from the .config. */
	if (w->debug && (rc = vn_kernel_make(&wt, "build", "scripts_gdb", jobs, err)) < 0)
		return rc;
	vn_kernel_say(&wt, "install", NULL);
	b->build_s = vn_now_s() - t0;
	return vn_kernel_cache_install(&wt, staging, final, b, err);
}

/* The cached kernel of key, as r's, when its entry is whole; a broken one is moved aside (and said) for a rebuild. */
static int serve_cached(const struct vn_recipe *r, const char *key, const char *final,
			const struct vn_kernel_build_opts *o, struct vn_kernel_built **out)
{
	_cleanup_kernel_built_ struct vn_kernel_built *b = NULL;
	_cleanup_free_ char *why = NULL;

	if (vn_kernel_cache_get(final, key, &b, &why) < 0) {
		if (why && o->progress)
			o->progress(o->progress_data, "cache", why);
		return -ENOENT;
	}
	free(b->recipe);
	free(b->recipe_path);
	b->recipe = vn_xstrdup(r->name);
	b->recipe_path = vn_xstrdup_or_null(r->path);
	b->cached = true;
	*out = steal_pointer(&b);
	return 0;
}

int vn_kernel_build(const struct vn_recipe *r, const struct vn_kernel_build_opts *o, struct vn_kernel_built **out,
		    struct vn_error *err)
{
	char key[VN_SHA256_HEX_LEN + 1], chash[VN_SHA256_HEX_LEN + 1], phash[VN_SHA256_HEX_LEN + 1];
	char sid[VN_SHA256_HEX_LEN + 1], commit[VN_GIT_HASH_MAX + 1];
	_cleanup_free_ char *srcdir = NULL, *kdir = NULL, *final = NULL, *staging = NULL, *wdir = NULL;
	_cleanup_free_ char *src = NULL, *obj = NULL, *diff = NULL, *lock = NULL, *log = NULL, *failed = NULL;
	_cleanup_close_ int lock_fd = -1, log_fd = -1;
	_cleanup_kernel_built_ struct vn_kernel_built *b = NULL;
	double t0 = vn_now_s(); /* build_s counts from the call, hashing and waiting for the lock included */
	int rc, jobs = o->jobs > 0 ? o->jobs : (int)sysconf(_SC_NPROCESSORS_ONLN);
	bool debug = r->debug || o->debug;

	if (r->type != VN_RECIPE_SOURCE)
		return vn_input_error(err, "%s: only \"source\" recipes are built", r->path);
	if (!o->cache_dir)
		return vn_input_error(err, "no kernel cache directory");
	srcdir = vn_xasprintf("%s/src", o->cache_dir);
	if ((rc = vn_mkdir_p(srcdir, 0755, err)) < 0)
		return rc;

	if ((rc = vn_kernel_source_id(r, o->rev, o->cache_dir, sid, &diff, commit, err)) < 0 ||
	    (rc = vn_kernel_cache_key(r, o->arch, debug, sid, key, chash, err)) < 0 ||
	    (rc = vn_kernel_patches_hash(r, phash, err)) < 0)
		return rc;
	kdir = vn_xasprintf("%s/kernels", o->cache_dir);
	final = vn_xasprintf("%s/%.16s", kdir, key);
	if (serve_cached(r, key, final, o, out) == 0)
		return 0;
	if ((rc = check_tools(r, o->arch, err)) < 0)
		return rc;
	vn_kernel_cache_sweep(kdir);

	if (r->tree_kind == VN_TREE_GIT) {
		char th[VN_SHA256_HEX_LEN + 1];
		uint8_t d[VN_SHA256_LEN];
		struct vn_sha256 c;
		vn_sha256_init(&c);
		vn_kernel_hash_str(&c, r->tree_path);
		vn_sha256_final(&c, d);
		vn_sha256_hex(d, th);
		wdir = vn_xasprintf("%s/work/git-%.16s-%.16s", o->cache_dir, th, chash);
	} else {
		wdir = vn_xasprintf("%s/work/%.16s-%.16s", o->cache_dir, sid, chash);
	}
	src = vn_xasprintf("%s/src", wdir);
	obj = vn_xasprintf("%s/obj", wdir);
	lock = vn_xasprintf("%s.lock", wdir);
	staging = vn_xasprintf("%s/.tmp-%.16s-%d", kdir, key, (int)getpid());
	log = vn_xasprintf("%s/build.log", staging);
	failed = vn_xasprintf("%s/failed-%.16s.log", kdir, key);
	if ((rc = vn_mkdir_p(wdir, 0755, err)) < 0 || (rc = vn_mkdir_p(staging, 0755, err)) < 0)
		return rc;
	/* One build per (source, config) worktree at a time; other builds wait. */
	if ((lock_fd = open(lock, O_RDWR | O_CREAT | O_CLOEXEC, 0644)) < 0 || flock(lock_fd, LOCK_EX) < 0)
		return vn_infra_error(err, -errno, "%s: %s", lock, strerror(errno));
	/* Whoever held the lock before may have built this very key meanwhile. */
	if (serve_cached(r, key, final, o, out) == 0) {
		vn_rm_rf(staging);
		return 0;
	}
	if ((log_fd = open(log, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644)) < 0)
		return vn_infra_error(err, -errno, "%s: %s", log, strerror(errno));
	dprintf(log_fd, "vnuma kernel build: recipe %s, arch %s%s, key %s\n", r->path, vn_arch_name(o->arch),
		debug ? ", with debug info" : "", key);

	b = vn_kernel_built_new(r);
	b->key = vn_xstrdup(key);
	b->config_hash = vn_xstrdup(chash);
	b->source_id = vn_xstrdup(sid);
	b->commit = commit[0] ? vn_xstrdup(commit) : NULL;
	const struct vn_kernel_work w = {.r = r,
					 .cf = vn_recipe_config_for(r, o->arch),
					 .o = o,
					 .src = src,
					 .obj = obj,
					 .dir = wdir,
					 .log_fd = log_fd,
					 .debug = debug};
	rc = build_locked(&w, sid, commit, diff, chash, phash, jobs, staging, final, t0, b, err);
	if (rc < 0) {
		/* Keep the log where the user can read it; the half-built staging folder goes. */
		if (access(log, F_OK) == 0 && rename(log, failed) == 0 && err && err->kind == VN_ERR_INPUT &&
		    !err->detail) {
			_cleanup_free_ char *t = vn_kernel_log_tail(failed, 25);
			if (t)
				vn_error_set_detail(err, t);
		}
		if (err && err->kind != VN_ERR_NONE)
			vn_error_prefix(err, "kernel %s (log: %s)", r->name, failed);
		vn_rm_rf(staging);
		return rc;
	}
	vn_kernel_built_free(steal_pointer(&b));
	if ((rc = vn_kernel_cache_load(final, &b)) < 0)
		return vn_infra_error(err, rc, "%s: installed kernel not readable", final);
	free(b->recipe);
	b->recipe = vn_xstrdup(r->name);
	*out = steal_pointer(&b);
	return 0;
}
