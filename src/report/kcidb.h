/*
 * A run's suite tests as KCIDB JSON (KernelCI's report schema, v4.2:
 * kernelci/kcidb-io), written beside junit.xml so that a CI which feeds
 * KernelCI submits the file as it is (docs/suites.md, "KCIDB"). One
 * checkout (the kernel), one build (its arch and config), one test per
 * suite test; ids are stable digests of what they name, so the same kernel
 * is one checkout across runs and each run's tests are its own.
 */
#pragma once

#include "report/result.h"

#define VN_KCIDB_ORIGIN      "vnuma"
#define VN_KCIDB_MAJOR       4
#define VN_KCIDB_MINOR       2     /* the first v4 with status MISS */
#define VN_KCIDB_EXCERPT_MAX 16384 /* the schema's log_excerpt maxLength */

/* r's checkouts, builds and tests; the guest's text cleaned, no member null (the schema allows none). */
struct json_object *vn_kcidb_json(const struct vn_result_run *r);
/* Its bytes, as vn_report_write puts them in DIR/kcidb.json. */
char *vn_kcidb_text(const struct vn_result_run *r);
/*
 * A test name as a KCIDB path component (the schema's [.a-zA-Z0-9_-]):
 * a KTAP nesting colon is a dot, every other run of characters the
 * schema does not allow one '_', none at either end of a component.
 */
char *vn_kcidb_path(const char *step, const char *name);
