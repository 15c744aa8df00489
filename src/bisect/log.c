/*
 * Reading bisect.log back: the state a bisection resumes from, and what
 * --replay starts from. The log may come from anyone (a colleague's
 * --replay, an edited file): every record is type-checked, every string
 * bounded and cleaned of terminal escapes, numbers finite, and a bad line
 * is an input error naming FILE:LINE.
 */
#include <json-c/json.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bisect/bisect-priv.h"
#include "util/alloc.h"
#include "util/cleanup.h"
#include "util/strbuf.h"

/* What one string of the log may hold when it is shown again: a line's worth. */
#define LOG_TEXT_MAX 2000

static const char *jstr(struct json_object *o, const char *k)
{
	struct json_object *v;
	return json_object_object_get_ex(o, k, &v) && json_object_is_type(v, json_type_string)
		       ? json_object_get_string(v)
		       : NULL;
}

static char *jtext(struct json_object *o, const char *k)
{
	const char *s = jstr(o, k);
	return s ? vn_text_dup(s, LOG_TEXT_MAX, 0) : NULL;
}

static bool jnum(struct json_object *o, const char *k, double *out)
{
	struct json_object *v;
	if (!json_object_object_get_ex(o, k, &v) ||
	    !(json_object_is_type(v, json_type_double) || json_object_is_type(v, json_type_int)))
		return false;
	*out = json_object_get_double(v);
	return isfinite(*out);
}

static struct vn_bisect_commit *find(struct vn_bisect_log_state *st, const char *hash)
{
	for (size_t i = 0; i < st->ncommits; i++)
		if (strcmp(st->commits[i].hash, hash) == 0)
			return &st->commits[i];
	return NULL;
}

/* A recorded string, shown: a line's worth of it, or "?" when there is none. */
static char *shown(const char *s, size_t max)
{
	return vn_text_dup(s ? s : "?", max, 0);
}

/*
 * A start record without a field this vnuma records: an older vnuma's log,
 * which cannot say that it was started as this bisection is.
 */
static char *missing(const char *key)
{
	return vn_xasprintf("its start record has no \"%s\" (an older vnuma's log, which does not say what it was "
			    "started with)",
			    key);
}

/* A file of the start record (the scenario, the recipe): the same when its content is. */
static char *file_differs(struct json_object *r, const char *what, const char *path, const char *sha)
{
	_cleanup_free_ char *key = vn_xasprintf("%s_sha256", what);
	const char *rpath = jstr(r, what), *rsha = jstr(r, key);

	if (!rsha)
		return missing(key);
	if (strcmp(rsha, sha) == 0)
		return NULL;
	_cleanup_free_ char *p = shown(rpath && *rpath ? rpath : "none", 200), *h = shown(rsha, 12);
	return vn_xasprintf("it was started with %s %s (sha256 %.12s), not %s (sha256 %.12s)", what, p, h,
			    *path ? path : "none", sha);
}

static char *count_differs(struct json_object *r, const char *key, const char *option, double want)
{
	double v;
	if (!jnum(r, key, &v))
		return missing(key);
	/* Nearly: alpha's printed digits may lose its last bit. */
	if (fabs(v - want) <= 1e-12 * fabs(want))
		return NULL;
	return vn_xasprintf("it was started with %s %g, not %g", option, v, want);
}

static char *flag_differs(struct json_object *r, const char *key, const char *option, bool want)
{
	struct json_object *v;
	if (!json_object_object_get_ex(r, key, &v) || !json_object_is_type(v, json_type_boolean))
		return missing(key);
	if (json_object_get_boolean(v) == want)
		return NULL;
	return vn_xasprintf("it was started %s %s, this one %s it", want ? "without" : "with", option,
			    want ? "with" : "without");
}

/* A start record of another bisection: what differs, or NULL when it is this one. */
static char *start_differs(const struct vn_bisect_start *w, struct json_object *r)
{
	const char *metric = jstr(r, "metric"), *good = jstr(r, "good"), *bad = jstr(r, "bad"), *arch = jstr(r, "arch");
	char *d;

	if (!good || strcmp(good, w->good) != 0)
		return vn_xasprintf("its good commit is %.12s, not %.12s", good && vn_bisect_hash_ok(good) ? good : "?",
				    w->good);
	if (!bad || strcmp(bad, w->bad) != 0)
		return vn_xasprintf("its bad commit is %.12s, not %.12s", bad && vn_bisect_hash_ok(bad) ? bad : "?",
				    w->bad);
	if ((metric == NULL) != (w->metric == NULL) || (metric && strcmp(metric, w->metric) != 0))
		return vn_xasprintf("it judges by %s, not by %s", metric ? "another metric" : "verdict",
				    w->metric ? w->metric : "verdict");
	if ((d = file_differs(r, "scenario", w->scenario, w->scenario_sha256)) ||
	    (d = file_differs(r, "recipe", w->recipe, w->recipe_sha256)) ||
	    (d = count_differs(r, "flaky", "--flaky", w->flaky)) ||
	    (d = count_differs(r, "repeats", "--repeats", w->repeats)) ||
	    (d = count_differs(r, "repeats_max", "a cap on runs per commit of", w->repeats_max)) ||
	    (d = count_differs(r, "alpha", "alpha", w->alpha)) || (d = flag_differs(r, "quick", "--quick", w->quick)) ||
	    (d = flag_differs(r, "virtual_time", "--virtual-time", w->virtual_time)))
		return d;
	if (!arch)
		return missing("arch");
	if (strcmp(arch, w->arch) != 0) {
		_cleanup_free_ char *a = shown(arch, 40);
		return vn_xasprintf("it was started for arch %s, not %s", a, w->arch);
	}
	return NULL;
}

