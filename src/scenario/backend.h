/*
 * What a run asks of the machine under it: boot a guest, connect to its
 * agent, take it down. The testbed (libvirt and QEMU) by default; unit tests
 * hand the runner a guest that is the host itself, its agent on a socketpair.
 */
#pragma once

#include <stdbool.h>

#include "guest/agent-client.h"
#include "testbed/hotplug-guest.h"
#include "testbed/testbed.h"
#include "testbed/up.h"

struct vn_run_backend {
	int (*up)(void *data, const struct vn_testbed_ctx *ctx, const struct vn_up_opts *o, struct vn_up_result *r,
		  struct vn_error *err);
	int (*agent)(void *data, const struct vn_testbed_ctx *ctx, const char *name, int timeout_ms,
		     struct vn_agent **out, struct vn_error *err);
	/* After the agent is closed. died: it died under the run; why (the run's error) gets where its logs went. */
	void (*down)(void *data, const struct vn_testbed_ctx *ctx, const char *name, bool died, struct vn_error *why);
	/* A failed disk guest's overlay set aside (> 0), then its logs copied out (vn_testbed_postmortem*). */
	int (*postmortem_hold)(void *data, const char *guest_dir, const char *aside, struct vn_error *err);
	int (*postmortem)(void *data, const struct vn_testbed_ctx *ctx, const char *aside, const char *out_dir,
			  struct vn_error *err);
	/* libvirt's half of a hotplug, the guest's through sh (vn_testbed_hotplug); NULL: refused, an infra error. */
	int (*hotplug)(void *data, const struct vn_testbed_ctx *ctx, const struct vn_hotplug_req *q,
		       vn_hotplug_sh_fn sh, void *sh_data, struct vn_hotplug_result *r, struct vn_error *err);
	/* A memory dump of the guest into out and out.json (vn_testbed_dump); NULL: none kept. */
	int (*dump)(void *data, const struct vn_testbed_ctx *ctx, const char *name, const char *out,
		    struct vn_error *err);
	const char *libdir; /* where the guest has vnuma's programs (NULL: VN_RUN_GUEST_LIBDIR) */
	const char *rundir; /* where the steps leave their pidfiles in the guest (NULL: VN_RUN_GUEST_RUNDIR) */
	void *data;
};

/* When `run --dump-on` keeps a dump of the guest (RUN_DIR/vmcore): never, on its panic, on any failure. */
enum vn_run_dump_on { VN_DUMP_ON_NONE, VN_DUMP_ON_PANIC, VN_DUMP_ON_FAIL };
#define VN_RUN_DUMP_FILE "vmcore"

#define VN_RUN_GUEST_LIBDIR "/usr/lib/vnuma"
#define VN_RUN_GUEST_RUNDIR "/tmp/vnuma-run"

/* The testbed's: what a run without a backend of its own gets. */
extern const struct vn_run_backend vn_run_backend_testbed;
