/* Shared by the scenario schema's files (schema.c, schema-parse.c, schema-emit.c) and the assertion types (assert.c). */
#pragma once

#include <stdbool.h>
#include <stddef.h>

#include <json-c/json.h>

#include "report/report.h"
#include "scenario/scenario.h"
#include "util/json.h"

struct vn_topology;
struct vn_run_data;

/* JSON names of the enums in scenario.h, indexed by them, NULL-terminated. */
extern const char *const vn_scn_workloads[];
extern const char *const vn_scn_thp_modes[];
extern const char *const vn_scn_boot_modes[]; /* "boot": a snapshot restored where one fits, or always cold */
extern const char *const vn_scn_policies[];   /* enum vn_placement_policy */
extern const char *const vn_scn_op_names[];   /* enum vn_scn_op */

/* The parser's state: where errors go, and the scenario as read so far (its steps come before its assertions). */
struct vn_scn_ctx {
	struct vn_json_reader r;
	struct vn_scenario *s;
};

#define VN_SCN_NODE_WHAT "a node number (0-127)"

/* A step's "suite" (schema-suite.c): parsed when it runs "suite", refused on any other; its JSON, copy and free. */
int vn_scn_suite_parse(struct vn_scn_ctx *c, struct json_object *step, const char *sp, struct vn_scn_step *st);
struct json_object *vn_scn_suite_json(const struct vn_scn_suite *su);
struct vn_scn_suite *vn_scn_suite_copy(const struct vn_scn_suite *su);
void vn_scn_suite_free(struct vn_scn_suite *su);

/* Parts of an assertion's JSON the types share (schema-parse.c). */
int vn_scn_step_ref(struct vn_scn_ctx *c, struct json_object *o, const char *path, char **out);
int vn_scn_counter_name(struct vn_scn_ctx *c, struct json_object *o, const char *path, const char *key, char **out);
int vn_scn_parse_op(struct vn_scn_ctx *c, struct json_object *o, const char *path, enum vn_scn_op *op);
/* The shortest JSON number that reads back as d (schema-emit.c). */
struct json_object *vn_scn_json_num(double d);
/* Node n exists in topology t (file topo), and has CPUs if need_cpus; else an input error "FILE: P: ...". */
int vn_scn_node_ok(const char *file, const struct vn_topology *t, const char *topo, const char *p, unsigned n,
		   bool need_cpus, struct vn_error *err);

/*
 * One assertion type, whole: a new type is one row of vn_assert_types
 * (assert.c) and its functions beside it; nothing else switches on the type.
 */
struct vn_assert_type {
	const char *json;    /* its "type" in a scenario file */
	const char *keys[8]; /* the keys it takes, "type" and "name" first, NULL-terminated */
	/* $.assertions[i] (path p) into a; type and name are read already. */
	int (*parse)(struct vn_scn_ctx *c, struct json_object *v, const char *p, struct vn_scn_assert *a);
	/* Its keys back into o (schema-emit.c); type and name are written already. */
	void (*emit)(struct json_object *o, const struct vn_scn_assert *a);
	/* What it names in topology t (read from topo), before anything boots (check.c); errors "FILE: P.KEY: ...". */
	int (*validate)(const struct vn_scn_assert *a, const struct vn_topology *t, const char *topo, const char *file,
			const char *p, struct vn_error *err);
	/* One verdict into rep, or an infrastructure error when what it asks about was not observed. */
	int (*judge)(const struct vn_run_data *d, const struct vn_scn_assert *a, struct vn_result_run *rep,
		     struct vn_error *err);
	/* The name an assertion without one gets: what it asks, in words (malloc'd). */
	char *(*name)(const struct vn_scn_assert *a);
	/* What kind of number its verdict hands to the metrics (assert.NAME), or none. */
	enum vn_observed_kind observed;
};

extern const struct vn_assert_type vn_assert_types[VN_ASSERT_NTYPES]; /* indexed by enum vn_scn_assert_type */

/* The name an assertion without one gets (the type's name function). */
char *vn_scn_assert_default_name(const struct vn_scn_assert *a);
