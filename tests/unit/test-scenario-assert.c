/*
 * Assertion evaluation on a hand-made run: every type, passing and failing,
 * with the observed value it must report.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "compare/compare.h"
#include "report/html.h"
#include "scenario/run-priv.h"
#include "scenario/runner.h"
#include "testutil-xml.h"
#include "util/alloc.h"
#include "util/dir.h"
#include "util/file.h"
#include "util/json.h"

static const char topo[] = "<topology name='t'><node id='0' cpus='0' memory='64M'/><node id='1' cpus='1' memory='64M'/>"
			   "<distances><row node='0'>10 21</row><row node='1'>21 10</row></distances></topology>";

static const char scn[] =
	"{\"name\":\"t\",\"topology\":\"2node\",\"steps\":[{\"name\":\"mf\",\"workload\":\"memfollow\",\"processes\":2}"
	"],"
	"\"assertions\":["
	"{\"type\":\"fallback\"},"
	"{\"type\":\"fallback\",\"model\":\"pre-5.15\",\"name\":\"old model\"},"
	"{\"type\":\"distances\"},"
	"{\"type\":\"counter\",\"counter\":\"numa_pages_migrated\",\"op\":\">\",\"value\":0},"
	"{\"type\":\"counter\",\"counter\":\"no_such_counter\",\"op\":\">\",\"value\":0},"
	"{\"type\":\"ratio\",\"numerator\":\"numa_hint_faults_local\",\"denominator\":\"numa_hint_faults\",\"op\":\">="
	"\","
	"\"value\":0.5},"
	"{\"type\":\"memory_follows\",\"step\":\"mf\",\"fraction\":0.7,\"within_s\":10},"
	"{\"type\":\"memory_follows\",\"step\":\"mf\",\"fraction\":0.9,\"within_s\":10,\"name\":\"follows 0.9\"},"
	"{\"type\":\"running_per_node\",\"step\":\"mf\",\"tolerance\":0.5},"
	"{\"type\":\"metric\",\"step\":\"mf\",\"path\":\"kernels.triad.best_mbps\",\"op\":\">\",\"value\":100},"
	"{\"type\":\"metric\",\"step\":\"mf\",\"path\":\"list.1.x\",\"op\":\"==\",\"value\":7},"
	"{\"type\":\"memory_on_node\",\"step\":\"mf\",\"node\":1,\"fraction\":0.7}"
	"]}";

/* pid 100: 1000 kB on node 0, 3000 on node 1 at t=... ; uptime U. */
#define LINE(U, A0, A1)                                                                                              \
	"{\"seq\":0,\"t\":" #U ",\"uptime\":" #U ",\"vmstat\":{\"nr_free_pages\":10},"                               \
	"\"nodes\":[{\"node\":0,\"numastat\":{},\"meminfo\":{}},{\"node\":1,\"numastat\":{},\"meminfo\":{}}],"       \
	"\"procs\":[{\"pid\":100,\"comm\":\"vnuma-wl-memfollow\",\"mem_kb_per_node\":{\"0\":" #A0 ",\"1\":" #A1 "}," \
	"\"threads\":[{\"tid\":100,\"cpu\":1,\"node\":1,\"state\":\"R\"}]}],"                                        \
	"\"running_per_node\":{\"0\":0,\"1\":1},\"cost\":{\"cpu_s\":0.002,\"wall_s\":0.003}}\n"

static json_object *kv(const char *json)
{
	return json_tokener_parse(json);
}

static const struct vn_verdict *find(const struct vn_result_run *r, const char *prefix)
{
	for (unsigned i = 0; i < r->nverdicts; i++)
		if (strncmp(r->verdicts[i].name, prefix, strlen(prefix)) == 0)
			return &r->verdicts[i];
	fail_msg("no verdict named %s...", prefix);
	return NULL;
}

/* A topology and a scenario parsed from text, owned together. */
struct loaded {
	struct vn_topology *t;
	struct vn_scenario *s;
};

static struct loaded load(const char *topo_xml, const char *topo_name, const char *scn_json, const char *scn_name)
{
	struct loaded l = {0};
	struct vn_error err = {0};

	if (vn_topology_parse(topo_xml, strlen(topo_xml), topo_name, &l.t, &err) < 0 ||
	    vn_scenario_parse(scn_json, scn_name, &l.s, &err) < 0)
		fail_msg("%s", err.msg);
	return l;
}

static void loaded_free(struct loaded *l)
{
	vn_scenario_free(l->s);
	vn_topology_free(l->t);
}

static void test_every_type(void **state)
{
	struct loaded l = load(topo, "t.xml", scn, "t.json");
	struct vn_error err = {0};
	struct vn_run_data d = {.s = l.s, .t = l.t};
	struct vn_result_run r = {0};
	struct vn_run_step_data steps[1] = {{0}};

	d.vmstat_before = kv("{\"numa_pages_migrated\":5,\"numa_hint_faults\":100,\"numa_hint_faults_local\":10}");
	d.vmstat_after = kv("{\"numa_pages_migrated\":900,\"numa_hint_faults\":200,\"numa_hint_faults_local\":50}");
	d.dmesg = strdup("[0.0] Fallback order for Node 0: 0 1 \n[0.0] Fallback order for Node 1: 1 0 \n");
	d.distances[0] = strdup("10 21\n");
	d.distances[1] = strdup("21 11\n"); /* the guest disagrees */
	/* Moved at uptime 10: 60% local after 2 s, 80% after 4 s, never 90%. */
	assert_int_equal(vn_samples_parse(LINE(9, 0, 4000) LINE(12, 1600, 2400) LINE(14, 3200, 800) LINE(30, 4000, 0),
					  "samples.jsonl", &d.samples, &err),
			 0);
	struct vn_run_move moves[1];
	json_object *results[2];
	d.nmoves = 1;
	d.moves = moves;
	d.moves[0] = (struct vn_run_move){.step = 0, .to_node = 0, .uptime = 10, .npids = 1, .pids = {100}};
	steps[0].npids = 1;
	steps[0].pids[0] = 100;
	steps[0].nresults = 2;
	steps[0].results = results;
	steps[0].results[0] = kv("{\"kernels\":{\"triad\":{\"best_mbps\":150}},\"list\":[{\"x\":1},{\"x\":7}]}");
	steps[0].results[1] = kv("{\"kernels\":{\"triad\":{\"best_mbps\":50}},\"list\":[{\"x\":1},{\"x\":7}]}");
	d.steps = steps;

	assert_int_equal(vn_scenario_assert(&d, &r, &err), 0);
	assert_int_equal(r.nverdicts, l.s->nasserts);

	assert_true(find(&r, "fallback order matches model 5.18")->pass);
	const struct vn_verdict *old = find(&r, "old model");
	assert_true(old->pass); /* two nodes: every era agrees */
	const struct vn_verdict *dist = find(&r, "guest distances");
	assert_false(dist->pass);
	assert_non_null(strstr(dist->detail, "node 1: expected 21 10, guest 21 11"));
	const struct vn_verdict *c = find(&r, "counter numa_pages_migrated");
	assert_true(c->pass);
	assert_string_equal(c->observed, "895");
	const struct vn_verdict *missing = find(&r, "counter no_such_counter");
	assert_false(missing->pass);
	assert_non_null(strstr(missing->observed, "not in /proc/vmstat"));
	const struct vn_verdict *ratio = find(&r, "ratio");
	assert_false(ratio->pass); /* 40 / 100 = 0.4 < 0.5 */
	assert_non_null(strstr(ratio->observed, "0.4000 (40 / 100)"));
	const struct vn_verdict *fol = find(&r, "memory of mf follows");
	assert_true(fol->pass);
	/* What the sample at 4 s saw (0.8), not the fraction asked for (0.7). */
	assert_string_equal(fol->observed, "0.800 on node 0 after 4.0 s (best 0.800 within 10 s)");
	assert_false(find(&r, "follows 0.9")->pass); /* 100% only at t+20 s, outside the window */
	const struct vn_verdict *run = find(&r, "running threads");
	assert_true(run->pass);
	const struct vn_verdict *m = find(&r, "metric mf kernels.triad.best_mbps");
	assert_false(m->pass); /* one process of two is below */
	assert_non_null(strstr(m->observed, "150, 50"));
	assert_true(find(&r, "metric mf list.1.x")->pass);
	const struct vn_verdict *on = find(&r, "memory of mf on node 1");
	assert_false(on->pass); /* the last sample has it all on node 0 */
	assert_non_null(strstr(on->observed, "0.000 on node 1"));

	vn_result_clear(&r);
	json_object_put(steps[0].results[0]);
	json_object_put(steps[0].results[1]);
	json_object_put(d.vmstat_before);
	json_object_put(d.vmstat_after);
	free((char *)d.dmesg);
	free((char *)d.distances[0]);
	free((char *)d.distances[1]);
	vn_samples_free(&d.samples);
	loaded_free(&l);
}

