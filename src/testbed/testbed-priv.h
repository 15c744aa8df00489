/* The testbed's own: the work vn_testbed_up/down do in a child process (isolate.c). */
#pragma once

#include "testbed/testbed.h"

int vn_testbed_up_here(const struct vn_testbed_ctx *ctx, const struct vn_up_opts *o, struct vn_up_result *r,
		       struct vn_error *err);
int vn_testbed_down_here(const struct vn_testbed_ctx *ctx, const char *name, unsigned *count, struct vn_error *err);

/* hotplug.c's guest half, for its tests: the script for a plan, and what its output says. */
char *vn_testbed_hotplug_script(const struct vn_hotplug_req *q, const struct vn_hotplug_plan *p);
int vn_testbed_hotplug_report(const char *out, const struct vn_hotplug_req *q, struct vn_hotplug_result *r,
			      struct vn_error *err);

/* The in-guest programs as "HOST:GUEST" pairs (agent, sampler, workloads), NULL-terminated. */
int vn_testbed_helper_files(char ***out, struct vn_error *err);
