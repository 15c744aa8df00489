/* An agent session with a running guest, and a command run through it (agent-session.c). */
#pragma once

#include "guest/agent.h"
#include "testbed/testbed.h"

/* Connect and hello to a guest that is up (exec, collect, status, run after boot), in ms. */
#define VN_TESTBED_AGENT_MS 10000

/*
 * Agent connection to a running guest, by name. Local guests need no libvirt
 * connection (their channel's socket is in the guest dir); a guest on another
 * host is reached over its channel stream, the connection held by this process.
 * Its waits end within about 2 s of the guest's death (powered off, reset,
 * panicked: the console's last words; its QEMU gone) with an infrastructure
 * error naming the cause, the console tail in its detail (virt/virt.h's watch).
 */
int vn_testbed_agent(const struct vn_testbed_ctx *ctx, const char *name, int timeout_ms, struct vn_agent **out,
		     struct vn_error *err);

/* vn_testbed_agent for a guest on this host only; links no libvirt (agent-local.c, for cli/front.c). */
int vn_testbed_agent_local(const struct vn_testbed_ctx *ctx, const char *name, int timeout_ms, struct vn_agent **out,
			   struct vn_error *err);

/* The watch of NAME's death (virt/console.h), and the hello over *a under it: *a closed and NULL on failure. */
struct vn_virt_watch *vn_testbed_agent_watch(const struct vn_testbed_ctx *ctx, const char *name);
int vn_testbed_agent_greet(struct vn_agent **a, struct vn_virt_watch *w, int timeout_ms, struct vn_error *err);

/*
 * Run a command in the guest and collect stdout (exit code must be 0): at most
 * VN_AGENT_EXEC_BUF_MAX bytes, then a line saying the output was truncated.
 */
int vn_testbed_run(struct vn_agent *a, const char *const *argv, double timeout_s, char **out, struct vn_error *err);
