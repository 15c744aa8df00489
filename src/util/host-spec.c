/* The syntax of --share and --file specs, no file system (host-spec.h). */
#include "util/host-spec.h"

#include <string.h>

#include "util/alloc.h"
#include "util/cleanup.h"

/* A guest path: absolute, no "..", nothing a mount point or the agent would read otherwise. */
int vn_guest_path_check(const char *spec, const char *g, struct vn_error *err)
{
	if (g[0] != '/')
		return vn_input_error(err, "'%s': the guest path '%s' is not absolute", spec, g);
	if (strstr(g, "/../") || (strlen(g) >= 3 && strcmp(g + strlen(g) - 3, "/..") == 0))
		return vn_input_error(err, "'%s': the guest path '%s' has '..' in it", spec, g);
	for (const unsigned char *c = (const unsigned char *)g; *c; c++)
		if (*c < 0x20 || *c == ',')
			return vn_input_error(err, "'%s': the guest path has a control character or a comma", spec);
	if (strcmp(g, "/") == 0)
		return vn_input_error(err, "'%s': the guest path cannot be /", spec);
	return 0;
}

int vn_share_split(const char *spec, size_t *hlen, char **guestp, bool *rwp, struct vn_error *err)
{
	const char *colon = strchr(spec, ':');
	_cleanup_free_ char *guest = NULL;
	bool rw = false;
	int rc;

	*hlen = colon ? (size_t)(colon - spec) : strlen(spec);
	if (!*hlen)
		return vn_input_error(err, "'%s': no host directory", spec);
	if (colon) {
		const char *rest = colon + 1, *mode = strrchr(rest, ':');
		const char *last = mode ? mode + 1 : rest;
		if (strcmp(last, "ro") == 0 || strcmp(last, "rw") == 0) {
			rw = last[1] == 'w';
			guest = mode ? vn_xstrndup(rest, (size_t)(mode - rest)) : NULL;
		} else if (mode) {
			return vn_input_error(err, "'%s': '%s' is neither ro nor rw", spec, last);
		} else {
			guest = vn_xstrdup(rest);
		}
		if (guest && !*guest)
			return vn_input_error(err, "'%s': an empty guest path", spec);
	}
	if (guest && (rc = vn_guest_path_check(spec, guest, err)) < 0)
		return rc;
	*guestp = steal_pointer(&guest);
	*rwp = rw;
	return 0;
}

int vn_file_spec_check(const char *spec, struct vn_error *err)
{
	const char *colon = strchr(spec, ':');

	if (colon == spec || !*spec)
		return vn_input_error(err, "'%s': no host path", spec);
	return colon ? vn_guest_path_check(spec, colon + 1, err) : 0;
}
