#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <json-c/json.h>
#include <libxml/parser.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "report/report.h"
#include "report/result-suite.h"
#include "util/cleanup.h"
#include "text-check.h"
#include "golden.h"

static char *slurp(const char *path)
{
	FILE *f = fopen(path, "r");
	static char buf[65536];
	size_t n;

	assert_non_null(f);
	n = fread(buf, 1, sizeof(buf) - 1, f);
	buf[n] = '\0';
	fclose(f);
	return buf;
}

static int count(const char *s, const char *needle)
{
	int n = 0;
	for (const char *p = s; (p = strstr(p, needle)); p++)
		n++;
	return n;
}

static void test_junit_and_json(void **state)
{
	char dir[] = "/tmp/vn-report-XXXXXX", path[128];
	struct vn_result_run r = {.scenario = strdup("fallback-4node"),
				  .complete = true,
				  .accel = strdup("tcg"),
				  .vcpus = 8,
				  .host_cpus = 2};
	struct vn_error err = {0};

	assert_non_null(mkdtemp(dir));
	vn_result_add(&r, "fallback order equals model 5.18", false, "Node 3: 3 2 0 1", "Node 3: 3 2 1 0 <&>", "diff");
	vn_result_add(&r, "distances", true, "equal", "equal", NULL);
	assert_int_equal(vn_result_failures(&r), 1);
	assert_int_equal(vn_report_write(&r, dir, &err), 0);

	snprintf(path, sizeof(path), "%s/junit.xml", dir);
	const char *x = slurp(path);
	assert_int_equal(count(x, "<testcase"), 2);
	assert_int_equal(count(x, "<failure"), 1);
	assert_non_null(strstr(x, "tests=\"2\" failures=\"1\" errors=\"0\""));
	assert_non_null(strstr(x, "&lt;&amp;&gt;")); /* escaped, still well-formed */
	unlink(path);

	snprintf(path, sizeof(path), "%s/result.json", dir);
	json_object *o = json_object_from_file(path);
	assert_non_null(o);
	json_object *v;
	assert_true(json_object_object_get_ex(o, "passed", &v) && !json_object_get_boolean(v));
	assert_true(json_object_object_get_ex(o, "assertions", &v) && json_object_array_length(v) == 2);
	/* The guest's vCPUs and its host's CPUs, for compare's note on placement's cost; absent when unknown. */
	assert_true(json_object_object_get_ex(o, "vcpus", &v) && json_object_get_int(v) == 8);
	assert_true(json_object_object_get_ex(o, "host_cpus", &v) && json_object_get_int(v) == 2);
	json_object_put(o);
	unlink(path);

	/* An incomplete run shows as an error testcase. */
	r.host_cpus = 0;
	r.complete = false;
	r.error = strdup("interrupted");
	assert_int_equal(vn_report_write(&r, dir, &err), 0);
	snprintf(path, sizeof(path), "%s/junit.xml", dir);
	x = slurp(path);
	assert_int_equal(count(x, "<testcase"), 3);
	assert_non_null(strstr(x, "<error message=\"interrupted\""));
	unlink(path);
	snprintf(path, sizeof(path), "%s/result.json", dir);
	o = json_object_from_file(path);
	assert_non_null(o);
	assert_true(json_object_object_get_ex(o, "vcpus", &v));
	assert_false(json_object_object_get_ex(o, "host_cpus", &v));
	json_object_put(o);
	unlink(path);
	rmdir(dir);
	vn_result_clear(&r);
}

/* What a patched kernel may print: escape sequences, C1, NUL-free invalid UTF-8, overlongs, surrogates. */
#define HOSTILE "\x1b]0;PWNED\x07\x1b[2J\xc2\x9b\x01\x7f\xff\xc0\xaf\xed\xa0\x80\xef\xbf\xbe\xe2\x82"

