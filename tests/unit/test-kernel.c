/* Kernel recipes: parsing and its errors, the cache key, patching a small tree, config verification. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include <dirent.h>
#include <elf.h>
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "kernel/kernel-priv.h"
#include "kernel/kernel.h"
#include "kernel/recipe.h"
#include "kernel/vmlinux.h"
#include "util/alloc.h"
#include "util/cleanup.h"
#include "util/dir.h"
#include "util/spawn.h"
#include "util/file.h"

static char tmpdir[] = "/tmp/vn-test-kernel-XXXXXX";

static void put(const char *rel, const char *content)
{
	char p[4096];
	snprintf(p, sizeof(p), "%s/%s", tmpdir, rel);
	for (char *s = p + strlen(tmpdir) + 1; (s = strchr(s, '/')); s++) {
		*s = '\0';
		mkdir(p, 0755);
		*s = '/';
	}
	FILE *f = fopen(p, "w");
	assert_non_null(f);
	fputs(content, f);
	fclose(f);
}

static char *slurp(const char *rel)
{
	char p[4096], buf[8192];
	snprintf(p, sizeof(p), "%s/%s", tmpdir, rel);
	FILE *f = fopen(p, "r");
	if (!f)
		return NULL;
	size_t n = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[n] = '\0';
	return strdup(buf);
}

static char *path_of(const char *rel)
{
	char *p;
	assert_true(asprintf(&p, "%s/%s", tmpdir, rel) > 0);
	return p;
}

static int setup(void **state)
{
	(void)state;
	assert_non_null(mkdtemp(tmpdir));
	put("tree.tar.xz", "not really a tarball; recipes only check it exists\n");
	put("k/numa.config", "CONFIG_NUMA=y\nCONFIG_SMP=y\n# CONFIG_MODULES is not set\n");
	put("k/0001-fix.patch", "--- a/mm/x.c\n+++ b/mm/x.c\n@@ -1,3 +1,3 @@\n one\n-two\n+TWO\n three\n");
	put("k.json", "{\"type\": \"source\", \"tree\": \"tree.tar.xz\", \"patches\": [\"0001-fix.patch\"],\n"
		      " \"config\": {\"base\": \"tinyconfig\", \"fragments\": [\"numa.config\"], \"require\": "
		      "[\"CONFIG_NUMA\"]}}\n");
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	vn_rm_rf(tmpdir);
	return 0;
}

static void test_recipe_source(void **state)
{
	(void)state;
	_cleanup_free_ char *p = path_of("k.json");
	struct vn_recipe *r = NULL;
	struct vn_error err = {0};

	assert_int_equal(vn_recipe_load(p, &r, &err), 0);
	assert_string_equal(r->name, "k");
	assert_int_equal(r->type, VN_RECIPE_SOURCE);
	assert_int_equal(r->tree_kind, VN_TREE_TARBALL);
	assert_int_equal(r->npatches, 1);
	assert_non_null(strstr(r->patches[0], "/k/0001-fix.patch"));
	assert_string_equal(r->kconfig.base, "tinyconfig");
	assert_int_equal(r->kconfig.nfragments, 1);
	assert_non_null(r->kconfig.fragments[0]);
	assert_int_equal(r->kconfig.nrequire, 1);
	/* No config.arch: every architecture builds with the recipe's config. */
	assert_ptr_equal(vn_recipe_config_for(r, VN_ARCH_ARM64), &r->kconfig);
	vn_recipe_free(r);
}

/* config.arch gives an architecture its own config, which replaces the recipe's whole; base is inherited. */
static void test_recipe_arch(void **state)
{
	(void)state;
	put("ka/numa-arm64.config", "CONFIG_NUMA=y\nCONFIG_SERIAL_AMBA_PL011=y\n");
	put("ka/numa.config", "CONFIG_NUMA=y\n");
	put("ka.json",
	    "{\"type\": \"source\", \"tree\": \"tree.tar.xz\",\n"
	    " \"config\": {\"base\": \"tinyconfig\", \"fragments\": [\"numa.config\"],\n"
	    "  \"arch\": {\"aarch64\": {\"fragments\": [\"numa-arm64.config\"], \"require\": [\"CONFIG_OF_NUMA\"]},\n"
	    "           \"ppc64le\": {\"base\": \"ppc64le_defconfig\"}}}}\n");
	_cleanup_free_ char *p = path_of("ka.json");
	_cleanup_recipe_ struct vn_recipe *r = NULL;
	struct vn_error err = {0};

	if (vn_recipe_load(p, &r, &err) != 0)
		fail_msg("%s", err.msg);
	const struct vn_recipe_config *x = vn_recipe_config_for(r, VN_ARCH_X86_64),
				      *a = vn_recipe_config_for(r, VN_ARCH_ARM64),
				      *pp = vn_recipe_config_for(r, VN_ARCH_PPC64LE);
	assert_ptr_equal(x, &r->kconfig);
	assert_string_equal(a->base, "tinyconfig");
	assert_int_equal(a->nfragments, 1);
	assert_string_equal(a->fragment_names[0], "numa-arm64.config");
	assert_non_null(strstr(a->fragments[0], "/ka/numa-arm64.config"));
	assert_int_equal(a->nrequire, 1);
	assert_string_equal(a->require[0], "CONFIG_OF_NUMA");
	assert_string_equal(pp->base, "ppc64le_defconfig");
	assert_int_equal(pp->nfragments, 0); /* replaced whole: not the recipe's numa.config */

	/* The arm64 config is its own input: another arm64 fragment changes arm64's key, not x86's. */
	char kx[65], cx[65], ka[65], ca[65], ka2[65], ca2[65], kx2[65], cx2[65];
	assert_int_equal(vn_kernel_cache_key(r, VN_ARCH_X86_64, false, "s", kx, cx, &err), 0);
	assert_int_equal(vn_kernel_cache_key(r, VN_ARCH_ARM64, false, "s", ka, ca, &err), 0);
	assert_string_not_equal(kx, ka);
	assert_string_not_equal(cx, ca);
	put("ka/numa-arm64.config", "CONFIG_NUMA=y\nCONFIG_SERIAL_AMBA_PL011=y\nCONFIG_NR_CPUS=8\n");
	assert_int_equal(vn_kernel_cache_key(r, VN_ARCH_X86_64, false, "s", kx2, cx2, &err), 0);
	assert_int_equal(vn_kernel_cache_key(r, VN_ARCH_ARM64, false, "s", ka2, ca2, &err), 0);
	assert_string_equal(kx, kx2);
	assert_string_not_equal(ka, ka2);
}

/* Each bad recipe must be refused with the file and the JSON path in the message. */
static void test_recipe_errors(void **state)
{
	(void)state;
	static const struct {
		const char *json, *want;
	} cases[] = {
		{"{\"type\": \"source\", \"tree\": \"tree.tar.xz\", \"bogus\": 1, \"config\": {\"base\": "
		 "\"tinyconfig\"}}",
		 "$: unknown key \"bogus\""},
		{"{\"type\": \"source\", \"tree\": \"tree.tar.xz\", \"config\": {\"base\": \"tinyconfig\", "
		 "\"fragments\": "
		 "[\"numa.config\", 3]}}",
		 "$.config.fragments[1]: expected a non-empty string"},
		{"{\"type\": \"source\", \"tree\": \"tree.tar.xz\", \"config\": {\"base\": \"tinyconfig\", \"extra\": "
		 "[]}}",
		 "$.config: unknown key \"extra\""},
		{"{\"type\": \"source\", \"tree\": \"tree.tar.xz\", \"patches\": [\"nope.patch\"], \"config\": "
		 "{\"base\": "
		 "\"tinyconfig\"}}",
		 "$.patches[0]: "},
		{"{\"type\": \"source\", \"tree\": \"tree.tar.xz\", \"config\": {\"base\": 7}}",
		 "$.config.base: expected a string"},
		{"{\"type\": \"source\", \"tree\": \"tree.tar.xz\", \"config\": {\"base\": \"rm -rf\"}}",
		 "$.config.base: "},
		{"{\"type\": \"source\", \"tree\": \"tree.tar.xz\", \"config\": {\"base\": \"tinyconfig\", "
		 "\"require\": "
		 "[\"NUMA\"]}}",
		 "$.config.require[0]: \"NUMA\" is not a CONFIG_ option"},
		{"{\"type\": \"source\", \"tree\": \"tree.tar.xz\"}", "$: missing \"config\""},
		{"{\"type\": \"source\", \"tree\": \"tree.tar.xz\", \"config\": {\"base\": \"tinyconfig\", \"arch\": "
		 "{\"riscv64\": {}}}}",
		 "$.config.arch.riscv64: \"riscv64\" is not an architecture"},
		{"{\"type\": \"source\", \"tree\": \"tree.tar.xz\", \"config\": {\"base\": \"tinyconfig\", \"arch\": "
		 "{\"arm64\": {\"fragments\": [\"a/b.config\"]}}}}",
		 "$.config.arch.arm64.fragments[0]: "},
		{"{\"type\": \"source\", \"tree\": \"tree.tar.xz\", \"config\": {\"base\": \"tinyconfig\", \"arch\": "
		 "{\"arm64\": {\"patches\": []}}}}",
		 "$.config.arch.arm64: unknown key \"patches\""},
		{"{\"type\": \"source\", \"tree\": \"tree.tar.xz\", \"config\": {\"base\": \"tinyconfig\", \"arch\": "
		 "{\"arm64\": {}, \"aarch64\": {}}}}",
		 "arm64's config is given twice"},
		{"{\"type\": \"source\", \"tree\": \"tree.tar.xz\", \"config\": {\"base\": \"tinyconfig\", "
		 "\"selftests\": \"vm\"}}",
		 "$.config.selftests: expected an array"},
		{"{\"type\": \"source\", \"tree\": \"tree.tar.xz\", \"config\": {\"base\": \"tinyconfig\", "
		 "\"selftests\": [\"vm\", 3]}}",
		 "$.config.selftests[1]: expected a non-empty string"},
		{"{\"type\": \"source\", \"tree\": \"tree.tar.xz\", \"config\": {\"base\": \"tinyconfig\", "
		 "\"selftests\": [\"vm/../../../etc\"]}}",
		 "$.config.selftests[0]: \"vm/../../../etc\" is not a folder of tools/testing/selftests"},
		{"{\"type\": \"source\", \"tree\": \"tree.tar.xz\", \"config\": {\"base\": \"tinyconfig\", "
		 "\"selftests\": [\"/vm\"]}}",
		 "$.config.selftests[0]: \"/vm\" is not a folder"},
		{"{\"type\": \"source\", \"tree\": \"tree.tar.xz\", \"config\": {\"base\": \"tinyconfig\", \"arch\": "
		 "{\"arm64\": {\"selftests\": [\"mm\", \"\"]}}}}",
		 "$.config.arch.arm64.selftests[1]: expected a non-empty string"},
		{"{\"type\": \"source\", \"tree\": \"no/such/dir\", \"config\": {\"base\": \"tinyconfig\"}}",
		 "$.tree: "},
		{"{\"type\": \"source\", \"tree\": \"tree.tar.xz\", \"config\": []}", "$.config: expected an object"},
		{"{\"type\": \"stock\", \"image\": \"x\"}", "$: unknown key \"image\""},
		{"{\"type\": \"prebuilt\"}", "$: missing required key \"image\""},
		{"{\"type\": \"prebuilt\", \"image\": \"nope\"}", "$.image: "},
		{"{\"type\": \"guess\"}", "$.type: \"guess\" is not one of"},
		{"{\"type\": 1}", "$.type: expected a string"},
		{"[1, 2]", "$: expected an object"},
		{"{\"type\": ", "not valid JSON"},
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		_cleanup_free_ char *p = path_of("bad.json");
		struct vn_recipe *r = NULL;
		struct vn_error err = {0};
		put("bad.json", cases[i].json);
		int rc = vn_recipe_load(p, &r, &err);
		if (rc == 0 || !strstr(err.msg, cases[i].want) || !strstr(err.msg, "bad.json"))
			fail_msg("case %zu: rc %d, message \"%s\", wanted \"%s\"", i, rc, err.msg, cases[i].want);
		assert_int_equal(err.kind, VN_ERR_INPUT);
		assert_null(r);
		vn_error_clear(&err);
	}
}