/* Change assertions of a matrix, judged from a real comparison (the compare fixture group numa-ab). */
/* The locality assertion: the run's figures, a lone step's, one CPU node's, and none (locality off). */
static void test_locality(void **state)
{
	static const char s_json[] =
		"{\"name\": \"l\", \"topology\": \"t.xml\", \"locality\": true,"
		" \"steps\": [{\"name\": \"a\", \"workload\": \"stream\"}],"
		" \"assertions\": ["
		"  {\"type\": \"locality\", \"name\": \"run\", \"measure\": \"remote_fraction.user\", \"op\": \">=\", "
		"\"value\": 0.5},"
		"  {\"type\": \"locality\", \"name\": \"row\", \"measure\": \"remote_fraction.user\", \"cpu_node\": 1,"
		"   \"op\": \"<=\", \"value\": 0.05},"
		"  {\"type\": \"locality\", \"name\": \"step\", \"step\": \"a\", \"measure\": \"remote_fraction.all\","
		"   \"op\": \">\", \"value\": 0.9},"
		"  {\"type\": \"locality\", \"name\": \"model\", \"measure\": \"model_s\", \"op\": \"<\", \"value\": "
		"1}]}";
	struct loaded l = load(topo, "t.xml", s_json, "l.json");
	struct vn_error err = {0};
	struct vn_run_data d = {.s = l.s, .t = l.t};
	struct vn_result_run r = {0};
	struct vn_run_step_data steps[1] = {{0}};
	double lat[4] = {100, 210, 210, 100};
	d.steps = steps;

	/* Locality off: not judged, an infrastructure error naming the way to turn it on. */
	assert_int_not_equal(vn_scenario_assert(&d, &r, &err), 0);
	assert_non_null(strstr(err.msg, "--locality"));
	vn_result_clear(&r);
	vn_error_clear(&err);

	d.loc_have = true;
	d.loc_lat_ns = lat;
	vn_loc_counts_init(&d.loc, 2);
	*vn_loc_at(&d.loc, 0, 1, VN_LOC_USER_STORE) = 900; /* node 0's CPUs, remote */
	*vn_loc_at(&d.loc, 1, 1, VN_LOC_USER_LOAD) = 100;  /* node 1's, local */
	/* The step did not run alone: its assertion cannot be judged. */
	assert_int_not_equal(vn_scenario_assert(&d, &r, &err), 0);
	assert_non_null(strstr(err.msg, "step a has no locality counts"));
	vn_result_clear(&r);
	vn_error_clear(&err);

	struct vn_loc_counts st[1];
	vn_loc_counts_init(&st[0], 2);
	*vn_loc_at(&st[0], 0, 1, VN_LOC_KERNEL_LOAD) = 95;
	*vn_loc_at(&st[0], 0, 0, VN_LOC_KERNEL_LOAD) = 5;
	d.loc_steps = st;
	assert_int_equal(vn_scenario_assert(&d, &r, &err), 0);
	assert_true(find(&r, "run")->pass);   /* 0.9 >= 0.5 */
	assert_true(find(&r, "row")->pass);   /* node 1: 0 of 100 remote */
	assert_true(find(&r, "step")->pass);  /* 0.95 > 0.9 */
	assert_true(find(&r, "model")->pass); /* 900 x 210 + 100 x 100 ns */
	assert_float_equal(find(&r, "model")->value, 199000e-9, 1e-15);
	vn_result_clear(&r);
	vn_loc_counts_clear(&st[0]);
	vn_loc_counts_clear(&d.loc);
	loaded_free(&l);
}

static void test_change_against_base(void **state)
{
	(void)state;
	static const char m[] =
		"{\"name\":\"m\",\"topology\":\"2node\",\"steps\":[{\"name\":\"mf\",\"workload\":\"memfollow\"}],"
		"\"variants\":[{\"name\":\"balancing-on\"},{\"name\":\"balancing-off\"}],\"assertions\":["
		"{\"type\":\"change\",\"name\":\"migrations drop\",\"metric\":\"vmstat.numa_pages_migrated\","
		"\"op\":\"<=\",\"value\":-50},"
		"{\"type\":\"change\",\"name\":\"migrations hold\",\"metric\":\"vmstat.numa_pages_migrated\","
		"\"variant\":\"balancing-off\",\"op\":\">=\",\"value\":-5},"
		"{\"type\":\"change\",\"name\":\"duration within 1%\",\"metric\":\"run.duration_s\",\"op\":\">=\","
		"\"value\":1,\"significant\":true},"
		"{\"type\":\"change\",\"name\":\"duration up 1%\",\"metric\":\"run.duration_s\",\"op\":\">=\","
		"\"value\":1},"
		"{\"type\":\"change\",\"name\":\"duration within 10%\",\"metric\":\"run.duration_s\",\"op\":\">=\","
		"\"value\":10,\"significant\":true},"
		"{\"type\":\"change\",\"name\":\"missing\",\"metric\":\"vmstat.no_such\",\"op\":\"<=\",\"value\":1}]}";
	struct vn_scenario *s = NULL;
	struct vn_compare *cmp = NULL;
	struct vn_result_run rep = {0};
	struct vn_error err = {0};
	const char *src = getenv("VN_SOURCE_DIR");
	char *fixture = vn_xasprintf("%s/tests/fixtures/compare/numa-ab", src ? src : ".");
	const char *dirs[] = {fixture};

	assert_int_equal(vn_scenario_parse(m, "m.json", &s, &err), 0);
	assert_int_equal(vn_compare_load(dirs, 1, &(struct vn_compare_opts){0}, &cmp, &err), 0);
	vn_scenario_judge_changes(s, cmp, &rep);
	assert_int_equal(rep.nverdicts, 6);
	const struct vn_verdict *v = find(&rep, "migrations drop");
	assert_true(v->pass);
	assert_non_null(strstr(v->observed, "-100.00%"));
	assert_non_null(strstr(v->observed, "significant"));
	assert_false(find(&rep, "migrations hold")->pass);
	/*
	 * Not significant, and the noise (3 runs, ~1.5% stddev: changes show from
	 * 4.5%) hides a change of 1%: too noisy to tell, neither pass nor fail.
	 */
	v = find(&rep, "duration within 1%");
	assert_false(v->pass);
	assert_true(v->undecided);
	assert_non_null(strstr(v->observed, "too noisy to tell"));
	assert_int_equal(vn_result_failures(&rep), 2);
	assert_string_equal(vn_verdict_word(v), "too noisy");
	/* In real time it points to virtual time, for a rate placement does not decide; in virtual time not. */
	assert_non_null(strstr(v->observed, "--virtual-time for a rate that placement does not decide"));
	free(cmp->time);
	cmp->time = vn_xstrdup("virtual");
	struct vn_result_run vrep = {0};
	vn_scenario_judge_changes(s, cmp, &vrep);
	v = find(&vrep, "duration within 1%");
	assert_true(v->undecided);
	assert_non_null(strstr(v->observed, "(more repeats, or --repeats auto"));
	assert_null(strstr(v->observed, "--virtual-time"));
	vn_result_clear(&vrep);
	v = find(&rep, "duration within 1%");
	/* Without "significant" too: -2.18% is below the bound, but not surely, so it is no failure of the kernel. */
	v = find(&rep, "duration up 1%");
	assert_true(v->undecided);
	assert_int_equal(vn_result_undecided(&rep), 2);
	/* A bound of 10% the same noise can show: not significant, so it passes whatever its %change says. */
	v = find(&rep, "duration within 10%");
	assert_true(v->pass);
	assert_false(v->undecided);
	assert_non_null(strstr(v->observed, "the noise shows changes from 4.49%"));
	v = find(&rep, "missing");
	assert_false(v->pass);
	assert_non_null(strstr(v->observed, "no value of vmstat.no_such"));
	vn_result_clear(&rep);
	vn_compare_free(cmp);
	vn_scenario_free(s);
	free(fixture);

	/*
	 * A change past the largest double (1e308 against -1e308, fixture huge): no number to hold against the
	 * bound, once -inf% (so "<= -50" held) and significant; now it fails, and only a bound that asks for
	 * significance passes, since it is never significant.
	 */
	static const char h[] =
		"{\"name\":\"h\",\"topology\":\"2node\",\"steps\":[{\"name\":\"mf\",\"workload\":\"memfollow\"}],"
		"\"variants\":[{\"name\":\"base\"},{\"name\":\"other\"}],\"assertions\":["
		"{\"type\":\"change\",\"name\":\"drops\",\"metric\":\"huge.opposite\",\"op\":\"<=\",\"value\":-50},"
		"{\"type\":\"change\",\"name\":\"drops if significant\",\"metric\":\"huge.opposite\",\"op\":\"<=\","
		"\"value\":-50,\"significant\":true},"
		"{\"type\":\"change\",\"name\":\"tiny "
		"base\",\"metric\":\"huge.tiny_base\",\"op\":\">=\",\"value\":0}]}";
	fixture = vn_xasprintf("%s/tests/fixtures/compare/huge", src ? src : ".");
	dirs[0] = fixture;
	assert_int_equal(vn_scenario_parse(h, "h.json", &s, &err), 0);
	assert_int_equal(vn_compare_load(dirs, 1, &(struct vn_compare_opts){0}, &cmp, &err), 0);
	vn_scenario_judge_changes(s, cmp, &rep);
	v = find(&rep, "drops");
	assert_false(v->pass);
	assert_non_null(strstr(v->observed, "past the largest double (base: 1e+308, other: -1e+308)"));
	assert_null(strstr(v->observed, "inf"));
	v = find(&rep, "drops if significant");
	assert_true(v->pass);
	assert_non_null(strstr(v->observed, "not significant"));
	assert_false(find(&rep, "tiny base")->pass);
	vn_result_clear(&rep);
	vn_compare_free(cmp);
	vn_scenario_free(s);
	free(fixture);

	/* A variant that is not one, or the base itself, is refused. */
	static const char bad[] =
		"{\"name\":\"m\",\"topology\":\"2node\",\"steps\":[{\"name\":\"mf\",\"workload\":\"memfollow\"}],"
		"\"variants\":[{\"name\":\"a\"},{\"name\":\"b\"}],\"assertions\":[{\"type\":\"change\",\"metric\":"
		"\"x\",\"variant\":\"a\",\"op\":\"<=\",\"value\":1}]}";
	assert_int_equal(vn_scenario_parse(bad, "m.json", &s, &err), -EINVAL);
	assert_non_null(strstr(err.msg, "is the base"));
	vn_error_clear(&err);
}

