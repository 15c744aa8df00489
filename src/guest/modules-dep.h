/*
 * Kernel modules in load order from a modules directory's modules.dep, the
 * way modprobe resolves them (names treat '-' and '_' alike; built-in
 * modules, listed in modules.builtin, need nothing). Internal to the guest
 * layer (initramfs).
 */
#pragma once

#include "util/error.h"

/*
 * The modules names need, dependencies first, each once, as paths relative
 * to moddir (NULL-terminated, in *order; caller frees with vn_strv_free).
 * An unknown module, a dependency without an entry or a cycle is an input
 * error naming modules.dep; an unreadable modules.dep is an infrastructure
 * error that names pkg (the Debian package that installs it) when not NULL.
 */
int vn_modules_dep_order(const char *moddir, const char *const *names, const char *pkg, char ***order,
			 struct vn_error *err);
