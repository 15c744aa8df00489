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

/* Counter delta after - before for every key in both; keys only in one are skipped. */
struct json_object *vn_metrics_delta(struct json_object *before, struct json_object *after);
