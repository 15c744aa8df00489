/* The caps a scenario is held to when it is parsed. */
#pragma once

#include "agent/protocol.h"

/*
 * What a scenario may ask for is checked once, when it is parsed: `vnuma
 * scenario validate` and `vnuma run` refuse more before anything boots,
 * naming the JSON path, the value and the limit. What a scenario may make
 * as long as it likes (steps, actions, arguments, and so the moves, hotplugs
 * and commands of a run) is grown as needed; only these stay capped.
 *
 * The guest agent runs VN_AGENT_MAX_JOBS commands at once. The runner's own
 * take up to VN_SCN_HELPERS of them (the sampler, the tracer, a move or
 * hotplug helper and one more), so at most VN_SCN_RUNNING_MAX workload
 * processes may run at once: a step's, with those of every background step
 * started before it (the runner does not wait for them).
 */
#define VN_SCN_HELPERS     4
#define VN_SCN_RUNNING_MAX (VN_AGENT_MAX_JOBS - VN_SCN_HELPERS)
/* A step's "threads": the most any workload's --threads takes (groupfair's; stream's is 1024). */
#define VN_SCN_THREADS_MAX 4096
/* "repeats", as `vnuma run --repeats`: each repeat is a run, a guest booted. */
#define VN_SCN_REPEATS_MAX 1000
/* --repeats auto: rounds added while a change assertion is too noisy to tell, up to this many runs a variant. */
#define VN_SCN_AUTO_REPEATS_MAX 20

/* At most this many tracepoints a scenario; a name is "SUBSYS:EVENT" of [A-Za-z0-9_] each. */
#define VN_SCN_TRACEPOINTS_MAX 32
#define VN_SCN_TRACEPOINT_LEN  128

/* A suite step's "tests" (each one exec, one at a time), and each run's "timeout_s" at most (a day). */
#define VN_SCN_SUITE_TESTS_MAX   1024
#define VN_SCN_SUITE_TIMEOUT_MAX 86400
