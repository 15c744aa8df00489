/*
 * vnuma kernel selftests, offline: a fake kernel tree whose top Makefile
 * makes headers in O= and whose selftests/vm (or mm) Makefile compiles real,
 * static C programs, so the cache, the refusals and the make failure classes
 * run as they do on linux-source-6.1, in a second.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "kernel/recipe.h"
#include "kernel/selftests.h"
#include "util/alloc.h"
#include "util/cleanup.h"
#include "util/dir.h"
#include "util/spawn.h"
#include "tmpdir.h"

VN_TEST_TMPDIR(tmp, "selftests")

static char *at(const char *rel)
{
	return vn_xasprintf("%s/%s", tmp, rel);
}

/* A kernel tree at top (SUB: vm or mm) with tests alpha (needs the O= headers), beta, broken, run.sh; then NAME.tar. */
static void fake_tree(const char *name, const char *sub)
{
	_cleanup_free_ char *top = vn_xasprintf("src-%s/linux-fake", name), *p = NULL, *sd = NULL;
	_cleanup_free_ char *mk = vn_xasprintf("headers:\n\tmkdir -p $(O)/usr/include/linux\n"
					       "\techo '#define FAKE_UAPI 61' > $(O)/usr/include/linux/fake.h\n"
					       "\techo x >> %s/headers.count\n.PHONY: headers\n",
					       tmp);
	/* Each test first runs make-hook.sh where a test put one: a full disk, a killed compiler. */
	_cleanup_free_ char *vmk = vn_xasprintf("$(OUTPUT)/%%: %%.c\n"
						"\tif [ -e %s/make-hook.sh ]; then sh %s/make-hook.sh || exit 1; fi\n"
						"\t$(CC) $(EXTRA_CFLAGS) $(KHDR_INCLUDES) $< -o $@\n",
						tmp, tmp);
	p = vn_xasprintf("%s/Makefile", top);
	vn_test_put(tmp, p, mk);
	sd = vn_xasprintf("%s/tools/testing/selftests/%s", top, sub);
	static const char *const files[][2] = {
		{"alpha.c", "#include <linux/fake.h>\nint main(void) { return FAKE_UAPI - 61; }\n"},
		{"beta.c", "int main(void) { return 0; }\n"},
		{"broken.c", "int main(void) { return undeclared_here; }\n"},
		{"run.sh", "#!/bin/sh\nexit 0\n"},
	};
	free(p);
	p = vn_xasprintf("%s/Makefile", sd);
	vn_test_put(tmp, p, vmk);
	for (size_t i = 0; i < VN_ARRAY_SIZE(files); i++) {
		free(p);
		p = vn_xasprintf("%s/%s", sd, files[i][0]);
		vn_test_put(tmp, p, files[i][1]);
	}
	_cleanup_free_ char *tar = vn_xasprintf("%s/%s.tar", tmp, name), *dir = vn_xasprintf("%s/src-%s", tmp, name);
	const char *argv[] = {"tar", "-cf", tar, "-C", dir, "linux-fake", NULL};
	struct vn_error err = {0};
	assert_int_equal(vn_spawn_run(argv, NULL, &err), 0);
	_cleanup_free_ char *json = vn_xasprintf(
		"{\"type\": \"source\", \"tree\": \"%s.tar\", \"config\": {\"base\": \"tinyconfig\"}}", name);
	free(p);
	p = vn_xasprintf("%s.json", name);
	vn_test_put(tmp, p, json);
}

static struct vn_recipe *recipe(const char *name)
{
	_cleanup_free_ char *rel = vn_xasprintf("%s.json", name), *p = at(rel);
	struct vn_recipe *r = NULL;
	struct vn_error err = {0};
	assert_int_equal(vn_recipe_load(p, &r, &err), 0);
	return r;
}

static int build(const struct vn_recipe *r, const char *tests, struct vn_selftests **out, struct vn_error *err)
{
	_cleanup_free_ char *cache = at("cache");
	struct vn_selftests_opts o = {.cache_dir = cache, .tests = tests, .jobs = 1, .deadline_s = 120};
	memset(err, 0, sizeof(*err));
	return vn_selftests_build(r, &o, out, err);
}

static int count_lines(const char *rel)
{
	_cleanup_free_ char *p = at(rel), *s = NULL;
	int n = 0;
	if (vn_file_read(p, 1 << 20, &s, &(size_t){0}, NULL) < 0)
		return 0;
	for (const char *c = s; *c; c++)
		n += *c == '\n';
	return n;
}

/* Folders whose name starts with prefix in CACHE/selftests: staging left behind, or the .bad ones. */
static int entries(const char *prefix)
{
	_cleanup_free_ char *top = at("cache/selftests");
	DIR *d = opendir(top);
	int n = 0;
	for (struct dirent *e; d && (e = readdir(d));)
		n += strncmp(e->d_name, prefix, strlen(prefix)) == 0;
	if (d)
		closedir(d);
	return n;
}

