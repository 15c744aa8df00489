/*
 * The tracefs parsers (metrics/trace.c): the format files of Debian's 6.1
 * kernel as its tracefs wrote them (tests/fixtures/trace/, taken from a
 * guest), trace_pipe lines in the shapes the kernel prints, and what a
 * hostile guest could send instead.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "metrics/trace.h"
#include "util/cleanup.h"

static char *fixture(const char *name)
{
	const char *src = getenv("VN_SOURCE_DIR");
	char path[4096];

	if (!src)
		src = ".";
	snprintf(path, sizeof(path), "%s/tests/fixtures/trace/%s.format", src, name);
	FILE *f = fopen(path, "r");
	assert_non_null(f);
	char *buf = calloc(1, VN_TRACE_FORMAT_MAX + 1);
	assert_non_null(buf);
	size_t n = fread(buf, 1, VN_TRACE_FORMAT_MAX, f);
	fclose(f);
	buf[n] = '\0';
	return buf;
}

static void load(const char *name, struct vn_trace_format *f)
{
	_cleanup_free_ char *text = fixture(name);
	struct vn_error err = {0};

	int r = vn_trace_format_parse(text, strlen(text), f, &err);
	if (r)
		print_error("%s: %s\n", name, err.msg);
	assert_int_equal(r, 0);
}

static const struct vn_trace_field *field(const struct vn_trace_format *f, const char *name)
{
	for (unsigned i = 0; i < f->nfields; i++)
		if (strcmp(f->fields[i].name, name) == 0)
			return &f->fields[i];
	return NULL;
}

static void test_format_files(void **state)
{
	struct vn_trace_format f;

	load("mm_migrate_pages", &f);
	assert_string_equal(f.name, "mm_migrate_pages");
	assert_int_equal(f.id, 608);
	/* common_* are the header's, not the event's. */
	assert_int_equal(f.nfields, 7);
	assert_string_equal(f.fields[0].name, "succeeded");
	assert_string_equal(f.fields[0].type, "unsigned long");
	assert_int_equal(f.fields[0].offset, 8);
	assert_int_equal(f.fields[0].size, 8);
	assert_false(f.fields[0].is_signed);
	assert_true(f.fields[0].numeric);
	/* The print fmt names it nr_succeeded; symbolic ones keep their names. */
	assert_string_equal(f.fields[0].printed, "nr_succeeded");
	assert_string_equal(field(&f, "thp_split")->printed, "nr_thp_split");
	assert_string_equal(field(&f, "mode")->printed, "mode");
	assert_string_equal(field(&f, "mode")->type, "enum migrate_mode");
	assert_string_equal(field(&f, "reason")->printed, "reason");
	assert_true(field(&f, "reason")->is_signed);

	load("sched_migrate_task", &f);
	assert_int_equal(f.nfields, 5);
	assert_string_equal(f.fields[0].name, "comm");
	assert_string_equal(f.fields[0].type, "char[16]");
	assert_false(f.fields[0].numeric);
	assert_string_equal(field(&f, "dest_cpu")->printed, "dest_cpu");

	static const char *const numa[] = {"sched_move_numa", "sched_stick_numa", "sched_swap_numa"};
	for (size_t i = 0; i < 3; i++) {
		load(numa[i], &f);
		assert_string_equal(f.name, numa[i]);
		assert_non_null(field(&f, "src_nid"));
		assert_non_null(field(&f, "dst_nid"));
		assert_string_equal(field(&f, "dst_cpu")->printed, "dst_cpu");
	}
}

static void test_format_print_fmt(void **state)
{
	/* A '*' width takes an argument; "%%" takes none; an expression names its field; args may run short. */
	static const char text[] =
		"name: x\nID: 7\nformat:\n"
		"\tfield:int a;\toffset:8;\tsize:4;\tsigned:1;\n"
		"\tfield:int b;\toffset:12;\tsize:4;\tsigned:1;\n"
		"\tfield:__data_loc char[] s;\toffset:16;\tsize:4;\tsigned:0;\n"
		"\tfield:void * p;\toffset:24;\tsize:8;\tsigned:0;\n"
		"\tfield:int c;\toffset:32;\tsize:4;\tsigned:1;\n"
		"\nprint fmt: \"100%% w=%*d x_a=%d name=%s b_is=%s ptr=%p c=%d\", 8, REC->c, REC->a, "
		"__get_str(s), REC->b ? \"yes, it is\" : \"no\", REC->p\n";
	struct vn_trace_format f;
	struct vn_error err = {0};

	assert_int_equal(vn_trace_format_parse(text, strlen(text), &f, &err), 0);
	assert_int_equal(f.nfields, 5);
	assert_string_equal(field(&f, "a")->printed, "x_a");
	assert_string_equal(field(&f, "b")->printed, "b_is");
	/* The '*' took 8, so w= is c's; __get_str(s) names no REC-> field; the last %d has no argument left. */
	assert_string_equal(field(&f, "s")->printed, "s");
	assert_string_equal(field(&f, "c")->printed, "w");
	assert_string_equal(field(&f, "p")->printed, "ptr");
	assert_false(field(&f, "s")->numeric);
	assert_false(field(&f, "p")->numeric);
	assert_true(field(&f, "c")->numeric);
}

