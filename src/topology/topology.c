/* Model queries and semantic warnings; parsing lives in topology-xml.c. */
#include "topology/topology.h"

#include <stdlib.h>

#include "util/cleanup.h"
#include "util/strbuf.h"

void vn_topology_free(struct vn_topology *t)
{
	if (!t)
		return;
	vn_free_all(t->name, t->description, t->path, t->hmat, t);
}

uint64_t vn_topology_total_memory(const struct vn_topology *t)
{
	uint64_t sum = 0;

	for (unsigned i = 0; i < t->nnodes; i++)
		sum += t->nodes[i].memory;
	return sum;
}

const char *vn_device_kind_name(enum vn_device_kind k)
{
	return k == VN_DEVICE_DISK ? "disk" : "nic";
}

int vn_topology_cpu_node(const struct vn_topology *t, unsigned cpu)
{
	for (unsigned i = 0; i < t->nnodes; i++)
		if (vn_cpuset_has(&t->nodes[i].cpus, cpu))
			return (int)i;
	return -1;
}

char *vn_topology_warnings(const struct vn_topology *t)
{
	struct vn_strbuf b = VN_STRBUF_INIT;

	for (unsigned i = 0; i < t->nnodes; i++)
		for (unsigned j = i + 1; j < t->nnodes; j++)
			if (t->distance[i][j] != t->distance[j][i])
				vn_strbuf_printf(&b,
						 "%s: asymmetric distance: %u->%u is %u but %u->%u is %u (ACPI allows "
						 "it; Linux uses the row of the accessing node)\n",
						 t->path ? t->path : t->name, i, j, t->distance[i][j], j, i,
						 t->distance[j][i]);
	if (!t->distances_given && t->nnodes > 1)
		vn_strbuf_printf(&b, "%s: no <distances>: using 10 local / 20 remote, like the kernel without a SLIT\n",
				 t->path ? t->path : t->name);
	if (b.len == 0)
		return NULL;
	b.s[--b.len] = '\0';
	return vn_strbuf_steal(&b);
}
