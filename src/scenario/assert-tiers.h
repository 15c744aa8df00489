/* The tiering assertion types (assert-tiers.c): their functions, for their rows in vn_assert_types. */
#pragma once

#include "scenario/schema-priv.h"

/* demotion_targets: pages a tiermove step bound to node "from" lost went only to the model's targets. */
int vn_assert_parse_demotion(struct vn_scn_ctx *c, struct json_object *v, const char *p, struct vn_scn_assert *a);
void vn_assert_emit_demotion(struct json_object *o, const struct vn_scn_assert *a);
int vn_assert_validate_demotion(const struct vn_scn_assert *a, const struct vn_topology *t, const char *topo,
				const char *file, const char *p, struct vn_error *err);
int vn_assert_check_demotion(const struct vn_run_data *d, const struct vn_scn_assert *a, struct vn_result_run *rep,
			     struct vn_error *err);
char *vn_assert_name_demotion(const struct vn_scn_assert *a);

/* promotion: a tiermove step's hot pages on a lower tier reach the top tier within each phase, as promotions. */
int vn_assert_parse_promotion(struct vn_scn_ctx *c, struct json_object *v, const char *p, struct vn_scn_assert *a);
void vn_assert_emit_promotion(struct json_object *o, const struct vn_scn_assert *a);
int vn_assert_validate_promotion(const struct vn_scn_assert *a, const struct vn_topology *t, const char *topo,
				 const char *file, const char *p, struct vn_error *err);
int vn_assert_check_promotion(const struct vn_run_data *d, const struct vn_scn_assert *a, struct vn_result_run *rep,
			      struct vn_error *err);
char *vn_assert_name_promotion(const struct vn_scn_assert *a);
