/*
 * Kernel modules in load order from a modules directory, resolved by libkmod
 * (kmod's library, what modprobe itself uses) over depmod's indexes there
 * (modules.dep.bin, modules.alias.bin, modules.builtin.bin): a name ('-' and
 * '_' alike) or an alias; built-in modules need nothing. The directory is the
 * guest kernel's (its Debian package's /lib/modules/RELEASE, or a build's),
 * never the running host's, and no modprobe.d configuration applies.
 * Internal to the guest layer (initramfs).
 */
#pragma once

#include "util/error.h"

/*
 * The modules names need, dependencies first, each once, as paths relative
 * to moddir (NULL-terminated, in *order; caller frees with vn_strv_free).
 * An unknown module, or a dependency whose file is missing, is an input
 * error; a directory without modules.dep.bin is an infrastructure error that
 * names pkg (the Debian package that installs it) when not NULL, or says to
 * run depmod when only the text modules.dep is there.
 */
int vn_modules_dep_order(const char *moddir, const char *const *names, const char *pkg, char ***order,
			 struct vn_error *err);
