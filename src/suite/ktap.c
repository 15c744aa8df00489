/*
 * KTAP v1 and TAP 13/14 (Documentation/dev-tools/ktap.rst of 6.1), as
 * kselftest prints them: nested blocks indented by spaces (two a level in
 * KTAP, four in older KUnit) or by the "# " that kselftest's runner.sh puts
 * before a test's own output. A level is known by its indentation, not by
 * a fixed width: a version, plan or result line indented deeper than the
 * current level opens a level, a result line indented less closes the
 * levels above it and names them. Only the leaves are tests; a parent is
 * one of its own only when its result says what its subtests do not (a
 * timeout, a failure with none of them failing, a broken plan).
 */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "suite/suite-priv.h"
#include "suite/suite.h"
#include "util/alloc.h"
#include "util/cleanup.h"
#include "util/strbuf.h"

#define STR_(x)  #x
#define STR(x)   STR_(x)
#define TOO_DEEP "subtests nested deeper than " STR(VN_SUITE_DEPTH_MAX) " levels"

struct level {
	size_t prefix;                        /* the indentation's width */
	long plan;                            /* -1 when none */
	char *skip;                           /* "1..0 # SKIP why": why */
	unsigned results;                     /* result lines at this level */
	size_t first;                         /* run->n when the level opened: its tests are those after */
	char *broken;                         /* why its output cannot be trusted: a bail out, nesting too deep */
	long totals;                          /* kselftest's "Totals:" line's sum, -1 when none */
	enum vn_suite_verdict totals_verdict; /* and the verdict its counts give */
};

struct ktap {
	struct vn_suite_run *run;
	struct level lv[VN_SUITE_DEPTH_MAX];
	size_t depth;
	struct vn_suite_detail det;
	bool full; /* VN_SUITE_TESTS_MAX reached */
	const char *name;
};

/* What a closed level hands to the result line that names it. */
struct block {
	bool children;
	bool child_failed; /* a fail, error or timeout among them */
	char *broken;
	char *skip;
};

static bool bad_verdict(enum vn_suite_verdict v)
{
	return v == VN_SUITE_FAIL || v == VN_SUITE_ERROR || v == VN_SUITE_TIMEOUT;
}

static void level_open(struct ktap *k, size_t prefix)
{
	k->lv[k->depth++] = (struct level){.prefix = prefix, .plan = -1, .first = k->run->n, .totals = -1};
}

static void level_break(struct level *l, const char *why)
{
	if (!l->broken)
		l->broken = vn_text_dup(why, VN_SUITE_REASON_MAX, 0);
}

/* A plan that its results do not keep; a Totals line speaks for a block that printed none. */
static void level_check(struct level *l)
{
	char why[96];

	if (l->plan < 0 || (unsigned long)l->plan == l->results)
		return;
	if (!l->results && l->totals == l->plan)
		return;
	snprintf(why, sizeof(why), "planned %ld tests, %u reported", l->plan, l->results);
	level_break(l, why);
}

/* Close the top level: its tests become parent's subtests. */
static struct block level_close(struct ktap *k, const char *parent)
{
	struct level *l = &k->lv[--k->depth];
	struct block b = {.children = k->run->n > l->first};

	level_check(l);
	for (size_t i = l->first; i < k->run->n; i++) {
		struct vn_suite_test *t = &k->run->tests[i];
		char *path = vn_xasprintf("%s:%s", parent, t->name);
		free(t->name);
		t->name = vn_text_dup(path, VN_SUITE_NAME_MAX, 0);
		free(path);
		b.child_failed |= bad_verdict(t->verdict);
	}
	b.broken = steal_pointer(&l->broken);
	b.skip = steal_pointer(&l->skip);
	return b;
}

static void add(struct ktap *k, const char *name, enum vn_suite_verdict v, const char *reason)
{
	char *detail = v == VN_SUITE_PASS ? NULL : vn_suite_detail_take(&k->det);

	/* A pass's diagnostics are its own, not the next result's. */
	k->det.n = k->det.next = 0;
	if (!k->full && !vn_suite_add(k->run, name, v, reason, detail))
		k->full = true;
}

