/* vnuma run: one scenario, end to end, with an exit code CI can act on. */
#include <getopt.h>
#include <stdio.h>
#include <string.h>

#include "cli/cli.h"
#include "scenario/runner.h"
#include "util/cleanup.h"

static void run_usage(FILE *out)
{
	fprintf(out,
		"usage: vnuma run SCENARIO.json [-o DIR] [--force] [--quick] [--kernel K] [--keep]\n"
		"                [--connect URI] [--state-dir DIR]\n\n"
		"Boots the scenario's topology, prepares the guest (sysctls, THP, hugetlb,\n"
		"cgroups), runs its steps while sampling inside the guest, checks its\n"
		"assertions and writes results/<scenario>-<UTC time>/ (or -o DIR): result.json,\n"
		"junit.xml, samples.jsonl, console.log, before/ and after/ snapshots, steps/.\n\n"
		"  -o DIR       results directory; it must be empty or new\n"
		"  --force      use -o DIR even if it holds files (result.json is replaced first,\n"
		"               marked incomplete until this run ends)\n"
		"  --quick      scale durations and sizes down (the scenario's quick_scale) for CI\n"
		"  --kernel K   boot K instead of the scenario's kernel: 'stock', a recipe NAME\n"
		"               (kernels/NAME.json, built on first use) or a bzImage path\n"
		"  --keep       leave the guest running afterwards\n\n"
		"Exit: 0 all assertions held, 1 an assertion failed, 2 bad scenario,\n"
		"3 infrastructure (boot, timeout, interrupted; the result is marked incomplete).\n");
}

int cmd_run(int argc, char **argv, struct vn_error *err)
{
	static const struct option opts[] = {
		{"output", required_argument, NULL, 'o'}, {"quick", no_argument, NULL, 'q'},
		{"force", no_argument, NULL, 'f'},
		{"kernel", required_argument, NULL, 'k'}, {"keep", no_argument, NULL, 'K'},
		{"connect", required_argument, NULL, 'C'}, {"state-dir", required_argument, NULL, 'S'},
		{"help", no_argument, NULL, 'h'},	  {NULL, 0, NULL, 0},
	};
	struct vn_run_opts ro = {0};
	struct vn_cli_common co = {0};
	int c, rc;

	optind = 1;
	while ((c = getopt_long(argc, argv, "o:h", opts, NULL)) != -1) {
		if (vn_cli_common_opt(c, optarg, &co))
			continue;
		switch (c) {
		case 'o': ro.outdir = optarg; break;
		case 'q': ro.quick = true; break;
		case 'f': ro.force = true; break;
		case 'k': ro.kernel = optarg; break;
		case 'K': ro.keep = true; break;
		case 'h': run_usage(stdout); return VN_EXIT_OK;
		default: run_usage(stderr); return VN_EXIT_INPUT;
		}
	}
	if (optind != argc - 1) {
		run_usage(stderr);
		return VN_EXIT_INPUT;
	}

	_cleanup_scenario_ struct vn_scenario *s = NULL;
	struct vn_testbed_ctx ctx;
	struct vn_report rep;
	_cleanup_free_ char *dir = NULL;

	if ((rc = vn_scenario_load(argv[optind], &s, err)) < 0 || (rc = vn_cli_ctx(&co, &ctx, err)) < 0)
		return rc;
	struct vn_cli_progress prog;
	vn_cli_progress_init(&prog);
	ro.kernel_progress = vn_cli_progress;
	ro.kernel_progress_data = &prog;
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
