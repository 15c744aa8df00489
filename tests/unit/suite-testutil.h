/* Shared by the test-suite-*.c tests: a run's test by name, a fixture's bytes. */
#pragma once

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "suite/suite.h"

static inline const struct vn_suite_test *suite_find(const struct vn_suite_run *run, const char *name)
{
	for (size_t i = 0; i < run->n; i++)
		if (!strcmp(run->tests[i].name, name))
			return &run->tests[i];
	for (size_t i = 0; i < run->n; i++)
		fprintf(stderr, "  have: [%s] %s (%s)\n", vn_suite_verdict_name(run->tests[i].verdict),
			run->tests[i].name, run->tests[i].reason ? run->tests[i].reason : "");
	fail_msg("no test named \"%s\"", name);
	return NULL;
}

/* name's verdict is v and its reason holds why (NULL: has none). */
static inline void suite_expect(const struct vn_suite_run *run, const char *name, enum vn_suite_verdict v,
				const char *why)
{
	const struct vn_suite_test *t = suite_find(run, name);
	assert_string_equal(vn_suite_verdict_name(t->verdict), vn_suite_verdict_name(v));
	if (!why)
		assert_null(t->reason);
	else if (!t->reason || !strstr(t->reason, why))
		fail_msg("%s: reason \"%s\" lacks \"%s\"", name, t->reason ? t->reason : "(none)", why);
}

/* tests/fixtures/suite/name, NUL-terminated, *len its size. */
static inline char *suite_fixture(const char *name, size_t *len)
{
	char path[4096];
	const char *src = getenv("VN_SOURCE_DIR");
	snprintf(path, sizeof(path), "%s/tests/fixtures/suite/%s", src ? src : ".", name);
	FILE *f = fopen(path, "rb");
	if (!f)
		fail_msg("cannot open %s", path);
	char *buf = calloc(1, 1 << 20);
	*len = fread(buf, 1, (1 << 20) - 1, f);
	fclose(f);
	return buf;
}
