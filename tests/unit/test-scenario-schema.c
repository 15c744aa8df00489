#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <dirent.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "scenario/scenario-limits.h"
#include "scenario/scenario-types.h"
#include "scenario/scenario.h"
#include "scenario/schema-priv.h"
#include "util/cleanup.h"
#include "util/strbuf.h"

static const char full[] =
	"{\n"
	"  \"name\": \"full-1\",\n"
	"  \"description\": \"every key\",\n"
	"  \"topology\": \"4node-amd\",\n"
	"  \"kernel\": \"kernels/patched.json\",\n"
	"  \"append\": \"numa_balancing=enable\",\n"
	"  \"sysctls\": {\"kernel.numa_balancing\": 1, \"vm.zone_reclaim_mode\": \"0\", \"kernel.x\": true,"
	" \"vm.y\": 0.5},\n"
	"  \"thp\": \"madvise\",\n"
	"  \"hugetlb\": {\"0\": 64, \"1\": 32},\n"
	"  \"cgroups\": [\"bench\", \"burners\"],\n"
	"  \"tracepoints\": [\"sched:sched_move_numa\", \"migrate:mm_migrate_pages\"],\n"
	"  \"sample_interval_s\": 0.5,\n"
	"  \"timeout_s\": 600,\n"
	"  \"repeats\": 3,\n"
	"  \"quick_scale\": 0.1,\n"
	"  \"steps\": [\n"
	"    {\"name\": \"s\", \"workload\": \"stream\", \"args\": [\"--iterations\", \"5\"],\n"
	"     \"placement\": {\"policy\": \"membind\", \"nodes\": [0, 1], \"cpu_nodes\": [3]},\n"
	"     \"processes\": 2, \"threads\": 4, \"size\": \"200M\", \"duration_s\": 40, \"cgroup\": \"bench\",\n"
	"     \"background\": true,\n"
	"     \"actions\": [{\"at_s\": 5, \"move\": {\"fraction\": 0.5, \"to_node\": 0}},"
	" {\"at_s\": 7.5, \"move\": {\"to_node\": 2}}, {\"at_s\": 9, \"hotplug\": {\"node\": 3, \"cpus\": 1}}]},\n"
	"    {\"name\": \"c\", \"workload\": \"cmd\", \"command\": [\"sh\", \"-c\", \"echo /x\"], \"args\": [\"y\"],\n"
	"     \"placement\": {\"policy\": \"preferred\", \"nodes\": [2]}, \"size\": \"1000K\"},\n"
	"    {\"name\": \"h\", \"hotplug\": {\"node\": 3, \"memory\": \"256M\", \"online\": \"kernel\"}}\n"
	"  ],\n"
	"  \"assertions\": [\n"
	"    {\"type\": \"fallback\", \"model\": \"pre-5.15\"},\n"
	"    {\"type\": \"distances\", \"name\": \"dist\"},\n"
	"    {\"type\": \"counter\", \"counter\": \"numa_pages_migrated\", \"op\": \">\", \"value\": 0},\n"
	"    {\"type\": \"ratio\", \"numerator\": \"numa_hint_faults_local\", \"denominator\": \"numa_hint_faults\","
	" \"op\": \">=\", \"value\": 0.5},\n"
	"    {\"type\": \"memory_follows\", \"step\": \"s\", \"fraction\": 0.8, \"within_s\": 30},\n"
	"    {\"type\": \"running_per_node\", \"step\": \"s\", \"tolerance\": 0.5},\n"
	"    {\"type\": \"metric\", \"step\": \"s\", \"path\": \"kernels.triad.best_mbps\", \"op\": \"!=\", \"value\": "
	"-1},\n"
	"    {\"type\": \"memory_on_node\", \"step\": \"c\", \"node\": 2, \"fraction\": 0.9}\n"
	"  ]\n"
	"}\n";

