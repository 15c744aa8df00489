/* The JSON reader: strict parsing with FILE:LINE:COL, and JSON-path errors; the few writing helpers. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "util/cleanup.h"
#include "util/json.h"

static struct json_object *parse(const char *text)
{
	struct json_object *o = NULL;
	struct vn_error err = {0};
	assert_int_equal(vn_json_parse(text, "t.json", &o, &err), 0);
	return o;
}

static void expect_msg(struct vn_error *err, const char *want)
{
	if (!strstr(err->msg, want))
		fail_msg("message \"%s\" does not contain \"%s\"", err->msg, want);
	assert_int_equal(err->kind, VN_ERR_INPUT);
	vn_error_clear(err);
}

static void test_parse(void **state)
{
	(void)state;
	static const struct {
		const char *text, *want;
	} bad[] = {
		{"{\"a\": 1,\n \"b\": }", "t.json:2:"},
		{"{\"a\": 1", "t.json:1:8: malformed JSON: unexpected end of file"},
		{"{\"a\": [1, 2,]}", "t.json:1:"},
		{"{}\n  {}", "t.json:2:3: malformed JSON: "}, /* strict mode: the tokener itself refuses more */
		{"{\"a\": tru}", "t.json:1:"},
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		struct json_object *o = NULL;
		struct vn_error err = {0};
		assert_int_equal(vn_json_parse(bad[i].text, "t.json", &o, &err), -EINVAL);
		assert_null(o);
		expect_msg(&err, bad[i].want);
	}
	_cleanup_json_ struct json_object *o = parse("  {\"a\": [1, 2]}\n\n");
	assert_true(json_object_is_type(o, json_type_object));
}

static void test_paths(void **state)
{
	(void)state;
	char buf[VN_JSON_PATH_MAX], longkey[400];
	assert_string_equal(vn_json_path_key(buf, "$", "steps"), "$.steps");
	assert_string_equal(vn_json_path_key(buf, "$.sysctls", "kernel.numa_balancing"),
			    "$.sysctls[\"kernel.numa_balancing\"]");
	assert_string_equal(vn_json_path_key(buf, "$.hugetlb", "0"), "$.hugetlb[\"0\"]");
	assert_string_equal(vn_json_path_idx(buf, "$.steps", 12), "$.steps[12]");
	memset(longkey, 'k', sizeof(longkey) - 1);
	longkey[sizeof(longkey) - 1] = '\0';
	vn_json_path_key(buf, "$", longkey);
	assert_int_equal(strlen(buf), VN_JSON_PATH_MAX - 1);
	assert_string_equal(buf + VN_JSON_PATH_MAX - 4, "...");
}

static void test_checks(void **state)
{
	(void)state;
	static const char *const known[] = {"name", "size", NULL};
	static const char *const modes[] = {"always", "never", NULL};
	_cleanup_json_ struct json_object *o = parse("{\"name\": \"x\", \"size\": 3, \"bogus\": true}");
	struct vn_error err = {0};
	const struct vn_json_reader r = {.file = "t.json", .err = &err};
	int idx = -1;

	assert_int_equal(vn_json_check_keys(&r, o, "$", known), -EINVAL);
	expect_msg(&err, "t.json: $: unknown key \"bogus\" (known: name, size)");
	assert_int_equal(vn_json_check_type(&r, vn_json_get(o, "size"), json_type_double, "$.size"), 0);
	assert_int_equal(vn_json_check_type(&r, vn_json_get(o, "size"), json_type_string, "$.size"), -EINVAL);
	expect_msg(&err, "t.json: $.size: expected a string, got 3");
	assert_int_equal(vn_json_check_type(&r, o, json_type_array, "$"), -EINVAL);
	expect_msg(&err, "$: expected an array, got an object");
	assert_null(vn_json_get(o, "nothing"));

	_cleanup_json_ struct json_object *m = parse("[\"never\", \"sometimes\"]");
	assert_int_equal(vn_json_one_of(&r, json_object_array_get_idx(m, 0), "$[0]", modes, &idx), 0);
	assert_int_equal(idx, 1);
	assert_int_equal(vn_json_one_of(&r, json_object_array_get_idx(m, 1), "$[1]", modes, &idx), -EINVAL);
	expect_msg(&err, "$[1]: expected one of \"always\", \"never\", got \"sometimes\"");

	assert_true(vn_json_name_ok("a-b_c.d"));
	assert_false(vn_json_name_ok(".hidden"));
	assert_false(vn_json_name_ok("a/b"));
	assert_false(vn_json_name_ok(""));
}

