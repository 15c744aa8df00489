/*
 * KCIDB JSON (kcidb.h): what result.json says about the kernel and the
 * suite tests, in KernelCI's words. The schema forbids null members, so
 * every optional member is left out when the run does not know it.
 */
#include "report/kcidb.h"
#include "report/result-suite.h"

#include <json-c/json.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/alloc.h"
#include "util/cleanup.h"
#include "util/json.h"
#include "util/sha256.h"
#include "util/strbuf.h"

/* Hex digits of an id's digest: 96 bits, so that ids from one origin do not collide. */
#define ID_HEX 24

static void add_text(json_object *o, const char *key, const char *s, size_t max, unsigned flags)
{
	if (!s)
		return;
	_cleanup_free_ char *clean = vn_text_dup(s, max, flags);
	json_object_object_add(o, key, json_object_new_string(clean));
}

static void add_str(json_object *o, const char *key, const char *s)
{
	add_text(o, key, s, SIZE_MAX, 0);
}

/* Each part and a separator, so that ("ab", "c") and ("a", "bc") differ. */
static void hash_part(struct vn_sha256 *c, const char *s)
{
	if (s)
		vn_sha256_update(c, s, strlen(s));
	vn_sha256_update(c, "\n", 1);
}

static char *make_id(const char *const parts[], size_t n)
{
	struct vn_sha256 c;
	uint8_t d[VN_SHA256_LEN];
	char hex[VN_SHA256_HEX_LEN + 1];

	vn_sha256_init(&c);
	for (size_t i = 0; i < n; i++)
		hash_part(&c, parts[i]);
	vn_sha256_final(&c, d);
	vn_sha256_hex(d, hex);
	hex[ID_HEX] = '\0';
	return vn_xasprintf(VN_KCIDB_ORIGIN ":%s", hex);
}

