/*
 * vnuma compare: the statistics against closed forms and reference values,
 * the loader's errors, and the tables of tests/fixtures/compare/ against
 * golden files in tests/golden/compare/ (VN_UPDATE_GOLDEN=1 rewrites them).
 *
 * Reference p-values come from python3's standard library, by Simpson's
 * rule (200000 intervals) over Student's t density from 0 to |t|:
 *   p = 1 - 2 * integral, density exp(lgamma((v+1)/2) - lgamma(v/2)) / sqrt(v pi) * (1 + u^2/v)^(-(v+1)/2);
 * they agree with the closed forms for v = 1 and v = 2 to 1e-13.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <json-c/json.h>

#include "golden.h"
#include "compare/compare.h"
#include "compare/stats.h"
#include "report/html.h"
#include "util/alloc.h"
#include "util/cleanup.h"

#define near(a, b, tol) assert_true(fabs((a) - (b)) <= (tol))

static void test_summarize(void **state)
{
	const double x[] = {2, 4, 4, 4, 5, 5, 7, 9};
	const double tenth[] = {0.1, 0.1, 0.1};
	struct vn_stats s;

	vn_stats_summarize(x, 8, &s);
	assert_int_equal(s.n, 8);
	near(s.mean, 5, 1e-15);
	near(s.stddev, sqrt(32.0 / 7), 1e-15); /* n - 1, not n (that would be 2) */
	vn_stats_summarize(x, 1, &s);
	assert_true(s.mean == 2 && s.stddev == 0);
	vn_stats_summarize(x, 0, &s);
	assert_true(s.n == 0 && s.mean == 0 && s.stddev == 0);
	/* Repeats that all gave the same number: exactly that mean, exactly no spread. */
	vn_stats_summarize(tenth, 3, &s);
	assert_true(s.mean == 0.1 && s.stddev == 0);
}

static void test_betainc(void **state)
{
	/* Closed forms: I_x(a, 1) = x^a, I_x(1, b) = 1 - (1 - x)^b, I_1/2(a, a) = 1/2. */
	for (double x = 0.05; x < 1; x += 0.1) {
		near(vn_stats_betainc(3.5, 1, x), pow(x, 3.5), 1e-13);
		near(vn_stats_betainc(1, 7, x), 1 - pow(1 - x, 7), 1e-13);
	}
	for (double a = 0.5; a < 200; a *= 3)
		near(vn_stats_betainc(a, a, 0.5), 0.5, 1e-12);
	assert_true(vn_stats_betainc(2, 3, 0) == 0);
	assert_true(vn_stats_betainc(2, 3, 1) == 1);
	assert_true(vn_stats_betainc(2, 3, -1) == 0);
	assert_true(vn_stats_betainc(2, 3, NAN) == 0);
}

static void test_t_pvalue(void **state)
{
	/* df = 1 (Cauchy): 1 - 2/pi atan|t|; df = 2: 1 - |t| / sqrt(t^2 + 2). */
	near(vn_stats_t_pvalue(1, 1), 0.5, 1e-12);
	near(vn_stats_t_pvalue(-3, 1), 1 - 2 / M_PI * atan(3), 1e-12);
	near(vn_stats_t_pvalue(2, 2), 1 - 2 / sqrt(6), 1e-12);
	/* By integration (see the top of this file). */
	near(vn_stats_t_pvalue(2, 4.5), 0.10825790718110573, 1e-9);
	near(vn_stats_t_pvalue(2, 10), 0.07338803477074551, 1e-9);
	near(vn_stats_t_pvalue(0.5, 30), 0.6207230048851284, 1e-9);
	near(vn_stats_t_pvalue(6, 3), 0.009272714892281653, 1e-9);
	assert_true(vn_stats_t_pvalue(0, 5) == 1);
	assert_true(vn_stats_t_pvalue(INFINITY, 5) == 0);
	assert_true(vn_stats_t_pvalue(1e300, 5) >= 0);
}

static void welch_of(const double *a, size_t na, const double *b, size_t nb, struct vn_welch *w)
{
	struct vn_stats sa, sb;

	vn_stats_summarize(a, na, &sa);
	vn_stats_summarize(b, nb, &sb);
	vn_stats_welch(&sa, &sb, w);
}

