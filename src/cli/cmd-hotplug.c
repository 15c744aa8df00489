/* vnuma hotplug: memory or vCPUs into (or out of) a node of a running guest. */
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "cli/args.h"
#include "cli/cli.h"
#include "testbed/hotplug-guest.h"
#include "testbed/testbed.h"
#include "util/cleanup.h"
#include "util/name.h"
#include "util/parse.h"

/* More than any host here has: a bigger number is a typo (a missing unit reads as bytes and fails the DIMM check). */
#define HOTPLUG_MEMORY_MAX (UINT64_C(1) << 40)

/* --online movable|kernel: the zone hot-plugged memory is onlined into. */
static int online_parse(const char *arg, enum vn_hotplug_online *out, struct vn_error *err)
{
	if (strcmp(arg, "movable") == 0)
		*out = VN_ONLINE_MOVABLE;
	else if (strcmp(arg, "kernel") == 0)
		*out = VN_ONLINE_KERNEL;
	else
		return vn_input_error(err, "--online: '%s' is neither 'movable' nor 'kernel'", arg);
	return 0;
}

/* What changed in the guest, on stdout. */
static void hotplug_print(const struct vn_hotplug_req *q, const struct vn_hotplug_result *r)
{
	_cleanup_free_ char *cpus = vn_cpulist_format(&r->cpus), *node_cpus = vn_cpulist_format(&r->node_cpus);
	char sz[32];

	if (q->memory)
		printf("node %u: %s %s, %u memory block%s %s; node %u MemTotal %" PRIu64 " MiB\n", q->node,
		       q->remove ? "removed" : "added", vn_size_format(q->memory, sz, sizeof(sz)), r->blocks,
		       r->blocks == 1 ? "" : "s", q->remove ? "offlined" : "onlined", q->node, r->node_memtotal >> 20);
	else
		printf("node %u: vCPU%s %s %s; node %u cpus %s\n", q->node, q->cpus == 1 ? "" : "s", cpus,
		       q->remove ? "unplugged" : "plugged and online", q->node, node_cpus);
	printf("fallback lists rebuilt: %u time%s\n", r->rebuilds, r->rebuilds == 1 ? "" : "s");
}

static int cmd_hotplug(int argc, char **argv, struct vn_error *err)
{
	struct vn_hotplug_req q = {.timeout_ms = VN_HOTPLUG_TIMEOUT_MS};
	struct vn_hotplug_result r;
	struct vn_cli_args args;
	struct vn_testbed_ctx ctx;
	bool node_given = false;
	uint64_t v;
	double t;
	int c, rc;

	vn_cli_args_init(&args, &vn_cmd_hotplug, argc, argv);
	while ((c = vn_cli_next(&args, err)) > 0) {
		switch (c) {
		case 'N':
			if (vn_cli_count(&args, "node", optarg, 0, VN_MAX_NODES - 1, &v, err) < 0)
				return args.exit;
			q.node = (unsigned)v;
			node_given = true;
			break;
		case 'm':
			/* 1 byte up: the request's own check says what a DIMM must be a multiple of. */
			if (vn_cli_size(&args, "memory", optarg, 1, HOTPLUG_MEMORY_MAX, &q.memory, err) < 0)
				return args.exit;
			break;
		case 'c':
			if (vn_cli_count(&args, "cpus", optarg, 1, VN_HOTPLUG_CPUS_MAX, &v, err) < 0)
				return args.exit;
			q.cpus = (unsigned)v;
			break;
		case 'o':
			if ((rc = online_parse(optarg, &q.online, err)) < 0)
				return rc;
			break;
		case 'r': q.remove = true; break;
		case 't':
			if (vn_cli_duration(&args, "timeout", optarg, 3600, &t, err) < 0)
				return args.exit;
			q.timeout_ms = (int)vn_duration_ms(t);
			break;
		}
	}
	if (c < 0 || vn_cli_operands(&args, 1, 1, err) < 0)
		return args.exit;
	q.name = argv[optind];
	if ((rc = vn_guest_name_check(q.name, err)) < 0)
		return rc;
	if (!node_given)
		return vn_input_error(err, "hotplug needs --node N");
	if (!q.memory == !q.cpus)
		return vn_input_error(err, "hotplug takes --memory SIZE or --cpus N (one of them)");
	if ((rc = vn_cli_ctx(&args, &ctx, err)) < 0)
		return rc;
	rc = vn_testbed_hotplug(&ctx, &q, NULL, NULL, &r, err);
	vn_testbed_ctx_clear(&ctx);
	if (rc < 0)
		return rc;
	hotplug_print(&q, &r);
	return VN_EXIT_OK;
}

static const struct vn_cli_opt hotplug_opts[] = {
	{"node", 'N', true, "N", VN_VAL_NONE, "the node"},
	{"memory", 'm', true, "SIZE", VN_VAL_NONE, "memory to add (one DIMM) or remove (whole DIMMs), 128M blocks"},
	{"cpus", 'c', true, "K", VN_VAL_NONE, "vCPUs to plug in, from the node's hotplug-cpus"},
	{"online", 'o', false, "ZONE", VN_VAL_NONE, "movable (default: ZONE_MOVABLE, removable) or kernel"},
	{"remove", 'r', false, NULL, VN_VAL_NONE,
	 "take the memory out of the node instead (whole DIMMs, latest first)"},
	{"timeout", 't', false, "S", VN_VAL_NONE, "how long the guest may take to see the change (default 30)"},
	VN_CLI_OPT_END,
};

const struct vn_cmd vn_cmd_hotplug = {
	.name = "hotplug",
	.fn = cmd_hotplug,
	.summary = "plug memory or vCPUs into a node of a running guest",
	.synopsis = "NAME --node N --memory SIZE [--online movable|kernel] [--remove]\n"
		    "NAME --node N --cpus K",
	.description = "Adds memory to node N as an ACPI DIMM (libvirt's device API) and onlines its\n"
		       "memory blocks in the guest (online_movable, or online_kernel), or plugs K of\n"
		       "the node's hot-pluggable vCPUs in and onlines them. The topology the guest\n"
		       "booted bounds both: a node takes at most its hotplug=\"SIZE\" and only its\n"
		       "hotplug-cpus=\"LIST\". --remove offlines and unplugs the node's latest DIMMs;\n"
		       "vCPUs are not unplugged (QEMU 7.2 does not survive it here). Onlining the\n"
		       "first memory of a zone makes the kernel rebuild its fallback lists, which it\n"
		       "prints to dmesg.",
	.opts = hotplug_opts,
	.common = VN_CLI_GUEST,
	.operand = VN_VAL_GUEST,
};