static char *file_bytes(const char *dir, const char *name, size_t *len)
{
	char path[256];
	snprintf(path, sizeof(path), "%s/%s", dir, name);
	FILE *f = fopen(path, "rb");
	assert_non_null(f);
	char *buf = calloc(1, 1 << 20);
	assert_non_null(buf);
	*len = fread(buf, 1, (1 << 20) - 1, f);
	fclose(f);
	return buf;
}

/* The boot's facts arrive typed and are written as result.json has always had them. */
static void test_typed_facts(void **state)
{
	char dir[] = "/tmp/vn-report-XXXXXX";
	char *patches[] = {strdup("0001-numa.patch"), strdup("0002 with space.patch"), NULL};
	struct vn_result_run r = {
		.scenario = strdup("facts"), .complete = true, .kernel_patches = malloc(sizeof(patches))};
	struct vn_error err = {0};
	size_t len;

	assert_non_null(mkdtemp(dir));
	memcpy(r.kernel_patches, patches, sizeof(patches));
	vn_result_add_sysctl(&r, "vm.zone_reclaim_mode", "1");
	vn_result_add_sysctl(&r, "kernel.numa_balancing", "a=b");
	vn_result_add_artifact(&r, "vnuma-initrd-abc.cpio.gz", true);
	vn_result_add_artifact(&r, "vnuma-kernel-def", false);
	assert_int_equal(vn_report_write(&r, dir, &err), 0);
	_cleanup_free_ char *j = file_bytes(dir, "result.json", &len);
	assert_non_null(
		strstr(j, "    \"patches\":[\n      \"0001-numa.patch\",\n      \"0002 with space.patch\"\n    ]\n"));
	assert_non_null(strstr(j, "  \"sysctls\":{\n    \"vm.zone_reclaim_mode\":\"1\",\n"
				  "    \"kernel.numa_balancing\":\"a=b\"\n  },\n"));
	assert_non_null(strstr(j, "  \"artifacts\":[\n    {\n      \"volume\":\"vnuma-initrd-abc.cpio.gz\",\n"
				  "      \"uploaded\":true\n    },\n    {\n      \"volume\":\"vnuma-kernel-def\",\n"
				  "      \"uploaded\":false\n    }\n  ],\n"));
	vn_result_clear(&r);

	/* A local run: no patches is an empty list, no sysctls an empty object, and no "artifacts" at all. */
	r = (struct vn_result_run){.scenario = strdup("facts"), .complete = true};
	assert_int_equal(vn_report_write(&r, dir, &err), 0);
	_cleanup_free_ char *k = file_bytes(dir, "result.json", &len);
	assert_non_null(strstr(k, "\"patches\":[\n    ]"));
	assert_non_null(strstr(k, "\"sysctls\":{\n  }"));
	assert_null(strstr(k, "artifacts"));
	vn_result_clear(&r);
	char path[128];
	snprintf(path, sizeof(path), "%s/result.json", dir);
	unlink(path);
	snprintf(path, sizeof(path), "%s/junit.xml", dir);
	unlink(path);
	rmdir(dir);
}

/*
 * junit.xml parses as XML (libxml2, no recovery) and result.json as UTF-8
 * JSON, whatever the guest put in the observations, the console tail that is
 * the run's error, the kernel's strings and the accelerator's reason; none
 * keeps a control character.
 */