static void check_full(const struct vn_scenario *s)
{
	assert_string_equal(s->name, "full-1");
	assert_string_equal(s->topology, "4node-amd");
	assert_string_equal(s->kernel, "kernels/patched.json");
	assert_int_equal(s->nsysctls, 4);
	assert_string_equal(s->sysctls[0].key, "kernel.numa_balancing");
	assert_string_equal(s->sysctls[0].value, "1");
	assert_string_equal(s->sysctls[1].value, "0");
	assert_string_equal(s->sysctls[2].value, "1");
	assert_string_equal(s->sysctls[3].value, "0.5");
	assert_string_equal(s->thp, "madvise");
	assert_int_equal(s->nhugetlb, 2);
	assert_int_equal(s->hugetlb[1].node, 1);
	assert_int_equal(s->hugetlb[1].pages, 32);
	assert_string_equal(s->cgroups[1], "burners");
	assert_null(s->cgroups[2]);
	assert_string_equal(s->tracepoints[0], "sched:sched_move_numa");
	assert_string_equal(s->tracepoints[1], "migrate:mm_migrate_pages");
	assert_null(s->tracepoints[2]);
	assert_true(s->sample_interval_s == 0.5);
	assert_int_equal(s->repeats, 3);
	assert_int_equal(s->nsteps, 3);
	const struct vn_scn_step *st = &s->steps[0];
	assert_string_equal(st->argv[0], "--iterations");
	assert_null(st->argv[2]);
	assert_int_equal(st->placement.policy, VN_PLACE_MEMBIND);
	assert_int_equal(st->placement.nnodes, 2);
	assert_int_equal(st->placement.cpu_nodes[0], 3);
	assert_int_equal(st->processes, 2);
	assert_int_equal(st->threads, 4);
	assert_true(st->size == 200ull << 20);
	assert_true(st->duration_s == 40);
	assert_string_equal(st->cgroup, "bench");
	assert_true(st->background);
	assert_int_equal(st->nactions, 3);
	assert_true(st->actions[2].is_hotplug);
	assert_int_equal(st->actions[2].hotplug.node, 3);
	assert_int_equal(st->actions[2].hotplug.cpus, 1);
	assert_false(st->actions[0].is_hotplug);
	assert_true(st->actions[0].fraction == 0.5);
	assert_true(st->actions[1].fraction == 1);
	assert_int_equal(st->actions[1].to_node, 2);
	st = &s->steps[1];
	/* The command first, then args. */
	assert_string_equal(st->argv[2], "echo /x");
	assert_string_equal(st->argv[3], "y");
	assert_int_equal(st->placement.policy, VN_PLACE_PREFERRED);
	assert_true(st->size == 1000 << 10);
	st = &s->steps[2];
	assert_true(st->is_hotplug);
	assert_null(st->workload);
	assert_true(st->hotplug.memory == 256ull << 20);
	assert_true(st->hotplug.online_kernel);
	assert_false(st->hotplug.remove);
	assert_int_equal(s->nasserts, 8);
	assert_int_equal(s->asserts[0].model, VN_FALLBACK_RESET);
	assert_string_equal(s->asserts[0].name, "fallback order matches model pre-5.15");
	assert_string_equal(s->asserts[1].name, "dist");
	assert_string_equal(s->asserts[2].name, "counter numa_pages_migrated > 0");
	assert_string_equal(s->asserts[3].denominator, "numa_hint_faults");
	assert_int_equal(s->asserts[3].op, VN_OP_GE);
	assert_true(s->asserts[4].within_s == 30);
	assert_true(s->asserts[6].value == -1);
	assert_int_equal(s->asserts[6].op, VN_OP_NE);
	assert_int_equal(s->asserts[7].node, 2);
}