static void test_welch(void **state)
{
	/*
	 * Wikipedia, "Welch's t-test", example 1 (15 and 15 values): t = 2.46,
	 * df = 25.0, p = 0.021; to more digits, by the integration above:
	 * t = 2.45535639828601, df = 24.98852929023142, p = 0.02137800146286184.
	 */
	const double a1[] = {27.5, 21.0, 19.0, 23.6, 17.0, 17.9, 16.9, 20.1, 21.9, 22.6, 23.1, 19.6, 19.0, 21.7, 21.4};
	const double a2[] = {27.1, 22.0, 20.8, 23.4, 23.4, 23.5, 25.8, 22.0, 24.8, 20.2, 21.9, 22.1, 22.9, 20.5, 24.4};
	/* The fixture's memfollow.bandwidth_mbps: unequal variances, df near 2. */
	const double bw_on[] = {1520.5, 1498.2, 1533.9}, bw_off[] = {1102.3, 1250.8, 980.6};
	const double same[] = {7, 7, 7}, other[] = {9, 9}, one[] = {3};
	const double zeros[] = {0, 0, 0}, migrated[] = {51203, 51180, 51195};
	struct vn_welch w;

	welch_of(a1, 15, a2, 15, &w);
	assert_true(w.defined);
	near(w.t, 2.45535639828601, 1e-10);
	near(w.df, 24.98852929023142, 1e-9);
	near(w.p, 0.02137800146286184, 1e-9);

	welch_of(bw_on, 3, bw_off, 3, &w);
	near(w.t, -5.15487854550694, 1e-10);
	near(w.df, 2.071018612507515, 1e-9);
	near(w.p, 0.03310906024256266, 1e-9);

	/*
	 * One side never varies: the other side's n - 1 degrees of freedom. With
	 * df = 2, p = 2 / (r (r + |t|)), r = sqrt(t^2 + 2), written so that it
	 * does not cancel (integration loses digits this far out).
	 */
	welch_of(migrated, 3, zeros, 3, &w);
	near(w.df, 2, 1e-12);
	double r = sqrt(w.t * w.t + 2);
	near(w.p / (2 / (r * (r + fabs(w.t)))), 1, 1e-9);
	near(w.p, 1.7340646362008573e-08, 1e-15);

	/* Neither varies: equal means p = 1, different ones p = 0 (documented in stats.h). */
	welch_of(same, 3, same, 3, &w);
	assert_true(w.defined && w.p == 1 && w.t == 0);
	welch_of(same, 3, other, 2, &w);
	assert_true(w.defined && w.p == 0);

	/* n = 1: no variance, no test. */
	welch_of(one, 1, same, 3, &w);
	assert_false(w.defined);
	welch_of(same, 3, one, 1, &w);
	assert_false(w.defined);
}

/* The fixtures are named relative to their folder, so that the golden files hold no absolute paths. */
static int setup_fixtures(void **state)
{
	const char *src = getenv("VN_SOURCE_DIR");
	char path[4096];

	snprintf(path, sizeof(path), "%s/tests/fixtures/compare", src ? src : ".");
	return chdir(path);
}

static void golden(const char *file, const char *got)
{
	vn_test_golden("compare", file, got, "the table");
}

static struct vn_compare *load_ok(const char *const *dirs, size_t n, bool force)
{
	struct vn_compare_opts o = {.force = force};
	struct vn_error err = {0};
	struct vn_compare *c = NULL;

	if (vn_compare_load(dirs, n, &o, &c, &err) < 0)
		fail_msg("load failed: %s", err.msg);
	return c;
}

static void load_fails(const char *const *dirs, size_t n, const char *want)
{
	struct vn_compare_opts o = {0};
	struct vn_error err = {0};
	struct vn_compare *c = NULL;

	assert_true(vn_compare_load(dirs, n, &o, &c, &err) < 0);
	assert_null(c);
	assert_int_equal(err.kind, VN_ERR_INPUT);
	if (strcmp(err.msg, want) != 0)
		fail_msg("error\n  %s\nwanted\n  %s", err.msg, want);
}

