/*
 * Bisect: the decision rules (verdict, flaky majority, metric, inconclusive,
 * skip), then whole bisections over a real git history the test makes, with
 * fake builds and runs: every position of the bad commit, an unbuildable
 * neighbour, a metric, resume after a stop, replay, and the refusals.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <dirent.h>
#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include "bisect/bisect-priv.h"
#include "bisect/backend.h"
#include "bisect/bisect.h"
#include "kernel/kernel-priv.h"
#include "tmpdir.h"
#include "util/clock.h"
#include "util/spawn.h"

VN_TEST_TMPDIR(tmp, "bisect")

static struct vn_bisect_policy policy(void)
{
	struct vn_bisect_policy p;
	vn_bisect_policy_default(&p);
	return p;
}

static enum vn_bisect_step verdict(const struct vn_bisect_policy *p, const int *exits, size_t n, enum vn_bisect_mark *m)
{
	struct vn_bisect_run r[16];
	char *why = NULL;
	for (size_t i = 0; i < n; i++)
		r[i] = (struct vn_bisect_run){.exit = exits[i], .value = NAN};
	enum vn_bisect_step st = vn_bisect_judge_verdict(p, r, n, m, &why);
	assert_true(st == VN_BISECT_MORE || (why && *why));
	free(why);
	return st;
}

static void test_judge_verdict(void **state)
{
	(void)state;
	struct vn_bisect_policy p = policy();
	enum vn_bisect_mark m;

	assert_int_equal(verdict(&p, NULL, 0, &m), VN_BISECT_MORE);
	assert_int_equal(verdict(&p, (int[]){0}, 1, &m), VN_BISECT_DECIDED);
	assert_int_equal(m, VN_BISECT_GOOD);
	assert_int_equal(verdict(&p, (int[]){1}, 1, &m), VN_BISECT_DECIDED);
	assert_int_equal(m, VN_BISECT_BAD);
	/* Could not run: retried up to infra_max (2), then skipped. */
	assert_int_equal(verdict(&p, (int[]){3, 3}, 2, &m), VN_BISECT_MORE);
	assert_int_equal(verdict(&p, (int[]){3, 3, 0}, 3, &m), VN_BISECT_DECIDED);
	assert_int_equal(m, VN_BISECT_GOOD);
	assert_int_equal(verdict(&p, (int[]){3, 3, 3}, 3, &m), VN_BISECT_DECIDED);
	assert_int_equal(m, VN_BISECT_SKIP);
	/* Flaky 3: the majority, and no more runs once it is certain. */
	p.flaky = 3;
	assert_int_equal(verdict(&p, (int[]){1}, 1, &m), VN_BISECT_MORE);
	assert_int_equal(verdict(&p, (int[]){1, 1}, 2, &m), VN_BISECT_DECIDED);
	assert_int_equal(m, VN_BISECT_BAD);
	assert_int_equal(verdict(&p, (int[]){1, 0}, 2, &m), VN_BISECT_MORE);
	assert_int_equal(verdict(&p, (int[]){1, 0, 0}, 3, &m), VN_BISECT_DECIDED);
	assert_int_equal(m, VN_BISECT_GOOD);
	/* An even count can split: neither, so skipped. */
	p.flaky = 2;
	assert_int_equal(verdict(&p, (int[]){1, 0}, 2, &m), VN_BISECT_DECIDED);
	assert_int_equal(m, VN_BISECT_SKIP);
}

static enum vn_bisect_step metric(const struct vn_bisect_policy *p, const double *v, size_t n, enum vn_bisect_mark *m,
				  char **why)
{
	static const double good[] = {10.0, 10.2, 9.8}, bad[] = {20.0, 20.3, 19.7};
	struct vn_stats g, b;
	struct vn_bisect_run r[16];
	vn_stats_summarize(good, 3, &g);
	vn_stats_summarize(bad, 3, &b);
	for (size_t i = 0; i < n; i++)
		r[i] = (struct vn_bisect_run){.exit = isnan(v[i]) ? 3 : 0, .value = v[i]};
	*why = NULL;
	return vn_bisect_judge_metric(p, &g, &b, r, n, m, why);
}

static void test_judge_metric(void **state)
{
	(void)state;
	struct vn_bisect_policy p = policy();
	enum vn_bisect_mark m;
	char *why;

	p.metric = "x";
	assert_int_equal(metric(&p, (double[]){10.1, 9.9}, 2, &m, &why), VN_BISECT_MORE); /* fewer than repeats */
	assert_int_equal(metric(&p, (double[]){10.1, 9.9, 10.0}, 3, &m, &why), VN_BISECT_DECIDED);
	assert_int_equal(m, VN_BISECT_GOOD);
	assert_non_null(strstr(why, "like good"));
	free(why);
	assert_int_equal(metric(&p, (double[]){19.9, 20.1, 20.2}, 3, &m, &why), VN_BISECT_DECIDED);
	assert_int_equal(m, VN_BISECT_BAD);
	free(why);
	/* Halfway: like neither, so more runs up to repeats_max, then skipped with its figures. */
	double mid[8] = {15, 15.2, 14.8, 15.1, 14.9, 15, 15.2, 14.8};
	assert_int_equal(metric(&p, mid, 3, &m, &why), VN_BISECT_MORE);
	assert_int_equal(metric(&p, mid, 7, &m, &why), VN_BISECT_MORE);
	assert_int_equal(metric(&p, mid, 8, &m, &why), VN_BISECT_DECIDED);
	assert_int_equal(m, VN_BISECT_SKIP);
	assert_non_null(strstr(why, "inconclusive"));
	assert_non_null(strstr(why, "neither"));
	free(why);
	/* Runs that could not run give no values: skipped past infra_max. */
	assert_int_equal(metric(&p, (double[]){NAN, NAN, NAN}, 3, &m, &why), VN_BISECT_DECIDED);
	assert_int_equal(m, VN_BISECT_SKIP);
	free(why);

	/* Endpoints: noise as large as the difference: more runs, then "do not differ". */
	struct vn_stats g, b;
	bool differ;
	vn_stats_summarize((double[]){10, 20, 15}, 3, &g);
	vn_stats_summarize((double[]){11, 21, 14}, 3, &b);
	why = NULL;
	assert_int_equal(vn_bisect_judge_endpoints(&p, &g, &b, &differ, &why), VN_BISECT_MORE);
	vn_stats_summarize((double[]){10, 20, 15, 10, 20, 15, 10, 20}, 8, &g);
	vn_stats_summarize((double[]){11, 21, 14, 11, 21, 14, 11, 21}, 8, &b);
	assert_int_equal(vn_bisect_judge_endpoints(&p, &g, &b, &differ, &why), VN_BISECT_DECIDED);
	assert_false(differ);
	assert_non_null(strstr(why, "do not differ"));
	free(why);
	why = NULL;
	vn_stats_summarize((double[]){10, 10.1, 9.9}, 3, &g);
	vn_stats_summarize((double[]){20, 20.1, 19.9}, 3, &b);
	assert_int_equal(vn_bisect_judge_endpoints(&p, &g, &b, &differ, &why), VN_BISECT_DECIDED);
	assert_true(differ);
	free(why);
}

