/* vnuma run: one scenario, end to end, with an exit code CI can act on. */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "cli/args.h"
#include "cli/cli.h"
#include "cli/kselftest.h"
#include "cli/progress.h"
#include "compare/compare.h"
#include "scenario/runner.h"
#include "testbed/hosts.h"
#include "util/alloc.h"
#include "util/arch.h"
#include "util/cleanup.h"
#include "util/parse.h"

#define MAX_KERNELS 16

/* The matrix's progress: on a TTY the boot status line gets a "run k/n" prefix; elsewhere timestamped lines. */
struct matrix_progress {
	struct vn_cli_progress *p;
};

static void stamp(char *buf, size_t n)
{
	time_t now = time(NULL);
	struct tm tm;

	strftime(buf, n, "%H:%M:%S", localtime_r(&now, &tm));
}

static void run_start(void *data, unsigned k, unsigned n, const char *variant, unsigned repeat, double elapsed)
{
	struct matrix_progress *m = data;
	char eta[32] = "?", ts[16];

	if (k)
		snprintf(eta, sizeof(eta), "%.0f s", elapsed / k * (n - k));
	snprintf(m->p->prefix, sizeof(m->p->prefix), "run %u/%u %s#%u, %.0f s, ~%s left: ", k + 1, n, variant, repeat,
		 elapsed, eta);
	if (!m->p->tty) {
		stamp(ts, sizeof(ts));
		fprintf(stderr, "%s run %u/%u: %s repeat %u (%.0f s elapsed, about %s left)\n", ts, k + 1, n, variant,
			repeat, elapsed, eta);
	}
}

static void run_done(void *data, unsigned k, unsigned n, const char *dir, int exit, const struct vn_result_run *rep,
		     const char *error)
{
	struct matrix_progress *m = data;
	static const char *const what[] = {"passed", "an assertion failed", "bad input", "could not run"};
	char ts[16];

	vn_cli_progress_done(m->p);
	stamp(ts, sizeof(ts));
	fprintf(stderr, "%s run %u/%u: %s: %s%s%s\n", ts, k + 1, n, dir, what[exit & 3], error ? ": " : "",
		error ? error : "");
	(void)rep;
}

/* One block per verdict on stdout, a failed one's detail after it: a run's, or a group's. */
static void print_verdicts(const struct vn_result_run *r)
{
	for (unsigned i = 0; i < r->nverdicts; i++) {
		const struct vn_verdict *v = &r->verdicts[i];
		printf("%s  %s\n      observed: %s\n      expected: %s\n",
		       v->pass        ? "PASS"
		       : v->undecided ? "NOISY"
				      : "FAIL",
		       v->name, v->observed ? v->observed : "", v->expected ? v->expected : "");
		if (!v->pass && v->detail && *v->detail)
			printf("%s%s", v->detail, v->detail[strlen(v->detail) - 1] == '\n' ? "" : "\n");
	}
}

static int run_matrix(const struct vn_testbed_ctx *ctx, struct vn_scenario *s, struct vn_matrix_opts *mo,
		      struct vn_cli_progress *prog, struct vn_error *err)
{
	struct matrix_progress mp = {prog};
	struct vn_matrix_result res;
	_cleanup_free_ char *dir = NULL;

	mo->run_start = run_start;
	mo->run_done = run_done;
	mo->run_start_data = &mp;
	int rc = vn_scenario_run_matrix(ctx, s, mo, &res, &dir, err);
	prog->prefix[0] = '\0';
	bool virtual_time = false;
	if (res.compare) {
		_cleanup_free_ char *table = vn_compare_format_text(res.compare, 0);
		fputs(table, stdout);
		virtual_time = vn_compare_virtual_time(res.compare);
		vn_compare_free(res.compare);
	}
	print_verdicts(&res.verdicts);
	unsigned group_failed = vn_result_failures(&res.verdicts), noisy = vn_result_undecided(&res.verdicts);
	vn_result_clear(&res.verdicts);
	if (res.compare_error[0])
		fprintf(stderr, "warning: %s\n", res.compare_error);
	if (dir)
		fprintf(stderr, "result %s: %s/ (%s; %u runs, %u with a failed assertion, %u could not run)\n",
			mo->shard.count ? "slice" : "group", dir, res.files ? res.files : "group.json", res.runs,
			res.failed, res.broken);
	if (rc < 0)
		return rc;
	if (res.broken)
		return vn_infra_error(err, -EIO, "%u of %u runs could not run; the first: %s", res.broken, res.runs,
				      res.first_error);
	if (res.failed || group_failed)
		return VN_EXIT_ASSERT;
	/* Not seeing is no verdict on the kernel: the setup failed to observe (exit 3). */
	if (noisy)
		return vn_infra_error(err, -ERANGE,
				      "%u change assertion%s too noisy to tell: the group cannot show a change of the "
				      "bound's size (more repeats, --repeats auto%s; docs/noise.md)",
				      noisy, noisy == 1 ? " is" : "s are",
				      virtual_time ? ""
						   : ", or --virtual-time where placement does not decide the rate");
	return VN_EXIT_OK;
}

