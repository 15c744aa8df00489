/* vnuma bisect: the first commit of a kernel tree where a scenario's verdict, or a metric, turns bad. */
#include <getopt.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "bisect/backend.h"
#include "cli/args.h"
#include "cli/cli.h"
#include "cli/progress.h"
#include "kernel/recipe.h"
#include "util/alloc.h"
#include "util/arch.h"
#include "util/cleanup.h"
#include "util/state.h"

struct say {
	struct vn_cli_progress *p;
};

static void bisect_say(void *data, const char *line)
{
	struct say *s = data;
	char ts[16];
	time_t now = time(NULL);
	struct tm tm;

	vn_cli_progress_done(s->p);
	strftime(ts, sizeof(ts), "%H:%M:%S", localtime_r(&now, &tm));
	fprintf(stderr, "%s bisect: %s\n", ts, line);
}

/* The recipe's config and patches over the repository: its tree becomes the repo. */
static int load_recipe(const char *spec, const char *repo, struct vn_recipe **out, struct vn_error *err)
{
	_cleanup_free_ char *path = NULL;
	_cleanup_strbuf_ struct vn_strbuf tried = VN_STRBUF_INIT;
	_cleanup_recipe_ struct vn_recipe *r = NULL;
	int rc;

	if ((rc = vn_recipe_find(spec, &path, &tried)) < 0)
		return rc;
	if (rc == 0)
		return vn_input_error(err, "--recipe %s: no such recipe (not a file, nor in %s)", spec,
				      tried.s ? tried.s : "any recipe dir");
	if ((rc = vn_recipe_load(path, &r, err)) < 0 || (rc = vn_recipe_use_repo(r, repo, err)) < 0)
		return rc;
	*out = steal_pointer(&r);
	return 0;
}

struct bisect_args {
	struct vn_cli_args a;
	const char *repo, *good, *bad, *recipe, *outdir;
	struct vn_bisect_opts bo;
	uint64_t jobs;
	bool quick, vtime;
};

/* 0 to go on; 1 when the command ends here with ba->a.exit (after --help, or a bad option); or an input error. */
static int parse_argv(int argc, char **argv, struct bisect_args *ba, struct vn_error *err)
{
	struct vn_cli_args *a = &ba->a;
	struct vn_bisect_policy *p = &ba->bo.policy;
	bool repeats_given = false;
	uint64_t n = 0;
	int c;

	ba->recipe = "minimal-numa";
	vn_bisect_policy_default(p);
	vn_cli_args_init(a, &vn_cmd_bisect, argc, argv);
	while ((c = vn_cli_next(a, err)) > 0) {
		switch (c) {
		case 'o': ba->outdir = optarg; break;
		case 'R': ba->repo = optarg; break;
		case 'G': ba->good = optarg; break;
		case 'B': ba->bad = optarg; break;
		case 'E': ba->recipe = optarg; break;
		case 'M': p->metric = optarg; break;
		case 'P': ba->bo.replay = optarg; break;
		case 'q': ba->quick = true; break;
		case 'V': ba->vtime = true; break;
		case 'r':
			if (vn_cli_count(a, "repeats", optarg, 2, VN_BISECT_RUNS_MAX, &n, err) < 0)
				return a->exit;
			p->repeats = (unsigned)n;
			repeats_given = true;
			break;
		case 'F':
			if (vn_cli_count(a, "flaky", optarg, 1, VN_BISECT_RUNS_MAX, &n, err) < 0)
				return a->exit;
			p->flaky = (unsigned)n;
			break;
		case 'j':
			if (vn_cli_count(a, "jobs", optarg, 1, 1024, &ba->jobs, err) < 0)
				return a->exit;
			break;
		}
	}
	if (c < 0 || vn_cli_operands(a, 1, 1, err) < 0)
		return a->exit < 0 ? a->exit : 1;
	if (!ba->repo || !ba->good || !ba->bad)
		return vn_input_error(err, "bisect needs --repo DIR, --good REV and --bad REV");
	if (repeats_given && !p->metric)
		return vn_input_error(err, "--repeats is for --metric; by verdict, --flaky N runs a commit N times");
	if (p->metric && p->flaky > 1)
		return vn_input_error(err, "--flaky is for verdicts; by --metric, --repeats N runs a commit N times");
	if (p->repeats > p->repeats_max)
		p->repeats_max = p->repeats;
	return 0;
}

