/* Another libvirt host: how many guests it takes, and the accelerator it really gives (remote.c). */
#pragma once

#include <stddef.h>
#include <stdint.h>

#include "testbed/testbed.h"
#include "virt/virt.h"

/*
 * Whether ctx's host answers, and how many guests of vcpus and memory bytes
 * it takes at once (its CPUs and 3/4 of its memory); in a child process, so
 * the caller never holds libvirt (or its threads) itself.
 */
int vn_testbed_host_probe(const struct vn_testbed_ctx *ctx, unsigned vcpus, uint64_t memory, unsigned *capacity,
			  struct vn_error *err);

/*
 * The accelerator v's host really gives guests, proven by a probe boot (one
 * node, the stock kernel, uploaded there first when the host is another) as
 * every boot proves it (virt.h: KVM only once the kernel printed within 5 s,
 * else TCG), with why; the verdict is cached for that host.
 */
int vn_testbed_accel_probe(struct vn_virt *v, const struct vn_testbed_ctx *ctx, enum vn_accel *accel, char *reason,
			   size_t len, struct vn_error *err);