static void test_format_hostile(void **state)
{
	static const struct {
		const char *text, *want;
	} t[] = {
		{"", "a format file without a name"},
		{"ID: 3\n", "a format file without a name"},
		{"name: x\n", "a format file without an ID"},
		{"name: x y\nID: 1\n", "line 1: an event name that is not an identifier"},
		{"name: x\nID: 99999999999\n", "line 2: an ID that is not a number"},
		{"name: x\nID: -1\n", "line 2: an ID that is not a number"},
		{"name: x\nID: 1\n\tfield:int a\n", "line 3: a field without ';'"},
		{"name: x\nID: 1\n\tfield:int ;\toffset:0;\tsize:4;\tsigned:1;\n",
		 "line 3: field int: no type, or one over 95 bytes"},
		{"name: x\nID: 1\n\tfield:a;\toffset:0;\tsize:4;\tsigned:1;\n",
		 "line 3: field a: no type, or one over 95 bytes"},
		{"name: x\nID: 1\n\tfield:int a];\toffset:0;\tsize:4;\tsigned:1;\n",
		 "line 3: unbalanced ']' in a field"},
		{"name: x\nID: 1\n\tfield:int a;\toffset:0;\tsize:4;\tsigned:2;\n",
		 "line 3: field a: expected offset:N; size:N; signed:0|1;"},
		{"name: x\nID: 1\n\tfield:int a;\toffset:x;\tsize:4;\tsigned:1;\n",
		 "line 3: field a: expected offset:N; size:N; signed:0|1;"},
		{"name: x\nID: 1\n\tfield:int a;\toffset:0;\tsize:4;\n",
		 "line 3: field a: expected offset:N; size:N; signed:0|1;"},
		{"name: x\nID: 1\n\tfield:in\x01t a;\toffset:0;\tsize:4;\tsigned:1;\n",
		 "line 3: field a: a type with a control byte"},
		{"name: x\nID: 1\n\tfield:int a;\toffset:0;\tsize:4;\tsigned:1;\n\tfield:int "
		 "a;\toffset:4;\tsize:4;\tsigned:1;\n",
		 "line 4: field a twice"},
	};
	for (size_t i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
		struct vn_trace_format f;
		struct vn_error err = {0};
		assert_int_equal(vn_trace_format_parse(t[i].text, strlen(t[i].text), &f, &err), -EBADMSG);
		assert_string_equal(err.msg, t[i].want);
	}

	/* A NUL inside, a file over the bound, more fields than the bound, names and types over theirs. */
	struct vn_trace_format f;
	struct vn_error err = {0};
	assert_int_equal(vn_trace_format_parse("name: x\0ID: 1\n", 14, &f, &err), -EBADMSG);
	char *big = calloc(1, VN_TRACE_FORMAT_MAX + 2);
	assert_non_null(big);
	memset(big, ' ', VN_TRACE_FORMAT_MAX + 1);
	assert_int_equal(vn_trace_format_parse(big, VN_TRACE_FORMAT_MAX + 1, &f, &err), -EMSGSIZE);
	size_t n = (size_t)snprintf(big, VN_TRACE_FORMAT_MAX, "name: x\nID: 1\n");
	for (int i = 0; i <= VN_TRACE_FIELDS_MAX; i++)
		n += (size_t)snprintf(big + n, VN_TRACE_FORMAT_MAX - n,
				      "\tfield:int f%d;\toffset:0;\tsize:4;\tsigned:1;\n", i);
	vn_error_clear(&err);
	assert_int_equal(vn_trace_format_parse(big, n, &f, &err), -EBADMSG);
	assert_string_equal(err.msg, "more than 64 fields");
	n = (size_t)snprintf(big, VN_TRACE_FORMAT_MAX,
			     "name: x\nID: 1\n\tfield:int %0100d;\toffset:0;\tsize:4;\tsigned:1;\n", 0);
	assert_int_equal(vn_trace_format_parse(big, n, &f, &err), -EBADMSG);
	n = (size_t)snprintf(big, VN_TRACE_FORMAT_MAX, "name: %0100d\nID: 1\n", 0);
	assert_int_equal(vn_trace_format_parse(big, n, &f, &err), -EBADMSG);
	/* A print fmt that is nonsense leaves the fields' own names; an unterminated one too. */
	static const char *const fmts[] = {"print fmt: nothing",
					   "print fmt: \"a=%d",
					   "print fmt: \"a=%",
					   "print fmt: \"=%d\", REC->a",
					   "print fmt: \"a=%d\", REC->",
					   "print fmt: \"a=%d\", (((REC->a",
					   "print fmt: \"\\"};
	for (size_t i = 0; i < sizeof(fmts) / sizeof(fmts[0]); i++) {
		n = (size_t)snprintf(big, VN_TRACE_FORMAT_MAX,
				     "name: x\nID: 1\n\tfield:int a;\toffset:0;\tsize:4;\tsigned:1;\n%s", fmts[i]);
		assert_int_equal(vn_trace_format_parse(big, n, &f, &err), 0);
		assert_string_equal(f.fields[0].printed, "a");
	}
	free(big);
}

