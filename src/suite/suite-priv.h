/* The parsers' shared parts: lines read from guest bytes, tests added to a run. */
#pragma once

#include <stdbool.h>
#include <stddef.h>

#include "suite/suite.h"

/* One line at a time from out[len]: CR, ANSI colour sequences stripped, then vn_text_clean'd. */
struct vn_suite_lines {
	const char *p;
	size_t left;
	bool cut;                         /* the last line was longer than VN_SUITE_LINE_MAX */
	char raw[VN_SUITE_LINE_MAX];      /* the line without its escape sequences */
	char line[VN_SUITE_LINE_MAX + 4]; /* what the parsers read: clean, NUL-terminated */
};

void vn_suite_lines_init(struct vn_suite_lines *it, const char *out, size_t len);
/* The next line in it->line, false at the end. */
bool vn_suite_lines_next(struct vn_suite_lines *it);

/* The last VN_SUITE_DETAIL_LINES diagnostic lines, for the next result that is not a pass. */
struct vn_suite_detail {
	char lines[VN_SUITE_DETAIL_LINES][VN_SUITE_DETAIL_LINE_MAX + 4];
	size_t n, next;
};

void vn_suite_detail_add(struct vn_suite_detail *d, const char *line);
/* The lines kept, oldest first, joined by '\n' (malloc'd), or NULL; d is emptied. */
char *vn_suite_detail_take(struct vn_suite_detail *d);

/*
 * Append a test (name and reason copied, cut to their limits; detail
 * taken): false, with one error test in its place, once the run holds
 * VN_SUITE_TESTS_MAX.
 */
bool vn_suite_add(struct vn_suite_run *run, const char *name, enum vn_suite_verdict v, const char *reason,
		  char *detail);
/* A note on the run (printf-style), dropped past VN_SUITE_NOTES_MAX. */
void vn_suite_note(struct vn_suite_run *run, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* "exited with 3", "killed by signal 9", "timed out", "could not start (127)" into buf. */
const char *vn_suite_exit_text(const struct vn_suite_exit *ex, char *buf, size_t size);