static void test_hostile_text(void **state)
{
	char dir[] = "/tmp/vn-report-XXXXXX", path[128];
	struct vn_result_run r = {
		.scenario = strdup("hostile"),
		.complete = true,
		.accel = strdup("tcg" HOSTILE),
		.accel_reason = strdup("no usable KVM: " HOSTILE),
		.kernel_release = strdup("6.1" HOSTILE),
		.kernel_version = strdup("Linux version 6.1" HOSTILE),
		.kernel_cmdline = strdup("console=ttyS0 " HOSTILE),
		.fidelity = strdup("Node 0" HOSTILE "\nNode 1"),
	};
	struct vn_error err = {0};
	unsigned controls;

	/* The raw strings themselves are what the checks below refuse. */
	assert_false(text_check(HOSTILE, sizeof(HOSTILE) - 1, &controls));
	assert_non_null(mkdtemp(dir));
	vn_result_add(&r, "fallback " HOSTILE, false, "Node 3: 3 2 0 1" HOSTILE, "Node 3: " HOSTILE "\x02",
		      "--- last lines of the console log ---\nKernel panic - not syncing: " HOSTILE "\r\n");
	vn_result_add(&r, "distances", true, HOSTILE, "equal", NULL);
	/* Kept clean too: `vnuma run` prints the verdicts to the terminal. */
	for (unsigned i = 0; i < r.nverdicts; i++) {
		const char *strs[] = {r.verdicts[i].name, r.verdicts[i].observed, r.verdicts[i].expected,
				      r.verdicts[i].detail};
		for (size_t k = 0; k < 4; k++) {
			assert_true(!strs[k] || text_check(strs[k], strlen(strs[k]), &controls));
			assert_true(!strs[k] || !controls);
		}
	}
	vn_result_metric(&r, "vmstat." HOSTILE, 1);
	assert_int_equal(vn_report_write(&r, dir, &err), 0);

	/* Once complete, once cut short by the guest's death (its console line is the error). */
	for (int pass = 0; pass < 2; pass++) {
		size_t len;
		char *x = file_bytes(dir, "junit.xml", &len);
		assert_true(text_check(x, len, &controls));
		assert_int_equal(controls, 0);
		xmlDocPtr doc = xmlReadMemory(x, (int)len, "junit.xml", NULL, XML_PARSE_NONET | XML_PARSE_NOERROR);
		assert_non_null(doc); /* well-formed */
		xmlFreeDoc(doc);
		assert_non_null(strstr(x, "PWNED"));
		free(x);

		char *j = file_bytes(dir, "result.json", &len);
		assert_true(text_check(j, len, &controls));
		assert_int_equal(controls, 0);
		struct json_tokener *tok = json_tokener_new();
		json_tokener_set_flags(tok, JSON_TOKENER_STRICT | JSON_TOKENER_VALIDATE_UTF8);
		json_object *o = json_tokener_parse_ex(tok, j, (int)len);
		assert_non_null(o);
		assert_int_equal(json_tokener_get_error(tok), json_tokener_success);
		json_tokener_free(tok);
		/* Decoded, no string holds a control character either (json-c wrote \u001b for ESC before). */
		const char *s = json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN);
		assert_null(strstr(s, "\\u00"));
		json_object *v;
		assert_true(json_object_object_get_ex(o, "accelerator_reason", &v));
		assert_non_null(strstr(json_object_get_string(v), "PWNED"));
		json_object_put(o);
		free(j);

		r.complete = false;
		free(r.error);
		r.error = strdup("guest hostile panicked (console: \"Kernel panic - not syncing: " HOSTILE "\")");
		assert_int_equal(vn_report_write(&r, dir, &err), 0);
	}
	snprintf(path, sizeof(path), "%s/junit.xml", dir);
	unlink(path);
	snprintf(path, sizeof(path), "%s/result.json", dir);
	unlink(path);
	rmdir(dir);
	vn_result_clear(&r);
}

/* Metrics named by the guest are bounded in number; a value that is not a number is not recorded. */
static void test_metrics_bounded(void **state)
{
	(void)state;
	struct vn_result_run r = {0};
	char name[32];

	vn_result_metric(&r, "nan", 0.0 / 0.0);
	assert_int_equal(r.nmetrics, 0);
	for (int i = 0; i < VN_RESULT_METRICS_MAX + 100; i++) {
		snprintf(name, sizeof(name), "vmstat.k%d", i);
		vn_result_metric(&r, name, i);
	}
	assert_int_equal(r.nmetrics, VN_RESULT_METRICS_MAX);
	assert_string_equal(r.metrics[VN_RESULT_METRICS_MAX - 1].name, "vmstat.k4095");
	vn_result_clear(&r);
}

/*
 * A run with every key result.json has, the guest's text hostile, as the
 * runner fills it: result.json and junit.xml against tests/golden/result/,
 * the bytes the writer gave before result.json had a typed reader.
 */