static void test_two_variants(void **state)
{
	const char *dirs[] = {"numa-ab"};
	_cleanup_compare_ struct vn_compare *c = load_ok(dirs, 1, false);

	assert_int_equal(c->nvariants, 2);
	assert_string_equal(c->variants[0].name, "balancing-on");
	assert_int_equal(c->repeats, 3);
	/* Balancing off migrates nothing: a clear, significant change. */
	const struct vn_compare_cell *m = vn_compare_find(c, "vmstat.numa_pages_migrated", "balancing-off");
	assert_non_null(m);
	assert_true(m->significant && m->has_p && m->p_value < 1e-6);
	near(m->change_pct, -100, 1e-12);
	const struct vn_compare_cell *b = vn_compare_find(c, "vmstat.numa_pages_migrated", "balancing-on");
	assert_true(b->n == 3 && !b->has_change && !b->has_p && !b->significant);
	/* pgfault moves by noise only. */
	const struct vn_compare_cell *pf = vn_compare_find(c, "vmstat.pgfault", "balancing-off");
	assert_true(pf->has_p && !pf->significant && pf->p_value > 0.3);
	/* A percentage changes in points. */
	const struct vn_compare_cell *lp = vn_compare_find(c, "memfollow.local_pct", "balancing-off");
	near(lp->change_abs, 12.4 - 99.0666666666667, 1e-9);
	assert_null(vn_compare_find(c, "vmstat.nope", "balancing-off"));
	assert_null(vn_compare_find(c, "vmstat.pgfault", "nope"));
	/* Significant rows first. */
	assert_true(c->rows[0].significant && !c->rows[c->nrows - 1].significant);

	_cleanup_free_ char *text = vn_compare_format_text(c, 0);
	_cleanup_free_ char *all = vn_compare_format_text(c, VN_COMPARE_ALL);
	_cleanup_free_ char *json = vn_compare_format_json(c);
	golden("numa-ab.txt", text);
	golden("numa-ab-all.txt", all);
	golden("numa-ab.json", json);
	assert_non_null(strstr(text, "2 rows where every variant's mean equals the base's hidden"));
	assert_null(strstr(text, "vmstat.pgalloc_normal"));
	assert_non_null(strstr(all, "vmstat.pgalloc_normal"));
}

/*
 * numa_balancing 1 against 2 on a tiered shape (fixture tier-ab): the
 * modeled time per tier is a row of the typed comparison like any metric,
 * and the model's tiers are a fact of each variant. By hand: memory_tier22
 * 0.53 -> 0.11 s (-0.42, -79.245%; sd 0.01 each side, Welch t = 51.4 on 4
 * df), memory_tier4 0.12 -> 0.31 s (+158.33%).
 */
static void test_tier_cost(void **state)
{
	const char *dirs[] = {"tier-ab"};
	_cleanup_compare_ struct vn_compare *c = load_ok(dirs, 1, false);
	(void)state;

	assert_int_equal(c->nvariants, 2);
	assert_string_equal(c->variants[0].name, "balancing-1");
	const struct vn_compare_cell *lo = vn_compare_find(c, "locality.memory_tier22.model_s", "balancing-2");
	assert_non_null(lo);
	near(lo->mean, 0.11, 1e-12);
	near(lo->change_abs, -0.42, 1e-12);
	near(lo->change_pct, -0.42 / 0.53 * 100, 1e-9);
	assert_true(lo->significant && lo->p_value < 1e-5);
	const struct vn_compare_cell *top = vn_compare_find(c, "locality.memory_tier4.model_s", "balancing-2");
	near(top->change_pct, 0.19 / 0.12 * 100, 1e-9);
	assert_true(top->significant);
	assert_non_null(c->variants[1].facts);
	assert_non_null(strstr(c->variants[1].facts, "memory tier per node (model) 4, 4, 22, 22"));
	_cleanup_free_ char *text = vn_compare_format_text(c, 0);
	assert_non_null(strstr(text, "locality.memory_tier22.model_s"));
	assert_non_null(strstr(text, "-79.2%"));
}

static void test_three_variants(void **state)
{
	const char *dirs[] = {"three-kernels"};
	_cleanup_compare_ struct vn_compare *c = load_ok(dirs, 1, false);

	assert_int_equal(c->nvariants, 3);
	assert_int_equal(c->variants[2].runs, 2);
	assert_int_equal(c->variants[2].complete, 1);
	/* n = 1 against n = 2: a change, but no test. */
	const struct vn_compare_cell *m = vn_compare_find(c, "vmstat.numa_pages_migrated", "fallback-revert");
	assert_true(m->n == 1 && m->has_change && !m->has_p && !m->significant);
	_cleanup_free_ char *text = vn_compare_format_text(c, 0);
	_cleanup_free_ char *json = vn_compare_format_json(c);
	golden("three-kernels.txt", text);
	golden("three-kernels.json", json);
	assert_non_null(strstr(text, "n=1 of 2 runs complete"));
}

