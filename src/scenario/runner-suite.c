/*
 * A "suite" step (docs/suites.md): the suite's program in the guest, one
 * test at a time when the step names its tests (an LTP list: one binary an
 * exec), each killed at its timeout so that the next one runs; what it
 * printed read by src/suite/'s parsers into per-test verdicts. A failed
 * test is the kernel's (exit 1, through the step's verdict); a test that
 * broke, could not start or timed out leaves the run unjudged (exit 3); a
 * program that is not there is the user's to install (exit 2).
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "report/result-suite.h"
#include "scenario/runner-priv.h"
#include "suite/known.h"
#include "util/alloc.h"
#include "util/cleanup.h"
#include "util/clock.h"
#include "util/file.h"

/* What one run of the program may print that is kept and parsed; past it the output is cut, and the run says so. */
#define SUITE_OUT_MAX (8u << 20)
/* A killed test's group has this long to be reported ended. */
#define SUITE_KILL_WAIT_S 10
/* LTP's test device: its default is 300 MiB (lib/tst_device.c, DEV_SIZE_MB); room above it for dev_min_size. */
#define SUITE_LTP_DEV_SIZE "512M"

struct suite_out {
	struct vn_strbuf buf;
	bool cut;
};

static void suite_data(struct run *r, struct exec *e, void *data, const char *s, size_t n)
{
	struct suite_out *o = data;
	size_t room = o->buf.len < SUITE_OUT_MAX ? SUITE_OUT_MAX - o->buf.len : 0;

	(void)r, (void)e;
	vn_strbuf_append(&o->buf, s, n < room ? n : room);
	o->cut |= n > room;
}

/* Runs argv in the guest to its end (bounded by the run's deadline); its stdout in *out. Not our text: no shell. */
static int guest_argv(struct run *r, const char *const *argv, char **out, struct vn_error *err)
{
	struct exec *e;
	int rc;

	if ((rc = vn_run_exec_start(r, EX_AUX, argv, &e, err)) < 0)
		return rc;
	for (double give_up = vn_now_s() + SUITE_KILL_WAIT_S; !e->done;) {
		if ((rc = vn_run_pump(r, 100, err)) < 0)
			return rc;
		if (r->stop && vn_now_s() > give_up)
			return vn_infra_error(err, -ETIMEDOUT, "%s: a guest command did not end after it was killed",
					      vn_agent_guest(r->a));
		if (!r->stop)
			give_up = vn_now_s() + SUITE_KILL_WAIT_S;
	}
	if (e->status != 0)
		return vn_infra_error(err, -EIO, "%s: a guest command failed (exit %d)%s%s", vn_agent_guest(r->a),
				      e->status, e->error ? ": " : "", e->error ? e->error : "");
	*out = vn_strbuf_steal(&e->buf);
	return 0;
}

/* Every program the step would run is in the guest, or the step is refused with what to install (exit 2). */
static int check_programs(struct run *r, const struct vn_scn_step *st, struct vn_error *err)
{
	const struct vn_scn_suite *su = st->suite;
	_cleanup_strv_ char **argv = NULL;
	_cleanup_free_ char *missing = NULL;
	size_t n = 0;
	int rc;

	/* Names go as arguments, never into the script: a program's path is the scenario's text. */
	vn_strv_push(&argv, &n, "/bin/sh");
	vn_strv_push(&argv, &n, "-c");
	vn_strv_push(&argv, &n, "for p; do command -v \"$p\" >/dev/null 2>&1 || echo \"$p\"; done; true");
	vn_strv_push(&argv, &n, "vnuma-suite-check");
	if (su->command) {
		vn_strv_push(&argv, &n, su->command[0]);
	} else {
		for (char **t = su->tests; *t; t++) {
			_cleanup_free_ char *p = vn_xasprintf("%s/testcases/bin/%s", su->ltp, *t);
			vn_strv_push(&argv, &n, p);
		}
	}
	if ((rc = guest_argv(r, (const char *const *)argv, &missing, err)) < 0)
		return vn_error_prefix(err, "step %s: looking for the suite's programs", st->name);
	if (!missing || !*missing)
		return 0;
	missing[strcspn(missing, "\n")] = '\0';
	if (!su->command)
		return vn_input_error(err,
				      "step %s: %s is not in the guest: LTP is not installed at %s, or has no such "
				      "test; build LTP and put its install directory there (docs/suites.md, \"LTP\")",
				      st->name, missing, su->ltp);
	return vn_input_error(err,
			      "step %s: %s is not in the guest: install the suite there (kselftest: "
			      "docs/suites.md, \"kselftest\") or correct \"command\"",
			      st->name, missing);
}

