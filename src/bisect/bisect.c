/*
 * The bisection: the endpoints first, then the commit git says halves what
 * is left, until one bad commit has only good parents in question. Each
 * build, run and mark is one line of OUT/bisect.log, appended and synced as
 * it happens: the log is the state, so a second start reads it and goes on,
 * and a run cut short (no line) is run again into a fresh directory.
 */
#include <errno.h>
#include <fcntl.h>
#include <json-c/json.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "bisect/bisect-priv.h"
#include "compare/compare.h"
#include "report/html.h"
#include "report/result-group.h"
#include "util/alloc.h"
#include "util/cleanup.h"
#include "util/clock.h"
#include "util/dir.h"
#include "util/file.h"
#include "util/interrupt.h"
#include "util/sha256.h"
#include "util/strbuf.h"

#define LOG_MAX     (64u << 20)
#define LOG_VERSION 2 /* 2: the start record says all of struct vn_bisect_start */

struct bisect {
	const struct vn_bisect_opts *o;
	const struct vn_bisect_ops *ops;
	struct vn_bisect_result *res;
	char good[VN_BISECT_HASH_MAX + 1], bad[VN_BISECT_HASH_MAX + 1];
	char cur_bad[VN_BISECT_HASH_MAX + 1]; /* the newest commit marked bad: git's bad */
	char *log_path;
	int out_fd; /* OUT, locked while this process bisects into it */
	int log_fd;
	bool log_ready;               /* the log is this bisection's, open for appending: OUT is ours to write */
	struct vn_bisect_start start; /* what this bisection's start record says */
	char scenario_sha[VN_SHA256_HEX_LEN + 1], recipe_sha[VN_SHA256_HEX_LEN + 1];
	double t0;
	bool first_built; /* this process ran a real build (not a cache hit) */
	unsigned builds;  /* real builds this process ran after its first */
	double build_sum; /* and their time */
	unsigned runs;    /* runs this process made */
	double run_sum;
	unsigned ncands;        /* commits still in question at the last count */
	char *topology, *accel; /* from the runs, for OUT/commits/group.json */
};

void vn_bisect_commits_free(struct vn_bisect_commit *v, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		vn_free_all(v[i].subject, v[i].why, v[i].kernel);
		for (size_t r = 0; r < v[i].nruns; r++)
			free(v[i].runs[r].dir);
		free(v[i].runs);
	}
	free(v);
}

void vn_bisect_result_clear(struct vn_bisect_result *res)
{
	free(res->message);
	free(res->first_bad_subject);
	vn_strv_free_n(res->candidates, res->ncandidates);
	vn_bisect_commits_free(res->commits, res->ncommits);
	*res = (struct vn_bisect_result){0};
}

static struct vn_bisect_commit *find(struct bisect *b, const char *hash)
{
	for (size_t i = 0; i < b->res->ncommits; i++)
		if (strcmp(b->res->commits[i].hash, hash) == 0)
			return &b->res->commits[i];
	return NULL;
}

