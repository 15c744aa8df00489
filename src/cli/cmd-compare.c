/* vnuma compare: result groups and run directories side by side, kernel-test-robot style. */
#include <getopt.h>
#include <stdio.h>

#include "cli/args.h"
#include "cli/cli.h"
#include "compare/compare.h"
#include "util/cleanup.h"

static int cmd_compare(int argc, char **argv, struct vn_error *err)
{
	struct vn_compare_opts o = {0};
	struct vn_cli_args a;
	bool json = false, all = false;
	int c, rc;

	vn_cli_args_init(&a, &vn_cmd_compare, argc, argv);
	while ((c = vn_cli_next(&a, err)) > 0) {
		switch (c) {
		case 'j': json = true; break;
		case 'a': all = true; break;
		case 'f': o.force = true; break;
		}
	}
	if (c < 0 || vn_cli_operands(&a, 1, -1, err) < 0)
		return a.exit;

	_cleanup_compare_ struct vn_compare *cmp = NULL;
	if ((rc = vn_compare_load((const char *const *)argv + optind, (size_t)(argc - optind), &o, &cmp, err)) < 0)
		return rc;
	_cleanup_free_ char *out =
		json ? vn_compare_format_json(cmp) : vn_compare_format_text(cmp, all ? VN_COMPARE_ALL : 0);
	fputs(out, stdout);
	return VN_EXIT_OK;
}

static const struct vn_cli_opt compare_opts[] = {
	{"json", 'j', false, NULL, VN_VAL_NONE,
	 "one JSON object: {scenario, topology, accelerator, base, variants,\n"
	 "rows: [{metric, significant, variants: [{name, n, mean, stddev,\n"
	 "change_pct, change_abs, p_value, significant}]}], notes}, every row"},
	{"all", 'a', false, NULL, VN_VAL_NONE, "also the rows where every variant's mean equals the base's"},
	{"force", 'f', false, NULL, VN_VAL_NONE,
	 "compare results of different topologies, accelerators or times\n(real and virtual)"},
	VN_CLI_OPT_END,
};

const struct vn_cmd vn_cmd_compare = {
	.name = "compare",
	.fn = cmd_compare,
	.summary = "kernel-test-robot style table of result groups and runs: mean, stddev, %change, Welch",
	.synopsis = "GROUP [--json] [--all] [--force]\nDIR_A DIR_B... [--json] [--all] [--force]",
	.description =
		"Reads a result group (GROUP/group.json and its runs) or two or more run\n"
		"directories or groups (docs/results.md); each adds its variants in order and\n"
		"the first is the base. One row per metric: each variant's mean and sample\n"
		"stddev over its complete runs (runs with \"complete\": false are skipped, and\n"
		"the header says so), its change against the base (in points for metrics\n"
		"that are percentages) and Welch's two-sided t-test; rows with p < 0.05 are\n"
		"marked '*' and come first, largest change first. Rows where no variant's\n"
		"mean differs from the base's are hidden unless --all.\n"
		"\n"
		"The groups of a matrix's slices (vnuma run --shard I/N, docs/ci.md) are\n"
		"merged into the matrix's one group: every slice once, of one matrix, or\n"
		"it is bad input naming the directories.\n"
		"\n"
		"Results of different topologies, accelerators or times (real, virtual)\nare refused unless --force.\n"
		"Exit 0 when the table was printed, 2 on bad input (FILE: $.json.path: message).",
	.opts = compare_opts,
	.operand = VN_VAL_DIR,
};