static void fill_every_key(struct vn_result_run *r)
{
	static char *patches[] = {"0001-mm-fallback.patch", "0002-sched-numa.patch", NULL};

	*r = (struct vn_result_run){.scenario = strdup("memfollow-2node"),
				    .description = strdup("Memory follows the task.\nTwo lines."),
				    .variant = strdup("balancing-on"),
				    .repeat = 2,
				    .host = strdup("qemu+ssh://lab/system"),
				    .started_utc = strdup("2026-12-01T11:16:00Z"),
				    .duration_s = 29.660254266000265,
				    .boot_s = 3.25,
				    .boot = strdup("restored"),
				    .snapshot = strdup("5ab1c0ffee"),
				    .complete = true,
				    .samples = 12,
				    .accel = strdup("kvm"),
				    .accel_reason = strdup("proven: a KVM guest booted"),
				    .icount = strdup("shift=auto,sleep=off"),
				    .icount_lead_s = 0.5,
				    .icount_lead_min_s = -0.125,
				    .arch = strdup("x86_64"),
				    .guest = strdup("scn-memfollow-2node"),
				    .kernel_release = strdup("6.1.0-57-amd64"),
				    .kernel_version = strdup("#1 SMP PREEMPT_DYNAMIC Debian 6.1.192-3"),
				    .kernel_cmdline = strdup("console=ttyS0 panic=-1 \x1b[31m"),
				    .kernel_recipe = strdup("fallback-revert"),
				    .kernel_config_sha256 = strdup("f75010e906eac59e85ab3fab9de8f197"),
				    .topology = strdup("2node"),
				    .fidelity = strdup("shape (nodes, distances, CPUs, memory): ok\n"),
				    .sampling_cost = strdup("39.94 ms CPU per sample on average"),
				    .vcpus = 4,
				    .host_cpus = 2};
	r->node_memory_mib = (struct vn_result_nodes){3, calloc(3, sizeof(unsigned))};
	r->node_memory_mib.v[0] = r->node_memory_mib.v[1] = 2048;
	r->node_memory_mib.v[2] = 0; /* memory-less */
	r->kernel_patches = calloc(3, sizeof(char *));
	for (int i = 0; patches[i]; i++)
		r->kernel_patches[i] = strdup(patches[i]);
	vn_result_add_artifact(r, "vnuma-kernel-6.1.0-57.bzImage", true);
	vn_result_add_artifact(r, "vnuma-initramfs-2node.cpio", false);
	vn_result_add_sysctl(r, "kernel.numa_balancing", "1");
	vn_result_add_sysctl(r, "vm.zone_reclaim_mode", "0");
	vn_result_metric(r, "vmstat.numa_pages_migrated", 6422);
	vn_result_metric(r, "memfollow.local_pct", 99.07);
	vn_result_metric(r, "vmstat.k\xff\x01ey", 1e-300);
	vn_result_add_observed(r, "counter numa_pages_migrated > 0", true, "6422", "> 0", NULL, VN_OBSERVED_COUNT,
			       6422);
	vn_result_add(r, "fallback order", false, "Node 1: 1 0 \xc3\x28", "Node 1: 1 0", "--- model\n+++ kernel\n");
	vn_result_add(r, "change memfollow.local_pct", false, "too noisy", "+10%", NULL);
	r->verdicts[2].undecided = true;
}

