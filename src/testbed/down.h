/* vnuma down: take guests down, or one that died keeping its logs (down.c, in a child by child.c). */
#pragma once

#include "testbed/testbed.h"
#include "util/error.h"

/* Destroy one guest (name, via vn_testbed_lookup) or every vnuma guest (name NULL); *count says how many. */
int vn_testbed_down(const struct vn_testbed_ctx *ctx, const char *name, unsigned *count, struct vn_error *err);

/*
 * A guest that died under a command (vn_agent_watch_fired()): destroyed like
 * a failed boot, its logs kept as STATE_DIR/failed/NAME-UTC, and that path
 * added to the detail of why, the error that reported the death.
 */
int vn_testbed_down_failed(const struct vn_testbed_ctx *ctx, const char *name, struct vn_error *why,
			   struct vn_error *err);
