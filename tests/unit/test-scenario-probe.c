/*
 * The run's probe list (scenario/probe.h) with probes of the test's own:
 * the table's order, ends and frees last first, a start that fails stops
 * the list with its error, every started probe is ended and freed.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <string.h>

#include "scenario/probe.h"
#include "scenario/runner-priv.h"

static char calls[512];

struct st {
	int x;
};

static void say(const char *what, const char *who)
{
	size_t n = strlen(calls);
	snprintf(calls + n, sizeof(calls) - n, "%s%s:%s", n ? " " : "", what, who);
}

static int start_ok(struct run *r, void *state, struct vn_error *err)
{
	(void)r, (void)err;
	((struct st *)state)->x = 1;
	say("start", "ok");
	return 0;
}

static int start_fails(struct run *r, void *state, struct vn_error *err)
{
	(void)r, (void)state;
	say("start", "bad");
	return vn_infra_error(err, -ENODEV, "bad: no such device");
}

static int end_ok(struct run *r, void *state, struct vn_error *err)
{
	(void)r, (void)err;
	assert_int_equal(((struct st *)state)->x, 1);
	say("end", "ok");
	return 0;
}

static int end_fails(struct run *r, void *state, struct vn_error *err)
{
	(void)r, (void)state;
	say("end", "endbad");
	return vn_infra_error(err, -EIO, "endbad: capture cut");
}

static void free_ok(struct run *r, void *state)
{
	(void)r, (void)state;
	say("free", "ok");
}

static void free_bad(struct run *r, void *state)
{
	(void)r, (void)state;
	say("free", "bad");
}

static void free_endbad(struct run *r, void *state)
{
	(void)r, (void)state;
	say("free", "endbad");
}

static bool never(const struct run *r)
{
	(void)r;
	return false;
}

static void sample_a(struct run *r, void *state, struct vn_strbuf *head)
{
	(void)r, (void)state;
	vn_strbuf_printf(head, "\"a\":1,");
}

static void sample_b(struct run *r, void *state, struct vn_strbuf *head)
{
	(void)r, (void)state;
	vn_strbuf_printf(head, "\"b\":2,");
}

static const struct vn_probe_ops ok = {
	.name = "ok", .size = sizeof(struct st), .start = start_ok, .end = end_ok, .free = free_ok, .sample = sample_a};
static const struct vn_probe_ops bad = {.name = "bad", .start = start_fails, .free = free_bad};
static const struct vn_probe_ops endbad = {.name = "endbad", .end = end_fails, .free = free_endbad, .sample = sample_b};
static const struct vn_probe_ops unwanted = {.name = "unwanted", .wanted = never, .start = start_fails};

/* Started in the table's order; a probe the run does not want is skipped; ends and frees last first. */
static void test_order(void **state)
{
	const struct vn_probe_ops *const table[] = {&ok, &unwanted, &endbad, NULL};
	struct vn_probes p = {0};
	struct run r = {0};
	struct vn_error err = {0};
	struct vn_strbuf head = VN_STRBUF_INIT;

	(void)state;
	calls[0] = '\0';
	assert_int_equal(vn_probes_start(&p, table, &r, &err), 0);
	assert_int_equal(p.n, 2);
	vn_probes_sample(&p, &r, &head);
	assert_string_equal(head.s, "\"a\":1,\"b\":2,");
	/* endbad fails first (ends go last first), and ok's end still runs; the run gets endbad's error. */
	assert_int_equal(vn_probes_end(&p, &r, &err), -EIO);
	assert_string_equal(err.msg, "endbad: capture cut");
	/* Ended once: a second call does not end them again. */
	vn_error_clear(&err);
	assert_int_equal(vn_probes_end(&p, &r, &err), 0);
	vn_probes_free(&p, &r);
	assert_string_equal(calls, "start:ok end:endbad end:ok free:endbad free:ok");
	assert_null(p.v);
	vn_strbuf_free(&head);
	vn_error_clear(&err);
}

/* A start that fails stops the list with its error: the ones after never start; it and those before are freed. */
static void test_start_fails(void **state)
{
	const struct vn_probe_ops *const table[] = {&ok, &bad, &endbad, NULL};
	struct vn_probes p = {0};
	struct run r = {0};
	struct vn_error err = {0};

	(void)state;
	calls[0] = '\0';
	assert_int_equal(vn_probes_start(&p, table, &r, &err), -ENODEV);
	assert_string_equal(err.msg, "bad: no such device");
	assert_int_equal(err.kind, VN_ERR_INFRA);
	vn_probes_free(&p, &r);
	assert_string_equal(calls, "start:ok start:bad free:bad free:ok");
	vn_error_clear(&err);
}

/* The built-in table: the tracer and locality counting, each wanted only when the run asks for it. */
static void test_builtin_wanted(void **state)
{
	struct vn_scenario s = {0};
	char *tp[] = {"sched:sched_move_numa", NULL};
	struct run r = {.s = &s};
	unsigned n = 0;

	(void)state;
	for (const struct vn_probe_ops *const *o = vn_probes_builtin; *o; o++, n++) {
		bool is_trace = *o == &vn_probe_trace, is_loc = *o == &vn_probe_locality;
		assert_true(is_trace || is_loc);
		assert_false((*o)->wanted(&r));
		s.tracepoints = tp;
		r.locality = true;
		assert_true((*o)->wanted(&r));
		s.tracepoints = NULL;
		r.locality = false;
	}
	assert_int_equal(n, 2);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_order),
		cmocka_unit_test(test_start_fails),
		cmocka_unit_test(test_builtin_wanted),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
