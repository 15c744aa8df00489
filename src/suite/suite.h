/*
 * What a test suite printed, as typed per-test verdicts: kselftest's
 * KTAP/TAP (ktap.c), one LTP test binary's result lines (ltp.c), or only an
 * exit status (suite.c). The output comes from the guest, which may be
 * hostile: every line, name, reason, count and nesting level is bounded
 * and every string has passed vn_text_clean. docs/suites.md has the rules.
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>

/* A longer line is cut there; the rest of it is read past, never parsed. */
#define VN_SUITE_LINE_MAX 4096
/* A test's name (a nested one's whole path, "parent:child") is cut there. */
#define VN_SUITE_NAME_MAX   256
#define VN_SUITE_REASON_MAX 512
/* The diagnostic lines printed before a result that is not a pass, the last ones kept. */
#define VN_SUITE_DETAIL_LINES    8
#define VN_SUITE_DETAIL_LINE_MAX 256
/* KTAP levels deeper than this are read as diagnostics, and the run says so. */
#define VN_SUITE_DEPTH_MAX 8
/* Results past this many are not read; the run gains one error saying so. */
#define VN_SUITE_TESTS_MAX 4096
#define VN_SUITE_NOTES_MAX 16

enum vn_suite_verdict {
	VN_SUITE_PASS,
	VN_SUITE_FAIL,
	VN_SUITE_SKIP,
	VN_SUITE_XFAIL,   /* failed, as expected: a TODO/XFAIL, or on the known-failure list */
	VN_SUITE_XPASS,   /* passed where a failure was expected: reported, does not fail the run */
	VN_SUITE_ERROR,   /* the harness broke, or the test could not start or finish */
	VN_SUITE_TIMEOUT, /* the test ran out of time and was killed */
};

struct vn_suite_test {
	char *name; /* never NULL; a nested test's path joined with ':' */
	enum vn_suite_verdict verdict;
	char *reason; /* the directive's text, the first failing line, or why: NULL when none */
	char *detail; /* the diagnostic lines before it (multi-line): NULL when none */
	char *known;  /* the known-failure list's reason, when an entry matched */
};

struct vn_suite_run {
	struct vn_suite_test *tests;
	size_t n, cap;
	/* What the parser saw that is no test's verdict (a Totals line that disagrees, lines cut). */
	char *notes[VN_SUITE_NOTES_MAX];
	size_t nnotes;
};

/* How the suite's process ended, as the runner saw it. */
enum vn_suite_end {
	VN_SUITE_EXITED,      /* code: its exit status */
	VN_SUITE_SIGNALED,    /* code: the signal */
	VN_SUITE_TIMED_OUT,   /* killed at its deadline */
	VN_SUITE_NOT_STARTED, /* code: the shell's 126/127, or the errno of exec */
};

struct vn_suite_exit {
	enum vn_suite_end end;
	int code;
};

void vn_suite_run_free(struct vn_suite_run *run);
#define _cleanup_suite_run_ __attribute__((cleanup(vn_suite_run_free)))

/* "pass", "fail", "skip", "xfail", "xpass", "error", "timeout". */
const char *vn_suite_verdict_name(enum vn_suite_verdict v);

/*
 * The exit code a run's verdicts give (the project's codes): 3 when any
 * test is an error or a timeout (no verdict on the kernel can be had from
 * it), else 1 when any failed, else 0. Skips, xfails and xpasses are 0.
 */
int vn_suite_run_exit(const struct vn_suite_run *run);

/*
 * KTAP v1, TAP 13 and 14, with nested subtests (indented by spaces or by
 * kselftest runner's "# "). name is the run's own, for what belongs to no
 * test (no results at all, a broken top-level plan, the process's end); ex
 * may be NULL when how it ended is not known.
 */
void vn_suite_ktap_parse(const char *out, size_t len, const char *name, const struct vn_suite_exit *ex,
			 struct vn_suite_run *run);

/*
 * One LTP test binary's output (its new API's "file.c:N: TPASS: ..." lines,
 * the old API's "name N TPASS : ..." ones, the Summary block) and how it
 * ended, as one test called name; its verdict from the worst result.
 */
void vn_suite_ltp_parse(const char *out, size_t len, const char *name, const struct vn_suite_exit *ex,
			struct vn_suite_run *run);

/* Only the exit status: 0 pass, 4 (kselftest's KSFT_SKIP) skip, 126/127 error, else fail. */
void vn_suite_exit_parse(const char *name, const struct vn_suite_exit *ex, struct vn_suite_run *run);