static void test_list(void **state)
{
	(void)state;
	_cleanup_strv_ char **v = NULL;
	struct vn_error err = {0};
	size_t n = 0;

	assert_int_equal(vn_selftests_parse_list("ksm_tests,migration", &v, &n, &err), 0);
	assert_int_equal(n, 2);
	assert_string_equal(v[0], "ksm_tests");
	vn_strv_free(steal_pointer(&v));
	assert_int_equal(vn_selftests_parse_list("migration,ksm_tests", &v, &n, &err), 0);
	assert_string_equal(v[0], "ksm_tests"); /* sorted: one key whatever the order */
	vn_strv_free(steal_pointer(&v));
	assert_int_equal(vn_selftests_parse_list(NULL, &v, &n, &err), 0);
	assert_int_equal(n, 2);
	static const char *const bad[] = {"a,a", "../x", "-x", ".x", "a/b", "", ",", "a b"};
	for (size_t i = 0; i < VN_ARRAY_SIZE(bad); i++) {
		struct vn_error e = {0};
		assert_int_equal(vn_selftests_parse_list(bad[i], &v, &n, &e), -EINVAL);
		assert_int_equal(e.kind, VN_ERR_INPUT);
	}
}

static void test_build_and_cache(void **state)
{
	(void)state;
	_cleanup_selftests_ struct vn_selftests *t = NULL, *again = NULL, *other = NULL, *rebuilt = NULL;
	struct vn_error err = {0};

	fake_tree("vmtree", "vm");
	_cleanup_recipe_ struct vn_recipe *r = recipe("vmtree");
	assert_int_equal(build(r, "beta,alpha,run.sh", &t, &err), 0);
	assert_false(t->cached);
	assert_string_equal(t->subdir, "vm");
	assert_int_equal(t->ntests, 3);
	for (size_t i = 0; i < t->ntests; i++) {
		_cleanup_free_ char *p = vn_xasprintf("%s/vm/%s", t->dir, t->tests[i]);
		assert_true(vn_selftests_program_ok(p, VN_ARCH_X86_64));
		assert_false(vn_selftests_program_ok(p, VN_ARCH_ARM64) && strcmp(t->tests[i], "run.sh") != 0);
	}
	/* alpha returns 0 only when compiled against the O= headers. */
	_cleanup_free_ char *alpha = vn_xasprintf("%s/vm/alpha", t->dir);
	const char *argv[] = {alpha, NULL};
	assert_int_equal(vn_spawn_run(argv, NULL, &err), 0);
	assert_int_equal(count_lines("headers.count"), 1);

	/* The same tests in another order: a lookup. */
	assert_int_equal(build(r, "run.sh,alpha,beta", &again, &err), 0);
	assert_true(again->cached);
	assert_string_equal(again->dir, t->dir);
	/* Another list: its own entry, the headers made once per tree. */
	assert_int_equal(build(r, "beta", &other, &err), 0);
	assert_false(other->cached);
	assert_string_not_equal(other->dir, t->dir);
	assert_int_equal(count_lines("headers.count"), 1);

	/* A torn binary is never served: the entry goes to .bad and is built again. */
	_cleanup_free_ char *beta = vn_xasprintf("%s/vm/beta", t->dir);
	assert_int_equal(truncate(beta, 10), 0);
	assert_int_equal(build(r, "alpha,beta,run.sh", &rebuilt, &err), 0);
	assert_false(rebuilt->cached);
	assert_true(vn_selftests_program_ok(beta, VN_ARCH_X86_64));
	assert_int_equal(entries(".bad"), 1);
	assert_int_equal(entries(".tmp-"), 0);
}

static void test_mm_tree(void **state)
{
	(void)state;
	_cleanup_selftests_ struct vn_selftests *t = NULL;
	struct vn_error err = {0};

	fake_tree("mmtree", "mm");
	_cleanup_recipe_ struct vn_recipe *r = recipe("mmtree");
	assert_int_equal(build(r, "beta", &t, &err), 0);
	assert_string_equal(t->subdir, "mm");
	/* The shipped scenario's /opt/kselftest/vm/ path answers for an mm tree too. */
	_cleanup_free_ char *via_vm = vn_xasprintf("%s/vm/beta", t->dir);
	assert_true(vn_selftests_program_ok(via_vm, VN_ARCH_X86_64));
}