static void test_full_round_trip(void **state)
{
	_cleanup_scenario_ struct vn_scenario *s = NULL, *again = NULL;
	struct vn_error err = {0};

	int r = vn_scenario_parse(full, "full.json", &s, &err);
	if (r)
		print_error("%s\n", err.msg);
	assert_int_equal(r, 0);
	check_full(s);
	_cleanup_free_ char *json = vn_scenario_to_json(s);
	assert_non_null(json);
	assert_int_equal(vn_scenario_parse(json, "resolved.json", &again, &err), 0);
	check_full(again);
	/* A fixed point: writing the re-read scenario gives the same text. */
	_cleanup_free_ char *json2 = vn_scenario_to_json(again);
	assert_string_equal(json, json2);
	assert_non_null(strstr(json, "\"echo /x\""));
}

static void test_defaults(void **state)
{
	static const char min[] = "{\"name\": \"m\", \"topology\": \"t.xml\", \"steps\": [{\"name\": \"a\","
				  " \"workload\": \"memfollow\"}], \"assertions\": [{\"type\": \"fallback\"}]}";
	_cleanup_scenario_ struct vn_scenario *s = NULL, *again = NULL;
	struct vn_error err = {0};

	assert_int_equal(vn_scenario_parse(min, "min.json", &s, &err), 0);
	assert_string_equal(s->path, "min.json");
	assert_null(s->kernel);
	assert_null(s->thp);
	assert_int_equal(s->nsysctls, 0);
	assert_non_null(s->cgroups);
	assert_null(s->cgroups[0]);
	assert_non_null(s->tracepoints);
	assert_null(s->tracepoints[0]);
	assert_true(s->sample_interval_s == 1);
	assert_true(s->timeout_s == 900);
	assert_int_equal(s->repeats, 1);
	assert_true(s->quick_scale == 0.25);
	assert_int_equal(s->steps[0].processes, 1);
	assert_int_equal(s->steps[0].threads, 0);
	assert_true(s->steps[0].size == 0);
	assert_true(s->steps[0].duration_s == 0);
	assert_null(s->steps[0].cgroup);
	assert_false(s->steps[0].background);
	assert_int_equal(s->steps[0].placement.policy, VN_PLACE_NONE);
	assert_non_null(s->steps[0].argv);
	assert_null(s->steps[0].argv[0]);
	assert_int_equal(s->asserts[0].model, VN_FALLBACK_DEFAULT);
	assert_string_equal(s->asserts[0].name, "fallback order matches model 5.18");

	/* The resolved form spells the defaults out, and still parses. */
	_cleanup_free_ char *json = vn_scenario_to_json(s);
	assert_non_null(strstr(json, "\"timeout_s\": 900"));
	assert_non_null(strstr(json, "\"quick_scale\": 0.25"));
	assert_non_null(strstr(json, "\"policy\": \"none\""));
	assert_non_null(strstr(json, "\"model\": \"5.18\""));
	assert_null(strstr(json, "\"kernel\""));
	assert_int_equal(vn_scenario_parse(json, "r.json", &again, &err), 0);
}

/* demotion_enabled: left alone unless given; a variant's wins; the run's copy says it and parses again. */
static void test_demotion_enabled(void **state)
{
	static const char js[] =
		"{\"name\": \"d\", \"topology\": \"t.xml\", \"demotion_enabled\": true, \"variants\": ["
		"{\"name\": \"on\"}, {\"name\": \"off\", \"demotion_enabled\": false}],"
		" \"steps\": [{\"name\": \"a\", \"workload\": \"tiermove\"}], \"assertions\": [{\"type\": "
		"\"distances\"}]}";
	_cleanup_scenario_ struct vn_scenario *s = NULL, *again = NULL;
	struct vn_error err = {0};

	assert_int_equal(vn_scenario_parse(js, "d.json", &s, &err), 0);
	assert_int_equal(s->demotion_enabled, 1);
	assert_int_equal(s->variants[0].demotion_enabled, 0);
	assert_int_equal(s->variants[1].demotion_enabled, -1);
	vn_scenario_apply_variant(s, &s->variants[1]);
	assert_int_equal(s->demotion_enabled, -1);
	_cleanup_free_ char *json = vn_scenario_to_json(s);
	assert_non_null(strstr(json, "\"demotion_enabled\": false"));
	assert_int_equal(vn_scenario_parse(json, "r.json", &again, &err), 0);
	assert_int_equal(again->demotion_enabled, -1);
}