static void test_single_runs(void **state)
{
	const char *dirs[] = {"run-a", "run-b"};
	_cleanup_compare_ struct vn_compare *c = load_ok(dirs, 2, false);

	/* Both say "default": the second is named after its directory. */
	assert_string_equal(c->variants[0].name, "default");
	assert_string_equal(c->variants[1].name, "run-b");
	_cleanup_free_ char *text = vn_compare_format_text(c, 0);
	golden("single-runs.txt", text);
}

/*
 * Each of c's notes is in text from the start of a line, on lines of at most
 * 100 columns, the later ones indented by two; joined again they are the
 * note. compare.json's "notes" are the same strings. Returns how many.
 */
static size_t check_notes(const struct vn_compare *c, const char *text, const char *json)
{
	char *notes[VN_COMPARE_NOTES_MAX];
	size_t n = vn_compare_notes(c, notes);
	json_object *o = json_tokener_parse(json), *arr = NULL;

	assert_true(json_object_object_get_ex(o, "notes", &arr));
	assert_int_equal(json_object_array_length(arr), n);
	for (size_t i = 0; i < n; i++) {
		assert_string_equal(json_object_get_string(json_object_array_get_idx(arr, i)), notes[i]);
		char head[32], joined[2048] = "";
		snprintf(head, sizeof(head), "%s", notes[i]);
		const char *p = strstr(text, head);
		assert_non_null(p);
		assert_true(p == text || p[-1] == '\n');
		for (bool first = true; first || strncmp(p, "  ", 2) == 0; first = false) {
			const char *end = strchr(p, '\n');
			assert_non_null(end);
			assert_true(end - p <= 100);
			const char *from = first ? p : p + 2;
			snprintf(joined + strlen(joined), sizeof(joined) - strlen(joined), "%s%.*s", first ? "" : " ",
				 (int)(end - from), from);
			p = end + 1;
		}
		assert_string_equal(joined, notes[i]);
		free(notes[i]);
	}
	json_object_put(o);
	return n;
}

static void test_force(void **state)
{
	const char *dirs[] = {"run-a", "run-4node", "run-kvm"};
	_cleanup_compare_ struct vn_compare *c = load_ok(dirs, 3, true);

	assert_string_equal(c->topology, "2node, 4node-amd");
	assert_string_equal(c->accelerator, "tcg, kvm");
	assert_string_equal(c->time, "real"); /* no "time": real time, as before it was written */
	_cleanup_free_ char *text = vn_compare_format_text(c, 0);
	golden("forced.txt", text);
	const char *vt[] = {"run-a", "run-virtual"};
	_cleanup_compare_ struct vn_compare *v = load_ok(vt, 2, true);
	assert_string_equal(v->time, "real, virtual");
	/* A group's runs in virtual time: group.json names no clock, so it is not read as real time. */
	const char *vg[] = {"virtual-group"};
	_cleanup_compare_ struct vn_compare *g = load_ok(vg, 1, false);
	assert_string_equal(g->time, "virtual");
	/* Beneath a table in virtual time: what its rates cannot show. Not beneath one in real time. */
	_cleanup_free_ char *vtext = vn_compare_format_text(g, 0), *mixed = vn_compare_format_text(v, 0);
	assert_non_null(strstr(vtext, "Virtual time: every vCPU runs on one stream of instructions"));
	assert_non_null(strstr(mixed, "Virtual time: every vCPU runs on one stream of instructions"));
	assert_null(strstr(text, "one stream of instructions"));
	_cleanup_free_ char *vjson = vn_compare_format_json(g);
	assert_int_equal(check_notes(g, vtext, vjson), 2); /* chance's, then virtual time's */
}

