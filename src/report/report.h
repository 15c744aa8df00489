/*
 * What a scenario run concluded, written for people (result.json) and for CI
 * systems (junit.xml: one testcase per assertion, so each shows by itself;
 * kcidb.json, KernelCI's schema, when a suite step ran tests: kcidb.h).
 */
#pragma once

#include <stdbool.h>

#include "util/error.h"

#include "report/result.h"

/*
 * DIR/result.json, DIR/junit.xml and (with tests) DIR/kcidb.json, each written atomically (temp file +
 * rename, never through a symlink): see util/file.h.
 */
int vn_report_write(const struct vn_result_run *r, const char *dir, struct vn_error *err);