static void test_apply_quick(void **state)
{
	static const char text[] =
		"{\"name\": \"q\", \"topology\": \"2node\", \"steps\": ["
		"{\"name\": \"a\", \"workload\": \"stream\", \"size\": \"100M\", \"duration_s\": 40,"
		" \"actions\": [{\"at_s\": 5, \"move\": {\"to_node\": 0}}]},"
		"{\"name\": \"b\", \"workload\": \"stream\", \"size\": \"32M\", \"duration_s\": 4},"
		"{\"name\": \"c\", \"workload\": \"stream\", \"size\": \"8M\", \"duration_s\": 1},"
		"{\"name\": \"d\", \"workload\": \"stream\"}],"
		"\"assertions\": [{\"type\": \"memory_follows\", \"step\": \"a\", \"fraction\": "
		"0.5, \"within_s\": 30},"
		"{\"type\": \"memory_follows\", \"step\": \"a\", \"fraction\": 0.5, \"within_s\": 30,"
		" \"name\": \"mine, within 30 s\"}]}";
	_cleanup_scenario_ struct vn_scenario *s = NULL;
	struct vn_error err = {0};

	assert_int_equal(vn_scenario_parse(text, "q.json", &s, &err), 0);
	vn_scenario_apply_quick(s);
	assert_true(s->steps[0].size == 25ull << 20);
	assert_true(s->steps[0].duration_s == 10);
	assert_true(s->steps[0].actions[0].at_s == 1.25);
	/* Floors: 16 MiB and 2 s, but nothing grows past what was asked. */
	assert_true(s->steps[1].size == 16ull << 20);
	assert_true(s->steps[1].duration_s == 2);
	assert_true(s->steps[2].size == 8ull << 20);
	assert_true(s->steps[2].duration_s == 1);
	assert_true(s->steps[3].size == 0);
	assert_true(s->steps[3].duration_s == 0);
	assert_true(s->asserts[0].within_s == 7.5);
	/* The name printed beside "expected: >= 0.50 within 7.5 s" says the window judged, not the file's. */
	assert_string_equal(s->asserts[0].name, "memory of a follows its CPUs: >= 0.5 within 7.5 s");
	/* A name the user wrote is left as written. */
	assert_true(s->asserts[1].within_s == 7.5);
	assert_string_equal(s->asserts[1].name, "mine, within 30 s");
}

static void test_ops(void **state)
{
	static const struct {
		enum vn_scn_op op;
		const char *name;
		bool lt, eq, gt;
	} t[] = {
		{VN_OP_LT, "<", true, false, false},  {VN_OP_LE, "<=", true, true, false},
		{VN_OP_GT, ">", false, false, true},  {VN_OP_GE, ">=", false, true, true},
		{VN_OP_EQ, "==", false, true, false}, {VN_OP_NE, "!=", true, false, true},
	};
	for (size_t i = 0; i < VN_ARRAY_SIZE(t); i++) {
		assert_string_equal(vn_scn_op_name(t[i].op), t[i].name);
		assert_int_equal(vn_scn_op_eval(t[i].op, 1, 2), t[i].lt);
		assert_int_equal(vn_scn_op_eval(t[i].op, 2, 2), t[i].eq);
		assert_int_equal(vn_scn_op_eval(t[i].op, 3, 2), t[i].gt);
		/* Nothing observed passes nothing. */
		assert_false(vn_scn_op_eval(t[i].op, NAN, 2));
	}
}

