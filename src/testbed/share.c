/* Shared directories and copied files: their specs, the guest's mounts, the copies (share.h). */
#include "testbed/share.h"

#include <errno.h>
#include <libgen.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "guest/agent-exec.h"
#include "guest/copy.h"
#include "util/alloc.h"
#include "util/cleanup.h"
#include "util/strbuf.h"
#include "util/host-spec.h"

/* The host path of spec's first part, absolute and resolved; what must be true of it checked by the caller. */
static int host_path(const char *spec, const char *p, size_t len, const char *base_dir, char **out, struct stat *st,
		     struct vn_error *err)
{
	_cleanup_free_ char *given = vn_xstrndup(p, len);
	_cleanup_free_ char *joined =
		given[0] != '/' && base_dir ? vn_xasprintf("%s/%s", base_dir, given) : vn_xstrdup(given);
	char *real;

	if (!len)
		return vn_input_error(err, "'%s': no host path", spec);
	if (!(real = realpath(joined, NULL)) || stat(real, st) < 0) {
		int e = errno;
		free(real);
		return vn_input_error(err, "'%s': %s: %s", spec, joined, strerror(e));
	}
	*out = real;
	return 0;
}

static char *default_guest(const char *root, const char *host)
{
	_cleanup_free_ char *copy = vn_xstrdup(host);
	return vn_xasprintf("%s/%s", root, basename(copy));
}

int vn_share_parse(const char *spec, const char *base_dir, struct vn_domain_share *out, struct vn_error *err)
{
	_cleanup_free_ char *guest = NULL, *host = NULL;
	struct stat st;
	size_t hlen;
	bool rw;
	int rc;

	if ((rc = vn_share_split(spec, &hlen, &guest, &rw, err)) < 0 ||
	    (rc = host_path(spec, spec, hlen, base_dir, &host, &st, err)) < 0)
		return rc;
	if (!S_ISDIR(st.st_mode))
		return vn_input_error(err, "'%s': %s is not a directory", spec, host);
	if (!guest)
		guest = default_guest(VN_SHARE_GUEST_ROOT, host);
	*out = (struct vn_domain_share){.source = steal_pointer(&host), .guest_dir = steal_pointer(&guest), .rw = rw};
	return 0;
}

void vn_share_free_all(struct vn_domain_share *v, unsigned n)
{
	for (unsigned i = 0; v && i < n; i++)
		vn_free_all(v[i].source, v[i].guest_dir);
	free(v);
}

int vn_share_parse_all(const char *const *specs, const char *base_dir, struct vn_domain_share **out, unsigned *n,
		       struct vn_error *err)
{
	unsigned count = 0;
	int rc = 0;

	for (const char *const *p = specs; p && *p; p++)
		count++;
	*out = NULL;
	*n = 0;
	if (count > VN_DOMAIN_MAX_SHARES)
		return vn_input_error(err, "%u shared directories, at most %d", count, VN_DOMAIN_MAX_SHARES);
	struct vn_domain_share *v = vn_xcalloc(count ? count : 1, sizeof(*v));
	for (unsigned i = 0; i < count && rc == 0; i++) {
		if ((rc = vn_share_parse(specs[i], base_dir, &v[i], err)) < 0)
			break;
		for (unsigned j = 0; j < i; j++)
			if (strcmp(v[j].guest_dir, v[i].guest_dir) == 0) {
				rc = vn_input_error(err, "'%s': %s is already the guest path of '%s'", specs[i],
						    v[i].guest_dir, specs[j]);
				break;
			}
	}
	if (rc < 0) {
		vn_share_free_all(v, count);
		return rc;
	}
	*out = v;
	*n = count;
	return 0;
}