static void test_recipe_find(void **state)
{
	(void)state;
	char *p = NULL;
	setenv("VNUMA_KERNELS_DIR", tmpdir, 1);
	assert_int_equal(vn_recipe_find("k", &p, NULL), 1);
	assert_non_null(strstr(p, "/k.json"));
	free(p);
	assert_int_equal(vn_recipe_find("nosuch", &p, NULL), 0);
	assert_int_equal(vn_recipe_find("/boot/vmlinuz", &p, NULL), 0);
	assert_int_equal(vn_recipe_find("x/y.json", &p, NULL), 1);
	assert_string_equal(p, "x/y.json");
	free(p);
	unsetenv("VNUMA_KERNELS_DIR");
}

static void keys(const char *sid, char key[65], char cfg[65])
{
	_cleanup_free_ char *p = path_of("k.json");
	struct vn_recipe *r = NULL;
	struct vn_error err = {0};
	assert_int_equal(vn_recipe_load(p, &r, &err), 0);
	assert_int_equal(vn_kernel_cache_key(r, VN_ARCH_X86_64, false, sid, key, cfg, &err), 0);
	vn_recipe_free(r);
}

static void test_cache_key(void **state)
{
	(void)state;
	char k1[65], c1[65], k2[65], c2[65];
	_cleanup_free_ char *orig = slurp("k/0001-fix.patch"), *frag = slurp("k/numa.config");

	keys("source-a", k1, c1);
	keys("source-a", k2, c2);
	assert_string_equal(k1, k2); /* stable */
	assert_string_equal(c1, c2);

	put("k/0001-fix.patch", "--- a/mm/x.c\n+++ b/mm/x.c\n@@ -1,3 +1,3 @@\n one\n-two\n+Two\n three\n");
	keys("source-a", k2, c2);
	assert_string_not_equal(k1, k2); /* a patch's content is part of the key */
	assert_string_equal(c1, c2);     /* but not of the config hash: same build tree */
	put("k/0001-fix.patch", orig);

	keys("source-b", k2, c2);
	assert_string_not_equal(k1, k2);

	put("k/numa.config", "CONFIG_NUMA=y\n");
	keys("source-a", k2, c2);
	assert_string_not_equal(c1, c2);
	assert_string_not_equal(k1, k2);
	put("k/numa.config", frag);
	keys("source-a", k2, c2);
	assert_string_equal(k1, k2);
}

/*
 * A selftest's config is named in the config hash (its bytes are the tree's,
 * in the source identity); a recipe without one keeps its key, and a
 * config.arch entry's own list is that architecture's.
 */
static void test_cache_key_selftests(void **state)
{
	(void)state;
	static const char *const recipes[] = {
		"\"fragments\": [\"numa.config\"]",
		"\"fragments\": [\"numa.config\"], \"selftests\": [\"vm\"]",
		"\"fragments\": [\"numa.config\"], \"selftests\": [\"mm\"], \"arch\": {\"arm64\": {\"selftests\": []}}",
		"\"fragments\": [\"numa.config\"], \"selftests\": [\"mm\"], \"arch\": {\"arm64\": {\"selftests\": "
		"[\"mm\"]}}",
	};
	char k[4][65], c[4][65], ka[4][65], ca[4][65];
	struct vn_error err = {0};
	_cleanup_free_ char *p = path_of("ks.json");

	put("ks/numa.config", "CONFIG_NUMA=y\n");
	for (size_t i = 0; i < VN_ARRAY_SIZE(recipes); i++) {
		_cleanup_recipe_ struct vn_recipe *r = NULL;
		_cleanup_free_ char *json = vn_xasprintf(
			"{\"type\": \"source\", \"tree\": \"tree.tar.xz\", \"config\": {\"base\": \"tinyconfig\", %s}}",
			recipes[i]);
		put("ks.json", json);
		if (vn_recipe_load(p, &r, &err) < 0)
			fail_msg("recipe %zu: %s", i, err.msg);
		assert_int_equal(vn_kernel_cache_key(r, VN_ARCH_X86_64, false, "s", k[i], c[i], &err), 0);
		assert_int_equal(vn_kernel_cache_key(r, VN_ARCH_ARM64, false, "s", ka[i], ca[i], &err), 0);
	}
	assert_string_not_equal(c[0], c[1]);
	assert_string_not_equal(k[0], k[1]);
	assert_string_not_equal(c[1], c[2]); /* vm or mm */
	assert_string_equal(c[2], c[3]);     /* x86 builds with the recipe's list in both */
	assert_string_not_equal(ca[2], ca[3]);
	/* A recipe without selftests keeps its key: test_cache_key_debug pins one. */
}

static void make_tree(void)
{
	put("pristine/mm/x.c", "one\ntwo\nthree\n");
	put("pristine/mm/y.c", "alpha\nbeta\n");
	_cleanup_free_ char *work = path_of("work"), *pristine = path_of("pristine");
	struct vn_error e = {0};
	assert_int_equal(vn_rm_rf(work), 0);
	const char *cp[] = {"cp", "-al", pristine, work, NULL};
	assert_int_equal(vn_spawn_run(cp, NULL, &e), 0);
}

static void test_patch_apply(void **state)
{
	(void)state;
	_cleanup_free_ char *work = path_of("work"), *patch = path_of("k/0001-fix.patch");
	struct vn_error err = {0};

	make_tree();
	assert_int_equal(vn_kernel_patch_apply(work, patch, "0001-fix.patch", -1, &err), 0);
	_cleanup_free_ char *w = slurp("work/mm/x.c"), *p = slurp("pristine/mm/x.c");
	assert_string_equal(w, "one\nTWO\nthree\n");
	/* patch writes a new file, so the hardlinked pristine copy is untouched */
	assert_string_equal(p, "one\ntwo\nthree\n");

	/* Applying it again: already applied, named as such. */
	assert_true(vn_kernel_patch_apply(work, patch, "0001-fix.patch", -1, &err) < 0);
	assert_non_null(strstr(err.msg, "0001-fix.patch"));
	vn_error_clear(&err);

	char **files = NULL;
	size_t n = 0;
	assert_int_equal(vn_kernel_patch_files(patch, &files, &n, &err), 0);
	assert_int_equal(n, 1);
	assert_string_equal(files[0], "mm/x.c");
	vn_strvfreep(&files);
}

static void test_patch_reject(void **state)
{
	(void)state;
	_cleanup_free_ char *work = path_of("work"), *patch = path_of("k/bad.patch");
	struct vn_error err = {0};

	make_tree();
	put("k/bad.patch", "--- a/mm/y.c\n+++ b/mm/y.c\n@@ -1,2 +1,2 @@\n alpha\n-beta\n+BETA\n"
			   "--- a/mm/x.c\n+++ b/mm/x.c\n@@ -1,3 +1,3 @@\n one\n-deux\n+DEUX\n three\n");
	assert_true(vn_kernel_patch_apply(work, patch, "bad.patch", -1, &err) < 0);
	assert_int_equal(err.kind, VN_ERR_INPUT);
	if (!strstr(err.msg, "bad.patch") || !strstr(err.msg, "mm/x.c") || !strstr(err.msg, "hunk #1 FAILED"))
		fail_msg("message: %s", err.msg);
	assert_non_null(err.detail);
	assert_non_null(strstr(err.detail, "-deux"));
	/* The dry run kept the tree as it was: the good first file is not half-applied. */
	_cleanup_free_ char *y = slurp("work/mm/y.c");
	assert_string_equal(y, "alpha\nbeta\n");
	vn_error_clear(&err);
}

static void test_config_verify(void **state)
{
	(void)state;
	const char *final = "CONFIG_NUMA=y\nCONFIG_NR_CPUS=64\n# CONFIG_MODULES is not set\n"
			    "# CONFIG_ACPI_HMAT is not set\nCONFIG_VIRTIO_BLK=m\n";
	const char *wanted = "# a comment\nCONFIG_NUMA=y\nCONFIG_NR_CPUS=64\n# CONFIG_MODULES is not set\n"
			     "CONFIG_ACPI_HMAT=y\nCONFIG_VIRTIO_BLK=y\nCONFIG_GONE=y\n\n";
	char *report = NULL;

	assert_int_equal(vn_kernel_config_verify(final, wanted, &report), 3);
	assert_non_null(strstr(report, "CONFIG_ACPI_HMAT: wanted y, got not set\n"));
	assert_non_null(strstr(report, "CONFIG_VIRTIO_BLK: wanted y, got m\n"));
	assert_non_null(strstr(report, "CONFIG_GONE: wanted y, got not set\n"));
	assert_null(strstr(report, "CONFIG_NUMA:"));
	free(report);

	/* The same option asked for twice is one dropped option. */
	assert_int_equal(vn_kernel_config_verify(final, "CONFIG_GONE=y\nCONFIG_X=y\nCONFIG_GONE=y\n", &report), 2);
	free(report);
	assert_int_equal(vn_kernel_config_verify(final, "CONFIG_MODULES=y\n", &report), 1);
	free(report);
	assert_int_equal(vn_kernel_config_verify(final, "CONFIG_NUMA=y\n# CONFIG_ACPI_HMAT is not set\n", &report), 0);
	assert_null(report);
}

/* The shipped minimal fragment asks for every option vnuma requires of a built kernel. */
static void test_shipped_recipes(void **state)
{
	(void)state;
	const char *src = getenv("VN_SOURCE_DIR");
	char p[4096], *frag = NULL, *report = NULL;
	struct vn_strbuf want = VN_STRBUF_INIT;
	struct vn_recipe *r = NULL;
	struct vn_error err = {0};

	if (!src)
		skip();
	snprintf(p, sizeof(p), "%s/kernels/stock.json", src);
	assert_int_equal(vn_recipe_load(p, &r, &err), 0);
	assert_int_equal(r->type, VN_RECIPE_STOCK);
	vn_recipe_free(r);

	/* Each shipped fragment has every option vnuma requires of its architecture. */
	static const struct {
		const char *file;
		enum vn_arch arch;
	} frags[] = {{"numa.config", VN_ARCH_X86_64},
		     {"numa-arm64.config", VN_ARCH_ARM64},
		     {"numa-ppc64le.config", VN_ARCH_PPC64LE}};
	for (size_t i = 0; i < VN_ARRAY_SIZE(frags); i++) {
		snprintf(p, sizeof(p), "%s/kernels/minimal-numa/%s", src, frags[i].file);
		FILE *f = fopen(p, "r");
		assert_non_null(f);
		frag = calloc(1, 65536);
		assert_true(fread(frag, 1, 65535, f) > 0);
		fclose(f);
		for (const char *const *o = vn_kernel_required_options(frags[i].arch); *o; o++)
			vn_strbuf_printf(&want, "%s=y\n", *o);
		if (vn_kernel_config_verify(frag, want.s, &report) != 0)
			fail_msg("%s lacks: %s", frags[i].file, report);
		vn_strbuf_free(&want);
		free(frag);
	}

	if (access("/usr/src/linux-source-6.1.tar.xz", R_OK) != 0)
		return; /* the source recipes name Debian's tarball */
	static const char *const names[] = {"minimal-numa", "fallback-revert"};
	char keyv[2][65], cfgv[2][65];
	for (int i = 0; i < 2; i++) {
		snprintf(p, sizeof(p), "%s/kernels/%s.json", src, names[i]);
		if (vn_recipe_load(p, &r, &err) != 0)
			fail_msg("%s", err.msg);
		assert_int_equal(vn_kernel_cache_key(r, VN_ARCH_X86_64, false, "src", keyv[i], cfgv[i], &err), 0);
		vn_recipe_free(r);
	}
	/* The revert differs only in its patch: one build tree, two kernels. */
	assert_string_equal(cfgv[0], cfgv[1]);
	assert_string_not_equal(keyv[0], keyv[1]);
}

/*
 * Debug builds came after the keys: without debug a recipe's key and config
 * hash are what they were before (pinned: computed by the code before the
 * switch existed, so existing caches stay valid); with debug both differ.
 */
