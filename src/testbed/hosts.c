/* The hosts file: one libvirt URI per line, a capacity and a pool dir. */
#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/alloc.h"
#include "util/cleanup.h"
#include "util/file.h"
#include "util/strmap.h"
#include "testbed/hosts.h"
#include "virt/storage.h"

/*
 * A libvirt URI is SCHEME://...; the scheme is what a typo most often
 * loses (a bare host name, a path), so that is what is checked here. Whether
 * the rest reaches a host is for `vnuma hosts check` to say.
 */
static bool uri_looks_valid(const char *uri)
{
	const char *sep = strstr(uri, "://");

	if (!sep || sep == uri || !isalpha((unsigned char)uri[0]))
		return false;
	for (const char *p = uri; p < sep; p++)
		if (!isalnum((unsigned char)*p) && !strchr("+-.", *p))
			return false;
	for (const char *p = uri; *p; p++)
		if (!isgraph((unsigned char)*p))
			return false;
	return true;
}

static const struct vn_host *find(const struct vn_hosts *h, const char *uri)
{
	size_t i;

	return vn_strmap_get(&h->index, uri, &i) ? &h->v[i] : NULL;
}

/* Where a host was given: FILE:LINE, or --connect. */
static void where(const struct vn_host *host, char *buf, size_t len)
{
	if (host->file)
		snprintf(buf, len, "%s:%u", host->file, host->line);
	else
		snprintf(buf, len, "--connect");
}

static int check_uri(const struct vn_hosts *h, const char *ctx, const char *uri, struct vn_error *err)
{
	char first[4200];

	if (!uri_looks_valid(uri))
		return vn_input_error(err, "%snot a libvirt URI '%s' (one like qemu+ssh://user@host/system)", ctx, uri);
	const struct vn_host *dup = find(h, uri);
	if (dup) {
		where(dup, first, sizeof(first));
		return vn_input_error(err, "%sduplicate host '%s' (also given at %s)", ctx, uri, first);
	}
	return 0;
}

static void push(struct vn_hosts *h, struct vn_host *host)
{
	if (h->n == h->cap) {
		h->cap = h->cap ? 2 * h->cap : 16;
		h->v = vn_xreallocarray(h->v, h->cap, sizeof(*h->v));
	}
	/* The URI's string stays where it is when v grows: the index keeps pointing at it. */
	vn_strmap_put(&h->index, host->uri, h->n);
	h->v[h->n++] = *host;
}

static void host_clear(struct vn_host *host)
{
	vn_free_all(host->uri, host->pool_dir, host->file);
	*host = (struct vn_host){0};
}

static int parse_capacity(const char *tok, unsigned *out)
{
	char *end;

	if (strcmp(tok, "auto") == 0) {
		*out = 0;
		return 0;
	}
	if (!isdigit((unsigned char)tok[0]))
		return -EINVAL;
	errno = 0;
	unsigned long n = strtoul(tok, &end, 10);
	if (errno || *end || n < 1 || n > VN_VIRT_HOST_CAPACITY_MAX)
		return -EINVAL;
	*out = (unsigned)n;
	return 0;
}

/*
 * timeout=SECONDS: plain decimal digits (no sign, exponent, hex, nan or
 * inf), above 0, at most VN_HOST_TIMEOUT_MAX_S, at least a millisecond.
 */
static int parse_timeout(const char *val, int *ms)
{
	char *end;

	if (!isdigit((unsigned char)val[0]) || strspn(val, "0123456789.") != strlen(val))
		return -EINVAL;
	errno = 0;
	double s = strtod(val, &end);
	if (errno || *end || !isfinite(s) || s <= 0 || s > VN_HOST_TIMEOUT_MAX_S || s * 1000 < 1)
		return -EINVAL;
	*ms = (int)(s * 1000 + 0.5);
	return 0;
}

