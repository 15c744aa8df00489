/*
 * The run's tests and the line reader the parsers share, and the plain
 * exit-code mode.
 */
#include "suite/suite.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "suite/suite-priv.h"
#include "util/alloc.h"
#include "util/cleanup.h"
#include "util/strbuf.h"

/* kselftest's KSFT_SKIP; a shell's "found but not executable" and "not found". */
#define KSFT_SKIP_CODE 4

void vn_suite_run_free(struct vn_suite_run *run)
{
	for (size_t i = 0; i < run->n; i++) {
		struct vn_suite_test *t = &run->tests[i];
		vn_free_all(t->name, t->reason, t->detail, t->known);
	}
	free(run->tests);
	for (size_t i = 0; i < run->nnotes; i++)
		free(run->notes[i]);
	memset(run, 0, sizeof(*run));
}

const char *vn_suite_verdict_name(enum vn_suite_verdict v)
{
	static const char *const names[] = {
		[VN_SUITE_PASS] = "pass",       [VN_SUITE_FAIL] = "fail",   [VN_SUITE_SKIP] = "skip",
		[VN_SUITE_XFAIL] = "xfail",     [VN_SUITE_XPASS] = "xpass", [VN_SUITE_ERROR] = "error",
		[VN_SUITE_TIMEOUT] = "timeout",
	};
	return (unsigned)v < VN_ARRAY_SIZE(names) ? names[v] : "?";
}

int vn_suite_run_exit(const struct vn_suite_run *run)
{
	int rc = 0;

	for (size_t i = 0; i < run->n; i++) {
		enum vn_suite_verdict v = run->tests[i].verdict;
		if (v == VN_SUITE_ERROR || v == VN_SUITE_TIMEOUT)
			return 3;
		if (v == VN_SUITE_FAIL)
			rc = 1;
	}
	return rc;
}

void vn_suite_lines_init(struct vn_suite_lines *it, const char *out, size_t len)
{
	memset(it, 0, sizeof(*it));
	it->p = out;
	it->left = out ? len : 0;
}

/*
 * ESC '[' parameters and a final byte (0x40-0x7e): LTP colours its result
 * types when it thinks it writes to a terminal, and "?[1;31mTFAIL" would
 * read as no result at all.
 */
static size_t csi_len(const char *p, size_t n)
{
	if (n < 2 || p[0] != '\033' || p[1] != '[')
		return 0;
	for (size_t i = 2; i < n && i < 32; i++)
		if (p[i] >= 0x40 && p[i] <= 0x7e)
			return i + 1;
	return 0;
}

bool vn_suite_lines_next(struct vn_suite_lines *it)
{
	if (!it->left)
		return false;
	const char *nl = memchr(it->p, '\n', it->left);
	size_t len = nl ? (size_t)(nl - it->p) : it->left;
	const char *s = it->p;

	it->p += nl ? len + 1 : len;
	it->left -= nl ? len + 1 : len;
	if (len && s[len - 1] == '\r')
		len--;
	size_t o = 0;
	for (size_t i = 0; i < len && o < sizeof(it->raw);) {
		size_t c = csi_len(s + i, len - i);
		if (c) {
			i += c;
			continue;
		}
		it->raw[o++] = s[i++];
	}
	it->cut = o == sizeof(it->raw);
	/* Tabs kept (an indentation); there is no '\n' left in a line. */
	vn_text_clean(it->raw, o, VN_SUITE_LINE_MAX, VN_TEXT_LINES, it->line);
	return true;
}

void vn_suite_detail_add(struct vn_suite_detail *d, const char *line)
{
	vn_text_clean(line, strlen(line), VN_SUITE_DETAIL_LINE_MAX, 0, d->lines[d->next]);
	d->next = (d->next + 1) % VN_SUITE_DETAIL_LINES;
	if (d->n < VN_SUITE_DETAIL_LINES)
		d->n++;
}

char *vn_suite_detail_take(struct vn_suite_detail *d)
{
	_cleanup_strbuf_ struct vn_strbuf b = VN_STRBUF_INIT;

	if (!d->n)
		return NULL;
	size_t first = (d->next + VN_SUITE_DETAIL_LINES - d->n) % VN_SUITE_DETAIL_LINES;
	for (size_t i = 0; i < d->n; i++)
		vn_strbuf_printf(&b, "%s%s", i ? "\n" : "", d->lines[(first + i) % VN_SUITE_DETAIL_LINES]);
	d->n = d->next = 0;
	return vn_strbuf_steal(&b);
}

bool vn_suite_add(struct vn_suite_run *run, const char *name, enum vn_suite_verdict v, const char *reason, char *detail)
{
	_cleanup_free_ char *own_detail = detail;
	char why[64];

	if (run->n > VN_SUITE_TESTS_MAX)
		return false;
	bool full = run->n == VN_SUITE_TESTS_MAX;
	if (full) {
		snprintf(why, sizeof(why), "more than %d results: the rest were not read", VN_SUITE_TESTS_MAX);
		name = "(too many tests)";
		v = VN_SUITE_ERROR;
		reason = why;
	}
	if (run->n == run->cap) {
		run->cap = run->cap ? 2 * run->cap : 16;
		run->tests = vn_xreallocarray(run->tests, run->cap, sizeof(*run->tests));
	}
	struct vn_suite_test *t = &run->tests[run->n++];
	*t = (struct vn_suite_test){.verdict = v};
	t->name = vn_text_dup(name, VN_SUITE_NAME_MAX, 0);
	t->reason = reason && *reason ? vn_text_dup(reason, VN_SUITE_REASON_MAX, 0) : NULL;
	t->detail = full ? NULL : steal_pointer(&own_detail);
	return !full;
}

void vn_suite_note(struct vn_suite_run *run, const char *fmt, ...)
{
	va_list ap;

	if (run->nnotes == VN_SUITE_NOTES_MAX)
		return;
	va_start(ap, fmt);
	char *s = NULL;
	if (vasprintf(&s, fmt, ap) < 0)
		s = NULL;
	va_end(ap);
	if (s)
		run->notes[run->nnotes++] = s;
}

const char *vn_suite_exit_text(const struct vn_suite_exit *ex, char *buf, size_t size)
{
	switch (ex->end) {
	case VN_SUITE_EXITED: snprintf(buf, size, "exited with %d", ex->code); break;
	case VN_SUITE_SIGNALED: snprintf(buf, size, "killed by signal %d", ex->code); break;
	case VN_SUITE_TIMED_OUT: snprintf(buf, size, "timed out and was killed"); break;
	case VN_SUITE_NOT_STARTED: snprintf(buf, size, "could not start (%d)", ex->code); break;
	}
	return buf;
}

void vn_suite_exit_parse(const char *name, const struct vn_suite_exit *ex, struct vn_suite_run *run)
{
	char why[96];
	enum vn_suite_verdict v = VN_SUITE_FAIL;

	vn_suite_exit_text(ex, why, sizeof(why));
	if (ex->end == VN_SUITE_TIMED_OUT)
		v = VN_SUITE_TIMEOUT;
	else if (ex->end != VN_SUITE_EXITED || ex->code == 126 || ex->code == 127)
		v = VN_SUITE_ERROR;
	else if (ex->code == 0)
		v = VN_SUITE_PASS;
	else if (ex->code == KSFT_SKIP_CODE)
		v = VN_SUITE_SKIP;
	vn_suite_add(run, name, v, v == VN_SUITE_PASS ? NULL : why, NULL);
}