static void test_cache_key_debug(void **state)
{
	(void)state;
	char k[65], c[65], kd[65], cd[65], ka[65], ca[65];
	struct vn_error err = {0};
	_cleanup_recipe_ struct vn_recipe *r = NULL, *rd = NULL;
	_cleanup_free_ char *p = path_of("golden.json"), *pd = path_of("golden-dbg.json");

	put("golden/numa.config", "CONFIG_NUMA=y\nCONFIG_NR_CPUS=8\n");
	put("golden/0001-x.patch", "--- a/mm/x.c\n+++ b/mm/x.c\n@@ -1 +1 @@\n-one\n+ONE\n");
	put("golden.tar", "tar\n");
	put("golden.json", "{\"type\": \"source\", \"tree\": \"golden.tar\", \"patches\": [\"0001-x.patch\"], "
			   "\"config\": {\"base\": \"tinyconfig\", \"fragments\": [\"numa.config\"]}}\n");
	assert_int_equal(vn_recipe_load(p, &r, &err), 0);
	assert_false(r->debug);
	assert_int_equal(vn_kernel_cache_key(r, VN_ARCH_X86_64, false, "golden-source", k, c, &err), 0);
	assert_string_equal(k, "7f6977f7ddd9d1cc69199350e58816ebc2301688375d1c69e936d47d8e1eb3d6");
	assert_string_equal(c, "4303895a178412991a24b884757b6b2fbe4d74136fa56d7ff2552306bd2f178f");
	assert_int_equal(vn_kernel_cache_key(r, VN_ARCH_X86_64, true, "golden-source", kd, cd, &err), 0);
	assert_string_not_equal(k, kd);
	assert_string_not_equal(c, cd); /* another config: another build tree */
	assert_int_equal(vn_kernel_cache_key(r, VN_ARCH_ARM64, true, "golden-source", ka, ca, &err), 0);
	assert_string_not_equal(kd, ka);
	/* Only x86's guests have the pvpanic and vmcoreinfo devices: elsewhere the options would only be refused. */
	assert_null(strstr(vn_kernel_debug_fragment(VN_ARCH_ARM64), "PVPANIC"));
	assert_null(strstr(vn_kernel_debug_fragment(VN_ARCH_PPC64LE), "FW_CFG"));
	assert_non_null(strstr(vn_kernel_debug_fragment(VN_ARCH_ARM64), "CONFIG_GDB_SCRIPTS=y\n"));

	/* The recipe's own switch; a wrong type is refused with its JSON path. */
	put("golden-dbg/numa.config", "CONFIG_NUMA=y\n");
	put("golden-dbg.json", "{\"type\": \"source\", \"tree\": \"golden.tar\", \"debug\": true, "
			       "\"config\": {\"base\": \"tinyconfig\"}}\n");
	assert_int_equal(vn_recipe_load(pd, &rd, &err), 0);
	assert_true(rd->debug);
	put("golden-bad.json", "{\"type\": \"source\", \"tree\": \"golden.tar\", \"debug\": \"yes\", "
			       "\"config\": {\"base\": \"tinyconfig\"}}\n");
	_cleanup_free_ char *pb = path_of("golden-bad.json");
	struct vn_recipe *bad = NULL;
	assert_true(vn_recipe_load(pb, &bad, &err) < 0);
	assert_non_null(strstr(err.msg, "$.debug"));
	vn_error_clear(&err);
	put("golden-stock.json", "{\"type\": \"stock\", \"debug\": true}\n");
	_cleanup_free_ char *ps = path_of("golden-stock.json");
	assert_true(vn_recipe_load(ps, &bad, &err) < 0);
	assert_non_null(strstr(err.msg, "debug"));
	vn_error_clear(&err);
}

/* TOP/NAME in buf. */
static const char *in(char *buf, size_t n, const char *top, const char *name)
{
	snprintf(buf, n, "%s/%s", top, name);
	return buf;
}

/*
 * A whole build, end to end, on a fake kernel tree whose Makefile does in
 * milliseconds what Kbuild does in minutes: extract, hardlink farm, patch,
 * config (base, merge_config.sh, olddefconfig), make bzImage, install, then a
 * cache hit, a patch-only variant on the same build tree, and a failed build
 * whose log is kept.
 */
static void make_fake_tree_in(const char *top)
{
	char line[256], rel[256];
	_cleanup_strbuf_ struct vn_strbuf req = VN_STRBUF_INIT;

	/* bzImage first runs make-hook.sh where a test put one: a full disk, a killed compiler, a slow build. */
	_cleanup_free_ char *mk = vn_xasprintf(
		"tinyconfig:\n\tmkdir -p $(O) && : > $(O)/.config\n"
		"olddefconfig:\n\tcat required.config >> $(O)/.config\n"
		"bzImage:\n\tif [ -e %s/make-hook.sh ]; then sh %s/make-hook.sh; fi\n"
		"\tmkdir -p $(O)/arch/x86/boot && cat bzImage.in mm/x.c > $(O)/arch/x86/boot/bzImage\n"
		/* The ELF vmlinux a link leaves in O=, where a test put one (a debug build keeps it). */
		"\tif [ -e %s/vmlinux.in ]; then cp %s/vmlinux.in $(O)/vmlinux; fi\n"
		/* As Kbuild out of tree: symlinks into the source, constants.py generated from the .config. */
		"scripts_gdb:\n\tmkdir -p $(O)/scripts/gdb/linux\n"
		"\tln -fsn $(CURDIR)/scripts/gdb/vmlinux-gdb.py $(O)/vmlinux-gdb.py\n"
		"\tln -fsn $(CURDIR)/scripts/gdb/linux/utils.py $(O)/scripts/gdb/linux/utils.py\n"
		"\tgrep GDB_SCRIPTS $(O)/.config > $(O)/scripts/gdb/linux/constants.py\n"
		/* arm64's Image has no header to read: the release is Kbuild's file, the banner's tail utsversion.h. */
		"Image:\n\tmkdir -p $(O)/arch/arm64/boot $(O)/include/config $(O)/include/generated\n"
		"\techo 'ARCH=$(ARCH) CROSS_COMPILE=$(CROSS_COMPILE)' | cat Image.in - mm/x.c > "
		"$(O)/arch/arm64/boot/Image\n"
		"\techo 6.1.0-fake > $(O)/include/config/kernel.release\n"
		"\techo '#define UTS_VERSION \"#1 SMP fake\"' > $(O)/include/generated/utsversion.h\n"
		".PHONY: tinyconfig olddefconfig bzImage Image scripts_gdb\n",
		tmpdir, tmpdir, tmpdir, tmpdir);
	put(in(rel, sizeof(rel), top, "scripts/gdb/vmlinux-gdb.py"), "import linux.utils\n");
	put(in(rel, sizeof(rel), top, "scripts/gdb/linux/utils.py"), "# lx helpers\n");
	put(in(rel, sizeof(rel), top, "Makefile"), mk);
	/* merge_config.sh -m -O OUT BASE FRAGMENT...: the fragments appended, word-split as the real one does. */
	put(in(rel, sizeof(rel), top, "scripts/kconfig/merge_config.sh"),
	    "base=$4\nshift 4\nfor f in $*; do cat $f >> $base || exit 1; done\n");
	put(in(rel, sizeof(rel), top, "mm/x.c"), "one\ntwo\nthree\n");
	for (int a = 0; a < VN_ARCH_COUNT; a++)
		for (const char *const *o = vn_kernel_required_options((enum vn_arch)a); *o; o++)
			vn_strbuf_printf(&req, "%s=y\n", *o);
	put(in(rel, sizeof(rel), top, "required.config"), req.s);
	/* The boot header vn_kernel_image_release reads: "HdrS" at 0x202, the version at 0x20e + 0x200. */
	char hdr[0x400] = {0};
	memcpy(hdr + 0x202, "HdrS", 4);
	hdr[0x20e] = 0x00;
	hdr[0x20f] = 0x01;
	snprintf(line, sizeof(line), "6.1.0-fake (vnuma@test) #1");
	memcpy(hdr + 0x300, line, strlen(line) + 1);
	_cleanup_free_ char *bz = path_of(in(rel, sizeof(rel), top, "bzImage.in"));
	FILE *f = fopen(bz, "w");
	assert_non_null(f);
	assert_int_equal(fwrite(hdr, 1, sizeof(hdr), f), sizeof(hdr));
	fclose(f);
	/* arm64's Image header: its magic "ARM\x64" at 0x38, which the cache checks before serving one. */
	char ihdr[0x40] = {0};
	memcpy(ihdr + 0x38, "ARM\x64", 4);
	_cleanup_free_ char *im = path_of(in(rel, sizeof(rel), top, "Image.in"));
	assert_non_null(f = fopen(im, "w"));
	assert_int_equal(fwrite(ihdr, 1, sizeof(ihdr), f), sizeof(ihdr));
	fclose(f);
}

/* fake.tar of fake-src/linux-fake. */
static void tar_fake_tree(void)
{
	_cleanup_free_ char *tar = path_of("fake.tar"), *dir = path_of("fake-src");
	const char *argv[] = {"tar", "-cf", tar, "-C", dir, "linux-fake", NULL};
	struct vn_error err = {0};
	assert_int_equal(vn_spawn_run(argv, NULL, &err), 0);
}

/* The fake tree in fake-src/linux-fake, and fake.tar of it. */
static void make_fake_tree(void)
{
	make_fake_tree_in("fake-src/linux-fake");
	tar_fake_tree();
}

static void progress_count(void *data, const char *stage, const char *line)
{
	(void)line;
	if (strcmp(stage, "patch") == 0)
		++*(int *)data;
}

static struct vn_kernel_built *build_fake_arch(const char *name, const char *json, enum vn_arch arch,
					       int *patches_applied, struct vn_error *err, int *rc)
{
	char rel[64];
	/* A recipe keeps its files in NAME/. */
	static const char *const files[][2] = {
		{"numa.config", "CONFIG_NUMA=y\n# CONFIG_MODULES is not set\n"},
		{"0001-fix.patch", "--- a/mm/x.c\n+++ b/mm/x.c\n@@ -1,3 +1,3 @@\n one\n-two\n+TWO\n three\n"},
		{"0002-other.patch", "--- a/mm/x.c\n+++ b/mm/x.c\n@@ -1,3 +1,3 @@\n one\n two\n-three\n+THREE\n"},
	};
	for (size_t i = 0; i < VN_ARRAY_SIZE(files); i++) {
		snprintf(rel, sizeof(rel), "%s/%s", name, files[i][0]);
		put(rel, files[i][1]);
	}
	snprintf(rel, sizeof(rel), "%s.json", name);
	put(rel, json);
	_cleanup_free_ char *p = path_of(rel), *cache = path_of("cache");
	_cleanup_recipe_ struct vn_recipe *r = NULL;
	struct vn_kernel_built *b = NULL;
	assert_int_equal(vn_recipe_load(p, &r, err), 0);
	struct vn_kernel_build_opts o = {
		.cache_dir = cache,
		.jobs = 1,
		.progress = progress_count,
		.progress_data = patches_applied,
		.arch = arch,
	};
	*rc = vn_kernel_build(r, &o, &b, err);
	return b;
}

static struct vn_kernel_built *build_fake(const char *name, const char *json, int *patches_applied,
					  struct vn_error *err, int *rc)
{
	return build_fake_arch(name, json, VN_ARCH_X86_64, patches_applied, err, rc);
}

/* A cache entry by hand: kernel.json with extra (JSON members) and an image with its architecture's magic. */
static void fake_entry(const char *rel, const char *image, const char *magic, size_t at, const char *extra)
{
	char hdr[0x400] = {0};
	_cleanup_free_ char *json = vn_xasprintf("%s/kernel.json", rel), *img = vn_xasprintf("%s/%s", rel, image);
	_cleanup_free_ char *text =
		vn_xasprintf("{\"key\": \"0123456789abcdef0123\", \"recipe\": \"r one\", \"source_id\": \"s\", "
			     "\"config_hash\": \"c\", \"recipe_path\": \"/k/r one.json\", \"release\": \"6.1.0\"%s}",
			     extra);
	put(json, text);
	memcpy(hdr + at, magic, 4);
	_cleanup_free_ char *p = path_of(img);
	FILE *f = fopen(p, "w");
	assert_non_null(f);
	assert_int_equal(fwrite(hdr, 1, sizeof(hdr), f), sizeof(hdr));
	fclose(f);
}

