/* The tiering assertion types (assert-tiers.c): their functions, for their rows in vn_assert_types. */
#pragma once

#include "scenario/schema-priv.h"

struct vn_run_data;
struct vn_run_step_data;

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

/* Shared by the tier types: an assertion that could not be judged (exit 3), and a tiermove step's results. */
int __attribute__((format(printf, 3, 4)))
vn_assert_unobserved(struct vn_error *err, const struct vn_scn_assert *a, const char *fmt, ...);
int vn_assert_tiermove_results(const struct vn_run_data *d, const struct vn_scn_assert *a,
			       const struct vn_run_step_data **out, struct vn_error *err);
/* Each process's pages_max_per_node summed into pages[node]. */
int vn_assert_max_per_node(const struct vn_run_step_data *sd, const struct vn_scn_assert *a, double *pages,
			   struct vn_error *err);
void vn_assert_emit_step(struct json_object *o, const struct vn_scn_assert *a);

/* no_demotion (assert-tiers-limits.c): under reclaim with demotion_enabled false, nothing is demoted. */
int vn_assert_parse_no_demotion(struct vn_scn_ctx *c, struct json_object *v, const char *p, struct vn_scn_assert *a);
int vn_assert_validate_no_demotion(const struct vn_scn_assert *a, const struct vn_topology *t, const char *topo,
				   const char *file, const char *p, struct vn_error *err);
int vn_assert_check_no_demotion(const struct vn_run_data *d, const struct vn_scn_assert *a, struct vn_result_run *rep,
				struct vn_error *err);
char *vn_assert_name_no_demotion(const struct vn_scn_assert *a);

/* promotion_rate: pgpromote_success per phase within kernel.numa_balancing_promote_rate_limit_MBps's windows. */
int vn_assert_parse_promotion_rate(struct vn_scn_ctx *c, struct json_object *v, const char *p, struct vn_scn_assert *a);
int vn_assert_check_promotion_rate(const struct vn_run_data *d, const struct vn_scn_assert *a,
				   struct vn_result_run *rep, struct vn_error *err);
char *vn_assert_name_promotion_rate(const struct vn_scn_assert *a);
