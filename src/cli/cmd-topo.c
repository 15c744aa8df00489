/* vnuma topo validate|show|fallback|demotion|random: offline views of a topology file. */
#include <getopt.h>
#include <json-c/json.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "cli/args.h"
#include "cli/cli.h"
#include "testbed/testbed.h"
#include "topology/arch.h"
#include "topology/fallback.h"
#include "topology/random.h"
#include "topology/tiers.h"
#include "topology/find.h"
#include "topology/topology.h"
#include "util/alloc.h"
#include "util/arch.h"
#include "util/cleanup.h"

static const struct vn_cmd topo_fallback_cmd, topo_demotion_cmd, topo_random_cmd, topo_validate_cmd;

/* A file as given (its errors then name it as written), else a shipped topology's name. */
static int topo_load(const char *arg, struct vn_topology **t, struct vn_error *err)
{
	_cleanup_free_ char *path = NULL;
	struct stat st;
	int rc;

	if (stat(arg, &st) == 0 && S_ISREG(st.st_mode))
		return vn_topology_load(arg, t, err);
	if ((rc = vn_topology_find(arg, &path, err)) < 0)
		return rc;
	return vn_topology_load(path, t, err);
}

static int topo_validate(int argc, char **argv, struct vn_error *err)
{
	struct vn_cli_args a;
	enum vn_arch arch = vn_arch_host();
	int bad = 0, c, rc;

	vn_cli_args_init(&a, &topo_validate_cmd, argc, argv);
	while ((c = vn_cli_next(&a, err)) > 0)
		if (c == 'X' && (rc = vn_arch_parse(optarg, "--arch", &arch, err)) < 0)
			return rc;
	if (c < 0)
		return a.exit;
	if (optind >= argc)
		return vn_input_error(err, "validate needs at least one FILE");
	for (int i = optind; i < argc; i++) {
		_cleanup_topology_ struct vn_topology *t = NULL;
		struct vn_error e = {0};
		char mem[32];

		if (topo_load(argv[i], &t, &e) < 0 || vn_topology_arch_check(t, arch, &e) < 0) {
			fprintf(stderr, "%s\n", e.msg);
			vn_error_clear(&e);
			bad++;
			continue;
		}
		_cleanup_free_ char *warn = vn_topology_warnings(t);
		if (warn)
			fprintf(stderr, "warning: %s\n", warn);
		printf("%s: ok: %s, %u nodes, %u CPUs, %s memory\n", argv[i], t->name, t->nnodes, t->ncpus_total,
		       vn_size_format(vn_topology_total_memory(t), mem, sizeof(mem)));
	}
	return bad ? VN_EXIT_INPUT : VN_EXIT_OK;
}

/* Descriptions are indented prose in the XML; show them as one paragraph. */
static void show_paragraph(const char *text)
{
	bool space = false;

	for (const char *p = text; *p; p++) {
		if (*p == ' ' || *p == '\n' || *p == '\t') {
			space = true;
			continue;
		}
		if (space && p != text)
			putchar(' ');
		space = false;
		putchar(*p);
	}
	putchar('\n');
}

/* Node i as numactl -H shows it (cpus, size), with what numactl does not know (kind, hotplug, devices). */
static void show_node(const struct vn_node *n, unsigned i)
{
	printf("node %u cpus:", i);
	for (unsigned c = 0; c < VN_CPUSET_MAX; c++)
		if (vn_cpuset_has(&n->cpus, c))
			printf(" %u", c);
	printf("\nnode %u size: %llu MB%s\n", i, (unsigned long long)(n->memory >> 20),
	       !n->ncpus    ? "   (CPU-less)"
	       : !n->memory ? "   (memory-less)"
			    : "");
	if (vn_node_is_slow(n))
		printf("node %u memory kind: %s (slow: onlined by kmem after boot, a lower tier)\n", i,
		       n->memory_kind == VN_MEMORY_PMEM ? "pmem" : "cxl");
	if (n->hotplug_memory || n->nhotplug_cpus) {
		_cleanup_free_ char *hc = vn_cpulist_format(&n->hotplug_cpus);
		printf("node %u hotplug: %llu MB%s%s%s\n", i, (unsigned long long)(n->hotplug_memory >> 20),
		       n->nhotplug_cpus ? ", cpus " : "", hc, n->nhotplug_cpus ? " absent at boot" : "");
	}
	for (unsigned k = 0; k < n->ndevices; k++) {
		const struct vn_device *d = &n->devices[k];
		char size[32];
		printf("node %u device: %s%s%s\n", i, vn_device_kind_name(d->kind),
		       d->kind == VN_DEVICE_DISK ? " " : "",
		       d->kind == VN_DEVICE_DISK ? vn_size_format(d->size, size, sizeof(size)) : "");
	}
}