/* The bisection's table, verdict and candidates on stdout, where it is on stderr; the exit code its outcome says. */
static int report(const struct vn_bisect_result *res, const struct vn_bisect_policy *policy, const char *outdir, int rc,
		  struct vn_error *err)
{
	if (res->ncommits) {
		_cleanup_free_ char *table = vn_bisect_format_table(res, policy);
		fputs(table, stdout);
	}
	if (res->message)
		printf("%s\n", res->message);
	for (size_t i = 0; res->outcome == VN_BISECT_AMBIGUOUS && i < res->ncandidates; i++)
		printf("  %s\n", res->candidates[i]);
	if (res->ncommits)
		fprintf(stderr, "bisection: %s/ (bisect.log, bisect.txt, bisect.json, report.html, commits/)\n",
			outdir);
	if (rc < 0)
		return rc;
	switch (res->outcome) {
	case VN_BISECT_FOUND: return VN_EXIT_OK;
	case VN_BISECT_NO_DIFFERENCE:
	case VN_BISECT_NOT_ANCESTOR: return VN_EXIT_ASSERT;
	case VN_BISECT_AMBIGUOUS:
	default:
		return vn_infra_error(err, -EIO,
				      "skipped commits (unbuildable, or could not be judged) hide the first "
				      "bad commit: see %s/bisect.txt",
				      outdir);
	}
}

/* What the start record says of this bisection (docs/bisect.md), and where it goes. */
static void bisect_opts_fill(struct bisect_args *ba, const struct vn_scenario *s, const char *spath,
			     const struct vn_recipe *r, const char *outdir, enum vn_arch arch)
{
	struct vn_bisect_opts *bo = &ba->bo;

	bo->repo = r->tree_path;
	bo->good = ba->good;
	bo->bad = ba->bad;
	bo->outdir = outdir;
	bo->scenario = spath;
	bo->scenario_name = s->name;
	bo->recipe = r->path;
	bo->quick = ba->quick;
	bo->virtual_time = ba->vtime;
	bo->arch = vn_arch_name(arch);
}

/* The scenario arg bisected as ba asks, over ba's repository and recipe. */
static int run(struct bisect_args *ba, const char *arg, struct vn_error *err)
{
	struct vn_bisect_opts *bo = &ba->bo;
	_cleanup_scenario_ struct vn_scenario *s = NULL;
	_cleanup_recipe_ struct vn_recipe *r = NULL;
	_cleanup_free_ char *spath = NULL, *state = NULL, *cache = NULL, *defdir = NULL;
	struct vn_testbed_ctx ctx;
	const char *outdir;
	int rc;

	if ((rc = vn_scenario_find(arg, &spath, err)) < 0 || (rc = vn_scenario_load(spath, &s, err)) < 0 ||
	    (rc = vn_scenario_check(s, NULL, NULL, err)) < 0 || (rc = load_recipe(ba->recipe, ba->repo, &r, err)) < 0)
		return rc;
	if ((rc = vn_state_locate(ba->a.state_dir, &state, err)) < 0)
		return rc;
	cache = vn_state_kernels_dir(state);
	enum vn_arch arch = vn_arch_host();
	if (s->arch && (rc = vn_arch_parse(s->arch, "the scenario's arch", &arch, err)) < 0)
		return rc;
	outdir = ba->outdir ? ba->outdir : (defdir = vn_xasprintf("results/bisect-%s", s->name));
	if ((rc = vn_cli_ctx(&ba->a, &ctx, err)) < 0)
		return rc;
	/* Before any kernel is built: each commit's run would refuse it only then. */
	if ((rc = vn_scenario_check_hosts(s, false, ctx.uri, NULL, 0, err)) < 0) {
		vn_testbed_ctx_clear(&ctx);
		return rc;
	}

	struct vn_cli_progress prog;
	vn_cli_progress_init(&prog);
	struct say sd = {&prog};
	struct vn_bisect_backend be = {
		.ctx = &ctx,
		.scenario = s,
		.recipe = r,
		.build = {.cache_dir = cache,
			  .jobs = (int)ba->jobs,
			  .arch = arch,
			  .progress = vn_cli_progress,
			  .progress_data = &prog},
		.run = {.quick = ba->quick, .virtual_time = ba->vtime, .progress = vn_cli_progress_up(&prog)},
		.metric = bo->policy.metric,
		.say = bisect_say,
		.say_data = &sd,
	};
	/* One run per kernel saves nothing worth restoring: boot cold and keep no snapshot. */
	be.run.cold = !bo->policy.metric && bo->policy.flaky == 1;
	struct vn_bisect_ops ops;
	vn_bisect_backend_ops(&be, &ops);
	bisect_opts_fill(ba, s, spath, r, outdir, arch);

	struct vn_bisect_result res;
	rc = vn_bisect(bo, &ops, &res, err);
	vn_cli_progress_done(&prog);
	vn_testbed_ctx_clear(&ctx);
	rc = report(&res, &bo->policy, outdir, rc, err);
	vn_bisect_result_clear(&res);
	return rc;
}

