/* Shared by the scenario schema's files (schema.c, schema-parse.c, schema-emit.c). */
#pragma once

#include "scenario/scenario.h"

/* JSON names of the enums in scenario.h, indexed by them, NULL-terminated. */
extern const char *const vn_scn_workloads[];
extern const char *const vn_scn_thp_modes[];
extern const char *const vn_scn_policies[];     /* enum vn_placement_policy */
extern const char *const vn_scn_op_names[];     /* enum vn_scn_op */
extern const char *const vn_scn_assert_types[]; /* enum vn_scn_assert_type */

/* The name an assertion without one gets: what it asks, in words (malloc'd). */
char *vn_scn_assert_default_name(const struct vn_scn_assert *a);