/* One line's tokens after the URI into host; ctx is "FILE:LINE: ". */
static int parse_options(char *rest, const char *ctx, struct vn_host *host, struct vn_error *err)
{
	bool have_capacity = false;
	char *save = NULL;

	for (char *tok = strtok_r(rest, " \t\r", &save); tok; tok = strtok_r(NULL, " \t\r", &save)) {
		char *eq = strchr(tok, '=');
		if (!eq) {
			if (have_capacity)
				return vn_input_error(err, "%sa second capacity '%s' (one per host)", ctx, tok);
			if (parse_capacity(tok, &host->capacity) < 0)
				return vn_input_error(err, "%sbad capacity '%s' (guests at once: 1-%u, or auto)", ctx,
						      tok, VN_VIRT_HOST_CAPACITY_MAX);
			have_capacity = true;
			continue;
		}
		*eq = '\0';
		const char *val = eq + 1;
		if (strcmp(tok, "timeout") == 0) {
			if (host->timeout_ms)
				return vn_input_error(err, "%sa second timeout= '%s' (one per host)", ctx, val);
			if (parse_timeout(val, &host->timeout_ms) < 0)
				return vn_input_error(err,
						      "%sbad timeout= '%s' (seconds to wait for the host to answer: a "
						      "number above 0, at most %d)",
						      ctx, val, VN_HOST_TIMEOUT_MAX_S);
			continue;
		}
		if (strcmp(tok, "pool") != 0)
			return vn_input_error(err, "%sunknown key '%s' (known: pool=DIR, timeout=SECONDS)", ctx, tok);
		if (host->pool_dir)
			return vn_input_error(err, "%sa second pool= '%s' (one per host)", ctx, val);
		if (val[0] != '/')
			return vn_input_error(err, "%spool= '%s' is not an absolute path (a directory on that host)",
					      ctx, val);
		host->pool_dir = vn_xstrdup(val);
	}
	return 0;
}

/* '#' starts a comment at the start of a line or after white space; inside a URI it is the URI's. */
static void strip_comment(char *line)
{
	for (char *p = line; *p; p++)
		if (*p == '#' && (p == line || *(p - 1) == ' ' || *(p - 1) == '\t')) {
			*p = '\0';
			return;
		}
}

int vn_testbed_hosts_load(const char *path, struct vn_hosts *out, struct vn_error *err)
{
	_cleanup_free_ char *data = NULL;
	size_t len, before = out->n;
	unsigned lineno = 0;
	int rc;

	if ((rc = vn_file_read(path, VN_HOSTS_FILE_MAX, &data, &len, err)) < 0)
		return rc;
	if (strlen(data) != len)
		return vn_input_error(err, "%s: not a text file (it holds a NUL byte)", path);
	char *next = data;
	while (next) {
		char *line = next;
		char ctx[4200];
		next = strchr(line, '\n');
		if (next)
			*next++ = '\0';
		lineno++;
		snprintf(ctx, sizeof(ctx), "%s:%u: ", path, lineno);
		strip_comment(line);
		line += strspn(line, " \t\r");
		if (!*line)
			continue;
		size_t ulen = strcspn(line, " \t\r");
		_cleanup_free_ char *uri = vn_xstrndup(line, ulen);
		if ((rc = check_uri(out, ctx, uri, err)) < 0)
			return rc;
		struct vn_host host = {.uri = steal_pointer(&uri), .file = vn_xstrdup(path), .line = lineno};
		if ((rc = parse_options(line + ulen, ctx, &host, err)) < 0) {
			host_clear(&host);
			return rc;
		}
		push(out, &host);
	}
	if (out->n == before)
		return vn_input_error(err, "%s: no hosts (one libvirt URI per line, e.g. qemu+ssh://user@host/system)",
				      path);
	return 0;
}

int vn_testbed_hosts_add(struct vn_hosts *h, const char *uri, struct vn_error *err)
{
	int rc;

	if ((rc = check_uri(h, "--connect: ", uri, err)) < 0)
		return rc;
	struct vn_host host = {.uri = vn_xstrdup(uri)};
	push(h, &host);
	return 0;
}

void vn_testbed_hosts_clear(struct vn_hosts *h)
{
	for (size_t i = 0; i < h->n; i++)
		host_clear(&h->v[i]);
	free(h->v);
	vn_strmap_free(&h->index);
	*h = (struct vn_hosts){0};
}