/*
 * A block device for LTP's tests that want one (.needs_device, .all_filesystems:
 * set_mempolicy03/04), as LTP_DEV. Without it LTP fallocates a 300 MiB loop
 * file in /tmp, a tmpfs: the guest's RAM, more than half a 2node guest's
 * (ENOSPC, TBROK "Failed to acquire device"), and on bigger shapes whole
 * nodes of it, which the NUMA tests then find full. A zram device holds only
 * what is written to it. A guest without zram (no modules) gets none: LTP
 * then falls back to its loop file, and says what broke. *dev is NULL then.
 */
static int ltp_device_add(struct run *r, const struct vn_scn_step *st, char **dev, struct vn_error *err)
{
	static const char *const argv[] = {
		"/bin/sh",
		"-c",
		"[ -e /sys/class/zram-control ] || modprobe zram num_devices=0 >/dev/null 2>&1; "
		"n=$(cat /sys/class/zram-control/hot_add 2>/dev/null) || exit 0; "
		"echo \"$1\" >/sys/block/zram$n/disksize 2>/dev/null || { echo $n >/sys/class/zram-control/hot_remove; "
		"exit 0; }; "
		"[ -b /dev/zram$n ] && echo /dev/zram$n; true",
		"vnuma-ltp-dev",
		SUITE_LTP_DEV_SIZE,
		NULL};
	_cleanup_free_ char *out = NULL;
	int rc;

	*dev = NULL;
	if ((rc = guest_argv(r, argv, &out, err)) < 0)
		return vn_error_prefix(err, "step %s: making LTP's test device", st->name);
	/* The guest's answer goes back into the guest only, but as nothing else
	 * than a zram device's name: /dev/zram and up to 3 digits. */
	if (out && strncmp(out, "/dev/zram", 9) == 0) {
		size_t d = strspn(out + 9, "0123456789");
		if (d >= 1 && d <= 3 && (out[9 + d] == '\n' || out[9 + d] == '\0')) {
			out[9 + d] = '\0';
			*dev = steal_pointer(&out);
		}
	}
	return 0;
}

/*
 * Gives the device's memory back. Best effort: a test killed at its timeout
 * may have left it mounted, and the guest goes with the run anyway.
 */
static int ltp_device_remove(struct run *r, const char *dev, struct vn_error *err)
{
	const char *const argv[] = {"/bin/sh",
				    "-c",
				    "n=${1#/dev/zram}; echo 1 >/sys/block/zram$n/reset 2>/dev/null && "
				    "echo $n >/sys/class/zram-control/hot_remove 2>/dev/null; true",
				    "vnuma-ltp-dev",
				    dev,
				    NULL};
	_cleanup_free_ char *out = NULL;

	return guest_argv(r, argv, &out, err);
}

/* The program for one test: the command and the test's name, or LTP's binary; NULL-terminated. */
static char **test_command(const struct vn_scn_suite *su, const char *test)
{
	char **v = NULL;
	size_t n = 0;

	if (!su->command) {
		_cleanup_free_ char *p = vn_xasprintf("%s/testcases/bin/%s", su->ltp, test);
		vn_strv_push(&v, &n, p);
		return v;
	}
	for (char **a = su->command; *a; a++)
		vn_strv_push(&v, &n, *a);
	if (test)
		vn_strv_push(&v, &n, test);
	return v;
}

/* The step's wrapper (pidfile, cgroup, placement), its stderr into its stdout: LTP reports on stderr. */
static char **suite_argv(const struct run *r, const struct vn_scn_step *st, const char *test, unsigned idx,
			 const char *dev)
{
	const struct vn_scn_suite *su = st->suite;
	_cleanup_strv_ char **cmd = test_command(su, test);
	struct vn_scn_step one = *st;
	one.argv = cmd;
	_cleanup_strv_ char **inner = vn_run_step_argv(r, &one, idx);
	char **v = NULL;
	size_t n = 0;

	vn_strv_push(&v, &n, "/bin/sh");
	vn_strv_push(&v, &n, "-c");
	if (su->ltp) {
		/* LTP's tests find their helpers and data by LTPROOT and PATH, their block device by LTP_DEV. */
		vn_strv_push(&v, &n,
			     "LTPROOT=$1; PATH=$1/testcases/bin:$PATH; export LTPROOT PATH; "
			     "[ -z \"$2\" ] || export LTP_DEV=\"$2\"; shift 2; exec \"$@\" 2>&1");
		vn_strv_push(&v, &n, "vnuma-suite");
		vn_strv_push(&v, &n, su->ltp);
		vn_strv_push(&v, &n, dev ? dev : "");
	} else {
		vn_strv_push(&v, &n, "exec \"$@\" 2>&1");
		vn_strv_push(&v, &n, "vnuma-suite");
	}
	for (char **a = inner; *a; a++)
		vn_strv_push(&v, &n, *a);
	return v;
}