/* What the command line asks of a run, parsed. */
struct run_args {
	struct vn_cli_args a;
	struct vn_run_opts ro;
	const char *kernels[MAX_KERNELS];
	unsigned nkernels;
	uint64_t repeats;
	bool repeats_auto;
	struct vn_shard shard;
	const char *hosts_file;
	const char *arch; /* --arch, in place of the scenario's */
	char **with;
	size_t nwith;
	char **share, **files; /* --share, --file: after the scenario's own */
	size_t nshare, nfiles;
	const char *ltp; /* --ltp DIR */
	bool kselftest;  /* --kselftest */
};

/* --ltp DIR: LTP's install (its testcases/bin), made absolute and free of symlinks for the share spec. */
static int ltp_dir(const char *dir, char **out, struct vn_error *err)
{
	_cleanup_free_ char *abs = realpath(dir, NULL);
	_cleanup_free_ char *bin = abs ? vn_xasprintf("%s/testcases/bin", abs) : NULL;
	struct stat st;

	if (!abs || stat(bin, &st) < 0 || !S_ISDIR(st.st_mode))
		return vn_input_error(err,
				      "--ltp %s: no testcases/bin there: give LTP's install directory (make install's "
				      "prefix, e.g. /opt/ltp; docs/suites.md, \"Building LTP\")",
				      dir);
	if (strchr(abs, ':'))
		return vn_input_error(err, "--ltp %s: a directory whose path holds ':' cannot be shared", abs);
	*out = steal_pointer(&abs);
	return 0;
}

/*
 * --kselftest: the tests the scenario runs from /opt/kselftest, built from
 * the run's kernel's tree for its arch (or found in the cache), shared there.
 */
static int kselftest_share(const struct run_args *ra, const struct vn_scenario *s, char ***share, struct vn_error *err)
{
	_cleanup_selftests_ struct vn_selftests *t = NULL;
	_cleanup_free_ char *tests = vn_scenario_kselftests(s);
	const char *kernel = ra->nkernels ? ra->kernels[0] : s->kernel, *arch_name = ra->arch ? ra->arch : s->arch;
	enum vn_arch arch = vn_arch_host();
	size_t n = 0;
	int rc;

	if (ra->nkernels > 1)
		return vn_input_error(err, "--kselftest builds one kernel's tests: give one --kernel, or share each "
					   "kernel's ('vnuma kernel selftests --kernel K') in a run of its own");
	if ((arch_name && (rc = vn_arch_parse(arch_name, "arch", &arch, err)) < 0) ||
	    (rc = vn_cli_kselftest(ra->a.state_dir, kernel, arch, tests, 0, &t, err)) < 0)
		return rc;
	fprintf(stderr, "kselftest: %s%s, shared at %s\n", t->dir, t->cached ? " (cached)" : "",
		VN_SCN_KSELFTEST_GUEST_DIR);
	_cleanup_free_ char *spec = vn_xasprintf("%s:%s", t->dir, VN_SCN_KSELFTEST_GUEST_DIR);
	while (*share && (*share)[n])
		n++;
	vn_strv_push(share, &n, spec);
	return 0;
}

/* The command line's --share/--file specs, relative to the working directory, made absolute (NULL: none). */
static char **abs_specs(char *const *specs)
{
	_cleanup_free_ char *cwd = getcwd(NULL, 0);
	char **to = NULL;
	size_t n = 0;

	for (char *const *p = specs; p && *p; p++) {
		_cleanup_free_ char *abs = **p == '/' || !cwd ? vn_xstrdup(*p) : vn_xasprintf("%s/%s", cwd, *p);
		vn_strv_push(&to, &n, abs);
	}
	return to;
}