static void test_strings(void **state)
{
	(void)state;
	_cleanup_json_ struct json_object *o =
		parse("{\"s\": \"hello\", \"e\": \"\", \"n\": 5, \"bad\": \"a/b\", \"v\": [\"a\", \"b\"], "
		      "\"dup\": [\"a\", \"a\"], \"holes\": [\"a\", \"\"], \"mixed\": [\"a\", 7]}");
	struct vn_error err = {0};
	const struct vn_json_reader r = {.file = "t.json", .err = &err};
	_cleanup_free_ char *s = NULL;

	assert_int_equal(vn_json_get_str(&r, o, "$", "s", VN_JSON_REQUIRED, &s), 0);
	assert_string_equal(s, "hello");
	/* Absent and optional: left alone. */
	assert_int_equal(vn_json_get_str(&r, o, "$", "absent", 0, &s), 0);
	assert_string_equal(s, "hello");
	assert_int_equal(vn_json_get_str(&r, o, "$", "absent", VN_JSON_REQUIRED, &s), -EINVAL);
	expect_msg(&err, "t.json: $: missing required key \"absent\"");
	assert_int_equal(vn_json_get_str(&r, o, "$", "e", 0, &s), 0);
	assert_string_equal(s, "");
	assert_int_equal(vn_json_get_str(&r, o, "$", "e", VN_JSON_NONEMPTY, &s), -EINVAL);
	expect_msg(&err, "$.e: expected a non-empty string, got \"\"");
	assert_int_equal(vn_json_get_str(&r, o, "$", "n", 0, &s), -EINVAL);
	expect_msg(&err, "$.n: expected a string, got 5");
	assert_int_equal(vn_json_get_str(&r, o, "$", "bad", VN_JSON_NAME, &s), -EINVAL);
	expect_msg(&err, "$.bad: expected a name of letters");

	_cleanup_strv_ char **v = NULL;
	size_t n = 0;
	assert_int_equal(vn_json_strv_append(&r, vn_json_get(o, "v"), "$.v", 0, &v, &n), 0);
	assert_int_equal(vn_json_strv_append(&r, vn_json_get(o, "v"), "$.v", 0, &v, &n), 0);
	assert_int_equal(n, 4);
	assert_string_equal(v[3], "b");
	assert_null(v[4]);
	assert_int_equal(vn_json_strv_append(&r, vn_json_get(o, "dup"), "$.dup", VN_JSON_NAME, &v, &n), -EINVAL);
	expect_msg(&err, "$.dup[0]: \"a\" is listed twice");
	_cleanup_strv_ char **w = NULL;
	size_t m = 0;
	assert_int_equal(vn_json_strv_append(&r, vn_json_get(o, "holes"), "$.holes", VN_JSON_NONEMPTY, &w, &m),
			 -EINVAL);
	expect_msg(&err, "$.holes[1]: expected a non-empty string, got \"\"");
	/* What was read before the error stays owned by the vector. */
	assert_int_equal(m, 1);
	assert_null(w[1]);
	assert_int_equal(vn_json_strv_append(&r, vn_json_get(o, "mixed"), "$.mixed", 0, &w, &m), -EINVAL);
	expect_msg(&err, "$.mixed[1]: expected a string, got 7");
	assert_int_equal(vn_json_strv_append(&r, vn_json_get(o, "s"), "$.s", 0, &w, &m), -EINVAL);
	expect_msg(&err, "$.s: expected an array, got \"hello\"");
}

