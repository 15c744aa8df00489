#include "guest/modules-dep.h"

#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/alloc.h"
#include "util/cleanup.h"
#include "util/dir.h"
#include "util/strbuf.h"
#include "util/file.h"

struct moddep {
	char *rel;  /* path relative to the modules dir, points into the file buffer */
	char *deps; /* space-separated relative paths, ditto */
	int state;  /* 0 unvisited, 1 in progress, 2 ordered */
};

/* Module names treat '-' and '_' alike, as modprobe does. */
static bool modname_eq(const char *rel, const char *name)
{
	const char *base = strrchr(rel, '/');
	base = base ? base + 1 : rel;
	size_t n = strcspn(base, ".");
	if (strlen(name) != n || strncmp(base + n, ".ko", 3) != 0)
		return false;
	for (size_t i = 0; i < n; i++) {
		char a = base[i] == '-' ? '_' : base[i];
		char b = name[i] == '-' ? '_' : name[i];
		if (a != b)
			return false;
	}
	return true;
}

static bool is_builtin(const char *moddir, const char *name)
{
	_cleanup_free_ char *path = vn_xasprintf("%s/modules.builtin", moddir), *text = NULL;

	if (vn_file_read(path, VN_FILE_STATE_MAX, &text, &(size_t){0}, NULL) < 0)
		return false;
	char *save = NULL;
	for (char *line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save))
		if (modname_eq(line, name))
			return true;
	return false;
}

static struct moddep *moddep_find(struct moddep *v, size_t n, const char *rel)
{
	for (size_t i = 0; i < n; i++)
		if (strcmp(v[i].rel, rel) == 0)
			return &v[i];
	return NULL;
}

/* Depth-first: a module is appended only after everything it depends on. */
static int moddep_visit(struct moddep *v, size_t n, struct moddep *m, struct vn_strbuf *order, const char *dep_path,
			struct vn_error *err)
{
	if (m->state == 2)
		return 0;
	if (m->state == 1)
		return vn_input_error(err, "%s: dependency cycle through %s", dep_path, m->rel);
	m->state = 1;
	_cleanup_free_ char *deps = vn_xstrdup(m->deps);
	char *save = NULL;
	for (char *d = strtok_r(deps, " \t", &save); d; d = strtok_r(NULL, " \t", &save)) {
		struct moddep *dm = moddep_find(v, n, d);
		if (!dm)
			return vn_input_error(err, "%s: %s depends on %s, which has no entry", dep_path, m->rel, d);
		int r = moddep_visit(v, n, dm, order, dep_path, err);
		if (r < 0)
			return r;
	}
	m->state = 2;
	vn_strbuf_printf(order, "%s\n", m->rel);
	return 0;
}

int vn_modules_dep_order(const char *moddir, const char *const *names, const char *pkg, char ***order,
			 struct vn_error *err)
{
	_cleanup_free_ char *dep_path = vn_xasprintf("%s/modules.dep", moddir), *text = NULL, *ordered = NULL;
	_cleanup_free_ struct moddep *v = NULL;
	_cleanup_strbuf_ struct vn_strbuf ob = VN_STRBUF_INIT;
	size_t n = 0, cap = 0, count = 0;
	int r;

	struct vn_error rerr = {0};
	if ((r = vn_file_read(dep_path, VN_FILE_STATE_MAX, &text, &(size_t){0}, &rerr)) < 0) {
		char hint[128] = "";
		if (pkg)
			snprintf(hint, sizeof(hint), " (install the Debian package %s)", pkg);
		r = vn_infra_error(err, r, "cannot read %s%s", rerr.msg, hint);
		vn_error_clear(&rerr);
		return r;
	}
	/* "kernel/a/b.ko: kernel/c.ko kernel/d.ko" per line; parsed in place. */
	char *save = NULL;
	for (char *line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		char *colon = strchr(line, ':');
		if (!colon)
			continue;
		*colon = '\0';
		if (n == cap) {
			cap = cap ? 2 * cap : 1024;
			v = vn_xreallocarray(v, cap, sizeof(*v));
		}
		v[n++] = (struct moddep){.rel = line, .deps = colon + 1};
	}

	for (const char *const *name = names; *name; name++) {
		struct moddep *m = NULL;
		for (size_t i = 0; i < n && !m; i++)
			if (modname_eq(v[i].rel, *name))
				m = &v[i];
		if (!m) {
			if (is_builtin(moddir, *name))
				continue;
			return vn_input_error(err, "kernel module %s is not in %s", *name, dep_path);
		}
		if ((r = moddep_visit(v, n, m, &ob, dep_path, err)) < 0)
			return r;
	}

	ordered = vn_strbuf_steal(&ob);
	for (const char *c = ordered; *c; c++)
		count += *c == '\n';
	char **out = vn_xcalloc(count + 1, sizeof(char *));
	size_t k = 0;
	save = NULL;
	for (char *rel = strtok_r(ordered, "\n", &save); rel; rel = strtok_r(NULL, "\n", &save))
		out[k++] = vn_xstrdup(rel);
	*order = out;
	return 0;
}
