/* Whether the guest is the topology asked for (fidelity.c). */
#pragma once

#include <stdbool.h>

#include "guest/agent.h"
#include "topology/fallback.h"
#include "topology/topology.h"
#include "util/arch.h"

/*
 * Compare the running guest with the topology: node distances, CPUs per node,
 * which nodes have memory, and the boot-time fallback lists against the model
 * as the kernel of architecture arch runs it (topology/arch.h). model NULL:
 * the era of the guest's release (vn_fallback_model_for_release).
 */
int vn_testbed_fidelity(struct vn_agent *a, const struct vn_topology *t, const enum vn_fallback_model *model,
			enum vn_arch arch, bool *ok, char **report, struct vn_error *err);