static bool path_char(char ch)
{
	return (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9') || ch == '_' ||
	       ch == '-';
}

/* One component: runs of other characters are one '_', none at the ends; an empty one is "_". */
static void put_component(struct vn_strbuf *b, const char *s, size_t len)
{
	size_t start = b->len;
	bool gap = false;

	for (size_t i = 0; i < len; i++) {
		if (!path_char(s[i])) {
			gap = true;
			continue;
		}
		if (gap && b->len > start)
			vn_strbuf_append(b, "_", 1);
		gap = false;
		vn_strbuf_append(b, &s[i], 1);
	}
	if (b->len == start)
		vn_strbuf_append(b, "_", 1);
}

char *vn_kcidb_path(const char *step, const char *name)
{
	struct vn_strbuf b = VN_STRBUF_INIT;

	put_component(&b, step, strlen(step));
	for (const char *p = name;; p++) {
		const char *end = strchr(p, ':');
		size_t len = end ? (size_t)(end - p) : strlen(p);
		vn_strbuf_append(&b, ".", 1);
		put_component(&b, p, len);
		if (!end)
			break;
		p = end;
	}
	return vn_strbuf_steal(&b);
}

static const char *status_word(enum vn_test_verdict v)
{
	static const char *const words[] = {
		[VN_TEST_PASS] = "PASS",    [VN_TEST_FAIL] = "FAIL",  [VN_TEST_SKIP] = "SKIP",
		[VN_TEST_XFAIL] = "FAIL",   [VN_TEST_XPASS] = "PASS", [VN_TEST_ERROR] = "ERROR",
		[VN_TEST_TIMEOUT] = "ERROR"};
	return (unsigned)v < VN_ARRAY_SIZE(words) ? words[v] : "ERROR";
}

static json_object *checkout(const struct vn_result_run *r, const char *id)
{
	json_object *o = json_object_new_object(), *misc = json_object_new_object();

	add_str(o, "id", id);
	add_str(o, "origin", VN_KCIDB_ORIGIN);
	json_object_object_add(o, "valid", json_object_new_boolean(true));
	if (r->kernel_release) {
		_cleanup_free_ char *c =
			vn_xasprintf("Linux %s %s", r->kernel_release, r->kernel_version ? r->kernel_version : "");
		add_str(o, "comment", c);
	}
	add_str(misc, "kernel_release", r->kernel_release);
	add_str(misc, "kernel_version", r->kernel_version);
	add_str(misc, "kernel_recipe", r->kernel_recipe);
	if (r->kernel_patches) {
		json_object *a = json_object_new_array();
		for (char **p = r->kernel_patches; *p; p++)
			json_object_array_add(a, json_object_new_string(*p));
		json_object_object_add(misc, "kernel_patches", a);
	}
	json_object_object_add(o, "misc", misc);
	return o;
}

static json_object *build(const struct vn_result_run *r, const char *id, const char *checkout_id)
{
	json_object *o = json_object_new_object(), *misc = json_object_new_object();

	add_str(o, "checkout_id", checkout_id);
	add_str(o, "id", id);
	add_str(o, "origin", VN_KCIDB_ORIGIN);
	if (r->arch) {
		/* The schema's architecture is [a-z0-9_]*: x86_64 and aarch64 are, ppc64le is. */
		_cleanup_free_ char *a = vn_xstrdup(r->arch);
		for (char *p = a; *p; p++)
			if (!((*p >= 'a' && *p <= 'z') || (*p >= '0' && *p <= '9')))
				*p = '_';
		add_str(o, "architecture", a);
	}
	json_object_object_add(o, "valid", json_object_new_boolean(true));
	add_str(misc, "kernel_config_sha256", r->kernel_config_sha256);
	add_str(misc, "kernel_cmdline", r->kernel_cmdline);
	json_object_object_add(o, "misc", misc);
	return o;
}

/* Where the tests ran: the shape and the guest, the same for each test of the run. */
static json_object *environment(const struct vn_result_run *r)
{
	json_object *o = json_object_new_object(), *misc = json_object_new_object();

	if (r->topology) {
		_cleanup_free_ char *c = vn_xasprintf("vnuma guest, topology %s", r->topology);
		add_str(o, "comment", c);
	}
	add_str(misc, "topology", r->topology);
	if (r->node_memory_mib.n) {
		json_object *a = json_object_new_array();
		for (unsigned i = 0; i < r->node_memory_mib.n; i++)
			json_object_array_add(a, json_object_new_int64(r->node_memory_mib.v[i]));
		json_object_object_add(misc, "node_memory_mib", a);
	}
	if (r->vcpus)
		json_object_object_add(misc, "vcpus", json_object_new_int64(r->vcpus));
	add_str(misc, "accel", r->accel);
	add_str(misc, "guest", r->guest);
	json_object_object_add(o, "misc", misc);
	return o;
}

/* The members every test of the run has; status and path are the caller's. */
static json_object *test_base(const struct vn_result_run *r, const char *build_id, const char *run_id, unsigned i)
{
	json_object *o = json_object_new_object();
	_cleanup_free_ char *id = vn_xasprintf("%s.%u", run_id, i);

	add_str(o, "build_id", build_id);
	add_str(o, "id", id);
	add_str(o, "origin", VN_KCIDB_ORIGIN);
	add_str(o, "start_time", r->started_utc);
	json_object_object_add(o, "environment", environment(r));
	return o;
}

static json_object *run_misc(const struct vn_result_run *r)
{
	json_object *misc = json_object_new_object();

	add_str(misc, "scenario", r->scenario);
	add_str(misc, "variant", r->variant);
	if (r->repeat)
		json_object_object_add(misc, "repeat", json_object_new_int64(r->repeat));
	return misc;
}

static json_object *suite_test(const struct vn_result_run *r, const char *build_id, const char *run_id, unsigned i)
{
	const struct vn_result_test *t = &r->tests[i];
	json_object *o = test_base(r, build_id, run_id, i), *misc = run_misc(r);
	_cleanup_free_ char *path = vn_kcidb_path(t->step, t->name);

	add_str(o, "path", path);
	add_str(o, "status", status_word(t->verdict));
	/* A known failure is a failure KernelCI is told to ignore, as the run does. */
	if (t->verdict == VN_TEST_XFAIL)
		json_object_object_add(o, "waived", json_object_new_boolean(true));
	add_str(o, "comment", t->reason);
	/* The sanitizer may add "..." past its max: the schema's bound holds with it. */
	add_text(o, "log_excerpt", t->detail, VN_KCIDB_EXCERPT_MAX - 4, VN_TEXT_LINES);
	add_str(misc, "step", t->step);
	add_str(misc, "test", t->name);
	add_str(misc, "verdict", vn_test_verdict_word(t->verdict));
	add_str(misc, "known_failure", t->known);
	json_object_object_add(o, "misc", misc);
	return o;
}

json_object *vn_kcidb_json(const struct vn_result_run *r)
{
	const char *const kernel[] = {r->kernel_release, r->kernel_version, r->kernel_recipe};
	_cleanup_free_ char *checkout_id = make_id(kernel, VN_ARRAY_SIZE(kernel));
	const char *const built[] = {checkout_id, r->arch, r->kernel_config_sha256, r->kernel_cmdline};
	_cleanup_free_ char *build_id = make_id(built, VN_ARRAY_SIZE(built));
	const char *const run[] = {r->scenario, r->variant, r->started_utc, r->guest, r->host, r->topology};
	_cleanup_free_ char *run_id = make_id(run, VN_ARRAY_SIZE(run));
	json_object *o = json_object_new_object(), *v = json_object_new_object();
	json_object *checkouts = json_object_new_array(), *builds = json_object_new_array();
	json_object *tests = json_object_new_array();

	json_object_object_add(v, "major", json_object_new_int(VN_KCIDB_MAJOR));
	json_object_object_add(v, "minor", json_object_new_int(VN_KCIDB_MINOR));
	json_object_object_add(o, "version", v);
	json_object_array_add(checkouts, checkout(r, checkout_id));
	json_object_array_add(builds, build(r, build_id, checkout_id));
	for (unsigned i = 0; i < r->ntests; i++)
		json_object_array_add(tests, suite_test(r, build_id, run_id, i));
	if (!r->complete) {
		/* Tests that never ran because the harness broke: KCIDB's MISS, never a pass by omission. */
		json_object *t = test_base(r, build_id, run_id, r->ntests);
		add_str(t, "path", VN_KCIDB_ORIGIN);
		add_str(t, "status", "MISS");
		add_str(t, "comment", r->error ? r->error : "incomplete");
		json_object_object_add(t, "misc", run_misc(r));
		json_object_array_add(tests, t);
	}
	json_object_object_add(o, "checkouts", checkouts);
	json_object_object_add(o, "builds", builds);
	json_object_object_add(o, "tests", tests);
	return o;
}

char *vn_kcidb_text(const struct vn_result_run *r)
{
	_cleanup_json_ json_object *o = vn_kcidb_json(r);

	return vn_xasprintf(
		"%s\n", json_object_to_json_string_ext(o, JSON_C_TO_STRING_PRETTY | JSON_C_TO_STRING_NOSLASHESCAPE));
}