/*
 * The parent's own entry, where its result line adds to what its block
 * said: a block that broke is an error (a timeout stays one).
 */
static void add_parent(struct ktap *k, const char *name, enum vn_suite_verdict v, const char *reason, struct block *b)
{
	if (b->broken) {
		_cleanup_free_ char *why = reason ? vn_xasprintf("%s; %s", reason, b->broken) : NULL;
		add(k, name, v == VN_SUITE_TIMEOUT ? v : VN_SUITE_ERROR, why ? why : b->broken);
	} else if (!b->children) {
		if (b->skip && (v == VN_SUITE_PASS || v == VN_SUITE_SKIP))
			add(k, name, VN_SUITE_SKIP, reason ? reason : b->skip);
		else
			add(k, name, v, reason);
	} else if (bad_verdict(v) && !b->child_failed) {
		add(k, name, v, reason);
	}
	vn_free_all(b->broken, b->skip);
	*b = (struct block){0};
}

/* Close the levels indented deeper than prefix; those no result line names are errors. */
static void pop_to(struct ktap *k, size_t prefix, bool named)
{
	while (k->depth > 1 && k->lv[k->depth - 1].prefix > prefix) {
		if (named && k->lv[k->depth - 2].prefix <= prefix)
			return;
		struct level *parent = &k->lv[k->depth - 2];
		char name[32];
		snprintf(name, sizeof(name), "test %u", parent->results + 1);
		struct block b = level_close(k, name);
		if (!b.broken)
			b.broken = vn_xstrdup("its subtests ended without its result line");
		add_parent(k, name, VN_SUITE_ERROR, NULL, &b);
		parent->results++;
	}
}

static size_t prefix_len(const char *s)
{
	size_t i = 0;

	for (;;) {
		if (s[i] == ' ' || s[i] == '\t')
			i++;
		else if (s[i] == '#' && (s[i + 1] == ' ' || s[i + 1] == '\t'))
			i += 2;
		else
			return i;
	}
}

static char *skip_space(char *s)
{
	while (*s == ' ' || *s == '\t')
		s++;
	return s;
}

static void trim_end(char *s)
{
	size_t n = strlen(s);
	while (n && (s[n - 1] == ' ' || s[n - 1] == '\t'))
		s[--n] = '\0';
}

/* "WORD rest" after a '#': *kw the directive's index, -1 when none; returns the rest. */
static char *directive(char *s, int *kw)
{
	static const char *const words[] = {"SKIP", "TODO", "XFAIL", "TIMEOUT", "ERROR"};

	s = skip_space(s);
	*kw = -1;
	for (int i = 0; i < (int)VN_ARRAY_SIZE(words); i++) {
		size_t n = strlen(words[i]);
		if (!strncasecmp(s, words[i], n) && (!s[n] || s[n] == ' ' || s[n] == '\t')) {
			*kw = i;
			s = skip_space(s + n);
			break;
		}
	}
	trim_end(s);
	return s;
}

static enum vn_suite_verdict result_verdict(bool ok, int kw)
{
	switch (kw) {
	case 0: return VN_SUITE_SKIP;
	case 1: /* TAP's TODO: not expected to pass yet */ return ok ? VN_SUITE_XPASS : VN_SUITE_XFAIL;
	case 2: return VN_SUITE_XFAIL;
	case 3: return VN_SUITE_TIMEOUT;
	case 4: return VN_SUITE_ERROR;
	default: return ok ? VN_SUITE_PASS : VN_SUITE_FAIL;
	}
}

/* "1..N [# SKIP why]": false when s is no plan. */
static bool parse_plan(char *s, long *n, char **skip)
{
	char *end;
	int kw;

	if (strncmp(s, "1..", 3) || !isdigit((unsigned char)s[3]))
		return false;
	unsigned long v = strtoul(s + 3, &end, 10);
	end = skip_space(end);
	if (*end && *end != '#')
		return false;
	*n = v > VN_SUITE_TESTS_MAX * 16ul ? VN_SUITE_TESTS_MAX * 16l : (long)v;
	*skip = NULL;
	if (*end == '#') {
		char *rest = directive(end + 1, &kw);
		if (kw == 0)
			*skip = rest;
	}
	return true;
}

