/* vnuma shell / collect: a running guest's console, and one snapshot of its state. */
#include <getopt.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "cli/args.h"
#include "cli/cli.h"
#include "testbed/agent-session.h"
#include "testbed/collect.h"
#include "testbed/deep.h"
#include "testbed/shell.h"
#include "testbed/snapshot.h"
#include "testbed/testbed.h"
#include "util/cleanup.h"

static void shell_attached(void *data, const char *name)
{
	(void)data;
	if (isatty(STDIN_FILENO))
		fprintf(stderr, "Connected to %s's console; Ctrl-] leaves. Press Enter for a prompt.\r\n", name);
}

static int cmd_shell(int argc, char **argv, struct vn_error *err)
{
	struct vn_cli_args args;
	struct vn_testbed_ctx ctx;
	const char *name;
	int rc;

	if (vn_cli_guest_args(&args, &vn_cmd_shell, argc, argv, NULL, NULL, &name, err) < 0)
		return args.exit;
	if ((rc = vn_cli_ctx(&args, &ctx, err)) < 0)
		return rc;
	rc = vn_testbed_shell(&ctx, name, STDIN_FILENO, STDOUT_FILENO, shell_attached, NULL, err);
	vn_testbed_ctx_clear(&ctx);
	return rc < 0 ? rc : VN_EXIT_OK;
}

struct collect_args {
	const char *outdir, *dump, *topology;
	bool deep;
	enum vn_fallback_model model;
};

static int collect_opt(struct vn_cli_args *a, int c, void *data, struct vn_error *err)
{
	struct collect_args *o = data;

	if (c == 'o')
		o->outdir = optarg;
	else if (c == 'D')
		o->deep = true;
	else if (c == 'd')
		o->dump = optarg;
	else if (c == 't')
		o->topology = optarg;
	else if (c == 'm')
		return a->exit = vn_fallback_model_lookup(optarg, &o->model, err);
	return 0;
}

/* --dump among the options: collect reads a kept dump, and takes no guest. */
static bool dump_given(int argc, char **argv)
{
	for (int i = 1; i < argc && strcmp(argv[i], "--") != 0; i++)
		if (strcmp(argv[i], "--dump") == 0 || strncmp(argv[i], "--dump=", 7) == 0)
			return true;
	return false;
}

/* The kernel's structures against the model: exit 1 only when they differ, 3 when they cannot be read. */
static int collect_deep(struct vn_cli_args *args, const char *name, const struct collect_args *o, struct vn_error *err)
{
	struct vn_deep_req q = {.name = name, .debug_root = "", .model = o->model, .save_dir = o->outdir};
	struct vn_deep_result r = {0};
	struct vn_testbed_ctx ctx;
	int rc;

	if (o->dump)
		rc = vn_deep_check_dump(&q, o->dump, o->topology, &r, err);
	else if ((rc = vn_cli_ctx(args, &ctx, err)) == 0) {
		rc = vn_testbed_collect_deep(&ctx, &q, &r, err);
		vn_testbed_ctx_clear(&ctx);
	}
	if (rc < 0) {
		vn_deep_result_clear(&r);
		return rc;
	}
	printf("%s", r.report);
	fprintf(stderr, "%s: the kernel's own structures, read by drgn (%s) from %s, against %s%s%s\n", name, r.vmlinux,
		o->dump ? "the dump" : "a dump of its memory", r.topology, o->outdir ? "; deep.json in " : "",
		o->outdir ? o->outdir : "");
	if (!r.ok)
		fprintf(stderr,
			"MISMATCH: 'model' is vnuma's prediction for the topology, 'kernel' what the running "
			"kernel built; the kernel is the judge: the model, or the kernel under test, is not what "
			"the other says\n");
	rc = r.ok ? VN_EXIT_OK : VN_EXIT_ASSERT;
	vn_deep_result_clear(&r);
	return rc;
}