/* The command vnuma debug and dump name for a recipe's kernel without debug info: as that build was made. */
static void test_vmlinux_recipe_hint(void **state)
{
	(void)state;
	static const struct {
		const char *extra, *want;
		bool arm64;
	} cases[] = {
		{"", "build it with debug info: vnuma kernel build --debug '/k/r one.json', then", false},
		{", \"arch\": \"arm64\"", "vnuma kernel build --debug --arch arm64 '/k/r one.json'", true},
		/* HEAD and its diff: the tree again, no --rev (that would drop the diff). */
		{", \"commit\": \"abc123\", \"tree_path\": \"/src/my linux\"",
		 "vnuma kernel build --debug --repo '/src/my linux' '/k/r one.json'", false},
		{", \"commit\": \"abc123\", \"commit_only\": true, \"tree_path\": \"/src/it's\"",
		 "vnuma kernel build --debug --repo '/src/it'\\''s' --rev abc123 '/k/r one.json'", false},
	};
	for (size_t i = 0; i < VN_ARRAY_SIZE(cases); i++) {
		char rel[64];
		snprintf(rel, sizeof(rel), "hint/%zu", i);
		fake_entry(rel, cases[i].arm64 ? "Image" : "bzImage", cases[i].arm64 ? "ARM\x64" : "HdrS",
			   cases[i].arm64 ? 0x38 : 0x202, cases[i].extra);
		_cleanup_free_ char *img = path_of(rel),
				    *image = vn_xasprintf("%s/%s", img, cases[i].arm64 ? "Image" : "bzImage");
		_cleanup_free_ char *hint = vn_vmlinux_recipe_hint(image, NULL);
		if (!hint || !strstr(hint, cases[i].want))
			fail_msg("case %zu: %s", i, hint ? hint : "(none)");
		assert_non_null(strstr(hint, "for 6.1.0: recipe r one's kernel (0123456789abcdef)"));
	}
	/* Not a recipe's entry (no kernel.json beside it): none, and vn_vmlinux_find says Debian's package. */
	assert_null(vn_vmlinux_recipe_hint("/boot/vmlinuz-6.1.0-9-amd64", "6.1.0-9-amd64"));
	assert_null(vn_vmlinux_recipe_hint(NULL, "6.1.0-9-amd64"));
}

static void test_build_fake_tree(void **state)
{
	(void)state;
	struct vn_error err = {0};
	int rc, patched = 0;
	static const char base[] = "{\"type\": \"source\", \"tree\": \"fake.tar\", \"patches\": [\"0001-fix.patch\"], "
				   "\"config\": {\"base\": \"tinyconfig\", \"fragments\": [\"numa.config\"], "
				   "\"require\": [\"CONFIG_NUMA\"]}}";

	make_fake_tree();
	_cleanup_kernel_built_ struct vn_kernel_built *b = build_fake("fake-a", base, &patched, &err, &rc);
	if (rc < 0)
		fail_msg("build: %s\n%s", err.msg, err.detail ? err.detail : "");
	assert_non_null(b);
	assert_false(b->cached);
	assert_int_equal(patched, 1);
	assert_string_equal(b->recipe, "fake-a");
	assert_string_equal(b->release, "6.1.0-fake");
	assert_int_equal(b->npatches, 1);
	assert_string_equal(b->patches[0], "0001-fix.patch");
	assert_true(b->size > 0x400);
	_cleanup_free_ char *image = NULL, *config = NULL;
	assert_int_equal(vn_file_read(b->image, VN_FILE_STATE_MAX, &image, &(size_t){0}, NULL), 0);
	assert_non_null(strstr(image + 0x400, "one\nTWO\nthree\n")); /* the patch reached the compiled file */
	assert_int_equal(vn_file_read(b->config, VN_FILE_STATE_MAX, &config, &(size_t){0}, NULL), 0);
	assert_non_null(strstr(config, "CONFIG_NUMA=y\n"));
	assert_non_null(strstr(config, "CONFIG_VIRTIO_PCI=y\n"));

	/* Same inputs: a lookup, nothing runs. */
	patched = 0;
	_cleanup_kernel_built_ struct vn_kernel_built *again = build_fake("fake-a", base, &patched, &err, &rc);
	assert_int_equal(rc, 0);
	assert_true(again->cached);
	assert_int_equal(patched, 0);
	assert_string_equal(again->key, b->key);

	/* Another patch set: another key, the same (source, config) build tree, the old patch undone. */
	static const char other[] =
		"{\"type\": \"source\", \"tree\": \"fake.tar\", \"patches\": [\"0002-other.patch\"], "
		"\"config\": {\"base\": \"tinyconfig\", \"fragments\": [\"numa.config\"]}}";
	_cleanup_kernel_built_ struct vn_kernel_built *c = build_fake("fake-b", other, &patched, &err, &rc);
	if (rc < 0)
		fail_msg("build: %s", err.msg);
	assert_string_not_equal(c->key, b->key);
	assert_string_equal(c->config_hash, b->config_hash);
	_cleanup_free_ char *image2 = NULL;
	assert_int_equal(vn_file_read(c->image, VN_FILE_STATE_MAX, &image2, &(size_t){0}, NULL), 0);
	assert_non_null(strstr(image2 + 0x400, "one\ntwo\nTHREE\n"));

	struct vn_kernel_built **list = NULL;
	size_t n = 0;
	_cleanup_free_ char *cache = path_of("cache");
	assert_int_equal(vn_kernel_cache_list(cache, &list, &n, &err), 0);
	assert_int_equal(n, 2);
	assert_string_equal(list[0]->recipe, "fake-a");
	assert_string_equal(list[1]->recipe, "fake-b");
	for (size_t i = 0; i < n; i++)
		vn_kernel_built_free(list[i]);
	free(list);

	/* An option that does not survive olddefconfig: an input error, the log kept, no kernel installed. */
	static const char dropped[] = "{\"type\": \"source\", \"tree\": \"fake.tar\", "
				      "\"config\": {\"base\": \"tinyconfig\", \"require\": [\"CONFIG_NOPE\"]}}";
	_cleanup_kernel_built_ struct vn_kernel_built *d = build_fake("fake-c", dropped, &patched, &err, &rc);
	assert_int_equal(rc, -EINVAL);
	assert_null(d);
	assert_int_equal(err.kind, VN_ERR_INPUT);
	assert_non_null(strstr(err.msg, "kernel fake-c (log: "));
	assert_non_null(strstr(err.msg, "CONFIG_NOPE"));
	assert_non_null(strstr(err.detail, "CONFIG_NOPE: wanted y, got not set"));
	const char *log = strstr(err.msg, "(log: ") + 6;
	_cleanup_free_ char *logpath = strndup(log, strcspn(log, ")"));
	assert_int_equal(access(logpath, F_OK), 0);
	vn_error_clear(&err);
	assert_int_equal(vn_kernel_cache_list(cache, &list, &n, &err), 0);
	assert_int_equal(n, 2);
	for (size_t i = 0; i < n; i++)
		vn_kernel_built_free(list[i]);
	free(list);

	/* Without Debian's cross compiler: refused before anything runs, naming it and its package. */
	_cleanup_free_ char *old_path = vn_xstrdup(getenv("PATH") ? getenv("PATH") : "/usr/bin:/bin");
	_cleanup_free_ char *hostbin = path_of("hostbin");
	assert_int_equal(mkdir(hostbin, 0755), 0);
	static const char *const host_tools[] = {"gcc", "make", "flex", "bison", "bc", "patch", "tar", "perl"};
	for (size_t i = 0; i < VN_ARRAY_SIZE(host_tools); i++) {
		_cleanup_free_ char *from = vn_xasprintf("/usr/bin/%s", host_tools[i]);
		_cleanup_free_ char *to = vn_xasprintf("%s/%s", hostbin, host_tools[i]);
		if (access(from, X_OK) == 0)
			assert_int_equal(symlink(from, to), 0);
	}
	setenv("PATH", hostbin, 1);
	_cleanup_kernel_built_ struct vn_kernel_built *nocross =
		build_fake_arch("fake-a", base, VN_ARCH_ARM64, &patched, &err, &rc);
	setenv("PATH", old_path, 1);
	assert_int_equal(rc, -ENOENT);
	assert_null(nocross);
	assert_non_null(strstr(err.msg, "aarch64-linux-gnu-gcc (Debian package gcc-aarch64-linux-gnu)"));
	assert_non_null(strstr(err.msg, "apt-get install"));
	vn_error_clear(&err);

	/* A stand-in for Debian's cross compiler, which the build checks for before it starts. */
	put("bin/aarch64-linux-gnu-gcc", "#!/bin/sh\nexit 0\n");
	_cleanup_free_ char *bin = path_of("bin"), *fakegcc = path_of("bin/aarch64-linux-gnu-gcc");
	assert_int_equal(chmod(fakegcc, 0755), 0);
	_cleanup_free_ char *path = vn_xasprintf("%s:%s", bin, old_path);
	setenv("PATH", path, 1);
	/*
	 * The first recipe for arm64: make gets ARCH= and CROSS_COMPILE=, the
	 * target is Image, the release comes from Kbuild's file, and the cache
	 * keeps it apart from the x86 kernel of the same recipe.
	 */
	_cleanup_kernel_built_ struct vn_kernel_built *e =
		build_fake_arch("fake-a", base, VN_ARCH_ARM64, &patched, &err, &rc);
	if (rc < 0)
		fail_msg("arm64 build: %s\n%s", err.msg, err.detail ? err.detail : "");
	assert_int_equal(e->arch, VN_ARCH_ARM64);
	assert_string_not_equal(e->key, b->key);
	assert_string_not_equal(e->config_hash, b->config_hash);
	assert_string_equal(e->release, "6.1.0-fake");
	assert_string_equal(e->version, "6.1.0-fake #1 SMP fake");
	assert_non_null(strstr(e->image, "/Image"));
	_cleanup_free_ char *image3 = NULL;
	assert_int_equal(vn_file_read(e->image, VN_FILE_STATE_MAX, &image3, &(size_t){0}, NULL), 0);
	assert_non_null(strstr(image3 + 0x40, "ARCH=arm64 CROSS_COMPILE=aarch64-linux-gnu-\none\nTWO\nthree\n"));
	_cleanup_kernel_built_ struct vn_kernel_built *e2 =
		build_fake_arch("fake-a", base, VN_ARCH_ARM64, &patched, &err, &rc);
	assert_int_equal(rc, 0);
	assert_true(e2->cached);
	assert_int_equal(e2->arch, VN_ARCH_ARM64);
	assert_string_equal(e2->image, e->image);
	assert_int_equal(vn_kernel_cache_list(cache, &list, &n, &err), 0);
	assert_int_equal(n, 3);
	for (size_t i = 0; i < n; i++)
		vn_kernel_built_free(list[i]);
	free(list);

	/* A fragment found neither beside the recipe nor in the tree: named by its JSON path, the arch's own too. */
	static const char missing[] = "{\"type\": \"source\", \"tree\": \"fake.tar\", \"config\": {\"base\": "
				      "\"tinyconfig\", \"fragments\": [\"nowhere.config\"], \"arch\": {\"arm64\": "
				      "{\"fragments\": [\"numa.config\", \"nowhere-arm64.config\"]}}}}";
	_cleanup_kernel_built_ struct vn_kernel_built *m1 =
		build_fake_arch("fake-m", missing, VN_ARCH_X86_64, &patched, &err, &rc);
	assert_int_equal(rc, -EINVAL);
	assert_non_null(strstr(err.msg, "$.config.fragments[0]: nowhere.config is neither beside the recipe"));
	vn_error_clear(&err);
	_cleanup_kernel_built_ struct vn_kernel_built *m2 =
		build_fake_arch("fake-m", missing, VN_ARCH_ARM64, &patched, &err, &rc);
	assert_int_equal(rc, -EINVAL);
	assert_non_null(strstr(err.msg, "$.config.arch.arm64.fragments[1]: nowhere-arm64.config is neither"));
	vn_error_clear(&err);
	/* The tests after this one find tools where they were. */
	setenv("PATH", old_path, 1);
}

/* An ELF with a symbol table, as a link leaves vmlinux: this test program itself. */
static void copy_self_to(const char *rel)
{
	_cleanup_free_ char *to = path_of(rel);
	struct vn_error err = {0};
	char self[4096];
	ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);

	assert_true(n > 0);
	self[n] = '\0';
	if (vn_file_copy_atomic(self, to, &err) < 0)
		fail_msg("%s", err.msg);
}

/*
 * A debug build: the debug fragment merged last and checked, make
 * scripts_gdb after the image, vmlinux and the gdb scripts kept in the entry
 * as files (not the tree's symlinks), an entry of its own beside the build
 * without; vnuma debug's lookup finds them, and for the build without says
 * the command that builds one.
 */