static void on_plan(struct ktap *k, char *s)
{
	long n;
	char *skip;

	if (!parse_plan(s, &n, &skip))
		return;
	struct level *l = &k->lv[k->depth - 1];
	if (l->plan >= 0)
		level_break(l, "a second plan line");
	l->plan = n;
	if (skip && !l->skip)
		l->skip = vn_text_dup(*skip ? skip : "skipped", VN_SUITE_REASON_MAX, 0);
}

/* A version line where a level already had a plan or results: a new document at that level. */
static void on_version(struct ktap *k)
{
	struct level *l = &k->lv[k->depth - 1];

	/* Nested blocks do not restart: their parent's result line closes them. */
	if (k->depth > 1 || (l->plan < 0 && !l->results))
		return;
	level_check(l);
	if (l->broken)
		add(k, k->name, VN_SUITE_ERROR, l->broken);
	free(l->broken);
	free(l->skip);
	size_t prefix = l->prefix;
	k->depth--;
	level_open(k, prefix);
}

/* "ok|not ok [N] [- ]description [# directive]". */
static bool on_result(struct ktap *k, char *s, size_t prefix)
{
	bool ok = !strncmp(s, "ok", 2) && (!s[2] || s[2] == ' ' || s[2] == '\t');
	if (!ok && !(!strncmp(s, "not ok", 6) && (!s[6] || s[6] == ' ' || s[6] == '\t')))
		return false;
	char *p = skip_space(s + (ok ? 2 : 6)), *end;
	unsigned long num = strtoul(p, &end, 10);
	if (end == p || !isdigit((unsigned char)*p))
		num = 0;
	p = skip_space(end);
	if (p[0] == '-' && (p[1] == ' ' || !p[1]))
		p = skip_space(p + 1);
	char *hash = strchr(p, '#'), *reason = NULL;
	int kw = -1;
	if (hash) {
		*hash = '\0';
		reason = directive(hash + 1, &kw);
	}
	trim_end(p);

	pop_to(k, prefix, true);
	struct block b = {0};
	struct level *top = &k->lv[k->depth - 1];
	char name[40];
	if (!*p) {
		snprintf(name, sizeof(name), "test %lu", num ? num : top->results + 1ul);
		p = name;
	}
	if (k->depth > 1 && top->prefix > prefix) {
		b = level_close(k, p);
	} else if (top->prefix < prefix) {
		if (k->depth == VN_SUITE_DEPTH_MAX) {
			level_break(top, TOO_DEEP);
			return true;
		}
		level_open(k, prefix);
	}
	add_parent(k, p, result_verdict(ok, kw), reason && *reason ? reason : NULL, &b);
	k->lv[k->depth - 1].results++;
	return true;
}

/* kselftest's "Totals: pass:P fail:F xfail:X xpass:XP skip:S error:E", for a block with no result lines. */
static void on_totals(struct level *l, const char *s)
{
	int c[6];

	if (sscanf(s, "Totals: pass:%d fail:%d xfail:%d xpass:%d skip:%d error:%d", &c[0], &c[1], &c[2], &c[3], &c[4],
		   &c[5]) != 6)
		return;
	long sum = 0;
	for (int i = 0; i < 6; i++)
		sum += c[i] < 0 ? 0 : c[i];
	l->totals = sum;
	l->totals_verdict = c[5] > 0   ? VN_SUITE_ERROR
			    : c[1] > 0 ? VN_SUITE_FAIL
			    : c[3] > 0 ? VN_SUITE_XPASS
			    : c[0] > 0 ? VN_SUITE_PASS
			    : c[2] > 0 ? VN_SUITE_XFAIL
				       : VN_SUITE_SKIP;
}

/* The deepest level a line indented by prefix belongs to, without closing any. */
static struct level *level_at(struct ktap *k, size_t prefix)
{
	size_t d = k->depth;
	while (d > 1 && k->lv[d - 1].prefix > prefix)
		d--;
	return &k->lv[d - 1];
}

