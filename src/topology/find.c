#include "topology/find.h"

#include "util/paths.h"

int vn_topology_find_near(const char *arg, const char *near_dir, char **path, struct vn_error *err)
{
	return vn_paths_find(arg, "topology", "topologies", ".xml", near_dir, path, err);
}

int vn_topology_find(const char *arg, char **path, struct vn_error *err)
{
	return vn_topology_find_near(arg, NULL, path, err);
}