static void test_build_debug(void **state)
{
	(void)state;
	struct vn_error err = {0};
	int rc, patched = 0;
	static const char plain[] = "{\"type\": \"source\", \"tree\": \"fake.tar\", "
				    "\"config\": {\"base\": \"tinyconfig\", \"fragments\": [\"numa.config\"]}}";
	static const char dbg[] = "{\"type\": \"source\", \"tree\": \"fake.tar\", \"debug\": true, "
				  "\"config\": {\"base\": \"tinyconfig\", \"fragments\": [\"numa.config\"]}}";

	make_fake_tree();
	copy_self_to("vmlinux.in");
	_cleanup_kernel_built_ struct vn_kernel_built *b = build_fake("fake-p", plain, &patched, &err, &rc);
	if (rc < 0)
		fail_msg("build: %s\n%s", err.msg, err.detail ? err.detail : "");
	assert_false(b->debug);
	assert_null(b->vmlinux);
	_cleanup_free_ char *nov = vn_xasprintf("%s/vmlinux", b->dir);
	assert_int_not_equal(access(nov, F_OK), 0); /* a build without debug keeps what it kept */

	_cleanup_kernel_built_ struct vn_kernel_built *d = build_fake("fake-d", dbg, &patched, &err, &rc);
	if (rc < 0)
		fail_msg("build: %s\n%s", err.msg, err.detail ? err.detail : "");
	assert_true(d->debug);
	assert_string_not_equal(d->key, b->key);
	assert_string_not_equal(d->config_hash, b->config_hash);
	_cleanup_free_ char *config = NULL, *consts = NULL, *mods = vn_xasprintf("%s/scripts/gdb/linux", d->dir);
	assert_int_equal(vn_file_read(d->config, VN_FILE_STATE_MAX, &config, &(size_t){0}, NULL), 0);
	assert_non_null(strstr(config, "CONFIG_DEBUG_INFO_DWARF_TOOLCHAIN_DEFAULT=y\n"));
	assert_non_null(strstr(config, "CONFIG_GDB_SCRIPTS=y\n"));
	/* On x86 what a dump of it needs: pvpanic (a panic seen), fw_cfg's VMCOREINFO (with CRASH_CORE), sysrq. */
	for (const char *o = "CONFIG_PVPANIC=y\0CONFIG_PVPANIC_MMIO=y\0CONFIG_FW_CFG_SYSFS=y\0CONFIG_KEXEC=y\0"
			     "CONFIG_MAGIC_SYSRQ=y\0";
	     *o; o += strlen(o) + 1)
		if (!strstr(config, o))
			fail_msg("%s not in a debug build's config:\n%s", o, config);
	struct stat st;
	assert_int_equal(lstat(d->vmlinux, &st), 0);
	assert_true(S_ISREG(st.st_mode) && st.st_size > 0);
	assert_int_equal(lstat(d->gdb_py, &st), 0);
	assert_true(S_ISREG(st.st_mode)); /* a copy, not the work tree's symlink */
	_cleanup_free_ char *utils = vn_xasprintf("%s/utils.py", mods), *cpy = vn_xasprintf("%s/constants.py", mods);
	assert_int_equal(lstat(utils, &st), 0);
	assert_true(S_ISREG(st.st_mode));
	assert_int_equal(vn_file_read(cpy, VN_FILE_STATE_MAX, &consts, &(size_t){0}, NULL), 0);
	assert_non_null(strstr(consts, "CONFIG_GDB_SCRIPTS=y"));

	/* The same recipe's switch as the caller's (--debug): the same entry, a lookup. */
	patched = 0;
	_cleanup_free_ char *pp = path_of("fake-p.json"), *cache = path_of("cache");
	_cleanup_recipe_ struct vn_recipe *r = NULL;
	_cleanup_kernel_built_ struct vn_kernel_built *again = NULL;
	assert_int_equal(vn_recipe_load(pp, &r, &err), 0);
	struct vn_kernel_build_opts o = {.cache_dir = cache, .jobs = 1, .debug = true};
	assert_int_equal(vn_kernel_build(r, &o, &again, &err), 0);
	assert_true(again->debug);
	assert_true(again->cached);
	assert_string_equal(again->key, d->key);

	/* vnuma debug and dump: the debug entry's vmlinux and scripts; for the other, the command. */
	struct vn_vmlinux v;
	assert_int_equal(vn_vmlinux_find("/nonexistent", d->image, d->release, &v, &err), 0);
	assert_string_equal(v.path, d->vmlinux);
	assert_string_equal(v.gdb_py, d->gdb_py);
	vn_vmlinux_clear(&v);
	assert_int_equal(vn_vmlinux_find("/nonexistent", b->image, b->release, &v, &err), 0);
	assert_null(v.path);
	_cleanup_free_ char *want = vn_xasprintf("vnuma kernel build --debug %s", pp);
	if (!strstr(v.hint, want))
		fail_msg("hint: %s", v.hint);
	assert_non_null(strstr(v.hint, "\"debug\": true"));
	vn_vmlinux_clear(&v);

	/* A debug entry without its vmlinux is not whole: moved aside and built again. */
	assert_int_equal(unlink(d->vmlinux), 0);
	_cleanup_kernel_built_ struct vn_kernel_built *re = build_fake("fake-d", dbg, &patched, &err, &rc);
	assert_int_equal(rc, 0);
	assert_false(re->cached);
	assert_int_equal(access(re->vmlinux, F_OK), 0);
	_cleanup_free_ char *vin = path_of("vmlinux.in");
	unlink(vin);
}

/* fake-a's build, in its own cache, with make-hook.sh saying what make bzImage does first ("": nothing). */
static void put_hooked_recipe(void)
{
	put("fake-h/numa.config", "CONFIG_NUMA=y\n");
	put("fake-h/0001-fix.patch", "--- a/mm/x.c\n+++ b/mm/x.c\n@@ -1,3 +1,3 @@\n one\n-two\n+TWO\n three\n");
	put("fake-h.json", "{\"type\": \"source\", \"tree\": \"fake.tar\", \"patches\": [\"0001-fix.patch\"], "
			   "\"config\": {\"base\": \"tinyconfig\", \"fragments\": [\"numa.config\"]}}");
}

static struct vn_kernel_built *build_hooked(const char *cache, const char *hook, struct vn_error *err, int *rc)
{
	_cleanup_free_ char *hookp = path_of("make-hook.sh"), *dir = path_of(cache), *p = path_of("fake-h.json");
	_cleanup_recipe_ struct vn_recipe *r = NULL;
	struct vn_kernel_built *b = NULL;

	unlink(hookp);
	if (*hook)
		put("make-hook.sh", hook);
	put_hooked_recipe();
	assert_int_equal(vn_recipe_load(p, &r, err), 0);
	struct vn_kernel_build_opts o = {.cache_dir = dir, .jobs = 1};
	*rc = vn_kernel_build(r, &o, &b, err);
	unlink(hookp);
	return b;
}

static size_t cache_entries(const char *cache)
{
	_cleanup_free_ char *kdir = vn_xasprintf("%s/%s/kernels", tmpdir, cache);
	struct vn_kernel_built **list = NULL;
	size_t n = 0;
	struct vn_error err = {0};
	assert_int_equal(vn_kernel_cache_list(kdir, &list, &n, &err), 0);
	for (size_t i = 0; i < n; i++)
		vn_kernel_built_free(list[i]);
	free(list);
	return n;
}

/*
 * A full disk and a killed compiler are the machine's failures (infrastructure, exit 3), not the
 * source's: a bisection must not mark the commit. Only a compile error is "does not build".
 */
static void test_build_infra_failures(void **state)
{
	(void)state;
	static const struct {
		const char *hook, *want;
		int code;
	} cases[] = {
		{"echo 'mm/x.c: fatal error: closing mm/.x.o.tmp: No space left on device' >&2; exit 1",
		 "the disk is full (mm/x.c: fatal error: closing", -ENOSPC},
		/* The OOM killer's way: a compiler under make dies of SIGKILL, make exits 2 with "Error 137". */
		{"sh -c 'kill -KILL $$'", "a program it ran was killed", -ECHILD},
		{"echo 'gcc: fatal error: Killed signal terminated program cc1' >&2; exit 1",
		 "Killed signal terminated", -ECHILD},
		/* make itself killed. */
		{"read -r _ _ _ pp _ < /proc/$PPID/stat; kill -KILL $pp; sleep 5", "killed by signal 9", -ECHILD},
	};
	struct vn_error err = {0};
	int rc;

	make_fake_tree();
	for (size_t i = 0; i < VN_ARRAY_SIZE(cases); i++) {
		_cleanup_kernel_built_ struct vn_kernel_built *b =
			build_hooked("infra-cache", cases[i].hook, &err, &rc);
		assert_null(b);
		if (err.kind != VN_ERR_INFRA || !strstr(err.msg, cases[i].want))
			fail_msg("case %zu: kind %d: %s", i, err.kind, err.msg);
		assert_int_equal(rc, cases[i].code);
		vn_error_clear(&err);
		assert_int_equal(cache_entries("infra-cache"), 0);
	}
	/* A compile error: the source's fault, an input error ("does not build"). */
	_cleanup_kernel_built_ struct vn_kernel_built *c =
		build_hooked("infra-cache", "echo 'mm/x.c:1:1: error: expected declaration' >&2; exit 1", &err, &rc);
	assert_int_equal(rc, -EINVAL);
	assert_int_equal(err.kind, VN_ERR_INPUT);
	assert_non_null(strstr(err.msg, "make bzImage failed (exit 2)"));
	vn_error_clear(&err);
	/* The disk freed: the same build goes through. */
	_cleanup_kernel_built_ struct vn_kernel_built *d = build_hooked("infra-cache", "", &err, &rc);
	if (rc < 0)
		fail_msg("%s", err.msg);
	assert_false(d->cached);
}

/* merge_config.sh word-splits its arguments: a recipe in a folder with a space still builds. */
static void test_build_fragment_space(void **state)
{
	(void)state;
	struct vn_error err = {0};
	make_fake_tree();
	put("with space/fake-s/numa.config", "CONFIG_NUMA=y\nCONFIG_SPACED=y\n");
	put("with space/fake-s.json", "{\"type\": \"source\", \"tree\": \"../fake.tar\", \"config\": {\"base\": "
				      "\"tinyconfig\", \"fragments\": [\"numa.config\"]}}");
	_cleanup_free_ char *p = path_of("with space/fake-s.json"), *cache = path_of("space-cache"), *config = NULL;
	_cleanup_recipe_ struct vn_recipe *r = NULL;
	_cleanup_kernel_built_ struct vn_kernel_built *b = NULL;
	assert_int_equal(vn_recipe_load(p, &r, &err), 0);
	struct vn_kernel_build_opts o = {.cache_dir = cache, .jobs = 1};
	if (vn_kernel_build(r, &o, &b, &err) < 0)
		fail_msg("%s", err.msg);
	assert_int_equal(vn_file_read(b->config, VN_FILE_STATE_MAX, &config, &(size_t){0}, NULL), 0);
	assert_non_null(strstr(config, "CONFIG_SPACED=y\n"));
}

/* Build NAME.json (json) in cache "st-cache"; *rc gets the result. */
static struct vn_kernel_built *build_st(const char *name, const char *json, struct vn_error *err, int *rc)
{
	_cleanup_free_ char *rel = vn_xasprintf("%s.json", name), *p = path_of(rel), *cache = path_of("st-cache");
	_cleanup_recipe_ struct vn_recipe *r = NULL;
	struct vn_kernel_built *b = NULL;
	struct vn_kernel_build_opts o = {.cache_dir = cache, .jobs = 1};

	put(rel, json);
	if (vn_recipe_load(p, &r, err) < 0)
		fail_msg("%s", err->msg);
	*rc = vn_kernel_build(r, &o, &b, err);
	return b;
}

/* The offset of needle in s, or -1. */
static ptrdiff_t at(const char *s, const char *needle)
{
	const char *p = strstr(s, needle);
	return p ? p - s : -1;
}

/* The entry's config (the cache is under tmpdir). */
static char *built_config(const struct vn_kernel_built *b)
{
	assert_true(strncmp(b->config, tmpdir, strlen(tmpdir)) == 0);
	char *config = slurp(b->config + strlen(tmpdir) + 1);
	assert_non_null(config);
	return config;
}

/*
 * "selftests": ["vm"] merges the tree's tools/testing/selftests/vm/config
 * after the recipe's fragments and before the debug fragment, checks it
 * after olddefconfig, and builds again when its bytes change (another tree,
 * or a patch over the same one); a tree without it is the recipe's error,
 * naming the JSON path.
 */