static int cmd_bisect(int argc, char **argv, struct vn_error *err)
{
	struct bisect_args ba = {0};
	int rc = parse_argv(argc, argv, &ba, err);

	if (rc != 0)
		return rc > 0 ? ba.a.exit : rc;
	return run(&ba, argv[optind], err);
}

static const struct vn_cli_opt bisect_opts[] = {
	{"repo", 'R', false, "DIR", VN_VAL_DIR,
	 "the kernel's git tree; only read: builds use a clone sharing\n"
	 "its objects, in vnuma's kernel cache"},
	{"good", 'G', false, "REV", VN_VAL_NONE, "a commit where the scenario passes (or the metric is as it was)"},
	{"bad", 'B', false, "REV", VN_VAL_NONE, "a later commit where it fails (or the metric changed)"},
	{"recipe", 'E', false, "R", VN_VAL_KERNEL,
	 "the source recipe whose config and patches every commit is\n"
	 "built with (default minimal-numa; its tree is --repo)"},
	{"metric", 'M', false, "NAME", VN_VAL_NONE,
	 "judge by this metric (as compare names it), not by the verdict:\n"
	 "a commit is good or bad by which endpoint's runs it matches\n"
	 "(Welch's test, docs/bisect.md)"},
	{"repeats", 'r', false, "N", VN_VAL_NONE,
	 "with --metric: runs per commit before judging (default 3; an\n"
	 "inconclusive commit gets more, up to 8 or N)"},
	{"flaky", 'F', false, "N", VN_VAL_NONE, "by verdict: run each commit N times and take the majority"},
	{"output", 'o', true, "DIR", VN_VAL_DIR,
	 "the bisection's directory (default results/bisect-<scenario>);\n"
	 "the same DIR again goes on where it stopped (with the same\n"
	 "scenario, recipe and options: another is refused)"},
	{"replay", 'P', false, "LOG", VN_VAL_FILE,
	 "start from a bisect.log (its marks stand, edited or not) and\n"
	 "go on from there into -o DIR"},
	{"quick", 'q', false, NULL, VN_VAL_NONE, "run the scenario scaled down (its quick_scale), as run --quick"},
	{"virtual-time", 'V', false, NULL, VN_VAL_NONE, "run in virtual time, as run --virtual-time (docs/noise.md)"},
	{"jobs", 'j', false, "N", VN_VAL_NONE, "make -j for the builds (default: all CPUs)"},
	VN_CLI_OPT_END,
};

const struct vn_cmd vn_cmd_bisect = {
	.name = "bisect",
	.fn = cmd_bisect,
	.summary = "find the commit where a scenario's verdict or a metric turns bad",
	.synopsis = "SCENARIO --repo DIR --good REV --bad REV [--recipe R] [--metric NAME [--repeats N]] [--flaky N] "
		    "[-o DIR] [OPTIONS]",
	.description = "Builds commits of --repo with the recipe's config and patches (one build tree, so\n"
		       "a step recompiles what changed) and runs SCENARIO on each, as vnuma run does.\n"
		       "Checks the endpoints first, then tests the commit git picks to halve what is\n"
		       "left. A commit that does not build is skipped; one that could not run is\n"
		       "retried, then skipped. Every build, run and decision goes to DIR/bisect.log as\n"
		       "it happens: the same command again continues. At the end, DIR/bisect.txt (the\n"
		       "table printed), bisect.json and report.html (docs/bisect.md).\n"
		       "\n"
		       "Exit: 0 the first bad commit was found, 1 the endpoints do not differ (or good\n"
		       "is not an ancestor of bad), 2 bad input, 3 infrastructure, or skipped commits\n"
		       "hide which commit is the first bad one.",
	.opts = bisect_opts,
	.common = VN_CLI_GUEST,
	.operand = VN_VAL_SCENARIO,
};
