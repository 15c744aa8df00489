/* Where a topology argument names a file: a path, or a name in the topology dirs (util/paths.h). */
#pragma once

#include "util/error.h"

/*
 * Resolve a topology argument: an existing path, or NAME / NAME.xml under
 * ./topologies or the installed topologies (util/paths.h); not found is an
 * input error naming the places searched.
 */
int vn_topology_find(const char *arg, char **path, struct vn_error *err);
/* The same, looking a NAME up in near_dir first (a scenario's ../topologies). */
int vn_topology_find_near(const char *arg, const char *near_dir, char **path, struct vn_error *err);