/* The boot build and the rebuild a hotplug made, each against the model for the state it saw. */
static void test_fallback_rebuilds(void **state)
{
	static const char t4[] =
		"<topology name='h'><node id='0' cpus='0' memory='256M'/><node id='1' cpus='1' memory='256M'/>"
		"<node id='2' cpus='2' memory='256M'/><node id='3' cpus='3' memory='0' hotplug='512M'/>"
		"<distances><row node='0'>10 12 32 32</row><row node='1'>12 10 32 32</row>"
		"<row node='2'>32 32 10 12</row><row node='3'>32 32 12 10</row></distances></topology>";
	static const char s4[] = "{\"name\":\"h\",\"topology\":\"4node-amd-hotplug\",\"steps\":["
				 "{\"name\":\"add\",\"hotplug\":{\"node\":3,\"memory\":\"512M\"}}],"
				 "\"assertions\":[{\"type\":\"fallback\"},"
				 "{\"type\":\"fallback\",\"model\":\"pre-5.15\",\"name\":\"old\"}]}";
	static const char boot[] =
		"[0.0] Fallback order for Node 0: 0 1 2 \n[0.0] Fallback order for Node 1: 1 0 2 \n"
		"[0.0] Fallback order for Node 2: 2 0 1 \n[0.0] Fallback order for Node 3: 3 2 1 0 \n";
	static const char rebuilt[] =
		"[9.0] Fallback order for Node 0: 0 1 2 3 \n[9.0] Fallback order for Node 1: 1 0 3 2 \n"
		"[9.0] Fallback order for Node 2: 2 3 0 1 \n[9.0] Fallback order for Node 3: 3 2 1 0 \n";
	struct loaded l = load(t4, "t4.xml", s4, "h.json");
	struct vn_error err = {0};
	struct vn_result_run r = {0};
	struct vn_run_step_data steps[1] = {{0}};
	struct vn_run_data d = {.s = l.s, .t = l.t, .steps = steps};

	assert_true(l.s->steps[0].is_hotplug);
	struct vn_run_hotplug hotplugs[1];
	d.nhotplugs = 1;
	d.hotplugs = hotplugs;
	d.hotplugs[0] = (struct vn_run_hotplug){.step = 0, .what = l.s->steps[0].hotplug, .rebuilds = 1};
	vn_fallback_state_hotplugged(l.t, &d.hotplugs[0].seen);
	d.dmesg = vn_xasprintf("%s%s", boot, rebuilt);

	assert_int_equal(vn_scenario_assert(&d, &r, &err), 0);
	const struct vn_verdict *now = find(&r, "fallback order matches model 5.18");
	assert_true(now->pass);
	assert_non_null(strstr(now->observed, "rebuild: 0: 0 1 2 3 | 1: 1 0 3 2"));
	/* The pre-5.15 model differs in node 3's list of both builds, and says which build. */
	const struct vn_verdict *old = find(&r, "old");
	assert_false(old->pass);
	assert_non_null(strstr(old->detail, "boot: Node 3: expected 3 2 0 1, kernel printed 3 2 1 0"));
	assert_non_null(strstr(old->detail, "rebuild #1 (+512M node 3 in step add; memory on nodes 0-3, CPUs seen on "
					    "nodes 0-3): Node 3: expected 3 2 0 1, kernel printed 3 2 1 0"));
	vn_result_clear(&r);

	/* A rebuild the kernel did not print is a failure too. */
	free((char *)d.dmesg);
	d.dmesg = vn_xstrdup(boot);
	assert_int_equal(vn_scenario_assert(&d, &r, &err), 0);
	now = find(&r, "fallback order matches model 5.18");
	assert_false(now->pass);
	assert_non_null(strstr(now->detail, "printed 1 build of its lists, the model expects 2"));
	vn_result_clear(&r);
	free((char *)d.dmesg);
	loaded_free(&l);
}

/*
 * A results directory as a run leaves it (before/, after/ from collect), and
 * the sampler's lines: judged whole, and then with each thing an assertion
 * reads broken in turn. Not being able to look is exit 3 with the reason,
 * never a failed verdict (exit 1).
 */
static const char judge_scn[] =
	"{\"name\":\"j\",\"topology\":\"2node\",\"steps\":[{\"name\":\"mf\",\"workload\":\"memfollow\"}],"
	"\"assertions\":[{\"type\":\"fallback\"},{\"type\":\"distances\"},"
	"{\"type\":\"counter\",\"counter\":\"numa_pages_migrated\",\"op\":\">\",\"value\":0},"
	"{\"type\":\"running_per_node\",\"step\":\"mf\",\"tolerance\":0.5},"
	"{\"type\":\"metric\",\"step\":\"mf\",\"path\":\"rate\",\"op\":\">\",\"value\":100},"
	"{\"type\":\"memory_on_node\",\"step\":\"mf\",\"node\":1,\"fraction\":0.5}]}";

struct judge_fixture {
	char dir[64];
	struct vn_topology *t;
	struct vn_scenario *s;
};

static void put(const char *dir, const char *name, const char *text)
{
	struct vn_error err = {0};
	_cleanup_free_ char *path = vn_xasprintf("%s/%s", dir, name);

	if (vn_file_write_text(path, text, &err) < 0)
		fail_msg("%s", err.msg);
}

/* The snapshots a good run leaves: numa_pages_migrated 5 -> 900, the lists and distances as the topology says. */
static void results_dir(const struct judge_fixture *f)
{
	static const char *const subs[] = {"before", "after"};
	struct vn_error err = {0};

	for (unsigned i = 0; i < 2; i++) {
		_cleanup_free_ char *sub = vn_xasprintf("%s/%s", f->dir, subs[i]);
		assert_int_equal(vn_mkdir_p(sub, 0755, &err), 0);
		put(sub, "vmstat",
		    i ? "nr_free_pages 10\nnuma_pages_migrated 900\n" : "nr_free_pages 12\nnuma_pages_migrated 5\n");
		put(sub, "node0-numastat", "numa_hit 10\nnuma_miss 2\n");
		put(sub, "node1-numastat", "numa_hit 10\nnuma_miss 2\n");
	}
	_cleanup_free_ char *after = vn_xasprintf("%s/after", f->dir);
	put(after, "dmesg", "[0.0] Fallback order for Node 0: 0 1 \n[0.0] Fallback order for Node 1: 1 0 \n");
	put(after, "cmdline", "console=ttyS0\n");
	put(after, "node0-distance", "10 21\n");
	put(after, "node1-distance", "21 10\n");
}

/* What a test breaks in the snapshots collect filled, before they are judged. */
static void (*tamper)(struct vn_run_data *d);

static void no_dmesg(struct vn_run_data *d)
{
	vn_snapshot_set_sys(&d->after, VN_SNAP_DMESG, NULL, "dmesg: the agent did not answer");
}

/* The guest's possible nodes are 0 and 5, the topology's 0 and 1. */
static void guest_lacks_node1(struct vn_run_data *d)
{
	d->before.nodes[1].id = 5;
}

/* Judges the fixture's directory; the result line of step mf's one process is given (NULL: it printed none). */
static int judge_dir(const struct judge_fixture *f, const char *samples, const char *result, struct vn_result_run *rep,
		     struct vn_error *err)
{
	json_object *results[1] = {NULL};
	struct vn_run_step_data steps[1] = {{.npids = 1, .pids = {100}, .results = results}};
	struct vn_run_data d = {.s = f->s, .t = f->t, .steps = steps};

	if (result)
		steps[0].results[steps[0].nresults++] = json_tokener_parse(result);
	else
		steps[0].nmissing = 1;
	memset(rep, 0, sizeof(*rep));
	/* The snapshots filled from the fixture's files, as `vnuma report` loads them. */
	_cleanup_free_ char *before = vn_xasprintf("%s/before", f->dir), *after = vn_xasprintf("%s/after", f->dir);
	vn_snapshot_load(before, f->t->nnodes, &d.before);
	vn_snapshot_load(after, f->t->nnodes, &d.after);
	if (tamper)
		tamper(&d);
	int rc = vn_run_judge(&d, samples, rep, err);
	vn_snapshot_clear(&d.before);
	vn_snapshot_clear(&d.after);
	vn_samples_free(&d.samples);
	json_object_put(steps[0].results[0]);
	return rc;
}

/* Judging ends in an infrastructure error naming what could not be seen, with no verdict. */
static void assert_unobserved(const struct judge_fixture *f, const char *samples, const char *result, const char *why)
{
	struct vn_result_run rep;
	struct vn_error err = {0};

	if (judge_dir(f, samples, result, &rep, &err) == 0)
		fail_msg("judged (%u verdicts, %u failed) where \"%s\" was expected", rep.nverdicts,
			 vn_result_failures(&rep), why);
	assert_int_equal(err.kind, VN_ERR_INFRA);
	if (!strstr(err.msg, why))
		fail_msg("\"%s\" does not say \"%s\"", err.msg, why);
	assert_int_equal(rep.nverdicts, 0);
	/* What the runner makes of it: incomplete with the reason; JUnit has an error and no failure. */
	rep.complete = false;
	rep.error = vn_xstrdup(err.msg);
	char out[80];
	snprintf(out, sizeof(out), "%s/out", f->dir);
	assert_int_equal(vn_mkdir_p(out, 0755, &err), 0);
	assert_int_equal(vn_report_write(&rep, out, &err), 0);
	_cleanup_free_ char *jp = vn_xasprintf("%s/junit.xml", out), *rp = vn_xasprintf("%s/result.json", out);
	assert_int_equal(vn_test_xpath_count(jp, "//testcase/error[@message]"), 1);
	assert_int_equal(vn_test_xpath_count(jp, "//failure"), 0);
	struct vn_result_run back = {0};
	assert_int_equal(vn_result_load(rp, &back, &err), 0);
	assert_false(back.complete);
	assert_non_null(back.error);
	assert_non_null(strstr(back.error, why));
	vn_result_clear(&back);
	vn_result_clear(&rep);
	vn_error_clear(&err);
}