/* ---- whole bisections over a history the test makes ---- */

#define NCOMMITS 13 /* the base and 12 more */

static char repo[128], hashes[NCOMMITS][VN_BISECT_HASH_MAX + 1];

static void git(const char *const *args)
{
	const char *argv[16] = {"git", "-C", repo, "-c", "user.name=t", "-c", "user.email=t@t"};
	size_t a = 7;
	for (; *args; args++)
		argv[a++] = *args;
	argv[a] = NULL;
	struct vn_error err = {0};
	assert_int_equal(vn_spawn_run(argv, &(struct vn_spawn_opts){.log_fd = -1}, &err), 0);
}

static void make_history(void)
{
	char name[32], msg[64];
	snprintf(repo, sizeof(repo), "%s/repo", tmp);
	if (access(repo, F_OK) == 0)
		return;
	vn_test_put(tmp, "repo/README", "base\n");
	git((const char *[]){"init", "-q", ".", NULL});
	for (int i = 0; i < NCOMMITS; i++) {
		snprintf(name, sizeof(name), "repo/f%d", i);
		vn_test_put(tmp, name, "x\n");
		snprintf(msg, sizeof(msg), "-mcommit %d", i);
		git((const char *[]){"add", "-A", ".", NULL});
		git((const char *[]){"commit", "-q", msg, NULL});
		struct vn_error err = {0};
		assert_int_equal(vn_bisect_git_resolve(repo, "HEAD", hashes[i], &err), 0);
	}
}

static int index_of(const char *hash)
{
	for (int i = 0; i < NCOMMITS; i++)
		if (strcmp(hashes[i], hash) == 0)
			return i;
	fail_msg("unknown commit %s", hash);
	return -1;
}

struct fake {
	int first_bad;   /* commits from here on fail */
	int unbuildable; /* this one does not build (-1: none) */
	int stop_after;  /* builds before a build fails with an infrastructure error (-1: never) */
	bool metric;     /* values: 10ish before first_bad, 20ish from it */
	bool flaky;      /* every third run of a commit gives the wrong answer */
	unsigned builds, runs, run_of[NCOMMITS];
};

static int fake_build(void *data, const char *commit, char **kernel, double *build_s, struct vn_error *err)
{
	struct fake *f = data;
	if (f->stop_after >= 0 && f->builds >= (unsigned)f->stop_after)
		return vn_infra_error(err, -EIO, "disk full");
	f->builds++;
	if (index_of(commit) == f->unbuildable)
		return vn_input_error(err, "make bzImage failed (exit 2)");
	*kernel = vn_xstrdup(commit);
	*build_s = 0;
	return 0;
}

/* A run: its verdict and value by the commit's position, and a result.json such as compare reads. */
static int fake_run(void *data, const struct vn_bisect_run_in *in, struct vn_bisect_run_out *out, struct vn_error *err)
{
	struct fake *f = data;
	int i = index_of(in->kernel);
	(void)err;
	assert_int_equal(access(in->dir, F_OK), -1); /* a fresh directory each run */
	assert_int_equal(strncmp(in->variant, in->kernel, 12), 0);
	assert_int_equal(strlen(in->variant), 12);
	f->runs++;
	unsigned k = ++f->run_of[i];
	bool bad = i >= f->first_bad;
	if (f->flaky && k % 3 == 0)
		bad = !bad;
	out->exit = bad ? 1 : 0;
	out->value = f->metric ? (bad ? 20.0 : 10.0) + 0.1 * (double)(k % 3) - 0.1 : NAN;
	out->topology = vn_xstrdup("2node");
	out->accel = vn_xstrdup("tcg");
	_cleanup_free_ char *res = vn_xasprintf(
		"{\"complete\": true, \"variant\": \"%s\", \"repeat\": %u, \"scenario\": \"fake\", \"topology\": "
		"\"2node\", \"accelerator\": \"tcg\", \"metrics\": {\"x\": %g}}\n",
		in->variant, in->repeat, f->metric ? out->value : (double)out->exit);
	_cleanup_free_ char *path = vn_xasprintf("%s/result.json", in->dir);
	struct vn_error e = {0};
	assert_int_equal(vn_mkdir_p(in->dir, 0755, &e), 0);
	assert_int_equal(vn_file_write_text(path, res, &e), 0);
	return 0;
}

/* A file of the test's directory, written when missing: the scenarios and recipes whose hashes a start record holds. */
static char *test_file(const char *name, const char *text)
{
	char *path = vn_xasprintf("%s/%s", tmp, name);
	if (access(path, F_OK) != 0)
		vn_test_put(tmp, name, text);
	return path;
}

/* The options every bisection here starts from: by verdict, the fake scenario, no recipe. */
static struct vn_bisect_opts opts_for(const char *dir, const struct vn_bisect_policy *p, const char *good,
				      const char *bad, const char *replay, const char *scenario)
{
	return (struct vn_bisect_opts){.repo = repo,
				       .good = good,
				       .bad = bad,
				       .outdir = dir,
				       .replay = replay,
				       .policy = *p,
				       .scenario = scenario,
				       .arch = "x86_64",
				       .scenario_name = "fake"};
}

