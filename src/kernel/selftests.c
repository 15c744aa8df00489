/*
 * Building kselftest's mm tests from a kernel tree: the tree as kernel builds
 * get it (source.c: a tarball extracted once, or a git tree's clone), a
 * hardlink farm of it that the selftests' makefiles may write into, the
 * kernel's headers with make O=, then each test's make target with OUTPUT=
 * in a staging folder renamed into the cache. Every program runs through
 * vn_spawn_run with an argv and a deadline.
 */
#include "kernel/selftests.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "kernel/kernel-priv.h"
#include "util/alloc.h"
#include "util/cleanup.h"
#include "util/clock.h"
#include "util/dir.h"
#include "util/file.h"
#include "util/spawn.h"
#include "util/strbuf.h"

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

int vn_selftests_parse_list(const char *list, char ***out, size_t *n, struct vn_error *err)
{
	_cleanup_free_ char *copy = vn_xstrdup(list ? list : VN_SELFTESTS_DEFAULT);
	_cleanup_strv_ char **v = NULL;
	size_t k = 0;
	char *save = NULL;

	for (char *t = strtok_r(copy, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
		bool ok = *t && *t != '-' && *t != '.' && strlen(t) <= 64;
		for (const char *c = t; ok && *c; c++)
			ok = (*c >= 'a' && *c <= 'z') || (*c >= 'A' && *c <= 'Z') || (*c >= '0' && *c <= '9') ||
			     strchr("._+-", *c);
		if (!ok)
			return vn_input_error(err,
					      "--tests: '%s' is not a test's name (letters, digits and \"._+-\", at "
					      "most 64, not first \".\" or \"-\")",
					      t);
		if (k == VN_SELFTESTS_MAX)
			return vn_input_error(err, "--tests: more than %d tests", VN_SELFTESTS_MAX);
		vn_strv_push(&v, &k, t);
	}
	if (!k)
		return vn_input_error(err, "--tests '%s': no test named", list);
	qsort(v, k, sizeof(*v), cmp_str);
	for (size_t i = 1; i < k; i++)
		if (strcmp(v[i - 1], v[i]) == 0)
			return vn_input_error(err, "--tests: %s named twice", v[i]);
	*out = steal_pointer(&v);
	*n = k;
	return 0;
}

/* The static libraries some tests link (their makefile's LDLIBS), with the Debian package that has each. */
static const struct {
	const char *test, *lib, *pkg;
} test_libs[] = {
	{"migration", "libnuma.a", "libnuma-dev"},
	{"ksm_tests", "libnuma.a", "libnuma-dev"},
	{"mlock-random-test", "libcap.a", "libcap-dev"},
	{"memfd_secret", "libcap.a", "libcap-dev"},
};

/* What a build needs on this host, before anything is hashed or unpacked: all of it named at once. */
static int check_tools(const struct vn_recipe *r, char *const *tests, size_t n, enum vn_arch arch, struct vn_error *err)
{
	const struct vn_arch_info *ai = vn_arch_info(arch);
	const char *multi = arch == vn_arch_host() ? "" : ":", *deb = arch == vn_arch_host() ? "" : ai->deb;
	_cleanup_free_ char *gcc = arch == vn_arch_host() ? vn_xstrdup("gcc") : vn_xasprintf("%s-gcc", ai->triplet);
	_cleanup_strbuf_ struct vn_strbuf missing = VN_STRBUF_INIT, pkgs = VN_STRBUF_INIT;
	char cross[96];

	snprintf(cross, sizeof(cross), "gcc-%s", ai->triplet);

#define NEED(what, ...)                                                            \
	do {                                                                       \
		vn_strbuf_printf(&missing, "%s%s", missing.len ? ", " : "", what); \
		vn_strbuf_printf(&pkgs, " " __VA_ARGS__);                          \
	} while (0)
	if (!vn_kernel_in_path("make"))
		NEED("make", "make");
	if (!vn_kernel_in_path(gcc))
		NEED(gcc, "%s", arch == vn_arch_host() ? "gcc" : cross);
	if (r->tree_kind == VN_TREE_TARBALL && !vn_kernel_in_path("xz"))
		NEED("xz", "xz-utils");
	if (r->tree_kind == VN_TREE_GIT && !vn_kernel_in_path("git"))
		NEED("git", "git");
	for (size_t i = 0; i < VN_ARRAY_SIZE(test_libs); i++) {
		char lib[PATH_MAX];
		snprintf(lib, sizeof(lib), "/usr/lib/%s/%s", ai->triplet, test_libs[i].lib);
		bool wanted = false;
		for (size_t j = 0; j < n && !wanted; j++)
			wanted = strcmp(tests[j], test_libs[i].test) == 0;
		if (wanted && access(lib, R_OK) != 0 && !strstr(pkgs.s ? pkgs.s : "", test_libs[i].pkg))
			NEED(lib, "%s%s%s", test_libs[i].pkg, multi, deb);
	}
#undef NEED
	if (!missing.len)
		return 0;
	return vn_infra_error(err, -ENOENT, "building kselftest for %s needs: %s; install with: apt-get install%s",
			      ai->name, missing.s, pkgs.s);
}

/*
 * make with args in cwd, its lines (progress as stage) watched as kernel builds' are. A failure
 * is never the kernel's: a full disk or a killed compiler says so, and
 * anything else (a compile error) is an infrastructure error too.
 */
static int run_make(const struct vn_kernel_work *w, const char *stage, const char *cwd, char *const *args, size_t nargs,
		    const char *what, unsigned deadline_s, struct vn_error *err)
{
	struct vn_kernel_watch mw = {.w = w, .stage = w->o->progress ? stage : NULL};
	struct vn_spawn_opts so = {.cwd = cwd,
				   .log_fd = w->log_fd,
				   .line = vn_kernel_watch_line,
				   .line_data = &mw,
				   .deadline_s = deadline_s};
	const struct vn_arch_info *ai = vn_arch_info(w->o->arch);
	_cleanup_free_ const char **argv = vn_xcalloc(nargs + 8, sizeof(char *));
	char j[32], karch[64], cross[128], machine[64];
	size_t a = 0;

	snprintf(j, sizeof(j), "-j%d", w->o->jobs);
	argv[a++] = "make";
	argv[a++] = j;
	if (w->o->arch != vn_arch_host()) {
		/* The selftests' makefiles read the machine from uname -m unless told: the guest's. */
		snprintf(karch, sizeof(karch), "ARCH=%s", ai->karch);
		snprintf(cross, sizeof(cross), "CROSS_COMPILE=%s-", ai->triplet);
		snprintf(machine, sizeof(machine), "MACHINE=%s",
			 strcmp(ai->karch, "powerpc") == 0 ? "ppc64" : ai->karch);
		argv[a++] = karch;
		argv[a++] = cross;
		argv[a++] = machine;
	}
	for (size_t i = 0; i < nargs; i++)
		argv[a++] = args[i];
	int rc = vn_spawn_run(argv, &so, err);
	if (rc <= 0)
		return rc;
	struct vn_error e = {0};
	int erc = vn_kernel_step_failed(&mw, what, rc, &e);
	if (e.kind == VN_ERR_INFRA)
		rc = vn_infra_error(err, erc, "%s", e.msg);
	else
		rc = vn_infra_error(err, -EIO,
				    "%s: %s failed (exit %d): kselftest did not build from this tree, which says "
				    "nothing of the kernel",
				    w->r->name, what, rc);
	vn_error_clear(&e);
	return rc;
}

/* The kernel's uapi headers in hdr (make O=hdr headers), once per source identity. */
static int headers(const struct vn_kernel_work *w, const char *sid, unsigned deadline_s, struct vn_error *err)
{
	_cleanup_free_ char *stamp = vn_xasprintf("%s/.vnuma-headers", w->obj), *old = NULL;
	_cleanup_free_ char *o_arg = vn_xasprintf("O=%s", w->obj);
	char *args[] = {o_arg, "headers"};
	int rc;

	if (vn_file_read(stamp, 4096, &old, &(size_t){0}, NULL) == 0 && strcmp(old, sid) == 0)
		return 0;
	vn_rm_rf(w->obj);
	if ((rc = vn_mkdir_p(w->obj, 0755, err)) < 0)
		return rc;
	vn_kernel_say(w, "headers", NULL);
	if ((rc = run_make(w, "headers", w->src, args, VN_ARRAY_SIZE(args), "make headers", deadline_s, err)) < 0)
		return rc;
	return vn_file_write(stamp, sid) < 0 ? vn_infra_error(err, -EIO, "writing %s", stamp) : 0;
}

/* The tree's mm tests: mm/ from 6.3, vm/ before; an input error when it has neither. */
static int tree_subdir(const struct vn_kernel_work *w, const char **out, struct vn_error *err)
{
	static const char *const subs[] = {"mm", "vm"};
	for (size_t i = 0; i < VN_ARRAY_SIZE(subs); i++) {
		_cleanup_free_ char *mk = vn_xasprintf("%s/tools/testing/selftests/%s/Makefile", w->src, subs[i]);
		if (access(mk, F_OK) == 0) {
			*out = subs[i];
			return 0;
		}
	}
	return vn_input_error(err,
			      "%s: no tools/testing/selftests/mm (nor vm, before 6.3) in %s: not a kernel tree "
			      "with kselftest",
			      w->r->name, w->r->tree_path);
}

/* Each test: a NAME.c built by make (OUTPUT=out), or a NAME script copied; any other name is refused first. */
static int build_tests(const struct vn_kernel_work *w, const char *sub, char *const *tests, size_t n, const char *out,
		       unsigned deadline_s, struct vn_error *err)
{
	_cleanup_free_ char *dir = vn_xasprintf("%s/tools/testing/selftests/%s", w->src, sub);
	_cleanup_free_ char *o_arg = vn_xasprintf("OUTPUT=%s", out),
			    *k_arg = vn_xasprintf("KHDR_INCLUDES=-isystem %s/usr/include", w->obj);
	_cleanup_strv_ char **args = NULL;
	size_t na = 0, ntargets;
	int rc;

	/* The headers are O='s, not the tree's; static, so the guest needs none of the host's libraries. */
	vn_strv_push(&args, &na, o_arg);
	vn_strv_push(&args, &na, k_arg);
	vn_strv_push(&args, &na, "EXTRA_CFLAGS=-static");
	ntargets = na;
	for (size_t i = 0; i < n; i++) {
		_cleanup_free_ char *c = vn_xasprintf("%s/%s.c", dir, tests[i]),
				    *sh = vn_xasprintf("%s/%s", dir, tests[i]);
		_cleanup_free_ char *to = vn_xasprintf("%s/%s", out, tests[i]);
		struct stat st;
		if (access(c, F_OK) == 0)
			vn_strv_push(&args, &na, to);
		else if (stat(sh, &st) == 0 && S_ISREG(st.st_mode))
			continue;
		else
			return vn_input_error(err,
					      "--tests: %s: no %s.c nor script %s in %s's tools/testing/selftests/%s",
					      tests[i], tests[i], tests[i], w->r->name, sub);
	}
	for (size_t i = 0; i < n; i++) {
		_cleanup_free_ char *c = vn_xasprintf("%s/%s.c", dir, tests[i]),
				    *sh = vn_xasprintf("%s/%s", dir, tests[i]);
		_cleanup_free_ char *to = vn_xasprintf("%s/%s", out, tests[i]);
		if (access(c, F_OK) != 0 && ((rc = vn_file_copy(sh, to)) < 0 || chmod(to, 0755) < 0))
			return vn_infra_error(err, rc < 0 ? rc : -errno, "copying %s: %s", sh,
					      strerror(rc < 0 ? -rc : errno));
	}
	if (na == ntargets)
		return 0;
	vn_kernel_say(w, "build", sub);
	return run_make(w, "build", dir, args, na, "make of the tests", deadline_s, err);
}

/* The stock kernel's tree as a recipe of its own: Debian's tarball, with no patch and no config. */
static int stock_recipe(const char *tarball, struct vn_recipe **out, struct vn_error *err)
{
	if (access(tarball, R_OK) != 0)
		return vn_infra_error(err, -ENOENT,
				      "%s: %s: kselftest for the stock kernel is built from Debian's kernel source: "
				      "apt-get install linux-source-6.1 (scripts/setup.sh does)",
				      tarball, strerror(errno));
	struct vn_recipe *r = vn_xcalloc(1, sizeof(*r));
	r->name = vn_xstrdup("stock");
	r->path = vn_xstrdup(tarball);
	r->tree = vn_xstrdup(tarball);
	r->tree_path = vn_xstrdup(tarball);
	r->type = VN_RECIPE_SOURCE;
	r->tree_kind = VN_TREE_TARBALL;
	*out = r;
	return 0;
}

/* With the work folder's lock: the tree, the headers, the tests into staging/SUBDIR, then the entry installed. */
static int build_locked(const struct vn_kernel_work *w, const char *sid, const char *commit, const char *diff,
			const char *staging, const char *final, unsigned dl, struct vn_selftests *t,
			struct vn_error *err)
{
	struct vn_kernel_work wt = *w;
	_cleanup_free_ char *pristine = NULL, *out = NULL, *vm = NULL;
	const char *sub = NULL;
	double t0 = vn_now_s();
	int rc;

	if (w->r->tree_kind == VN_TREE_GIT)
		rc = vn_kernel_source_checkout(&wt, commit, diff, err);
	else if ((rc = vn_kernel_source_extract(&wt, sid, &pristine, err)) == 0) {
		wt.pristine = pristine;
		rc = vn_kernel_source_worktree(&wt, err);
	}
	if (rc < 0 || (rc = tree_subdir(&wt, &sub, err)) < 0)
		return rc;
	out = vn_xasprintf("%s/%s", staging, sub);
	if ((rc = vn_mkdir_p(out, 0755, err)) < 0 || (rc = headers(&wt, sid, dl, err)) < 0 ||
	    (rc = build_tests(&wt, sub, t->tests, t->ntests, out, dl, err)) < 0)
		return rc;
	for (size_t i = 0; i < t->ntests; i++) {
		_cleanup_free_ char *p = vn_xasprintf("%s/%s", out, t->tests[i]);
		if (!vn_selftests_program_ok(p, w->o->arch))
			return vn_infra_error(err, -ENOEXEC, "%s: make left no %s program there", p,
					      vn_arch_name(w->o->arch));
	}
	/* The shipped scenario names 6.1's vm/; a newer tree's mm/ answers there too. */
	vm = vn_xasprintf("%s/vm", staging);
	if (strcmp(sub, "mm") == 0 && symlink("mm", vm) < 0)
		return vn_infra_error(err, -errno, "symlink %s: %s", vm, strerror(errno));
	vn_kernel_say(&wt, "install", NULL);
	t->subdir = vn_xstrdup(sub);
	t->build_s = vn_now_s() - t0;
	return vn_selftests_cache_install(t, staging, final, err);
}

/* The work folder of a tree and arch: one per tarball identity, one per git checkout whatever its commit. */
static char *work_dir(const struct vn_recipe *r, const char *cache, const char *sid, enum vn_arch arch)
{
	char th[VN_SHA256_HEX_LEN + 1];
	uint8_t d[VN_SHA256_LEN];
	struct vn_sha256 c;

	if (r->tree_kind != VN_TREE_GIT)
		return vn_xasprintf("%s/selftests/work/%.16s-%s", cache, sid, vn_arch_name(arch));
	vn_sha256_init(&c);
	vn_kernel_hash_str(&c, r->tree_path);
	vn_sha256_final(&c, d);
	vn_sha256_hex(d, th);
	return vn_xasprintf("%s/selftests/work/git-%.16s-%s", cache, th, vn_arch_name(arch));
}

/* A failed build: its log kept as failed-KEY.log (its tail in err when none is there), staging removed. */
static int build_failed(const struct vn_recipe *r, const char *staging, const char *failed, int rc,
			struct vn_error *err)
{
	_cleanup_free_ char *log = vn_xasprintf("%s/build.log", staging);
	if (access(log, F_OK) == 0 && rename(log, failed) == 0 && err && err->kind != VN_ERR_NONE && !err->detail) {
		_cleanup_free_ char *tail = vn_kernel_log_tail(failed, 25);
		if (tail)
			vn_error_set_detail(err, tail);
	}
	if (err && err->kind != VN_ERR_NONE)
		vn_error_prefix(err, "kselftest from %s (log: %s)", r->name, failed);
	vn_rm_rf(staging);
	return rc;
}

int vn_selftests_build(const struct vn_recipe *recipe, const struct vn_selftests_opts *o, struct vn_selftests **out,
		       struct vn_error *err)
{
	char sid[VN_SHA256_HEX_LEN + 1], commit[VN_GIT_HASH_MAX + 1], key[VN_SHA256_HEX_LEN + 1];
	_cleanup_recipe_ struct vn_recipe *stock = NULL;
	_cleanup_selftests_ struct vn_selftests *t = vn_xcalloc(1, sizeof(*t));
	_cleanup_free_ char *diff = NULL, *top = NULL, *final = NULL, *wdir = NULL, *lock = NULL, *staging = NULL,
			    *log = NULL, *failed = NULL, *srcdir = NULL;
	_cleanup_close_ int lock_fd = -1, log_fd = -1;
	const struct vn_recipe *r = recipe;
	int rc;

	if (!o->cache_dir)
		return vn_input_error(err, "no kernel cache directory");
	if ((rc = vn_selftests_parse_list(o->tests, &t->tests, &t->ntests, err)) < 0)
		return rc;
	if (!r && (rc = stock_recipe(o->stock_tree ? o->stock_tree : VN_SELFTESTS_STOCK_TREE, &stock, err)) < 0)
		return rc;
	r = r ? r : stock;
	if (r->type != VN_RECIPE_SOURCE)
		return vn_input_error(err,
				      "%s: a %s recipe has no source tree to build kselftest from: give a source "
				      "recipe, or the stock kernel (Debian's linux-source-6.1)",
				      r->path, r->type == VN_RECIPE_STOCK ? "stock" : "prebuilt");
	if ((rc = check_tools(r, t->tests, t->ntests, o->arch, err)) < 0)
		return rc;
	srcdir = vn_xasprintf("%s/src", o->cache_dir);
	top = vn_xasprintf("%s/selftests", o->cache_dir);
	if ((rc = vn_mkdir_p(srcdir, 0755, err)) < 0 || (rc = vn_mkdir_p(top, 0755, err)) < 0 ||
	    (rc = vn_kernel_source_id(r, NULL, o->cache_dir, sid, &diff, commit, err)) < 0)
		return rc;
	vn_selftests_key(sid, o->arch, t->tests, t->ntests, key);
	final = vn_xasprintf("%s/%.16s", top, key);
	for (int locked = 0; locked < 2; locked++) {
		struct vn_selftests *hit = NULL;
		if (vn_selftests_cache_get(final, key, &hit) == 0) {
			hit->cached = true;
			*out = hit;
			return 0;
		}
		if (locked)
			break;
		vn_kernel_cache_sweep(top);
		wdir = work_dir(r, o->cache_dir, sid, o->arch);
		lock = vn_xasprintf("%s.lock", wdir);
		if ((rc = vn_mkdir_p(wdir, 0755, err)) < 0)
			return rc;
		/* One build per work folder at a time; whoever held it may have built this very key. */
		if ((lock_fd = open(lock, O_RDWR | O_CREAT | O_CLOEXEC, 0644)) < 0 || flock(lock_fd, LOCK_EX) < 0)
			return vn_infra_error(err, -errno, "%s: %s", lock, strerror(errno));
	}
	staging = vn_xasprintf("%s/.tmp-%.16s-%d", top, key, (int)getpid());
	log = vn_xasprintf("%s/build.log", staging);
	failed = vn_xasprintf("%s/failed-%.16s.log", top, key);
	vn_rm_rf(staging);
	if ((rc = vn_mkdir_p(staging, 0755, err)) < 0)
		return rc;
	if ((log_fd = open(log, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644)) < 0)
		return build_failed(r, staging, failed, vn_infra_error(err, -errno, "%s: %s", log, strerror(errno)),
				    err);
	dprintf(log_fd, "vnuma kernel selftests: tree %s, arch %s, key %s\n", r->tree_path, vn_arch_name(o->arch), key);
	t->key = vn_xstrdup(key);
	t->source_id = vn_xstrdup(sid);
	t->tree = vn_xstrdup(r->tree_path);
	t->arch = o->arch;
	_cleanup_free_ char *hdr = vn_xasprintf("%s/hdr", wdir), *src = vn_xasprintf("%s/src", wdir);
	struct vn_kernel_build_opts ko = {.cache_dir = o->cache_dir,
					  .jobs = o->jobs > 0 ? o->jobs : (int)sysconf(_SC_NPROCESSORS_ONLN),
					  .arch = o->arch,
					  .progress = o->progress,
					  .progress_data = o->progress_data};
	const struct vn_kernel_work w = {.r = r, .o = &ko, .src = src, .obj = hdr, .dir = wdir, .log_fd = log_fd};
	rc = build_locked(&w, sid, commit, diff, staging, final, o->deadline_s ? o->deadline_s : 3600, t, err);
	if (rc < 0)
		return build_failed(r, staging, failed, rc, err);
	vn_selftests_free(steal_pointer(&t));
	if (vn_selftests_cache_get(final, key, &t) < 0)
		return vn_infra_error(err, -EIO, "%s: the entry just installed is not whole", final);
	*out = steal_pointer(&t);
	return 0;
}