static void test_judge_unobservable(void **state)
{
	(void)state;
	struct judge_fixture f = {.dir = "/tmp/vnuma-test-judge.XXXXXX"};
	struct vn_error err = {0};
	struct vn_result_run rep;
	const char *good = LINE(9, 1000, 3000);
	const char *res = "{\"rate\":150}";

	assert_non_null(mkdtemp(f.dir));
	assert_int_equal(vn_topology_parse(topo, strlen(topo), "t.xml", &f.t, &err), 0);
	assert_int_equal(vn_scenario_parse(judge_scn, "j.json", &f.s, &err), 0);

	/* Whole: every assertion judged, and passing. */
	results_dir(&f);
	if (judge_dir(&f, good, res, &rep, &err) < 0)
		fail_msg("%s", err.msg);
	assert_int_equal(rep.nverdicts, f.s->nasserts);
	assert_int_equal(vn_result_failures(&rep), 0);
	assert_string_equal(rep.kernel_cmdline, "console=ttyS0");
	vn_result_clear(&rep);

	static const struct {
		const char *file, *text; /* text NULL: the file is removed */
		const char *why;
	} broken[] = {
		{"before/vmstat", NULL, "before/vmstat: cannot open"},
		{"after/vmstat", "nr_free_pages 10\n\x7f\x45LF\x02garbage", "after/vmstat:2: not a \"name value\""},
		{"after/vmstat", "nr_free_pages 10\nnuma_pages_migrated 9\0\n", "NUL"},
		{"after/vmstat", "", "holds no counters"},
		/* Read whole, but the snapshots disagree about what the kernel counts: not the kernel's doing. */
		{"before/vmstat", "nr_free_pages 12\n",
		 "numa_pages_migrated is in the after snapshot of /proc/vmstat only"},
		{"after/dmesg", NULL, "after/dmesg: cannot open"},
		{"after/cmdline", NULL, "after/cmdline: cannot open"},
		{"after/node1-distance", NULL, "after/node1-distance: cannot open"},
		{"before/node0-numastat", NULL, "before/node0-numastat: cannot open"},
		{"after/node1-numastat", "numa_hit x\n", "after/node1-numastat:1: not a"},
		/* Past INT64_MAX it would wrap negative where counters are kept. */
		{"after/node1-numastat", "numa_hit 9223372036854775808\n", "after/node1-numastat:1: not a"},
	};
	for (size_t i = 0; i < sizeof(broken) / sizeof(broken[0]); i++) {
		_cleanup_free_ char *path = vn_xasprintf("%s/%s", f.dir, broken[i].file);
		if (!broken[i].text)
			assert_int_equal(unlink(path), 0);
		else if (strcmp(broken[i].why, "NUL") == 0)
			assert_int_equal(vn_file_write_atomic(path, broken[i].text, 40, 0644, &err),
					 0); /* past the NUL */
		else
			put(f.dir, broken[i].file, broken[i].text);
		assert_unobserved(&f, good, res, broken[i].why);
		results_dir(&f);
	}
	/* A part collect could not read, and a node the guest does not have, in the snapshots themselves. */
	tamper = no_dmesg;
	assert_unobserved(&f, good, res, "cannot read a snapshot the run took: dmesg: the agent did not answer");
	tamper = guest_lacks_node1;
	assert_unobserved(&f, good, res, "/before has no node 1");
	tamper = NULL;
	/* No sample, a result line missing or without the number, the step's memory never seen. */
	assert_unobserved(&f, "", res, "samples.jsonl holds no sample");
	assert_unobserved(&f, good, NULL, "step mf process 0 ended without a JSON result line");
	assert_unobserved(&f, good, "{\"other\":1}", "step mf process 0's result has no number at rate");
	assert_unobserved(&f, LINE(9, 0, 0), res, "no sample saw the memory of step mf");

	/* A counter in neither snapshot is the kernel's (built without it): still a failed verdict. */
	put(f.dir, "before/vmstat", "nr_free_pages 12\n");
	put(f.dir, "after/vmstat", "nr_free_pages 10\n");
	assert_int_equal(judge_dir(&f, good, res, &rep, &err), 0);
	assert_int_equal(vn_result_failures(&rep), 1);
	assert_non_null(strstr(find(&rep, "counter numa_pages_migrated")->observed, "not in /proc/vmstat"));
	vn_result_clear(&rep);

	vn_rm_rf(f.dir);
	vn_scenario_free(f.s);
	vn_topology_free(f.t);
}

static double metric_of(const struct vn_result_run *r, const char *name)
{
	for (unsigned i = 0; i < r->nmetrics; i++)
		if (strcmp(r->metrics[i].name, name) == 0)
			return r->metrics[i].value;
	return NAN;
}

/*
 * What an assertion saw is a metric when it is one number, handed over as
 * the judge saw it: a counter's change, a ratio (its text "0.4000 (40 / 100)"
 * is not a number), a one-process workload number unrounded by its text.
 */
static const char observe_scn[] =
	"{\"name\":\"o\",\"topology\":\"2node\",\"steps\":[{\"name\":\"mf\",\"workload\":\"memfollow\"}],"
	"\"assertions\":["
	"{\"type\":\"counter\",\"counter\":\"numa_pages_migrated\",\"op\":\">\",\"value\":0},"
	"{\"type\":\"ratio\",\"numerator\":\"numa_hint_faults_local\",\"denominator\":\"numa_hint_faults\","
	"\"op\":\">=\",\"value\":0.5},"
	"{\"type\":\"ratio\",\"numerator\":\"numa_hint_faults_local\",\"denominator\":\"nr_free_pages\","
	"\"op\":\"<\",\"value\":1,\"name\":\"undefined\"},"
	"{\"type\":\"metric\",\"step\":\"mf\",\"path\":\"rate\",\"op\":\">\",\"value\":100},"
	"{\"type\":\"memory_on_node\",\"step\":\"mf\",\"node\":1,\"fraction\":0.5}]}";

static void test_observations_as_metrics(void **state)
{
	(void)state;
	struct judge_fixture f = {.dir = "/tmp/vnuma-test-observe.XXXXXX"};
	struct vn_error err = {0};
	struct vn_result_run rep;

	assert_non_null(mkdtemp(f.dir));
	assert_int_equal(vn_topology_parse(topo, strlen(topo), "t.xml", &f.t, &err), 0);
	assert_int_equal(vn_scenario_parse(observe_scn, "o.json", &f.s, &err), 0);
	results_dir(&f);
	put(f.dir, "before/vmstat",
	    "nr_free_pages 10\nnuma_pages_migrated 5\nnuma_hint_faults 100\nnuma_hint_faults_local 10\n");
	put(f.dir, "after/vmstat",
	    "nr_free_pages 10\nnuma_pages_migrated 900\nnuma_hint_faults 200\nnuma_hint_faults_local 50\n");
	if (judge_dir(&f, LINE(9, 1000, 3000), "{\"rate\":150.123456789}", &rep, &err) < 0)
		fail_msg("%s", err.msg);
	assert_int_equal(rep.nverdicts, f.s->nasserts);

	assert_true(metric_of(&rep, "assert.counter_numa_pages_migrated_>_0") == 895);
	assert_string_equal(find(&rep, "ratio")->observed, "0.4000 (40 / 100)");
	assert_true(metric_of(&rep, "assert.ratio_numa_hint_faults_local_/_numa_hint_faults_>=_0.5") == 0.4);
	assert_true(metric_of(&rep, "assert.metric_mf_rate_>_100") == 150.123456789);
	/* A ratio over a counter that did not change has no value; a fraction per node is no one number. */
	assert_true(isnan(metric_of(&rep, "assert.undefined")));
	for (unsigned i = 0; i < rep.nmetrics; i++)
		assert_null(strstr(rep.metrics[i].name, "memory_of"));
	vn_result_clear(&rep);

	vn_rm_rf(f.dir);
	vn_scenario_free(f.s);
	vn_topology_free(f.t);
}

static bool metric(const struct vn_result_run *r, const char *name, double *out)
{
	for (unsigned i = 0; i < r->nmetrics; i++)
		if (strcmp(r->metrics[i].name, name) == 0) {
			*out = r->metrics[i].value;
			return true;
		}
	return false;
}

/* The counter deltas a run records for compare: the same delta the judge takes, one that went back included. */
static void test_metrics_deltas(void **state)
{
	(void)state;
	char dir[] = "/tmp/vnuma-test-deltas.XXXXXX";
	struct loaded l = load(topo, "t.xml", scn, "t.json");
	struct vn_error err = {0};
	struct vn_result_run r = {0};
	struct vn_run_step_data steps[1] = {{0}};
	struct vn_run_data d = {.s = l.s, .t = l.t, .steps = steps};
	double v;

	assert_non_null(mkdtemp(dir));
	d.vmstat_before = kv("{\"up\":10,\"back\":100,\"only_before\":1,\"text\":1}");
	d.vmstat_after = kv("{\"up\":15,\"back\":40,\"only_after\":2,\"text\":\"12\"}");
	for (unsigned i = 0; i < 2; i++) {
		_cleanup_free_ char *sub = vn_xasprintf("%s/%s", dir, i ? "after" : "before");
		assert_int_equal(vn_mkdir_p(sub, 0755, &err), 0);
		put(sub, "node0-numastat", i ? "numa_hit 15\nnuma_miss 2\nother 3\n" : "numa_hit 10\nnuma_miss 5\n");
		put(sub, "node1-numastat", "numa_hit 7\n");
	}
	_cleanup_free_ char *before = vn_xasprintf("%s/before", dir), *after = vn_xasprintf("%s/after", dir);
	vn_snapshot_load(before, 2, &d.before);
	vn_snapshot_load(after, 2, &d.after);
	if (vn_run_metrics(&d, &r, &err) < 0)
		fail_msg("%s", err.msg);
	vn_snapshot_clear(&d.before);
	vn_snapshot_clear(&d.after);
	assert_true(metric(&r, "vmstat.up", &v));
	assert_float_equal(v, 5, 0);
	assert_true(metric(&r, "vmstat.back", &v));
	assert_float_equal(v, -60, 0);
	/* A counter in one snapshot only, or not a number in one, is no delta. */
	assert_false(metric(&r, "vmstat.only_before", &v));
	assert_false(metric(&r, "vmstat.only_after", &v));
	assert_false(metric(&r, "vmstat.text", &v));
	assert_true(metric(&r, "numastat.node0.numa_hit", &v));
	assert_float_equal(v, 5, 0);
	assert_true(metric(&r, "numastat.node0.numa_miss", &v));
	assert_float_equal(v, -3, 0);
	assert_false(metric(&r, "numastat.node0.other", &v));
	assert_true(metric(&r, "numastat.node1.numa_hit", &v));
	assert_float_equal(v, 0, 0);
	assert_int_equal(r.nmetrics, 5);

	vn_result_clear(&r);
	json_object_put(d.vmstat_before);
	json_object_put(d.vmstat_after);
	vn_rm_rf(dir);
	loaded_free(&l);
}