static int bisect_with(struct fake *f, const char *out, const struct vn_bisect_policy *p, const char *good,
		       const char *bad, const char *replay, struct vn_bisect_result *res, struct vn_error *err)
{
	struct vn_bisect_ops ops = {.build = fake_build, .run = fake_run, .data = f};
	_cleanup_free_ char *dir = vn_xasprintf("%s/%s", tmp, out);
	_cleanup_free_ char *scenario = test_file("fake.json", "{\"name\": \"fake\"}\n");
	struct vn_bisect_opts o = opts_for(dir, p, good, bad, replay, scenario);
	return vn_bisect(&o, &ops, res, err);
}

static void test_bisect_every_position(void **state)
{
	(void)state;
	make_history();
	struct vn_bisect_policy p = policy();
	for (int k = 1; k < NCOMMITS; k++) {
		struct fake f = {.first_bad = k, .unbuildable = -1, .stop_after = -1};
		struct vn_bisect_result res;
		struct vn_error err = {0};
		char out[32];
		snprintf(out, sizeof(out), "pos-%d", k);
		if (bisect_with(&f, out, &p, hashes[0], hashes[NCOMMITS - 1], NULL, &res, &err) < 0)
			fail_msg("k=%d: %s", k, err.msg);
		assert_int_equal(res.outcome, VN_BISECT_FOUND);
		assert_string_equal(res.first_bad, hashes[k]);
		char subject[32];
		snprintf(subject, sizeof(subject), "commit %d", k);
		assert_string_equal(res.first_bad_subject, subject);
		/* log2 of 12 commits, plus the two endpoints: never more than 6 runs. */
		assert_true(f.runs <= 6);
		assert_int_equal(res.ncommits, NCOMMITS);
		_cleanup_free_ char *txt = vn_xasprintf("%s/%s/bisect.txt", tmp, out);
		_cleanup_free_ char *html = vn_xasprintf("%s/%s/report.html", tmp, out);
		_cleanup_free_ char *table = NULL;
		assert_int_equal(vn_file_read(txt, 1 << 20, &table, &(size_t){0}, NULL), 0);
		assert_non_null(strstr(table, "<- first bad"));
		_cleanup_free_ char *page = NULL;
		assert_int_equal(vn_file_read(html, 1 << 22, &page, &(size_t){0}, NULL), 0);
		/* The endpoints ran once each: their outcomes are on the page, not zeros. */
		assert_non_null(strstr(page, "1 passed, 0 failed"));
		assert_non_null(strstr(page, "0 passed, 1 failed"));
		vn_bisect_result_clear(&res);
	}
}

static void test_bisect_unbuildable(void **state)
{
	(void)state;
	make_history();
	struct vn_bisect_policy p = policy();
	/* Right after the bad commit: skipped, reported, and the first bad is still exact. */
	for (int k = 2; k < NCOMMITS - 2; k++) {
		struct fake f = {.first_bad = k, .unbuildable = k + 1, .stop_after = -1};
		struct vn_bisect_result res;
		struct vn_error err = {0};
		char out[32];
		snprintf(out, sizeof(out), "unb-%d", k);
		if (bisect_with(&f, out, &p, hashes[0], hashes[NCOMMITS - 1], NULL, &res, &err) < 0)
			fail_msg("k=%d: %s", k, err.msg);
		assert_int_equal(res.outcome, VN_BISECT_FOUND);
		assert_string_equal(res.first_bad, hashes[k]);
		vn_bisect_result_clear(&res);
	}
	/* Right before it: the first bad is the bad one or the one that could not be built. */
	struct fake f = {.first_bad = 6, .unbuildable = 5, .stop_after = -1};
	struct vn_bisect_result res;
	struct vn_error err = {0};
	assert_int_equal(bisect_with(&f, "unb-before", &p, hashes[0], hashes[NCOMMITS - 1], NULL, &res, &err), 0);
	if (res.outcome == VN_BISECT_AMBIGUOUS) {
		assert_int_equal(res.ncandidates, 2);
		assert_string_equal(res.candidates[0], hashes[6]);
		assert_string_equal(res.candidates[1], hashes[5]);
	} else {
		/* The halving never reached commit 5. */
		assert_int_equal(res.outcome, VN_BISECT_FOUND);
		assert_string_equal(res.first_bad, hashes[6]);
	}
	_cleanup_free_ char *txt = vn_xasprintf("%s/unb-before/bisect.json", tmp), *js = NULL;
	assert_int_equal(vn_file_read(txt, 1 << 20, &js, &(size_t){0}, NULL), 0);
	if (res.outcome == VN_BISECT_AMBIGUOUS)
		assert_non_null(strstr(js, "does not build: make bzImage failed"));
	vn_bisect_result_clear(&res);
}

static void test_bisect_metric_and_flaky(void **state)
{
	(void)state;
	make_history();
	struct vn_bisect_policy p = policy();
	p.metric = "x";
	struct fake f = {.first_bad = 7, .unbuildable = -1, .stop_after = -1, .metric = true};
	struct vn_bisect_result res;
	struct vn_error err = {0};
	assert_int_equal(bisect_with(&f, "metric", &p, hashes[0], hashes[NCOMMITS - 1], NULL, &res, &err), 0);
	assert_int_equal(res.outcome, VN_BISECT_FOUND);
	assert_string_equal(res.first_bad, hashes[7]);
	vn_bisect_result_clear(&res);
	/* The commits' runs are a result group compare reads: the good endpoint the base, each commit a column. */
	_cleanup_free_ char *cmp = vn_xasprintf("%s/metric/commits/compare.txt", tmp), *table = NULL;
	assert_int_equal(vn_file_read(cmp, 1 << 20, &table, &(size_t){0}, NULL), 0);
	char good12[13], bad12[13];
	snprintf(good12, sizeof(good12), "%.12s", hashes[0]);
	snprintf(bad12, sizeof(bad12), "%.12s", hashes[7]);
	assert_non_null(strstr(table, good12));
	assert_non_null(strstr(table, bad12));
	_cleanup_free_ char *gh = vn_xasprintf("%s/metric/commits/report.html", tmp);
	assert_int_equal(access(gh, F_OK), 0);

	/* A wrong answer every third run: one run per commit can go astray, a majority of 3 cannot. */
	p = policy();
	p.flaky = 3;
	struct fake g = {.first_bad = 4, .unbuildable = -1, .stop_after = -1, .flaky = true};
	assert_int_equal(bisect_with(&g, "flaky", &p, hashes[0], hashes[NCOMMITS - 1], NULL, &res, &err), 0);
	assert_int_equal(res.outcome, VN_BISECT_FOUND);
	assert_string_equal(res.first_bad, hashes[4]);
	vn_bisect_result_clear(&res);
}

