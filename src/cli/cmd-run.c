/* vnuma run: one scenario, end to end, with an exit code CI can act on. */
#include <getopt.h>
#include <stdio.h>
#include <string.h>

#include "cli/cli.h"
#include "scenario/runner.h"
#include "util/cleanup.h"

static int cmd_run(int argc, char **argv, struct vn_error *err)
{
	struct vn_run_opts ro = {0};
	struct vn_cli_args a;
	int c, rc;

	vn_cli_args_init(&a, &vn_cmd_run, argc, argv);
	while ((c = vn_cli_next(&a, err)) > 0) {
		switch (c) {
		case 'o': ro.outdir = optarg; break;
		case 'q': ro.quick = true; break;
		case 'f': ro.force = true; break;
		case 'k': ro.kernel = optarg; break;
		case 'K': ro.keep = true; break;
		}
	}
	if (c < 0 || vn_cli_operands(&a, 1, 1, err) < 0)
		return a.exit;

	_cleanup_scenario_ struct vn_scenario *s = NULL;
	struct vn_testbed_ctx ctx;
	struct vn_report rep;
	_cleanup_free_ char *dir = NULL, *path = NULL;

	if ((rc = vn_scenario_find(argv[optind], &path, err)) < 0 || (rc = vn_scenario_load(path, &s, err)) < 0 ||
	    (rc = vn_cli_ctx(&a, &ctx, err)) < 0)
		return rc;
	struct vn_cli_progress prog;
	vn_cli_progress_init(&prog);
	ro.kernel_progress = vn_cli_progress;
	ro.kernel_progress_data = &prog;
	ro.boot_progress = vn_cli_boot_progress;
	ro.boot_progress_data = &prog;
	rc = vn_scenario_run(&ctx, s, &ro, &rep, &dir, err);
	vn_cli_progress_done(&prog);
	vn_testbed_ctx_clear(&ctx);
	for (unsigned i = 0; i < rep.nverdicts; i++) {
		const struct vn_verdict *v = &rep.verdicts[i];
		printf("%s  %s\n      observed: %s\n      expected: %s\n", v->pass ? "PASS" : "FAIL", v->name,
		       v->observed ? v->observed : "", v->expected ? v->expected : "");
		if (!v->pass && v->detail)
			printf("%s%s", v->detail, v->detail[strlen(v->detail) - 1] == '\n' ? "" : "\n");
	}
	unsigned failed = vn_report_failures(&rep);
	if (rc == 0) {
		printf("%u passed, %u failed\n", rep.nverdicts - failed, failed);
		if (rep.sampling_cost)
			fprintf(stderr, "sampling cost in the guest: %s\n", rep.sampling_cost);
	}
	if (dir)
		fprintf(stderr, "results: %s/ (result.json, junit.xml)%s\n", dir, rc < 0 ? ", marked incomplete" : "");
	vn_report_clear(&rep);
	if (rc < 0)
		return rc;
	return failed ? VN_EXIT_ASSERT : VN_EXIT_OK;
}

static const struct vn_cli_opt run_opts[] = {
	{"output", 'o', true, "DIR", VN_VAL_DIR,
	 "results directory, empty or new (default results/<scenario>-<UTC time>)"},
	{"force", 'f', false, NULL, VN_VAL_NONE,
	 "use -o DIR even if it holds files (result.json is replaced first,\n"
	 "marked incomplete until this run ends)"},
	{"quick", 'q', false, NULL, VN_VAL_NONE, "scale durations and sizes down (the scenario's quick_scale) for CI"},
	{"kernel", 'k', false, "K", VN_VAL_KERNEL,
	 "boot K instead of the scenario's kernel: 'stock', a recipe NAME\n"
	 "(kernels/NAME.json, built on first use) or a bzImage path"},
	{"keep", 'K', false, NULL, VN_VAL_NONE, "leave the guest running afterwards"},
	VN_CLI_OPT_END,
};

const struct vn_cmd vn_cmd_run = {
	.name = "run",
	.fn = cmd_run,
	.summary = "run a scenario: boot, workloads, samples, assertions, result.json/junit.xml",
	.synopsis = "SCENARIO [-o DIR [--force]] [--quick] [--kernel K] [--keep] [OPTIONS]",
	.description = "SCENARIO is a file or the name of a shipped scenario (e.g. memfollow-2node).\n"
		       "Boots the scenario's topology, prepares the guest (sysctls, THP, hugetlb,\n"
		       "cgroups), runs its steps while sampling inside the guest, checks its\n"
		       "assertions and writes the results directory: result.json, junit.xml,\n"
		       "samples.jsonl, console.log, before/ and after/ snapshots, steps/.\n"
		       "\n"
		       "Exit: 0 all assertions held, 1 an assertion failed, 2 bad scenario,\n"
		       "3 infrastructure (boot, timeout, interrupted; the result is marked incomplete).",
	.opts = run_opts,
	.common = VN_CLI_GUEST,
	.operand = VN_VAL_SCENARIO,
};
