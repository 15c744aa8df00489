/*
 * One LTP test binary's output as one test. Read from LTP's lib/tst_test.c
 * (print_result(), do_exit()) and lib/tst_res.c: the new C API prints
 * "file.c:LINE: TYPE: message" for each result and, at the end, "Summary:"
 * with its counters; the old C API "tcid  N  TYPE  :  message"; the shell
 * API "tcid N TYPE: message". Its exit status is a bit mask: TFAIL 1,
 * TBROK 2, TWARN 4, TCONF 32 (when nothing passed). The verdict is the
 * worst that the lines, the Summary and the exit status say.
 */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "suite/suite-priv.h"
#include "suite/suite.h"
#include "util/alloc.h"
#include "util/cleanup.h"
#include "util/strbuf.h"

/* LTP's result types, as counted: the order of the Summary's lines. */
enum { PASS, FAIL, BROK, CONF, WARN, NKINDS };

/* The exit status's bits (include/tst_res_flags.h). */
#define LTP_TFAIL 1
#define LTP_TBROK 2
#define LTP_TWARN 4
#define LTP_TCONF 32

struct ltp {
	unsigned lines[NKINDS];   /* result lines read */
	unsigned summary[NKINDS]; /* the Summary block's counters */
	bool in_summary, has_summary, timed_out;
	char first[NKINDS][VN_SUITE_REASON_MAX + 4]; /* the first message of each kind */
	struct vn_suite_detail det;
};

/* "TPASS" ... into its kind; TINFO and TDEBUG are -2 (a result line, no result), else -1. */
static int type_kind(const char *s, size_t n)
{
	static const char *const types[] = {"TPASS", "TFAIL", "TBROK", "TCONF", "TWARN"};

	if (n != 5)
		return -1;
	for (int i = 0; i < NKINDS; i++)
		if (!strncmp(s, types[i], 5))
			return i;
	return !strncmp(s, "TINFO", 5) || !strncmp(s, "TDEBU", 5) ? -2 : -1;
}

/* A result line of any of the three APIs: its kind (as type_kind), *msg its message. */
static int result_line(const char *s, const char **msg)
{
	size_t tok = strcspn(s, " \t");
	const char *p = s + tok, *t;

	if (tok > 1 && s[tok - 1] == ':') {
		/* New API: "file.c:LINE: TYPE: ". */
		const char *colon = memchr(s, ':', tok - 1);
		if (!colon || colon + 1 == s + tok - 1 ||
		    strspn(colon + 1, "0123456789") != (size_t)(s + tok - 1 - colon - 1))
			return -1;
		t = p + strspn(p, " ");
	} else {
		/* Old and shell APIs: "tcid N TYPE". */
		p += strspn(p, " \t");
		size_t digits = strspn(p, "0123456789");
		if (!digits || (p[digits] != ' ' && p[digits] != '\t'))
			return -1;
		t = p + digits + strspn(p + digits, " \t");
	}
	int kind = type_kind(t, strcspn(t, " \t:"));
	if (kind == -1)
		return -1;
	t += 5;
	t += strspn(t, " \t");
	if (*t != ':')
		return -1;
	*msg = t + 1 + strspn(t + 1, " \t");
	return kind;
}

static void summary_line(struct ltp *l, const char *s)
{
	static const char *const keys[] = {"passed", "failed", "broken", "skipped", "warnings"};
	char key[16];
	unsigned v;

	if (sscanf(s, "%15s %u", key, &v) != 2)
		return;
	for (int i = 0; i < NKINDS; i++)
		if (!strcmp(key, keys[i])) {
			l->summary[i] = v;
			l->has_summary = true;
		}
}

static void on_line(struct ltp *l, const char *s)
{
	const char *msg;
	int kind = result_line(s, &msg);

	if (kind >= 0) {
		if (!l->lines[kind]++)
			vn_text_clean(s, strlen(s), VN_SUITE_REASON_MAX, 0, l->first[kind]);
		l->in_summary = false;
	} else if (!strcmp(s, "Summary:")) {
		l->in_summary = true;
		return;
	} else if (l->in_summary) {
		summary_line(l, s);
		return;
	}
	if (strstr(s, "Test timeouted, sending SIGKILL!") || strstr(s, "TBROK: Test killed! (timeout?)"))
		l->timed_out = true;
	if (kind != PASS && *s)
		vn_suite_detail_add(&l->det, s);
}