/* The locality metrics, run's and lone step's, in the order result.json has them; no kernel access, no kernel fraction. */
static void test_metrics_locality(void **state)
{
	(void)state;
	static const char *const want[] = {
		"locality.step.mf.accesses",
		"locality.step.mf.remote_fraction.user",
		"locality.step.mf.remote_fraction.all",
		"locality.step.mf.model_s",
		"locality.step.mf.memory_tier4.accesses",
		"locality.step.mf.memory_tier4.share",
		"locality.step.mf.memory_tier4.model_s",
		"locality.step.mf.memory_tier22.accesses",
		"locality.step.mf.memory_tier22.share",
		"locality.step.mf.memory_tier22.model_s",
		"locality.step.mf.cpu0.remote_fraction.user",
		"locality.accesses",
		"locality.accesses_outside",
		"locality.dimms_counted",
		"locality.dimms_unmapped",
		"locality.remote_fraction.user",
		"locality.remote_fraction.all",
		"locality.model_s",
		"locality.memory_tier4.accesses",
		"locality.memory_tier4.share",
		"locality.memory_tier4.model_s",
		"locality.memory_tier22.accesses",
		"locality.memory_tier22.share",
		"locality.memory_tier22.model_s",
		"locality.cpu0.remote_fraction.user",
		"locality.cpu1.remote_fraction.user",
		"locality.matrix.cpu0.mem0",
		"locality.matrix.cpu0.mem1",
		"locality.matrix.cpu1.mem0",
		"locality.matrix.cpu1.mem1",
	};
	char dir[] = "/tmp/vnuma-test-locmetrics.XXXXXX";
	struct loaded l = load(topo, "t.xml", scn, "t.json");
	struct vn_error err = {0};
	struct vn_result_run r = {0};
	struct vn_run_step_data steps[1] = {{0}};
	struct vn_run_data d = {.s = l.s, .t = l.t, .steps = steps, .loc_have = true, .loc_dimms_counted = 1};
	struct vn_loc_counts st[1];
	double lat[4] = {100, 210, 210, 100}, v;

	assert_non_null(mkdtemp(dir));
	for (unsigned i = 0; i < 2; i++) {
		_cleanup_free_ char *sub = vn_xasprintf("%s/%s", dir, i ? "after" : "before");
		assert_int_equal(vn_mkdir_p(sub, 0755, &err), 0);
		put(sub, "node0-numastat", "numa_hit 1\n");
		put(sub, "node1-numastat", "numa_hit 1\n");
	}
	_cleanup_free_ char *before = vn_xasprintf("%s/before", dir), *after = vn_xasprintf("%s/after", dir);
	vn_snapshot_load(before, 2, &d.before);
	vn_snapshot_load(after, 2, &d.after);
	d.loc_lat_ns = lat;
	/* Node 0 as the top tier, node 1 as the lower one. */
	d.loc_ntiers = 2;
	d.loc_tier_of[0] = 0;
	d.loc_tier_of[1] = 1;
	d.loc_tier_id[0] = 4;
	d.loc_tier_id[1] = 22;
	vn_loc_counts_init(&d.loc, 2);
	*vn_loc_at(&d.loc, 0, 1, VN_LOC_USER_STORE) = 900;
	*vn_loc_at(&d.loc, 1, 1, VN_LOC_USER_LOAD) = 100;
	d.loc.io[0] = 7;
	/* The step's CPUs on node 0 only: node 1's row has no access, so no fraction. */
	vn_loc_counts_init(&st[0], 2);
	*vn_loc_at(&st[0], 0, 1, VN_LOC_USER_LOAD) = 30;
	*vn_loc_at(&st[0], 0, 0, VN_LOC_USER_LOAD) = 10;
	d.loc_steps = st;
	if (vn_run_metrics(&d, &r, &err) < 0)
		fail_msg("%s", err.msg);
	unsigned k = 0;
	for (unsigned i = 0; i < r.nmetrics; i++)
		if (strncmp(r.metrics[i].name, "locality.", 9) == 0) {
			assert_true(k < sizeof(want) / sizeof(want[0]));
			assert_string_equal(r.metrics[i].name, want[k++]);
		}
	assert_int_equal(k, sizeof(want) / sizeof(want[0]));
	assert_true(metric(&r, "locality.step.mf.remote_fraction.user", &v));
	assert_float_equal(v, 0.75, 1e-12);
	assert_true(metric(&r, "locality.accesses_outside", &v));
	assert_float_equal(v, 7, 0);
	assert_true(metric(&r, "locality.model_s", &v));
	assert_float_equal(v, 199000e-9, 1e-15);
	assert_true(metric(&r, "locality.matrix.cpu0.mem1", &v));
	assert_float_equal(v, 900, 0);
	/* By tier: the run's all on node 1 (900 x 210 + 100 x 100 ns), the step's 10 x 100 and 30 x 210 ns. */
	assert_true(metric(&r, "locality.memory_tier22.model_s", &v));
	assert_float_equal(v, 199000e-9, 1e-15);
	assert_true(metric(&r, "locality.memory_tier22.share", &v));
	assert_float_equal(v, 1, 0);
	assert_true(metric(&r, "locality.memory_tier4.accesses", &v));
	assert_float_equal(v, 0, 0);
	assert_true(metric(&r, "locality.step.mf.memory_tier4.model_s", &v));
	assert_float_equal(v, 1000e-9, 1e-15);
	assert_true(metric(&r, "locality.step.mf.memory_tier22.model_s", &v));
	assert_float_equal(v, 6300e-9, 1e-15);
	assert_true(metric(&r, "locality.step.mf.memory_tier4.share", &v));
	assert_float_equal(v, 0.25, 1e-12);

	vn_result_clear(&r);
	vn_snapshot_clear(&d.before);
	vn_snapshot_clear(&d.after);
	vn_loc_counts_clear(&st[0]);
	vn_loc_counts_clear(&d.loc);
	vn_rm_rf(dir);
	loaded_free(&l);
}

/* report.html from the snapshots and samples a run holds is the page `vnuma report DIR` draws from its files. */
static void test_page_from_memory(void **state)
{
	(void)state;
	static const char *const files[] = {"result.json", "samples.jsonl", "after/dmesg", "after/node0-distance",
					    "after/node1-distance"};
	const char *src = getenv("VN_SOURCE_DIR");
	char dir[] = "/tmp/vnuma-test-page.XXXXXX";
	struct vn_error err = {0};
	struct vn_run_data d = {0};
	size_t len;

	assert_non_null(mkdtemp(dir));
	_cleanup_free_ char *after = vn_xasprintf("%s/after", dir), *loaded_path = vn_xasprintf("%s/loaded.html", dir),
			    *page_path = vn_xasprintf("%s/report.html", dir);
	assert_int_equal(vn_mkdir_p(after, 0755, &err), 0);
	for (size_t i = 0; i < sizeof(files) / sizeof(files[0]); i++) {
		_cleanup_free_ char *from = vn_xasprintf("%s/tests/fixtures/report/run/%s", src ? src : ".", files[i]),
				    *to = vn_xasprintf("%s/%s", dir, files[i]);
		assert_int_equal(vn_file_copy_atomic(from, to, &err), 0);
	}
	assert_int_equal(vn_report_html_write(dir, loaded_path, &err), 0);

	_cleanup_free_ char *samples = NULL, *result = NULL, *loaded = NULL, *page = NULL,
			    *rp = vn_xasprintf("%s/result.json", dir), *sp = vn_xasprintf("%s/samples.jsonl", dir);
	struct vn_result_run res;
	assert_int_equal(vn_file_read(rp, 1 << 20, &result, &len, &err), 0);
	assert_int_equal(vn_file_read(sp, 1 << 20, &samples, &len, &err), 0);
	assert_int_equal(vn_result_parse(result, rp, &res, &err), 0);
	vn_snapshot_load(after, 0, &d.after);
	assert_int_equal(d.after.nnodes, 2);
	struct vn_html_run_in in = {.dir = dir, .result = &res, .samples = samples};
	vn_run_page(&d, &in);
	assert_int_equal(vn_report_html_write_run(&in, &err), 0);
	assert_int_equal(vn_file_read(loaded_path, 16 << 20, &loaded, &len, &err), 0);
	assert_int_equal(vn_file_read(page_path, 16 << 20, &page, &len, &err), 0);
	assert_non_null(strstr(page, "<title>node 0 to node 1: 21</title>"));
	assert_string_equal(page, loaded);
	vn_result_clear(&res);
	vn_snapshot_clear(&d.after);
	vn_rm_rf(dir);
}