/* The distance matrix as numactl -H prints it, then the HMAT entries. */
static void show_distances(const struct vn_topology *t)
{
	printf("node distances:\nnode ");
	for (unsigned j = 0; j < t->nnodes; j++)
		printf("%4u", j);
	printf("\n");
	for (unsigned i = 0; i < t->nnodes; i++) {
		printf("%4u:", i);
		for (unsigned j = 0; j < t->nnodes; j++)
			printf("%4u", t->distance[i][j]);
		printf("\n");
	}
	if (t->nhmat) {
		printf("hmat:\n");
		for (unsigned k = 0; k < t->nhmat; k++) {
			const struct vn_hmat_entry *e = &t->hmat[k];
			printf("  %u -> %u  %s %llu %s\n", e->initiator, e->target,
			       e->type == VN_HMAT_LATENCY ? "latency" : "bandwidth", (unsigned long long)e->value,
			       e->type == VN_HMAT_LATENCY ? "ns" : "MB/s");
		}
	}
}

static int topo_show(int argc, char **argv, struct vn_error *err)
{
	_cleanup_topology_ struct vn_topology *t = NULL;
	int rc;

	if (argc != 2)
		return vn_input_error(err, "show takes exactly one TOPOLOGY");
	if ((rc = topo_load(argv[1], &t, err)) < 0)
		return rc;
	printf("topology: %s\n", t->name);
	if (t->description) {
		printf("description: ");
		show_paragraph(t->description);
	}
	if (t->cpu_topology_given)
		printf("cpu topology: %u sockets x %u dies x %u cores x %u threads\n", t->sockets, t->dies, t->cores,
		       t->threads);
	printf("available: %u nodes (0-%u)\n", t->nnodes, t->nnodes - 1);
	for (unsigned i = 0; i < t->nnodes; i++)
		show_node(&t->nodes[i], i);
	show_distances(t);
	_cleanup_free_ char *warn = vn_topology_warnings(t);
	if (warn)
		fprintf(stderr, "warning: %s\n", warn);
	return VN_EXIT_OK;
}

/* The fallback orders as JSON, for scripts. */
static void fallback_print_json(const struct vn_topology *t, const struct vn_fallback_opts *fo, bool hotplugged,
				const struct vn_fallback *f)
{
	json_object *root = json_object_new_object();
	json_object *nodes = json_object_new_array();
	json_object_object_add(root, "topology", json_object_new_string(t->name));
	json_object_object_add(root, "model", json_object_new_string(vn_fallback_model_name(fo->model)));
	json_object_object_add(root, "cpus_visible", json_object_new_boolean(fo->cpus_visible || hotplugged));
	json_object_object_add(root, "build", json_object_new_string(hotplugged ? "hotplugged" : "boot"));
	for (unsigned n = 0; n < f->nnodes; n++) {
		json_object *o = json_object_new_object();
		json_object *order = json_object_new_array();
		for (unsigned i = 0; i < f->len[n]; i++)
			json_object_array_add(order, json_object_new_int(f->order[n][i]));
		json_object_object_add(o, "node", json_object_new_int((int)n));
		json_object_object_add(o, "order", order);
		json_object_array_add(nodes, o);
	}
	json_object_object_add(root, "nodes", nodes);
	printf("%s\n", json_object_to_json_string_ext(root, JSON_C_TO_STRING_PRETTY | JSON_C_TO_STRING_NOSLASHESCAPE));
	json_object_put(root);
}

