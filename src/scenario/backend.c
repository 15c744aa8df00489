/* The testbed as a run's backend: libvirt and QEMU under every run that names no other. */
#include "scenario/backend.h"

#include "testbed/agent-session.h"
#include "testbed/dump.h"
#include "testbed/down.h"
#include "testbed/image.h"

static int tb_up(void *data, const struct vn_testbed_ctx *ctx, const struct vn_up_opts *o, struct vn_up_result *r,
		 struct vn_error *err)
{
	(void)data;
	return vn_testbed_up(ctx, o, r, err);
}

static int tb_agent(void *data, const struct vn_testbed_ctx *ctx, const char *name, int timeout_ms,
		    struct vn_agent **out, struct vn_error *err)
{
	(void)data;
	return vn_testbed_agent(ctx, name, timeout_ms, out, err);
}

/* A guest that cannot be destroyed is the state dir's to show (vnuma ls); the run's error stays its own. */
static void tb_down(void *data, const struct vn_testbed_ctx *ctx, const char *name, bool died, struct vn_error *why)
{
	struct vn_error ce = {0};
	unsigned n;

	(void)data;
	if (died)
		vn_testbed_down_failed(ctx, name, why, &ce);
	else
		vn_testbed_down(ctx, name, &n, &ce);
	vn_error_clear(&ce);
}

static int tb_postmortem_hold(void *data, const char *guest_dir, const char *aside, struct vn_error *err)
{
	(void)data;
	return vn_testbed_postmortem_hold(guest_dir, aside, err);
}

static int tb_postmortem(void *data, const struct vn_testbed_ctx *ctx, const char *aside, const char *out_dir,
			 struct vn_error *err)
{
	(void)data;
	return vn_testbed_postmortem(ctx, aside, out_dir, err);
}

static int tb_hotplug(void *data, const struct vn_testbed_ctx *ctx, const struct vn_hotplug_req *q, vn_hotplug_sh_fn sh,
		      void *sh_data, struct vn_hotplug_result *r, struct vn_error *err)
{
	(void)data;
	return vn_testbed_hotplug(ctx, q, sh, sh_data, r, err);
}

static int tb_dump(void *data, const struct vn_testbed_ctx *ctx, const char *name, const char *out,
		   struct vn_error *err)
{
	struct vn_dump_req q = {.name = name, .out = out, .format = VN_DUMP_ELF, .debug_root = ""};
	struct vn_dump_result r;
	int rc = vn_testbed_dump(ctx, &q, &r, err);

	(void)data;
	if (rc == 0)
		vn_dump_result_clear(&r);
	return rc;
}

const struct vn_run_backend vn_run_backend_testbed = {
	.up = tb_up,
	.agent = tb_agent,
	.down = tb_down,
	.postmortem_hold = tb_postmortem_hold,
	.postmortem = tb_postmortem,
	.hotplug = tb_hotplug,
	.dump = tb_dump,
};