/* A tiermove phase: hot pages per node at its start and its end, and its pgpromote_success (-1: null). */
#define PHASE(S2, E0, E2, PROMO)                                                    \
	"{\"phase\":1,\"vmstat\":{\"pgpromote_success\":" PROMO "},\"samples\":["   \
	"{\"t\":1,\"hot_pages_per_node\":{\"0\":0,\"1\":0,\"2\":" #S2 ",\"3\":0}}," \
	"{\"t\":2,\"hot_pages_per_node\":{\"0\":" #E0 ",\"1\":0,\"2\":" #E2 ",\"3\":0}}]}"

/* promotion: each phase that began with hot pages on the CXL tier, judged by its start and end samples. */
static void test_promotion(void **state)
{
	static const char t4[] =
		"<topology name='c'><node id='0' cpus='0' memory='256M'/><node id='1' cpus='1' memory='256M'/>"
		"<node id='2' cpus='' memory='256M' memory-kind='cxl'/><node id='3' cpus='' memory='256M' "
		"memory-kind='cxl'/><distances><row node='0'>10 21 14 24</row><row node='1'>21 10 24 14</row>"
		"<row node='2'>14 24 10 26</row><row node='3'>24 14 26 10</row></distances></topology>";
	static const char s4[] = "{\"name\":\"p\",\"topology\":\"4node-cxl-tiered\",\"steps\":[{\"name\":\"tm\","
				 "\"workload\":\"tiermove\",\"placement\":{\"policy\":\"cpunodebind\",\"nodes\":[0]}}],"
				 "\"assertions\":[{\"type\":\"promotion\",\"step\":\"tm\",\"fraction\":0.9}]}";
	static const struct {
		const char *result, *observed, *unobserved;
		bool pass;
	} cases[] = {
		/* The first phase began on DRAM (not judged); the second moved 950 of 1000 up. */
		{"{\"phases\":[{\"phase\":0}," PHASE(0, 1000, 0, "0") "," PHASE(1000, 950, 50, "950") "]}",
		 "phase 2: 1000 -> 50 (0.950); pgpromote_success 950", NULL, true},
		/* Only 800 of 1000: a failed verdict with both sides. */
		{"{\"phases\":[{\"phase\":0}," PHASE(1000, 800, 200, "800") "]}", "phase 1: 1000 -> 200 (0.800)", NULL,
		 false},
		/* Moved up, but not as promotions (numa_balancing 1's migration): failed. */
		{"{\"phases\":[{\"phase\":0}," PHASE(1000, 1000, 0, "0") "]}", "pgpromote_success 0", NULL, false},
		/* Nothing on the slow tier at any phase's start: nothing to judge. */
		{"{\"phases\":[{\"phase\":0}," PHASE(0, 1000, 0, "5") "]}", NULL, "nothing to promote", false},
		/* A kernel without the counter. */
		{"{\"phases\":[{\"phase\":0}," PHASE(1000, 1000, 0, "null") "]}", NULL, "no pgpromote_success", false},
		{"{\"phases\":[{\"phase\":0},{\"phase\":1,\"samples\":[{\"t\":1}]}]}", NULL, "fewer than two samples",
		 false},
	};
	struct loaded l = load(t4, "t4.xml", s4, "p.json");

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct vn_error err = {0};
		struct vn_result_run r = {0};
		json_object *results[1] = {json_tokener_parse(cases[i].result)};
		struct vn_run_step_data steps[1] = {{.nresults = 1, .results = results}};
		struct vn_run_data d = {.s = l.s, .t = l.t, .steps = steps};

		assert_non_null(results[0]);
		int rc = vn_scenario_assert(&d, &r, &err);
		if (cases[i].unobserved) {
			assert_int_equal(rc, -ENODATA);
			assert_int_equal(err.kind, VN_ERR_INFRA);
			if (!strstr(err.msg, cases[i].unobserved))
				fail_msg("case %zu: %s", i, err.msg);
			vn_error_clear(&err);
		} else {
			assert_int_equal(rc, 0);
			const struct vn_verdict *v = find(&r, "hot pages of tm on a lower tier");
			assert_int_equal(v->pass, cases[i].pass);
			if (!strstr(v->observed, cases[i].observed))
				fail_msg("case %zu: observed %s", i, v->observed);
		}
		vn_result_clear(&r);
		json_object_put(results[0]);
	}
	loaded_free(&l);
}

/* fallback on a tiered shape: the boot's lists and kmem's builds (a recorded 6.1 dmesg), not the boot's alone. */
static void test_fallback_tiered(void **state)
{
	static const char t4[] =
		"<topology name='c'><node id='0' cpus='0' memory='256M'/><node id='1' cpus='1' memory='256M'/>"
		"<node id='2' cpus='' memory='256M' memory-kind='cxl'/><node id='3' cpus='' memory='256M' "
		"memory-kind='cxl'/><distances><row node='0'>10 21 14 24</row><row node='1'>21 10 24 14</row>"
		"<row node='2'>14 24 10 26</row><row node='3'>24 14 26 10</row></distances></topology>";
	static const char s4[] = "{\"name\":\"f\",\"topology\":\"4node-cxl-tiered\",\"steps\":[{\"name\":\"w\","
				 "\"workload\":\"tiermove\"}],\"assertions\":[{\"type\":\"fallback\"}]}";
	struct loaded l = load(t4, "t4.xml", s4, "f.json");
	struct vn_error err = {0};
	struct vn_result_run r = {0};
	struct vn_run_step_data steps[1] = {{0}};
	struct vn_run_data d = {.s = l.s, .t = l.t, .steps = steps};
	const char *src = getenv("VN_SOURCE_DIR");
	char path[4096];
	char *log = NULL;
	size_t len;

	snprintf(path, sizeof(path), "%s/tests/fixtures/tiers/4node-cxl-tiered-6.1.dmesg", src ? src : ".");
	assert_int_equal(vn_file_read(path, 1 << 20, &log, &len, &err), 0);
	d.dmesg = log;
	assert_int_equal(vn_scenario_assert(&d, &r, &err), 0);
	const struct vn_verdict *v = find(&r, "fallback order matches model 5.18");
	if (!v->pass)
		fail_msg("%s", v->detail);
	assert_string_equal(v->observed, "0: 0 2 1 3 | 1: 1 3 0 2 | 2: 2 0 1 3 | 3: 3 1 0 2");
	vn_result_clear(&r);
	free(log);
	loaded_free(&l);
}

/* demotion_targets: node 0's target is node 2; with "fallback", node 3 (lower_tier_mask) after it, never node 1. */
static void test_demotion_fallback(void **state)
{
	static const char t4[] =
		"<topology name='c'><node id='0' cpus='0' memory='256M'/><node id='1' cpus='1' memory='256M'/>"
		"<node id='2' cpus='' memory='256M' memory-kind='cxl'/><node id='3' cpus='' memory='256M' "
		"memory-kind='cxl'/><distances><row node='0'>10 21 14 24</row><row node='1'>21 10 24 14</row>"
		"<row node='2'>14 24 10 26</row><row node='3'>24 14 26 10</row></distances></topology>";
	static const char s4[] =
		"{\"name\":\"d\",\"topology\":\"4node-cxl-tiered\",\"steps\":[{\"name\":\"tm\",\"workload\":"
		"\"tiermove\","
		"\"placement\":{\"policy\":\"membind\",\"nodes\":[0]}}],\"assertions\":[{\"type\":\"demotion_targets\","
		"\"name\":\"only\",\"step\":\"tm\",\"from\":0},{\"type\":\"demotion_targets\",\"name\":\"fb\",\"step\":"
		"\"tm\",\"from\":0,\"fallback\":true}]}";
	static const struct {
		const char *max;
		bool only, fb;
	} cases[] = {
		{"{\"0\":100,\"1\":0,\"2\":50,\"3\":0}", true, true},
		{"{\"0\":100,\"1\":0,\"2\":50,\"3\":20}", false, true},
		{"{\"0\":100,\"1\":0,\"2\":0,\"3\":20}", false, false},  /* the fallback without the target first */
		{"{\"0\":100,\"1\":5,\"2\":50,\"3\":20}", false, false}, /* node 1 is no lower tier */
	};
	struct loaded l = load(t4, "t4.xml", s4, "d.json");

	assert_true(l.s->asserts[1].lower_ok);
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char res[160];
		struct vn_error err = {0};
		struct vn_result_run r = {0};
		snprintf(res, sizeof(res), "{\"pages_max_per_node\":%s}", cases[i].max);
		json_object *results[1] = {json_tokener_parse(res)};
		struct vn_run_step_data steps[1] = {{.nresults = 1, .results = results}};
		struct vn_run_data d = {.s = l.s, .t = l.t, .steps = steps};

		assert_int_equal(vn_scenario_assert(&d, &r, &err), 0);
		if (find(&r, "only")->pass != cases[i].only || find(&r, "fb")->pass != cases[i].fb)
			fail_msg("case %zu: only %d, fallback %d (%s)", i, find(&r, "only")->pass, find(&r, "fb")->pass,
				 find(&r, "fb")->detail ? find(&r, "fb")->detail : "");
		vn_result_clear(&r);
		json_object_put(results[0]);
	}
	loaded_free(&l);
}

/*
 * demotion_targets judges by the booted kernel's tier model (d->tier_model).
 * With this <hmat>, 6.12 puts node 3 (150 ns, 60000 MB/s from node 1:
 * 576 * 300 / 180 = 960, 960 * 240000 / 120000 = 1920, memory_tier15)
 * above node 2 (210 ns, 25000 MB/s from node 0: 6451, memory_tier50), so
 * node 0 demotes to 3 alone; 6.1 has both in memory_tier22 and node 0
 * demotes to 2 (SLIT 14).
 */