static int topo_fallback(int argc, char **argv, struct vn_error *err)
{
	struct vn_fallback_opts fo = VN_FALLBACK_OPTS_DEFAULT;
	struct vn_cli_args a;
	enum vn_arch arch;
	bool json = false, hotplugged = false;
	int c, rc;

	vn_cli_args_init(&a, &topo_fallback_cmd, argc, argv);
	while ((c = vn_cli_next(&a, err)) > 0) {
		switch (c) {
		case 'm':
			if ((rc = vn_fallback_model_lookup(optarg, &fo.model, err)) < 0)
				return rc;
			break;
		case 'c': fo.cpus_visible = true; break;
		case 'X':
			if ((rc = vn_arch_parse(optarg, "--arch", &arch, err)) < 0)
				return rc;
			vn_topology_arch_fallback(arch, &fo);
			break;
		case 'H': hotplugged = true; break;
		case 'j': json = true; break;
		}
	}
	if (c < 0 || vn_cli_operands(&a, 1, 1, err) < 0)
		return a.exit;

	_cleanup_topology_ struct vn_topology *t = NULL;
	struct vn_fallback f;

	if ((rc = topo_load(argv[optind], &t, err)) < 0)
		return rc;
	struct vn_fallback_state st;
	if (hotplugged)
		vn_fallback_state_hotplugged(t, &st);
	else
		vn_fallback_state_boot(t, &fo, &st);
	vn_fallback_compute_state(t, &fo, &st, &f);
	if (json) {
		fallback_print_json(t, &fo, hotplugged, &f);
	} else {
		_cleanup_free_ char *s = vn_fallback_format(&f);
		fputs(s, stdout);
	}
	return VN_EXIT_OK;
}

static json_object *json_nodes(const bool *set, unsigned nnodes)
{
	json_object *a = json_object_new_array();

	for (unsigned n = 0; n < nnodes; n++)
		if (set[n])
			json_object_array_add(a, json_object_new_int((int)n));
	return a;
}

static json_object *demotion_json(const struct vn_topology *t, const struct vn_tiers *tr)
{
	json_object *root = json_object_new_object();
	json_object *tiers = json_object_new_array(), *nodes = json_object_new_array();

	json_object_object_add(root, "topology", json_object_new_string(t->name));
	json_object_object_add(root, "model", json_object_new_string(vn_tier_model_name(tr->model)));
	for (unsigned i = 0; i < tr->ntiers; i++) {
		json_object *o = json_object_new_object();
		json_object_object_add(o, "id", json_object_new_int(tr->tier[i].id));
		json_object_object_add(o, "nodes", json_nodes(tr->tier[i].nodes, tr->nnodes));
		json_object_object_add(o, "top", json_object_new_boolean(tr->tier[i].top));
		json_object_object_add(o, "lower", json_nodes(tr->tier[i].lower, tr->nnodes));
		json_object_array_add(tiers, o);
	}
	for (unsigned n = 0; n < tr->nnodes; n++) {
		json_object *o = json_object_new_object();
		int ti = tr->tier_of[n];
		json_object_object_add(o, "node", json_object_new_int((int)n));
		json_object_object_add(o, "tier", ti < 0 ? NULL : json_object_new_int(tr->tier[ti].id));
		json_object_object_add(o, "preferred", json_nodes(tr->preferred[n], tr->nnodes));
		json_object_object_add(o, "distance",
				       tr->distance[n] < 0 ? NULL : json_object_new_int(tr->distance[n]));
		json_object_array_add(nodes, o);
	}
	json_object_object_add(root, "tiers", tiers);
	json_object_object_add(root, "nodes", nodes);
	return root;
}