/* 0 to go on; 1 when the command ends here with ra->a.exit (after --help, or a bad option); or an input error. */
static int parse_argv(int argc, char **argv, struct run_args *ra, struct vn_error *err)
{
	struct vn_cli_args *a = &ra->a;
	struct vn_run_opts *ro = &ra->ro;
	enum vn_arch parsed;
	int c, rc;

	vn_cli_args_init(a, &vn_cmd_run, argc, argv);
	while ((c = vn_cli_next(a, err)) > 0) {
		switch (c) {
		case 'o': ro->outdir = optarg; break;
		case 'q': ro->quick = true; break;
		case 'f': ro->force = true; break;
		case 'V': ro->virtual_time = true; break;
		case 'k':
			if (ra->nkernels == MAX_KERNELS)
				return vn_cli_bad_arg(a, "kernel", "is one too many (16 at most)", err);
			ra->kernels[ra->nkernels++] = optarg;
			break;
		case 'K': ro->keep = true; break;
		case 'J':
			if (strcmp(optarg, "panic") == 0 || strcmp(optarg, "fail") == 0)
				ro->dump_on = optarg[0] == 'p' ? VN_DUMP_ON_PANIC : VN_DUMP_ON_FAIL;
			else
				return vn_cli_bad_arg(a, "dump-on", "is neither 'panic' nor 'fail'", err);
			break;
		case 'c': ro->cold = true; break;
		case 'N':
			if (vn_cli_node_memory(a, optarg, &ro->node_memory, err) < 0)
				return a->exit;
			break;
		case 'L': ro->locality = true; break;
		case 'W': vn_cli_with(optarg, &ra->with, &ra->nwith); break;
		case 'D': vn_strv_push(&ra->share, &ra->nshare, optarg); break;
		case 'F': vn_strv_push(&ra->files, &ra->nfiles, optarg); break;
		case 'P': ra->ltp = optarg; break;
		case 'T': ra->kselftest = true; break;
		case 'H': ra->hosts_file = optarg; break;
		case 'I':
			if ((rc = vn_shard_parse(optarg, &ra->shard, err)) < 0)
				return rc;
			break;
		case 'X':
			if ((rc = vn_arch_parse(optarg, "--arch", &parsed, err)) < 0)
				return rc;
			ra->arch = vn_arch_name(parsed);
			break;
		case 'r':
			if (strcmp(optarg, "auto") == 0)
				ra->repeats_auto = true;
			else if (vn_cli_count(a, "repeats", optarg, 1, VN_SCN_REPEATS_MAX, &ra->repeats, err) < 0)
				return a->exit;
			break;
		}
	}
	if (c < 0 || vn_cli_operands(a, 1, 1, err) < 0)
		return a->exit < 0 ? a->exit : 1;
	return 0;
}

/* One run: its verdicts and tally on stdout, where its results are on stderr. */
static int run_one(const struct vn_testbed_ctx *ctx, struct vn_scenario *s, struct vn_run_opts *ro,
		   struct vn_cli_progress *prog, struct vn_error *err)
{
	_cleanup_free_ char *dir = NULL;
	struct vn_result_run rep;
	int rc = vn_scenario_run(ctx, s, ro, &rep, &dir, err);

	vn_cli_progress_done(prog);
	print_verdicts(&rep);
	unsigned failed = vn_result_failures(&rep);
	if (rc == 0) {
		printf("%u passed, %u failed\n", rep.nverdicts - failed, failed);
		if (rep.sampling_cost)
			fprintf(stderr, "sampling cost in the guest: %s\n", rep.sampling_cost);
	}
	if (dir)
		fprintf(stderr, "results: %s/ (result.json, junit.xml)%s\n", dir, rc < 0 ? ", marked incomplete" : "");
	vn_result_clear(&rep);
	if (rc < 0)
		return rc;
	return failed ? VN_EXIT_ASSERT : VN_EXIT_OK;
}

