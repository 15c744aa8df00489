/*
 * Golden files for the unit tests: what a test generated against
 * tests/golden/DIR/FILE, byte for byte. VN_UPDATE_GOLDEN=1 rewrites the
 * files from what the tests generate now (then review the diff).
 * Include after <cmocka.h>.
 */
#pragma once

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/cleanup.h"
#include "testutil.h"

/* what names the generated thing in the failure message ("generated XML"). */
static inline void vn_test_golden(const char *dir, const char *file, const char *got, const char *what)
{
	const char *src = getenv("VN_SOURCE_DIR");
	char path[4096];

	snprintf(path, sizeof(path), "%s/tests/golden/%s/%s", src ? src : ".", dir, file);
	if (getenv("VN_UPDATE_GOLDEN") && strcmp(getenv("VN_UPDATE_GOLDEN"), "1") == 0) {
		FILE *f = fopen(path, "w");
		assert_non_null(f);
		fputs(got, f);
		fclose(f);
		return;
	}
	_cleanup_free_ char *want = vn_test_read_all(path);
	if (!want)
		fail_msg("missing golden file %s (run with VN_UPDATE_GOLDEN=1)", path);
	if (strcmp(want, got) != 0) {
		fprintf(stderr, "--- %s\n+++ generated\n%s\n", path, got);
		fail_msg("%s differs from %s (VN_UPDATE_GOLDEN=1 rewrites it)", what, path);
	}
}