static void test_build_selftests(void **state)
{
	(void)state;
	struct vn_error err = {0};
	int rc;
	static const char st[] = "{\"type\": \"source\", \"tree\": \"fake.tar\", \"debug\": true, "
				 "\"config\": {\"base\": \"tinyconfig\", \"fragments\": [\"numa.config\"], "
				 "\"selftests\": [\"vm\"]}}";

	make_fake_tree_in("fake-src/linux-fake");
	put("fake-src/linux-fake/tools/testing/selftests/vm/config", "CONFIG_USERFAULTFD=y\nCONFIG_TEST_HMM=m\n");
	tar_fake_tree();
	copy_self_to("vmlinux.in");
	put("fake-st/numa.config", "CONFIG_NUMA=y\n");
	_cleanup_kernel_built_ struct vn_kernel_built *b = build_st("fake-st", st, &err, &rc);
	if (rc < 0)
		fail_msg("build: %s\n%s", err.msg, err.detail ? err.detail : "");
	_cleanup_free_ char *config = built_config(b);
	/* Where each landed: the recipe's fragment, then the selftest's, then vnuma's debug one. */
	ptrdiff_t numa = at(config, "CONFIG_NUMA=y\n"), uffd = at(config, "CONFIG_USERFAULTFD=y\n"),
		  hmm = at(config, "CONFIG_TEST_HMM=m\n"), dbg = at(config, "CONFIG_DEBUG_KERNEL=y\n");
	assert_true(numa >= 0 && hmm >= 0);
	assert_true(numa < uffd && uffd < dbg);
	_cleanup_free_ char *meta_rel = vn_xasprintf("%s/kernel.json", b->dir + strlen(tmpdir) + 1);
	_cleanup_free_ char *meta = slurp(meta_rel);
	assert_non_null(strstr(meta, "\"selftests\""));

	/* Another tree whose selftest config has other bytes: another key, and the new option is in. */
	put("fake-src/linux-fake/tools/testing/selftests/vm/config",
	    "CONFIG_USERFAULTFD=y\nCONFIG_TEST_HMM=m\nCONFIG_GUP_TEST=y\n");
	tar_fake_tree();
	_cleanup_kernel_built_ struct vn_kernel_built *b2 = build_st("fake-st", st, &err, &rc);
	if (rc < 0)
		fail_msg("build: %s\n%s", err.msg, err.detail ? err.detail : "");
	assert_false(b2->cached);
	assert_string_not_equal(b2->key, b->key);
	_cleanup_free_ char *config2 = built_config(b2);
	assert_non_null(strstr(config2, "CONFIG_GUP_TEST=y\n"));

	/* A patch to it: the same work tree and config hash, configured again with the patched bytes. */
	put("fake-stp/numa.config", "CONFIG_NUMA=y\n");
	put("fake-stp/0001-st.patch",
	    "--- a/tools/testing/selftests/vm/config\n+++ b/tools/testing/selftests/vm/config\n"
	    "@@ -1,3 +1,4 @@\n CONFIG_USERFAULTFD=y\n CONFIG_TEST_HMM=m\n CONFIG_GUP_TEST=y\n"
	    "+CONFIG_MEM_SOFT_DIRTY=y\n");
	_cleanup_free_ char *stp = vn_xasprintf("{\"type\": \"source\", \"tree\": \"fake.tar\", \"debug\": true, "
						"\"patches\": [\"0001-st.patch\"], %s",
						strstr(st, "\"config\""));
	_cleanup_kernel_built_ struct vn_kernel_built *bp = build_st("fake-stp", stp, &err, &rc);
	if (rc < 0)
		fail_msg("build: %s\n%s", err.msg, err.detail ? err.detail : "");
	assert_string_equal(bp->config_hash, b2->config_hash);
	_cleanup_free_ char *configp = built_config(bp);
	assert_non_null(strstr(configp, "CONFIG_MEM_SOFT_DIRTY=y\n"));

	/* A tree without the folder: exit 2 naming the recipe, the JSON path and the value (and the tree's name). */
	_cleanup_kernel_built_ struct vn_kernel_built *bm =
		build_st("fake-stm",
			 "{\"type\": \"source\", \"tree\": \"fake.tar\", \"config\": {\"base\": "
			 "\"tinyconfig\", \"selftests\": [\"mm\"]}}",
			 &err, &rc);
	assert_true(rc < 0);
	assert_int_equal(err.kind, VN_ERR_INPUT);
	if (!strstr(err.msg, "fake-stm.json: $.config.selftests[0]: \"mm\": the tree has no "
			     "tools/testing/selftests/mm/config (this tree names it \"vm\")"))
		fail_msg("%s", err.msg);
	vn_error_clear(&err);
	/* An architecture's own list is looked up the same way, its path named. */
	_cleanup_kernel_built_ struct vn_kernel_built *ba = build_st(
		"fake-sta",
		"{\"type\": \"source\", \"tree\": \"fake.tar\", \"config\": {\"base\": \"tinyconfig\", \"selftests\": "
		"[\"vm\"], \"arch\": {\"x86_64\": {\"selftests\": [\"vm\", \"net/forwarding\"]}}}}",
		&err, &rc);
	assert_true(rc < 0);
	if (!strstr(err.msg, "fake-sta.json: $.config.arch.x86_64.selftests[1]: \"net/forwarding\": the tree has no "
			     "tools/testing/selftests/net/forwarding/config"))
		fail_msg("%s", err.msg);
	vn_error_clear(&err);

	/* Checked after olddefconfig like any fragment: an option of its that does not survive is named. */
	put("fake-stv/0001-st.patch",
	    "--- a/tools/testing/selftests/vm/config\n+++ b/tools/testing/selftests/vm/config\n"
	    "@@ -1,3 +1,4 @@\n CONFIG_USERFAULTFD=y\n CONFIG_TEST_HMM=m\n CONFIG_GUP_TEST=y\n"
	    "+# CONFIG_CPUSETS is not set\n");
	_cleanup_kernel_built_ struct vn_kernel_built *bv =
		build_st("fake-stv",
			 "{\"type\": \"source\", \"tree\": \"fake.tar\", \"patches\": [\"0001-st.patch\"], "
			 "\"config\": {\"base\": \"tinyconfig\", \"selftests\": [\"vm\"]}}",
			 &err, &rc);
	assert_true(rc < 0);
	if (!strstr(err.msg, "did not survive") || !strstr(err.msg, "CONFIG_CPUSETS"))
		fail_msg("%s", err.msg);
	vn_error_clear(&err);
	_cleanup_free_ char *vin = path_of("vmlinux.in");
	unlink(vin);
}

/* A torn cache entry (an empty image, an empty or fieldless kernel.json) is not served: it is moved aside, rebuilt. */
static void test_cache_broken_entry(void **state)
{
	(void)state;
	struct vn_error err = {0};
	int rc;

	make_fake_tree();
	_cleanup_kernel_built_ struct vn_kernel_built *a = build_hooked("torn-cache", "", &err, &rc);
	assert_int_equal(rc, 0);
	_cleanup_free_ char *json = vn_xasprintf("%s/kernel.json", a->dir), *bad = path_of("torn-cache/kernels/.bad");
	assert_int_equal(truncate(a->image, 0), 0);
	assert_int_equal(vn_file_write(json, "{}"), 0);
	_cleanup_kernel_built_ struct vn_kernel_built *b = build_hooked("torn-cache", "", &err, &rc);
	if (rc < 0)
		fail_msg("%s", err.msg);
	assert_false(b->cached);
	assert_true(b->size > 0x400);
	assert_string_equal(b->key, a->key);
	DIR *d = opendir(bad);
	size_t moved = 0;
	assert_non_null(d);
	for (struct dirent *e; (e = readdir(d));)
		moved += e->d_name[0] != '.';
	closedir(d);
	assert_int_equal(moved, 1);

	/* An empty kernel.json: rebuilt too, not a failure from then on. */
	assert_int_equal(vn_file_write(json, ""), 0);
	_cleanup_kernel_built_ struct vn_kernel_built *c = build_hooked("torn-cache", "", &err, &rc);
	if (rc < 0)
		fail_msg("%s", err.msg);
	assert_false(c->cached);
	_cleanup_kernel_built_ struct vn_kernel_built *e = build_hooked("torn-cache", "", &err, &rc);
	assert_int_equal(rc, 0);
	assert_true(e->cached);
}

/* Two builds of one key at once: the second waits for the first's lock and then finds its kernel. */
static void test_build_concurrent(void **state)
{
	(void)state;
	_cleanup_free_ char *counter = path_of("make-runs"), *hook = NULL, *runs = NULL,
			    *hookp = path_of("make-hook.sh");
	_cleanup_free_ char *p = path_of("fake-h.json"), *dir = path_of("race-cache");
	pid_t pid[2];

	make_fake_tree();
	put_hooked_recipe();
	hook = vn_xasprintf("echo run >> %s; sleep 2", counter);
	put("make-hook.sh", hook);
	for (int i = 0; i < 2; i++) {
		assert_true((pid[i] = fork()) >= 0);
		if (pid[i] == 0) {
			struct vn_error err = {0};
			struct vn_recipe *r = NULL;
			struct vn_kernel_built *b = NULL;
			struct vn_kernel_build_opts o = {.cache_dir = dir, .jobs = 1};
			_exit(vn_recipe_load(p, &r, &err) < 0 || vn_kernel_build(r, &o, &b, &err) < 0 ? 1 : 0);
		}
	}
	for (int i = 0; i < 2; i++) {
		int st = 0;
		assert_int_equal(waitpid(pid[i], &st, 0), pid[i]);
		assert_true(WIFEXITED(st) && WEXITSTATUS(st) == 0);
	}
	unlink(hookp);
	assert_int_equal(vn_file_read(counter, 4096, &runs, &(size_t){0}, NULL), 0);
	assert_string_equal(runs, "run\n");
}

/* A minimal x86_64 ELF with one PT_NOTE segment holding one note of type note_type ("Xen"). */
static size_t fake_elf(unsigned char *buf, size_t cap, unsigned note_type)
{
	Elf64_Ehdr eh = {
		.e_machine = EM_X86_64, .e_phoff = sizeof(Elf64_Ehdr), .e_phentsize = sizeof(Elf64_Phdr), .e_phnum = 1};
	memcpy(eh.e_ident, ELFMAG, SELFMAG);
	eh.e_ident[EI_CLASS] = ELFCLASS64;
	eh.e_ident[EI_DATA] = ELFDATA2LSB;
	eh.e_ident[EI_VERSION] = EV_CURRENT;
	Elf64_Nhdr nh = {.n_namesz = 4, .n_descsz = 4, .n_type = note_type};
	size_t note = sizeof(eh) + sizeof(Elf64_Phdr), len = note + sizeof(nh) + 8 + 4000;
	Elf64_Phdr ph = {.p_type = PT_NOTE, .p_offset = note, .p_filesz = sizeof(nh) + 8};
	assert_true(len <= cap);
	memset(buf, 0x90, len);
	memcpy(buf, &eh, sizeof(eh));
	memcpy(buf + sizeof(eh), &ph, sizeof(ph));
	memcpy(buf + note, &nh, sizeof(nh));
	memcpy(buf + note + sizeof(nh), "Xen\0\0\0\x10\0", 8);
	return len;
}

static void test_pvh_note(void **state)
{
	(void)state;
	unsigned char elf[8192];
	size_t n = fake_elf(elf, sizeof(elf), 18);

	assert_true(vn_kernel_elf_has_pvh((char *)elf, n));
	/* Another note type, a cut file, a note segment pointing past the end: no PVH entry. */
	assert_false(vn_kernel_elf_has_pvh((char *)elf, 40));
	n = fake_elf(elf, sizeof(elf), 17);
	assert_false(vn_kernel_elf_has_pvh((char *)elf, n));
	n = fake_elf(elf, sizeof(elf), 18);
	((Elf64_Phdr *)(elf + sizeof(Elf64_Ehdr)))->p_filesz = 1u << 30;
	assert_false(vn_kernel_elf_has_pvh((char *)elf, n));
}

