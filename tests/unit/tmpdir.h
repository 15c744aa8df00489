/*
 * A unit test's scratch directory. VN_TEST_TMPDIR(dir, "name") defines
 * char dir[64] and the cmocka setup() and teardown() that make it
 * (/tmp/vn-test-name-XXXXXX, fresh each time) and remove it with all it
 * holds. vn_test_put() writes a file under it, making its parent
 * directories. Include after <cmocka.h>.
 */
#pragma once

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/alloc.h"
#include "util/cleanup.h"
#include "util/dir.h"
#include "util/file.h"

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

static inline void vn_test_put(const char *dir, const char *name, const char *text)
{
	_cleanup_free_ char *path = vn_xasprintf("%s/%s", dir, name);
	_cleanup_free_ char *parent = vn_xstrdup(path);
	struct vn_error err = {0};

	*strrchr(parent, '/') = '\0';
	assert_int_equal(vn_mkdir_p(parent, 0755, &err), 0);
	assert_int_equal(vn_file_write_text(path, text, &err), 0);
}