/* Version and plan lines: a deeper one opens a level, a shallower one closes those above. */
static bool structural(struct ktap *k, size_t prefix)
{
	struct level *top = &k->lv[k->depth - 1];

	if (prefix > top->prefix) {
		if (k->depth == VN_SUITE_DEPTH_MAX) {
			level_break(top, TOO_DEEP);
			return false;
		}
		level_open(k, prefix);
		return true;
	}
	pop_to(k, prefix, false);
	if (k->lv[k->depth - 1].prefix < prefix)
		level_open(k, prefix);
	return true;
}

/* One line; false after a top-level "Bail out!". */
static bool on_line(struct ktap *k, char *line)
{
	size_t prefix = prefix_len(line);
	char *s = line + prefix;

	trim_end(s);
	bool version = !strncmp(s, "KTAP version ", 13) || !strncmp(s, "TAP version ", 12);
	long n;
	char *skip;
	if (version || parse_plan(s, &n, &skip)) {
		if (structural(k, prefix)) {
			if (version)
				on_version(k);
			else
				on_plan(k, s);
			return true;
		}
	} else if (on_result(k, s, prefix)) {
		return true;
	} else if (!strncmp(s, "Bail out!", 9)) {
		struct level *l = level_at(k, prefix);
		level_break(l, s);
		return l != &k->lv[0];
	} else if (!strncmp(s, "Totals: ", 8)) {
		on_totals(level_at(k, prefix), s);
	}
	if (*s)
		vn_suite_detail_add(&k->det, s);
	return true;
}

/* How the process ended, where it says more than its results: a crash, a timeout, an exit no result explains. */
static void on_exit_status(struct ktap *k, const struct vn_suite_exit *ex, bool any_bad)
{
	char why[128], how[96];

	vn_suite_exit_text(ex, how, sizeof(how));
	if (ex->end == VN_SUITE_TIMED_OUT) {
		snprintf(why, sizeof(why), "%s after %zu results", how, k->run->n);
		add(k, k->name, VN_SUITE_TIMEOUT, why);
	} else if (ex->end != VN_SUITE_EXITED) {
		add(k, k->name, VN_SUITE_ERROR, how);
	} else if (ex->code != 0 && ex->code != 4 && !any_bad) {
		snprintf(why, sizeof(why), "%s, though no test failed", how);
		add(k, k->name, VN_SUITE_ERROR, why);
	}
}

void vn_suite_ktap_parse(const char *out, size_t len, const char *name, const struct vn_suite_exit *ex,
			 struct vn_suite_run *run)
{
	_cleanup_free_ struct vn_suite_lines *it = vn_xmalloc(sizeof(*it));
	_cleanup_free_ struct ktap *k = vn_xcalloc(1, sizeof(*k));
	size_t first = run->n, cut = 0;

	*k = (struct ktap){.run = run, .name = name};
	level_open(k, 0);
	vn_suite_lines_init(it, out, len);
	while (!k->full && vn_suite_lines_next(it)) {
		cut += it->cut;
		if (!on_line(k, it->line))
			break;
	}
	if (cut)
		vn_suite_note(run, "%zu lines longer than %d bytes were cut", cut, VN_SUITE_LINE_MAX);
	pop_to(k, 0, false);

	struct level *top = &k->lv[0];
	level_check(top);
	bool any_bad = false;
	for (size_t i = first; i < run->n; i++)
		any_bad |= bad_verdict(run->tests[i].verdict);
	if (top->broken) {
		add(k, name, VN_SUITE_ERROR, top->broken);
	} else if (run->n == first && !(ex && ex->end != VN_SUITE_EXITED)) {
		if (top->skip || (ex && ex->code == 4))
			add(k, name, VN_SUITE_SKIP, top->skip ? top->skip : "exited with 4 (KSFT_SKIP)");
		else if (top->totals >= 0)
			add(k, name, top->totals_verdict, "no result lines: the verdict of its Totals line");
		else
			add(k, name, VN_SUITE_ERROR, "no KTAP or TAP results in the output");
	}
	if (ex)
		on_exit_status(k, ex, any_bad || top->broken);
	vn_free_all(top->broken, top->skip);
}