static void test_every_key_golden(void **state)
{
	(void)state;
	char dir[] = "/tmp/vn-report-XXXXXX", path[128];
	struct vn_result_run r;
	struct vn_error err = {0};

	assert_non_null(mkdtemp(dir));
	fill_every_key(&r);
	assert_int_equal(vn_report_write(&r, dir, &err), 0);
	snprintf(path, sizeof(path), "%s/result.json", dir);
	vn_test_golden("result", "every-key.json", slurp(path), "result.json");
	unlink(path);
	snprintf(path, sizeof(path), "%s/junit.xml", dir);
	vn_test_golden("result", "every-key.xml", slurp(path), "junit.xml");
	unlink(path);

	/* Cut short in real time: no metrics, no lead, an error testcase. */
	free(r.icount);
	r.icount = NULL;
	r.complete = false;
	r.error = strdup("guest died: \x07panic");
	r.vcpus = r.host_cpus = 0;
	assert_int_equal(vn_report_write(&r, dir, &err), 0);
	snprintf(path, sizeof(path), "%s/result.json", dir);
	vn_test_golden("result", "incomplete.json", slurp(path), "result.json");
	unlink(path);
	snprintf(path, sizeof(path), "%s/junit.xml", dir);
	vn_test_golden("result", "incomplete.xml", slurp(path), "junit.xml");
	unlink(path);
	rmdir(dir);
	vn_result_clear(&r);
}

/*
 * A suite step's tests: one of each verdict, the guest's text hostile,
 * against tests/golden/result/suite.{json,xml}: the "tests" list, and a
 * <testcase> each with its <failure>, <error> or <skipped> and the reason.
 */
static void test_suite_golden(void **state)
{
	(void)state;
	char dir[] = "/tmp/vn-report-XXXXXX", path[128];
	struct vn_result_run r = {.scenario = strdup("ltp-numa"),
				  .started_utc = strdup("2026-12-01T11:16:00Z"),
				  .duration_s = 61.5,
				  .complete = true,
				  .topology = strdup("2node")};
	struct vn_error err = {0};

	assert_non_null(mkdtemp(dir));
	vn_result_add(&r, "suite ltp", false, "7 tests: 1 passed, 1 failed", "no test fails (known failures aside)",
		      "fail: move_pages12\n");
	assert_true(vn_result_add_test(&r, "ltp", "get_mempolicy01", VN_TEST_PASS, NULL, NULL, NULL));
	assert_true(vn_result_add_test(&r, "ltp", "move_pages12", VN_TEST_FAIL,
				       "move_pages12.c:259: TFAIL: \x1b[1mmigrated\xff", "line 1\nline 2", NULL));
	assert_true(vn_result_add_test(&r, "ltp", "mbind01", VN_TEST_SKIP, "mbind01.c:1: TCONF: needs 2 nodes", NULL,
				       NULL));
	assert_true(vn_result_add_test(&r, "ltp", "move_pages04", VN_TEST_XFAIL, "TFAIL: status[1] is EFAULT", NULL,
				       "EFAULT on kernels >= 4.3 and < 6.12"));
	assert_true(vn_result_add_test(&r, "ltp", "set_mempolicy04", VN_TEST_XPASS, NULL, NULL, "fails on 256M nodes"));
	assert_true(vn_result_add_test(&r, "kself", "selftests: mm: migration", VN_TEST_ERROR,
				       "planned 12 tests, 1 reported", NULL, NULL));
	assert_true(vn_result_add_test(&r, "kself", "selftests: mm: ksm_tests", VN_TEST_TIMEOUT, NULL, NULL, NULL));
	assert_int_equal(vn_result_tests_count(&r, VN_TEST_FAIL), 1);
	assert_int_equal(vn_report_write(&r, dir, &err), 0);
	snprintf(path, sizeof(path), "%s/result.json", dir);
	vn_test_golden("result", "suite.json", slurp(path), "result.json");
	unlink(path);
	snprintf(path, sizeof(path), "%s/junit.xml", dir);
	vn_test_golden("result", "suite.xml", slurp(path), "junit.xml");
	unlink(path);
	snprintf(path, sizeof(path), "%s/kcidb.json", dir); /* test-kcidb.c checks it */
	unlink(path);
	rmdir(dir);
	vn_result_clear(&r);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_junit_and_json),   cmocka_unit_test(test_metrics_bounded),
		cmocka_unit_test(test_hostile_text),     cmocka_unit_test(test_typed_facts),
		cmocka_unit_test(test_every_key_golden), cmocka_unit_test(test_suite_golden),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
