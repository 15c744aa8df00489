/* vnuma kernel build|list: guest kernels from recipes, and what the cache holds. */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli/cli.h"
#include "kernel/build.h"
#include "kernel/kernel.h"
#include "kernel/recipe.h"
#include "util/cleanup.h"

static void kernel_usage(FILE *out)
{
	fprintf(out, "usage: vnuma kernel build [--state-dir DIR] [-j N] RECIPE...\n"
		     "       vnuma kernel list [--state-dir DIR]\n\n"
		     "RECIPE is kernels/NAME.json or just NAME. A source recipe is built out of tree into\n"
		     "STATE/cache/kernels, keyed by a hash of (source, config inputs, patches): building the\n"
		     "same inputs again is instant, and kernels that differ only in patches share one\n"
		     "incremental build tree. See docs/kernels.md.\n\n"
		     "  --state-dir DIR  state directory (default $VNUMA_STATE_DIR, ...)\n"
		     "  -j, --jobs N     make -j (default: all CPUs)\n");
}

static int state_cache(const char *state_dir, char **out, struct vn_error *err)
{
	if (state_dir)
		return asprintf(out, "%s/cache/kernels", state_dir) < 0 ? -ENOMEM : 0;
	return vn_kernel_cache_dir_default(out, err);
}

static int kernel_build(int argc, char **argv, struct vn_error *err)
{
	static const struct option opts[] = {
		{"state-dir", required_argument, NULL, 'S'},
		{"jobs", required_argument, NULL, 'j'},
		{NULL, 0, NULL, 0},
	};
	const char *state_dir = NULL;
	_cleanup_free_ char *cache = NULL;
	int jobs = 0, c, rc;

	optind = 1;
	while ((c = getopt_long(argc, argv, "S:j:", opts, NULL)) != -1) {
		switch (c) {
		case 'S': state_dir = optarg; break;
		case 'j':
			jobs = atoi(optarg);
			if (jobs <= 0)
				return vn_input_error(err, "--jobs %s: expected a positive number", optarg);
			break;
		default: kernel_usage(stderr); return VN_EXIT_INPUT;
		}
	}
	if (optind >= argc)
		return vn_input_error(err, "build needs a RECIPE (kernels/NAME.json or NAME)");
	if ((rc = state_cache(state_dir, &cache, err)) < 0)
		return rc;
	for (int i = optind; i < argc; i++) {
		_cleanup_free_ char *path = NULL;
		_cleanup_recipe_ struct vn_recipe *r = NULL;
		_cleanup_kernel_built_ struct vn_kernel_built *b = NULL;
		struct vn_cli_progress p;
		vn_cli_progress_init(&p);
		if ((rc = vn_recipe_find(argv[i], &path)) < 0)
			return rc;
		if (rc == 0)
			return vn_input_error(err, "%s: no such recipe (looked for kernels/%s.json)", argv[i], argv[i]);
		if ((rc = vn_recipe_load(path, &r, err)) < 0)
			return rc;
		if (r->type != VN_RECIPE_SOURCE) {
			printf("%s: a %s recipe: nothing to build\n", r->name, r->type == VN_RECIPE_STOCK ? "stock" : "prebuilt");
			continue;
		}
		struct vn_kernel_build_opts bo = {
			.cache_dir = cache, .jobs = jobs, .progress = vn_cli_progress, .progress_data = &p};
		rc = vn_kernel_build(r, &bo, &b, err);
		vn_cli_progress_done(&p);
		if (rc < 0)
			return rc;
		double took = vn_cli_progress_elapsed(&p);
		printf("%s: %s %s (%.16s)", r->name, b->cached ? "cached" : "built", b->release ? b->release : "?", b->key);
		if (b->cached)
			printf(", found in %.2f s\n", took);
		else
			printf(" in %dm%02ds\n", (int)took / 60, (int)took % 60);
		printf("  image:   %s (%lld KiB)\n  config:  %s\n  log:     %s\n", b->image, b->size / 1024, b->config,
		       b->log);
		for (size_t j = 0; j < b->npatches; j++)
			printf("  patch:   %s\n", b->patches[j]);
	}
	return VN_EXIT_OK;
}

static int kernel_list(int argc, char **argv, struct vn_error *err)
{
	static const struct option opts[] = {
		{"state-dir", required_argument, NULL, 'S'},
		{NULL, 0, NULL, 0},
	};
	const char *state_dir = NULL;
	_cleanup_free_ char *cache = NULL;
	struct vn_kernel_built **v = NULL;
	size_t n = 0;
	int c, rc;

	optind = 1;
	while ((c = getopt_long(argc, argv, "S:", opts, NULL)) != -1) {
		if (c != 'S') {
			kernel_usage(stderr);
			return VN_EXIT_INPUT;
		}
		state_dir = optarg;
	}
	if ((rc = state_cache(state_dir, &cache, err)) < 0 || (rc = vn_kernel_cache_list(cache, &v, &n, err)) < 0)
		return rc;
	if (!n)
		printf("no kernels built yet in %s ('vnuma kernel build kernels/NAME.json')\n", cache);
	else
		printf("%-18s %-16s %-16s %9s %8s  %s\n", "RECIPE", "RELEASE", "HASH", "SIZE", "BUILD", "PATCHES");
	for (size_t i = 0; i < n; i++) {
		struct vn_kernel_built *b = v[i];
		char patches[512] = "-";
		for (size_t j = 0; j < b->npatches; j++)
			snprintf(patches + (j ? strlen(patches) : 0), sizeof(patches) - (j ? strlen(patches) : 0), "%s%s",
				 j ? "," : "", b->patches[j]);
		char took[16] = "?";
		if (b->build_s > 0)
			snprintf(took, sizeof(took), "%dm%02ds", (int)b->build_s / 60, (int)b->build_s % 60);
		printf("%-18s %-16s %-16.16s %6lld KiB %8s  %s\n", b->recipe ? b->recipe : "?",
		       b->release ? b->release : "?", b->key ? b->key : "?", b->size / 1024, took, patches);
		vn_kernel_built_free(b);
	}
	free(v);
	return VN_EXIT_OK;
}

int cmd_kernel(int argc, char **argv, struct vn_error *err)
{
	if (argc < 2 || vn_cli_wants_help(argc, argv)) {
		kernel_usage(argc < 2 ? stderr : stdout);
		return argc < 2 ? VN_EXIT_INPUT : VN_EXIT_OK;
	}
	if (strcmp(argv[1], "build") == 0)
		return kernel_build(argc - 1, argv + 1, err);
	if (strcmp(argv[1], "list") == 0)
		return kernel_list(argc - 1, argv + 1, err);
	return vn_input_error(err, "unknown kernel subcommand '%s' (build, list)", argv[1]);
}