/* The scenario at path, as ra asks: one run, or a matrix (variants, kernels, repeats, hosts). */
static int run(struct run_args *ra, const char *arg, struct vn_error *err)
{
	_cleanup_(vn_testbed_hosts_clear) struct vn_hosts hosts = {0};
	_cleanup_scenario_ struct vn_scenario *parsed = NULL;
	_cleanup_free_ char *path = NULL;
	struct vn_testbed_ctx ctx;
	int rc;

	if ((rc = vn_scenario_find(arg, &path, err)) < 0 || (rc = vn_scenario_load(path, &parsed, err)) < 0 ||
	    (rc = vn_cli_ctx(&ra->a, &ctx, err)) < 0)
		return rc;
	/* --arch, --locality, --share and --file over a copy: the parsed scenario stays as its file says. */
	_cleanup_strv_ char **share = abs_specs(ra->share), **files = abs_specs(ra->files);
	_cleanup_free_ char *ltp = NULL;
	if ((ra->ltp && (rc = ltp_dir(ra->ltp, &ltp, err)) < 0) ||
	    (ra->kselftest && (rc = kselftest_share(ra, parsed, &share, err)) < 0))
		return rc;
	const struct vn_scn_overrides over = {
		.arch = ra->arch, .locality = ra->ro.locality, .share = share, .files = files, .ltp = ltp};
	_cleanup_scenario_ struct vn_scenario *s = vn_scenario_override(parsed, &over);
	if ((rc = vn_scenario_check_ltp(s, err)) < 0 || (rc = vn_scenario_check_kselftest(s, err)) < 0)
		return rc;
	struct vn_cli_progress prog;
	vn_cli_progress_init(&prog);
	ra->ro.progress = vn_cli_progress_up(&prog);
	ra->ro.with = (const char *const *)ra->with;
	struct vn_matrix_opts mo = {.run = ra->ro,
				    .kernels = ra->kernels,
				    .nkernels = ra->nkernels,
				    .repeats = (unsigned)ra->repeats,
				    .repeats_auto = ra->repeats_auto,
				    .shard = ra->shard,
				    .over = over};
	/* --hosts FILE, or --connect given more than once: the matrix spreads over those hosts. */
	if (ra->hosts_file && (rc = vn_testbed_hosts_load(ra->hosts_file, &hosts, err)) < 0)
		return rc;
	for (unsigned i = 0; (ra->hosts_file || ra->a.nuris > 1) && i < ra->a.nuris; i++)
		if ((rc = vn_testbed_hosts_add(&hosts, ra->a.uris[i], err)) < 0)
			return rc; /* its message starts with --connect */
	mo.hosts = hosts.v;
	mo.nhosts = (unsigned)hosts.n;
	if ((rc = vn_scenario_check_hosts(s, false, ctx.uri, mo.hosts, mo.nhosts, err)) < 0)
		return rc;
	if (mo.shard.count && !vn_scenario_is_matrix(s, &mo))
		return vn_input_error(err,
				      "--shard %u/%u: %s is one run (no variants, one kernel, repeats 1), not a matrix",
				      mo.shard.index, mo.shard.count, arg);
	if (vn_scenario_is_matrix(s, &mo) || mo.nhosts) {
		if (ra->ro.keep)
			return vn_input_error(err, "--keep keeps one guest: not with variants, kernels or repeats");
		rc = run_matrix(&ctx, s, &mo, &prog, err);
		vn_cli_progress_done(&prog);
	} else {
		ra->ro.kernel = ra->nkernels ? ra->kernels[0] : NULL;
		rc = run_one(&ctx, s, &ra->ro, &prog, err);
	}
	vn_testbed_ctx_clear(&ctx);
	return rc;
}

