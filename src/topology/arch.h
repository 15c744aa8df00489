/*
 * What a topology asks that an architecture's guest cannot be given, refused
 * offline (`topo validate --arch`, `scenario validate`, before any boot). A
 * topology file stays architecture-neutral; these are the limits of how NUMA
 * reaches each kernel under QEMU 7.2 and libvirt 9.0 (docs/arches.md).
 */
#pragma once

#include "topology/fallback.h"
#include "topology/topology.h"
#include "util/arch.h"
#include "util/error.h"

/*
 * 0 when t boots on a as asked; else an input error `FILE:LINE: ARCH: what,
 * and why`. x86_64 refuses nothing here.
 */
int vn_topology_arch_check(const struct vn_topology *t, enum vn_arch a, struct vn_error *err);

/*
 * The fallback model's options for a's kernel. The model is the same generic
 * build_zonelists(); what differs is the state its boot-time build sees: on
 * x86 and arm64 no node has CPUs in its mask yet (they join as they come
 * online, after), while pseries maps every present CPU to its node in
 * setup_arch (mem_topology_setup), so find_next_best_node() already prefers
 * CPU-less nodes at boot. Measured: docs/arches.md.
 */
void vn_topology_arch_fallback(enum vn_arch a, struct vn_fallback_opts *o);
