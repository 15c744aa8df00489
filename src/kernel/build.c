/*
 * Source builds: extract once per source identity, patch a hardlink farm,
 * configure once per (source, config), make out of tree, install into a
 * content-addressed folder. Every program runs through posix_spawn with an
 * explicit argv: paths from recipes never meet a shell.
 */
#include "kernel/build.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <json-c/json.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "kernel/kernel-priv.h"
#include "kernel/kernel.h"
#include "util/cleanup.h"
#include "util/interrupt.h"

extern char **environ;

const char *const vn_kernel_required_options[] = {
	"CONFIG_NUMA", "CONFIG_ACPI_NUMA", "CONFIG_NUMA_BALANCING", "CONFIG_MIGRATION",
	"CONFIG_TRANSPARENT_HUGEPAGE", "CONFIG_HUGETLBFS", "CONFIG_ACPI_HMAT", "CONFIG_CGROUPS",
	"CONFIG_CGROUP_SCHED", "CONFIG_CPUSETS", "CONFIG_DEBUG_FS", "CONFIG_SERIAL_8250",
	"CONFIG_SERIAL_8250_CONSOLE", "CONFIG_VIRTIO_PCI", "CONFIG_VIRTIO_CONSOLE", "CONFIG_VIRTIO_BLK",
	"CONFIG_BLK_DEV_INITRD", "CONFIG_DEVTMPFS", "CONFIG_PROC_FS", "CONFIG_SYSFS", "CONFIG_TMPFS",
	"CONFIG_BINFMT_ELF", "CONFIG_BINFMT_SCRIPT", "CONFIG_FUTEX", "CONFIG_EPOLL", "CONFIG_PRINTK",
	NULL,
};

static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static bool exists(const char *p)
{
	return access(p, F_OK) == 0;
}

static int mkdir_p(const char *path)
{
	char buf[PATH_MAX];

	snprintf(buf, sizeof(buf), "%s", path);
	for (char *p = buf + 1; *p; p++) {
		if (*p != '/')
			continue;
		*p = '\0';
		if (mkdir(buf, 0755) < 0 && errno != EEXIST)
			return -errno;
		*p = '/';
	}
	return mkdir(buf, 0755) < 0 && errno != EEXIST ? -errno : 0;
}

static int read_file(const char *path, char **out, size_t *len)
{
	_cleanup_fclose_ FILE *f = fopen(path, "re");
	struct vn_strbuf b = VN_STRBUF_INIT;
	char buf[65536];
	size_t n;

	if (!f)
		return -errno;
	while ((n = fread(buf, 1, sizeof(buf), f)) > 0)
		vn_strbuf_append(&b, buf, n);
	if (ferror(f)) {
		vn_strbuf_free(&b);
		return -EIO;
	}
	if (len)
		*len = b.len;
	*out = vn_strbuf_steal(&b);
	return 0;
}

static int write_file(const char *path, const char *s)
{
	_cleanup_fclose_ FILE *f = fopen(path, "we");
	if (!f)
		return -errno;
	fputs(s, f);
	return fflush(f) == 0 && !ferror(f) ? 0 : -EIO;
}

/* A fresh copy (new inode, new mtime) so make sees the file as changed. */
static int copy_file(const char *from, const char *to)
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
	while ((n = read(in, buf, sizeof(buf))) > 0)
		if (write(out, buf, (size_t)n) != n)
			return -EIO;
	return n < 0 ? -errno : 0;
}

static int rm_rf(const char *path)
{
	const char *argv[] = {"rm", "-rf", "--", path, NULL};
	struct vn_error e = {0};
	int rc = vn_kernel_run(argv, NULL, -1, NULL, NULL, NULL, NULL, &e);
	vn_error_clear(&e);
	return rc == 0 ? 0 : -EIO;
}

/* ---- running programs ---- */

static char **child_env(void)
{
	size_t n = 0;
	for (char **e = environ; *e; e++)
		n++;
	char **env = calloc(n + 2, sizeof(char *));
	size_t j = 0;
	if (!env)
		return NULL;
	/* patch's messages are parsed, so they must not be translated. */
	for (char **e = environ; *e; e++)
		if (strncmp(*e, "LC_ALL=", 7) != 0 && strncmp(*e, "LANGUAGE=", 9) != 0)
			env[j++] = *e;
	env[j++] = "LC_ALL=C";
	env[j] = NULL;
	return env;
}

static void emit_lines(struct vn_strbuf *pending, const char *data, size_t n, vn_kernel_progress_fn progress,
		       void *pd, const char *stage)
{
	if (!progress)
		return;
	vn_strbuf_append(pending, data, n);
	char *start = pending->s, *nl;
	while ((nl = memchr(start, '\n', pending->len - (size_t)(start - pending->s)))) {
		*nl = '\0';
		progress(pd, stage, start);
		start = nl + 1;
	}
	size_t rest = pending->len - (size_t)(start - pending->s);
	memmove(pending->s, start, rest);
	pending->len = rest;
	pending->s[rest] = '\0';
}

int vn_kernel_run(const char *const *argv, const char *cwd, int log_fd, struct vn_strbuf *capture,
		  vn_kernel_progress_fn progress, void *progress_data, const char *stage, struct vn_error *err)
{
	_cleanup_free_ char **env = child_env();
	_cleanup_strbuf_ struct vn_strbuf pending = VN_STRBUF_INIT;
	posix_spawn_file_actions_t fa;
	posix_spawnattr_t at;
	int pfd[2], status = 0, rc;
	bool killed = false;
	pid_t pid;

	if (!env)
		return -ENOMEM;
	if (pipe2(pfd, O_CLOEXEC) < 0)
		return vn_infra_error(err, -errno, "pipe: %s", strerror(errno));
	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
	posix_spawn_file_actions_adddup2(&fa, pfd[1], 1);
	posix_spawn_file_actions_adddup2(&fa, pfd[1], 2);
	if (cwd)
		posix_spawn_file_actions_addchdir_np(&fa, cwd);
	posix_spawnattr_init(&at);
	/* Its own process group, so Ctrl-C can stop make and every compiler under it. */
	posix_spawnattr_setpgroup(&at, 0);
	posix_spawnattr_setflags(&at, POSIX_SPAWN_SETPGROUP);
	rc = posix_spawnp(&pid, argv[0], &fa, &at, (char *const *)argv, env);
	posix_spawn_file_actions_destroy(&fa);
	posix_spawnattr_destroy(&at);
	close(pfd[1]);
	if (rc != 0) {
		close(pfd[0]);
		return vn_infra_error(err, -rc, "cannot run %s: %s", argv[0], strerror(rc));
	}
	for (;;) {
		struct pollfd p = {.fd = pfd[0], .events = POLLIN};
		char buf[16384];
		int pr = poll(&p, 1, 250);
		if (vn_was_interrupted() && !killed) {
			kill(-pid, SIGTERM);
			killed = true;
		}
		if (pr < 0 && errno == EINTR)
			continue;
		if (pr <= 0)
			continue;
		ssize_t n = read(pfd[0], buf, sizeof(buf));
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		if (log_fd >= 0 && write(log_fd, buf, (size_t)n) != n)
			log_fd = -1;
		if (capture)
			vn_strbuf_append(capture, buf, (size_t)n);
		emit_lines(&pending, buf, (size_t)n, progress, progress_data, stage);
	}
	close(pfd[0]);
	while (waitpid(pid, &status, 0) < 0)
		if (errno != EINTR)
			return vn_infra_error(err, -errno, "waitpid %s: %s", argv[0], strerror(errno));
	if (killed || vn_was_interrupted())
		return vn_infra_error(err, -EINTR, "%s interrupted", argv[0]);
	if (WIFSIGNALED(status))
		return vn_infra_error(err, -ECHILD, "%s killed by signal %d", argv[0], WTERMSIG(status));
	return WEXITSTATUS(status);
}