static int cmd_run(int argc, char **argv, struct vn_error *err)
{
	struct run_args ra = {0};
	int rc = parse_argv(argc, argv, &ra, err);

	if (rc == 0)
		rc = run(&ra, argv[optind], err);
	else if (rc > 0)
		rc = ra.a.exit;
	vn_strv_free(ra.with);
	vn_strv_free(ra.share);
	vn_strv_free(ra.files);
	return rc;
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
	 "(kernels/NAME.json, built on first use) or a bzImage path;\n"
	 "given more than once, one variant per kernel (a matrix)"},
	{"repeats", 'r', false, "N|auto", VN_VAL_NONE,
	 "run each variant N times (default: the scenario's repeats); auto:\n"
	 "the scenario's, then one more of each while a change assertion is\n"
	 "too noisy to tell, up to 20 (docs/noise.md)"},
	{"with", 'W', false, "PKG,...", VN_VAL_NONE,
	 "add these Debian packages installed on the host to the guest\n"
	 "image (bash-static, grep, ...; with the scenario's \"with\")"},
	{"share", 'D', false, "DIR[:GDIR][:ro|rw]", VN_VAL_DIR,
	 "also mount host directory DIR in the guest (as the scenario's\n"
	 "\"share\"; read-only unless rw)"},
	{"file", 'F', false, "PATH[:GPATH]", VN_VAL_NONE,
	 "also copy host file PATH into the guest before the steps (as\n"
	 "the scenario's \"files\")"},
	{"ltp", 'P', false, "DIR", VN_VAL_DIR,
	 "LTP's install directory on this host (its testcases/bin), shared\n"
	 "read-only at /opt/ltp, where the scenario's LTP suite steps look\n"
	 "(docs/suites.md)"},
	{"kselftest", 'T', false, NULL, VN_VAL_NONE,
	 "build the kselftest programs the scenario runs from /opt/kselftest\n"
	 "from its kernel's tree (the stock kernel's: Debian's\n"
	 "linux-source-6.1), statically, cached, and share them there\n"
	 "(as 'vnuma kernel selftests'; docs/suites.md)"},
	{"keep", 'K', false, NULL, VN_VAL_NONE, "leave the guest running afterwards"},
	{"dump-on", 'J', false, "panic|fail", VN_VAL_NONE,
	 "keep a memory dump of the guest in the results directory (vmcore,\n"
	 "vmcore.json; crash and drgn read it) when it panics, or with fail\n"
	 "also when an assertion fails (docs/debugging.md)"},
	{"arch", 'X', false, "ARCH", VN_VAL_NONE,
	 "boot the scenario's guest on this architecture (arm64, ppc64le;\n"
	 "default: the scenario's \"arch\", else the host's; docs/arches.md)"},
	{"cold", 'c', false, NULL, VN_VAL_NONE,
	 "boot every guest, never restore a booted snapshot of it (as the\n"
	 "scenario's \"boot\": \"cold\"; for what is measured from boot)"},
	{"node-memory", 'N', false, "SIZE", VN_VAL_NONE,
	 "boot with every node that has memory at SIZE (128M or more)\n"
	 "instead of the topology's, as vnuma up --node-memory"},
	{"virtual-time", 'V', false, NULL, VN_VAL_NONE,
	 "every run in virtual time (QEMU -icount, TCG only): figures the\n"
	 "guest times by its clock stop depending on the host's load, and\n"
	 "count instructions: where threads run costs little or nothing;\n"
	 "over the scenario's and its variants' \"virtual_time\" (docs/noise.md)"},
	{"locality", 'L', false, NULL, VN_VAL_NONE,
	 "count every guest memory access by CPU node and memory node\n"
	 "(a TCG plugin; boots under TCG; docs/locality.md), as the\n"
	 "scenario's \"locality\": true"},
	{"hosts", 'H', false, "FILE", VN_VAL_FILE,
	 "spread the matrix's runs over the libvirt hosts in FILE (a URI,\n"
	 "a capacity, pool=DIR and timeout=SECONDS per line; docs/hosts.md),\n"
	 "gathered into one result group; --connect URI more than once does\n"
	 "the same"},
	{"shard", 'I', false, "I/N", VN_VAL_NONE,
	 "run only the I-th of N slices of the matrix's runs (CI's parallel\n"
	 "jobs, one slice each; vnuma compare DIR... merges the slices'\n"
	 "groups; docs/ci.md)"},
	VN_CLI_OPT_END,
};

const struct vn_cmd vn_cmd_run = {
	.name = "run",
	.fn = cmd_run,
	.summary = "run a scenario: boot, workloads, samples, assertions, result.json/junit.xml",
	.synopsis = "SCENARIO [-o DIR [--force]] [--quick] [--kernel K]... [--repeats N|auto] [--virtual-time] "
		    "[--keep] [OPTIONS]",
	.description = "SCENARIO is a file or the name of a shipped scenario (e.g. memfollow-2node).\n"
		       "Boots the scenario's topology, prepares the guest (sysctls, THP, hugetlb,\n"
		       "cgroups), runs its steps while sampling inside the guest, checks its\n"
		       "assertions and writes the results directory: result.json, junit.xml,\n"
		       "samples.jsonl, console.log, before/ and after/ snapshots, steps/, report.html.\n"
		       "\n"
		       "A scenario with \"variants\" or \"repeats\" (or several --kernel, or --repeats)\n"
		       "is a matrix: every variant N times, interleaved (A B A B ...), into a result\n"
		       "group: group.json, DIR/VARIANT/N/ per run, compare.txt/json (printed at the end,\n"
		       "as 'vnuma compare DIR' prints it) and report.html (docs/results.md).\n"
		       "\n"
		       "Exit: 0 all assertions held, 1 an assertion failed, 2 bad scenario,\n"
		       "3 infrastructure (boot, timeout, interrupted; the result is marked incomplete).",
	.opts = run_opts,
	.common = VN_CLI_GUEST,
	.operand = VN_VAL_SCENARIO,
};