static void test_bisect_resume_and_replay(void **state)
{
	(void)state;
	make_history();
	struct vn_bisect_policy p = policy();
	struct vn_bisect_result res;
	struct vn_error err = {0};

	/* Stopped after two builds (the endpoints): an infrastructure error, the log kept. */
	struct fake f = {.first_bad = 9, .unbuildable = -1, .stop_after = 2};
	assert_int_equal(bisect_with(&f, "resume", &p, hashes[0], hashes[NCOMMITS - 1], NULL, &res, &err), -EIO);
	assert_non_null(strstr(err.msg, "disk full"));
	vn_error_clear(&err);
	vn_bisect_result_clear(&res);
	unsigned first_runs = f.runs;
	assert_int_equal(first_runs, 2);

	/* Again: goes on, never running the endpoints again. */
	f.stop_after = -1;
	f.builds = 0;
	memset(f.run_of, 0, sizeof(f.run_of));
	assert_int_equal(bisect_with(&f, "resume", &p, hashes[0], hashes[NCOMMITS - 1], NULL, &res, &err), 0);
	assert_int_equal(res.outcome, VN_BISECT_FOUND);
	assert_string_equal(res.first_bad, hashes[9]);
	assert_int_equal(f.run_of[0], 0);
	assert_int_equal(f.run_of[NCOMMITS - 1], 0);
	vn_bisect_result_clear(&res);

	/* Finished: a third start runs nothing and says the same. */
	unsigned runs = f.runs;
	assert_int_equal(bisect_with(&f, "resume", &p, hashes[0], hashes[NCOMMITS - 1], NULL, &res, &err), 0);
	assert_int_equal(f.runs, runs);
	assert_string_equal(res.first_bad, hashes[9]);
	vn_bisect_result_clear(&res);

	/* Replay into another dir: the log's marks stand, nothing runs. */
	_cleanup_free_ char *log = vn_xasprintf("%s/resume/bisect.log", tmp);
	assert_int_equal(bisect_with(&f, "replayed", &p, hashes[0], hashes[NCOMMITS - 1], log, &res, &err), 0);
	assert_int_equal(f.runs, runs);
	assert_string_equal(res.first_bad, hashes[9]);
	vn_bisect_result_clear(&res);
	/* Replaying it again into a dir that holds a log (the one it made): refused, nothing overwritten. */
	_cleanup_free_ char *log2 = vn_xasprintf("%s/replayed/bisect.log", tmp), *before = NULL, *after = NULL;
	assert_int_equal(vn_file_read(log2, 1 << 20, &before, &(size_t){0}, NULL), 0);
	assert_int_equal(bisect_with(&f, "replayed", &p, hashes[0], hashes[NCOMMITS - 1], log, &res, &err), -EINVAL);
	assert_non_null(strstr(err.msg, "already holds a bisection: replay"));
	vn_error_clear(&err);
	vn_bisect_result_clear(&res);
	assert_int_equal(vn_file_read(log2, 1 << 20, &after, &(size_t){0}, NULL), 0);
	assert_string_equal(before, after);
	assert_int_equal(f.runs, runs);

	/* Another bisection's dir is refused, naming what differs. */
	assert_int_equal(bisect_with(&f, "resume", &p, hashes[1], hashes[NCOMMITS - 1], NULL, &res, &err), -EINVAL);
	assert_non_null(strstr(err.msg, "another bisection's log: its good commit is"));
	vn_error_clear(&err);
	vn_bisect_result_clear(&res);

	/* A torn last line (a crash mid-write) is dropped; a bad line elsewhere is refused with its line number. */
	_cleanup_free_ char *text = NULL;
	size_t len = 0;
	assert_int_equal(vn_file_read(log, 1 << 20, &text, &len, NULL), 0);
	_cleanup_free_ char *torn = vn_xasprintf("%s{\"event\": \"ru", text);
	_cleanup_free_ char *tornp = vn_xasprintf("%s/torn.log", tmp);
	assert_int_equal(vn_file_write(tornp, torn), 0);
	assert_int_equal(bisect_with(&f, "torn", &p, hashes[0], hashes[NCOMMITS - 1], tornp, &res, &err), 0);
	assert_string_equal(res.first_bad, hashes[9]);
	vn_bisect_result_clear(&res);
	_cleanup_free_ char *junk = vn_xasprintf("%snot json\n%s", text, text);
	_cleanup_free_ char *junkp = vn_xasprintf("%s/junk.log", tmp);
	assert_int_equal(vn_file_write(junkp, junk), 0);
	assert_int_equal(bisect_with(&f, "junk", &p, hashes[0], hashes[NCOMMITS - 1], junkp, &res, &err), -EINVAL);
	/* Named as given, and read before it is copied: the refused log is not left in OUT to be resumed. */
	assert_non_null(strstr(err.msg, "junk.log:"));
	assert_non_null(strstr(err.msg, "not a JSON object"));
	vn_error_clear(&err);
	vn_bisect_result_clear(&res);
	_cleanup_free_ char *junk_out = vn_xasprintf("%s/junk/bisect.log", tmp);
	assert_int_equal(access(junk_out, F_OK), -1);
}