static struct vn_trace_format formats[2];

static int setup_formats(void **state)
{
	load("mm_migrate_pages", &formats[0]);
	load("sched_migrate_task", &formats[1]);
	return 0;
}

static int parse(const char *line, struct vn_trace_event *ev)
{
	struct vn_error err = {0};
	int r = vn_trace_line_parse(line, strlen(line), formats, 2, ev, &err);
	if (r < 0)
		assert_string_not_equal(err.msg, "");
	return r;
}

static int64_t num(json_object *o, const char *key)
{
	json_object *v;
	assert_true(json_object_object_get_ex(o, key, &v));
	assert_true(json_object_is_type(v, json_type_int));
	return json_object_get_int64(v);
}

static const char *str(json_object *o, const char *key)
{
	json_object *v;
	assert_true(json_object_object_get_ex(o, key, &v));
	assert_true(json_object_is_type(v, json_type_string));
	return json_object_get_string(v);
}

static void test_lines(void **state)
{
	struct vn_trace_event ev;

	assert_int_equal(parse(" vnuma-wl-memfol-158     [001] d..2.    11.529462: mm_migrate_pages: nr_succeeded=1 "
			       "nr_failed=0 nr_thp_succeeded=0 nr_thp_failed=0 nr_thp_split=0 mode=MIGRATE_ASYNC "
			       "reason=numa_misplaced",
			       &ev),
			 0);
	assert_int_equal(ev.format, 0);
	assert_string_equal(ev.comm, "vnuma-wl-memfol");
	assert_int_equal(ev.pid, 158);
	assert_int_equal(ev.cpu, 1);
	assert_true(ev.ts > 11.529461 && ev.ts < 11.529463);
	assert_int_equal(num(ev.fields, "succeeded"), 1);
	assert_int_equal(num(ev.fields, "thp_split"), 0);
	/* Numeric fields printed symbolically stay as printed. */
	assert_string_equal(str(ev.fields, "mode"), "MIGRATE_ASYNC");
	assert_string_equal(str(ev.fields, "reason"), "numa_misplaced");
	json_object_put(ev.fields);

	/* A comm with spaces, dashes, brackets and colons; record-tgid's "(TGID)"; no flags (irq-info off). */
	assert_int_equal(
		parse("  a -b [7] c: x-12 (   12) [003]   5.000001: sched_migrate_task: comm=a -b [7] c: x pid=12 "
		      "prio=120 orig_cpu=3 dest_cpu=-1",
		      &ev),
		0);
	assert_int_equal(ev.format, 1);
	assert_string_equal(ev.comm, "a -b [7] c: x");
	assert_int_equal(ev.pid, 12);
	assert_int_equal(ev.cpu, 3);
	assert_string_equal(str(ev.fields, "comm"), "a -b [7] c: x");
	assert_int_equal(num(ev.fields, "prio"), 120);
	assert_int_equal(num(ev.fields, "orig_cpu"), 3);
	assert_int_equal(num(ev.fields, "dest_cpu"), -1);
	json_object_put(ev.fields);

	/* <idle>-0; a hex value and values too big for int64 in a numeric field; a field not printed is absent. */
	assert_int_equal(parse("          <idle>-0       [000] dNh1.  1234.000000: mm_migrate_pages: nr_succeeded=0x10 "
			       "nr_failed=18446744073709551615 nr_thp_succeeded=99999999999999999999 mode=1",
			       &ev),
			 0);
	assert_string_equal(ev.comm, "<idle>");
	assert_int_equal(ev.pid, 0);
	assert_int_equal(num(ev.fields, "succeeded"), 16);
	json_object *v;
	assert_true(json_object_object_get_ex(ev.fields, "failed", &v));
	assert_true(json_object_get_uint64(v) == UINT64_MAX);
	assert_string_equal(str(ev.fields, "thp_succeeded"), "99999999999999999999");
	assert_int_equal(num(ev.fields, "mode"), 1);
	assert_false(json_object_object_get_ex(ev.fields, "reason", &v));
	json_object_put(ev.fields);
}