static void test_errors(void **state)
{
	const char *topo[] = {"run-a", "run-4node"}, *accel[] = {"run-a", "run-kvm"}, *vt[] = {"run-virtual", "run-a"},
		   *metric[] = {"run-a", "bad-metric"};
	const char *dir[] = {"bad-dir"}, *single[] = {"run-a"}, *missing[] = {"run-a", "no-such-dir"};

	load_fails(topo, 2,
		   "run-4node/result.json: $.topology: \"4node-amd\", but run-a/result.json has \"2node\": results of "
		   "different topologies do not compare (--force compares them anyway)");
	load_fails(
		accel, 2,
		"run-kvm/result.json: $.accelerator: \"kvm\", but run-a/result.json has \"tcg\": results of different "
		"accelerators do not compare (--force compares them anyway)");
	load_fails(vt, 2,
		   "run-a/result.json: $.time: \"real\", but run-virtual/result.json has \"virtual\": results of "
		   "different clocks (real or virtual time) do not compare (--force compares them anyway)");

	/* run-a, from before architectures, has no "arch": the one from an arm64 run is the first seen. */
	const char *arches[] = {"run-arm64", "run-a-x86"};
	load_fails(arches, 2,
		   "run-a-x86/result.json: $.arch: \"x86_64\", but run-arm64/result.json has \"arm64\": results of "
		   "different architectures do not compare (--force compares them anyway)");
	load_fails(metric, 2, "bad-metric/result.json: $.metrics[\"vmstat.pgfault\"]: expected a number, got \"lots\"");
	load_fails(
		dir, 1,
		"bad-dir/group.json: $.runs[0].dir: \"../run-a\" is not a directory inside the group (names joined by "
		"'/', no '..')");
	load_fails(single, 1,
		   "run-a: one run has nothing to compare with: give a result group, or two or more run directories");
	load_fails(missing, 2,
		   "no-such-dir: neither a result group (no group.json) nor a run directory (no result.json)");
	load_fails(NULL, 0, "nothing to compare: give a result group, or two or more run directories");
}

/* group.json with n variants v0..v(n-1) (the last one named dup when given) and one run of variant run_of, or none. */
static void write_names_group(const char *dir, unsigned n, const char *dup, const char *run_of)
{
	char path[256];

	snprintf(path, sizeof(path), "%s/group.json", dir);
	FILE *f = fopen(path, "w");
	assert_non_null(f);
	fprintf(f, "{\"scenario\": \"s\", \"topology\": \"2node\", \"accelerator\": \"tcg\", \"variants\": [");
	for (unsigned i = 0; i < n; i++)
		if (dup && i == n - 1)
			fprintf(f, "%s{\"name\": \"%s\"}", i ? ", " : "", dup);
		else
			fprintf(f, "%s{\"name\": \"v%u\"}", i ? ", " : "", i);
	fprintf(f, "], \"runs\": [");
	if (run_of)
		fprintf(f, "{\"variant\": \"%s\", \"dir\": \"r\"}", run_of);
	fprintf(f, "]}\n");
	fclose(f);
}

/* Many variants: names stay unique and duplicates are found, by a map now, not by a scan per variant. */
static void test_many_variants(void **state)
{
	char dir[] = "/tmp/vn-compare-XXXXXX", want[512];

	assert_non_null(mkdtemp(dir));
	const char *once[] = {dir}, *thrice[] = {dir, dir, dir};
	write_names_group(dir, 3000, "v1234", NULL);
	snprintf(want, sizeof(want), "%s/group.json: $.variants[2999].name: \"v1234\" is listed twice", dir);
	load_fails(once, 1, want);

	write_names_group(dir, 3000, NULL, "w");
	snprintf(want, sizeof(want), "%s/group.json: $.runs[0].variant: \"w\" is not one of $.variants", dir);
	load_fails(once, 1, want);

	/* The same group three times: the second's names fall back to GROUP/NAME, the third's to GROUP/NAME-2. */
	write_names_group(dir, 3000, NULL, NULL);
	_cleanup_compare_ struct vn_compare *c = load_ok(thrice, 3, false);
	const char *base = strrchr(dir, '/') + 1;
	char name[64];
	assert_int_equal(c->nvariants, 9000);
	assert_string_equal(c->variants[2999].name, "v2999");
	snprintf(name, sizeof(name), "%s/v7", base);
	assert_string_equal(c->variants[3007].name, name);
	snprintf(name, sizeof(name), "%s/v2999-2", base);
	assert_string_equal(c->variants[8999].name, name);
	for (size_t i = 1; i < c->nvariants; i += 997)
		assert_string_not_equal(c->variants[i].name, c->variants[i - 1].name);

	char cmd[256];
	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	assert_int_equal(system(cmd), 0);
}