/* The model's memory tiers (as sysfs lists them) and each node's demotion targets. */
static int topo_demotion(int argc, char **argv, struct vn_error *err)
{
	enum vn_tier_model m = VN_TIER_MODEL_DEFAULT;
	struct vn_cli_args a;
	bool json = false;
	int c, rc;

	vn_cli_args_init(&a, &topo_demotion_cmd, argc, argv);
	while ((c = vn_cli_next(&a, err)) > 0) {
		if (c == 'm' && (rc = vn_tier_model_lookup(optarg, &m, err)) < 0)
			return rc;
		if (c == 'j')
			json = true;
	}
	if (c < 0 || vn_cli_operands(&a, 1, 1, err) < 0)
		return a.exit;

	_cleanup_topology_ struct vn_topology *t = NULL;
	_cleanup_free_ struct vn_tiers *tr = vn_xcalloc(1, sizeof(*tr));

	if ((rc = topo_load(argv[optind], &t, err)) < 0)
		return rc;
	vn_tiers_compute(t, m, tr);
	if (json) {
		json_object *root = demotion_json(t, tr);
		printf("%s\n",
		       json_object_to_json_string_ext(root, JSON_C_TO_STRING_PRETTY | JSON_C_TO_STRING_NOSLASHESCAPE));
		json_object_put(root);
	} else {
		_cleanup_free_ char *s = vn_tiers_format(tr);
		fputs(s, stdout);
	}
	return VN_EXIT_OK;
}

/* A random topology on stdout, for checking the model against real boots. */
static int topo_random(int argc, char **argv, struct vn_error *err)
{
	uint64_t seed = 1, lo = 5, hi = 8;
	unsigned flags = VN_RANDOM_CPULESS | VN_RANDOM_MEMLESS;
	struct vn_cli_args a;
	int c;

	vn_cli_args_init(&a, &topo_random_cmd, argc, argv);
	while ((c = vn_cli_next(&a, err)) > 0) {
		switch (c) {
		case 's':
			if (vn_cli_count(&a, "seed", optarg, 0, UINT64_MAX, &seed, err) < 0)
				return a.exit;
			break;
		case 'n': {
			_cleanup_free_ char *min = vn_xstrdup(optarg);
			char *max = strchr(min, '-');
			if (max)
				*max++ = '\0';
			if (vn_cli_count(&a, "nodes", min, 2, 16, &lo, err) < 0 ||
			    (max && vn_cli_count(&a, "nodes", max, 2, 16, &hi, err) < 0))
				return a.exit;
			if (!max)
				hi = lo;
			if (hi < lo)
				return vn_cli_bad_arg(&a, "nodes", "must be MIN-MAX with MIN <= MAX", err);
			break;
		}
		case 'c': flags &= ~(unsigned)VN_RANDOM_CPULESS; break;
		case 'm': flags &= ~(unsigned)VN_RANDOM_MEMLESS; break;
		case 'S': flags |= VN_RANDOM_SLOW; break;
		}
	}
	if (c < 0 || vn_cli_operands(&a, 0, 0, err) < 0)
		return a.exit;
	_cleanup_free_ char *xml = vn_topology_random_xml(seed, (unsigned)lo, (unsigned)hi, flags);
	fputs(xml, stdout);
	return VN_EXIT_OK;
}

static const struct vn_cli_opt topo_validate_opts[] = {
	{"arch", 'X', false, "ARCH", VN_VAL_NONE,
	 "also refuse what a guest of this architecture cannot be given\n"
	 "(arm64, ppc64le; default: the host's; docs/arches.md)"},
	VN_CLI_OPT_END,
};

static const struct vn_cmd topo_validate_cmd = {
	.name = "validate",
	.fn = topo_validate,
	.summary = "check topologies, printing FILE:LINE: for every error",
	.synopsis = "TOPOLOGY... [--arch ARCH]",
	.operand = VN_VAL_TOPOLOGY,
	.opts = topo_validate_opts,
};

static const struct vn_cmd topo_show_cmd = {
	.name = "show",
	.fn = topo_show,
	.summary = "print a topology the way numactl -H shows a machine",
	.synopsis = "TOPOLOGY",
	.operand = VN_VAL_TOPOLOGY,
};

static const struct vn_cli_opt topo_fallback_opts[] = {
	{"kernel-model", 'm', false, "NAME", VN_VAL_MODEL, "which build_zonelists() era to model:"},
	{"cpus-visible", 'c', false, NULL, VN_VAL_NONE,
	 "apply the kernel's preference for CPU-less nodes; off by\n"
	 "default because x86 builds the boot-time lists before any\n"
	 "CPU is in a node's cpumask (lists rebuilt on hotplug see them)"},
	{"arch", 'X', false, "ARCH", VN_VAL_NONE,
	 "the boot-time state of that architecture's kernel: ppc64le\n"
	 "(pseries) maps CPUs to nodes before it builds the lists\n"
	 "(as --cpus-visible); x86_64 and arm64 do not"},
	{"hotplugged", 'H', false, NULL, VN_VAL_NONE,
	 "the lists the kernel rebuilds at run time once every node's\n"
	 "hotplug memory is online and its vCPUs are plugged in (CPUs\n"
	 "visible, memory-less-at-boot nodes with memory)"},
	{"json", 'j', false, NULL, VN_VAL_NONE, "machine-readable output"},
	VN_CLI_OPT_END,
};