static void test_demotion_by_kernel_model(void **state)
{
	static const char t4[] =
		"<topology name='c'><node id='0' cpus='0' memory='256M'/><node id='1' cpus='1' memory='256M'/>"
		"<node id='2' cpus='' memory='256M' memory-kind='cxl'/><node id='3' cpus='' memory='256M' "
		"memory-kind='cxl'/><distances><row node='0'>10 21 14 24</row><row node='1'>21 10 24 14</row>"
		"<row node='2'>14 24 10 26</row><row node='3'>24 14 26 10</row></distances><hmat>"
		"<latency initiator='0' target='0' ns='90'/><bandwidth initiator='0' target='0' mbps='120000'/>"
		"<latency initiator='1' target='1' ns='90'/><bandwidth initiator='1' target='1' mbps='120000'/>"
		"<latency initiator='0' target='2' ns='210'/><bandwidth initiator='0' target='2' mbps='25000'/>"
		"<latency initiator='1' target='3' ns='150'/><bandwidth initiator='1' target='3' mbps='60000'/>"
		"</hmat></topology>";
	static const char s4[] =
		"{\"name\":\"d\",\"topology\":\"c\",\"steps\":[{\"name\":\"tm\",\"workload\":\"tiermove\","
		"\"placement\":{\"policy\":\"membind\",\"nodes\":[0]}}],\"assertions\":[{\"type\":"
		"\"demotion_targets\",\"name\":\"only\",\"step\":\"tm\",\"from\":0}]}";
	static const struct {
		enum vn_tier_model m;
		const char *max;
		bool pass;
	} cases[] = {
		{VN_TIER_MODEL_6_12, "{\"0\":100,\"1\":0,\"2\":0,\"3\":50}", true},
		{VN_TIER_MODEL_6_12, "{\"0\":100,\"1\":0,\"2\":50,\"3\":0}", false},
		{VN_TIER_MODEL_6_1, "{\"0\":100,\"1\":0,\"2\":0,\"3\":50}", false},
		{VN_TIER_MODEL_6_1, "{\"0\":100,\"1\":0,\"2\":50,\"3\":0}", true},
	};
	struct loaded l = load(t4, "t4.xml", s4, "d.json");

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char res[160];
		struct vn_error err = {0};
		struct vn_result_run r = {0};
		snprintf(res, sizeof(res), "{\"pages_max_per_node\":%s}", cases[i].max);
		json_object *results[1] = {json_tokener_parse(res)};
		struct vn_run_step_data steps[1] = {{.nresults = 1, .results = results}};
		struct vn_run_data d = {.s = l.s, .t = l.t, .steps = steps, .tier_model = cases[i].m};

		if (vn_scenario_assert(&d, &r, &err) != 0)
			fail_msg("case %zu: %s", i, err.msg);
		if (find(&r, "only")->pass != cases[i].pass)
			fail_msg("case %zu: pass %d (%s)", i, find(&r, "only")->pass,
				 find(&r, "only")->detail ? find(&r, "only")->detail : "");
		vn_result_clear(&r);
		json_object_put(results[0]);
	}
	loaded_free(&l);
}

static const char cxl4[] =
	"<topology name='c'><node id='0' cpus='0' memory='256M'/><node id='1' cpus='1' memory='256M'/>"
	"<node id='2' cpus='' memory='256M' memory-kind='cxl'/><node id='3' cpus='' memory='256M' "
	"memory-kind='cxl'/><distances><row node='0'>10 21 14 24</row><row node='1'>21 10 24 14</row>"
	"<row node='2'>14 24 10 26</row><row node='3'>24 14 26 10</row></distances></topology>";

/* One tiermove result judged by the scenario's assertions: a verdict named name, or the reason it was none. */
static void judge_one(const struct loaded *l, const char *result, const char *name, bool pass, const char *observed,
		      const char *unobserved, size_t i)
{
	struct vn_error err = {0};
	struct vn_result_run r = {0};
	json_object *results[1] = {json_tokener_parse(result)};
	struct vn_run_step_data steps[1] = {{.nresults = 1, .results = results}};
	struct vn_run_data d = {.s = l->s, .t = l->t, .steps = steps};

	assert_non_null(results[0]);
	int rc = vn_scenario_assert(&d, &r, &err);
	if (unobserved) {
		assert_int_equal(rc, -ENODATA);
		assert_int_equal(err.kind, VN_ERR_INFRA);
		if (!strstr(err.msg, unobserved))
			fail_msg("case %zu: %s", i, err.msg);
		vn_error_clear(&err);
	} else {
		if (rc != 0)
			fail_msg("case %zu: %s", i, err.msg);
		const struct vn_verdict *v = find(&r, name);
		if (v->pass != pass || !strstr(v->observed, observed))
			fail_msg("case %zu: pass %d, observed %s, detail %s", i, v->pass, v->observed,
				 v->detail ? v->detail : "");
	}
	vn_result_clear(&r);
	json_object_put(results[0]);
}

#define NODEMO(DE, DK, DD, RUN, MAX2) NODEMO_LOW("true", DE, DK, DD, RUN, MAX2)
#define NODEMO_LOW(LOW, DE, DK, DD, RUN, MAX2)                                                        \
	"{\"stop_at_low\":{\"node\":0,\"reached\":" LOW "},\"demotion_enabled\":" DE                  \
	",\"pages_max_per_node\":{\"0\":100,\"1\":0,\"2\":" #MAX2 ",\"3\":0},"                        \
	"\"phases\":[{\"phase\":0,\"vmstat\":{\"pgdemote_kswapd\":" DK ",\"pgdemote_direct\":" DD     \
	",\"pageoutrun\":" RUN ",\"pgscan_kswapd\":0,\"pgscan_direct\":0}},{\"phase\":1,\"vmstat\":{" \
	"\"pgdemote_kswapd\":0,\"pgdemote_direct\":0,\"pageoutrun\":0,\"pgscan_kswapd\":0,\"pgscan_direct\":0}}]}"

/* no_demotion: under reclaim with demotion_enabled false, no pgdemote_* and no page off the bound node. */
static void test_no_demotion(void **state)
{
	static const char s4[] =
		"{\"name\":\"n\",\"topology\":\"4node-cxl-tiered\",\"demotion_enabled\":false,\"steps\":[{\"name\":"
		"\"tm\",\"workload\":\"tiermove\",\"placement\":{\"policy\":\"membind\",\"nodes\":[0]}}],"
		"\"assertions\":[{\"type\":\"no_demotion\",\"step\":\"tm\"}]}";
	static const struct {
		const char *result, *observed, *unobserved;
		bool pass;
	} cases[] = {
		{NODEMO("false", "0", "0", "3", 0),
		 "pgdemote_kswapd 0, pgdemote_direct 0 under reclaim (pageoutrun 3, pgscan_kswapd 0, pgscan_direct 0, "
		 "zone_reclaim_failed 0); pages only on node 0: yes",
		 NULL, true},
		/* Demoted although disabled: failed, counted by either counter. */
		{NODEMO("false", "40", "0", "3", 0), "pgdemote_kswapd 40", NULL, false},
		{NODEMO("false", "0", "7", "0", 0), "pgdemote_direct 7", NULL, false},
		/* No counter moved, yet a page of a step bound to node 0 was on node 2. */
		{NODEMO("false", "0", "0", "3", 10), "pages only on node 0: no", NULL, false},
		/* Never under reclaim, demotion on, no such file, no counter: nothing to judge. */
		{NODEMO("false", "0", "0", "0", 0), NULL, "never came under reclaim", false},
		/* kswapd ran, but the node was not below its low watermarks: maybe a pass that found it balanced. */
		{NODEMO_LOW("false", "false", "0", "0", "3", 0), NULL, "never came under reclaim", false},
		{NODEMO("true", "0", "0", "3", 0), NULL, "demotion_enabled true", false},
		{NODEMO("null", "0", "0", "3", 0), NULL, "demotion_enabled unknown", false},
		{NODEMO("false", "null", "0", "3", 0), NULL, "no pgdemote_kswapd per phase", false},
	};
	struct loaded l = load(cxl4, "t4.xml", s4, "n.json");

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		judge_one(&l, cases[i].result, "nothing of tm is demoted", cases[i].pass, cases[i].observed,
			  cases[i].unobserved, i);
	loaded_free(&l);
}

/* A tiermove phase that moved 1000 hot pages up, with its pgpromote_success and pgpromote_candidate. */
#define PHASE_C(PROMO, CAND)                                                                          \
	"{\"phase\":1,\"vmstat\":{\"pgpromote_success\":" PROMO ",\"pgpromote_candidate\":" CAND "}," \
	"\"samples\":[{\"t\":1,\"hot_pages_per_node\":{\"0\":0,\"1\":0,\"2\":1000,\"3\":0}},"         \
	"{\"t\":2,\"hot_pages_per_node\":{\"0\":1000,\"1\":0,\"2\":0,\"3\":0}}]}"
#define MODE_RUN(NB, PROMO, CAND) "{\"numa_balancing\":" NB ",\"phases\":[{\"phase\":0}," PHASE_C(PROMO, CAND) "]}"

/*
 * promotion with "mode": 6.1 counts pgpromote_success for a lower-to-top
 * move in mode 1 as in mode 2, so mode 2 must also show candidates (the
 * hot-page path's count), and the step must have run in the mode asked.
 */