static void test_refusals(void **state)
{
	(void)state;
	_cleanup_selftests_ struct vn_selftests *t = NULL;
	struct vn_error err = {0};

	fake_tree("reftree", "vm");
	_cleanup_recipe_ struct vn_recipe *r = recipe("reftree");
	/* A test the tree has no source for: exit 2, before make, nothing left half-built. */
	assert_int_equal(build(r, "alpha,nosuch", &t, &err), -EINVAL);
	assert_int_equal(err.kind, VN_ERR_INPUT);
	assert_non_null(strstr(err.msg, "nosuch"));
	assert_int_equal(entries(".tmp-"), 0);
	vn_error_clear(&err);

	/* A prebuilt recipe has no tree. */
	vn_test_put(tmp, "pre.json", "{\"type\": \"prebuilt\", \"image\": \"vmtree.tar\"}");
	vn_test_put(tmp, "vmtree.tar", "x");
	_cleanup_recipe_ struct vn_recipe *pre = recipe("pre");
	assert_int_equal(build(pre, NULL, &t, &err), -EINVAL);
	assert_int_equal(err.kind, VN_ERR_INPUT);
	vn_error_clear(&err);

	/* The stock kernel without Debian's linux-source: what to install, exit 3. */
	_cleanup_free_ char *cache = at("cache"), *none = at("no-linux-source.tar.xz");
	struct vn_selftests_opts o = {.cache_dir = cache, .stock_tree = none};
	assert_true(vn_selftests_build(NULL, &o, &t, &err) < 0);
	assert_int_equal(err.kind, VN_ERR_INFRA);
	assert_non_null(strstr(err.msg, "apt-get install linux-source-6.1"));
	vn_error_clear(&err);

	/* Another architecture without its cross compiler: refused plainly, naming the package. */
	_cleanup_free_ char *bin = at("bin"), *old = vn_xstrdup(getenv("PATH"));
	assert_int_equal(mkdir(bin, 0755), 0);
	static const char *const tools[] = {"make", "gcc", "xz", "tar"};
	for (size_t i = 0; i < VN_ARRAY_SIZE(tools); i++) {
		_cleanup_free_ char *from = vn_xasprintf("/usr/bin/%s", tools[i]),
				    *to = vn_xasprintf("%s/%s", bin, tools[i]);
		assert_int_equal(symlink(from, to), 0);
	}
	setenv("PATH", bin, 1);
	o.stock_tree = NULL;
	o.arch = VN_ARCH_ARM64;
	o.tests = "beta";
	memset(&err, 0, sizeof(err));
	int rc = vn_selftests_build(r, &o, &t, &err);
	setenv("PATH", old, 1);
	assert_true(rc < 0);
	assert_int_equal(err.kind, VN_ERR_INFRA);
	assert_non_null(strstr(err.msg, "gcc-aarch64-linux-gnu"));
	vn_error_clear(&err);
}

/* Make's failures are never the kernel's: a compile error, a full disk, a killed compiler, each exit 3. */
static void test_make_failures(void **state)
{
	(void)state;
	_cleanup_selftests_ struct vn_selftests *t = NULL;
	struct vn_error err = {0};

	fake_tree("failtree", "vm");
	_cleanup_recipe_ struct vn_recipe *r = recipe("failtree");
	assert_int_equal(build(r, "beta,broken", &t, &err), -EIO);
	assert_int_equal(err.kind, VN_ERR_INFRA);
	assert_non_null(strstr(err.msg, "says nothing of the kernel"));
	assert_non_null(strstr(err.msg, "failed-"));
	assert_non_null(err.detail);
	assert_non_null(strstr(err.detail, "undeclared_here"));
	assert_int_equal(entries(".tmp-"), 0);
	assert_int_equal(entries("failed-"), 1);
	vn_error_clear(&err);

	vn_test_put(tmp, "make-hook.sh", "echo 'cc1: fatal error: x.o: No space left on device'\nexit 1\n");
	assert_int_equal(build(r, "beta", &t, &err), -ENOSPC);
	assert_int_equal(err.kind, VN_ERR_INFRA);
	assert_non_null(strstr(err.msg, "disk is full"));
	vn_error_clear(&err);

	vn_test_put(tmp, "make-hook.sh", "echo 'gcc: fatal error: Killed signal terminated program cc1'\nexit 1\n");
	assert_int_equal(build(r, "beta", &t, &err), -ECHILD);
	assert_int_equal(err.kind, VN_ERR_INFRA);
	assert_non_null(strstr(err.msg, "killed"));
	vn_error_clear(&err);
	assert_int_equal(entries(".tmp-"), 0);
	_cleanup_free_ char *hook = at("make-hook.sh");
	unlink(hook);
	/* Nothing of the failures stays in the way: the same build now succeeds. */
	assert_int_equal(build(r, "beta", &t, &err), 0);
	assert_false(t->cached);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_list),
		cmocka_unit_test_setup_teardown(test_build_and_cache, setup, teardown),
		cmocka_unit_test_setup_teardown(test_mm_tree, setup, teardown),
		cmocka_unit_test_setup_teardown(test_refusals, setup, teardown),
		cmocka_unit_test_setup_teardown(test_make_failures, setup, teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