static int cmd_collect(int argc, char **argv, struct vn_error *err)
{
	struct collect_args o = {.model = VN_FALLBACK_DEFAULT};
	struct vn_cli_args args;
	const char *name;
	int rc;

	/* A kept dump is read without its guest: no NAME then. */
	if (dump_given(argc, argv)) {
		vn_cli_args_init(&args, &vn_cmd_collect, argc, argv);
		while ((rc = vn_cli_next(&args, err)) > 0)
			if (collect_opt(&args, rc, &o, err) < 0)
				return args.exit;
		if (rc < 0 || vn_cli_operands(&args, 0, 0, err) < 0)
			return args.exit;
		if (!o.deep)
			return vn_input_error(err, "collect --dump FILE reads a kept dump with --deep only");
		return collect_deep(&args, o.dump, &o, err);
	}
	if (vn_cli_guest_args(&args, &vn_cmd_collect, argc, argv, collect_opt, &o, &name, err) < 0)
		return args.exit;
	if (optind < argc)
		return vn_input_error(err, "collect takes one guest, not also '%s'", argv[optind]);
	if (o.topology)
		return vn_input_error(err, "collect --topology is for --dump FILE: a guest says its own topology");
	if (o.deep)
		return collect_deep(&args, name, &o, err);
	if (!o.outdir)
		return vn_input_error(err, "collect needs -o DIR (or --deep)");
	_cleanup_agent_ struct vn_agent *a = NULL;
	_cleanup_(vn_snapshot_clear) struct vn_snapshot snap = {0};
	if ((rc = vn_cli_agent(&args, name, &a, err)) < 0 || (rc = vn_testbed_collect(a, o.outdir, &snap, err)) < 0)
		return rc;
	fprintf(stderr, "snapshot of %s written to %s (snapshot.json and raw files)\n", name, o.outdir);
	return VN_EXIT_OK;
}

const struct vn_cmd vn_cmd_shell = {
	.name = "shell",
	.fn = cmd_shell,
	.summary = "interactive root shell on a guest's console (Ctrl-] leaves)",
	.synopsis = "NAME",
	.description = "Attaches to the guest's serial console; Ctrl-] leaves (also inside tmux).",
	.common = VN_CLI_GUEST,
	.operand = VN_VAL_GUEST,
	.stop_at_operand = true,
};

static const struct vn_cli_opt collect_opts[] = {
	{"output", 'o', true, "DIR", VN_VAL_DIR,
	 "where to write the snapshot (required without --deep;\nwith it, drgn's JSON as DIR/deep.json)"},
	{"deep", 'D', false, NULL, VN_VAL_NONE,
	 "read the kernel's own structures from a dump of its memory\n"
	 "with drgn and its debug vmlinux: zonelists, SLIT, memory tiers,\n"
	 "node_demotion, sched domains' NUMA levels; compare with the model"},
	{"kernel-model", 'm', false, "M", VN_VAL_MODEL, "fallback-order model the zonelists are held to (--deep)"},
	{"dump", 'd', false, "FILE", VN_VAL_FILE,
	 "with --deep and no NAME: read a kept dump (vnuma dump -o FILE,\n"
	 "run --dump-on's vmcore) with the vmlinux FILE.json names"},
	{"topology", 't', false, "TOPO", VN_VAL_FILE,
	 "the topology the dumped guest booted (--dump; default:\n"
	 "topology.xml beside FILE, as a run's directory has it)"},
	VN_CLI_OPT_END,
};

const struct vn_cmd vn_cmd_collect = {
	.name = "collect",
	.fn = cmd_collect,
	.summary = "one snapshot: vmstat, per-node numastat/meminfo, distances, dmesg",
	.synopsis = "NAME -o DIR\nNAME --deep [-o DIR] [--kernel-model M]\n--deep --dump FILE [--topology TOPO] [-o "
		    "DIR] [--kernel-model M]",
	.description = "Writes /proc/vmstat, per-node numastat, meminfo, vmstat, distance and cpulist,\n"
		       "numactl -H, dmesg, the kernel command line and version, and snapshot.json\n"
		       "holding all of it parsed.\n"
		       "\n"
		       "--deep reads what the kernel built, a second witness beside dmesg's fallback\n"
		       "lines: a dump of the guest's memory (removed after) is read by drgn with the\n"
		       "kernel's debug vmlinux (linux-image-RELEASE-dbg for Debian's kernel), and each\n"
		       "node's zonelist, the SLIT, the memory tiers and node_demotion targets and the\n"
		       "sched domains' NUMA levels are compared with the model. Exit 1 when one\n"
		       "differs (both sides printed), 3 when they cannot be read. --dump FILE reads\n"
		       "a dump already kept instead, its guest long gone. See\n"
		       "docs/debugging.md.",
	.opts = collect_opts,
	.common = VN_CLI_GUEST,
	.operand = VN_VAL_GUEST,
};
