/* vnuma kernel build|list: guest kernels from recipes, and what the cache holds. */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli/args.h"
#include "cli/cli.h"
#include "cli/kselftest.h"
#include "cli/progress.h"
#include "kernel/build.h"
#include "kernel/kernel.h"
#include "kernel/recipe.h"
#include "util/alloc.h"
#include "util/arch.h"
#include "util/cleanup.h"
#include "util/state.h"

static const struct vn_cmd kernel_build_cmd, kernel_list_cmd, kernel_selftests_cmd;

static int state_cache(const char *state_dir, char **out, struct vn_error *err)
{
	_cleanup_free_ char *state = NULL;
	int rc;

	if ((rc = vn_state_locate(state_dir, &state, err)) < 0)
		return rc;
	*out = vn_state_kernels_dir(state);
	return 0;
}

/* A built (or cached) kernel, and where its parts are, on stdout; took: seconds the build (or lookup) took. */
static void built_print(const struct vn_recipe *r, const struct vn_kernel_built *b, double took)
{
	printf("%s: %s %s for %s (%.16s)", r->name, b->cached ? "cached" : "built", b->release ? b->release : "?",
	       vn_arch_name(b->arch), b->key);
	if (b->cached)
		printf(", found in %.2f s\n", took);
	else
		printf(" in %dm%02ds\n", (int)took / 60, (int)took % 60);
	printf("  image:   %s (%lld KiB)\n  config:  %s\n  log:     %s\n", b->image, b->size / 1024, b->config, b->log);
	if (b->debug)
		printf("  vmlinux: %s (with debug info)\n  gdb:     %s (lx-symbols, lx-dmesg)\n", b->vmlinux,
		       b->gdb_py);
	for (size_t j = 0; j < b->npatches; j++)
		printf("  patch:   %s\n", b->patches[j]);
}

/* The recipe spec names (over repo, when given), built with o's cache, jobs, arch and rev. */
static int build_one(const char *spec, const char *repo, const struct vn_kernel_build_opts *o, struct vn_error *err)
{
	_cleanup_free_ char *path = NULL;
	_cleanup_recipe_ struct vn_recipe *r = NULL;
	_cleanup_kernel_built_ struct vn_kernel_built *b = NULL;
	_cleanup_strbuf_ struct vn_strbuf tried = VN_STRBUF_INIT;
	struct vn_cli_progress p;
	int rc;

	vn_cli_progress_init(&p);
	if ((rc = vn_recipe_find(spec, &path, &tried)) < 0)
		return rc;
	if (rc == 0)
		return vn_input_error(err, "%s: no such recipe (not a file, nor in %s)", spec,
				      tried.s ? tried.s : "any recipe dir: give NAME or a .json path");
	if ((rc = vn_recipe_load(path, &r, err)) < 0 || (repo && (rc = vn_recipe_use_repo(r, repo, err)) < 0))
		return rc;
	if (o->rev && (r->type != VN_RECIPE_SOURCE || r->tree_kind != VN_TREE_GIT))
		return vn_input_error(err, "--rev %s: %s builds no git tree (%s): give --repo DIR", o->rev, r->name,
				      r->type == VN_RECIPE_SOURCE ? r->tree : "not a source recipe");
	if (r->type != VN_RECIPE_SOURCE) {
		printf("%s: a %s recipe: nothing to build\n", r->name,
		       r->type == VN_RECIPE_STOCK ? "stock" : "prebuilt");
		return 0;
	}
	struct vn_kernel_build_opts bo = *o;
	bo.progress = vn_cli_progress;
	bo.progress_data = &p;
	rc = vn_kernel_build(r, &bo, &b, err);
	vn_cli_progress_done(&p);
	if (rc < 0)
		return rc;
	built_print(r, b, vn_cli_progress_elapsed(&p));
	return 0;
}

static int kernel_build(int argc, char **argv, struct vn_error *err)
{
	_cleanup_free_ char *cache = NULL;
	struct vn_cli_args a;
	const char *repo = NULL, *rev = NULL;
	uint64_t jobs = 0;
	enum vn_arch arch = vn_arch_host();
	bool debug = false;
	int c, rc;

	vn_cli_args_init(&a, &kernel_build_cmd, argc, argv);
	while ((c = vn_cli_next(&a, err)) > 0) {
		if (c == 'j' && vn_cli_count(&a, "jobs", optarg, 1, 1024, &jobs, err) < 0)
			return a.exit;
		if (c == 'X' && (rc = vn_arch_parse(optarg, "--arch", &arch, err)) < 0)
			return rc;
		if (c == 'R')
			repo = optarg;
		if (c == 'V')
			rev = optarg;
		if (c == 'g')
			debug = true;
	}
	if (c < 0 || vn_cli_operands(&a, 1, -1, err) < 0)
		return a.exit;
	if ((rc = state_cache(a.state_dir, &cache, err)) < 0)
		return rc;
	struct vn_kernel_build_opts bo = {
		.cache_dir = cache, .jobs = (int)jobs, .arch = arch, .rev = rev, .debug = debug};
	for (int i = optind; i < argc; i++)
		if ((rc = build_one(argv[i], repo, &bo, err)) < 0)
			return rc;
	return VN_EXIT_OK;
}

