/*
 * The size limits of the topology model, alone in a header with no includes,
 * so that the static libc-only in-guest programs (src/inguest, the workloads,
 * the sampler) take the same numbers as the model without taking anything
 * else from this layer: every node a valid topology has must be a node they
 * can count.
 */
#pragma once

/* QEMU's MAX_NODES (include/sysemu/numa.h) is 128. Node ids are 0..VN_MAX_NODES-1. */
#define VN_MAX_NODES 128