static void test_lines_hostile(void **state)
{
	static const char *const bad[] = {
		"",
		"garbage",
		"x-1 [000] d..2. 1.000000: sched_switch: prev_comm=a",       /* an event not captured */
		"x-1 [000] d..2. 1.000000 mm_migrate_pages: nr_succeeded=1", /* no ':' after the timestamp */
		"x-1 [000] d..2. 1: mm_migrate_pages: nr_succeeded=1",       /* no fraction */
		"x-1 [000] d..2. .5: mm_migrate_pages: nr_succeeded=1",
		"x-1 [000] d..2. 1.0000000000: mm_migrate_pages: ",       /* fraction too long */
		"x-1 [000] d..2. 1234567890123.5: mm_migrate_pages: ",    /* seconds too long */
		"x-1 000] d..2. 1.000000: mm_migrate_pages: ",            /* no '[' */
		"x-1 [] d..2. 1.000000: mm_migrate_pages: ",              /* no CPU */
		"x-1 [99999999999] d..2. 1.000000: mm_migrate_pages: ",   /* CPU overflow */
		"x-99999999999 [000] d..2. 1.000000: mm_migrate_pages: ", /* pid overflow */
		"x-2147483648 [000] d..2. 1.000000: mm_migrate_pages: ",  /* pid over INT32_MAX */
		"x [000] d..2. 1.000000: mm_migrate_pages: ",             /* no pid */
		"x- [000] d..2. 1.000000: mm_migrate_pages: ",
		"0123456789012345678901234567890123-1 [000] 1.000000: mm_migrate_pages: ", /* comm too long */
		"x-1 [000] toolongflags 1.000000: mm_migrate_pages: ",
		"x-1 (12 [000] d..2. 1.000000: mm_migrate_pages: ",
		"x-1 12) [000] d..2. 1.000000: mm_migrate_pages: ",
		"1.000000: mm_migrate_pages: nr_succeeded=1",
		": mm_migrate_pages: ",
		"x-1 [000] d..2. 1.000000: : ",
		"x-1 [000] d..2. 1.000000: mm_migrate_pages",
	};
	struct vn_trace_event ev;

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		if (parse(bad[i], &ev) == 0)
			fail_msg("accepted: %s", bad[i]);
		assert_null(ev.fields);
	}
	/* NUL and newline inside, and a line over the bound. */
	struct vn_error err = {0};
	assert_int_equal(vn_trace_line_parse("x-1 [000] 1.0: mm_migrate_pages: \0", 35, formats, 2, &ev, &err),
			 -EBADMSG);
	assert_int_equal(vn_trace_line_parse("x-1 [000] 1.0: mm_migrate_pages: \n", 34, formats, 2, &ev, &err),
			 -EBADMSG);
	char *big = malloc(VN_TRACE_LINE_MAX + 100);
	assert_non_null(big);
	int n = snprintf(big, 100, "x-1 [000] 1.000000: mm_migrate_pages: nr_succeeded=");
	memset(big + n, '7', VN_TRACE_LINE_MAX);
	assert_int_equal(vn_trace_line_parse(big, VN_TRACE_LINE_MAX + 1, formats, 2, &ev, &err), -EBADMSG);
	/* Just under the bound is fine: the value is a string, too long for a number. */
	assert_int_equal(vn_trace_line_parse(big, VN_TRACE_LINE_MAX, formats, 2, &ev, &err), 0);
	assert_int_equal((int)strlen(str(ev.fields, "succeeded")), VN_TRACE_LINE_MAX - n);
	json_object_put(ev.fields);
	free(big);

	/* A fake header inside the comm is passed over for the real one after it. */
	assert_int_equal(parse("1.0: mm_migrate_pages: -5 [009] 2.000000: mm_migrate_pages: nr_succeeded=3", &ev), 0);
	assert_int_equal(ev.cpu, 9);
	assert_int_equal(ev.pid, 5);
	assert_string_equal(ev.comm, "1.0: mm_migrate_pages: ");
	assert_int_equal(num(ev.fields, "succeeded"), 3);
	json_object_put(ev.fields);
	/* Fields in another order than the format's, separated by commas, one of them printed twice (the first counts). */
	assert_int_equal(parse("x-1 [000] 1.000000: mm_migrate_pages: nr_failed=2, nr_succeeded=1, nr_failed=9", &ev),
			 0);
	assert_int_equal(num(ev.fields, "succeeded"), 1);
	assert_int_equal(num(ev.fields, "failed"), 2);
	json_object_put(ev.fields);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_format_files),
		cmocka_unit_test(test_format_print_fmt),
		cmocka_unit_test(test_format_hostile),
		cmocka_unit_test_setup(test_lines, setup_formats),
		cmocka_unit_test_setup(test_lines_hostile, setup_formats),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
