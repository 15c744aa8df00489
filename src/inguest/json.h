/* The in-guest JSON writer (json.c): one object a workload, on stdout. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "inguest/buf.h"

struct ig_topo;

struct ig_json {
	struct ig_buf b; /* b.s is the text so far */
	int depth;
	bool first[32]; /* no member written yet at this depth */
};
void ig_json_init(struct ig_json *j);
/* Starts a new document, keeping the memory. */
void ig_json_reset(struct ig_json *j);
void ig_json_free(struct ig_json *j);
/* key is NULL inside arrays (and for the top-level value). */
void ig_json_obj_begin(struct ig_json *j, const char *key);
void ig_json_obj_end(struct ig_json *j);
void ig_json_arr_begin(struct ig_json *j, const char *key);
void ig_json_arr_end(struct ig_json *j);
void ig_json_str(struct ig_json *j, const char *key, const char *v); /* NULL -> null */
/* n bytes at v, which may hold anything (a task's comm). */
void ig_json_str_n(struct ig_json *j, const char *key, const char *v, size_t n);
/*
 * "key suffix":text as given: key[0..klen) and suffix (or NULL) need no
 * escaping and text[0..n) is a JSON value already, such as a number as the
 * kernel printed it. For the sampler's hot path: no escaping, no printf.
 */
void ig_json_raw(struct ig_json *j, const char *key, size_t klen, const char *suffix, const char *text, size_t n);
void ig_json_int(struct ig_json *j, const char *key, long long v);
void ig_json_uint(struct ig_json *j, const char *key, unsigned long long v);
void ig_json_double(struct ig_json *j, const char *key, double v); /* %.10g; NaN/inf -> null */
/* v with exactly `decimals` digits after the point; NaN/inf -> null. */
void ig_json_fixed(struct ig_json *j, const char *key, double v, int decimals);
void ig_json_bool(struct ig_json *j, const char *key, bool v);
void ig_json_null(struct ig_json *j, const char *key);
/*
 * Appends s[0..n) as a JSON string (with quotes): quotes, backslashes and
 * control characters escaped, valid UTF-8 kept, each invalid byte U+FFFD.
 */
void ig_json_escape(struct ig_buf *b, const char *s, size_t n);
/* Where the next value will go, to take it back (a record found stale half way). */
struct ig_json_mark {
	size_t len;
	int depth;
	bool first;
};
struct ig_json_mark ig_json_mark(const struct ig_json *j);
void ig_json_rewind(struct ig_json *j, struct ig_json_mark m);
/* {"0":n,"1":m,...} over online nodes (plus any node with a count); counts[VN_MAX_NODES]. */
void ig_json_node_counts(struct ig_json *j, const char *key, const struct ig_topo *t, const uint64_t *counts);
/* The same nodes with each count's share of all counts (0 when all are 0). */
void ig_json_node_shares(struct ig_json *j, const char *key, const struct ig_topo *t, const uint64_t *counts);
/* v, or null when v < 0: the seconds until something that may never have come. */
void ig_json_time(struct ig_json *j, const char *key, double v);
/*
 * Starts a workload's result object with its header: "workload" (the name
 * given to ig_workload_init), "version", "pid", "nodes", "cpus", "numa".
 */
void ig_json_result_begin(struct ig_json *j, const struct ig_topo *t);
/* Writes the text plus '\n' on stdout in one write(2) (after flushing stdio); 0 or -errno. */
int ig_json_print(struct ig_json *j);
/*
 * Closes what ig_json_result_begin opened, prints it and frees j. A result
 * that cannot be written is fatal (exit 3): the host must see no result
 * rather than a workload that claims success without one.
 */
void ig_json_result_end(struct ig_json *j);
