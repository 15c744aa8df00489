/*
 * QEMU's human monitor text, as libvirt relays it (hmp-parse.c): where a
 * hot-plugged DIMM's memory lies in the locality plugin's address space
 * (docs/locality.md), and how far virtual time's guest clock leads the
 * host's (docs/noise.md). QEMU's words, driven by a guest: read as semi-trusted
 * input, bounded, and every field checked before it is used.
 */
#pragma once

#include <stdint.h>

#include "util/error.h"

/* Longer monitor replies are refused, not cut: a guest with that many blocks or regions is not ours. */
#define VN_HMP_TEXT_MAX (4u << 20)

/*
 * `info ramblock`: the block whose name is block (or ends in "/block"), its
 * offset in QEMU's ram_addr space and its used length. An infrastructure
 * error naming what is missing or malformed.
 */
int vn_hmp_ramblock(const char *text, const char *block, uint64_t *offset, uint64_t *used, struct vn_error *err);

/* `info mtree`: the first region named name (the word after "): "), its first and last address. */
int vn_hmp_mtree_region(const char *text, const char *name, uint64_t *first, uint64_t *last, struct vn_error *err);

/*
 * The DIMM's range as QEMU 7.2's qemu_plugin_hwaddr_phys_addr makes it:
 * its RAM block's offset plus its memory region's address in the
 * device-memory container, for the block's used length. gpa is the DIMM's
 * guest-physical address as libvirt reports it, which the monitor must
 * agree with. Discovered here, proven by a touch before it is trusted.
 */
int vn_hmp_dimm_plugin_range(const char *ramblock, const char *mtree, const char *memdev, uint64_t gpa, uint64_t *lo,
			     uint64_t *hi, struct vn_error *err);

/* A clock difference beyond a year is no guest's: refused, not believed. */
#define VN_HMP_LEAD_MS_MAX (366LL * 86400 * 1000)

/*
 * `info jit` under -icount: how many seconds the guest's clock leads the
 * host's (QEMU's "Host - Guest clock", negated); negative while it lags.
 */
int vn_hmp_icount_lead(const char *text, double *lead_s, struct vn_error *err);