/* Errors without a file: a few spot checks of the message shape. */
static void test_error_messages(void **state)
{
	static const struct {
		const char *json, *want;
	} t[] = {
		{"[]", "e.json: $: expected an object, got an array"},
		{"{\"name\": \"x\", \"topology\": \"t\", \"steps\": [{\"name\": \"a\", \"workload\": \"stream\","
		 " \"placement\": {\"policy\": \"membind\", \"nodes\": [\"a\"]}}]}",
		 "e.json: $.steps[0].placement.nodes[0]: expected a node number (0-127), got \"a\""},
		{"{\"name\": \"x\", \"topology\": \"t\", \"sysctls\": {\"kernel/x\": 1}, \"steps\": []}",
		 "e.json: $.sysctls[\"kernel/x\"]: expected a dotted sysctl name like kernel.numa_balancing, got "
		 "\"kernel/x\""},
		{"{\"name\": \"x\", \"topology\": \"t\", \"tracepoints\": [\"sched:sched_move_numa\", \"sched\"], "
		 "\"steps\": []}",
		 "e.json: $.tracepoints[1]: expected a tracepoint \"SUBSYS:EVENT\" (e.g. \"sched:sched_move_numa\"), "
		 "got "
		 "\"sched\""},
		{"{\"name\": \"x\", \"topology\": \"t\", \"tracepoints\": [\"a:b/../c\"], \"steps\": []}",
		 "e.json: $.tracepoints[0]: expected a tracepoint \"SUBSYS:EVENT\" (e.g. \"sched:sched_move_numa\"), "
		 "got "
		 "\"a:b/../c\""},
		{"{\"name\": \"x\", \"topology\": \"t\", \"tracepoints\": [\"a:b\", \"a:b\"], \"steps\": []}",
		 "e.json: $.tracepoints[1]: \"a:b\" is listed twice"},
		{"{\"name\": \"x\",\n \"topology\": 3,}", "e.json:2:16: malformed JSON: unexpected character"},
		{"{\"name\": \"x\"", "e.json:1:13: malformed JSON: unexpected end of file"},
		{"{} {}", "e.json:1:4: malformed JSON: unexpected character"},
	};
	for (size_t i = 0; i < VN_ARRAY_SIZE(t); i++) {
		struct vn_scenario *s = NULL;
		struct vn_error err = {0};
		assert_int_equal(vn_scenario_parse(t[i].json, "e.json", &s, &err), -EINVAL);
		assert_null(s);
		assert_int_equal(err.kind, VN_ERR_INPUT);
		assert_string_equal(err.msg, t[i].want);
	}
}

static char *read_text(const char *path)
{
	_cleanup_fclose_ FILE *f = fopen(path, "r");
	char buf[4096];
	if (!f)
		return NULL;
	size_t n = fread(buf, 1, sizeof(buf) - 1, f);
	buf[n] = '\0';
	buf[strcspn(buf, "\n")] = '\0';
	return strdup(buf);
}

static int json_name(const struct dirent *d)
{
	size_t n = strlen(d->d_name);
	return n > 5 && strcmp(d->d_name + n - 5, ".json") == 0;
}

/* The .json files in VN_SOURCE_DIR/rel, which becomes the working directory (loads name them relative to it). */
static int scan_json(const char *rel, struct dirent ***ents)
{
	const char *src = getenv("VN_SOURCE_DIR");
	char dir[4096];

	if (!src)
		skip();
	snprintf(dir, sizeof(dir), "%s/%s", src, rel);
	assert_int_equal(chdir(dir), 0);
	return scandir(".", ents, json_name, alphasort);
}

/*
 * tests/scenario-bad: each FILE.json is refused with exactly FILE.err's line.
 * VN_UPDATE_GOLDEN=1 rewrites the .err files from the current messages.
 */