static int kernel_list(int argc, char **argv, struct vn_error *err)
{
	_cleanup_free_ char *cache = NULL;
	struct vn_kernel_built **v = NULL;
	struct vn_cli_args a;
	size_t n = 0;
	int c, rc;

	vn_cli_args_init(&a, &kernel_list_cmd, argc, argv);
	while ((c = vn_cli_next(&a, err)) > 0)
		;
	if (c < 0 || vn_cli_operands(&a, 0, 0, err) < 0)
		return a.exit;
	if ((rc = state_cache(a.state_dir, &cache, err)) < 0 || (rc = vn_kernel_cache_list(cache, &v, &n, err)) < 0)
		return rc;
	if (!n)
		printf("no kernels built yet in %s ('vnuma kernel build kernels/NAME.json')\n", cache);
	else
		printf("%-18s %-16s %-8s %-16s %9s %8s  %s\n", "RECIPE", "RELEASE", "ARCH", "HASH", "SIZE", "BUILD",
		       "PATCHES");
	for (size_t i = 0; i < n; i++) {
		struct vn_kernel_built *b = v[i];
		char patches[512] = "-";
		for (size_t j = 0; j < b->npatches; j++)
			snprintf(patches + (j ? strlen(patches) : 0), sizeof(patches) - (j ? strlen(patches) : 0),
				 "%s%s", j ? "," : "", b->patches[j]);
		char took[16] = "?";
		if (b->build_s > 0)
			snprintf(took, sizeof(took), "%dm%02ds", (int)b->build_s / 60, (int)b->build_s % 60);
		char recipe[64];
		snprintf(recipe, sizeof(recipe), "%s%s", b->recipe ? b->recipe : "?", b->debug ? "+debug" : "");
		printf("%-18s %-16s %-8s %-16.16s %6lld KiB %8s  %s\n", recipe, b->release ? b->release : "?",
		       vn_arch_name(b->arch), b->key ? b->key : "?", b->size / 1024, took, patches);
		vn_kernel_built_free(b);
	}
	free(v);
	return VN_EXIT_OK;
}

int vn_cli_kselftest(const char *state_dir, const char *kernel, enum vn_arch arch, const char *tests, int jobs,
		     struct vn_selftests **out, struct vn_error *err)
{
	_cleanup_free_ char *cache = NULL, *path = NULL;
	_cleanup_recipe_ struct vn_recipe *r = NULL;
	_cleanup_strbuf_ struct vn_strbuf tried = VN_STRBUF_INIT;
	struct vn_cli_progress p;
	int rc;

	if ((rc = state_cache(state_dir, &cache, err)) < 0)
		return rc;
	if (kernel && strcmp(kernel, "stock") != 0) {
		if ((rc = vn_recipe_find(kernel, &path, &tried)) < 0)
			return rc;
		if (rc == 0)
			return vn_input_error(err,
					      "kernel %s: kselftest is built from a kernel's source tree: give 'stock' "
					      "or a source recipe (not a file, nor in %s)",
					      kernel, tried.s ? tried.s : "any recipe dir");
		if ((rc = vn_recipe_load(path, &r, err)) < 0)
			return rc;
	}
	vn_cli_progress_init(&p);
	snprintf(p.what, sizeof(p.what), "kselftest");
	struct vn_selftests_opts so = {.cache_dir = cache,
				       .arch = arch,
				       .tests = tests,
				       .jobs = jobs,
				       .progress = vn_cli_progress,
				       .progress_data = &p};
	/* A "stock" recipe is the stock kernel's tree. */
	rc = vn_selftests_build(r && r->type == VN_RECIPE_STOCK ? NULL : r, &so, out, err);
	vn_cli_progress_done(&p);
	return rc;
}