/* Pumps until e ended, its timeout passed (then it is killed: *timed_out), or the run stops. */
static int wait_test(struct run *r, struct exec *e, double timeout_s, bool *timed_out, struct vn_error *err)
{
	double until = vn_now_s() + timeout_s;
	int rc;

	*timed_out = false;
	while (!e->done && !r->stop) {
		if (vn_now_s() > until) {
			*timed_out = true;
			vn_run_signal(r, e, SIGKILL);
			break;
		}
		if ((rc = vn_run_pump(r, 100, err)) < 0)
			return rc;
	}
	for (double give_up = vn_now_s() + SUITE_KILL_WAIT_S; !e->done && vn_now_s() < give_up;)
		if ((rc = vn_run_pump(r, 100, err)) < 0)
			return rc;
	if (!e->done)
		return vn_infra_error(err, -ETIMEDOUT, "%s: a test did not end after it was killed",
				      vn_agent_guest(r->a));
	return 0;
}

static void parse_output(const struct vn_scn_suite *su, const struct suite_out *o, const char *test, const char *name,
			 const struct vn_suite_exit *ex, struct vn_suite_run *run)
{
	const char *text = o->buf.s ? o->buf.s : "";
	size_t first = run->n;

	if (o->cut && run->nnotes < VN_SUITE_NOTES_MAX)
		run->notes[run->nnotes++] = vn_xasprintf("%s: its output was cut at %u MiB", name, SUITE_OUT_MAX >> 20);
	if (su->format == VN_SCN_SUITE_KTAP)
		vn_suite_ktap_parse(text, o->buf.len, name, ex, run);
	else if (su->format == VN_SCN_SUITE_LTP)
		vn_suite_ltp_parse(text, o->buf.len, name, ex, run);
	else
		vn_suite_exit_parse(name, ex, run);
	/* Each test of a list is a run of its own: its subtests are named under it, as kselftest's runner does. */
	for (size_t i = first; test && i < run->n; i++) {
		if (strcmp(run->tests[i].name, name) == 0)
			continue;
		char *full = vn_xasprintf("%.*s:%s", VN_SUITE_NAME_MAX, name, run->tests[i].name);
		full[strnlen(full, VN_SUITE_NAME_MAX)] = '\0';
		free(run->tests[i].name);
		run->tests[i].name = full;
	}
}

/* One run of the program (a test, or the whole command), its output in steps/, its verdicts into run. */
static int run_one(struct run *r, unsigned si, const char *test, unsigned idx, const char *dev,
		   struct vn_suite_run *run, struct vn_error *err)
{
	const struct vn_scn_step *st = &r->s->steps[si];
	_cleanup_strv_ char **argv = suite_argv(r, st, test, idx, dev);
	_cleanup_free_ char *file = NULL;
	struct suite_out o = {VN_STRBUF_INIT, false};
	struct exec *e;
	bool timed_out;
	int rc;

	if (r->progress)
		r->progress(r->progress_data, "test", test ? test : st->name);
	if ((rc = vn_run_exec_start(r, EX_SUITE, (const char *const *)argv, &e, err)) < 0)
		return rc;
	e->step = si;
	e->index = idx;
	e->on_out = suite_data;
	e->on_out_data = &o;
	rc = wait_test(r, e, st->suite->timeout_s, &timed_out, err);
	/* The buffer is ours, and the exec outlives this call: it must not write into it any more. */
	e->on_out = NULL;
	if (rc == 0 && !r->stop) {
		/* The agent says 128+N for a signal; -1: it could not start the wrapper. */
		struct vn_suite_exit ex = {VN_SUITE_EXITED, e->status};
		if (timed_out)
			ex = (struct vn_suite_exit){VN_SUITE_TIMED_OUT, 0};
		else if (e->status < 0)
			ex = (struct vn_suite_exit){VN_SUITE_NOT_STARTED, 127};
		else if (e->status > 128)
			ex = (struct vn_suite_exit){VN_SUITE_SIGNALED, e->status - 128};
		parse_output(st->suite, &o, test, test ? test : st->name, &ex, run);
		file = vn_xasprintf("%s/steps/%s%s%s.out", r->dir, st->name, test ? "." : "", test ? test : "");
		rc = vn_file_write_atomic(file, o.buf.s ? o.buf.s : "", o.buf.len, 0644, err);
	}
	vn_strbuf_free(&o.buf);
	return rc;
}