static void test_numbers(void **state)
{
	(void)state;
	_cleanup_json_ struct json_object *o = parse(
		"{\"half\": 0.5, \"zero\": 0, \"neg\": -1, \"two\": 2, \"big\": 1e400, \"str\": \"1\", \"f\": 1.5}");
	struct vn_error err = {0};
	const struct vn_json_reader r = {.file = "t.json", .err = &err};
	double d = -7;
	unsigned u = 99;

	assert_int_equal(vn_json_get_num(&r, o, "$", "half", true, VN_JSON_FRACTION, &d), 0);
	assert_true(d == 0.5);
	assert_int_equal(vn_json_get_num(&r, o, "$", "two", true, VN_JSON_FRACTION, &d), -EINVAL);
	expect_msg(&err, "$.two: expected a fraction in (0, 1], got 2");
	assert_int_equal(vn_json_get_num(&r, o, "$", "zero", true, VN_JSON_NONNEG, &d), 0);
	assert_int_equal(vn_json_get_num(&r, o, "$", "zero", true, VN_JSON_POSITIVE, &d), -EINVAL);
	expect_msg(&err, "$.zero: expected a number > 0, got 0");
	assert_int_equal(vn_json_get_num(&r, o, "$", "neg", true, VN_JSON_NONNEG, &d), -EINVAL);
	expect_msg(&err, "$.neg: expected a number >= 0, got -1");
	assert_int_equal(vn_json_get_num(&r, o, "$", "neg", true, VN_JSON_FINITE, &d), 0);
	assert_true(d == -1);
	assert_int_equal(vn_json_get_num(&r, o, "$", "str", true, VN_JSON_FINITE, &d), -EINVAL);
	expect_msg(&err, "$.str: expected a number, got \"1\"");
	d = 42;
	assert_int_equal(vn_json_get_num(&r, o, "$", "absent", false, VN_JSON_FINITE, &d), 0);
	assert_true(d == 42);
	assert_int_equal(vn_json_get_num(&r, o, "$", "absent", true, VN_JSON_FINITE, &d), -EINVAL);
	expect_msg(&err, "$: missing required key \"absent\"");

	assert_int_equal(vn_json_get_uint(&r, o, "$", "two", true, 1, 4, "an integer in 1-4", &u), 0);
	assert_int_equal(u, 2);
	assert_int_equal(vn_json_get_uint(&r, o, "$", "two", true, 3, 4, "an integer in 3-4", &u), -EINVAL);
	expect_msg(&err, "$.two: expected an integer in 3-4, got 2");
	assert_int_equal(vn_json_get_uint(&r, o, "$", "f", true, 0, 4, "an integer", &u), -EINVAL);
	expect_msg(&err, "$.f: expected an integer, got 1.5");
	assert_int_equal(u, 2);
}

/* Members as written: a string or null, doubles with their own text. */
static void test_writing(void **state)
{
	_cleanup_json_ struct json_object *o = json_object_new_object();

	vn_json_add_str(o, "s", "x");
	vn_json_add_str(o, "none", NULL);
	json_object_object_add(o, "sig", vn_json_new_double_sig(0.1 + 0.2, 15));
	json_object_object_add(o, "exact", vn_json_new_double_sig(0.1 + 0.2, 17));
	json_object_object_add(o, "us", vn_json_new_double_fixed(1.5, 6));
	assert_string_equal(json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN),
			    "{\"s\":\"x\",\"none\":null,\"sig\":0.3,\"exact\":0.30000000000000004,\"us\":1.500000}");
	/* Too long for its buffer in %f: json-c's own text, the value kept. */
	_cleanup_json_ struct json_object *huge = vn_json_new_double_fixed(1e300, 6);
	assert_true(json_object_get_double(huge) == 1e300);
}

