#include "guest/modules-dep.h"

#include <errno.h>
#include <libkmod.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <syslog.h>
#include <unistd.h>

#include "util/alloc.h"
#include "util/cleanup.h"

VN_DEFINE_CLEANUP(struct kmod_ctx *, kmod_unref);
VN_DEFINE_CLEANUP(struct kmod_list *, kmod_module_unref_list);
VN_DEFINE_CLEANUP(struct kmod_module *, kmod_module_unref);

struct walk {
	const char *dir; /* libkmod's modules dir, with which every module's path starts */
	char **seen;     /* the names of the modules visited */
	size_t n_seen;
	char **order;
	size_t n;
	char logged[256]; /* libkmod's first error, which it reports only to its log */
};

/* A dependency whose file is missing is logged, and libkmod carries on without it. */
static void kmod_log(void *data, int priority, const char *file, int line, const char *fn, const char *format,
		     va_list args)
{
	struct walk *w = data;

	if (priority > LOG_ERR || w->logged[0])
		return;
	vsnprintf(w->logged, sizeof(w->logged), format, args);
	w->logged[strcspn(w->logged, "\n")] = '\0';
}

static bool seen(const struct walk *w, const char *name)
{
	for (size_t i = 0; i < w->n_seen; i++)
		if (strcmp(w->seen[i], name) == 0)
			return true;
	return false;
}

/*
 * Depth first: a module after everything it depends on, each once, its
 * dependencies taken in modules.dep's order (libkmod hands them last first,
 * so the list is walked backwards). modprobe walks them the other way;
 * depmod closes each line over, so both orders load every dependency first.
 * This one is the order vnuma always had, and /etc/vnuma/modules is part of
 * the initramfs that its cache key names. depmod refuses to index a cycle,
 * and a module seen once is not visited again, so a corrupt index cannot
 * loop.
 */
static int visit(struct walk *w, struct kmod_module *m, const char *name, struct vn_error *err)
{
	_cleanup_(kmod_module_unref_listp) struct kmod_list *deps = NULL;
	const struct kmod_list *l;

	if (seen(w, kmod_module_get_name(m)))
		return 0;
	vn_strv_push(&w->seen, &w->n_seen, kmod_module_get_name(m));
	const char *path = kmod_module_get_path(m);
	size_t n = strlen(w->dir);
	if (!path || strncmp(path, w->dir, n) != 0 || path[n] != '/')
		return vn_input_error(err, "kernel module %s (for %s) has no file under %s", kmod_module_get_name(m),
				      name, w->dir);
	deps = kmod_module_get_dependencies(m);
	if (w->logged[0])
		return vn_input_error(err, "%s/modules.dep: dependencies of %s: %s", w->dir, kmod_module_get_name(m),
				      w->logged);
	kmod_list_foreach_reverse(l, deps)
	{
		_cleanup_(kmod_module_unrefp) struct kmod_module *d = kmod_module_get_module(l);
		int r = visit(w, d, name, err);
		if (r < 0)
			return r;
	}
	vn_strv_push(&w->order, &w->n, path + n + 1);
	return 0;
}

/* One name, or an alias standing for several modules, as modprobe looks them up. */
static int resolve(struct kmod_ctx *ctx, struct walk *w, const char *name, const char *moddir, struct vn_error *err)
{
	_cleanup_(kmod_module_unref_listp) struct kmod_list *found = NULL;
	const struct kmod_list *l;
	int r = kmod_module_new_from_lookup(ctx, name, &found);

	if (r < 0)
		return vn_input_error(err, "kernel module %s: %s", name, w->logged[0] ? w->logged : strerror(-r));
	if (!found)
		return vn_input_error(err,
				      "kernel module %s is not in %s/modules.dep, modules.builtin or modules.alias",
				      name, moddir);
	kmod_list_foreach(l, found)
	{
		_cleanup_(kmod_module_unrefp) struct kmod_module *m = kmod_module_get_module(l);
		/*
		 * Built into the kernel, nothing to load. Only a module without a file is asked: libkmod answers
		 * that from modules.builtin, but for any other module it would look at the host's /sys/module.
		 */
		if (!kmod_module_get_path(m) && kmod_module_get_initstate(m) == KMOD_MODULE_BUILTIN)
			continue;
		if ((r = visit(w, m, name, err)) < 0)
			return r;
	}
	return 0;
}

int vn_modules_dep_order(const char *moddir, const char *const *names, const char *pkg, char ***order,
			 struct vn_error *err)
{
	/* No configuration files: the host's /etc/modprobe.d has no say in what the guest's kernel loads. */
	static const char *const no_config[] = {NULL};
	_cleanup_free_ char *index = vn_xasprintf("%s/modules.dep.bin", moddir);
	_cleanup_free_ char *text = vn_xasprintf("%s/modules.dep", moddir);
	_cleanup_(kmod_unrefp) struct kmod_ctx *ctx = NULL;
	int r = 0;

	/* libkmod reads depmod's binary indexes only, never modules.dep's text. */
	if (access(index, R_OK) != 0) {
		int e = errno;
		char hint[160] = "";
		if (access(text, R_OK) == 0)
			snprintf(hint, sizeof(hint), " (only its text form is there: run depmod)");
		else if (pkg)
			snprintf(hint, sizeof(hint), " (install the Debian package %s)", pkg);
		return vn_infra_error(err, -e, "cannot read %s: %s%s", index, strerror(e), hint);
	}
	ctx = kmod_new(moddir, no_config);
	if (!ctx)
		return vn_infra_error(err, -EINVAL, "libkmod cannot open the modules directory %s", moddir);
	struct walk w = {.dir = kmod_get_dirname(ctx)};
	kmod_set_log_priority(ctx, LOG_ERR);
	kmod_set_log_fn(ctx, kmod_log, &w);

	for (const char *const *name = names; *name && r == 0; name++)
		r = resolve(ctx, &w, *name, moddir, err);
	vn_strvfreep(&w.seen);
	if (r < 0) {
		vn_strvfreep(&w.order);
		return r;
	}
	*order = w.order ? w.order : vn_xcalloc(1, sizeof(char *));
	return 0;
}