/* ---- tools ---- */

static bool in_path(const char *tool)
{
	const char *path = getenv("PATH");
	_cleanup_free_ char *copy = strdup(path && *path ? path : "/usr/bin:/bin");
	char *save = NULL;

	for (char *d = strtok_r(copy, ":", &save); d; d = strtok_r(NULL, ":", &save)) {
		char buf[PATH_MAX];
		snprintf(buf, sizeof(buf), "%s/%s", d, tool);
		if (access(buf, X_OK) == 0)
			return true;
	}
	return false;
}

static int check_tools(const struct vn_recipe *r, struct vn_error *err)
{
	static const struct {
		const char *tool, *pkg;
	} tools[] = {
		{"gcc", "gcc"}, {"make", "make"}, {"flex", "flex"}, {"bison", "bison"},
		{"bc", "bc"},   {"patch", "patch"}, {"tar", "tar"}, {"perl", "perl"},
	};
	struct vn_strbuf missing = VN_STRBUF_INIT, pkgs = VN_STRBUF_INIT;

	for (size_t i = 0; i < VN_ARRAY_SIZE(tools); i++)
		if (!in_path(tools[i].tool)) {
			vn_strbuf_printf(&missing, "%s%s (Debian package %s)", missing.len ? ", " : "", tools[i].tool,
					 tools[i].pkg);
			vn_strbuf_printf(&pkgs, " %s", tools[i].pkg);
		}
	if (r->tree_kind == VN_TREE_TARBALL && strstr(r->tree_path, ".xz") && !in_path("xz")) {
		vn_strbuf_printf(&missing, "%sxz (Debian package xz-utils)", missing.len ? ", " : "");
		vn_strbuf_printf(&pkgs, " xz-utils");
	}
	if (r->tree_kind == VN_TREE_GIT && !in_path("git")) {
		vn_strbuf_printf(&missing, "%sgit (Debian package git)", missing.len ? ", " : "");
		vn_strbuf_printf(&pkgs, " git");
	}
	/* objtool links libelf; the certificate tools include OpenSSL headers. */
	if (!exists("/usr/include/libelf.h") && !exists("/usr/include/gelf.h")) {
		vn_strbuf_printf(&missing, "%slibelf.h (Debian package libelf-dev)", missing.len ? ", " : "");
		vn_strbuf_printf(&pkgs, " libelf-dev");
	}
	if (!exists("/usr/include/openssl/opensslv.h")) {
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

/* ---- identities and keys ---- */

static void hash_str(struct vn_sha256 *c, const char *s)
{
	/* Length-prefixed so that ("ab","c") and ("a","bc") differ. */
	uint64_t n = strlen(s);
	vn_sha256_update(c, &n, sizeof(n));
	vn_sha256_update(c, s, n);
}

static int hash_file_into(struct vn_sha256 *c, const char *path, struct vn_error *err)
{
	_cleanup_free_ char *s = NULL;
	size_t len = 0;
	int rc = read_file(path, &s, &len);
	if (rc < 0)
		return vn_input_error(err, "%s: %s", path, strerror(-rc));
	uint64_t n = len;
	vn_sha256_update(c, &n, sizeof(n));
	vn_sha256_update(c, s, len);
	return 0;
}

int vn_kernel_cache_key(const struct vn_recipe *r, const char *source_id, char key[VN_SHA256_HEX_LEN + 1],
			char config_hash[VN_SHA256_HEX_LEN + 1], struct vn_error *err)
{
	struct vn_sha256 c;
	uint8_t d[VN_SHA256_LEN];
	int rc;

	vn_sha256_init(&c);
	hash_str(&c, "vnuma-kernel-config-v1");
	hash_str(&c, r->config_base ? r->config_base : "");
	/*
	 * Contents, not names: two recipes sharing a fragment from different
	 * folders share one incremental build tree. A fragment taken from the
	 * kernel tree is named; its content is covered by the source identity.
	 * "require" is a check on the result, not an input, so it is left out.
	 */
	for (size_t i = 0; i < r->nfragments; i++) {
		if (r->fragments[i])
			rc = hash_file_into(&c, r->fragments[i], err);
		else
			hash_str(&c, r->fragment_names[i]), rc = 0;
		if (rc < 0)
			return rc;
	}
	vn_sha256_final(&c, d);
	vn_sha256_hex(d, config_hash);

	vn_sha256_init(&c);
	hash_str(&c, "vnuma-kernel-v1");
	hash_str(&c, source_id);
	hash_str(&c, config_hash);
	for (size_t i = 0; i < r->npatches; i++)
		if ((rc = hash_file_into(&c, r->patches[i], err)) < 0)
			return rc;
	vn_sha256_final(&c, d);
	vn_sha256_hex(d, key);
	return 0;
}

static int patches_hash(const struct vn_recipe *r, char out[VN_SHA256_HEX_LEN + 1], struct vn_error *err)
{
	struct vn_sha256 c;
	uint8_t d[VN_SHA256_LEN];
	int rc;

	vn_sha256_init(&c);
	hash_str(&c, "vnuma-patches-v1");
	for (size_t i = 0; i < r->npatches; i++)
		if ((rc = hash_file_into(&c, r->patches[i], err)) < 0)
			return rc;
	vn_sha256_final(&c, d);
	vn_sha256_hex(d, out);
	return 0;
}

/*
 * Hashing a 130 MB tarball takes a second; remember the digest per
 * (path, size, mtime) so that a cache hit stays instant.
 */
static int tarball_id(const char *cache, const char *tarball, char id[VN_SHA256_HEX_LEN + 1], struct vn_error *err)
{
	char memo[PATH_MAX], line[256];
	uint8_t d[VN_SHA256_LEN];
	struct stat st;
	int rc;

	if (stat(tarball, &st) < 0)
		return vn_input_error(err, "%s: %s", tarball, strerror(errno));
	struct vn_sha256 c;
	vn_sha256_init(&c);
	hash_str(&c, tarball);
	vn_sha256_final(&c, d);
	char ph[VN_SHA256_HEX_LEN + 1];
	vn_sha256_hex(d, ph);
	snprintf(memo, sizeof(memo), "%s/src/tarball-%.16s.id", cache, ph);
	snprintf(line, sizeof(line), "%lld %lld.%09ld ", (long long)st.st_size, (long long)st.st_mtim.tv_sec,
		 st.st_mtim.tv_nsec);
	_cleanup_free_ char *old = NULL;
	if (read_file(memo, &old, NULL) == 0 && strncmp(old, line, strlen(line)) == 0 &&
	    strlen(old + strlen(line)) >= VN_SHA256_HEX_LEN) {
		memcpy(id, old + strlen(line), VN_SHA256_HEX_LEN);
		id[VN_SHA256_HEX_LEN] = '\0';
		return 0;
	}
	if ((rc = vn_sha256_file(tarball, d, err)) < 0)
		return rc;
	vn_sha256_hex(d, id);
	_cleanup_free_ char *content = NULL;
	if (asprintf(&content, "%s%s\n", line, id) >= 0)
		(void)write_file(memo, content);
	return 0;
}

static int git_id(const char *tree, char id[VN_SHA256_HEX_LEN + 1], char **diff, struct vn_error *err)
{
	_cleanup_strbuf_ struct vn_strbuf head = VN_STRBUF_INIT, d = VN_STRBUF_INIT;
	const char *a1[] = {"git", "-C", tree, "rev-parse", "HEAD", NULL};
	const char *a2[] = {"git", "-C", tree, "diff", "--binary", "HEAD", NULL};
	uint8_t dg[VN_SHA256_LEN];
	struct vn_sha256 c;
	int rc;

	if ((rc = vn_kernel_run(a1, NULL, -1, &head, NULL, NULL, NULL, err)) != 0)
		return rc < 0 ? rc : vn_input_error(err, "%s: git rev-parse HEAD failed: %s", tree, head.s ? head.s : "");
	if ((rc = vn_kernel_run(a2, NULL, -1, &d, NULL, NULL, NULL, err)) != 0)
		return rc < 0 ? rc : vn_input_error(err, "%s: git diff HEAD failed", tree);
	vn_sha256_init(&c);
	hash_str(&c, "git");
	hash_str(&c, head.s ? head.s : "");
	hash_str(&c, d.s ? d.s : "");
	vn_sha256_final(&c, dg);
	vn_sha256_hex(dg, id);
	*diff = vn_strbuf_steal(&d);
	return 0;
}

/* ---- the pristine tree ---- */

static int only_subdir(const char *dir, char **out)
{
	DIR *d = opendir(dir);
	int n = 0;

	if (!d)
		return -errno;
	for (struct dirent *e; (e = readdir(d));) {
		if (e->d_name[0] == '.')
			continue;
		if (n++ == 0 && asprintf(out, "%s/%s", dir, e->d_name) < 0)
			*out = NULL;
	}
	closedir(d);
	if (n != 1) {
		free(*out);
		*out = NULL;
		return -ENOENT;
	}
	return *out ? 0 : -ENOMEM;
}

static int extract_source(const struct vn_recipe *r, const char *cache, const char *id, const char *diff,
			  int log_fd, const struct vn_kernel_build_opts *o, char **tree, struct vn_error *err)
{
	_cleanup_free_ char *dir = NULL, *tmp = NULL, *top = NULL, *dst = NULL;
	int rc;

	if (asprintf(&dir, "%s/src/%.16s", cache, id) < 0 || asprintf(tree, "%s/src/%.16s/tree", cache, id) < 0)
		return -ENOMEM;
	if (exists(*tree))
		return 0;
	if (asprintf(&tmp, "%s.tmp-%d", dir, (int)getpid()) < 0 || asprintf(&dst, "%s/tree", tmp) < 0)
		return -ENOMEM;
	rm_rf(tmp);
	if ((rc = mkdir_p(tmp)) < 0)
		return vn_infra_error(err, rc, "%s: %s", tmp, strerror(-rc));
	if (o->progress)
		o->progress(o->progress_data, "extract", r->tree_path);
	if (r->tree_kind == VN_TREE_TARBALL) {
		const char *argv[] = {"tar", "-xf", r->tree_path, "-C", tmp, NULL};
		rc = vn_kernel_run(argv, NULL, log_fd, NULL, NULL, NULL, NULL, err);
		if (rc > 0)
			rc = vn_infra_error(err, -EIO, "extracting %s failed (see the build log)", r->tree_path);
		if (rc == 0 && (rc = only_subdir(tmp, &top)) < 0)
			rc = vn_input_error(err, "%s: expected one top-level folder in the tarball", r->tree_path);
		if (rc == 0 && rename(top, dst) < 0)
			rc = vn_infra_error(err, -errno, "rename %s: %s", top, strerror(errno));
	} else {
		_cleanup_free_ char *tar = NULL;
		if (asprintf(&tar, "%s/src.tar", tmp) < 0)
			return -ENOMEM;
		const char *a1[] = {"git", "-C", r->tree_path, "archive", "--format=tar", "--prefix=tree/", "-o", tar,
				    "HEAD", NULL};
		const char *a2[] = {"tar", "-xf", tar, "-C", tmp, NULL};
		rc = vn_kernel_run(a1, NULL, log_fd, NULL, NULL, NULL, NULL, err);
		if (rc == 0)
			rc = vn_kernel_run(a2, NULL, log_fd, NULL, NULL, NULL, NULL, err);
		if (rc > 0)
			rc = vn_infra_error(err, -EIO, "exporting %s failed (see the build log)", r->tree_path);
		unlink(tar);
		/* The checkout's uncommitted changes are part of its identity, so part of the tree. */
		if (rc == 0 && diff && *diff) {
			_cleanup_free_ char *dp = NULL;
			if (asprintf(&dp, "%s/dirty.patch", tmp) < 0)
				return -ENOMEM;
			const char *a3[] = {"git", "apply", "--binary", dp, NULL};
			if ((rc = write_file(dp, diff)) < 0)
				rc = vn_infra_error(err, rc, "%s: %s", dp, strerror(-rc));
			else if ((rc = vn_kernel_run(a3, dst, log_fd, NULL, NULL, NULL, NULL, err)) > 0)
				rc = vn_infra_error(err, -EIO, "applying %s's uncommitted changes failed", r->tree_path);
		}
	}
	if (rc == 0 && rename(tmp, dir) < 0 && errno != ENOTEMPTY && errno != EEXIST)
		rc = vn_infra_error(err, -errno, "rename %s: %s", tmp, strerror(errno));
	if (rc != 0 || exists(tmp))
		rm_rf(tmp);
	return rc;
}

/* ---- patches ---- */

static bool safe_rel(const char *p)
{
	return *p && *p != '/' && !strstr(p, "..");
}

int vn_kernel_patch_files(const char *patch, char ***files, size_t *n, struct vn_error *err)
{
	_cleanup_fclose_ FILE *f = fopen(patch, "re");
	_cleanup_free_ char *line = NULL;
	size_t cap = 0;
	char **v = calloc(1, sizeof(char *));

	*files = NULL;
	*n = 0;
	if (!f || !v) {
		free(v);
		return vn_input_error(err, "%s: %s", patch, strerror(errno));
	}
	while (getline(&line, &cap, f) > 0) {
		if (strncmp(line, "+++ ", 4) != 0 && strncmp(line, "--- ", 4) != 0)
			continue;
		char *p = line + 4;
		p[strcspn(p, "\t\n")] = '\0';
		if (strcmp(p, "/dev/null") == 0 || !strchr(p, '/'))
			continue;
		p = strchr(p, '/') + 1; /* -p1 */
		if (!safe_rel(p))
			continue;
		bool dup = false;
		for (size_t i = 0; i < *n && !dup; i++)
			dup = strcmp(v[i], p) == 0;
		if (dup)
			continue;
		char **nv = realloc(v, (*n + 2) * sizeof(char *));
		if (!nv)
			break;
		v = nv;
		v[(*n)++] = strdup(p);
		v[*n] = NULL;
	}
	*files = v;
	return 0;
}

/* Hunk number `want` (1-based) of `file` in a unified diff, for the error message. */
static char *find_hunk(const char *patch, const char *file, int want)
{
	_cleanup_fclose_ FILE *f = fopen(patch, "re");
	_cleanup_free_ char *line = NULL;
	struct vn_strbuf b = VN_STRBUF_INIT;
	size_t cap = 0;
	bool in_file = false, grab = false;
	int hunk = 0;

	if (!f)
		return NULL;
	while (getline(&line, &cap, f) > 0) {
		if (strncmp(line, "+++ ", 4) == 0) {
			char *p = line + 4;
			p[strcspn(p, "\t\n")] = '\0';
			char *rel = strchr(p, '/') ? strchr(p, '/') + 1 : p;
			in_file = strcmp(rel, file) == 0;
			hunk = 0;
			grab = false;
			continue;
		}
		if (!in_file)
			continue;
		if (strncmp(line, "@@", 2) == 0) {
			grab = ++hunk == want;
			if (hunk > want)
				break;
		} else if (strncmp(line, "diff ", 5) == 0 || strncmp(line, "--- ", 4) == 0) {
			grab = false;
		}
		if (grab)
			vn_strbuf_append(&b, line, strlen(line));
	}
	return b.len ? vn_strbuf_steal(&b) : NULL;
}

int vn_kernel_patch_apply(const char *tree, const char *patch, const char *name, int log_fd, struct vn_error *err)
{
	_cleanup_strbuf_ struct vn_strbuf out = VN_STRBUF_INIT;
	const char *dry[] = {"patch", "-p1", "--forward", "--batch", "--dry-run", "-i", patch, NULL};
	const char *real[] = {"patch", "-p1", "--forward", "--batch", "--no-backup-if-mismatch", "-i", patch, NULL};
	int rc;

	if ((rc = vn_kernel_run(dry, tree, log_fd, &out, NULL, NULL, NULL, err)) < 0)
		return rc;
	if (rc == 0) {
		vn_strbuf_free(&out);
		if ((rc = vn_kernel_run(real, tree, log_fd, &out, NULL, NULL, NULL, err)) < 0)
			return rc;
		if (rc == 0)
			return 0;
	}
	/* Name the first failure the way a developer would look for it: file and hunk. */
	char file[PATH_MAX] = "";
	const char *text = out.s ? out.s : "";
	for (const char *l = text; *l;) {
		const char *e = strchr(l, '\n');
		size_t len = e ? (size_t)(e - l) : strlen(l);
		int hunk, at;
		char what[64];
		if ((len > 14 && strncmp(l, "checking file ", 14) == 0) || (len > 14 && strncmp(l, "patching file ", 14) == 0))
			snprintf(file, sizeof(file), "%.*s", (int)(len - 14), l + 14);
		if (sscanf(l, "Hunk #%d %63s at %d", &hunk, what, &at) == 3 && strcmp(what, "FAILED") == 0) {
			_cleanup_free_ char *h = find_hunk(patch, file, hunk);
			vn_input_error(err, "patch %s does not apply: %s: hunk #%d FAILED at line %d", name, file, hunk, at);
			if (h) {
				_cleanup_free_ char *d = NULL;
				if (asprintf(&d, "rejected hunk (%s, hunk #%d):\n%s", file, hunk, h) >= 0)
					vn_error_set_detail(err, d);
			}
			return err ? err->code : -EINVAL;
		}
		if (len >= 8 && strncmp(l, "Reversed", 8) == 0)
			return vn_input_error(err, "patch %s does not apply: %s: already applied (reversed patch detected)",
					      name, file[0] ? file : "?");
		if (len > 26 && strncmp(l, "can't find file to patch", 24) == 0)
			return vn_input_error(err, "patch %s does not apply: a file it patches does not exist in the tree",
					      name);
		l += len + (e ? 1 : 0);
	}
	vn_input_error(err, "patch %s does not apply (patch exited %d)", name, rc);
	vn_error_set_detail(err, text);
	return -EINVAL;
}

/* ---- config verification ---- */

/* The value of CONFIG_X in a .config text: "y", "64", "n" for "is not set" or absent. */
static void config_value(const char *text, const char *opt, char *val, size_t cap)
{
	size_t ol = strlen(opt);
	snprintf(val, cap, "n");
	for (const char *l = text; l && *l;) {
		const char *e = strchr(l, '\n');
		size_t len = e ? (size_t)(e - l) : strlen(l);
		if (len > ol && strncmp(l, opt, ol) == 0 && l[ol] == '=') {
			snprintf(val, cap, "%.*s", (int)(len - ol - 1), l + ol + 1);
			return;
		}
		l = e ? e + 1 : NULL;
	}
}

int vn_kernel_config_verify(const char *final_config, const char *wanted, char **report)
{
	struct vn_strbuf b = VN_STRBUF_INIT;
	int dropped = 0;

	*report = NULL;
	for (const char *l = wanted; l && *l;) {
		const char *e = strchr(l, '\n');
		size_t len = e ? (size_t)(e - l) : strlen(l);
		char opt[128] = "", want[256] = "", got[256];
		if (len > 7 && strncmp(l, "CONFIG_", 7) == 0 && memchr(l, '=', len)) {
			const char *eq = memchr(l, '=', len);
			snprintf(opt, sizeof(opt), "%.*s", (int)(eq - l), l);
			snprintf(want, sizeof(want), "%.*s", (int)(len - (size_t)(eq - l) - 1), eq + 1);
		} else if (len > 9 && strncmp(l, "# CONFIG_", 9) == 0 && len > 13 &&
			   strncmp(l + len - 11, " is not set", 11) == 0) {
			snprintf(opt, sizeof(opt), "%.*s", (int)(len - 2 - 11), l + 2);
			snprintf(want, sizeof(want), "n");
		}
		l = e ? e + 1 : NULL;
		if (!opt[0])
			continue;
		config_value(final_config, opt, got, sizeof(got));
		if (strcmp(want, got) == 0)
			continue;
		/* Asked for twice (a fragment and the built-in list): reported once. */
		char mark[140];
		snprintf(mark, sizeof(mark), "\n%s:", opt);
		if (b.s && (strncmp(b.s, mark + 1, strlen(mark + 1)) == 0 || strstr(b.s, mark)))
			continue;
		dropped++;
		vn_strbuf_printf(&b, "%s: wanted %s, got %s\n", opt, strcmp(want, "n") ? want : "not set",
				 strcmp(got, "n") ? got : "not set");
	}
	if (dropped)
		*report = vn_strbuf_steal(&b);
	vn_strbuf_free(&b);
	return dropped;
}

/* ---- the build ---- */

struct work {
	const struct vn_recipe *r;
	const struct vn_kernel_build_opts *o;
	const char *pristine, *src, *obj, *dir;
	int log_fd;
};

static void say(const struct work *w, const char *stage, const char *line)
{
	if (w->o->progress)
		w->o->progress(w->o->progress_data, stage, line);
}

/*
 * Bring the worktree from the last patch set to this one: restore every file
 * the last set touched from the pristine tree (a fresh copy, so make sees it
 * change), then apply this set. Files no patch touches keep their objects.
 */
static int sync_patches(const struct work *w, const char *phash, struct vn_error *err)
{
	_cleanup_free_ char *touched_path = NULL, *phash_path = NULL, *old = NULL, *last = NULL;
	struct vn_strbuf list = VN_STRBUF_INIT;
	int rc = 0;

	if (asprintf(&touched_path, "%s/touched", w->dir) < 0 || asprintf(&phash_path, "%s/patches.sha256", w->dir) < 0)
		return -ENOMEM;
	if (read_file(phash_path, &last, NULL) == 0 && strncmp(last, phash, VN_SHA256_HEX_LEN) == 0)
		return 0;
	unlink(phash_path);
	if (read_file(touched_path, &old, NULL) == 0) {
		for (char *save = NULL, *f = strtok_r(old, "\n", &save); f; f = strtok_r(NULL, "\n", &save)) {
			char a[PATH_MAX], b[PATH_MAX];
			if (!safe_rel(f))
				continue;
			snprintf(a, sizeof(a), "%s/%s", w->pristine, f);
			snprintf(b, sizeof(b), "%s/%s", w->src, f);
			unlink(b);
			if (exists(a) && (rc = copy_file(a, b)) < 0)
				return vn_infra_error(err, rc, "restoring %s: %s", b, strerror(-rc));
		}
	}
	for (size_t i = 0; i < w->r->npatches; i++) {
		_cleanup_strv_ char **files = NULL;
		size_t n;
		if ((rc = vn_kernel_patch_files(w->r->patches[i], &files, &n, err)) < 0)
			goto out;
		for (size_t j = 0; j < n; j++)
			vn_strbuf_printf(&list, "%s\n", files[j]);
	}
	/* Written before patching, so a failed or interrupted patch is undone next time. */
	if ((rc = write_file(touched_path, list.s ? list.s : "")) < 0) {
		rc = vn_infra_error(err, rc, "%s: %s", touched_path, strerror(-rc));
		goto out;
	}
	for (size_t i = 0; i < w->r->npatches; i++) {
		say(w, "patch", w->r->patch_names[i]);
		if ((rc = vn_kernel_patch_apply(w->src, w->r->patches[i], w->r->patch_names[i], w->log_fd, err)) < 0)
			goto out;
	}
	rc = write_file(phash_path, phash);
out:
	vn_strbuf_free(&list);
	return rc;
}

static int make_step(const struct work *w, const char *stage, const char *target, int jobs, struct vn_error *err)
{
	char o_arg[PATH_MAX + 8], j_arg[32];
	snprintf(o_arg, sizeof(o_arg), "O=%s", w->obj);
	snprintf(j_arg, sizeof(j_arg), "-j%d", jobs);
	const char *argv[] = {"make", o_arg, j_arg, target, NULL};
	int rc = vn_kernel_run(argv, w->src, w->log_fd, NULL, w->o->progress, w->o->progress_data, stage, err);
	if (rc > 0)
		return vn_input_error(err, "%s: make %s failed (exit %d)", w->r->name, target, rc);
	return rc;
}

static int fragment_path(const struct work *w, size_t i, char *buf, size_t cap)
{
	static const char *const dirs[] = {"arch/x86/configs", "kernel/configs"};
	if (w->r->fragments[i]) {
		snprintf(buf, cap, "%s", w->r->fragments[i]);
		return 0;
	}
	for (size_t d = 0; d < VN_ARRAY_SIZE(dirs); d++) {
		snprintf(buf, cap, "%s/%s/%s", w->src, dirs[d], w->r->fragment_names[i]);
		if (exists(buf))
			return 0;
	}
	return -ENOENT;
}

static int configure(const struct work *w, const char *chash, int jobs, struct vn_error *err)
{
	_cleanup_free_ char *marker = NULL, *cur = NULL, *dotconfig = NULL, *script = NULL;
	const char **argv = NULL;
	int rc;

	if (asprintf(&marker, "%s/.vnuma-config", w->obj) < 0 || asprintf(&dotconfig, "%s/.config", w->obj) < 0 ||
	    asprintf(&script, "%s/scripts/kconfig/merge_config.sh", w->src) < 0)
		return -ENOMEM;
	if (read_file(marker, &cur, NULL) == 0 && strncmp(cur, chash, VN_SHA256_HEX_LEN) == 0 && exists(dotconfig))
		return 0;
	unlink(marker);
	unlink(dotconfig);
	if ((rc = make_step(w, "config", w->r->config_base, jobs, err)) < 0)
		return rc;
	if (w->r->nfragments) {
		if (!(argv = calloc(w->r->nfragments + 7, sizeof(char *))))
			return -ENOMEM;
		size_t a = 0;
		char **paths = calloc(w->r->nfragments, sizeof(char *));
		argv[a++] = "sh";
		argv[a++] = script;
		argv[a++] = "-m";
		argv[a++] = "-O";
		argv[a++] = w->obj;
		argv[a++] = dotconfig;
		for (size_t i = 0; paths && i < w->r->nfragments; i++) {
			char buf[PATH_MAX];
			if (fragment_path(w, i, buf, sizeof(buf)) < 0) {
				rc = vn_input_error(err, "%s: $.config.fragments[%zu]: %s is neither beside the recipe (%s/) "
							 "nor in the kernel's arch/x86/configs or kernel/configs",
						    w->r->path, i, w->r->fragment_names[i], w->r->dir);
				break;
			}
			argv[a++] = paths[i] = strdup(buf);
		}
		argv[a] = NULL;
		if (!paths)
			rc = -ENOMEM;
		if (rc == 0) {
			say(w, "config", "merge_config.sh");
			rc = vn_kernel_run(argv, w->src, w->log_fd, NULL, NULL, NULL, NULL, err);
			if (rc > 0)
				rc = vn_input_error(err, "%s: merge_config.sh failed (exit %d)", w->r->name, rc);
		}
		for (size_t i = 0; paths && i < w->r->nfragments; i++)
			free(paths[i]);
		free(paths);
		free(argv);
		if (rc < 0)
			return rc;
	}
	if ((rc = make_step(w, "config", "olddefconfig", jobs, err)) < 0)
		return rc;
	return write_file(marker, chash);
}

/* What the recipe asked for, as fragment text: its fragments, its require list, our own list. */
static int wanted_text(const struct work *w, char **out, struct vn_error *err)
{
	struct vn_strbuf b = VN_STRBUF_INIT;
	int rc = 0;

	for (size_t i = 0; i < w->r->nfragments && rc == 0; i++) {
		char p[PATH_MAX];
		_cleanup_free_ char *s = NULL;
		if (fragment_path(w, i, p, sizeof(p)) < 0 || read_file(p, &s, NULL) < 0)
			rc = vn_input_error(err, "%s: fragment %s: cannot read", w->r->path, w->r->fragment_names[i]);
		else
			vn_strbuf_printf(&b, "%s\n", s);
	}
	for (size_t i = 0; i < w->r->nrequire; i++)
		vn_strbuf_printf(&b, "%s=y\n", w->r->require[i]);
	for (const char *const *o = vn_kernel_required_options; *o; o++)
		vn_strbuf_printf(&b, "%s=y\n", *o);
	if (rc < 0) {
		vn_strbuf_free(&b);
		return rc;
	}
	*out = vn_strbuf_steal(&b);
	return 0;
}

static int verify_config(const struct work *w, struct vn_error *err)
{
	_cleanup_free_ char *dotconfig = NULL, *final = NULL, *wanted = NULL, *report = NULL;
	int rc;

	if (asprintf(&dotconfig, "%s/.config", w->obj) < 0)
		return -ENOMEM;
	if ((rc = read_file(dotconfig, &final, NULL)) < 0)
		return vn_infra_error(err, rc, "%s: %s", dotconfig, strerror(-rc));
	if ((rc = wanted_text(w, &wanted, err)) < 0)
		return rc;
	int n = vn_kernel_config_verify(final, wanted, &report);
	if (n == 0)
		return 0;
	/* One line names them all; the detail lists what each became. */
	struct vn_strbuf names = VN_STRBUF_INIT;
	for (const char *l = report; *l;) {
		size_t len = strcspn(l, ":");
		vn_strbuf_printf(&names, "%s%.*s", names.len ? ", " : "", (int)len, l);
		l = strchr(l, '\n') ? strchr(l, '\n') + 1 : l + strlen(l);
	}
	vn_input_error(err,
		       "%s: %d config option(s) did not survive merge_config.sh + olddefconfig "
		       "(a dependency is missing, or the option does not exist): %s",
		       w->r->path, n, names.s);
	vn_strbuf_free(&names);
	vn_error_set_detail(err, report);
	return -EINVAL;
}

static char *tail_lines(const char *path, int nlines)
{
	_cleanup_free_ char *s = NULL;
	size_t len = 0;
	if (read_file(path, &s, &len) < 0 || !len)
		return NULL;
	const char *p = s + len;
	while (p > s && nlines >= 0) {
		p--;
		if (*p == '\n')
			nlines--;
	}
	return strdup(p == s ? p : p + 1);
}

static int write_meta(const char *path, const struct vn_kernel_built *b, const struct vn_recipe *r)
{
	struct json_object *o = json_object_new_object(), *p = json_object_new_array(), *f = json_object_new_array();
	json_object_object_add(o, "key", json_object_new_string(b->key));
	json_object_object_add(o, "recipe", json_object_new_string(b->recipe));
	json_object_object_add(o, "recipe_path", json_object_new_string(b->recipe_path ? b->recipe_path : ""));
	json_object_object_add(o, "tree", json_object_new_string(r->tree));
	json_object_object_add(o, "source_id", json_object_new_string(b->source_id));
	json_object_object_add(o, "config_hash", json_object_new_string(b->config_hash));
	json_object_object_add(o, "config_base", json_object_new_string(r->config_base));
	for (size_t i = 0; i < r->nfragments; i++)
		json_object_array_add(f, json_object_new_string(r->fragment_names[i]));
	json_object_object_add(o, "fragments", f);
	for (size_t i = 0; i < b->npatches; i++)
		json_object_array_add(p, json_object_new_string(b->patches[i]));
	json_object_object_add(o, "patches", p);
	json_object_object_add(o, "release", json_object_new_string(b->release ? b->release : ""));
	json_object_object_add(o, "version", json_object_new_string(b->version ? b->version : ""));
	json_object_object_add(o, "size", json_object_new_int64(b->size));
	json_object_object_add(o, "build_s", json_object_new_double(b->build_s));
	json_object_object_add(o, "built_at", json_object_new_int64((int64_t)time(NULL)));
	int rc = json_object_to_file_ext(path, o, JSON_C_TO_STRING_PRETTY | JSON_C_TO_STRING_NOSLASHESCAPE) < 0 ? -EIO : 0;
	json_object_put(o);
	return rc;
}

static const char *jstr(struct json_object *o, const char *k)
{
	struct json_object *v;
	return json_object_object_get_ex(o, k, &v) && json_object_is_type(v, json_type_string) ? json_object_get_string(v)
											       : NULL;
}

static char *dup_or_null(const char *s)
{
	return s ? strdup(s) : NULL;
}

/* Fill b from CACHE/kernels/<key>/kernel.json; -ENOENT when it is not there. */
static int load_meta(const char *dir, struct vn_kernel_built **out)
{
	_cleanup_free_ char *path = NULL;
	struct json_object *o, *v;
	struct stat st;

	if (asprintf(&path, "%s/kernel.json", dir) < 0)
		return -ENOMEM;
	if (!exists(path) || !(o = json_object_from_file(path)))
		return -ENOENT;
	struct vn_kernel_built *b = calloc(1, sizeof(*b));
	if (!b) {
		json_object_put(o);
		return -ENOMEM;
	}
	b->dir = strdup(dir);
	if (asprintf(&b->image, "%s/bzImage", dir) < 0)
		b->image = NULL;
	if (asprintf(&b->config, "%s/config", dir) < 0)
		b->config = NULL;
	if (asprintf(&b->log, "%s/build.log", dir) < 0)
		b->log = NULL;
	b->key = dup_or_null(jstr(o, "key"));
	b->recipe = dup_or_null(jstr(o, "recipe"));
	b->recipe_path = dup_or_null(jstr(o, "recipe_path"));
	b->source_id = dup_or_null(jstr(o, "source_id"));
	b->config_hash = dup_or_null(jstr(o, "config_hash"));
	b->release = dup_or_null(jstr(o, "release"));
	b->version = dup_or_null(jstr(o, "version"));
	if (json_object_object_get_ex(o, "build_s", &v))
		b->build_s = json_object_get_double(v);
	if (json_object_object_get_ex(o, "patches", &v) && json_object_is_type(v, json_type_array)) {
		b->npatches = json_object_array_length(v);
		b->patches = calloc(b->npatches + 1, sizeof(char *));
		for (size_t i = 0; b->patches && i < b->npatches; i++)
			b->patches[i] = dup_or_null(json_object_get_string(json_object_array_get_idx(v, i)));
		if (!b->patches)
			b->npatches = 0;
	}
	json_object_put(o);
	b->size = b->image && stat(b->image, &st) == 0 ? (long long)st.st_size : -1;
	if (!b->image || b->size < 0) {
		vn_kernel_built_free(b);
		return -ENOENT;
	}
	*out = b;
	return 0;
}

static int install(const struct work *w, const char *staging, const char *final, struct vn_kernel_built *b,
		   struct vn_error *err)
{
	char from[PATH_MAX], to[PATH_MAX];
	struct stat st;
	int rc;

	snprintf(from, sizeof(from), "%s/arch/x86/boot/bzImage", w->obj);
	snprintf(to, sizeof(to), "%s/bzImage", staging);
	if ((rc = copy_file(from, to)) < 0)
		return vn_infra_error(err, rc, "copying %s: %s", from, strerror(-rc));
	if ((rc = vn_kernel_image_release(to, &b->release, &b->version, err)) < 0)
		return rc;
	b->size = stat(to, &st) == 0 ? (long long)st.st_size : 0;
	snprintf(from, sizeof(from), "%s/.config", w->obj);
	snprintf(to, sizeof(to), "%s/config", staging);
	if ((rc = copy_file(from, to)) < 0)
		return vn_infra_error(err, rc, "copying %s: %s", from, strerror(-rc));
	snprintf(to, sizeof(to), "%s/kernel.json", staging);
	if ((rc = write_meta(to, b, w->r)) < 0)
		return vn_infra_error(err, rc, "writing %s", to);
	if (rename(staging, final) < 0) {
		/* Someone else installed the same key meanwhile: theirs is as good. */
		if (errno != ENOTEMPTY && errno != EEXIST)
			return vn_infra_error(err, -errno, "rename %s: %s", staging, strerror(errno));
		rm_rf(staging);
	}
	return 0;
}

/* Staging folders of builds that died (killed, crashed) are garbage once their process is gone. */
static void sweep_staging(const char *kdir)
{
	DIR *d = opendir(kdir);
	if (!d)
		return;
	for (struct dirent *e; (e = readdir(d));) {
		const char *dash = strrchr(e->d_name, '-');
		char p[PATH_MAX];
		if (strncmp(e->d_name, ".tmp-", 5) != 0 || !dash)
			continue;
		long pid = strtol(dash + 1, NULL, 10);
		if (pid <= 0 || (kill((pid_t)pid, 0) == 0 || errno != ESRCH))
			continue;
		snprintf(p, sizeof(p), "%s/%s", kdir, e->d_name);
		rm_rf(p);
	}
	closedir(d);
}

static struct vn_kernel_built *new_built(const struct vn_recipe *r)
{
	struct vn_kernel_built *b = calloc(1, sizeof(*b));
	if (!b)
		return NULL;
	b->recipe = strdup(r->name);
	b->recipe_path = dup_or_null(r->path);
	b->npatches = r->npatches;
	b->patches = calloc(r->npatches + 1, sizeof(char *));
	for (size_t i = 0; b->patches && i < r->npatches; i++)
		b->patches[i] = strdup(r->patch_names[i]);
	return b;
}

int vn_kernel_build(const struct vn_recipe *r, const struct vn_kernel_build_opts *o, struct vn_kernel_built **out,
		    struct vn_error *err)
{
	char key[VN_SHA256_HEX_LEN + 1], chash[VN_SHA256_HEX_LEN + 1], phash[VN_SHA256_HEX_LEN + 1];
	char sid[VN_SHA256_HEX_LEN + 1];
	_cleanup_free_ char *kdir = NULL, *final = NULL, *staging = NULL, *wdir = NULL, *src = NULL, *obj = NULL;
	_cleanup_free_ char *pristine = NULL, *diff = NULL, *lock = NULL, *log = NULL, *failed = NULL;
	_cleanup_close_ int lock_fd = -1, log_fd = -1;
	struct vn_kernel_built *b = NULL;
	double t0 = now_s();
	int rc, jobs = o->jobs > 0 ? o->jobs : (int)sysconf(_SC_NPROCESSORS_ONLN);

	if (r->type != VN_RECIPE_SOURCE)
		return vn_input_error(err, "%s: only \"source\" recipes are built", r->path);
	if (!o->cache_dir)
		return vn_input_error(err, "no kernel cache directory");
	if ((rc = mkdir_p(o->cache_dir)) < 0 || asprintf(&kdir, "%s/src", o->cache_dir) < 0 || (rc = mkdir_p(kdir)) < 0)
		return vn_infra_error(err, rc ? rc : -ENOMEM, "cannot create %s: %s", o->cache_dir, strerror(-rc));
	free(kdir);
	kdir = NULL;

	if (r->tree_kind == VN_TREE_TARBALL)
		rc = tarball_id(o->cache_dir, r->tree_path, sid, err);
	else
		rc = git_id(r->tree_path, sid, &diff, err);
	if (rc < 0 || (rc = vn_kernel_cache_key(r, sid, key, chash, err)) < 0 || (rc = patches_hash(r, phash, err)) < 0)
		return rc;
	if (asprintf(&kdir, "%s/kernels", o->cache_dir) < 0 || asprintf(&final, "%s/%.16s", kdir, key) < 0)
		return -ENOMEM;
	if (load_meta(final, &b) == 0) {
		free(b->recipe);
		free(b->recipe_path);
		b->recipe = strdup(r->name);
		b->recipe_path = dup_or_null(r->path);
		b->cached = true;
		*out = b;
		return 0;
	}
	if ((rc = check_tools(r, err)) < 0)
		return rc;
	sweep_staging(kdir);

	if (asprintf(&wdir, "%s/work/%.16s-%.16s", o->cache_dir, sid, chash) < 0 ||
	    asprintf(&src, "%s/src", wdir) < 0 || asprintf(&obj, "%s/obj", wdir) < 0 ||
	    asprintf(&lock, "%s.lock", wdir) < 0 || asprintf(&staging, "%s/.tmp-%.16s-%d", kdir, key, (int)getpid()) < 0 ||
	    asprintf(&log, "%s/build.log", staging) < 0 || asprintf(&failed, "%s/failed-%.16s.log", kdir, key) < 0)
		return -ENOMEM;
	if ((rc = mkdir_p(wdir)) < 0 || (rc = mkdir_p(staging)) < 0)
		return vn_infra_error(err, rc, "cannot create %s: %s", wdir, strerror(-rc));
	/* One build per (source, config) worktree at a time; other builds wait. */
	if ((lock_fd = open(lock, O_RDWR | O_CREAT | O_CLOEXEC, 0644)) < 0 || flock(lock_fd, LOCK_EX) < 0)
		return vn_infra_error(err, -errno, "%s: %s", lock, strerror(errno));
	if ((log_fd = open(log, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644)) < 0)
		return vn_infra_error(err, -errno, "%s: %s", log, strerror(errno));
	dprintf(log_fd, "vnuma kernel build: recipe %s, key %s\n", r->path, key);

	b = new_built(r);
	if (!b)
		return -ENOMEM;
	b->key = strdup(key);
	b->config_hash = strdup(chash);
	b->source_id = strdup(sid);

	struct work w = {.r = r, .o = o, .src = src, .obj = obj, .dir = wdir, .log_fd = log_fd};
	if ((rc = extract_source(r, o->cache_dir, sid, diff, log_fd, o, &pristine, err)) < 0)
		goto fail;
	w.pristine = pristine;
	if (!exists(src)) {
		_cleanup_free_ char *tmp = NULL;
		if (asprintf(&tmp, "%s.tmp", src) < 0) {
			rc = -ENOMEM;
			goto fail;
		}
		rm_rf(tmp);
		say(&w, "extract", "hardlink farm of the pristine tree");
		const char *argv[] = {"cp", "-al", pristine, tmp, NULL};
		if ((rc = vn_kernel_run(argv, NULL, log_fd, NULL, NULL, NULL, NULL, err)) != 0 ||
		    rename(tmp, src) < 0) {
			rc = vn_infra_error(err, rc < 0 ? rc : -EIO, "cp -al %s %s failed", pristine, tmp);
			goto fail;
		}
	}
	if ((rc = mkdir_p(obj)) < 0) {
		rc = vn_infra_error(err, rc, "cannot create %s: %s", obj, strerror(-rc));
		goto fail;
	}
	if ((rc = sync_patches(&w, phash, err)) < 0 || (rc = configure(&w, chash, jobs, err)) < 0 ||
	    (rc = verify_config(&w, err)) < 0)
		goto fail;
	if ((rc = make_step(&w, "build", "bzImage", jobs, err)) < 0)
		goto fail;
	say(&w, "install", NULL);
	b->build_s = now_s() - t0;
	if ((rc = install(&w, staging, final, b, err)) < 0)
		goto fail;
	vn_kernel_built_free(b);
	b = NULL;
	if ((rc = load_meta(final, &b)) < 0)
		return vn_infra_error(err, rc, "%s: installed kernel not readable", final);
	free(b->recipe);
	b->recipe = strdup(r->name);
	*out = b;
	return 0;

fail:
	/* Keep the log where the user can read it; the half-built staging folder goes. */
	if (exists(log) && rename(log, failed) == 0 && err && err->kind == VN_ERR_INPUT && !err->detail) {
		_cleanup_free_ char *t = tail_lines(failed, 25);
		if (t)
			vn_error_set_detail(err, t);
	}
	if (err && err->kind != VN_ERR_NONE)
		vn_error_prefix(err, "kernel %s (log: %s)", r->name, failed);
	rm_rf(staging);
	vn_kernel_built_free(b);
	return rc;
}

static int cmp_built(const void *a, const void *b)
{
	const struct vn_kernel_built *x = *(struct vn_kernel_built *const *)a, *y = *(struct vn_kernel_built *const *)b;
	return strcmp(x->recipe ? x->recipe : "", y->recipe ? y->recipe : "");
}

int vn_kernel_cache_list(const char *cache_dir, struct vn_kernel_built ***out, size_t *n, struct vn_error *err)
{
	_cleanup_free_ char *kdir = NULL;
	struct vn_kernel_built **v = NULL;
	DIR *d;

	(void)err;
	*out = NULL;
	*n = 0;
	if (asprintf(&kdir, "%s/kernels", cache_dir) < 0)
		return -ENOMEM;
	if (!(d = opendir(kdir)))
		return 0;
	for (struct dirent *e; (e = readdir(d));) {
		char p[PATH_MAX];
		struct vn_kernel_built *b;
		if (e->d_name[0] == '.' || strncmp(e->d_name, "failed-", 7) == 0)
			continue;
		snprintf(p, sizeof(p), "%s/%s", kdir, e->d_name);
		if (load_meta(p, &b) < 0)
			continue;
		struct vn_kernel_built **nv = realloc(v, (*n + 1) * sizeof(*v));
		if (!nv) {
			vn_kernel_built_free(b);
			break;
		}
		v = nv;
		v[(*n)++] = b;
	}
	closedir(d);
	if (*n)
		qsort(v, *n, sizeof(*v), cmp_built);
	*out = v;
	return 0;
}

int vn_kernel_cache_dir_default(char **out, struct vn_error *err)
{
	const char *env = getenv("VNUMA_STATE_DIR");
	const char *xdg = getenv("XDG_STATE_HOME");
	const char *home = getenv("HOME");
	int rc;

	/* The same fallbacks as the testbed's state directory. */
	if (env && *env)
		rc = asprintf(out, "%s/cache/kernels", env);
	else if (xdg && *xdg)
		rc = asprintf(out, "%s/vnuma/cache/kernels", xdg);
	else if (geteuid() == 0)
		rc = asprintf(out, "/var/lib/vnuma/cache/kernels");
	else if (home && *home)
		rc = asprintf(out, "%s/.local/state/vnuma/cache/kernels", home);
	else
		return vn_input_error(err, "no state directory: set VNUMA_STATE_DIR or HOME");
	return rc < 0 ? -ENOMEM : 0;
}

void vn_kernel_built_free(struct vn_kernel_built *b)
{
	if (!b)
		return;
	free(b->dir);
	free(b->image);
	free(b->config);
	free(b->log);
	free(b->key);
	free(b->config_hash);
	free(b->source_id);
	free(b->release);
	free(b->version);
	free(b->recipe);
	free(b->recipe_path);
	for (size_t i = 0; b->patches && i < b->npatches; i++)
		free(b->patches[i]);
	free(b->patches);
	free(b);
}
