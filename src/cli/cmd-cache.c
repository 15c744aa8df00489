/* vnuma cache list|prune: what STATE/cache holds, and the booted snapshots trimmed to a size. */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cli/args.h"
#include "cli/cli.h"
#include "testbed/warm.h"
#include "util/alloc.h"
#include "util/cleanup.h"
#include "util/dir.h"
#include "util/parse.h"
#include "util/state.h"

static const struct vn_cmd cache_list_cmd, cache_prune_cmd;

static int cache_dir(const char *state_dir, char **state, char **out, struct vn_error *err)
{
	int rc;

	if ((rc = vn_state_locate(state_dir, state, err)) < 0)
		return rc;
	*out = vn_state_cache_dir(*state);
	return 0;
}

static void print_part(const char *what, const char *path, const char *note)
{
	char size[32];

	printf("%-10s %10s  %s%s%s\n", what, vn_size_format(vn_dir_usage(path), size, sizeof(size)), path,
	       note ? "  " : "", note ? note : "");
}

static int cache_list(int argc, char **argv, struct vn_error *err)
{
	_cleanup_free_ char *state = NULL, *cache = NULL;
	struct vn_warm_entry *e = NULL;
	struct vn_cli_args a;
	size_t n = 0;
	uint64_t total = 0, max = 0;
	int c, rc;

	vn_cli_args_init(&a, &cache_list_cmd, argc, argv);
	while ((c = vn_cli_next(&a, err)) > 0)
		;
	if (c < 0 || vn_cli_operands(&a, 0, 0, err) < 0)
		return a.exit;
	if ((rc = cache_dir(a.state_dir, &state, &cache, err)) < 0 || (rc = vn_warm_cache_max(&max, err)) < 0 ||
	    (rc = vn_warm_list(cache, &e, &n, err)) < 0)
		return rc;
	_cleanup_free_ char *kernels = vn_state_kernels_dir(state), *vmlinux = vn_cache_vmlinux_dir(cache);
	_cleanup_free_ char *images = vn_state_images_dir(state), *warm = vn_cache_warm_dir(cache);
	_cleanup_free_ char *digests = vn_cache_digests_dir(cache);
	print_part("kernels", kernels, "(vnuma kernel list)");
	print_part("images", images, NULL);
	print_part("vmlinux", vmlinux, "(PVH vmlinux of each bzImage)");
	print_part("digests", digests, NULL);
	print_part("snapshots", warm, NULL);
	char size[32], used[32];
	for (size_t i = 0; i < n; i++) {
		struct tm tm;
		localtime_r(&e[i].used, &tm);
		strftime(used, sizeof(used), "%Y-%m-%d %H:%M", &tm);
		printf("  %.16s  %10s  last used %s\n", e[i].key, vn_size_format(e[i].bytes, size, sizeof(size)), used);
		total += e[i].bytes;
	}
	print_part("all", cache, "(initramfs images and uploads' locks too)");
	printf("%zu booted snapshot%s, %s", n, n == 1 ? "" : "s", vn_size_format(total, size, sizeof(size)));
	printf(max ? " of at most %s ($VNUMA_WARM_CACHE_MAX)\n" : "; snapshots are off ($VNUMA_WARM_CACHE_MAX=0)\n",
	       vn_size_format(max, used, sizeof(used)));
	free(e);
	return VN_EXIT_OK;
}

static int cache_prune(int argc, char **argv, struct vn_error *err)
{
	_cleanup_free_ char *state = NULL, *cache = NULL;
	struct vn_cli_args a;
	uint64_t max = 0;
	bool given = false;
	unsigned removed = 0;
	int c, rc;

	vn_cli_args_init(&a, &cache_prune_cmd, argc, argv);
	while ((c = vn_cli_next(&a, err)) > 0) {
		if (c == 'm' && vn_cli_size(&a, "max", optarg, 0, UINT64_C(1) << 50, &max, err) < 0)
			return a.exit;
		if (c == 'm')
			given = true;
		if (c == 'A') {
			max = 0;
			given = true;
		}
	}
	if (c < 0 || vn_cli_operands(&a, 0, 0, err) < 0)
		return a.exit;
	if ((rc = cache_dir(a.state_dir, &state, &cache, err)) < 0 ||
	    (!given && (rc = vn_warm_cache_max(&max, err)) < 0) ||
	    (rc = vn_warm_prune(cache, max, NULL, &removed, err)) < 0)
		return rc;
	printf("removed %u booted snapshot%s\n", removed, removed == 1 ? "" : "s");
	return VN_EXIT_OK;
}

static const struct vn_cli_opt cache_prune_opts[] = {
	{"max", 'm', false, "SIZE", VN_VAL_NONE,
	 "keep the most recently used snapshots within SIZE (default: the\n"
	 "cap, $VNUMA_WARM_CACHE_MAX or 8G)"},
	{"all", 'A', false, NULL, VN_VAL_NONE, "remove every booted snapshot"},
	VN_CLI_OPT_END,
};

static const struct vn_cmd cache_list_cmd = {
	.name = "list",
	.fn = cache_list,
	.summary = "what the cache holds: kernels, images, vmlinux, digests, booted snapshots",
	.synopsis = "[--state-dir DIR]",
	.common = VN_CLI_STATE_DIR,
};

static const struct vn_cmd cache_prune_cmd = {
	.name = "prune",
	.fn = cache_prune,
	.summary = "remove the least recently used booted snapshots",
	.synopsis = "[--state-dir DIR] [--max SIZE | --all]",
	.opts = cache_prune_opts,
	.common = VN_CLI_STATE_DIR,
};

static const struct vn_cmd *const cache_subs[] = {&cache_list_cmd, &cache_prune_cmd, NULL};

const struct vn_cmd vn_cmd_cache = {
	.name = "cache",
	.summary = "list what STATE/cache holds, prune its booted snapshots",
	.description = "The first boot of a topology with a kernel and command line saves the booted guest\n"
		       "in STATE/cache/warm; later ones restore it (docs/performance.md, warm starts). The\n"
		       "snapshots are kept within $VNUMA_WARM_CACHE_MAX (default 8G), least recently used\n"
		       "first out; prune trims them further. The other caches are rebuilt on use when\n"
		       "removed by hand.",
	.subs = cache_subs,
};
