#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <json-c/json.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "report/report.h"

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
	struct vn_report r = {.scenario = strdup("fallback-4node"), .complete = true, .accel = strdup("tcg")};
	struct vn_error err = {0};

	assert_non_null(mkdtemp(dir));
	vn_report_add(&r, "fallback order equals model 5.18", false, "Node 3: 3 2 0 1", "Node 3: 3 2 1 0 <&>", "diff");
	vn_report_add(&r, "distances", true, "equal", "equal", NULL);
	assert_int_equal(vn_report_failures(&r), 1);
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
	json_object_put(o);
	unlink(path);

	/* An incomplete run shows as an error testcase. */
	r.complete = false;
	r.error = strdup("interrupted");
	assert_int_equal(vn_report_write(&r, dir, &err), 0);
	snprintf(path, sizeof(path), "%s/junit.xml", dir);
	x = slurp(path);
	assert_int_equal(count(x, "<testcase"), 3);
	assert_non_null(strstr(x, "<error message=\"interrupted\""));
	unlink(path);
	snprintf(path, sizeof(path), "%s/result.json", dir);
	unlink(path);
	rmdir(dir);
	vn_report_clear(&r);
}

/* Metrics named by the guest are bounded in number; a value that is not a number is not recorded. */
static void test_metrics_bounded(void **state)
{
	(void)state;
	struct vn_report r = {0};
	char name[32];

	vn_report_metric(&r, "nan", 0.0 / 0.0);
	assert_int_equal(r.nmetrics, 0);
	for (int i = 0; i < VN_REPORT_METRICS_MAX + 100; i++) {
		snprintf(name, sizeof(name), "vmstat.k%d", i);
		vn_report_metric(&r, name, i);
	}
	assert_int_equal(r.nmetrics, VN_REPORT_METRICS_MAX);
	assert_string_equal(r.metrics[VN_REPORT_METRICS_MAX - 1].name, "vmstat.k4095");
	vn_report_clear(&r);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_junit_and_json),
		cmocka_unit_test(test_metrics_bounded),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