static void test_bisect_refusals(void **state)
{
	(void)state;
	make_history();
	struct vn_bisect_policy p = policy();
	struct vn_bisect_result res;
	struct vn_error err = {0};
	struct fake f = {.first_bad = 5, .unbuildable = -1, .stop_after = -1};

	/* Swapped: good is not an ancestor of bad, nothing runs. */
	assert_int_equal(bisect_with(&f, "swap", &p, hashes[NCOMMITS - 1], hashes[0], NULL, &res, &err), 0);
	assert_int_equal(res.outcome, VN_BISECT_NOT_ANCESTOR);
	assert_int_equal(f.runs, 0);
	vn_bisect_result_clear(&res);
	/* Both endpoints pass: no difference. */
	f.first_bad = NCOMMITS;
	assert_int_equal(bisect_with(&f, "same", &p, hashes[0], hashes[NCOMMITS - 1], NULL, &res, &err), 0);
	assert_int_equal(res.outcome, VN_BISECT_NO_DIFFERENCE);
	assert_non_null(strstr(res.message, "do not differ"));
	vn_bisect_result_clear(&res);
	/* A metric the runs do not record: said after the first endpoint run, not after many. */
	struct vn_bisect_policy pm = policy();
	pm.metric = "vmstat.nope";
	f.first_bad = 5;
	f.runs = 0;
	assert_int_equal(bisect_with(&f, "nometric", &pm, hashes[0], hashes[NCOMMITS - 1], NULL, &res, &err), -EINVAL);
	assert_non_null(strstr(err.msg, "--metric vmstat.nope: "));
	assert_non_null(strstr(err.msg, "records no such metric"));
	assert_int_equal(f.runs, 1);
	vn_error_clear(&err);
	vn_bisect_result_clear(&res);
	/* A revision the tree does not have. */
	assert_int_equal(bisect_with(&f, "norev", &p, "v9.9", hashes[0], NULL, &res, &err), -EINVAL);
	assert_non_null(strstr(err.msg, "no commit v9.9"));
	vn_error_clear(&err);
	vn_bisect_result_clear(&res);
}

/* ---- a bisection whose builds are real ones, of a fake kernel tree (a Makefile that builds in no time) ---- */

static char krepo[128], khash[3][VN_BISECT_HASH_MAX + 1];

/* Commits 0..2: mm/x.c says "good", then "bad" (and "worse"); make bzImage runs hook.sh first where there is one. */
static void make_kernel_history(void)
{
	_cleanup_strbuf_ struct vn_strbuf req = VN_STRBUF_INIT;
	char hdr[0x400] = {0};
	snprintf(krepo, sizeof(krepo), "%s/krepo", tmp);
	_cleanup_free_ char *mk =
		vn_xasprintf("tinyconfig:\n\tmkdir -p $(O) && : > $(O)/.config\n"
			     "olddefconfig:\n\tcat required.config >> $(O)/.config\n"
			     "bzImage:\n\tif [ -e %s/hook.sh ]; then sh %s/hook.sh; fi\n"
			     "\tmkdir -p $(O)/arch/x86/boot && cat bzImage.in mm/x.c > $(O)/arch/x86/boot/bzImage\n"
			     ".PHONY: tinyconfig olddefconfig bzImage\n",
			     tmp, tmp);
	vn_test_put(tmp, "krepo/Makefile", mk);
	for (const char *const *o = vn_kernel_required_options(VN_ARCH_X86_64); *o; o++)
		vn_strbuf_printf(&req, "%s=y\n", *o);
	vn_test_put(tmp, "krepo/required.config", req.s);
	/* The boot header the cache checks and the release is read from: "HdrS" at 0x202, the version at 0x300. */
	memcpy(hdr + 0x202, "HdrS", 4);
	hdr[0x20f] = 0x01;
	memcpy(hdr + 0x300, "6.1.0-fake", 11);
	_cleanup_free_ char *bz = vn_xasprintf("%s/bzImage.in", krepo);
	FILE *f = fopen(bz, "w");
	assert_non_null(f);
	assert_int_equal(fwrite(hdr, 1, sizeof(hdr), f), sizeof(hdr));
	fclose(f);
	snprintf(repo, sizeof(repo), "%s", krepo);
	git((const char *[]){"init", "-q", ".", NULL});
	for (int i = 0; i < 3; i++) {
		vn_test_put(tmp, "krepo/mm/x.c", i == 0 ? "good\n" : i == 1 ? "bad\n" : "bad\nworse\n");
		git((const char *[]){"add", "-A", ".", NULL});
		git((const char *[]){"commit", "-q", "-mk", NULL});
		struct vn_error err = {0};
		assert_int_equal(vn_bisect_git_resolve(krepo, "HEAD", khash[i], &err), 0);
	}
	repo[0] = '\0'; /* make_history's repository is another */
}

/* A run: bad when the built image holds the bad line. */
static int kernel_run(void *data, const struct vn_bisect_run_in *in, struct vn_bisect_run_out *out,
		      struct vn_error *err)
{
	_cleanup_free_ char *img = NULL, *path = vn_xasprintf("%s/result.json", in->dir), *res = NULL;
	(void)data;
	assert_int_equal(vn_file_read(in->kernel, 1 << 20, &img, &(size_t){0}, NULL), 0);
	out->exit = strstr(img + 0x400, "bad") ? 1 : 0;
	out->value = NAN;
	res = vn_xasprintf("{\"complete\": true, \"variant\": \"%s\", \"repeat\": %u, \"scenario\": \"fake\", "
			   "\"metrics\": {\"x\": %d}}\n",
			   in->variant, in->repeat, out->exit);
	assert_int_equal(vn_mkdir_p(in->dir, 0755, err), 0);
	assert_int_equal(vn_file_write_text(path, res, err), 0);
	return 0;
}

/* A full disk during a build is the machine's: the bisection stops (exit 3) and marks nothing, so a rerun builds it. */
static void test_bisect_build_disk_full(void **state)
{
	(void)state;
	make_kernel_history();
	vn_test_put(tmp, "kfake.json",
		    "{\"type\": \"source\", \"tree\": \"krepo\", \"config\": {\"base\": \"tinyconfig\"}}");
	vn_test_put(tmp, "hook.sh",
		    "echo 'mm/x.c: fatal error: writing mm/.x.o: No space left on device' >&2; exit 1\n");
	_cleanup_free_ char *rp = vn_xasprintf("%s/kfake.json", tmp), *cache = vn_xasprintf("%s/kcache", tmp);
	_cleanup_free_ char *out = vn_xasprintf("%s/kbisect", tmp), *hook = vn_xasprintf("%s/hook.sh", tmp);
	_cleanup_free_ char *logp = vn_xasprintf("%s/bisect.log", out), *log = NULL;
	/* The start record hashes the scenario's bytes: it must be a file (what is in it is fake_run's business). */
	_cleanup_free_ char *scn = vn_xasprintf("%s/kscenario.json", tmp);
	_cleanup_recipe_ struct vn_recipe *r = NULL;
	struct vn_error err = {0};
	assert_int_equal(vn_recipe_load(rp, &r, &err), 0);
	struct vn_bisect_backend be = {.recipe = r, .build = {.cache_dir = cache, .jobs = 1}};
	struct vn_bisect_ops ops;
	vn_bisect_backend_ops(&be, &ops);
	ops.run = kernel_run;
	struct vn_bisect_opts o = {.repo = krepo,
				   .good = khash[0],
				   .bad = khash[2],
				   .outdir = out,
				   .policy = policy(),
				   .scenario = scn,
				   .scenario_name = "fake"};
	struct vn_bisect_result res;

	vn_test_put(tmp, "kscenario.json", "{}\n");
	assert_int_equal(vn_bisect(&o, &ops, &res, &err), -ENOSPC);
	assert_int_equal(err.kind, VN_ERR_INFRA);
	assert_non_null(strstr(err.msg, "the disk is full"));
	vn_error_clear(&err);
	vn_bisect_result_clear(&res);
	assert_int_equal(vn_file_read(logp, 1 << 20, &log, &(size_t){0}, NULL), 0);
	assert_null(strstr(log, "\"build\""));

	/* Space freed: the same bisection goes on and builds what it could not. */
	assert_int_equal(unlink(hook), 0);
	if (vn_bisect(&o, &ops, &res, &err) < 0)
		fail_msg("%s", err.msg);
	assert_int_equal(res.outcome, VN_BISECT_FOUND);
	assert_string_equal(res.first_bad, khash[1]);
	vn_bisect_result_clear(&res);
}