/* Malformed headers and notes are refused, not read past; a note after another is still found. */
static void test_pvh_malformed(void **state)
{
	(void)state;
	unsigned char elf[8192];
	size_t n = fake_elf(elf, sizeof(elf), 18), note = sizeof(Elf64_Ehdr) + sizeof(Elf64_Phdr);
	Elf64_Ehdr *eh = (Elf64_Ehdr *)elf;
	Elf64_Phdr *ph = (Elf64_Phdr *)(elf + sizeof(Elf64_Ehdr));
	Elf64_Nhdr *nh = (Elf64_Nhdr *)(elf + note);

	/* A program header table that runs past the end of the file. */
	eh->e_phnum = 1000;
	assert_false(vn_kernel_elf_has_pvh((char *)elf, n));
	eh->e_phnum = 1;
	eh->e_phoff = n - sizeof(Elf64_Phdr) / 2;
	assert_false(vn_kernel_elf_has_pvh((char *)elf, n));
	/* A note whose description, or name, claims more than its segment holds. */
	n = fake_elf(elf, sizeof(elf), 18);
	nh->n_descsz = 0xfffffff0u;
	assert_false(vn_kernel_elf_has_pvh((char *)elf, n));
	nh->n_descsz = 4;
	nh->n_namesz = 0xfffffff0u;
	assert_false(vn_kernel_elf_has_pvh((char *)elf, n));
	/* A 32-bit ELF and another machine's: not a vmlinux QEMU boots through PVH here. */
	n = fake_elf(elf, sizeof(elf), 18);
	eh->e_ident[EI_CLASS] = ELFCLASS32;
	assert_false(vn_kernel_elf_has_pvh((char *)elf, n));
	eh->e_ident[EI_CLASS] = ELFCLASS64;
	eh->e_machine = EM_AARCH64;
	assert_false(vn_kernel_elf_has_pvh((char *)elf, n));
	/* Two notes in one segment: a GNU build id, then the PVH entry. */
	n = fake_elf(elf, sizeof(elf), 18);
	Elf64_Nhdr gnu = {.n_namesz = 4, .n_descsz = 8, .n_type = 3};
	size_t first = sizeof(gnu) + 4 + 8;
	memmove(elf + note + first, elf + note, sizeof(*nh) + 8);
	memcpy(elf + note, &gnu, sizeof(gnu));
	memcpy(elf + note + sizeof(gnu), "GNU\0\1\2\3\4\5\6\7\x08", 12);
	ph->p_filesz += first;
	assert_true(vn_kernel_elf_has_pvh((char *)elf, n));
}

/* A bzImage the way the kernel's build makes one: setup sectors, a header, the compressed vmlinux + its size. */
static char *fake_bzimage(const char *name, const char *compress, unsigned note_type)
{
	unsigned char elf[8192];
	size_t n = fake_elf(elf, sizeof(elf), note_type);
	_cleanup_free_ char *raw = path_of("vmlinux.raw"), *z = path_of("vmlinux.z"), *cmd = NULL, *zdata = NULL;
	size_t zlen;
	struct vn_error err = {0};

	assert_int_equal(vn_file_write_atomic(raw, elf, n, 0644, &err), 0);
	assert_true(asprintf(&cmd, "%s < '%s' > '%s'", compress, raw, z) > 0);
	assert_int_equal(system(cmd), 0);
	assert_int_equal(vn_file_read(z, 1 << 20, &zdata, &zlen, &err), 0);
	unsigned setup = 2, off = 0x100;
	size_t total = (setup + 1) * 512 + off + zlen + 4;
	unsigned char *img = calloc(1, total);
	img[0x1f1] = (unsigned char)setup;
	memcpy(img + 0x202, "HdrS", 4);
	img[0x206] = 0x0f, img[0x207] = 0x02; /* protocol 2.15 */
	uint32_t v[2] = {off, (uint32_t)(zlen + 4)}, size = (uint32_t)n;
	memcpy(img + 0x248, v, sizeof(v));
	memcpy(img + (setup + 1) * 512 + off, zdata, zlen);
	memcpy(img + (setup + 1) * 512 + off + zlen, &size, 4);
	char *path = path_of(name);
	assert_int_equal(vn_file_write_atomic(path, img, total, 0644, &err), 0);
	free(img);
	return path;
}

static void test_pvh_extract(void **state)
{
	(void)state;
	_cleanup_free_ char *xz = fake_bzimage("bz-xz", "xz --check=crc32 -c", 18);
	_cleanup_free_ char *none = fake_bzimage("bz-none", "xz --check=crc32 -c", 17);
	_cleanup_free_ char *cache = path_of("pvh-cache");
	struct vn_error err = {0};
	char *out = NULL;

	assert_int_equal(vn_kernel_pvh_image(xz, cache, &out, &err), 1);
	assert_non_null(strstr(out, "/vmlinux/"));
	_cleanup_free_ char *data = NULL;
	size_t len;
	assert_int_equal(vn_file_read(out, 1 << 20, &data, &len, &err), 0);
	assert_true(vn_kernel_elf_has_pvh(data, len));
	free(out);
	/* Cached: the same answer again, without the bzImage's payload being read. */
	assert_int_equal(vn_kernel_pvh_image(xz, cache, &out, &err), 1);
	free(out);
	/* No PVH entry: boot the bzImage; that answer is cached too. */
	assert_int_equal(vn_kernel_pvh_image(none, cache, &out, &err), 0);
	assert_null(out);
	assert_int_equal(vn_kernel_pvh_image(none, cache, &out, &err), 0);
	/* gzip (the size is its own trailer, and the kernel adds none) works alike. */
	_cleanup_free_ char *gz = fake_bzimage("bz-gz", "gzip -9 -c | head -c -4", 18);
	assert_int_equal(vn_kernel_pvh_image(gz, cache, &out, &err), 1);
	free(out);
	/* Not a bzImage at all: nothing to give, no error (the boot reads its header and says so). */
	_cleanup_free_ char *junk = path_of("junk");
	assert_int_equal(vn_file_write_atomic(junk, "junk", 4, 0644, &err), 0);
	assert_int_equal(vn_kernel_pvh_image(junk, cache, &out, &err), 0);
}

static void git(const char *dir, const char *a1, const char *a2, const char *a3)
{
	const char *argv[] = {"git", "-C", dir, "-c", "user.name=t", "-c", "user.email=t@t", a1, a2, a3, NULL};
	struct vn_error err = {0};
	assert_int_equal(vn_spawn_run(argv, &(struct vn_spawn_opts){.log_fd = -1}, &err), 0);
}

static char *git_out(const char *dir, const char *a1, const char *a2)
{
	const char *argv[] = {"git", "-C", dir, a1, a2, NULL};
	_cleanup_strbuf_ struct vn_strbuf out = VN_STRBUF_INIT;
	struct vn_error err = {0};
	assert_int_equal(vn_spawn_run(argv, &(struct vn_spawn_opts){.log_fd = -1, .capture = &out}, &err), 0);
	return vn_strbuf_steal(&out);
}

/*
 * A git tree: any commit builds (opts.rev) in one shared checkout and object
 * dir whatever the commit, so a second commit recompiles in place; each
 * build carries its commit; the user's checkout, index and HEAD stay as they were.
 */
static void test_build_git_tree(void **state)
{
	(void)state;
	struct vn_error err = {0};
	int patched = 0;
	_cleanup_free_ char *repo = path_of("fake-src/linux-fake"), *cache = path_of("gitcache");

	make_fake_tree();
	git(repo, "init", "-q", ".");
	git(repo, "add", "-A", ".");
	git(repo, "commit", "-q", "-mfirst");
	put("fake-src/linux-fake/mm/x.c", "one\ntwo\nthree\nfour\n");
	git(repo, "commit", "-qa", "-msecond");
	/* Uncommitted work in the user's tree: built only when HEAD is, never by a rev. */
	put("fake-src/linux-fake/mm/x.c", "one\ntwo\nthree\nfour\ndirty\n");
	_cleanup_free_ char *head = git_out(repo, "rev-parse", "HEAD"), *first = git_out(repo, "rev-parse", "HEAD~1");
	head[40] = first[40] = '\0';

	put("g/numa.config", "CONFIG_NUMA=y\n");
	put("g/0001-fix.patch", "--- a/mm/x.c\n+++ b/mm/x.c\n@@ -1,3 +1,3 @@\n one\n-two\n+TWO\n three\n");
	put("g.json", "{\"type\": \"source\", \"tree\": \"fake-src/linux-fake\", \"patches\": [\"0001-fix.patch\"], "
		      "\"config\": {\"base\": \"tinyconfig\", \"fragments\": [\"numa.config\"]}}");
	_cleanup_free_ char *rp = path_of("g.json");
	_cleanup_recipe_ struct vn_recipe *r = NULL;
	assert_int_equal(vn_recipe_load(rp, &r, &err), 0);
	struct vn_kernel_build_opts o = {
		.cache_dir = cache, .jobs = 1, .progress = progress_count, .progress_data = &patched, .rev = "HEAD~1"};
	_cleanup_kernel_built_ struct vn_kernel_built *a = NULL, *b = NULL, *c = NULL, *d = NULL;
	if (vn_kernel_build(r, &o, &a, &err) < 0)
		fail_msg("build: %s\n%s", err.msg, err.detail ? err.detail : "");
	assert_string_equal(a->commit, first);
	_cleanup_free_ char *img = NULL;
	assert_int_equal(vn_file_read(a->image, VN_FILE_STATE_MAX, &img, &(size_t){0}, NULL), 0);
	assert_non_null(strstr(img + 0x400, "one\nTWO\nthree\n"));
	assert_null(strstr(img + 0x400, "four"));

	/* One checkout and one object dir for every commit: a marker in obj/ survives the next commit. */
	_cleanup_free_ char *wdir = path_of("gitcache/work"), *marker = NULL;
	DIR *dh = opendir(wdir);
	size_t works = 0;
	assert_non_null(dh);
	for (struct dirent *de; (de = readdir(dh));)
		if (strncmp(de->d_name, "git-", 4) == 0 && !strchr(de->d_name, '.')) {
			works++;
			free(marker);
			marker = vn_xasprintf("%s/%s/obj/marker", wdir, de->d_name);
		}
	closedir(dh);
	assert_int_equal(works, 1);
	assert_int_equal(vn_file_write(marker, "x"), 0);

	o.rev = head;
	patched = 0;
	assert_int_equal(vn_kernel_build(r, &o, &b, &err), 0);
	assert_string_equal(b->commit, head);
	assert_false(b->cached);
	assert_int_equal(patched, 1); /* the checkout undid the patch: applied again */
	assert_string_not_equal(a->key, b->key);
	free(img);
	img = NULL;
	assert_int_equal(vn_file_read(b->image, VN_FILE_STATE_MAX, &img, &(size_t){0}, NULL), 0);
	assert_non_null(strstr(img + 0x400, "one\nTWO\nthree\nfour\n"));
	assert_null(strstr(img + 0x400, "dirty"));
	assert_int_equal(access(marker, F_OK), 0);

	/* The first commit again: its kernel is in the cache by its identity. */
	o.rev = first;
	assert_int_equal(vn_kernel_build(r, &o, &c, &err), 0);
	assert_true(c->cached);

	/* No rev: HEAD with its uncommitted change, in the same checkout. */
	o.rev = NULL;
	assert_int_equal(vn_kernel_build(r, &o, &d, &err), 0);
	free(img);
	img = NULL;
	assert_int_equal(vn_file_read(d->image, VN_FILE_STATE_MAX, &img, &(size_t){0}, NULL), 0);
	assert_non_null(strstr(img + 0x400, "four\ndirty\n"));
	assert_string_equal(d->commit, head);

	/* The user's tree: HEAD where it was, the change still uncommitted, nothing staged. */
	_cleanup_free_ char *after = git_out(repo, "rev-parse", "HEAD"), *st = git_out(repo, "status", "--porcelain");
	after[40] = '\0';
	assert_string_equal(after, head);
	assert_string_equal(st, " M mm/x.c\n");

	/* The tree made anew (its old objects gone): the shared clone cannot move, so it is cloned again. */
	_cleanup_free_ char *dotgit = vn_xasprintf("%s/.git", repo);
	vn_rm_rf(dotgit);
	git(repo, "init", "-q", ".");
	git(repo, "add", "-A", ".");
	git(repo, "commit", "-q", "-manew");
	o.rev = NULL;
	_cleanup_kernel_built_ struct vn_kernel_built *f = NULL;
	if (vn_kernel_build(r, &o, &f, &err) < 0)
		fail_msg("build after the tree was made anew: %s", err.msg);
	free(img);
	img = NULL;
	assert_int_equal(vn_file_read(f->image, VN_FILE_STATE_MAX, &img, &(size_t){0}, NULL), 0);
	assert_non_null(strstr(img + 0x400, "four\ndirty\n"));

	/* A clone that cannot reach the tree's objects any more: its checkout fails, so it is cloned again. */
	char *slash = strrchr(marker, '/');
	*slash = '\0';
	_cleanup_free_ char *alt = vn_xasprintf("%s/../src/.git/objects/info/alternates", marker);
	assert_int_equal(unlink(alt), 0);
	put("fake-src/linux-fake/mm/x.c", "one\ntwo\nthree\nfive\n");
	git(repo, "commit", "-qa", "-mfive");
	_cleanup_kernel_built_ struct vn_kernel_built *h = NULL;
	if (vn_kernel_build(r, &o, &h, &err) < 0)
		fail_msg("build after the clone broke: %s", err.msg);
	_cleanup_free_ char *hlog = NULL;
	assert_int_equal(vn_file_read(h->log, VN_FILE_STATE_MAX, &hlog, &(size_t){0}, NULL), 0);
	assert_non_null(strstr(hlog, "fatal: ")); /* the broken clone's checkout failed first */
	free(img);
	img = NULL;
	assert_int_equal(vn_file_read(h->image, VN_FILE_STATE_MAX, &img, &(size_t){0}, NULL), 0);
	assert_non_null(strstr(img + 0x400, "five\n"));

	/* A commit whose tree is the first one's: the same kernel, found in the cache by the tree. */
	put("fake-src/linux-fake/mm/x.c", "one\ntwo\nthree\n");
	git(repo, "commit", "-qa", "-mback");
	o.rev = "HEAD";
	_cleanup_kernel_built_ struct vn_kernel_built *same = NULL;
	assert_int_equal(vn_kernel_build(r, &o, &same, &err), 0);
	assert_true(same->cached);
	assert_string_equal(same->key, a->key);

	/* A commit the tree does not have: bad input, naming it. */
	o.rev = "no-such-rev";
	_cleanup_kernel_built_ struct vn_kernel_built *e = NULL;
	assert_int_equal(vn_kernel_build(r, &o, &e, &err), -EINVAL);
	assert_non_null(strstr(err.msg, "no commit no-such-rev"));
	vn_error_clear(&err);
	/* Nor is an option git would take as one. */
	o.rev = "--all";
	_cleanup_kernel_built_ struct vn_kernel_built *opt = NULL;
	assert_int_equal(vn_kernel_build(r, &o, &opt, &err), -EINVAL);
	assert_non_null(strstr(err.msg, "'--all' is not a revision"));
	vn_error_clear(&err);
}

