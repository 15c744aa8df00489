/*
 * Reading JSON documents (json-c) into structs, with errors that name the
 * file and the JSON path of the offending value: json-c keeps no line
 * numbers for values, so "x.json: $.steps[1].size: expected ..., got 7".
 * Shared by the kernel recipes and the scenario schema. Every function
 * returns 0 or a negative errno with the error in r->err (an input error).
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <json-c/json.h>

#include "util/cleanup.h"
#include "util/error.h"

/* A path longer than this is cut short with "..." (paths are for messages only). */
#define VN_JSON_PATH_MAX 256

struct vn_json_reader {
	const char *file; /* as the user named it, the prefix of every message */
	struct vn_error *err;
};

VN_DEFINE_CLEANUP(struct json_object *, json_object_put);
#define _cleanup_json_ _cleanup_(json_object_putp)
VN_DEFINE_CLEANUP(struct json_tokener *, json_tokener_free);

/*
 * Parse text with json-c's JSON_TOKENER_STRICT (no trailing commas, nothing after
 * the value); malformed JSON is an input error at "name:LINE:COL:".
 */
int vn_json_parse(const char *text, const char *name, struct json_object **out, struct vn_error *err);

/* "FILE: PATH: message". */
int vn_json_bad(const struct vn_json_reader *r, const char *path, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
/* "FILE: PATH: expected WHAT, got VALUE" (the value as written, cut short). */
int vn_json_expected(const struct vn_json_reader *r, const char *path, const char *what, struct json_object *v);
/* "FILE: PATH: missing required key "KEY"". */
int vn_json_missing(const struct vn_json_reader *r, const char *path, const char *key);

/* PATH.key (or PATH["key"] for keys that are not identifiers) and PATH[i], into buf. */
const char *vn_json_path_key(char buf[VN_JSON_PATH_MAX], const char *parent, const char *key);
const char *vn_json_path_idx(char buf[VN_JSON_PATH_MAX], const char *parent, size_t i);

/* o's member key, or NULL. */
struct json_object *vn_json_get(struct json_object *o, const char *key);

/* v has type t; an integer also passes for json_type_double. */
int vn_json_check_type(const struct vn_json_reader *r, struct json_object *v, enum json_type t, const char *path);
/* Every key of object o is in the NULL-terminated list known. */
int vn_json_check_keys(const struct vn_json_reader *r, struct json_object *o, const char *path,
		       const char *const *known);
/* v is one of the NULL-terminated strings names; *out gets its index. */
int vn_json_one_of(const struct vn_json_reader *r, struct json_object *v, const char *path, const char *const *names,
		   int *out);

/* Letters, digits, '-', '_' and '.', not starting with '.': safe as a file name. */
bool vn_json_name_ok(const char *s);

enum {
	VN_JSON_REQUIRED = 1 << 0, /* absent is an error (otherwise *out is left alone) */
	VN_JSON_NONEMPTY = 1 << 1, /* "" is an error */
	VN_JSON_NAME = 1 << 2,     /* must pass vn_json_name_ok; in arrays, also unique */
};

/* String member key of o into *out (replacing what was there). */
int vn_json_get_str(const struct vn_json_reader *r, struct json_object *o, const char *path, const char *key,
		    unsigned flags, char **out);
/* Append array v's strings to *vec (NULL-terminated, *n entries; *vec may be NULL). */
int vn_json_strv_append(const struct vn_json_reader *r, struct json_object *v, const char *path, unsigned flags,
			char ***vec, size_t *n);

enum vn_json_range {
	VN_JSON_POSITIVE, /* a number > 0 */
	VN_JSON_NONNEG,   /* a number >= 0 */
	VN_JSON_FRACTION, /* a fraction in (0, 1] */
	VN_JSON_FINITE,   /* any finite number */
};

int vn_json_num(const struct vn_json_reader *r, struct json_object *v, const char *path, enum vn_json_range range,
		double *out);
int vn_json_get_num(const struct vn_json_reader *r, struct json_object *o, const char *path, const char *key,
		    bool required, enum vn_json_range range, double *out);
/* An integer in [min, max]; what describes it for the message ("an integer >= 1"). */
int vn_json_uint(const struct vn_json_reader *r, struct json_object *v, const char *path, int64_t min, int64_t max,
		 const char *what, unsigned *out);
int vn_json_get_uint(const struct vn_json_reader *r, struct json_object *o, const char *path, const char *key,
		     bool required, int64_t min, int64_t max, const char *what, unsigned *out);

/* Writing: o.key = s, or null for NULL. */
void vn_json_add_str(struct json_object *o, const char *key, const char *s);
/* The same for each {key, s} of members[n]: a record's string members from a table. */
void vn_json_add_strs(struct json_object *o, const char *const members[][2], size_t n);
/*
 * o's member key when it is of the type named, else NULL, 0 or false: for
 * JSON of our own, such as a child process's answer, trusted in content but
 * type-checked so that a bug cannot crash the reader.
 */
const char *vn_json_str(struct json_object *o, const char *key);
int64_t vn_json_int64(struct json_object *o, const char *key);
double vn_json_double(struct json_object *o, const char *key);
bool vn_json_bool(struct json_object *o, const char *key);
/*
 * The same where absent and present must differ (a report's inputs, the
 * guest's trace stream, samples.jsonl): true and *out when the member is
 * there with the type asked, false with *out untouched otherwise; o may be
 * NULL or not an object.
 */
bool vn_json_has_int64(struct json_object *o, const char *key, int64_t *out);
/* A number, integer or not, as a double (json-c reads 1e999 as an infinity). */
bool vn_json_has_number(struct json_object *o, const char *key, double *out);
/* A number that is finite: what a value to print or plot must be. */
bool vn_json_has_finite(struct json_object *o, const char *key, double *out);
/* o's member key when it is of type t (an object, an array...), else NULL. */
struct json_object *vn_json_member(struct json_object *o, const char *key, enum json_type t);
/*
 * A double with the text it is printed as, for json-c prints 17
 * significant digits, binary noise and all. `digits` significant digits
 * (%.*g), or `decimals` after the point (%.*f).
 */
struct json_object *vn_json_new_double_sig(double v, int digits);
struct json_object *vn_json_new_double_fixed(double v, int decimals);
