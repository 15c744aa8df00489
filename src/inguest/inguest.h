/*
 * The in-guest support library: what the programs that run inside the guest
 * (the workloads vnuma-wl-*, the sampler vnuma-sample) share.
 *
 * They run in a bare busybox initramfs: static, libc only (no libnuma, no
 * json-c). Everything NUMA goes through raw syscalls and sysfs.
 *
 * Conventions for every program:
 *   - JSON lines on stdout (a workload: exactly one object, at the end);
 *   - progress and diagnostics on stderr;
 *   - exit 0 success, 2 bad option (one line naming option and value),
 *     3 environment failure (hugetlb pages missing, cgroup not writable,
 *     out of memory...).
 *
 * One file per section: prog.c (name, errors, the stop signals), opt.c (option table and
 * values), time.c (clocks, seeds), buf.c (growable buffers, whole files),
 * topo.c (cpulists, nodes), placement.c (move_pages), mem.c (mappings),
 * team.c (forked workers), json.c (the JSON writer), stats.c (statistics),
 * each with its header of the same name; this one includes them all.
 */
#ifndef VN_INGUEST_H
#define VN_INGUEST_H

#include "inguest/buf.h"
#include "inguest/json.h"
#include "inguest/mem.h"
#include "inguest/opt.h"
#include "inguest/placement.h"
#include "inguest/prog.h"
#include "inguest/stats.h"
#include "inguest/team.h"
#include "inguest/time.h"
#include "inguest/topo.h"

#endif