int vn_run_suite_step(struct run *r, unsigned si, struct vn_error *err)
{
	const struct vn_scn_step *st = &r->s->steps[si];
	const struct vn_scn_suite *su = st->suite;
	_cleanup_known_ struct vn_known known = {0};
	_cleanup_free_ char *dev = NULL;
	struct vn_suite_run *run;
	int rc;

	if (!r->suites)
		r->suites = vn_xcalloc(r->s->nsteps, sizeof(*r->suites));
	run = &r->suites[si];
	if (r->progress)
		r->progress(r->progress_data, "step", st->name);
	/* The list was read when the scenario was: read again, it may have changed since (still exit 2 if bad). */
	if ((su->known && (rc = vn_known_load(su->known, &known, err)) < 0) || (rc = check_programs(r, st, err)) < 0)
		return rc;
	if (su->ltp && (rc = ltp_device_add(r, st, &dev, err)) < 0)
		return rc;
	for (unsigned i = 0; i < (su->tests ? su->ntests : 1) && !r->stop; i++)
		if ((rc = run_one(r, si, su->tests ? su->tests[i] : NULL, i, dev, run, err)) < 0)
			return rc;
	if (dev && !r->stop && (rc = ltp_device_remove(r, dev, err)) < 0)
		return rc;
	vn_known_apply(&known, r->release, run);
	return 0;
}

/*
 * The first test that could not be judged, as the run's error: none of the
 * kernel's verdicts stands on it. A timeout first: a killed test's cut
 * output is also an error of its plan, and the timeout says why.
 */
int vn_run_suite_check(const struct run *r, struct vn_error *err)
{
	static const enum vn_suite_verdict order[] = {VN_SUITE_TIMEOUT, VN_SUITE_ERROR};

	for (size_t k = 0; k < VN_ARRAY_SIZE(order); k++)
		for (unsigned si = 0; r->suites && si < r->s->nsteps; si++)
			for (size_t i = 0; i < r->suites[si].n; i++) {
				const struct vn_suite_test *t = &r->suites[si].tests[i];
				if (t->verdict != order[k])
					continue;
				return vn_infra_error(
					err, order[k] == VN_SUITE_TIMEOUT ? -ETIMEDOUT : -EIO,
					"step %s: test %s %s%s%s (see %s/steps/)", r->s->steps[si].name, t->name,
					order[k] == VN_SUITE_TIMEOUT ? "timed out" : "could not be judged",
					t->reason ? ": " : "", t->reason ? t->reason : "", r->dir);
			}
	return 0;
}

/* One suite step's verdict: its failures (xfails and xpasses are not), the tests' counts, its notes. */
static void step_verdict(const struct vn_scn_step *st, const struct vn_suite_run *run, struct vn_result_run *rep)
{
	unsigned count[VN_TEST_TIMEOUT + 1] = {0};
	_cleanup_strbuf_ struct vn_strbuf obs = VN_STRBUF_INIT, detail = VN_STRBUF_INIT;

	for (size_t i = 0; i < run->n; i++)
		count[run->tests[i].verdict]++;
	vn_strbuf_printf(&obs, "%zu tests: %u passed, %u failed, %u skipped, %u known failures, %u unexpected passes",
			 run->n, count[VN_SUITE_PASS], count[VN_SUITE_FAIL], count[VN_SUITE_SKIP],
			 count[VN_SUITE_XFAIL], count[VN_SUITE_XPASS]);
	for (size_t i = 0; i < run->n; i++)
		if (run->tests[i].verdict == VN_SUITE_FAIL || run->tests[i].verdict == VN_SUITE_XPASS)
			vn_strbuf_printf(&detail, "%s: %s\n", vn_suite_verdict_name(run->tests[i].verdict),
					 run->tests[i].name);
	for (size_t i = 0; i < run->nnotes; i++)
		vn_strbuf_printf(&detail, "note: %s\n", run->notes[i]);
	_cleanup_free_ char *name = vn_xasprintf("suite %s", st->name);
	vn_result_add(rep, name, count[VN_SUITE_FAIL] == 0, obs.s, "no test fails (known failures aside)", detail.s);
}

void vn_run_suite_report(struct run *r, struct vn_result_run *rep)
{
	for (unsigned si = 0; r->suites && si < r->s->nsteps; si++) {
		const struct vn_scn_step *st = &r->s->steps[si];
		struct vn_suite_run *run = &r->suites[si];
		if (!st->suite)
			continue;
		for (size_t i = 0; i < run->n; i++) {
			const struct vn_suite_test *t = &run->tests[i];
			vn_result_add_test(
				rep, st->name, t->name,
				(enum vn_test_verdict)vn_test_verdict_parse(vn_suite_verdict_name(t->verdict)),
				t->reason, t->detail, t->known);
		}
		/* A verdict only on a run that was judged whole, as the assertions' are. */
		if (rep->complete && run->n)
			step_verdict(st, run, rep);
		vn_suite_run_free(run);
	}
	free(r->suites);
	r->suites = NULL;
}