static void say(struct bisect *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void say(struct bisect *b, const char *fmt, ...)
{
	char line[1024];
	va_list ap;
	if (!b->ops->say)
		return;
	va_start(ap, fmt);
	vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	b->ops->say(b->ops->data, line);
}

/* ---- the log ---- */

/* One record, one line, on disk before anything acts on it. */
static int log_put(struct bisect *b, struct json_object *rec, struct vn_error *err)
{
	const char *s = json_object_to_json_string_ext(rec, JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE);
	_cleanup_free_ char *line = vn_xasprintf("%s\n", s);
	int rc = vn_write_all(b->log_fd, line, strlen(line));
	json_object_put(rec);
	if (rc == 0 && fdatasync(b->log_fd) < 0)
		rc = -errno;
	return rc < 0 ? vn_infra_error(err, rc, "%s: %s", b->log_path, strerror(-rc)) : 0;
}

static struct json_object *record(const char *event, const char *commit)
{
	struct json_object *o = json_object_new_object();
	json_object_object_add(o, "event", json_object_new_string(event));
	if (commit)
		json_object_object_add(o, "commit", json_object_new_string(commit));
	return o;
}

static struct json_object *num_or_null(double v)
{
	return isfinite(v) ? json_object_new_double(v) : NULL;
}

static int log_mark(struct bisect *b, struct vn_bisect_commit *c, enum vn_bisect_mark m, char *why,
		    struct vn_error *err)
{
	struct json_object *r = record("mark", c->hash);
	json_object_object_add(r, "mark", json_object_new_string(vn_bisect_mark_name(m)));
	json_object_object_add(r, "why", json_object_new_string(why ? why : ""));
	free(c->why);
	c->mark = m;
	c->why = why;
	if (m == VN_BISECT_BAD)
		snprintf(b->cur_bad, sizeof(b->cur_bad), "%s", c->hash);
	say(b, "%.12s is %s: %s", c->hash, vn_bisect_mark_name(m), why ? why : "");
	return log_put(b, r, err);
}

static void start_fields(struct bisect *b, struct json_object *r)
{
	const struct vn_bisect_start *w = &b->start;
	json_object_object_add(r, "version", json_object_new_int(LOG_VERSION));
	json_object_object_add(r, "repo", json_object_new_string(b->o->repo));
	json_object_object_add(r, "good", json_object_new_string(w->good));
	json_object_object_add(r, "bad", json_object_new_string(w->bad));
	json_object_object_add(r, "scenario", json_object_new_string(w->scenario));
	json_object_object_add(r, "scenario_sha256", json_object_new_string(w->scenario_sha256));
	json_object_object_add(r, "recipe", json_object_new_string(w->recipe));
	json_object_object_add(r, "recipe_sha256", json_object_new_string(w->recipe_sha256));
	json_object_object_add(r, "metric", w->metric ? json_object_new_string(w->metric) : NULL);
	json_object_object_add(r, "flaky", json_object_new_int((int)w->flaky));
	json_object_object_add(r, "repeats", json_object_new_int((int)w->repeats));
	json_object_object_add(r, "repeats_max", json_object_new_int((int)w->repeats_max));
	json_object_object_add(r, "alpha", json_object_new_double(w->alpha));
	json_object_object_add(r, "quick", json_object_new_boolean(w->quick));
	json_object_object_add(r, "virtual_time", json_object_new_boolean(w->virtual_time));
	json_object_object_add(r, "arch", json_object_new_string(w->arch));
}

/* A file's content hash for the start record ("" for none), so that an edited scenario or recipe is another bisection. */
static int file_sha(const char *path, char hex[VN_SHA256_HEX_LEN + 1], struct vn_error *err)
{
	uint8_t d[VN_SHA256_LEN];
	int rc;

	hex[0] = '\0';
	if (!path || !*path)
		return 0;
	if ((rc = vn_sha256_file(path, d, err)) < 0)
		return rc;
	vn_sha256_hex(d, hex);
	return 0;
}

static int start_fill(struct bisect *b, struct vn_error *err)
{
	const struct vn_bisect_opts *o = b->o;
	int rc;

	if ((rc = file_sha(o->scenario, b->scenario_sha, err)) < 0 ||
	    (rc = file_sha(o->recipe, b->recipe_sha, err)) < 0)
		return rc;
	b->start = (struct vn_bisect_start){.good = b->good,
					    .bad = b->bad,
					    .metric = o->policy.metric,
					    .scenario = o->scenario ? o->scenario : "",
					    .scenario_sha256 = b->scenario_sha,
					    .recipe = o->recipe ? o->recipe : "",
					    .recipe_sha256 = b->recipe_sha,
					    .arch = o->arch ? o->arch : "",
					    .flaky = o->policy.flaky,
					    .repeats = o->policy.repeats,
					    .repeats_max = o->policy.repeats_max,
					    .alpha = o->policy.alpha,
					    .quick = o->quick,
					    .virtual_time = o->virtual_time};
	return 0;
}

/* Read the log at path into the commits (log.c has the rules). */
static int log_load(struct bisect *b, const char *path, bool *started, struct vn_error *err)
{
	_cleanup_free_ char *text = NULL;
	size_t len = 0;
	int rc;
	struct vn_bisect_log_state st = {.commits = b->res->commits, .ncommits = b->res->ncommits, .want = b->start};

	if ((rc = vn_file_read(path, LOG_MAX, &text, &len, err)) < 0)
		return rc;
	snprintf(st.cur_bad, sizeof(st.cur_bad), "%s", b->cur_bad);
	rc = vn_bisect_log_apply(&st, text, len, path, err);
	snprintf(b->cur_bad, sizeof(b->cur_bad), "%s", st.cur_bad);
	*started = st.started;
	return rc;
}

/*
 * OUT/bisect.log for appending (and reading its last byte), never through a
 * symlink planted there, and only a regular file: -ENOENT, err untouched,
 * when there is none and create is false.
 */
static int log_fd_open(struct bisect *b, bool create, struct vn_error *err)
{
	int flags =
		O_RDWR | O_APPEND | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC | (create ? O_CREAT | O_EXCL : 0);
	int fd = openat(b->out_fd, "bisect.log", flags, 0644), e = errno;
	struct stat st;

	if (fd >= 0 && fstat(fd, &st) == 0 && S_ISREG(st.st_mode)) {
		b->log_fd = fd;
		return 0;
	}
	if (fd >= 0)
		close(fd);
	if (fd < 0 && e == ENOENT && !create)
		return -ENOENT;
	if (fstatat(b->out_fd, "bisect.log", &st, AT_SYMLINK_NOFOLLOW) == 0 && !S_ISREG(st.st_mode))
		return vn_input_error(err, "%s is %s, not a bisection's log: remove it, or use another -o", b->log_path,
				      S_ISLNK(st.st_mode) ? "a symlink (not followed)" : "not a regular file");
	return vn_infra_error(err, -e, "%s: %s", b->log_path, strerror(e));
}

static bool same_file(const char *path, int fd)
{
	struct stat a, c;
	return stat(path, &a) == 0 && fstat(fd, &c) == 0 && a.st_dev == c.st_dev && a.st_ino == c.st_ino;
}

/* A log read back into the commits: it must be this bisection's (log.c says what differs). */
static int log_read(struct bisect *b, const char *path, struct vn_error *err)
{
	bool started = false;
	int rc = log_load(b, path, &started, err);
	if (rc == 0 && !started)
		return vn_input_error(err, "%s: no start record", path);
	return rc;
}

static int log_open(struct bisect *b, struct vn_error *err)
{
	const char *replay = b->o->replay;
	int rc = log_fd_open(b, false, err);

	if (rc < 0 && rc != -ENOENT)
		return rc;
	bool have = rc == 0;
	if (replay && !(have && same_file(replay, b->log_fd))) {
		if (have)
			return vn_input_error(err, "%s already holds a bisection: replay %s into another output dir",
					      b->o->outdir, replay);
		/* Read before it is copied: a log of another bisection leaves nothing in OUT. */
		if ((rc = log_read(b, replay, err)) < 0 || (rc = vn_file_copy_atomic(replay, b->log_path, err)) < 0 ||
		    (rc = log_fd_open(b, false, err)) < 0)
			return rc;
	} else if (have && (rc = log_read(b, b->log_path, err)) < 0) {
		return rc;
	} else if (!have) {
		if ((rc = log_fd_open(b, true, err)) < 0)
			return rc;
		struct json_object *r = record("start", NULL);
		start_fields(b, r);
		b->log_ready = true;
		return log_put(b, r, err);
	}
	/* A line cut short by a crash would glue onto the next one: end it. */
	struct stat st;
	char last = '\n';
	if (fstat(b->log_fd, &st) == 0 && st.st_size > 0 && pread(b->log_fd, &last, 1, st.st_size - 1) == 1 &&
	    last != '\n')
		(void)vn_write_all(b->log_fd, "\n", 1);
	say(b, "resuming from %s", replay ? replay : b->log_path);
	b->log_ready = true;
	return 0;
}

/*
 * OUT, opened and locked by this process: a second bisection into it is
 * refused while this one runs, rather than interleaving its lines with
 * ours. What bisect makes in it (commits/, bisect.log) must not be a
 * symlink planted to somewhere else (docs/security.md); OUT itself is the
 * user's to name.
 */
static int out_open(struct bisect *b, struct vn_error *err)
{
	const char *out = b->o->outdir;
	int rc;

	if ((rc = vn_mkdir_p(out, 0755, err)) < 0)
		return rc;
	if ((b->out_fd = open(out, O_RDONLY | O_DIRECTORY | O_CLOEXEC)) < 0)
		return vn_infra_error(err, -errno, "%s: %s", out, strerror(errno));
	if (flock(b->out_fd, LOCK_EX | LOCK_NB) < 0)
		return errno == EWOULDBLOCK ? vn_infra_error(err, -EBUSY,
							     "%s: another bisection is running in it (wait for it "
							     "to finish, or use another -o)",
							     out)
					    : vn_infra_error(err, -errno, "%s: cannot lock: %s", out, strerror(errno));
	int fd = vn_dir_beneath(b->out_fd, out, "commits", false, 0, err);
	if (fd >= 0)
		close(fd);
	if (fd == -ENOENT)
		vn_error_clear(err);
	return fd < 0 && fd != -ENOENT ? vn_error_prefix(err, "bisection directory") : 0;
}

/* ---- judging one commit ---- */

static double mean_or(double sum, unsigned n, double dflt)
{
	return n ? sum / n : dflt;
}

static void progress(struct bisect *b, const struct vn_bisect_commit *c, const char *why)
{
	unsigned left = b->ncands, steps = 0;
	while ((1u << steps) < left + 1 && steps < 31)
		steps++;
	double per_run = mean_or(b->run_sum, b->runs, 0), per_build = mean_or(b->build_sum, b->builds, 0);
	unsigned per = b->o->policy.metric ? b->o->policy.repeats : (b->o->policy.flaky ? b->o->policy.flaky : 1);
	char eta[64] = "";
	if (b->runs)
		snprintf(eta, sizeof(eta), ", ~%.0f min left", steps * (per_build + per * per_run) / 60.0);
	say(b, "step %u: %s %.12s %s (first bad: %.12s or one of %u commits before it, ~%u steps%s; %.0f s so far)",
	    b->res->steps + 1, why, c->hash, c->subject ? c->subject : "", b->cur_bad, left, steps, eta,
	    vn_now_s() - b->t0);
}

static int build(struct bisect *b, struct vn_bisect_commit *c, struct vn_error *err)
{
	struct vn_error e = {0};
	double s = 0, t = vn_now_s();
	int rc;

	if (c->build_failed || c->kernel)
		return 0;
	rc = b->ops->build(b->ops->data, c->hash, &c->kernel, &s, &e);
	if (rc < 0 && (e.kind != VN_ERR_INPUT || vn_was_interrupted())) {
		*err = e;
		return rc;
	}
	struct json_object *r = record("build", c->hash);
	json_object_object_add(r, "ok", json_object_new_boolean(rc == 0));
	if (rc < 0) {
		c->build_failed = true;
		json_object_object_add(r, "error", json_object_new_string(e.msg));
		free(c->why);
		c->why = vn_xasprintf("does not build: %s", e.msg);
		say(b, "%.12s does not build: %s", c->hash, e.msg);
		vn_error_clear(&e);
	} else {
		/*
		 * A cache hit takes no time, and the first real build may be a cold
		 * one: the ETA is made of the incremental builds after it.
		 */
		if (s > 0 && vn_now_s() - t > 1) {
			c->build_s = s;
			if (b->first_built)
				b->builds++, b->build_sum += s;
			b->first_built = true;
		}
		json_object_object_add(r, "kernel", json_object_new_string(c->kernel));
		json_object_object_add(r, "build_s", json_object_new_double(c->build_s));
	}
	return log_put(b, r, err);
}

static int run_once(struct bisect *b, struct vn_bisect_commit *c, struct vn_error *err)
{
	struct vn_bisect_run run = {.exit = 3, .value = NAN};
	struct vn_error e = {0};
	_cleanup_free_ char *rel = vn_xasprintf("commits/%.12s/run-%zu", c->hash, c->nruns + 1);
	_cleanup_free_ char *dir = vn_xasprintf("%s/%s", b->o->outdir, rel);
	_cleanup_free_ char *parent = vn_xasprintf("commits/%.12s", c->hash);
	double t = vn_now_s();
	int rc;

	if (c->nruns >= VN_BISECT_RUNS_MAX)
		return vn_infra_error(err, -E2BIG, "%.12s: %d runs and still undecided", c->hash, VN_BISECT_RUNS_MAX);
	/* Made beneath OUT's descriptor: a symlink planted at commits/ or commits/HASH is refused, not followed. */
	if ((rc = vn_dir_beneath(b->out_fd, b->o->outdir, parent, true, 0755, err)) < 0)
		return vn_error_prefix(err, "bisection directory");
	close(rc);
	/* A run cut short before its line was logged left a directory: it is run again, from nothing. */
	vn_rm_rf(dir);
	char variant[16];
	snprintf(variant, sizeof(variant), "%.12s", c->hash);
	struct vn_bisect_run_in in = {
		.kernel = c->kernel, .dir = dir, .variant = variant, .repeat = (unsigned)c->nruns + 1};
	struct vn_bisect_run_out out = {.exit = 3, .value = NAN};
	rc = b->ops->run(b->ops->data, &in, &out, &e);
	run.exit = out.exit;
	run.value = out.value;
	/* The group's machine is its runs': the first that says it names it. */
	if (!b->topology && out.topology)
		b->topology = steal_pointer(&out.topology);
	if (!b->accel && out.accel)
		b->accel = steal_pointer(&out.accel);
	vn_free_all(out.topology, out.accel);
	if (vn_was_interrupted()) {
		vn_error_clear(&e);
		return vn_infra_error(err, -EINTR, "interrupted: the same command goes on from %s", b->log_path);
	}
	if (rc < 0) {
		run.exit = 3;
		say(b, "%.12s: run %zu could not run: %s", c->hash, c->nruns + 1, e.msg);
		vn_error_clear(&e);
	}
	run.run_s = vn_now_s() - t;
	b->runs++;
	b->run_sum += run.run_s;
	struct json_object *r = record("run", c->hash);
	json_object_object_add(r, "n", json_object_new_int((int)c->nruns + 1));
	json_object_object_add(r, "exit", json_object_new_int(run.exit));
	json_object_object_add(r, "value", num_or_null(run.value));
	json_object_object_add(r, "run_s", json_object_new_double(run.run_s));
	json_object_object_add(r, "dir", json_object_new_string(rel));
	run.dir = steal_pointer(&rel);
	c->runs = vn_xreallocarray(c->runs, c->nruns + 1, sizeof(*c->runs));
	c->runs[c->nruns++] = run;
	return log_put(b, r, err);
}

/* The endpoints' figures, for the metric's judgement. */
static void endpoint_stats(struct bisect *b, struct vn_stats *good, struct vn_stats *bad)
{
	const struct vn_bisect_commit *g = find(b, b->good), *x = find(b, b->bad);
	vn_bisect_runs_stats(g->runs, g->nruns, good);
	vn_bisect_runs_stats(x->runs, x->nruns, bad);
}

/* Build and run c until it is decided (by verdict, or by metric against the endpoints). */
static int judge(struct bisect *b, struct vn_bisect_commit *c, struct vn_error *err)
{
	const struct vn_bisect_policy *p = &b->o->policy;
	int rc;

	if (c->mark != VN_BISECT_UNTESTED)
		return 0;
	if ((rc = build(b, c, err)) < 0)
		return rc;
	if (c->build_failed)
		return log_mark(b, c, VN_BISECT_SKIP, vn_xstrdup(c->why), err);
	for (;;) {
		enum vn_bisect_mark m;
		char *why = NULL;
		enum vn_bisect_step st;
		if (p->metric) {
			struct vn_stats g, x;
			endpoint_stats(b, &g, &x);
			st = vn_bisect_judge_metric(p, &g, &x, c->runs, c->nruns, &m, &why);
		} else {
			st = vn_bisect_judge_verdict(p, c->runs, c->nruns, &m, &why);
		}
		if (st == VN_BISECT_DECIDED)
			return log_mark(b, c, m, why, err);
		if ((rc = run_once(b, c, err)) < 0)
			return rc;
	}
}

/* Runs of c by metric until it has n values (or could not run too often). */
static int run_until(struct bisect *b, struct vn_bisect_commit *c, size_t n, struct vn_error *err)
{
	struct vn_stats s;
	int rc;

	if ((rc = build(b, c, err)) < 0)
		return rc;
	if (c->build_failed)
		return vn_infra_error(err, -EIO, "the %s endpoint %.12s %s", c == find(b, b->good) ? "good" : "bad",
				      c->hash, c->why ? c->why : "does not build");
	for (;;) {
		vn_bisect_runs_stats(c->runs, c->nruns, &s);
		if (s.n >= n)
			return 0;
		if (c->nruns - s.n > b->o->policy.infra_max)
			return vn_infra_error(err, -EIO, "%.12s: %zu runs gave no %s (see %s/%s)", c->hash,
					      c->nruns - s.n, b->o->policy.metric, b->o->outdir,
					      c->runs[c->nruns - 1].dir ? c->runs[c->nruns - 1].dir : "");
		if ((rc = run_once(b, c, err)) < 0)
			return rc;
		/* An endpoint's run that completed without the metric: a name the scenario does not record. */
		const struct vn_bisect_run *last = &c->runs[c->nruns - 1];
		if ((last->exit == 0 || last->exit == 1) && !isfinite(last->value))
			return vn_input_error(err,
					      "--metric %s: %s/%s/result.json records no such metric (vnuma compare "
					      "lists a run's metrics)",
					      b->o->policy.metric, b->o->outdir, last->dir);
	}
}

static int endpoints_metric(struct bisect *b, bool *differ, struct vn_error *err)
{
	struct vn_bisect_commit *g = find(b, b->good), *x = find(b, b->bad);
	const struct vn_bisect_policy *p = &b->o->policy;
	size_t want = p->repeats < 2 ? 2 : p->repeats;
	int rc;

	if (g->mark == VN_BISECT_GOOD && x->mark == VN_BISECT_BAD) {
		*differ = true;
		return 0;
	}
	for (;;) {
		struct vn_stats sg, sx;
		char *why = NULL;
		say(b, "endpoints: %zu runs of each, by %s", want, p->metric);
		if ((rc = run_until(b, x, want, err)) < 0 || (rc = run_until(b, g, want, err)) < 0)
			return rc;
		endpoint_stats(b, &sg, &sx);
		if (vn_bisect_judge_endpoints(p, &sg, &sx, differ, &why) == VN_BISECT_DECIDED) {
			if (!*differ) {
				free(b->res->message);
				b->res->message = vn_xasprintf("the endpoints do not differ by %s: %s", p->metric, why);
				free(why);
				return 0;
			}
			if ((rc = log_mark(b, x, VN_BISECT_BAD, vn_xstrdup(why), err)) < 0 ||
			    (rc = log_mark(b, g, VN_BISECT_GOOD, why, err)) < 0)
				return rc;
			return 0;
		}
		want++;
	}
}

static int endpoints_verdict(struct bisect *b, bool *differ, struct vn_error *err)
{
	struct vn_bisect_commit *g = find(b, b->good), *x = find(b, b->bad);
	int rc;

	say(b, "endpoints: the bad one %.12s, then the good one %.12s", x->hash, g->hash);
	if ((rc = judge(b, x, err)) < 0)
		return rc;
	if (x->mark == VN_BISECT_BAD && (rc = judge(b, g, err)) < 0)
		return rc;
	for (struct vn_bisect_commit *e = x; e; e = e == x ? g : NULL)
		if (e->mark == VN_BISECT_SKIP)
			return vn_infra_error(err, -EIO, "the %s endpoint %.12s cannot be judged: %s",
					      e == x ? "bad" : "good", e->hash, e->why ? e->why : "");
	*differ = x->mark == VN_BISECT_BAD && g->mark == VN_BISECT_GOOD;
	if (!*differ)
		b->res->message = vn_xasprintf(
			"the endpoints do not differ: the %s one %.12s is %s too (%s)",
			x->mark == VN_BISECT_GOOD ? "bad" : "good", x->mark == VN_BISECT_GOOD ? x->hash : g->hash,
			x->mark == VN_BISECT_GOOD ? "good" : "bad", x->mark == VN_BISECT_GOOD ? x->why : g->why);
	return 0;
}

/* ---- the loop ---- */

static int next_commit(struct bisect *b, struct vn_bisect_commit **next, struct vn_error *err)
{
	_cleanup_strv_ char **goods = NULL, **cands = NULL;
	size_t ngoods = 0, n = 0, skipped = 0;
	int rc;

	*next = NULL;
	goods = vn_xcalloc(b->res->ncommits + 1, sizeof(char *));
	for (size_t i = 0; i < b->res->ncommits; i++)
		if (b->res->commits[i].mark == VN_BISECT_GOOD)
			goods[ngoods++] = vn_xstrdup(b->res->commits[i].hash);
	if ((rc = vn_bisect_git_candidates(b->o->repo, b->cur_bad, goods, ngoods, &cands, &n, err)) < 0)
		return rc;
	/*
	 * git lists bad itself unless a good commit descends from it, which no
	 * bisection marks: only a log edited so, resumed or replayed.
	 */
	bool bad_listed = false;
	for (size_t i = 0; i < n; i++)
		bad_listed |= strcmp(cands[i], b->cur_bad) == 0;
	if (!bad_listed)
		return vn_input_error(err,
				      "%s: its marks contradict each other: %.12s is marked bad, and a commit after "
				      "it good",
				      b->o->replay ? b->o->replay : b->log_path, b->cur_bad);
	b->ncands = 0;
	for (size_t i = 0; i < n; i++) {
		struct vn_bisect_commit *c = find(b, cands[i]);
		if (!c || strcmp(c->hash, b->cur_bad) == 0)
			continue;
		if (c->mark == VN_BISECT_SKIP) {
			skipped++;
			continue;
		}
		b->ncands++;
		if (!*next)
			*next = c;
	}
	if (*next)
		return 0;
	struct vn_bisect_result *res = b->res;
	struct vn_bisect_commit *fb = find(b, b->cur_bad);
	if (!fb) /* cur_bad is the bad endpoint or a commit marked in the range: always there */
		return vn_infra_error(err, -EINVAL, "%.12s, the newest bad commit, is not in the range", b->cur_bad);
	if (!skipped) {
		res->outcome = VN_BISECT_FOUND;
		snprintf(res->first_bad, sizeof(res->first_bad), "%s", fb->hash);
		res->first_bad_subject = vn_xstrdup_or_null(fb->subject);
		res->message = vn_xasprintf("the first bad commit is %s %s", fb->hash, fb->subject ? fb->subject : "");
		return 0;
	}
	/* Like git bisect: only skipped commits are left, and the first bad is one of them or bad. */
	res->outcome = VN_BISECT_AMBIGUOUS;
	res->candidates = vn_xcalloc(skipped + 2, sizeof(char *));
	res->candidates[res->ncandidates++] = vn_xstrdup(fb->hash);
	for (size_t i = 0; i < n; i++) {
		struct vn_bisect_commit *c = find(b, cands[i]);
		if (c && c->mark == VN_BISECT_SKIP)
			res->candidates[res->ncandidates++] = vn_xstrdup(c->hash);
	}
	res->message = vn_xasprintf("only skipped commits are left: the first bad commit is %.12s or one of the %zu "
				    "skipped before it",
				    fb->hash, res->ncandidates - 1);
	return 0;
}

static int bisect_loop(struct bisect *b, struct vn_error *err)
{
	bool differ = false;
	int rc;

	rc = b->o->policy.metric ? endpoints_metric(b, &differ, err) : endpoints_verdict(b, &differ, err);
	if (rc < 0)
		return rc;
	if (!differ) {
		b->res->outcome = VN_BISECT_NO_DIFFERENCE;
		return 0;
	}
	for (;;) {
		struct vn_bisect_commit *c;
		if ((rc = next_commit(b, &c, err)) < 0)
			return rc;
		if (!c)
			return 0;
		progress(b, c, "testing");
		if ((rc = judge(b, c, err)) < 0)
			return rc;
		b->res->steps++;
	}
}

/* ---- the results ---- */

char *vn_bisect_format_table(const struct vn_bisect_result *res, const struct vn_bisect_policy *p)
{
	struct vn_strbuf s = VN_STRBUF_INIT;
	vn_strbuf_printf(&s, "%5s  %-12s  %-8s  %4s  %-28s  %s\n", "#", "commit", "mark", "runs",
			 p->metric ? p->metric : "verdicts (pass/fail/broken)", "subject");
	for (size_t i = 0; i < res->ncommits; i++) {
		const struct vn_bisect_commit *c = &res->commits[i];
		char fig[64];
		if (c->mark == VN_BISECT_UNTESTED && !c->nruns && !c->build_failed)
			continue;
		if (p->metric) {
			struct vn_stats st;
			vn_bisect_runs_stats(c->runs, c->nruns, &st);
			if (st.n)
				snprintf(fig, sizeof(fig), "%.6g ± %.3g (n=%zu)", st.mean, st.stddev, st.n);
			else
				snprintf(fig, sizeof(fig), "-");
		} else {
			unsigned k[3];
			vn_bisect_runs_count(c->runs, c->nruns, k);
			snprintf(fig, sizeof(fig), "%u/%u/%u", k[0], k[1], k[2]);
		}
		/* Why a commit was skipped is what the reader needs next: it goes after the subject. */
		bool skip = c->mark == VN_BISECT_SKIP || c->build_failed;
		vn_strbuf_printf(&s, "%5zu  %.12s  %-8s  %4zu  %-28s  %s%s%s%s%s\n", i, c->hash,
				 c->build_failed ? "skip" : vn_bisect_mark_name(c->mark), c->nruns, fig,
				 c->subject ? c->subject : "", skip && c->why ? " [" : "", skip && c->why ? c->why : "",
				 skip && c->why ? "]" : "",
				 strcmp(c->hash, res->first_bad) == 0 ? "   <- first bad" : "");
	}
	return vn_strbuf_steal(&s);
}

static const char *outcome_name(enum vn_bisect_outcome o)
{
	static const char *const names[] = {"found", "no-difference", "not-ancestor", "ambiguous"};
	return names[o];
}

/*
 * OUT/commits as a result group, a variant per tested commit in commit
 * order and the good endpoint the base, so that `vnuma compare OUT/commits`
 * and its report show every commit's runs against the good one.
 */
static int write_group(struct bisect *b, bool ended, struct vn_error *err)
{
	const struct vn_bisect_result *res = b->res;
	_cleanup_free_ char *dir = vn_xasprintf("%s/commits", b->o->outdir);
	_cleanup_free_ char *path = vn_xasprintf("%s/group.json", dir);
	_cleanup_(vn_result_group_clear) struct vn_result_group g = {.version = VN_RESULT_GROUP_VERSION,
								     .keys = VN_GROUP_VERSION | VN_GROUP_ACCEL |
									     VN_GROUP_BASE | VN_GROUP_COMPLETE,
								     .complete = ended};
	char name[16];
	int rc = vn_dir_beneath(b->out_fd, b->o->outdir, "commits", false, 0, NULL);

	/* No runs yet, or (planted since the start) not bisect's own directory. */
	if (rc < 0)
		return 0;
	close(rc);
	g.scenario = vn_xstrdup(b->o->scenario_name ? b->o->scenario_name : "");
	g.topology = b->topology ? vn_xstrdup(b->topology) : NULL;
	g.accel = b->accel ? vn_xstrdup(b->accel) : NULL;
	snprintf(name, sizeof(name), "%.12s", b->good);
	g.base = vn_xstrdup(name);
	for (size_t i = 0; i < res->ncommits; i++) {
		const struct vn_bisect_commit *c = &res->commits[i];
		if (!c->nruns)
			continue;
		snprintf(name, sizeof(name), "%.12s", c->hash);
		struct vn_result_group_variant *v = vn_result_group_add_variant(&g, name);
		v->kernel = vn_xstrdup(c->kernel ? c->kernel : "");
		v->keys = VN_GROUP_VARIANT_KERNEL;
		v->commit = vn_xstrdup(c->hash);
		v->mark = vn_xstrdup(vn_bisect_mark_name(c->mark));
		for (size_t r = 0; r < c->nruns; r++) {
			const char *rel = c->runs[r].dir ? c->runs[r].dir : "";
			/* Relative to the group: commits/HASH/run-N is HASH/run-N there. */
			vn_result_group_add_run(&g, name, (unsigned)r + 1,
						strncmp(rel, "commits/", 8) == 0 ? rel + 8 : rel, c->runs[r].exit);
		}
	}
	_cleanup_free_ char *text = vn_result_group_text(&g);
	if ((rc = vn_file_write_text(path, text, err)) < 0)
		return rc;
	struct vn_compare *cmp = NULL;
	struct vn_error e = {0};
	/* The comparison and its page are for reading: one that cannot be made is said, not fatal. */
	if (vn_compare_write_group(dir, &cmp, &e) < 0 || vn_compare_html_write(dir, NULL, cmp, &e) < 0)
		say(b, "%s: %s", dir, e.msg);
	vn_compare_free(cmp);
	vn_error_clear(&e);
	return 0;
}

static int write_results(struct bisect *b, bool ended, struct vn_error *err)
{
	const struct vn_bisect_result *res = b->res;
	const struct vn_bisect_policy *p = &b->o->policy;
	_cleanup_free_ char *table = vn_bisect_format_table(res, p);
	_cleanup_free_ char *txt = vn_xasprintf("%s\n%s\n", table, res->message ? res->message : "");
	_cleanup_free_ char *tpath = vn_xasprintf("%s/bisect.txt", b->o->outdir);
	_cleanup_free_ char *jpath = vn_xasprintf("%s/bisect.json", b->o->outdir);
	_cleanup_free_ char *hpath = vn_xasprintf("%s/report.html", b->o->outdir);
	struct json_object *o = json_object_new_object(), *cs = json_object_new_array();
	struct vn_html_bisect_commit *hc = vn_xcalloc(res->ncommits + 1, sizeof(*hc));
	double **vals = vn_xcalloc(res->ncommits + 1, sizeof(*vals));
	unsigned nh = 0;
	int rc;

	json_object_object_add(o, "outcome", json_object_new_string(outcome_name(res->outcome)));
	json_object_object_add(o, "message", json_object_new_string(res->message ? res->message : ""));
	json_object_object_add(o, "first_bad",
			       res->outcome == VN_BISECT_FOUND ? json_object_new_string(res->first_bad) : NULL);
	json_object_object_add(o, "good", json_object_new_string(b->good));
	json_object_object_add(o, "bad", json_object_new_string(b->bad));
	json_object_object_add(o, "metric", p->metric ? json_object_new_string(p->metric) : NULL);
	json_object_object_add(o, "steps", json_object_new_int((int)res->steps));
	for (size_t i = 0; i < res->ncommits; i++) {
		const struct vn_bisect_commit *c = &res->commits[i];
		if (c->mark == VN_BISECT_UNTESTED && !c->nruns && !c->build_failed)
			continue;
		struct json_object *j = json_object_new_object(), *runs = json_object_new_array();
		json_object_object_add(j, "commit", json_object_new_string(c->hash));
		json_object_object_add(j, "position", json_object_new_int((int)i));
		json_object_object_add(j, "subject", json_object_new_string(c->subject ? c->subject : ""));
		json_object_object_add(j, "mark", json_object_new_string(vn_bisect_mark_name(c->mark)));
		json_object_object_add(j, "why", json_object_new_string(c->why ? c->why : ""));
		vals[nh] = vn_xcalloc(c->nruns + 1, sizeof(double));
		unsigned nv = 0, k[3];
		struct vn_stats st;
		vn_bisect_runs_count(c->runs, c->nruns, k);
		vn_bisect_runs_stats(c->runs, c->nruns, &st);
		for (size_t r = 0; r < c->nruns; r++) {
			struct json_object *rj = json_object_new_object();
			json_object_object_add(rj, "exit", json_object_new_int(c->runs[r].exit));
			json_object_object_add(rj, "value", num_or_null(c->runs[r].value));
			json_object_object_add(rj, "dir", json_object_new_string(c->runs[r].dir ? c->runs[r].dir : ""));
			json_object_array_add(runs, rj);
			if (vn_bisect_run_counts(&c->runs[r]))
				vals[nh][nv++] = c->runs[r].value;
		}
		json_object_object_add(j, "runs", runs);
		json_object_array_add(cs, j);
		hc[nh] = (struct vn_html_bisect_commit){.position = (unsigned)i,
							.hash = c->hash,
							.subject = c->subject,
							.mark = vn_bisect_mark_name(c->mark),
							.why = c->why,
							.first_bad = strcmp(c->hash, res->first_bad) == 0,
							.passed = k[0],
							.failed = k[1],
							.broken = k[2],
							.mean = st.n ? st.mean : NAN,
							.sd = st.n > 1 ? st.stddev : NAN,
							.nvalues = nv,
							.values = vals[nh]};
		nh++;
	}
	json_object_object_add(o, "commits", cs);
	_cleanup_free_ char *title =
		vn_xasprintf("bisect %s: %.12s..%.12s", b->o->scenario ? b->o->scenario : "", b->good, b->bad);
	struct vn_html_bisect h = {.path = hpath,
				   .title = title,
				   .outcome = res->message,
				   .metric = p->metric,
				   .ncommits = nh,
				   .commits = hc};
	const char *js = json_object_to_json_string_ext(o, JSON_C_TO_STRING_PRETTY | JSON_C_TO_STRING_NOSLASHESCAPE);
	if ((rc = vn_file_write_atomic(tpath, txt, strlen(txt), 0644, err)) == 0 &&
	    (rc = vn_file_write_atomic(jpath, js, strlen(js), 0644, err)) == 0)
		rc = vn_report_html_write_bisect(&h, err);
	if (rc == 0)
		rc = write_group(b, ended, err);
	json_object_put(o);
	for (unsigned i = 0; i < nh; i++)
		free(vals[i]);
	free(vals);
	free(hc);
	return rc;
}

/* The revisions and the range: 1 when good is not an ancestor of bad (res says so). */
static int bisect_range(struct bisect *b, struct vn_error *err)
{
	const struct vn_bisect_opts *o = b->o;
	struct vn_bisect_result *res = b->res;
	int rc;

	if ((rc = vn_bisect_git_resolve(o->repo, o->good, b->good, err)) < 0 ||
	    (rc = vn_bisect_git_resolve(o->repo, o->bad, b->bad, err)) < 0)
		return rc;
	snprintf(b->cur_bad, sizeof(b->cur_bad), "%s", b->bad);
	if ((rc = vn_bisect_git_is_ancestor(o->repo, b->good, b->bad, err)) < 0)
		return rc;
	if (rc == 0 || strcmp(b->good, b->bad) == 0) {
		res->outcome = VN_BISECT_NOT_ANCESTOR;
		res->message = vn_xasprintf("good %.12s (%s) is not an ancestor of bad %.12s (%s)", b->good, o->good,
					    b->bad, o->bad);
		return 1;
	}
	return vn_bisect_git_range(o->repo, b->good, b->bad, &res->commits, &res->ncommits, err);
}

int vn_bisect(const struct vn_bisect_opts *o, const struct vn_bisect_ops *ops, struct vn_bisect_result *res,
	      struct vn_error *err)
{
	struct bisect b = {.o = o, .ops = ops, .res = res, .out_fd = -1, .log_fd = -1, .t0 = vn_now_s()};
	int rc;

	*res = (struct vn_bisect_result){0};
	if ((rc = bisect_range(&b, err)) != 0)
		return rc > 0 ? 0 : rc;
	b.log_path = vn_xasprintf("%s/bisect.log", o->outdir);
	if ((rc = out_open(&b, err)) == 0 && (rc = start_fill(&b, err)) == 0 && (rc = log_open(&b, err)) == 0 &&
	    (rc = bisect_loop(&b, err)) == 0) {
		struct json_object *r = record("end", NULL);
		json_object_object_add(r, "outcome", json_object_new_string(outcome_name(res->outcome)));
		if (res->outcome == VN_BISECT_FOUND)
			json_object_object_add(r, "first_bad", json_object_new_string(res->first_bad));
		rc = log_put(&b, r, err);
	}
	if (!b.log_ready) {
		/* Refused before its log was open (another bisection's OUT, a planted symlink): OUT is not ours to write. */
		vn_bisect_result_clear(res);
	} else {
		/* What is known so far is worth a table even when the bisection stopped. */
		if (!res->message && rc < 0)
			res->message = vn_xasprintf("stopped after %u steps: %s", res->steps, err->msg);
		struct vn_error e2 = {0};
		if (write_results(&b, rc == 0, rc < 0 ? &e2 : err) < 0 && rc == 0)
			rc = err->code ? err->code : -EIO;
		vn_error_clear(&e2);
	}
	if (b.log_fd >= 0)
		close(b.log_fd);
	if (b.out_fd >= 0)
		close(b.out_fd);
	vn_free_all(b.log_path, b.topology, b.accel);
	return rc;
}
