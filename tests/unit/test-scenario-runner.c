#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <string.h>

#include "scenario/runner-priv.h"
#include "util/cleanup.h"
#include "util/strbuf.h"

/* A step's process gets every argument the scenario gave it (they were cut at 126 words). */
static void test_step_argv_keeps_every_arg(void **state)
{
	_cleanup_strbuf_ struct vn_strbuf b = VN_STRBUF_INIT;
	_cleanup_scenario_ struct vn_scenario *s = NULL;
	struct vn_error err = {0};

	vn_strbuf_printf(&b, "{\"name\": \"args\", \"topology\": \"2node\", \"steps\": [{\"name\": \"a\", "
			     "\"workload\": \"stream\", \"size\": \"64M\", \"duration_s\": 5, \"threads\": 2, "
			     "\"placement\": {\"policy\": \"interleave\", \"nodes\": [0, 1]}, \"args\": [");
	for (unsigned i = 0; i < 300; i++)
		vn_strbuf_printf(&b, "%s\"--x%u\"", i ? ", " : "", i);
	vn_strbuf_printf(&b, "]}]}");
	if (vn_scenario_parse(b.s, "args.json", &s, &err) < 0)
		fail_msg("%s", err.msg);

	struct run r = {.s = s};
	_cleanup_strv_ char **argv = vn_run_step_argv(&r, &s->steps[0], 3);
	size_t n = 0;
	while (argv[n])
		n++;
	/* sh -c SCRIPT vnuma-step, numactl --interleave=0,1 --, the workload and its three options. */
	assert_int_equal(n, 11 + 300);
	assert_non_null(strstr(argv[2], "/a.3.pid"));
	assert_string_equal(argv[5], "--interleave=0,1");
	assert_string_equal(argv[7], "/usr/lib/vnuma/vnuma-wl-stream");
	assert_string_equal(argv[11], "--x0");
	assert_string_equal(argv[n - 1], "--x299");
}

/* Virtual time's lead over the run: the start's lead plus the samples' lowest drop; out of lead at or below 0. */
static void test_icount_lead(void **state)
{
	/* Host and guest seconds: the guest fell 7 s behind its start's lead (busy), then jumped ahead (idle). */
#define L(H, T)                                                                              \
	"{\"host_t\":" #H ",\"t\":" #T ",\"seq\":0,\"uptime\":1,\"vmstat\":{},\"nodes\":[]," \
	"\"procs\":[],\"running_per_node\":{},\"cost\":{\"cpu_s\":0,\"wall_s\":0}}\n"
	const char *lines = L(10, 1) L(20, 4) L(21, 104);
#undef L
	struct vn_samples s;
	struct vn_error err = {0};
	(void)state;

	if (vn_samples_parse(lines, NULL, &s, &err) < 0)
		fail_msg("%s", err.msg);
	struct vn_result_run rep = {.icount = "shift=auto,sleep=off", .icount_lead_s = 1800};
	assert_false(vn_run_icount_lead(&rep, &s));
	assert_float_equal(rep.icount_lead_min_s, 1793, 1e-9);
	rep.icount_lead_s = 7;
	assert_true(vn_run_icount_lead(&rep, &s));
	assert_float_equal(rep.icount_lead_min_s, 0, 1e-9);
	rep.icount_lead_s = 6.5;
	assert_true(vn_run_icount_lead(&rep, &s));
	assert_float_equal(rep.icount_lead_min_s, -0.5, 1e-9);

	/* A fixed shift has no lead to lose, and real time no shift: nothing is recorded. */
	struct vn_result_run fixed = {.icount = "shift=0,sleep=off"}, real = {.icount_lead_s = 5};
	assert_false(vn_run_icount_lead(&fixed, &s));
	assert_false(vn_run_icount_lead(&real, &s));
	assert_float_equal(fixed.icount_lead_min_s, 0, 0);
	assert_float_equal(real.icount_lead_min_s, 0, 0);
	vn_samples_free(&s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_step_argv_keeps_every_arg),
		cmocka_unit_test(test_icount_lead),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