/* Values near +-DBL_MAX: sums in units of the largest, and what still passes DBL_MAX is "-", never significant. */
static void test_huge(void **state)
{
	const char *dirs[] = {"huge"};
	_cleanup_compare_ struct vn_compare *c = load_ok(dirs, 1, false);
	const struct vn_compare_cell *x;

	/* 1e308 against -1e308: a change past DBL_MAX, once "-inf%" and significant (no spread, means differ). */
	x = vn_compare_find(c, "huge.opposite", "other");
	assert_true(x->has_change && !isfinite(x->change_abs));
	assert_false(x->has_p || x->significant);
	/* {1e308, -1e308}: mean 0, stddev sqrt(2) 1e308, once a mean of -inf and a NaN stddev. */
	x = vn_compare_find(c, "huge.spread", "base");
	assert_true(x->mean == 0);
	near(x->stddev / 1e308, sqrt(2), 1e-14);
	x = vn_compare_find(c, "huge.spread", "other");
	assert_true(x->has_p && x->p_value == 1 && !x->significant);
	/* A spread whose square passes DBL_MAX: Welch's in units of it; once p = 0 (significant) from a NaN df. */
	x = vn_compare_find(c, "huge.spread_shift", "other");
	near(x->mean / 1e308, 0.5, 1e-14);
	near(x->stddev / 1e308, sqrt(2), 1e-14);
	near(x->change_pct, 900, 1e-9);
	assert_true(x->has_p && !x->significant);
	/* t = 0.45 / sqrt(1.805 / 2 + 1) = 0.3264..., df = 1.994...: by vn_stats_t_pvalue on those. */
	near(x->p_value, vn_stats_t_pvalue(0.45 / sqrt(0.9025 + 1), pow(0.9025 + 1, 2) / (0.9025 * 0.9025 + 1)), 1e-12);
	/* 1e10 from 1e-300: a percentage past DBL_MAX. */
	x = vn_compare_find(c, "huge.tiny_base", "other");
	assert_true(x->has_pct && !isfinite(x->change_pct));
	assert_false(x->has_p || x->significant);
	/* {DBL_MAX, -0.99 DBL_MAX}: a stddev truly past DBL_MAX, so no test. */
	x = vn_compare_find(c, "huge.sd_max", "base");
	assert_true(isfinite(x->mean) && x->mean > 0 && !isfinite(x->stddev));
	x = vn_compare_find(c, "huge.sd_max", "other");
	assert_false(x->has_p || x->significant);
	/* The one real change. */
	assert_true(vn_compare_find(c, "huge.normal", "other")->significant);
	assert_true(c->rows[0].significant && strcmp(c->rows[0].metric, "huge.normal") == 0);
	assert_false(c->rows[1].significant);

	_cleanup_free_ char *text = vn_compare_format_text(c, VN_COMPARE_ALL);
	_cleanup_free_ char *json = vn_compare_format_json(c);
	golden("huge.txt", text);
	golden("huge.json", json);
	assert_null(strstr(text, "inf"));
	assert_null(strstr(text, "nan"));
	assert_null(strstr(json, "inf"));
	assert_null(strstr(json, "nan"));
}

/* The runner's call: compare.txt and compare.json beside group.json; a run without result.json is incomplete. */
static void test_write_group(void **state)
{
	char dir[] = "/tmp/vn-compare-XXXXXX", cmd[256], path[256];
	struct vn_error err = {0};
	struct vn_compare *c = NULL;

	assert_non_null(mkdtemp(dir));
	snprintf(cmd, sizeof(cmd), "cp -r numa-ab/. %s/ && rm %s/balancing-off/2/result.json", dir, dir);
	assert_int_equal(system(cmd), 0);
	assert_int_equal(vn_compare_write_group(dir, &c, &err), 0);
	assert_int_equal(c->variants[1].runs, 3);
	assert_int_equal(c->variants[1].complete, 2);
	assert_true(vn_compare_find(c, "vmstat.numa_pages_migrated", "balancing-off")->significant);

	_cleanup_free_ char *text = vn_compare_format_text(c, 0), *json = vn_compare_format_json(c);
	snprintf(path, sizeof(path), "%s/compare.txt", dir);
	_cleanup_free_ char *t = vn_test_read_all(path);
	snprintf(path, sizeof(path), "%s/compare.json", dir);
	_cleanup_free_ char *j = vn_test_read_all(path);
	assert_non_null(t);
	assert_non_null(j);
	assert_string_equal(t, text);
	assert_string_equal(j, json);
	assert_non_null(strstr(t, "n=2 of 3 runs complete"));
	vn_compare_free(c);

	/* One run directory is no group. */
	snprintf(path, sizeof(path), "%s/balancing-on/1", dir);
	assert_true(vn_compare_write_group(path, NULL, &err) < 0);
	assert_int_equal(err.kind, VN_ERR_INPUT);
	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	assert_int_equal(system(cmd), 0);
}

