/*
 * Assertion evaluation on a hand-made run: every type, passing and failing,
 * with the observed value it must report.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdlib.h>
#include <string.h>

#include "compare/compare.h"
#include "scenario/run-priv.h"
#include "scenario/runner.h"
#include "util/alloc.h"

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

static const struct vn_verdict *find(const struct vn_report *r, const char *prefix)
{
	for (unsigned i = 0; i < r->nverdicts; i++)
		if (strncmp(r->verdicts[i].name, prefix, strlen(prefix)) == 0)
			return &r->verdicts[i];
	fail_msg("no verdict named %s...", prefix);
	return NULL;
}

static void test_every_type(void **state)
{
	struct vn_topology *t = NULL;
	struct vn_scenario *s = NULL;
	struct vn_error err = {0};
	struct vn_run_data d = {0};
	struct vn_report r = {0};
	struct vn_run_step_data steps[1] = {{0}};

	assert_int_equal(vn_topology_parse(topo, strlen(topo), "t.xml", &t, &err), 0);
	assert_int_equal(vn_scenario_parse(scn, "t.json", &s, &err), 0);
	d.s = s;
	d.t = t;
	d.vmstat_before = kv("{\"numa_pages_migrated\":5,\"numa_hint_faults\":100,\"numa_hint_faults_local\":10}");
	d.vmstat_after = kv("{\"numa_pages_migrated\":900,\"numa_hint_faults\":200,\"numa_hint_faults_local\":50}");
	d.dmesg = strdup("[0.0] Fallback order for Node 0: 0 1 \n[0.0] Fallback order for Node 1: 1 0 \n");
	d.distances[0] = strdup("10 21\n");
	d.distances[1] = strdup("21 11\n"); /* the guest disagrees */
	/* Moved at uptime 10: 60% local after 2 s, 80% after 4 s, never 90%. */
	assert_int_equal(vn_samples_parse(LINE(9, 0, 4000) LINE(12, 1600, 2400) LINE(14, 3200, 800) LINE(30, 4000, 0),
					  "samples.jsonl", &d.samples, &err),
			 0);
	d.nmoves = 1;
	d.moves[0] = (struct vn_run_move){.step = 0, .to_node = 0, .uptime = 10, .npids = 1, .pids = {100}};
	steps[0].npids = 1;
	steps[0].pids[0] = 100;
	steps[0].nresults = 2;
	steps[0].results[0] = kv("{\"kernels\":{\"triad\":{\"best_mbps\":150}},\"list\":[{\"x\":1},{\"x\":7}]}");
	steps[0].results[1] = kv("{\"kernels\":{\"triad\":{\"best_mbps\":50}},\"list\":[{\"x\":1},{\"x\":7}]}");
	d.steps = steps;

	vn_scenario_assert(&d, &r);
	assert_int_equal(r.nverdicts, s->nasserts);

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
	assert_non_null(strstr(fol->observed, "after 4.0 s"));
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

	vn_report_clear(&r);
	json_object_put(steps[0].results[0]);
	json_object_put(steps[0].results[1]);
	json_object_put(d.vmstat_before);
	json_object_put(d.vmstat_after);
	free(d.dmesg);
	free(d.distances[0]);
	free(d.distances[1]);
	vn_samples_free(&d.samples);
	vn_scenario_free(s);
	vn_topology_free(t);
}

/* Change assertions of a matrix, judged from a real comparison (the compare fixture group numa-ab). */
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
		"{\"type\":\"change\",\"name\":\"missing\",\"metric\":\"vmstat.no_such\",\"op\":\"<=\",\"value\":1}]}";
	struct vn_scenario *s = NULL;
	struct vn_compare *cmp = NULL;
	struct vn_report rep = {0};
	struct vn_error err = {0};
	const char *src = getenv("VN_SOURCE_DIR");
	char *fixture = vn_xasprintf("%s/tests/fixtures/compare/numa-ab", src ? src : ".");
	const char *dirs[] = {fixture};

	assert_int_equal(vn_scenario_parse(m, "m.json", &s, &err), 0);
	assert_int_equal(vn_compare_load(dirs, 1, &(struct vn_compare_opts){0}, &cmp, &err), 0);
	vn_scenario_judge_changes(s, cmp, &rep);
	assert_int_equal(rep.nverdicts, 4);
	const struct vn_verdict *v = find(&rep, "migrations drop");
	assert_true(v->pass);
	assert_non_null(strstr(v->observed, "-100.00%"));
	assert_non_null(strstr(v->observed, "significant"));
	assert_false(find(&rep, "migrations hold")->pass);
	/* Not significant: passes whatever its %change says. */
	v = find(&rep, "duration within 1%");
	assert_true(v->pass);
	v = find(&rep, "missing");
	assert_false(v->pass);
	assert_non_null(strstr(v->observed, "no value of vmstat.no_such"));
	vn_report_clear(&rep);
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
	vn_report_clear(&rep);
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
	struct vn_topology *t = NULL;
	struct vn_scenario *s = NULL;
	struct vn_error err = {0};
	struct vn_run_data d = {0};
	struct vn_report r = {0};
	struct vn_run_step_data steps[1] = {{0}};

	assert_int_equal(vn_topology_parse(t4, strlen(t4), "t4.xml", &t, &err), 0);
	if (vn_scenario_parse(s4, "h.json", &s, &err) < 0)
		fail_msg("%s", err.msg);
	assert_true(s->steps[0].is_hotplug);
	d.s = s;
	d.t = t;
	d.steps = steps;
	d.nhotplugs = 1;
	d.hotplugs[0] = (struct vn_run_hotplug){.step = 0, .what = s->steps[0].hotplug, .rebuilds = 1};
	vn_fallback_state_hotplugged(t, &d.hotplugs[0].seen);
	d.dmesg = vn_xasprintf("%s%s", boot, rebuilt);

	vn_scenario_assert(&d, &r);
	const struct vn_verdict *now = find(&r, "fallback order matches model 5.18");
	assert_true(now->pass);
	assert_non_null(strstr(now->observed, "rebuild: 0: 0 1 2 3 | 1: 1 0 3 2"));
	/* The pre-5.15 model differs in node 3's list of both builds, and says which build. */
	const struct vn_verdict *old = find(&r, "old");
	assert_false(old->pass);
	assert_non_null(strstr(old->detail, "boot: Node 3: expected 3 2 0 1, kernel printed 3 2 1 0"));
	assert_non_null(strstr(old->detail, "rebuild #1 (+512M node 3 in step add; memory on nodes 0-3, CPUs seen on "
					    "nodes 0-3): Node 3: expected 3 2 0 1, kernel printed 3 2 1 0"));
	vn_report_clear(&r);

	/* A rebuild the kernel did not print is a failure too. */
	free(d.dmesg);
	d.dmesg = vn_xstrdup(boot);
	vn_scenario_assert(&d, &r);
	now = find(&r, "fallback order matches model 5.18");
	assert_false(now->pass);
	assert_non_null(strstr(now->detail, "printed 1 build of its lists, the model expects 2"));
	vn_report_clear(&r);
	free(d.dmesg);
	vn_scenario_free(s);
	vn_topology_free(t);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_every_type),
		cmocka_unit_test(test_change_against_base),
		cmocka_unit_test(test_fallback_rebuilds),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