/* Our own JSON's members: the value where its type is right, else NULL, 0 or false. */
static void test_own_members(void **state)
{
	_cleanup_json_ struct json_object *o = json_tokener_parse(
		"{\"s\":\"x\",\"i\":-7,\"big\":8589934592,\"d\":1.5,\"b\":true,\"f\":false,\"n\":null}");

	assert_non_null(o);
	assert_string_equal(vn_json_str(o, "s"), "x");
	assert_null(vn_json_str(o, "i"));
	assert_null(vn_json_str(o, "absent"));
	assert_int_equal(vn_json_int64(o, "i"), -7);
	assert_int_equal(vn_json_int64(o, "big"), 8589934592LL);
	assert_int_equal(vn_json_int64(o, "d"), 0);
	assert_int_equal(vn_json_int64(o, "s"), 0);
	assert_true(vn_json_double(o, "d") == 1.5);
	/* An integer is not taken for a double: our writers print every double with a point. */
	assert_true(vn_json_double(o, "i") == 0);
	assert_true(vn_json_double(o, "n") == 0);
	assert_true(vn_json_bool(o, "b"));
	assert_false(vn_json_bool(o, "f"));
	assert_false(vn_json_bool(o, "i"));
	assert_false(vn_json_bool(o, "absent"));
}

/* JSON we did not write: present with the type asked, or false and the value left alone. */
static void test_has_members(void **state)
{
	_cleanup_json_ struct json_object *o = json_tokener_parse(
		"{\"s\":\"x\",\"i\":-7,\"big\":9007199254740993,\"d\":1.5,\"b\":true,\"n\":null,\"a\":[1],\"o\":{}}");
	int64_t i = 42;
	double d = 42;

	assert_non_null(o);
	json_object_object_add(o, "inf", json_object_new_double(INFINITY));
	json_object_object_add(o, "nan", json_object_new_double(NAN));

	assert_true(vn_json_has_int64(o, "i", &i));
	assert_int_equal(i, -7);
	assert_true(vn_json_has_int64(o, "big", &i));
	assert_int_equal(i, 9007199254740993LL);
	i = 42;
	static const char *const not_int[] = {"d", "s", "b", "n", "a", "o", "inf", "absent"};
	for (size_t k = 0; k < sizeof(not_int) / sizeof(not_int[0]); k++)
		assert_false(vn_json_has_int64(o, not_int[k], &i));
	assert_int_equal(i, 42);

	/* An integer is a number here, unlike vn_json_double's. */
	assert_true(vn_json_has_number(o, "i", &d));
	assert_true(d == -7);
	assert_true(vn_json_has_number(o, "d", &d));
	assert_true(d == 1.5);
	assert_true(vn_json_has_number(o, "inf", &d));
	assert_true(isinf(d));
	assert_true(vn_json_has_finite(o, "i", &d));
	assert_true(d == -7);
	d = 42;
	assert_false(vn_json_has_finite(o, "inf", &d));
	assert_false(vn_json_has_finite(o, "nan", &d));
	static const char *const not_num[] = {"s", "b", "n", "a", "o", "absent"};
	for (size_t k = 0; k < sizeof(not_num) / sizeof(not_num[0]); k++) {
		assert_false(vn_json_has_number(o, not_num[k], &d));
		assert_false(vn_json_has_finite(o, not_num[k], &d));
	}
	assert_true(d == 42);

	assert_ptr_equal(vn_json_member(o, "a", json_type_array), vn_json_get(o, "a"));
	assert_ptr_equal(vn_json_member(o, "o", json_type_object), vn_json_get(o, "o"));
	assert_null(vn_json_member(o, "a", json_type_object));
	assert_null(vn_json_member(o, "absent", json_type_array));

	/* Not an object, or none: nothing, never a crash. */
	struct json_object *arr = vn_json_get(o, "a");
	assert_null(vn_json_str(arr, "s"));
	assert_false(vn_json_bool(NULL, "b"));
	assert_false(vn_json_has_int64(arr, "i", &i));
	assert_false(vn_json_has_number(NULL, "i", &d));
	assert_null(vn_json_member(NULL, "a", json_type_array));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_parse),       cmocka_unit_test(test_paths),       cmocka_unit_test(test_checks),
		cmocka_unit_test(test_strings),     cmocka_unit_test(test_numbers),     cmocka_unit_test(test_writing),
		cmocka_unit_test(test_own_members), cmocka_unit_test(test_has_members),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