static void test_promotion_mode(void **state)
{
	static const char s2[] =
		"{\"name\":\"p\",\"topology\":\"4node-cxl-tiered\",\"steps\":[{\"name\":\"tm\","
		"\"workload\":\"tiermove\",\"placement\":{\"policy\":\"cpunodebind\",\"nodes\":[0]}}],"
		"\"assertions\":[{\"type\":\"promotion\",\"step\":\"tm\",\"fraction\":0.9,\"mode\":%s}]}";
	static const struct {
		const char *mode, *result, *observed, *unobserved;
		bool pass;
	} cases[] = {
		{"2", MODE_RUN("2", "1000", "1000"),
		 "pgpromote_success 1000, pgpromote_candidate 1000; numa_balancing 2", NULL, true},
		/* Promoted and counted as promotions, but no candidate: mode 1's path, which 6.1 counts the same. */
		{"2", MODE_RUN("2", "1000", "0"), "pgpromote_candidate 0", NULL, false},
		/* The step ran in mode 1: not the question asked. */
		{"2", MODE_RUN("1", "1000", "0"), NULL, "kernel.numa_balancing 1, not the 2 asked", false},
		{"2", "{\"phases\":[{\"phase\":0}," PHASE_C("1000", "1000") "]}", NULL,
		 "did not say its kernel.numa_balancing", false},
		{"2", MODE_RUN("2", "1000", "null"), NULL, "no pgpromote_candidate", false},
		{"1", MODE_RUN("1", "1000", "0"), "numa_balancing 1", NULL, true},
		{"1", MODE_RUN("1", "1000", "5"), "pgpromote_candidate 5", NULL, false},
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char json[512];
		snprintf(json, sizeof(json), s2, cases[i].mode);
		struct loaded l = load(cxl4, "t4.xml", json, "p.json");
		judge_one(&l, cases[i].result, "hot pages of tm on a lower tier", cases[i].pass, cases[i].observed,
			  cases[i].unobserved, i);
		loaded_free(&l);
	}
}

/*
 * Mode 2 on a target node with over 1G: pgdat_free_space_enough() can hold
 * there, and 6.1 then promotes without a candidate: no candidate is no verdict.
 */
static void test_promotion_mode_roomy(void **state)
{
	static const char big[] =
		"<topology name='c'><node id='0' cpus='0' memory='2G'/><node id='1' cpus='1' memory='256M'/>"
		"<node id='2' cpus='' memory='256M' memory-kind='cxl'/><node id='3' cpus='' memory='256M' "
		"memory-kind='cxl'/><distances><row node='0'>10 21 14 24</row><row node='1'>21 10 24 14</row>"
		"<row node='2'>14 24 10 26</row><row node='3'>24 14 26 10</row></distances></topology>";
	static const char s2[] =
		"{\"name\":\"p\",\"topology\":\"4node-cxl-tiered\",\"steps\":[{\"name\":\"tm\","
		"\"workload\":\"tiermove\",\"placement\":{\"policy\":\"cpunodebind\",\"nodes\":[0]}}],"
		"\"assertions\":[{\"type\":\"promotion\",\"step\":\"tm\",\"fraction\":0.9,\"mode\":2}]}";
	struct loaded l = load(big, "t4.xml", s2, "p.json");

	judge_one(&l, MODE_RUN("2", "1000", "0"), "hot pages of tm", false, NULL, "over 1G", 0);
	judge_one(&l, MODE_RUN("2", "1000", "7"), "hot pages of tm", true, "pgpromote_candidate 7", NULL, 1);
	loaded_free(&l);
}

/* A first touch under node reclaim (vm.zone_reclaim_mode 5) of a step bound to nodes 0-1, from node 0's CPUs. */
#define NODEMO_ZR(DK, DD, SCAN, ZF, MAX0, MAX1, MAX2)                                                         \
	"{\"demotion_enabled\":false,\"pages_max_per_node\":{\"0\":" #MAX0 ",\"1\":" #MAX1 ",\"2\":" #MAX2    \
	",\"3\":0},\"phases\":[{\"phase\":0,\"vmstat\":{\"pgdemote_kswapd\":" #DK ",\"pgdemote_direct\":" #DD \
	",\"pageoutrun\":2,\"pgscan_kswapd\":0,\"pgscan_direct\":" #SCAN ",\"zone_reclaim_failed\":" #ZF "}}]}"

/*
 * no_demotion on the shipped step: bound to DRAM nodes 0-1, node 0 full,
 * node reclaim on. Demotion off, it scans nothing (anon only, no swap),
 * fails, and the pages fall back to node 1: pass. The figures are a run's
 * (docs/tiering.md); the failing one is the same step with demotion_enabled
 * turned on one second into it, as a kernel ignoring the switch would do.
 */
static void test_no_demotion_fallback(void **state)
{
	static const char s4[] =
		"{\"name\":\"n\",\"topology\":\"4node-cxl-tiered\",\"steps\":[{\"name\":\"tm\",\"workload\":"
		"\"tiermove\",\"placement\":{\"policy\":\"membind\",\"nodes\":[0,1],\"cpu_nodes\":[0]}}],"
		"\"assertions\":[{\"type\":\"no_demotion\",\"step\":\"tm\"}]}";
	static const struct {
		const char *result, *observed, *unobserved;
		bool pass;
	} cases[] = {
		/* Only the failed node reclaim says reclaim ran; node 1's pages are the allocator's fallback. */
		{NODEMO_ZR(0, 0, 0, 44310, 45221, 20315, 0), "zone_reclaim_failed 44310); pages only on node 0-1: yes",
		 NULL, true},
		{NODEMO_ZR(0, 20402, 65505, 3480, 45025, 137, 20374), "pgdemote_direct 20402", NULL, false},
		/* Demoted pages alone, the counters still: the lower-tier node convicts. */
		{NODEMO_ZR(0, 0, 0, 44310, 45025, 137, 20374), "pages only on node 0-1: no", NULL, false},
		/* No evidence of reclaim at all. */
		{NODEMO_ZR(0, 0, 0, 0, 45221, 20315, 0), NULL, "never came under reclaim", false},
	};
	struct loaded l = load(cxl4, "t4.xml", s4, "n.json");

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		judge_one(&l, cases[i].result, "nothing of tm is demoted", cases[i].pass, cases[i].observed,
			  cases[i].unobserved, i);
	loaded_free(&l);
}

#define RATE(P1, END1) RATE_AT("1", "never", P1, END1)
#define RATE_AT(LIM, THP, P1, END1)                                                                        \
	"{\"promote_rate_limit_MBps\":" LIM ",\"thp\":\"" THP "\",\"phases\":[{\"phase\":0,\"start_s\":0," \
	"\"end_s\":3,\"vmstat\":{\"pgpromote_success\":0}},{\"phase\":1,\"start_s\":3,\"end_s\":" #END1    \
	",\"vmstat\":{\"pgpromote_success\":" P1 "}}]}"

/*
 * promotion_rate at the 1 MB/s the kernel had = 256 pages per > 1 s
 * window, one target node (node 0's CPUs): a 6 s phase meets at most 8
 * windows, 2048 pages; with THP not "never" a window may pass 511 more
 * (one 2M page past the limit).
 */
static void test_promotion_rate(void **state)
{
	static const char s4[] =
		"{\"name\":\"r\",\"topology\":\"4node-cxl-tiered\",\"sysctls\":{\"kernel.numa_balancing\":2},"
		"\"steps\":[{\"name\":\"tm\",\"workload\":\"tiermove\",\"placement\":{\"policy\":\"cpunodebind\","
		"\"nodes\":[0]}}],\"assertions\":[{\"type\":\"promotion_rate\",\"step\":\"tm\"}]}";
	static const struct {
		const char *result, *observed, *unobserved;
		bool pass;
	} cases[] = {
		{RATE("1536", 9), "1536 pages in 6.0 s (1.00 MB/s)", NULL, true},
		{RATE("2048", 9), "2048 pages in 6.0 s (1.33 MB/s)", NULL, true},
		{RATE("2049", 9), "2049 pages in 6.0 s", NULL, false},
		/* The whole 32M window at once: what no limit looks like. */
		{RATE("8192", 9), "8192 pages in 6.0 s (5.33 MB/s)", NULL, false},
		/* 6.5 s: still floor(6.5) + 2 = 8 windows. */
		{RATE("2049", 9.5), "2049 pages in 6.5 s", NULL, false},
		{RATE("0", 9), NULL, "promoted nothing", false},
		{RATE("null", 9), NULL, "without pgpromote_success", false},
		/* THP madvise or always: 767 pages a window, 6136 in 6 s. */
		{RATE_AT("1", "always", "6136", 9), "(3.99 MB/s)", NULL, true},
		{RATE_AT("1", "madvise", "6137", 9), "6137 pages", NULL, false},
		/* The limit the kernel had: 4 MB/s allows 8192 in 6 s. */
		{RATE_AT("4", "never", "8192", 9), "(5.33 MB/s)", NULL, true},
		{RATE_AT("null", "never", "8192", 9), NULL, "saw no kernel.numa_balancing_promote_rate_limit_MBps",
		 false},
	};
	struct loaded l = load(cxl4, "t4.xml", s4, "r.json");

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		judge_one(&l, cases[i].result, "promotion during tm stays under", cases[i].pass, cases[i].observed,
			  cases[i].unobserved, i);
	loaded_free(&l);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_page_from_memory),         cmocka_unit_test(test_every_type),
		cmocka_unit_test(test_metrics_deltas),           cmocka_unit_test(test_change_against_base),
		cmocka_unit_test(test_fallback_rebuilds),        cmocka_unit_test(test_judge_unobservable),
		cmocka_unit_test(test_observations_as_metrics),  cmocka_unit_test(test_locality),
		cmocka_unit_test(test_metrics_locality),         cmocka_unit_test(test_promotion),
		cmocka_unit_test(test_fallback_tiered),          cmocka_unit_test(test_demotion_fallback),
		cmocka_unit_test(test_demotion_by_kernel_model), cmocka_unit_test(test_no_demotion),
		cmocka_unit_test(test_no_demotion_fallback),     cmocka_unit_test(test_promotion_rate),
		cmocka_unit_test(test_promotion_mode),           cmocka_unit_test(test_promotion_mode_roomy),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
