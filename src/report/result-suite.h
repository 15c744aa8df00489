/*
 * The tests a suite step ran (docs/suites.md): one verdict each in
 * result.json's "tests" list and one <testcase> each in junit.xml. Their own
 * part of the result, beside the assertions' verdicts: written, read back
 * (bounded, validated) and freed here, called from result.c and
 * result-load.c. The words are the suite layer's (suite/suite.h), which
 * this layer does not use: the runner hands them over by name.
 */
#pragma once

#include <stdbool.h>

#include "report/result.h"
#include "util/json.h"

/* Tests a result keeps, over every suite step of a run (a step's KTAP output alone may hold 4096). */
#define VN_RESULT_TESTS_MAX 65536

enum vn_test_verdict {
	VN_TEST_PASS,
	VN_TEST_FAIL,
	VN_TEST_SKIP,
	VN_TEST_XFAIL, /* a known or declared failure: does not fail the run */
	VN_TEST_XPASS, /* passed where a failure was expected: reported, does not fail the run */
	VN_TEST_ERROR,
	VN_TEST_TIMEOUT,
};

struct vn_result_test {
	char *step; /* the suite step that ran it */
	char *name;
	enum vn_test_verdict verdict;
	char *reason; /* why, in one line, or NULL */
	char *detail; /* the diagnostic lines before it, or NULL */
	char *known;  /* the known-failure list's reason, or NULL */
};

/* "pass", "fail", "skip", "xfail", "xpass", "error", "timeout"; -1 for another word. */
const char *vn_test_verdict_word(enum vn_test_verdict v);
int vn_test_verdict_parse(const char *word);

/* One more test; the guest's text cleaned. False (nothing kept) past VN_RESULT_TESTS_MAX. */
bool vn_result_add_test(struct vn_result_run *r, const char *step, const char *name, enum vn_test_verdict v,
			const char *reason, const char *detail, const char *known);
void vn_result_tests_clear(struct vn_result_run *r);
/* How many of the tests have verdict v. */
unsigned vn_result_tests_count(const struct vn_result_run *r, enum vn_test_verdict v);

/* result.json's "tests" into o, only when the run has any (results without suites keep their bytes). */
void vn_result_tests_json(struct json_object *o, const struct vn_result_run *r);
/* root's "tests", bounded and type-checked, into res; errors "FILE: $.tests[3].verdict: ...". */
int vn_result_tests_read(const struct vn_json_reader *rd, struct json_object *root, struct vn_result_run *res);