/*
 * GIT_DIR and GIT_WORK_TREE exported (git sets them for hooks and in linked
 * worktrees) naming another repository: the bisection still reads --repo's
 * history, and leaves the other repository as it was.
 */
static void test_bisect_git_env(void **state)
{
	(void)state;
	make_history();
	_cleanup_free_ char *other = vn_xasprintf("%s/other", tmp), *other_git = vn_xasprintf("%s/.git", other);
	const char *init[] = {"git", "-C", other, "init", "-q", ".", NULL};
	const char *commit[] = {"git",    "-C", other,           "-c",      "user.name=t", "-c", "user.email=t@t",
				"commit", "-q", "--allow-empty", "-mother", NULL};
	struct vn_error err = {0};
	assert_int_equal(vn_mkdir_p(other, 0755, &err), 0);
	assert_int_equal(vn_spawn_run(init, NULL, &err), 0);
	assert_int_equal(vn_spawn_run(commit, NULL, &err), 0);

	setenv("GIT_DIR", other_git, 1);
	setenv("GIT_WORK_TREE", other, 1);
	setenv("GIT_INDEX_FILE", "/nonexistent/index", 1);
	struct vn_bisect_policy p = policy();
	struct fake f = {.first_bad = 7, .unbuildable = -1, .stop_after = -1};
	struct vn_bisect_result res;
	int rc = bisect_with(&f, "gitenv", &p, "HEAD~12", "HEAD", NULL, &res, &err);
	unsetenv("GIT_DIR");
	unsetenv("GIT_WORK_TREE");
	unsetenv("GIT_INDEX_FILE");
	if (rc < 0)
		fail_msg("%s", err.msg);
	assert_int_equal(res.outcome, VN_BISECT_FOUND);
	assert_string_equal(res.first_bad, hashes[7]);
	vn_bisect_result_clear(&res);
}

/* A git that hangs (a hook, a disk): stopped at its deadline, an infrastructure error naming it. */
static void test_bisect_git_deadline(void **state)
{
	(void)state;
	make_history();
	vn_test_put(tmp, "hang/git", "#!/bin/sh\nexec sleep 60\n");
	_cleanup_free_ char *bin = vn_xasprintf("%s/hang", tmp), *fake = vn_xasprintf("%s/git", bin);
	_cleanup_free_ char *old = vn_xstrdup(getenv("PATH")), *path = vn_xasprintf("%s:%s", bin, old);
	char hash[VN_BISECT_HASH_MAX + 1];
	struct vn_error err = {0};

	assert_int_equal(chmod(fake, 0755), 0);
	setenv("PATH", path, 1);
	setenv("VNUMA_GIT_DEADLINE", "1", 1);
	int64_t t0 = vn_now_ms();
	int rc = vn_bisect_git_resolve(repo, "HEAD", hash, &err);
	int64_t took = vn_now_ms() - t0;
	setenv("PATH", old, 1);
	unsetenv("VNUMA_GIT_DEADLINE");
	assert_int_equal(rc, -ETIMEDOUT);
	assert_int_equal(err.kind, VN_ERR_INFRA);
	assert_non_null(strstr(err.msg, "git rev-parse did not finish in 1 s"));
	assert_true(took < 5000);
	vn_error_clear(&err);
}

/* A file's bytes, for "untouched" checks. */
static char *slurp(const char *dir, const char *name)
{
	_cleanup_free_ char *path = vn_xasprintf("%s/%s/%s", tmp, dir, name);
	char *text = NULL;
	assert_int_equal(vn_file_read(path, 1 << 20, &text, &(size_t){0}, NULL), 0);
	return text;
}

/* A resume that is not this bisection: refused naming what differs, exit 2, OUT untouched. */
static void expect_refused(struct fake *f, struct vn_bisect_opts *o, const char *what, const char *also)
{
	struct vn_bisect_ops ops = {.build = fake_build, .run = fake_run, .data = f};
	struct vn_bisect_result res;
	struct vn_error err = {0};
	_cleanup_free_ char *log = slurp("start", "bisect.log"), *txt = slurp("start", "bisect.txt");
	unsigned runs = f->runs;

	assert_int_equal(vn_bisect(o, &ops, &res, &err), -EINVAL);
	assert_int_equal(err.kind, VN_ERR_INPUT);
	if (!strstr(err.msg, what) || (also && !strstr(err.msg, also)) ||
	    !strstr(err.msg, "start/bisect.log:1: another bisection's log: ") ||
	    !strstr(err.msg, "; use another -o or remove it"))
		fail_msg("%s: not said in: %s", what, err.msg);
	assert_int_equal(f->runs, runs);
	assert_int_equal(res.ncommits, 0); /* nothing for the CLI to print as this bisection's table */
	_cleanup_free_ char *log2 = slurp("start", "bisect.log"), *txt2 = slurp("start", "bisect.txt");
	assert_string_equal(log, log2);
	assert_string_equal(txt, txt2);
	vn_error_clear(&err);
	vn_bisect_result_clear(&res);
}

