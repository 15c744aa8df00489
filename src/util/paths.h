/*
 * Where this vnuma's own files are, found from the executable's location so
 * that an install under any prefix (a DESTDIR, a temporary --prefix) works:
 *   build tree  BUILD/vnuma (CMakeCache.txt beside it): in-guest programs in
 *               BUILD/src/agent and BUILD/src/workloads, data in the source tree
 *   installed   PREFIX/bin/vnuma: in-guest programs in PREFIX/libexec/vnuma,
 *               data (topologies/, scenarios/, kernels/) in PREFIX/share/vnuma
 * (the installed directories are the GNUInstallDirs ones vnuma was configured with).
 */
#pragma once

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>

#include "util/error.h"
#include "util/strbuf.h"

#define VN_PATHS_MAX_HELPER_DIRS 2

struct vn_paths {
	bool build_tree;
	char data_dir[PATH_MAX];
	/* vnuma-agent, vnuma-sample, vnuma-wl-*; $VNUMA_HELPER_DIR replaces them */
	unsigned nhelper_dirs;
	char helper_dirs[VN_PATHS_MAX_HELPER_DIRS][PATH_MAX];
	/* The other architectures' in-guest programs, one folder each: BUILD/arch or LIBEXEC/vnuma. */
	char arch_dir[PATH_MAX];
	/* QEMU plugins (vnuma-locality.so): BUILD/src/plugin, or PREFIX/libexec/vnuma */
	char plugin_dir[PATH_MAX];
	/* vnuma-core.so, every command but a local exec (cli/front.c): BUILD, or PREFIX/libexec/vnuma */
	char core_dir[PATH_MAX];
};

/* The layout for an executable at exe (an absolute path). */
void vn_paths_locate(const char *exe, struct vn_paths *p);

/* The layout of the running vnuma (/proc/self/exe). */
int vn_paths_self(struct vn_paths *p, struct vn_error *err);

/*
 * The directories a data NAME is looked up in, in order: first_dir (if not
 * NULL), ./SUBDIR, DATA_DIR/SUBDIR. Returns how many were written to dirs.
 */
size_t vn_paths_data_dirs(const char *subdir, const char *first_dir, char (*dirs)[PATH_MAX], size_t max);

/*
 * Look NAME (no '/') up as NAME.EXT or NAME in vn_paths_data_dirs(). Returns 1
 * with *path (absolute, malloc'd) set, 0 when not found. When tried
 * is not NULL it gets the directories searched, ", "-separated.
 */
int vn_paths_search(const char *name, const char *subdir, const char *ext, const char *first_dir, char **path,
		    struct vn_strbuf *tried);

/*
 * Resolve a data argument: an existing file as given, else (no '/' in arg) a
 * name found by vn_paths_search(). Not found is an input error naming what
 * was searched, e.g. "x: no such topology (not a file, nor x.xml or x in
 * ./topologies, /usr/local/share/vnuma/topologies)".
 */
int vn_paths_find(const char *arg, const char *what, const char *subdir, const char *ext, const char *first_dir,
		  char **path, struct vn_error *err);

/*
 * Every NAME (file name without .EXT) under vn_paths_data_dirs(), sorted and
 * unique, NULL-terminated; for completion. Returns the count.
 */
int vn_paths_list(const char *subdir, const char *ext, char ***names);
