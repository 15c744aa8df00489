/* The ops a real bisection uses: kernel/ builds the commit from the recipe, scenario/ runs it. */
#pragma once

#include "bisect/bisect.h"
#include "kernel/build.h"
#include "kernel/recipe.h"
#include "scenario/runner.h"

struct vn_bisect_backend {
	const struct vn_testbed_ctx *ctx;
	struct vn_scenario *scenario;
	const struct vn_recipe *recipe;    /* its config and patches; its tree the repository (a git tree) */
	struct vn_kernel_build_opts build; /* rev: set per commit */
	struct vn_run_opts run;            /* outdir, kernel: set per run */
	const char *metric;                /* NULL: by verdict */
	void (*say)(void *data, const char *line);
	void *say_data;
};

/* ops calling into be (which must outlive them). */
void vn_bisect_backend_ops(struct vn_bisect_backend *be, struct vn_bisect_ops *ops);