/*
 * A run directory in a group that is, or passes through, a symlink (planted
 * in a reused group, to another run elsewhere) is refused, not read as this
 * group's run; so is a result.json that is one.
 */
static void test_symlinked_run_dir(void **state)
{
	const char *setups[] = {
		"rm -r $D/balancing-off/2 && ln -s $S/numa-ab/balancing-off/1 $D/balancing-off/2",
		"mv $D/balancing-off $D/real && ln -s real $D/balancing-off",
		"rm $D/balancing-off/2/result.json && ln -s $S/numa-ab/balancing-off/1/result.json "
		"$D/balancing-off/2/result.json",
	};
	char cwd[2048];

	assert_non_null(getcwd(cwd, sizeof(cwd)));
	for (size_t i = 0; i < sizeof(setups) / sizeof(setups[0]); i++) {
		char dir[] = "/tmp/vn-compare-XXXXXX", cmd[8192];
		struct vn_compare_opts o = {0};
		struct vn_error err = {0};
		struct vn_compare *c = NULL;

		assert_non_null(mkdtemp(dir));
		snprintf(cmd, sizeof(cmd), "cp -r numa-ab/. %s/", dir);
		assert_int_equal(system(cmd), 0);
		snprintf(cmd, sizeof(cmd), "D=%s S=%s; %s", dir, cwd, setups[i]);
		assert_int_equal(system(cmd), 0);
		const char *dirs[] = {dir};
		assert_true(vn_compare_load(dirs, 1, &o, &c, &err) < 0);
		assert_null(c);
		assert_int_equal(err.kind, VN_ERR_INPUT);
		if (!strstr(err.msg, "is or passes through a symlink"))
			fail_msg("setup %zu: %s", i, err.msg);
		snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
		assert_int_equal(system(cmd), 0);
	}
}

/* Copies fixture run from to DIR/to with these members added after "topology": a run of another machine. */
static void shared_run(const char *dir, const char *from, const char *to, const char *members)
{
	char cmd[1024];

	snprintf(cmd, sizeof(cmd),
		 "mkdir -p %s/%s && sed 's/^  \"topology\": \"2node\",/&%s/' %s/result.json > %s/%s/result.json", dir,
		 to, members, from, dir, to);
	assert_int_equal(system(cmd), 0);
}

/*
 * Real-time runs with more vCPUs than their host had CPUs: compare says
 * beneath the table (and in compare.json) that placement's cost is muted,
 * naming the run with the most vCPUs per host CPU; virtual time, a host
 * with CPUs enough, or a result from before these keys say nothing.
 */