static void test_bisect_resume_other_start(void **state)
{
	(void)state;
	make_history();
	struct vn_bisect_policy p = policy();
	struct vn_bisect_ops ops;
	struct vn_bisect_result res;
	struct vn_error err = {0};
	struct fake f = {.first_bad = 8, .unbuildable = -1, .stop_after = -1};
	_cleanup_free_ char *dir = vn_xasprintf("%s/start", tmp);
	_cleanup_free_ char *a = test_file("fallback-4node.json", "{\"name\": \"fallback-4node\"}\n");
	_cleanup_free_ char *b = test_file("memfollow-2node.json", "{\"name\": \"memfollow-2node\"}\n");
	_cleanup_free_ char *a2 = test_file("elsewhere/fallback-4node.json", "{\"name\": \"fallback-4node\"}\n");
	_cleanup_free_ char *recipe = test_file("tiny.json", "{\"name\": \"tiny\"}\n");
	const char *good = hashes[0], *bad = hashes[NCOMMITS - 1];

	ops = (struct vn_bisect_ops){.build = fake_build, .run = fake_run, .data = &f};
	struct vn_bisect_opts o = opts_for(dir, &p, good, bad, NULL, a);
	assert_int_equal(vn_bisect(&o, &ops, &res, &err), 0);
	assert_string_equal(res.first_bad, hashes[8]);
	vn_bisect_result_clear(&res);

	/* Another scenario, by content: the one it was started with is named, and its hash. */
	o = opts_for(dir, &p, good, bad, NULL, b);
	_cleanup_free_ char *was = vn_xasprintf("it was started with scenario %s (sha256 ", a);
	_cleanup_free_ char *not = vn_xasprintf("), not %s (sha256 ", b);
	expect_refused(&f, &o, was, not );
	/* A recipe, the policy, --quick, --virtual-time, the arch. */
	o = opts_for(dir, &p, good, bad, NULL, a);
	o.recipe = recipe;
	expect_refused(&f, &o, "it was started with recipe none (sha256 ), not ", NULL);
	o = opts_for(dir, &p, good, bad, NULL, a);
	o.policy.flaky = 3;
	expect_refused(&f, &o, "it was started with --flaky 1, not 3", NULL);
	o = opts_for(dir, &p, good, bad, NULL, a);
	o.quick = true;
	expect_refused(&f, &o, "it was started without --quick, this one with it", NULL);
	o = opts_for(dir, &p, good, bad, NULL, a);
	o.virtual_time = true;
	expect_refused(&f, &o, "it was started without --virtual-time", NULL);
	o = opts_for(dir, &p, good, bad, NULL, a);
	o.arch = "arm64";
	expect_refused(&f, &o, "it was started for arch x86_64, not arm64", NULL);
	o = opts_for(dir, &p, good, bad, NULL, a);
	o.policy.alpha = 0.01;
	expect_refused(&f, &o, "it was started with alpha 0.05, not 0.01", NULL);

	/* The same scenario at another path (another working directory, a copy): the same bisection. */
	unsigned runs = f.runs;
	o = opts_for(dir, &p, good, bad, NULL, a2);
	assert_int_equal(vn_bisect(&o, &ops, &res, &err), 0);
	assert_string_equal(res.first_bad, hashes[8]);
	assert_int_equal(f.runs, runs);
	vn_bisect_result_clear(&res);

	/* An older vnuma's log does not say what it was started with: refused, not guessed. */
	_cleanup_free_ char *text = slurp("start", "bisect.log");
	char *nl = strchr(text, '\n');
	assert_non_null(nl);
	_cleanup_free_ char *v1 = vn_xasprintf(
		"{\"event\":\"start\",\"version\":1,\"repo\":\"%s\",\"good\":\"%s\",\"bad\":\"%s\","
		"\"scenario\":\"%s\","
		"\"recipe\":\"\",\"metric\":null,\"flaky\":1,\"repeats\":3,\"repeats_max\":8,\"alpha\":0.05}%s",
		repo, good, bad, a, nl);
	_cleanup_free_ char *v1p = vn_xasprintf("%s/v1.log", tmp);
	assert_int_equal(vn_file_write(v1p, v1), 0);
	_cleanup_free_ char *dir1 = vn_xasprintf("%s/from-v1", tmp);
	o = opts_for(dir1, &p, good, bad, v1p, a);
	assert_int_equal(vn_bisect(&o, &ops, &res, &err), -EINVAL);
	if (!strstr(err.msg,
		    "v1.log:1: another bisection's log: its start record has no \"scenario_sha256\" (an older"))
		fail_msg("%s", err.msg);
	assert_int_equal(f.runs, runs);
	vn_error_clear(&err);
	vn_bisect_result_clear(&res);
}