static void apply_build(struct vn_bisect_commit *c, struct json_object *r)
{
	double v;
	bool ok = json_object_get_boolean(json_object_object_get(r, "ok"));
	c->build_failed = !ok;
	if (!ok) {
		_cleanup_free_ char *e = jtext(r, "error");
		free(c->why);
		c->why = vn_xasprintf("does not build: %s", e ? e : "?");
	}
	if (jnum(r, "build_s", &v) && v >= 0)
		c->build_s = v;
}

static int apply_run(struct vn_bisect_commit *c, struct json_object *r, const char *where, struct vn_error *err)
{
	struct vn_bisect_run run = {.exit = 3, .value = NAN};
	double v;

	if (c->nruns >= VN_BISECT_RUNS_MAX)
		return vn_input_error(err, "%s: more than %d runs of %.12s", where, VN_BISECT_RUNS_MAX, c->hash);
	if (jnum(r, "exit", &v) && (v == 0 || v == 1 || v == 3))
		run.exit = (int)v;
	if (jnum(r, "value", &v))
		run.value = v;
	if (jnum(r, "run_s", &v) && v >= 0)
		run.run_s = v;
	run.dir = jtext(r, "dir");
	c->runs = vn_xreallocarray(c->runs, c->nruns + 1, sizeof(*c->runs));
	c->runs[c->nruns++] = run;
	return 0;
}

static int apply_mark(struct vn_bisect_log_state *st, struct vn_bisect_commit *c, struct json_object *r,
		      const char *where, struct vn_error *err)
{
	const char *m = jstr(r, "mark");
	enum vn_bisect_mark mk = VN_BISECT_UNTESTED;
	for (int i = VN_BISECT_GOOD; i <= VN_BISECT_SKIP; i++)
		if (m && strcmp(m, vn_bisect_mark_name((enum vn_bisect_mark)i)) == 0)
			mk = (enum vn_bisect_mark)i;
	if (mk == VN_BISECT_UNTESTED) {
		_cleanup_free_ char *shown = m ? vn_text_dup(m, 40, 0) : NULL;
		return vn_input_error(err, "%s: $.mark: \"%s\" is not good, bad or skip", where, shown ? shown : "");
	}
	free(c->why);
	c->mark = mk;
	c->why = jtext(r, "why");
	if (mk == VN_BISECT_BAD)
		snprintf(st->cur_bad, sizeof(st->cur_bad), "%s", c->hash);
	return 0;
}

static int apply_record(struct vn_bisect_log_state *st, struct json_object *r, const char *where, struct vn_error *err)
{
	const char *ev = jstr(r, "event"), *hash = jstr(r, "commit");
	struct vn_bisect_commit *c;

	if (!ev)
		return vn_input_error(err, "%s: a record without \"event\"", where);
	if (strcmp(ev, "start") == 0) {
		_cleanup_free_ char *d = start_differs(&st->want, r);
		if (d)
			return vn_input_error(err, "%s: another bisection's log: %s; use another -o or remove it",
					      where, d);
		st->started = true;
		return 0;
	}
	if (strcmp(ev, "end") == 0)
		return 0;
	if (strcmp(ev, "build") != 0 && strcmp(ev, "run") != 0 && strcmp(ev, "mark") != 0) {
		_cleanup_free_ char *shown = vn_text_dup(ev, 40, 0);
		return vn_input_error(err, "%s: $.event: unknown event \"%s\"", where, shown);
	}
	if (!st->started)
		return vn_input_error(err, "%s: a %s record before the start record", where, ev);
	if (!hash || !vn_bisect_hash_ok(hash))
		return vn_input_error(err, "%s: $.commit: not a commit hash", where);
	/* A commit outside good..bad (an edited log): nothing to apply it to. */
	if (!(c = find(st, hash)))
		return 0;
	if (strcmp(ev, "build") == 0)
		apply_build(c, r);
	else if (strcmp(ev, "run") == 0)
		return apply_run(c, r, where, err);
	else
		return apply_mark(st, c, r, where, err);
	return 0;
}

int vn_bisect_log_apply(struct vn_bisect_log_state *st, const char *text, size_t len, const char *name,
			struct vn_error *err)
{
	size_t lineno = 0;
	int rc;

	for (const char *l = text; l < text + len;) {
		const char *e = memchr(l, '\n', (size_t)(text + len - l));
		char where[4200];
		lineno++;
		if (!e)
			break; /* no newline: the write was cut short */
		snprintf(where, sizeof(where), "%.4096s:%zu", name, lineno);
		struct json_tokener *tok = json_tokener_new();
		struct json_object *r = json_tokener_parse_ex(tok, l, (int)(e - l));
		bool whole = json_tokener_get_error(tok) == json_tokener_success &&
			     json_tokener_get_parse_end(tok) == (size_t)(e - l);
		json_tokener_free(tok);
		if (!r || !whole || !json_object_is_type(r, json_type_object)) {
			json_object_put(r);
			return vn_input_error(err, "%s: not a JSON object", where);
		}
		rc = apply_record(st, r, where, err);
		json_object_put(r);
		if (rc < 0)
			return rc;
		l = e + 1;
	}
	return 0;
}
