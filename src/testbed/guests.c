/* The guests vnuma made: those with a dir in the state dir, and a domain looked up as ours. */
#include "testbed/testbed.h"
#include "testbed/testbed-priv.h"

#include <dirent.h>

#include "util/alloc.h"
#include "util/cleanup.h"
#include "util/state.h"

int vn_testbed_guest_names(const char *state_dir, char ***names, struct vn_error *err)
{
	_cleanup_free_ char *buf = NULL, *dir = NULL;
	size_t n = 0;
	int rc;

	if ((rc = vn_state_locate(state_dir, &buf, err)) < 0)
		return rc;
	dir = vn_state_guests_dir(buf);
	char **v = vn_xcalloc(1, sizeof(*v));
	DIR *d = opendir(dir);
	struct dirent *de;
	while (d && (de = readdir(d))) {
		if (de->d_name[0] == '.' || (de->d_type != DT_DIR && de->d_type != DT_UNKNOWN))
			continue;
		v = vn_xreallocarray(v, n + 2, sizeof(*v));
		v[n] = vn_xstrdup(de->d_name);
		v[++n] = NULL;
	}
	if (d)
		closedir(d);
	*names = v;
	return (int)n;
}

int vn_testbed_lookup(struct vn_virt *v, const char *name, struct vn_virt_domain **out, struct vn_error *err)
{
	struct vn_virt_domain *d = NULL;
	struct vn_domain_meta m;
	struct vn_error e = {0};
	bool running = false;
	int rc;

	if ((rc = vn_virt_domain_lookup(v, name, &d, err)) < 0)
		return rc;
	/* Only what vnuma created: a domain without our metadata belongs to someone else. */
	if (vn_virt_domain_metadata(d, &m, &e) < 0) {
		vn_error_clear(&e);
		vn_virt_domain_is_running(d, &running, &e);
		vn_error_clear(&e);
		vn_virt_domain_free(d);
		return vn_input_error(err,
				      "'%s' on %s is a %s domain without vnuma's metadata: vnuma did not create it "
				      "and leaves it alone (use virsh)",
				      name, vn_virt_uri(v), running ? "running" : "stopped");
	}
	vn_domain_meta_clear(&m);
	*out = d;
	return 0;
}

static char *dup_or_null(const char *s)
{
	return s ? vn_xstrdup(s) : NULL;
}

int vn_testbed_guest_list(const struct vn_testbed_ctx *ctx, struct vn_testbed_guest **list, size_t *n,
			  struct vn_error *err)
{
	struct vn_virt *v = NULL;
	struct vn_virt_domain_info *info = NULL;
	size_t ninfo = 0;
	int rc = vn_virt_open(ctx->uri, ctx->state_dir, ctx->lock_timeout_ms, &v, err);

	*list = NULL;
	*n = 0;
	if (rc == 0)
		rc = vn_virt_domain_list(v, &info, &ninfo, err);
	vn_virt_close(v);
	if (rc < 0)
		return rc;
	*list = vn_xcalloc(ninfo + 1, sizeof(**list));
	for (size_t i = 0; i < ninfo; i++) {
		const struct vn_domain_meta *m = &info[i].meta;
		(*list)[i] = (struct vn_testbed_guest){
			.name = vn_xstrdup(info[i].name),
			.running = info[i].running,
			.state = info[i].state,
			.accel = dup_or_null(m->accel),
			.topology_name = dup_or_null(m->topology_name),
			.topology_path = dup_or_null(m->topology_path),
			.kernel = dup_or_null(m->kernel),
			.kernel_id = dup_or_null(m->kernel_id),
			.guest_dir = dup_or_null(m->guest_dir),
		};
	}
	*n = ninfo;
	vn_virt_domain_info_free(info, ninfo);
	return 0;
}

void vn_testbed_guest_list_free(struct vn_testbed_guest *list, size_t n)
{
	for (size_t i = 0; list && i < n; i++) {
		struct vn_testbed_guest *g = &list[i];
		free(g->name);
		free(g->accel);
		free(g->topology_name);
		free(g->topology_path);
		free(g->kernel);
		free(g->kernel_id);
		free(g->guest_dir);
	}
	free(list);
}
