/*
 * A struct's scalar members as one JSON object, from one table of them
 * (key, kind, offset) that is both the writer's and the reader's: a member
 * is written and read in one place. For the structs that cross a process
 * as text (a boot's result, a matrix cell's end), where a child's bug must
 * be an error and not a crash or a wrong value: the reader is bounded and
 * checks every key and type.
 */
#pragma once

#include <stddef.h>

#include "util/json.h"

enum vn_json_kind {
	VN_JSON_M_STR,  /* char *, NULL written as null */
	VN_JSON_M_NUM,  /* double, finite */
	VN_JSON_M_UINT, /* unsigned */
	VN_JSON_M_BOOL, /* bool */
	VN_JSON_M_ENUM, /* int (or an enum) in [min, max], min >= 0 */
};

struct vn_json_member {
	const char *key;
	enum vn_json_kind kind;
	size_t off;
	int min, max;     /* VN_JSON_M_ENUM */
	const char *what; /* VN_JSON_M_ENUM: the range for the message, "0 (tcg) or 1 (kvm)" */
};

/* A table's entry for member f of struct type T. */
#define VN_JSON_MEMBER(T, f, kind)                   \
	{                                            \
#f, kind, offsetof(T, f), 0, 0, NULL \
	}
#define VN_JSON_MEMBER_ENUM(T, f, lo, hi, what)                  \
	{                                                        \
#f, VN_JSON_M_ENUM, offsetof(T, f), lo, hi, what \
	}

/* s's members[n] as a new object (the caller may add more, and puts it). */
struct json_object *vn_json_members_new(const void *s, const struct vn_json_member *members, size_t n);
/*
 * text (at most max bytes) into s's members[n]; every key must be one of
 * members or of the NULL-terminated extra (which the caller reads from
 * *out, or NULL). A missing member (but a string, which is NULL), a wrong
 * type, a number out of range is an input error "name: $.key: what".
 * *out, when asked, gets the object (also on error; put it).
 */
int vn_json_members_parse(const char *text, const char *name, size_t max, const struct vn_json_member *members,
			  size_t n, const char *const *extra, void *s, struct json_object **out, struct vn_error *err);
