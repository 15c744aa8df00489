/* Parsers for the kernel's counter files: /proc/vmstat, nodeN/numastat and meminfo files. */
#pragma once

#include <json-c/json.h>

#include "util/error.h"

/*
 * Parse "key value", "key: value kB" and "Node N key: value kB" lines into a
 * JSON object of integers (kB values stay in kB, the key says so: "MemTotal_kB").
 * Lines that carry no integer are skipped.
 */
int vn_metrics_parse_kv(const char *text, struct json_object **out, struct vn_error *err);

enum vn_counter_delta {
	VN_DELTA_OK,          /* *out = after - before, negative for a counter that went back */
	VN_DELTA_NEITHER,     /* in neither snapshot */
	VN_DELTA_BEFORE_ONLY, /* in one snapshot only */
	VN_DELTA_AFTER_ONLY,
	VN_DELTA_NOT_INT, /* in both, and not an integer in one of them */
};

/*
 * Counter key's change between two snapshots of one counter file (objects
 * of integers, as vn_metrics_parse_kv makes them); *out is set only for
 * VN_DELTA_OK. Exact as an int64 difference; only one beyond int64 is
 * rounded, as a difference of doubles.
 */
enum vn_counter_delta vn_metrics_counter_delta(struct json_object *before, struct json_object *after, const char *key,
					       double *out);