static void test_bad_corpus(void **state)
{
	struct dirent **ents = NULL;
	int fails = 0;
	int n = scan_json("tests/scenario-bad", &ents);

	assert_true(n >= 15);
	bool update = getenv("VN_UPDATE_GOLDEN") && strcmp(getenv("VN_UPDATE_GOLDEN"), "1") == 0;
	for (int i = 0; i < n; i++) {
		const char *name = ents[i]->d_name;
		char errpath[512];
		struct vn_scenario *s = NULL;
		struct vn_error err = {0};
		snprintf(errpath, sizeof(errpath), "%.*s.err", (int)(strlen(name) - 5), name);
		int r = vn_scenario_load(name, &s, &err);
		if (r == 0 || err.kind != VN_ERR_INPUT) {
			print_error("%s: accepted or not an input error (%d)\n", name, r);
			vn_scenario_free(s);
			fails++;
		} else if (update) {
			_cleanup_fclose_ FILE *f = fopen(errpath, "w");
			assert_non_null(f);
			fprintf(f, "%s\n", err.msg);
		} else {
			_cleanup_free_ char *want = read_text(errpath);
			if (!want || strcmp(want, err.msg) != 0) {
				print_error("%s:\n  want: %s\n  got:  %s\n", name, want ? want : "(no .err file)",
					    err.msg);
				fails++;
			}
		}
		free(ents[i]);
	}
	free(ents);
	assert_int_equal(fails, 0);
}

static void test_shipped_scenarios(void **state)
{
	struct dirent **ents = NULL;
	int fails = 0;
	int n = scan_json("scenarios", &ents);
	const char *src = getenv("VN_SOURCE_DIR");

	assert_true(n >= 7);
	for (int i = 0; i < n; i++) {
		_cleanup_scenario_ struct vn_scenario *s = NULL, *again = NULL;
		struct vn_error err = {0};
		if (vn_scenario_load(ents[i]->d_name, &s, &err) < 0) {
			print_error("%s\n", err.msg);
			fails++;
		} else {
			/* The file's name is the scenario's name: results/<name>-<time>/ is found by it. */
			size_t len = strlen(ents[i]->d_name) - 5;
			if (strlen(s->name) != len || strncmp(s->name, ents[i]->d_name, len) != 0) {
				print_error("%s: name \"%s\" differs from the file name\n", ents[i]->d_name, s->name);
				fails++;
			}
			/* The topology must be a shipped one, and --quick must keep it valid. */
			char topo[4200];
			if (strchr(s->topology, '/'))
				snprintf(topo, sizeof(topo), "%s/scenarios/%s", src, s->topology);
			else
				snprintf(topo, sizeof(topo), "%s/topologies/%s.xml", src, s->topology);
			if (access(topo, R_OK) != 0) {
				print_error("%s: topology %s not found\n", ents[i]->d_name, topo);
				fails++;
			}
			vn_scenario_apply_quick(s);
			_cleanup_free_ char *json = vn_scenario_to_json(s);
			if (vn_scenario_parse(json, "quick.json", &again, &err) < 0) {
				print_error("%s after --quick: %s\n", ents[i]->d_name, err.msg);
				fails++;
			}
		}
		free(ents[i]);
	}
	free(ents);
	assert_int_equal(fails, 0);
}

/* A type is one row of vn_assert_types: a row missing a member is a type half added. */
static void test_assert_types_whole(void **state)
{
	(void)state;
	for (unsigned i = 0; i < VN_ASSERT_NTYPES; i++) {
		const struct vn_assert_type *t = &vn_assert_types[i];
		if (!t->json || !*t->json)
			fail_msg("assertion type %u has no JSON name", i);
		for (unsigned j = 0; j < i; j++)
			if (strcmp(vn_assert_types[j].json, t->json) == 0)
				fail_msg("assertion types %u and %u are both \"%s\"", j, i, t->json);
		if (!t->parse || !t->emit || !t->validate || !t->judge || !t->name)
			fail_msg("assertion type %s lacks a function (parse %p, emit %p, validate %p, judge %p, name "
				 "%p)",
				 t->json, (void *)t->parse, (void *)t->emit, (void *)t->validate, (void *)t->judge,
				 (void *)t->name);
		assert_string_equal(t->keys[0], "type");
		assert_string_equal(t->keys[1], "name");
		unsigned k = 0;
		while (k < sizeof(t->keys) / sizeof(t->keys[0]) && t->keys[k])
			k++;
		if (k == sizeof(t->keys) / sizeof(t->keys[0]))
			fail_msg("assertion type %s: its keys are not NULL-terminated", t->json);
		assert_true(t->observed <= VN_OBSERVED_VALUE);
	}
}

