/*
 * The known-failure list: tests that fail on some kernels for a reason
 * known and written down (LTP's move_pages04 on kernels >= 4.3 and < 6.12),
 * so that their failure does not fail the run and their passing is
 * reported. A JSON file, docs/suites.md has its format.
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>

#include "suite/suite.h"
#include "util/error.h"

#define VN_KNOWN_MAX_ENTRIES 1024
#define VN_KNOWN_MAX_BOUNDS  4 /* ">=4.3 <6.12": two */

/* A kernel version, MAJOR.MINOR.PATCH; what follows in a release ("-28-amd64", "-rc3") is not compared. */
struct vn_kver {
	unsigned v[3];
};

enum vn_kver_op { VN_KVER_LT, VN_KVER_LE, VN_KVER_GT, VN_KVER_GE, VN_KVER_EQ };

struct vn_kver_bound {
	enum vn_kver_op op;
	struct vn_kver ver;
};

struct vn_known_entry {
	char *test;   /* a test's name, or an fnmatch(3) pattern over it */
	char *reason; /* why it fails, for the report */
	struct vn_kver_bound bounds[VN_KNOWN_MAX_BOUNDS];
	size_t nbounds; /* 0: every kernel */
};

struct vn_known {
	struct vn_known_entry *e;
	size_t n;
};

void vn_known_free(struct vn_known *k);
#define _cleanup_known_ __attribute__((cleanup(vn_known_free)))

/*
 * "6.1.0-28-amd64", "6.12-rc3", "4.3": the leading numbers, missing ones
 * 0 (6.12-rc3 is 6.12.0). -EINVAL when s does not start with MAJOR.MINOR.
 */
int vn_kver_parse(const char *s, struct vn_kver *out);
int vn_kver_cmp(const struct vn_kver *a, const struct vn_kver *b);
/* Every bound holds for ver. */
bool vn_kver_in(const struct vn_kver_bound *b, size_t n, const struct vn_kver *ver);

/* A list's text; file names it in errors ("FILE: $.known_failures[2].kernels: ..."), exit 2. */
int vn_known_parse(const char *text, const char *file, struct vn_known *out, struct vn_error *err);
int vn_known_load(const char *path, struct vn_known *out, struct vn_error *err);

/*
 * The first entry that names test and whose kernels hold the release; an
 * entry with kernels never matches a release that does not parse.
 */
const struct vn_known_entry *vn_known_match(const struct vn_known *k, const char *test, const char *release);

/*
 * Each of run's tests that an entry matches: a failure becomes an xfail, a
 * pass an xpass (an unexpected pass, reported), with the entry's reason in
 * ->known; other verdicts stay. Returns how many changed.
 */
size_t vn_known_apply(const struct vn_known *k, const char *release, struct vn_suite_run *run);