/* Each kind's count: the most the lines, the Summary and the exit status's bits say. */
static void counts(const struct ltp *l, const struct vn_suite_exit *ex, unsigned c[NKINDS])
{
	static const int bits[NKINDS] = {0, LTP_TFAIL, LTP_TBROK, LTP_TCONF, LTP_TWARN};

	for (int i = 0; i < NKINDS; i++) {
		c[i] = l->lines[i] > l->summary[i] ? l->lines[i] : l->summary[i];
		if (ex && ex->end == VN_SUITE_EXITED && bits[i] && (ex->code & bits[i]) && !c[i])
			c[i] = 1;
	}
}

/* The first line of kind, or what says there was one. */
static const char *why(const struct ltp *l, int kind, const char *otherwise)
{
	return l->first[kind][0] ? l->first[kind] : otherwise;
}

static enum vn_suite_verdict verdict(const struct ltp *l, const struct vn_suite_exit *ex, const char **reason,
				     char *how, size_t how_size)
{
	unsigned c[NKINDS];
	bool any = false;

	counts(l, ex, c);
	for (int i = 0; i < NKINDS; i++)
		any |= c[i] > 0;
	*reason = ex ? vn_suite_exit_text(ex, how, how_size) : "no exit status";
	if (ex && ex->end == VN_SUITE_NOT_STARTED)
		return VN_SUITE_ERROR;
	if (l->timed_out || (ex && ex->end == VN_SUITE_TIMED_OUT)) {
		*reason = l->timed_out ? "Test timeouted, sending SIGKILL!" : *reason;
		return VN_SUITE_TIMEOUT;
	}
	if (ex && ex->end == VN_SUITE_SIGNALED)
		return VN_SUITE_ERROR;
	if (ex && ex->end == VN_SUITE_EXITED && (ex->code & ~(LTP_TFAIL | LTP_TBROK | LTP_TWARN | LTP_TCONF)))
		return VN_SUITE_ERROR; /* no status LTP's library gives: 126, 127, a crash in a wrapper */
	if (c[BROK]) {
		*reason = why(l, BROK, *reason);
		return VN_SUITE_ERROR;
	}
	if (c[FAIL]) {
		*reason = why(l, FAIL, *reason);
		return VN_SUITE_FAIL;
	}
	if (c[WARN]) {
		*reason = why(l, WARN, *reason);
		return VN_SUITE_ERROR;
	}
	if (!c[PASS] && c[CONF]) {
		*reason = why(l, CONF, *reason);
		return VN_SUITE_SKIP;
	}
	if (c[PASS]) {
		*reason = NULL;
		return VN_SUITE_PASS;
	}
	*reason = any ? *reason : "no LTP result line and no Summary in the output";
	return VN_SUITE_ERROR;
}

void vn_suite_ltp_parse(const char *out, size_t len, const char *name, const struct vn_suite_exit *ex,
			struct vn_suite_run *run)
{
	_cleanup_free_ struct vn_suite_lines *it = vn_xmalloc(sizeof(*it));
	_cleanup_free_ struct ltp *l = vn_xcalloc(1, sizeof(*l));
	static const char *const kinds[] = {"passed", "failed", "broken", "skipped", "warnings"};
	size_t cut = 0;
	char how[96];
	const char *reason;

	vn_suite_lines_init(it, out, len);
	while (vn_suite_lines_next(it)) {
		cut += it->cut;
		on_line(l, it->line);
	}
	if (cut)
		vn_suite_note(run, "%s: %zu lines longer than %d bytes were cut", name, cut, VN_SUITE_LINE_MAX);
	for (int i = 0; l->has_summary && i < NKINDS; i++)
		if (l->summary[i] != l->lines[i])
			vn_suite_note(run, "%s: its Summary says %s %u, %u such lines were read", name, kinds[i],
				      l->summary[i], l->lines[i]);
	enum vn_suite_verdict v = verdict(l, ex, &reason, how, sizeof(how));
	vn_suite_add(run, name, v, reason, v == VN_SUITE_PASS ? NULL : vn_suite_detail_take(&l->det));
}