/* A fake kernel tree at REL, a git checkout with two commits (mm/x.c gains "four"); the recipe NAME.json builds it. */
static struct vn_recipe *git_fake_tree(const char *rel, const char *name)
{
	_cleanup_free_ char *repo = path_of(rel), *json = vn_xasprintf("%s.json", name), *rp = path_of(json);
	_cleanup_free_ char *frag = vn_xasprintf("%s/numa.config", name), *x = vn_xasprintf("%s/mm/x.c", rel);
	_cleanup_free_ char *recipe = vn_xasprintf("{\"type\": \"source\", \"tree\": \"%s\", \"config\": {\"base\": "
						   "\"tinyconfig\", \"fragments\": [\"numa.config\"]}}",
						   rel);
	struct vn_recipe *r = NULL;
	struct vn_error err = {0};

	make_fake_tree_in(rel);
	git(repo, "init", "-q", ".");
	git(repo, "add", "-A", ".");
	git(repo, "commit", "-q", "-mfirst");
	put(x, "one\ntwo\nthree\nfour\n");
	git(repo, "commit", "-qa", "-msecond");
	put(frag, "CONFIG_NUMA=y\n");
	put(json, recipe);
	assert_int_equal(vn_recipe_load(rp, &r, &err), 0);
	return r;
}

/* Every file under REL (.git's too) by content, and every directory: what a build must leave as it was. */
static char *snapshot(const char *rel)
{
	_cleanup_free_ char *dir = path_of(rel);
	const char *argv[] = {"sh",
			      "-c",
			      "cd \"$1\" && find . -type d | sort && find . -type f -print0 | sort -z | "
			      "xargs -0 sha256sum && git symbolic-ref HEAD",
			      "sh",
			      dir,
			      NULL};
	_cleanup_strbuf_ struct vn_strbuf out = VN_STRBUF_INIT;
	struct vn_error err = {0};
	assert_int_equal(vn_spawn_run(argv, &(struct vn_spawn_opts){.log_fd = -1, .capture = &out}, &err), 0);
	return vn_strbuf_steal(&out);
}

static struct vn_kernel_built *build_rev(const struct vn_recipe *r, const char *cache, const char *rev,
					 const char *want)
{
	struct vn_kernel_build_opts o = {.cache_dir = cache, .jobs = 1, .rev = rev};
	struct vn_kernel_built *b = NULL;
	struct vn_error err = {0};
	_cleanup_free_ char *img = NULL;

	if (vn_kernel_build(r, &o, &b, &err) < 0)
		fail_msg("build %s: %s\n%s", rev ? rev : "(dirty)", err.msg, err.detail ? err.detail : "");
	assert_int_equal(vn_file_read(b->image, VN_FILE_STATE_MAX, &img, &(size_t){0}, NULL), 0);
	if (!strstr(img + 0x400, want))
		fail_msg("build %s: the image has %s, not %s", rev ? rev : "(dirty)", img + 0x400, want);
	return b;
}

/*
 * GIT_DIR and GIT_WORK_TREE exported at the user's checkout (a hook, a linked
 * worktree, a shell left so): builds in the clone, which is already there,
 * leave that checkout byte for byte as it was: HEAD on its branch, the index
 * with its staged file, the uncommitted edit, the untracked and ignored files.
 */
static void test_build_git_env(void **state)
{
	(void)state;
	_cleanup_recipe_ struct vn_recipe *r = git_fake_tree("envrepo", "genv");
	_cleanup_free_ char *repo = path_of("envrepo"), *cache = path_of("envcache"), *dotgit = path_of("envrepo/.git");
	_cleanup_kernel_built_ struct vn_kernel_built *a = NULL, *b = NULL, *c = NULL, *d = NULL;

	put("envrepo/.gitignore", "build/\n");
	git(repo, "add", ".gitignore", NULL);
	git(repo, "commit", "-q", "-mignore");
	/* The clone exists before the variables do: a bisection's second step onwards. */
	a = build_rev(r, cache, "HEAD~2", "one\ntwo\nthree\n");
	put("envrepo/mm/x.c", "one\ntwo\nthree\nfour\nedited\n");
	put("envrepo/staged.c", "staged\n");
	git(repo, "add", "staged.c", NULL);
	put("envrepo/notes.txt", "untracked\n");
	put("envrepo/build/out.o", "ignored\n");
	_cleanup_free_ char *before = snapshot("envrepo");

	setenv("GIT_DIR", dotgit, 1);
	setenv("GIT_WORK_TREE", repo, 1);
	b = build_rev(r, cache, "HEAD", "three\nfour\n");
	c = build_rev(r, cache, NULL, "four\nedited\n");
	unsetenv("GIT_WORK_TREE");
	_cleanup_free_ char *mid = snapshot("envrepo");
	assert_string_equal(mid, before);

	/* GIT_DIR alone, as git sets it for hooks. */
	put("envrepo/mm/x.c", "one\ntwo\nthree\nfour\nedited again\n");
	_cleanup_free_ char *before2 = snapshot("envrepo");
	d = build_rev(r, cache, NULL, "four\nedited again\n");
	unsetenv("GIT_DIR");
	_cleanup_free_ char *after = snapshot("envrepo");
	assert_string_equal(after, before2);
	_cleanup_free_ char *st = git_out(repo, "status", "--porcelain");
	assert_string_equal(st, " M mm/x.c\nA  staged.c\n?? notes.txt\n");
}

/*
 * The user's git config does not reach the uncommitted diff: with
 * diff.noprefix, color.ui=always and a diff.external in ~/.gitconfig the
 * dirty build works, and its patch is the one a plain config gives (the same
 * kernel, found in the cache).
 */
static void test_build_git_user_config(void **state)
{
	(void)state;
	_cleanup_recipe_ struct vn_recipe *r = git_fake_tree("cfgrepo", "gcfg");
	_cleanup_free_ char *cache = path_of("cfgcache"), *home = path_of("cfghome"), *plain = path_of("plainhome");
	_cleanup_free_ char *ext = path_of("cfghome/ext-diff");
	_cleanup_free_ char *old = vn_xstrdup(getenv("HOME") ? getenv("HOME") : "/");
	_cleanup_free_ char *gc = vn_xasprintf("[diff]\n\tnoprefix = true\n\texternal = %s\n[color]\n\tui = always\n"
					       "[core]\n\tfsmonitor = true\n",
					       ext);

	put("cfghome/ext-diff", "#!/bin/sh\necho 'not a patch'\n");
	assert_int_equal(chmod(ext, 0755), 0);
	put("cfghome/.gitconfig", gc);
	put("plainhome/.gitconfig", "");
	put("cfgrepo/mm/x.c", "one\ntwo\nthree\nfour\ndirty\n");
	setenv("HOME", home, 1);
	_cleanup_kernel_built_ struct vn_kernel_built *a = build_rev(r, cache, NULL, "four\ndirty\n");
	setenv("HOME", plain, 1);
	_cleanup_kernel_built_ struct vn_kernel_built *b = build_rev(r, cache, NULL, "four\ndirty\n");
	setenv("HOME", old, 1);
	assert_true(b->cached);
	assert_string_equal(a->key, b->key);
}

/*
 * --rev names one commit: a range (whose rev-parse gives ^A on its second
 * line, once taken for the tree) or a commit set is refused as bad input;
 * and a git that hangs is stopped at its deadline.
 */
static void test_build_git_rev(void **state)
{
	(void)state;
	_cleanup_recipe_ struct vn_recipe *r = git_fake_tree("revrepo", "grev");
	_cleanup_free_ char *repo = path_of("revrepo"), *cache = path_of("revcache");
	_cleanup_free_ char *head = git_out(repo, "rev-parse", "HEAD");
	static const char *const bad[] = {"HEAD~1..HEAD", "HEAD~1...HEAD", "^HEAD~1", "HEAD^@", "HEAD^!", "HEAD^-"};
	char id[VN_SHA256_HEX_LEN + 1], commit[VN_GIT_HASH_MAX + 1];
	struct vn_error err = {0};
	char *diff = NULL;

	head[40] = '\0';
	for (size_t i = 0; i < VN_ARRAY_SIZE(bad); i++) {
		if (vn_kernel_source_id(r, bad[i], cache, id, &diff, commit, &err) != -EINVAL)
			fail_msg("--rev %s: taken as commit %s", bad[i], commit);
		assert_int_equal(err.kind, VN_ERR_INPUT);
		assert_non_null(strstr(err.msg, bad[i]));
		vn_error_clear(&err);
	}
	assert_int_equal(vn_kernel_source_id(r, "HEAD~1", cache, id, &diff, commit, &err), 0);
	free(diff);
	diff = NULL;
	assert_int_equal(vn_kernel_source_id(r, "HEAD", cache, id, &diff, commit, &err), 0);
	free(diff);
	diff = NULL;
	assert_string_equal(commit, head);

	put("hang/git", "#!/bin/sh\nexec sleep 60\n");
	_cleanup_free_ char *bin = path_of("hang"), *fake = path_of("hang/git");
	_cleanup_free_ char *old = vn_xstrdup(getenv("PATH")), *path = vn_xasprintf("%s:%s", bin, old);
	assert_int_equal(chmod(fake, 0755), 0);
	setenv("PATH", path, 1);
	setenv("VNUMA_GIT_DEADLINE", "1", 1);
	int rc = vn_kernel_source_id(r, "HEAD", cache, id, &diff, commit, &err);
	setenv("PATH", old, 1);
	unsetenv("VNUMA_GIT_DEADLINE");
	assert_int_equal(rc, -ETIMEDOUT);
	assert_int_equal(err.kind, VN_ERR_INFRA);
	assert_non_null(strstr(err.msg, "git rev-parse did not finish in 1 s"));
	vn_error_clear(&err);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_recipe_source),
		cmocka_unit_test(test_recipe_arch),
		cmocka_unit_test(test_recipe_errors),
		cmocka_unit_test(test_recipe_find),
		cmocka_unit_test(test_cache_key),
		cmocka_unit_test(test_cache_key_debug),
		cmocka_unit_test(test_cache_key_selftests),
		cmocka_unit_test(test_patch_apply),
		cmocka_unit_test(test_patch_reject),
		cmocka_unit_test(test_config_verify),
		cmocka_unit_test(test_shipped_recipes),
		cmocka_unit_test(test_build_fake_tree),
		cmocka_unit_test(test_build_debug),
		cmocka_unit_test(test_vmlinux_recipe_hint),
		cmocka_unit_test(test_build_infra_failures),
		cmocka_unit_test(test_build_fragment_space),
		cmocka_unit_test(test_build_selftests),
		cmocka_unit_test(test_cache_broken_entry),
		cmocka_unit_test(test_build_concurrent),
		cmocka_unit_test(test_build_git_tree),
		cmocka_unit_test(test_pvh_note),
		cmocka_unit_test(test_pvh_malformed),
		cmocka_unit_test(test_pvh_extract),
		cmocka_unit_test(test_build_git_env),
		cmocka_unit_test(test_build_git_user_config),
		cmocka_unit_test(test_build_git_rev),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
