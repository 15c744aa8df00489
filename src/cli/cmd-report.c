/* vnuma report: a run directory or a result group drawn as one self-contained HTML file. */
#include <getopt.h>
#include <stdio.h>

#include "cli/args.h"
#include "cli/cli.h"
#include "compare/compare.h"
#include "util/alloc.h"
#include "util/cleanup.h"

static int cmd_report(int argc, char **argv, struct vn_error *err)
{
	struct vn_cli_args a;
	const char *out = NULL;
	int c, rc;

	vn_cli_args_init(&a, &vn_cmd_report, argc, argv);
	while ((c = vn_cli_next(&a, err)) > 0)
		out = optarg; /* -o, the one option */
	if (c < 0 || vn_cli_operands(&a, 1, -1, err) < 0)
		return a.exit;
	const char *const *dirs = (const char *const *)argv + optind;
	size_t n = (size_t)(argc - optind);
	_cleanup_free_ char *def = out ? NULL : vn_xasprintf("%s/report.html", dirs[0]);
	if ((rc = vn_compare_html_write_dirs(dirs, n, out, NULL, err)) < 0)
		return rc;
	fprintf(stderr, "report written to %s\n", out ? out : def);
	return VN_EXIT_OK;
}

static const struct vn_cli_opt report_opts[] = {
	{"output", 'o', true, "FILE", VN_VAL_FILE, "where to write it (default DIR/report.html)"},
	VN_CLI_OPT_END,
};

const struct vn_cmd vn_cmd_report = {
	.name = "report",
	.fn = cmd_report,
	.summary = "draw a run or a result group as one self-contained HTML file",
	.synopsis = "DIR [-o FILE] | SLICE... -o FILE",
	.description = "DIR is a run directory (result.json) or a result group (group.json). For a run:\n"
		       "the verdicts, the kernel's distance matrix and fallback lists, and from\n"
		       "samples.jsonl each workload process's memory per node, migrations and hint\n"
		       "faults, and running threads per node over time. For a group: compare.json's\n"
		       "table and per metric each variant's repeats, with links to the runs' reports.\n"
		       "One file, inline CSS and SVG, no scripts, nothing fetched. A DIR that is\n"
		       "neither is bad input (exit 2). Several SLICEs (vnuma run --shard I/N -o SLICE)\n"
		       "are merged into one group's page as vnuma compare merges them, its links\n"
		       "relative to FILE; slices of different matrices, or missing or given twice,\n"
		       "are refused (exit 2).",
	.opts = report_opts,
	.operand = VN_VAL_DIR,
};
