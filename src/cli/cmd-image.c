/* vnuma image build|list|inject|extract: guest images from recipes, and files in and out of any disk image. */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/args.h"
#include "cli/cli.h"
#include "cli/progress.h"
#include "guest/disk.h"
#include "testbed/image.h"
#include "testbed/testbed.h"
#include "util/alloc.h"
#include "util/arch.h"
#include "util/cleanup.h"
#include "util/state.h"

static const struct vn_cmd image_build_cmd, image_list_cmd, image_inject_cmd, image_extract_cmd;

static int image_build(int argc, char **argv, struct vn_error *err)
{
	struct vn_cli_args a;
	struct vn_testbed_ctx ctx;
	enum vn_arch arch = vn_arch_host();
	int c, rc = 0;

	vn_cli_args_init(&a, &image_build_cmd, argc, argv);
	while ((c = vn_cli_next(&a, err)) > 0)
		if (c == 'X' && (rc = vn_arch_parse(optarg, "--arch", &arch, err)) < 0)
			return rc;
	if (c < 0 || vn_cli_operands(&a, 1, -1, err) < 0)
		return a.exit;
	if ((rc = vn_cli_ctx(&a, &ctx, err)) < 0)
		return rc;
	for (int i = optind; rc == 0 && i < argc; i++) {
		_cleanup_image_ struct vn_image *im = NULL;
		struct vn_cli_progress p;
		vn_cli_progress_init(&p);
		snprintf(p.what, sizeof(p.what), "image");
		rc = vn_image_build(&ctx, argv[i], arch, vn_cli_progress, &p, &im, err);
		vn_cli_progress_done(&p);
		if (rc < 0)
			break;
		printf("%s: %s %s for %s (%.16s) %s in %.1f s\n", im->name, im->cached ? "cached" : "built",
		       vn_image_kind_name(im->kind), vn_arch_name(im->arch), im->key, im->cached ? "found" : "made",
		       im->cached ? vn_cli_progress_elapsed(&p) : im->build_s);
		printf("  image: %s (%lld KiB)\n  log:   %s\n", im->path, im->size / 1024, im->log);
	}
	vn_testbed_ctx_clear(&ctx);
	return rc < 0 ? rc : VN_EXIT_OK;
}

static int image_list(int argc, char **argv, struct vn_error *err)
{
	struct vn_image **v = NULL;
	struct vn_cli_args a;
	struct vn_testbed_ctx ctx;
	size_t n = 0;
	int c, rc;

	vn_cli_args_init(&a, &image_list_cmd, argc, argv);
	while ((c = vn_cli_next(&a, err)) > 0)
		;
	if (c < 0 || vn_cli_operands(&a, 0, 0, err) < 0)
		return a.exit;
	if ((rc = vn_cli_ctx(&a, &ctx, err)) < 0)
		return rc;
	rc = vn_image_list(&ctx, &v, &n, err);
	if (rc == 0 && !n) {
		_cleanup_free_ char *dir = vn_state_images_dir(ctx.state_dir);
		printf("no images built yet in %s ('vnuma image build guest-images/NAME.json')\n", dir);
	} else if (rc == 0)
		printf("%-16s %-10s %-8s %-16s %10s %8s  %s\n", "NAME", "KIND", "ARCH", "KEY", "SIZE", "BUILD",
		       "IMAGE");
	for (size_t i = 0; i < n; i++) {
		printf("%-16s %-10s %-8s %-16.16s %6lld MiB %7.1fs  %s\n", v[i]->name, vn_image_kind_name(v[i]->kind),
		       vn_arch_name(v[i]->arch), v[i]->key, v[i]->size >> 20, v[i]->build_s, v[i]->path);
		vn_image_free(v[i]);
	}
	free(v);
	vn_testbed_ctx_clear(&ctx);
	return rc < 0 ? rc : VN_EXIT_OK;
}

static void push(char ***v, size_t *n, const char *s)
{
	*v = vn_xreallocarray(*v, *n + 2, sizeof(char *));
	(*v)[(*n)++] = vn_xstrdup(s);
	(*v)[*n] = NULL;
}

static int image_inject(int argc, char **argv, struct vn_error *err)
{
	_cleanup_strv_ char **files = NULL, **dirs = NULL;
	size_t nf = 0, nd = 0;
	struct vn_cli_args a;
	struct vn_testbed_ctx ctx;
	struct vn_disk_opts o;
	char why[1024];
	int c, rc;

	vn_cli_args_init(&a, &image_inject_cmd, argc, argv);
	while ((c = vn_cli_next(&a, err)) > 0)
		push(c == 'f' ? &files : &dirs, c == 'f' ? &nf : &nd, optarg);
	if (c < 0 || vn_cli_operands(&a, 1, 1, err) < 0)
		return a.exit;
	if (!nf && !nd)
		return vn_input_error(err, "image inject: nothing to do (give --file SRC:DST or --mkdir DIR)");
	if ((rc = vn_cli_ctx(&a, &ctx, err)) < 0)
		return rc;
	vn_testbed_disk_opts(&ctx, &o, why, sizeof(why));
	vn_testbed_ctx_clear(&ctx);
	if ((rc = vn_disk_inject(argv[optind], (const char *const *)files, (const char *const *)dirs, &o, err)) < 0)
		return rc;
	fprintf(stderr, "%s: %zu file%s written, %zu director%s made\n", argv[optind], nf, nf == 1 ? "" : "s", nd,
		nd == 1 ? "y" : "ies");
	return VN_EXIT_OK;
}

