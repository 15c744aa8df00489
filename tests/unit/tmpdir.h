/*
 * A unit test's scratch directory. VN_TEST_TMPDIR(dir, "name") defines
 * char dir[64] and the cmocka setup() and teardown() that make it
 * (/tmp/vn-test-name-XXXXXX, fresh each time) and remove it with all it
 * holds. Include after <cmocka.h>.
 */
#pragma once

#include <stdio.h>
#include <stdlib.h>

#include "util/dir.h"

#define VN_TEST_TMPDIR(dir, name)                                           \
	static char dir[64];                                                \
	static int setup(void **unused_)                                    \
	{                                                                   \
		(void)unused_;                                              \
		snprintf(dir, sizeof(dir), "/tmp/vn-test-" name "-XXXXXX"); \
		return mkdtemp(dir) ? 0 : -1;                               \
	}                                                                   \
	static int teardown(void **unused_)                                 \
	{                                                                   \
		(void)unused_;                                              \
		return vn_rm_rf(dir) == 0 ? 0 : -1;                         \
	}