static int kernel_selftests(int argc, char **argv, struct vn_error *err)
{
	_cleanup_selftests_ struct vn_selftests *t = NULL;
	struct vn_cli_args a;
	const char *kernel = NULL, *tests = NULL;
	uint64_t jobs = 0;
	enum vn_arch arch = vn_arch_host();
	int c, rc;

	vn_cli_args_init(&a, &kernel_selftests_cmd, argc, argv);
	while ((c = vn_cli_next(&a, err)) > 0) {
		if (c == 'j' && vn_cli_count(&a, "jobs", optarg, 1, 1024, &jobs, err) < 0)
			return a.exit;
		if (c == 'X' && (rc = vn_arch_parse(optarg, "--arch", &arch, err)) < 0)
			return rc;
		if (c == 'k')
			kernel = optarg;
		if (c == 'T')
			tests = optarg;
	}
	if (c < 0 || vn_cli_operands(&a, 0, 0, err) < 0)
		return a.exit;
	if ((rc = vn_cli_kselftest(a.state_dir, kernel, arch, tests, (int)jobs, &t, err)) < 0)
		return rc;
	fprintf(stderr, "kselftest %s for %s from %s (%.16s)%s; run it with: vnuma run SCENARIO --share %s:%s\n",
		t->subdir, vn_arch_name(t->arch), t->tree ? t->tree : "?", t->key, t->cached ? ", cached" : "", t->dir,
		VN_SELFTESTS_GUEST_DIR);
	printf("%s\n", t->dir);
	return VN_EXIT_OK;
}

static const struct vn_cli_opt kernel_build_opts[] = {
	{"jobs", 'j', true, "N", VN_VAL_NONE, "make -j (default: all CPUs)"},
	{"arch", 'X', false, "ARCH", VN_VAL_NONE,
	 "build for x86_64 (default: the host's), arm64 or ppc64le, with\n"
	 "Debian's cross compiler (gcc-aarch64-linux-gnu,\n"
	 "gcc-powerpc64le-linux-gnu) and the recipe's config.arch entry"},
	{"repo", 'R', false, "DIR", VN_VAL_DIR,
	 "build this git checkout with the recipe's config and patches\n"
	 "(its tree is ignored), in the build tree bisect uses for it"},
	{"rev", 'V', false, "REV", VN_VAL_NONE,
	 "the commit to build (default: HEAD and the uncommitted diff);\n"
	 "the checkout itself is never written"},
	{"debug", 'g', false, NULL, VN_VAL_NONE,
	 "with DWARF debug info and the kernel's gdb scripts, kept with\n"
	 "the image for vnuma debug and dump (as the recipe's \"debug\": true;\n"
	 "a cache entry and build tree apart from the build without)"},
	VN_CLI_OPT_END,
};

static const struct vn_cmd kernel_build_cmd = {
	.name = "build",
	.fn = kernel_build,
	.summary = "build the kernels of source recipes (a cache hit is instant)",
	.synopsis = "[--state-dir DIR] [-j N] [--arch ARCH] [--debug] [--repo DIR [--rev REV]] RECIPE...",
	.opts = kernel_build_opts,
	.common = VN_CLI_STATE_DIR,
	.operand = VN_VAL_KERNEL,
};

static const struct vn_cmd kernel_list_cmd = {
	.name = "list",
	.fn = kernel_list,
	.summary = "list the cached kernels: recipe, release, hash, size, build time, patches",
	.synopsis = "[--state-dir DIR]",
	.common = VN_CLI_STATE_DIR,
};

static const struct vn_cli_opt kernel_selftests_opts[] = {
	{"kernel", 'k', false, "KERNEL", VN_VAL_KERNEL,
	 "'stock' (default: Debian's linux-source-6.1, which setup.sh\n"
	 "installs) or a source recipe, whose tree is built"},
	{"arch", 'X', false, "ARCH", VN_VAL_NONE,
	 "the guest's: x86_64 (default: the host's), arm64 or ppc64le,\n"
	 "with Debian's cross compiler and the target's libnuma-dev"},
	{"tests", 'T', false, "LIST", VN_VAL_NONE,
	 "comma-separated tests of selftests/vm (mm from 6.3)\n"
	 "(default: " VN_SELFTESTS_DEFAULT ")"},
	{"jobs", 'j', true, "N", VN_VAL_NONE, "make -j (default: all CPUs)"},
	VN_CLI_OPT_END,
};

static const struct vn_cmd kernel_selftests_cmd = {
	.name = "selftests",
	.fn = kernel_selftests,
	.summary = "build kselftest's mm tests from a kernel's tree, statically; print their folder",
	.synopsis = "[--state-dir DIR] [--kernel stock|RECIPE] [--arch ARCH] [--tests LIST] [-j N]",
	.opts = kernel_selftests_opts,
	.common = VN_CLI_STATE_DIR,
};

static const struct vn_cmd *const kernel_subs[] = {&kernel_build_cmd, &kernel_list_cmd, &kernel_selftests_cmd, NULL};

const struct vn_cmd vn_cmd_kernel = {
	.name = "kernel",
	.summary = "build a guest kernel from a recipe (source + patches + config), list the cache",
	.description = "RECIPE is a file (kernels/NAME.json) or the name of a shipped or local recipe.\n"
		       "A source recipe is built out of tree into STATE/cache/kernels, keyed by a hash\n"
		       "of (source, config inputs, patches): building the same inputs again is instant,\n"
		       "and kernels that differ only in patches share one incremental build tree.",
	.subs = kernel_subs,
};