/* A symlink planted where bisect writes (docs/security.md): refused, and nothing is made where it points. */
static void test_bisect_planted_symlinks(void **state)
{
	(void)state;
	make_history();
	struct vn_bisect_policy p = policy();
	struct vn_bisect_result res;
	struct vn_error err = {0};
	struct fake f = {.first_bad = 5, .unbuildable = -1, .stop_after = -1};
	_cleanup_free_ char *elsewhere = vn_xasprintf("%s/elsewhere.log", tmp);
	_cleanup_free_ char *victim = vn_xasprintf("%s/victim", tmp);
	_cleanup_free_ char *link1 = vn_xasprintf("%s/planted-log/bisect.log", tmp);
	_cleanup_free_ char *link2 = vn_xasprintf("%s/planted-commits/commits", tmp);

	vn_test_put(tmp, "planted-log/.keep", "");
	vn_test_put(tmp, "planted-commits/.keep", "");
	vn_test_put(tmp, "victim/.keep", "");
	assert_int_equal(symlink(elsewhere, link1), 0);
	assert_int_equal(symlink(victim, link2), 0);

	assert_int_equal(bisect_with(&f, "planted-log", &p, hashes[0], hashes[NCOMMITS - 1], NULL, &res, &err),
			 -EINVAL);
	assert_int_equal(err.kind, VN_ERR_INPUT);
	assert_non_null(strstr(err.msg, "planted-log/bisect.log is a symlink (not followed)"));
	assert_int_equal(access(elsewhere, F_OK), -1);
	vn_error_clear(&err);
	vn_bisect_result_clear(&res);
	/* Replayed into it: the same. */
	vn_test_put(tmp, "resume-src.log", "{\"event\":\"start\"}\n");
	_cleanup_free_ char *src = vn_xasprintf("%s/resume-src.log", tmp);
	assert_int_equal(bisect_with(&f, "planted-log", &p, hashes[0], hashes[NCOMMITS - 1], src, &res, &err), -EINVAL);
	assert_non_null(strstr(err.msg, "is a symlink (not followed)"));
	assert_int_equal(access(elsewhere, F_OK), -1);
	vn_error_clear(&err);
	vn_bisect_result_clear(&res);

	assert_int_equal(bisect_with(&f, "planted-commits", &p, hashes[0], hashes[NCOMMITS - 1], NULL, &res, &err),
			 -ELOOP);
	assert_int_equal(err.kind, VN_ERR_INPUT);
	assert_non_null(strstr(err.msg, "planted-commits/commits is a symlink"));
	assert_int_equal(f.runs, 0);
	_cleanup_free_ char *out_log = vn_xasprintf("%s/planted-commits/bisect.log", tmp);
	assert_int_equal(access(out_log, F_OK), -1);
	vn_error_clear(&err);
	vn_bisect_result_clear(&res);
	/* One commit's directory planted: found when that commit is to run (the bad endpoint, first). */
	char rel[64];
	snprintf(rel, sizeof(rel), "planted-hash/commits/%.12s", hashes[NCOMMITS - 1]);
	vn_test_put(tmp, "planted-hash/commits/.keep", "");
	_cleanup_free_ char *link3 = vn_xasprintf("%s/%s", tmp, rel);
	assert_int_equal(symlink(victim, link3), 0);
	assert_int_equal(bisect_with(&f, "planted-hash", &p, hashes[0], hashes[NCOMMITS - 1], NULL, &res, &err),
			 -ELOOP);
	assert_non_null(strstr(err.msg, "is a symlink"));
	assert_int_equal(f.runs, 0);
	vn_error_clear(&err);
	vn_bisect_result_clear(&res);
	/* The victim holds what it held. */
	DIR *d = opendir(victim);
	assert_non_null(d);
	unsigned n = 0;
	for (struct dirent *e; (e = readdir(d));)
		n += e->d_name[0] != '.';
	closedir(d);
	assert_int_equal(n, 0);
}

/* Two bisections into one OUT: the second is refused while the first holds it (exit 3: retry later). */
static void test_bisect_busy(void **state)
{
	(void)state;
	make_history();
	struct vn_bisect_policy p = policy();
	struct vn_bisect_result res;
	struct vn_error err = {0};
	struct fake f = {.first_bad = 5, .unbuildable = -1, .stop_after = -1};
	_cleanup_free_ char *dir = vn_xasprintf("%s/busy", tmp);

	vn_test_put(tmp, "busy/.keep", "");
	int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	assert_true(fd >= 0);
	assert_int_equal(flock(fd, LOCK_EX | LOCK_NB), 0);
	assert_int_equal(bisect_with(&f, "busy", &p, hashes[0], hashes[NCOMMITS - 1], NULL, &res, &err), -EBUSY);
	assert_int_equal(err.kind, VN_ERR_INFRA);
	assert_non_null(strstr(err.msg, "busy: another bisection is running in it"));
	assert_int_equal(f.runs, 0);
	_cleanup_free_ char *log = vn_xasprintf("%s/bisect.log", dir);
	assert_int_equal(access(log, F_OK), -1);
	vn_error_clear(&err);
	vn_bisect_result_clear(&res);
	close(fd);
	assert_int_equal(bisect_with(&f, "busy", &p, hashes[0], hashes[NCOMMITS - 1], NULL, &res, &err), 0);
	assert_string_equal(res.first_bad, hashes[5]);
	vn_bisect_result_clear(&res);
}

/* A log edited so that a bad commit comes before a good one: git has nothing to offer, and that is the log's fault. */
static void test_bisect_contradicting_log(void **state)
{
	(void)state;
	make_history();
	struct vn_bisect_policy p = policy();
	struct vn_bisect_result res;
	struct vn_error err = {0};
	struct fake f = {.first_bad = 9, .unbuildable = -1, .stop_after = -1};

	assert_int_equal(bisect_with(&f, "contra", &p, hashes[0], hashes[NCOMMITS - 1], NULL, &res, &err), 0);
	vn_bisect_result_clear(&res);
	_cleanup_free_ char *text = slurp("contra", "bisect.log");
	_cleanup_free_ char *edited =
		vn_xasprintf("%s{\"event\":\"mark\",\"commit\":\"%s\",\"mark\":\"good\",\"why\":\"by hand\"}\n"
			     "{\"event\":\"mark\",\"commit\":\"%s\",\"mark\":\"bad\",\"why\":\"by hand\"}\n",
			     text, hashes[5], hashes[2]);
	_cleanup_free_ char *path = vn_xasprintf("%s/contra.log", tmp);
	assert_int_equal(vn_file_write(path, edited), 0);
	unsigned runs = f.runs;
	assert_int_equal(bisect_with(&f, "contra-replayed", &p, hashes[0], hashes[NCOMMITS - 1], path, &res, &err),
			 -EINVAL);
	assert_int_equal(err.kind, VN_ERR_INPUT);
	if (!strstr(err.msg, "contra.log: its marks contradict each other: ") || !strstr(err.msg, "is marked bad"))
		fail_msg("%s", err.msg);
	assert_int_equal(f.runs, runs);
	vn_error_clear(&err);
	vn_bisect_result_clear(&res);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_judge_verdict),
		cmocka_unit_test(test_judge_metric),
		cmocka_unit_test(test_bisect_every_position),
		cmocka_unit_test(test_bisect_unbuildable),
		cmocka_unit_test(test_bisect_metric_and_flaky),
		cmocka_unit_test(test_bisect_resume_and_replay),
		cmocka_unit_test(test_bisect_refusals),
		cmocka_unit_test(test_bisect_build_disk_full),
		cmocka_unit_test(test_bisect_git_env),
		cmocka_unit_test(test_bisect_git_deadline),
		cmocka_unit_test(test_bisect_resume_other_start),
		cmocka_unit_test(test_bisect_planted_symlinks),
		cmocka_unit_test(test_bisect_busy),
		cmocka_unit_test(test_bisect_contradicting_log),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