static const struct vn_cmd topo_fallback_cmd = {
	.name = "fallback",
	.fn = topo_fallback,
	.summary = "print the per-node memory fallback order the guest kernel will build",
	.synopsis = "TOPOLOGY [--kernel-model NAME] [--cpus-visible | --hotplugged] [--arch ARCH] [--json]",
	.description = "Prints it in the kernel's own boot-log format, to diff against\n"
		       "'dmesg | grep Fallback'.",
	.opts = topo_fallback_opts,
	.operand = VN_VAL_TOPOLOGY,
};

static const struct vn_cli_opt topo_demotion_opts[] = {
	{"kernel-model", 'm', false, "NAME", VN_VAL_NONE,
	 "which mm/memory-tiers.c to model: 6.1 (the default; aliases\n"
	 "kmem, default), v6.1 as Debian 12 ships it; 6.12 (alias hmat),\n"
	 "abstract distances from the topology's <hmat> (docs/tiering.md)"},
	{"json", 'j', false, NULL, VN_VAL_NONE, "machine-readable output"},
	VN_CLI_OPT_END,
};

static const struct vn_cmd topo_demotion_cmd = {
	.name = "demotion",
	.fn = topo_demotion,
	.summary = "print the memory tiers and demotion targets the guest kernel will build",
	.synopsis = "TOPOLOGY [--kernel-model NAME] [--json]",
	.description = "One 'memory_tierN: NODES' line per tier, as\n"
		       "/sys/devices/virtual/memory_tiering/memory_tierN/nodelist reads, then\n"
		       "each node's tier, the nodes reclaim demotes its pages to\n"
		       "(node_demotion[].preferred, one picked at random per page) and the\n"
		       "lower tiers' nodes it falls back to when they are full. Slow nodes\n"
		       "(memory-kind pmem, cxl) are counted as onlined by kmem.",
	.opts = topo_demotion_opts,
	.operand = VN_VAL_TOPOLOGY,
};

static const struct vn_cli_opt topo_random_opts[] = {
	{"seed", 's', false, "N", VN_VAL_NONE, "the seed; one seed is one topology (default 1)"},
	{"nodes", 'n', false, "MIN-MAX", VN_VAL_NONE, "how many nodes, within 2-16 (default 5-8)"},
	{"no-cpuless", 'c', false, NULL, VN_VAL_NONE, "no CPU-less nodes"},
	{"no-memless", 'm', false, NULL, VN_VAL_NONE, "no memory-less nodes"},
	{"slow", 'S', false, NULL, VN_VAL_NONE,
	 "a tiered shape: 1 or more CPU-less nodes of slow memory\n"
	 "(memory-kind pmem or cxl) after the DRAM ones"},
	VN_CLI_OPT_END,
};

static const struct vn_cmd topo_random_cmd = {
	.name = "random",
	.fn = topo_random,
	.summary = "write a random topology to stdout, for checking the model against real boots",
	.synopsis = "[--seed N] [--nodes MIN-MAX] [--no-cpuless] [--no-memless] [--slow]",
	.opts = topo_random_opts,
};

static const struct vn_cmd *const topo_subs[] = {
	&topo_validate_cmd, &topo_show_cmd, &topo_fallback_cmd, &topo_demotion_cmd, &topo_random_cmd, NULL,
};

const struct vn_cmd vn_cmd_topo = {
	.name = "topo",
	.summary = "offline: validate, show a topology, print the model's fallback order and demotion targets",
	.description = "Offline views of a topology: no guest is booted. TOPOLOGY is a file or the name\n"
		       "of a shipped one (e.g. 4node-amd).",
	.subs = topo_subs,
};
