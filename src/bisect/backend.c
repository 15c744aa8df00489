/*
 * The real ops: a commit is built by kernel/ in its shared build tree (so a
 * step recompiles what changed), and run by scenario/ exactly as `vnuma run`
 * runs it, into the bisection's own directories.
 */
#include "bisect/backend.h"

#include <math.h>
#include <string.h>

#include "report/report.h"
#include "util/alloc.h"
#include "util/cleanup.h"

static int be_build(void *data, const char *commit, char **kernel, double *build_s, struct vn_error *err)
{
	struct vn_bisect_backend *be = data;
	struct vn_kernel_build_opts o = be->build;
	_cleanup_kernel_built_ struct vn_kernel_built *k = NULL;
	int rc;

	o.rev = commit;
	if ((rc = vn_kernel_build(be->recipe, &o, &k, err)) < 0)
		return rc;
	*kernel = vn_xstrdup(k->image);
	*build_s = k->cached ? 0 : k->build_s;
	return 0;
}

static int be_run(void *data, const struct vn_bisect_run_in *in, struct vn_bisect_run_out *out, struct vn_error *err)
{
	struct vn_bisect_backend *be = data;
	struct vn_run_opts ro = be->run;
	struct vn_result_run rep;
	_cleanup_free_ char *dir = NULL;

	ro.outdir = in->dir;
	ro.kernel = in->kernel;
	ro.variant = in->variant;
	ro.repeat = in->repeat;
	int rc = vn_scenario_run(be->ctx, be->scenario, &ro, &rep, &dir, err);
	if (rc == 0) {
		out->exit = vn_result_failures(&rep) ? 1 : 0;
		out->value = NAN;
		for (unsigned i = 0; be->metric && i < rep.nmetrics; i++)
			if (strcmp(rep.metrics[i].name, be->metric) == 0)
				out->value = rep.metrics[i].value;
		out->topology = vn_xstrdup_or_null(rep.topology);
		out->accel = vn_xstrdup_or_null(rep.accel);
	}
	vn_result_clear(&rep);
	return rc;
}

static void be_say(void *data, const char *line)
{
	struct vn_bisect_backend *be = data;
	if (be->say)
		be->say(be->say_data, line);
}

void vn_bisect_backend_ops(struct vn_bisect_backend *be, struct vn_bisect_ops *ops)
{
	*ops = (struct vn_bisect_ops){.build = be_build, .run = be_run, .say = be_say, .data = be};
}