/*
 * The runner's old arbitrary caps (300 commands a run, 256 timed actions, 126
 * arguments) are gone: a scenario over them parses and keeps everything.
 */
static void test_over_old_caps(void **state)
{
	_cleanup_strbuf_ struct vn_strbuf b = VN_STRBUF_INIT;
	_cleanup_scenario_ struct vn_scenario *s = NULL;
	struct vn_error err = {0};

	vn_strbuf_printf(&b, "{\"name\": \"big\", \"topology\": \"2node\", \"steps\": [");
	for (unsigned i = 0; i < 300; i++)
		vn_strbuf_printf(&b, "%s{\"name\": \"s%u\", \"workload\": \"stream\", \"processes\": %d}",
				 i ? ", " : "", i, VN_SCN_RUNNING_MAX);
	vn_strbuf_printf(&b, ", {\"name\": \"moves\", \"workload\": \"memfollow\", \"args\": [");
	for (unsigned i = 0; i < 300; i++)
		vn_strbuf_printf(&b, "%s\"--a%u\"", i ? ", " : "", i);
	vn_strbuf_printf(&b, "], \"actions\": [");
	for (unsigned i = 0; i < 300; i++)
		vn_strbuf_printf(&b, "%s{\"at_s\": %u, \"move\": {\"to_node\": %u}}", i ? ", " : "", i, i % 2);
	vn_strbuf_printf(&b, "]}]}");

	if (vn_scenario_parse(b.s, "big.json", &s, &err) < 0)
		fail_msg("%s", err.msg);
	assert_int_equal(s->nsteps, 301);
	unsigned processes = 0;
	for (unsigned i = 0; i < 300; i++)
		processes += s->steps[i].processes;
	assert_int_equal(processes, 300 * VN_SCN_RUNNING_MAX);
	const struct vn_scn_step *m = &s->steps[300];
	assert_int_equal(m->nactions, 300);
	assert_true(m->actions[299].at_s == 299);
	assert_int_equal(m->actions[299].to_node, 1);
	size_t argc = 0;
	while (m->argv[argc])
		argc++;
	assert_int_equal(argc, 300);
	assert_string_equal(m->argv[299], "--a299");
}

