/*
 * The spread scheduler's choice of the next run for a host: variants are
 * balanced over hosts (strict queue order would pin A to one host and B to
 * the other), the queue's order is kept otherwise, and the chosen run moves
 * to the head that the caller takes.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "scenario/matrix-priv.h"
#include "util/alloc.h"
#include "util/cleanup.h"
#include "util/dir.h"
#include "util/file.h"

#define H1 "qemu+ssh://a/system"
#define H2 "qemu:///embed"

/* A B A B ...: n cells, variants alternating, repeats counting up. */
static void cells_make(struct group *g, struct cell *c, unsigned n)
{
	memset(g, 0, sizeof(*g));
	memset(c, 0, n * sizeof(*c));
	for (unsigned k = 0; k < n; k++)
		c[k] = (struct cell){.variant = (char *)(k % 2 ? "B" : "A"), .repeat = k / 2 + 1, .exit = -1};
	g->cells = c;
	g->ncells = n;
}

static void test_balance(void **state)
{
	struct group g;
	struct cell c[4];
	unsigned q[4] = {0, 1, 2, 3};

	cells_make(&g, c, 4);
	/* Nothing ran yet: the queue's order. */
	assert_int_equal(vn_spread_take(&g, q, 0, 4, H1), 0);
	c[0].host = (char *)H1;
	assert_int_equal(vn_spread_take(&g, q, 1, 4, H2), 1);
	c[1].host = (char *)H2;
	/* H1 ran an A: it takes the next B (cell 3) before A's second repeat. */
	assert_int_equal(vn_spread_take(&g, q, 2, 4, H1), 3);
	assert_int_equal(q[2], 3);
	assert_int_equal(q[3], 2); /* the one passed over keeps its place behind */
	c[3].host = (char *)H1;
	/* H2 ran a B: the A left. */
	assert_int_equal(vn_spread_take(&g, q, 3, 4, H2), 2);
	c[2].host = (char *)H2;
	/* Each variant on both hosts. */
	assert_string_equal(c[0].host, H1);
	assert_string_equal(c[2].host, H2);
	assert_string_equal(c[1].host, H2);
	assert_string_equal(c[3].host, H1);
}

static void test_retry_first(void **state)
{
	struct group g;
	struct cell c[4];
	/* A retry put back at the head (cell 0 after a dead host): ties keep it first. */
	unsigned q[4] = {2, 3, 0, 1};

	cells_make(&g, c, 4);
	c[0].host = NULL; /* its failed host's claim was dropped */
	c[1].host = (char *)H2;
	assert_int_equal(vn_spread_take(&g, q, 2, 5, H2), 0);
}

static void test_one_variant(void **state)
{
	struct group g;
	struct cell c[3];
	unsigned q[3] = {0, 1, 2};

	cells_make(&g, c, 3);
	for (unsigned k = 0; k < 3; k++)
		c[k].variant = (char *)"only";
	c[0].host = (char *)H1;
	/* One variant: order only. */
	assert_int_equal(vn_spread_take(&g, q, 1, 3, H1), 1);
}

/*
 * A failed host's run goes to attempts/ in the group, and never through an
 * attempts that someone planted in a reused group as a symlink elsewhere.
 */
static void test_move_aside(void **state)
{
	(void)state;
	char top[] = "/tmp/vn-test-spread-XXXXXX";
	struct group g;
	struct cell c[1];

	assert_non_null(mkdtemp(top));
	_cleanup_free_ char *gdir = vn_xasprintf("%s/group", top), *elsewhere = vn_xasprintf("%s/elsewhere", top);
	_cleanup_free_ char *run = vn_xasprintf("%s/group/A-1", top),
			    *f = vn_xasprintf("%s/group/A-1/result.json", top);
	_cleanup_free_ char *att = vn_xasprintf("%s/group/attempts", top);
	cells_make(&g, c, 1);
	g.dir = gdir;
	c[0].dir = (char *)"A-1";
	assert_int_equal(vn_mkdir_p(run, 0755, NULL), 0);
	assert_int_equal(vn_mkdir_p(elsewhere, 0755, NULL), 0);
	assert_int_equal(vn_file_write(f, "{}"), 0);

	assert_int_equal(symlink(elsewhere, att), 0);
	assert_null(vn_spread_move_aside(&g, &c[0]));
	assert_true(vn_is_file(f));
	_cleanup_free_ char *planted = vn_xasprintf("%s/A-1-1", elsewhere);
	assert_int_equal(access(planted, F_OK), -1);

	assert_int_equal(unlink(att), 0);
	_cleanup_free_ char *moved = vn_spread_move_aside(&g, &c[0]);
	assert_non_null(moved);
	assert_string_equal(moved, "attempts/A-1-1");
	_cleanup_free_ char *now = vn_xasprintf("%s/group/attempts/A-1-1/result.json", top);
	assert_true(vn_is_file(now));
	assert_false(vn_is_file(f));
	assert_int_equal(vn_rm_rf(top), 0);
}