int vn_file_spec_parse(const char *spec, const char *base_dir, char **host, char **guest, struct vn_error *err)
{
	const char *colon = strchr(spec, ':');
	_cleanup_free_ char *h = NULL, *g = NULL;
	struct stat st;
	int rc;

	if ((rc = host_path(spec, spec, colon ? (size_t)(colon - spec) : strlen(spec), base_dir, &h, &st, err)) < 0)
		return rc;
	if (!S_ISREG(st.st_mode))
		return vn_input_error(err, "'%s': %s is not a regular file (a directory goes through --share)", spec,
				      h);
	g = colon ? vn_xstrdup(colon + 1) : default_guest("/root", h);
	if ((rc = vn_guest_path_check(spec, g, err)) < 0)
		return rc;
	*host = steal_pointer(&h);
	*guest = steal_pointer(&g);
	return 0;
}

int vn_file_specs_check(const char *const *specs, const char *base_dir, struct vn_error *err)
{
	unsigned n = 0;

	for (const char *const *p = specs; p && *p; p++, n++) {
		_cleanup_free_ char *h = NULL, *g = NULL;
		int rc = vn_file_spec_parse(*p, base_dir, &h, &g, err);
		if (rc < 0)
			return rc;
	}
	if (n > VN_FILES_MAX)
		return vn_input_error(err, "%u files to copy in, at most %d (a tree goes through --share)", n,
				      VN_FILES_MAX);
	return 0;
}

/* argv in the guest; a non-zero exit is an infrastructure error with what it printed. */
static int guest_run(struct vn_agent *a, const char *const *argv, struct vn_error *err)
{
	_cleanup_strbuf_ struct vn_strbuf out = VN_STRBUF_INIT;
	struct vn_agent_exec_opts o = {
		.argv = argv,
		.stdin_fd = -1,
		.stdout_fd = -1,
		.stderr_fd = -1,
		.stderr_buf = &out,
		.buf_max = 4096,
		.timeout_s = 30,
	};
	int status, rc;

	if ((rc = vn_agent_exec(a, &o, &status, err)) < 0)
		return rc;
	if (status != 0)
		return vn_infra_error(err, -EIO, "guest: %s %s exited %d: %s", argv[0], argv[1], status,
				      out.s ? out.s : "");
	return 0;
}

int vn_share_mount(struct vn_agent *a, const struct vn_domain_share *v, unsigned n, struct vn_error *err)
{
	int rc;

	for (unsigned i = 0; i < n; i++) {
		char tag[32];
		snprintf(tag, sizeof(tag), VN_DOMAIN_SHARE_TAG, i);
		/* msize 512 KiB: 9p's default 8 KiB makes a 100 MB read thousands of round trips more. */
		const char *opts = v[i].rw ? "trans=virtio,version=9p2000.L,msize=524288,cache=loose,rw"
					   : "trans=virtio,version=9p2000.L,msize=524288,cache=loose,ro";
		const char *mk[] = {"mkdir", "-p", v[i].guest_dir, NULL};
		const char *mnt[] = {"mount", "-t", "9p", "-o", opts, tag, v[i].guest_dir, NULL};
		if ((rc = guest_run(a, mk, err)) < 0 || (rc = guest_run(a, mnt, err)) < 0)
			return vn_error_prefix(err, "mounting %s at %s", v[i].source, v[i].guest_dir);
	}
	return 0;
}

int vn_files_put(struct vn_agent *a, const char *const *specs, const char *base_dir, struct vn_error *err)
{
	int rc;

	for (const char *const *p = specs; p && *p; p++) {
		_cleanup_free_ char *h = NULL, *g = NULL;
		if ((rc = vn_file_spec_parse(*p, base_dir, &h, &g, err)) < 0)
			return rc;
		_cleanup_free_ char *gcopy = vn_xstrdup(g);
		const char *mk[] = {"mkdir", "-p", dirname(gcopy), NULL};
		const char *srcs[] = {h};
		struct vn_copy_opts co = {0};
		struct vn_copy_stats st = {0};
		if ((rc = guest_run(a, mk, err)) < 0 || (rc = vn_copy_in(a, srcs, 1, g, &co, &st, err)) < 0)
			return vn_error_prefix(err, "copying %s to %s", h, g);
	}
	return 0;
}
