#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <string.h>

#include "scenario/guest-lines.h"

/* A line that does not parse is a failure to observe naming the guest, the line cleaned. */
static void assert_refused(int rc, struct vn_error *err, const char *what)
{
	assert_true(rc < 0);
	assert_int_equal(err->kind, VN_ERR_INFRA);
	assert_non_null(strstr(err->msg, "guest g1:"));
	assert_non_null(strstr(err->msg, what));
	assert_null(strchr(err->msg, '\x1b'));
	vn_error_clear(err);
}

static void test_move_lines(void **state)
{
	struct vn_guest_move_line m;
	struct vn_error err = {0};
	char longline[VN_GUEST_LINE_MAX + 8];

	assert_int_equal(vn_guest_move_line_parse("g1", "pid 4242", &m, &err), 0);
	assert_true(m.is_pid);
	assert_int_equal(m.pid, 4242);
	assert_int_equal(vn_guest_move_line_parse("g1", "123.45 678.90", &m, &err), 0);
	assert_false(m.is_pid);
	assert_true(m.uptime > 123.44 && m.uptime < 123.46);
	assert_int_equal(vn_guest_move_line_parse("g1", "7", &m, &err), 0);

	const char *bad[] = {"pid -1", "pid 0",   "pid ",    "pid 12x", "pid 99999999999", "pid +5",
			     "-3.0 1", "abc",     "1.2.3 4", " 5 6",    "\x1b[2Jpid 5",    "",
			     "pid",    "nan 1.0", "inf",     "1e5 2"};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		assert_refused(vn_guest_move_line_parse("g1", bad[i], &m, &err), &err, "move action line '");
	memset(longline, '1', sizeof(longline) - 1);
	longline[sizeof(longline) - 1] = '\0';
	assert_refused(vn_guest_move_line_parse("g1", longline, &m, &err), &err, "too long");
}

static void test_pidfile_lines(void **state)
{
	struct vn_guest_pidfile_line p;
	struct vn_error err = {0};
	char longline[VN_GUEST_LINE_MAX + 8];

	assert_int_equal(vn_guest_pidfile_line_parse("g1", "hog.3.pid 901", &p, &err), 0);
	assert_string_equal(p.step, "hog");
	assert_int_equal(p.index, 3);
	assert_int_equal(p.pid, 901);
	/* A step's name may hold dots. */
	assert_int_equal(vn_guest_pidfile_line_parse("g1", "a.b.0.pid 7", &p, &err), 0);
	assert_string_equal(p.step, "a.b");
	assert_int_equal(p.index, 0);

	const char *bad[] = {"hog.3.pid",      "hog.3.pid -5",   "hog.3.pid x",          "hog.3.pid 0", "hog.pid 5",
			     ".3.pid 5",       "hog.-1.pid 5",   "hog.x.pid 5",          "hog.3.txt 5", "",
			     "hog.3.pid 5 6x", "\x1b]0;x\x07 5", "hog.99999999999.pid 5"};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		assert_refused(vn_guest_pidfile_line_parse("g1", bad[i], &p, &err), &err, "pidfile line '");
	/* A name longer than any step's. */
	memset(longline, 'a', 300);
	strcpy(longline + 300, ".1.pid 5");
	assert_refused(vn_guest_pidfile_line_parse("g1", longline, &p, &err), &err, "pidfile line '");
	memset(longline, 'a', sizeof(longline) - 1);
	longline[sizeof(longline) - 1] = '\0';
	assert_refused(vn_guest_pidfile_line_parse("g1", longline, &p, &err), &err, "too long");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_move_lines),
		cmocka_unit_test(test_pidfile_lines),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