/* How a cell ended crosses the fork through one writer and one reader: every member round-trips, bad input is refused by path. */
static void test_cell_end_codec(void **state)
{
	(void)state;
	struct vn_cell_end e = {.exit = 2,
				.error = (char *)"bad \"input\"",
				.topology = (char *)"2 nodes",
				.host = (char *)H1,
				.started = (char *)"2024-01-02T03:04:05Z",
				.accel = (char *)"kvm"},
			   back = {0}, none = {0};
	struct vn_error err = {0};

	_cleanup_free_ char *text = vn_cell_end_text(&e);
	assert_string_equal(text, "{\"exit\":2,\"error\":\"bad \\\"input\\\"\",\"topology\":\"2 "
				  "nodes\",\"host\":\"qemu+ssh:\\/\\/a\\/system\","
				  "\"started\":\"2024-01-02T03:04:05Z\",\"accel\":\"kvm\"}");
	assert_int_equal(vn_cell_end_parse(text, "answer", &back, &err), 0);
	assert_int_equal(back.exit, 2);
	assert_string_equal(back.error, e.error);
	assert_string_equal(back.host, H1);
	_cleanup_free_ char *again = vn_cell_end_text(&back);
	assert_string_equal(again, text);
	vn_cell_end_clear(&back);
	/* No strings: nulls, read back as none. */
	_cleanup_free_ char *empty = vn_cell_end_text(&none);
	assert_int_equal(vn_cell_end_parse(empty, "answer", &back, &err), 0);
	assert_null(back.error);
	assert_null(back.accel);
	vn_cell_end_clear(&back);

	const struct {
		const char *text, *want;
	} bad[] = {
		{"{\"exit\":7}", "answer: $.exit: expected an exit code 0 to 3, got 7"},
		{"{\"exit\":\"0\"}", "answer: $.exit: "},
		{"{\"error\":null}", "answer: $: missing required key \"exit\""},
		{"{\"exit\":0,\"host\":5}", "answer: $.host: "},
		{"{\"exit\":0,\"hots\":\"a\"}", "answer: $: "},
		{"[0]", "answer: $: "},
		{"{\"exit\":0", "answer:"},
	};
	for (size_t i = 0; i < VN_ARRAY_SIZE(bad); i++) {
		assert_true(vn_cell_end_parse(bad[i].text, "answer", &back, &err) < 0);
		assert_int_equal(err.kind, VN_ERR_INPUT);
		if (!strstr(err.msg, bad[i].want))
			fail_msg("%s\ngave: %s\nwant: %s", bad[i].text, err.msg, bad[i].want);
		vn_error_clear(&err);
		vn_cell_end_clear(&back);
	}
	char *big = vn_xcalloc(VN_CELL_END_TEXT_MAX + 2, 1);
	memset(big, ' ', VN_CELL_END_TEXT_MAX + 1);
	assert_true(vn_cell_end_parse(big, "answer", &back, &err) < 0);
	assert_non_null(strstr(err.msg, "answer: over "));
	vn_error_clear(&err);
	free(big);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_balance),        cmocka_unit_test(test_retry_first),
		cmocka_unit_test(test_one_variant),    cmocka_unit_test(test_move_aside),
		cmocka_unit_test(test_cell_end_codec),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
