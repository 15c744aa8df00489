/* run --dump-on: the guest's memory kept beside the run's results (runner-priv.h). */
#include <stdio.h>

#include "scenario/runner-priv.h"
#include "util/alloc.h"
#include "util/cleanup.h"

void vn_run_keep_dump(const struct run *r, enum vn_run_dump_on on, bool died, unsigned failures)
{
	/* A guest that died is the panic case; "fail" adds any failed assertion on a guest still running. */
	bool wanted = on != VN_DUMP_ON_NONE && (died || (on == VN_DUMP_ON_FAIL && failures > 0));

	if (!wanted || !r->guest || !r->be->dump)
		return;
	_cleanup_free_ char *out = vn_xasprintf("%s/%s", r->dir, VN_RUN_DUMP_FILE);
	_cleanup_free_ char *what = vn_xasprintf("%s (%s)", out, died ? "the guest died" : "an assertion failed");
	struct vn_error e = {0};
	if (r->progress)
		r->progress(r->progress_data, "dumping", what);
	if (r->be->dump(r->be->data, r->ctx, r->guest, out, &e) < 0 && r->progress) {
		_cleanup_free_ char *why = vn_xasprintf("no dump kept: %s", e.msg);
		r->progress(r->progress_data, "dumping", why);
	}
	vn_error_clear(&e);
}