/* What stays capped is refused at parse time, naming the path, the value and the limit. */
static void test_limits(void **state)
{
	static const char *const bad[][2] = {
		{"{\"name\": \"l\", \"topology\": \"t\", \"steps\": [{\"name\": \"a\", \"workload\": \"stream\", "
		 "\"processes\": 13}]}",
		 "l.json: $.steps[0].processes: 13, at most 12 (processes running at once: the guest agent runs 16 "
		 "commands, 4 of them the runner's own)"},
		{"{\"name\": \"l\", \"topology\": \"t\", \"steps\": [{\"name\": \"a\", \"workload\": \"stream\", "
		 "\"processes\": 8, \"background\": true}, {\"name\": \"b\", \"workload\": \"stream\", \"processes\": "
		 "5}]}",
		 "l.json: $.steps[1].processes: 5, and 8 of the background steps before it still running: 13, at most "
		 "12 "
		 "(processes running at once: the guest agent runs 16 commands, 4 of them the runner's own)"},
	};

	assert_int_equal(VN_SCN_RUNNING_MAX, 12);
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		struct vn_scenario *s = NULL;
		struct vn_error err = {0};
		assert_int_equal(vn_scenario_parse(bad[i][0], "l.json", &s, &err), -EINVAL);
		assert_int_equal(err.kind, VN_ERR_INPUT);
		assert_string_equal(err.msg, bad[i][1]);
	}
	/* At the limit, and a background step's processes counted only for the steps after it. */
	static const char ok[] =
		"{\"name\": \"l\", \"topology\": \"t\", \"steps\": [{\"name\": \"a\", \"workload\": \"stream\", "
		"\"processes\": 12}, {\"name\": \"b\", \"workload\": \"stream\", \"processes\": 4, \"background\": "
		"true}, "
		"{\"name\": \"c\", \"workload\": \"stream\", \"processes\": 8}]}";
	_cleanup_scenario_ struct vn_scenario *s = NULL;
	struct vn_error err = {0};
	if (vn_scenario_parse(ok, "l.json", &s, &err) < 0)
		fail_msg("%s", err.msg);
}

/* Overrides are a value set over a copy: the copy has them, the parsed scenario keeps its own. */
static void test_override_copy(void **state)
{
	struct vn_scenario *s = NULL, *c;
	struct vn_error err = {0};
	char *const share[] = {"/srv/b:/mnt/b", NULL}, *const files[] = {"/srv/f", NULL};
	const struct vn_scn_overrides over = {
		.arch = "aarch64", .locality = true, .quick = true, .share = share, .files = files};

	(void)state;
	if (vn_scenario_parse("{\"name\": \"o\", \"topology\": \"t.xml\", \"arch\": \"x86_64\", \"share\": "
			      "[\"/srv/a\"], \"tracepoints\": "
			      "[\"sched:sched_x\"], \"variants\": [{\"name\": \"v\", \"append\": \"quiet\"}], "
			      "\"steps\": [{\"name\": \"a\", \"workload\": \"stream\", \"duration_s\": 40, \"size\": "
			      "\"256M\"}], \"assertions\": [{\"type\": \"distances\"}]}",
			      "o.json", &s, &err) < 0)
		fail_msg("%s", err.msg);
	char *before = vn_scenario_to_json(s);
	/* A copy without overrides is the same scenario. */
	c = vn_scenario_override(s, &(struct vn_scn_overrides){0});
	char *same = vn_scenario_to_json(c);
	assert_string_equal(before, same);
	vn_scenario_free(c);
	c = vn_scenario_override(s, &over);
	assert_string_equal(c->arch, "aarch64");
	assert_true(c->locality);
	assert_true(c->steps[0].duration_s < 40);
	/* The command line's shares and files come after the scenario's own, in the copy only. */
	assert_string_equal(c->share[0], "/srv/a");
	assert_string_equal(c->share[1], "/srv/b:/mnt/b");
	assert_null(c->share[2]);
	assert_string_equal(c->files[0], "/srv/f");
	assert_null(s->share[1]);
	assert_null(s->files);
	char *after = vn_scenario_to_json(s);
	assert_string_equal(before, after);
	assert_string_equal(s->arch, "x86_64");
	assert_false(s->locality);
	vn_scenario_free(c);
	vn_scenario_free(s);
	free(before);
	free(same);
	free(after);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_override_copy),     cmocka_unit_test(test_full_round_trip),
		cmocka_unit_test(test_defaults),          cmocka_unit_test(test_demotion_enabled),
		cmocka_unit_test(test_apply_quick),       cmocka_unit_test(test_ops),
		cmocka_unit_test(test_error_messages),    cmocka_unit_test(test_bad_corpus),
		cmocka_unit_test(test_shipped_scenarios), cmocka_unit_test(test_assert_types_whole),
		cmocka_unit_test(test_over_old_caps),     cmocka_unit_test(test_limits),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