static int image_extract(int argc, char **argv, struct vn_error *err)
{
	const char *out = NULL;
	struct vn_cli_args a;
	struct vn_testbed_ctx ctx;
	struct vn_disk_opts o;
	char why[1024];
	int c, rc;

	vn_cli_args_init(&a, &image_extract_cmd, argc, argv);
	while ((c = vn_cli_next(&a, err)) > 0)
		if (c == 'o')
			out = optarg;
	if (c < 0 || vn_cli_operands(&a, 2, -1, err) < 0)
		return a.exit;
	if (!out)
		return vn_input_error(err, "image extract: -o DIR is required");
	if ((rc = vn_cli_ctx(&a, &ctx, err)) < 0)
		return rc;
	vn_testbed_disk_opts(&ctx, &o, why, sizeof(why));
	vn_testbed_ctx_clear(&ctx);
	if ((rc = vn_disk_extract(argv[optind], (const char *const *)argv + optind + 1, out, false, NULL, &o, err)) < 0)
		return rc;
	fprintf(stderr, "%s: %d path%s extracted into %s\n", argv[optind], argc - optind - 1,
		argc - optind - 1 == 1 ? "" : "s", out);
	return VN_EXIT_OK;
}

static const struct vn_cli_opt image_build_opts[] = {
	{"arch", 'X', false, "ARCH", VN_VAL_NONE,
	 "build for x86_64 (default: the host's), arm64 or ppc64le: a busybox\n"
	 "root from that architecture's Debian packages (docs/arches.md)"},
	VN_CLI_OPT_END,
};

static const struct vn_cmd image_build_cmd = {
	.name = "build",
	.fn = image_build,
	.summary = "build guest images from recipes (a cache hit is instant)",
	.synopsis = "[--state-dir DIR] [--arch ARCH] RECIPE...",
	.opts = image_build_opts,
	.common = VN_CLI_STATE_DIR,
	.operand = VN_VAL_FILE,
};

static const struct vn_cmd image_list_cmd = {
	.name = "list",
	.fn = image_list,
	.summary = "list the cached guest images: name, kind, key, size, build time",
	.synopsis = "[--state-dir DIR]",
	.common = VN_CLI_STATE_DIR,
};

static const struct vn_cli_opt inject_opts[] = {
	{"file", 'f', false, "SRC:DST", VN_VAL_FILE, "copy host file SRC to DST in the image (repeatable)"},
	{"mkdir", 'd', false, "DIR", VN_VAL_NONE, "make DIR (and its parents) in the image first (repeatable)"},
	VN_CLI_OPT_END,
};

static const struct vn_cmd image_inject_cmd = {
	.name = "inject",
	.fn = image_inject,
	.summary = "write files into a qcow2 or raw image with a Linux filesystem",
	.synopsis = "IMAGE --file SRC:DST [--file SRC:DST...] [--mkdir DIR...]",
	.opts = inject_opts,
	.common = VN_CLI_STATE_DIR,
	.operand = VN_VAL_FILE,
};

static const struct vn_cli_opt extract_opts[] = {
	{"output", 'o', true, "DIR", VN_VAL_DIR, "where the paths go, as DIR/PATH"},
	VN_CLI_OPT_END,
};

static const struct vn_cmd image_extract_cmd = {
	.name = "extract",
	.fn = image_extract,
	.summary = "copy files and trees out of a qcow2 or raw image (read only)",
	.synopsis = "IMAGE PATH... -o DIR",
	.opts = extract_opts,
	.common = VN_CLI_STATE_DIR,
	.operand = VN_VAL_FILE,
};

static const struct vn_cmd *const image_subs[] = {&image_build_cmd, &image_list_cmd, &image_inject_cmd,
						  &image_extract_cmd, NULL};

const struct vn_cmd vn_cmd_image = {
	.name = "image",
	.summary = "guest images: build from recipes, list, inject files into and extract files from disks",
	.description = "RECIPE is a file (guest-images/NAME.json) or the name of a shipped or local recipe.\n"
		       "A build is cached in STATE/cache/images under a hash of its inputs (the recipe,\n"
		       "busybox, numactl, the agent, sampler and workloads, --with packages), with its\n"
		       "build log beside it; building the same inputs again is instant.\n\n"
		       "inject and extract work on any qcow2 or raw image with a Linux filesystem\n"
		       "(found by inspection, else the first that mounts), through libguestfs's\n"
		       "appliance (one launch each, ~25 s under TCG). A path missing in the image is\n"
		       "an input error (exit 2); an appliance that cannot start exits 3.",
	.subs = image_subs,
};