static void test_shared_cpus(void **state)
{
	char dir[] = "/tmp/vn-compare-XXXXXX", a[128], b[128], v[128], cmd[256];

	assert_non_null(mkdtemp(dir));
	snprintf(a, sizeof(a), "%s/a", dir);
	snprintf(b, sizeof(b), "%s/b", dir);
	snprintf(v, sizeof(v), "%s/v", dir);
	shared_run(dir, "run-a", "a", " \"vcpus\": 4, \"host_cpus\": 2,");
	shared_run(dir, "run-b", "b", " \"vcpus\": 8, \"host_cpus\": 2,");
	const char *ab[] = {a, b};
	_cleanup_compare_ struct vn_compare *c = load_ok(ab, 2, false);
	assert_true(vn_compare_shared_cpus(c));
	assert_int_equal(c->shared_vcpus, 8);
	assert_int_equal(c->shared_host_cpus, 2);
	_cleanup_free_ char *text = vn_compare_format_text(c, 0), *json = vn_compare_format_json(c);
	assert_non_null(strstr(text, "Real time, 8 vCPUs on 2 host CPUs: once more than 2 vCPUs are busy they share"));
	check_notes(c, text, json);
	assert_non_null(strstr(json, "\"shared_cpus\":{\n    \"vcpus\":8,\n    \"host_cpus\":2\n  }"));

	/* Hosts with a CPU for every vCPU; a run in virtual time; a result from before the keys: nothing said. */
	shared_run(dir, "run-a", "a", " \"vcpus\": 2, \"host_cpus\": 2,");
	shared_run(dir, "run-b", "b", " \"vcpus\": 4, \"host_cpus\": 4,");
	_cleanup_compare_ struct vn_compare *enough = load_ok(ab, 2, false);
	shared_run(dir, "run-virtual", "v", " \"vcpus\": 8, \"host_cpus\": 2,");
	const char *av[] = {a, v};
	_cleanup_compare_ struct vn_compare *virt = load_ok(av, 2, true);
	shared_run(dir, "run-a", "a", "");
	_cleanup_compare_ struct vn_compare *old = load_ok(ab, 2, false);
	_cleanup_free_ char *t1 = vn_compare_format_text(enough, 0), *t2 = vn_compare_format_text(virt, 0),
			    *j2 = vn_compare_format_json(virt);
	assert_false(vn_compare_shared_cpus(enough));
	assert_false(vn_compare_shared_cpus(virt));
	assert_false(vn_compare_shared_cpus(old));
	assert_null(strstr(t1, "host CPUs"));
	assert_null(strstr(t2, "host CPUs"));
	assert_null(strstr(j2, "shared_cpus"));

	/* A forced table of real and virtual runs gets both notes, each on lines of its own. */
	shared_run(dir, "run-a", "a", " \"vcpus\": 8, \"host_cpus\": 2,");
	_cleanup_compare_ struct vn_compare *both = load_ok(av, 2, true);
	_cleanup_free_ char *tb = vn_compare_format_text(both, 0), *jb = vn_compare_format_json(both);
	assert_true(check_notes(both, tb, jb) >= 2);
	assert_true(strstr(tb, "\nVirtual time: ") < strstr(tb, "\nReal time, 8 vCPUs on 2 host CPUs:"));

	/* Someone else's result.json: the counts are checked. */
	shared_run(dir, "run-b", "b", " \"vcpus\": 0, \"host_cpus\": 2,");
	struct vn_compare_opts o = {0};
	struct vn_error err = {0};
	struct vn_compare *bad = NULL;
	assert_true(vn_compare_load(ab, 2, &o, &bad, &err) < 0);
	assert_non_null(strstr(err.msg, "b/result.json: $.vcpus: "));
	assert_non_null(strstr(err.msg, "an integer from 1 to 1048576"));
	shared_run(dir, "run-b", "b", " \"vcpus\": 8, \"host_cpus\": \"2\",");
	vn_error_clear(&err);
	assert_true(vn_compare_load(ab, 2, &o, &bad, &err) < 0);
	assert_non_null(strstr(err.msg, "b/result.json: $.host_cpus: "));
	vn_error_clear(&err);
	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	assert_int_equal(system(cmd), 0);
}

/*
 * A group's report.html, byte for byte, against tests/golden/report/group.html:
 * the report fixture's group, its comparison made as a matrix makes it.
 */
static void test_group_page_golden(void **state)
{
	char dir[64] = "/tmp/vn-test-group-page-XXXXXX", cmd[256];
	struct vn_error err = {0};
	struct vn_compare *cmp = NULL;
	(void)state;

	assert_non_null(mkdtemp(dir));
	snprintf(cmd, sizeof(cmd), "cp -r ../report/group/. %s && rm %s/compare.json", dir, dir);
	assert_int_equal(system(cmd), 0);
	if (vn_compare_write_group(dir, &cmp, &err) < 0 || vn_compare_html_write(dir, NULL, cmp, &err) < 0)
		fail_msg("%s", err.msg);
	_cleanup_free_ char *path = vn_xasprintf("%s/report.html", dir);
	_cleanup_free_ char *html = vn_test_read_all(path);
	assert_non_null(html);
	vn_test_golden("report", "group.html", html, "a group's report.html");
	vn_compare_free(cmp);
	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	assert_int_equal(system(cmd), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_summarize),      cmocka_unit_test(test_betainc),
		cmocka_unit_test(test_t_pvalue),       cmocka_unit_test(test_welch),
		cmocka_unit_test(test_two_variants),   cmocka_unit_test(test_tier_cost),
		cmocka_unit_test(test_three_variants), cmocka_unit_test(test_single_runs),
		cmocka_unit_test(test_force),          cmocka_unit_test(test_errors),
		cmocka_unit_test(test_write_group),    cmocka_unit_test(test_symlinked_run_dir),
		cmocka_unit_test(test_many_variants),  cmocka_unit_test(test_huge),
		cmocka_unit_test(test_shared_cpus),    cmocka_unit_test(test_group_page_golden),
	};
	return cmocka_run_group_tests(tests, setup_fixtures, NULL);
}
