/* vnuma up / down / list / status: the lifecycle of a testbed guest. */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cli/args.h"
#include "cli/cli.h"
#include "cli/progress.h"
#include "testbed/agent-session.h"
#include "testbed/down.h"
#include "testbed/testbed.h"
#include "testbed/up.h"
#include "util/alloc.h"
#include "util/cleanup.h"
#include "util/arch.h"
#include "util/name.h"
#include "util/parse.h"

/* The guest's name on stdout; how it came up, what it is and how to use it on stderr. */
static void up_print(const struct vn_up_result *r)
{
	printf("%s\n", r->name);
	char how[128];
	if (r->restored)
		snprintf(how, sizeof(how), "restored from snapshot %.16s, agent answered %.1f s after the restore",
			 r->snapshot ? r->snapshot : "", r->boot_s);
	else
		snprintf(how, sizeof(how), "agent answered %.1f s after start%s", r->boot_s,
			 r->snapshot ? "; saved as a snapshot for the next up" : "");
	fprintf(stderr,
		"guest %s is up: kernel %s, %s (%s), %s\n%s"
		"  shell:   vnuma shell %s   (Ctrl-] leaves)\n"
		"  run:     vnuma exec %s -- numactl -H\n"
		"  console: %s\n"
		"  stop:    vnuma down %s\n",
		r->name, r->kernel_release,
		r->accel == VN_ACCEL_KVM ? "KVM"
		: r->icount              ? "TCG, virtual time"
					 : "TCG",
		r->accel_reason, how, r->fidelity_report, r->name, r->name, r->console_log, r->name);
}

/* What the command line asks of up, parsed. */
struct up_args {
	struct vn_cli_args a;
	struct vn_up_opts o;
	char **with;
	size_t nwith;
	char **share, **files;
	size_t nshare, nfiles;
};

/* 0 to go on; 1 when the command ends here with ua->a.exit (after --help, or a bad option); or an input error. */
static int parse_argv(int argc, char **argv, struct up_args *ua, struct vn_error *err)
{
	struct vn_up_opts *o = &ua->o;
	enum vn_arch arch;
	double t;
	int c, rc;

	*o = (struct vn_up_opts){.timeout_s = VN_TESTBED_BOOT_MS / 1000, .model = VN_FALLBACK_DEFAULT};
	vn_cli_args_init(&ua->a, &vn_cmd_up, argc, argv);
	while ((c = vn_cli_next(&ua->a, err)) > 0) {
		switch (c) {
		case 'n': o->name = optarg; break;
		case 'k': o->kernel = optarg; break;
		case 'M': o->modules = optarg; break;
		case 'a': o->append = optarg; break;
		case 'W': vn_cli_with(optarg, &ua->with, &ua->nwith); break;
		case 'I': o->image = optarg; break;
		case 'H': vn_strv_push(&ua->share, &ua->nshare, optarg); break;
		case 'F': vn_strv_push(&ua->files, &ua->nfiles, optarg); break;
		case 'X':
			if ((rc = vn_arch_parse(optarg, "--arch", &arch, err)) < 0)
				return rc;
			o->arch = optarg;
			break;
		case 'c': o->cold = true; break;
		case 'N':
			if (vn_cli_node_memory(&ua->a, optarg, &o->node_memory, err) < 0)
				return ua->a.exit;
			break;
		case 'V': o->virtual_time = true; break;
		case 'm':
			if ((rc = vn_fallback_model_lookup(optarg, &o->model, err)) < 0)
				return rc;
			o->model_given = true;
			break;
		case 't':
			if (vn_cli_duration(&ua->a, "timeout", optarg, 86400, &t, err) < 0)
				return ua->a.exit;
			o->timeout_s = (int)((vn_duration_ms(t) + 999) / 1000); /* whole seconds, none cut short */
			break;
		}
	}
	if (c < 0 || vn_cli_operands(&ua->a, 1, 1, err) < 0)
		return ua->a.exit < 0 ? ua->a.exit : 1;
	o->topology = argv[optind];
	o->with = (const char *const *)ua->with;
	o->share = (const char *const *)ua->share;
	o->files = (const char *const *)ua->files;
	return 0;
}

/* Boots what ua asks for, its progress on the terminal; exit 1 when the guest does not match its topology. */
static int up(struct up_args *ua, struct vn_error *err)
{
	struct vn_testbed_ctx ctx;
	struct vn_up_result r;
	int rc;

	/* The name first: nothing is built or opened for a guest that cannot exist. */
	if (ua->o.name && (rc = vn_guest_name_check(ua->o.name, err)) < 0)
		return rc;
	if ((rc = vn_cli_ctx(&ua->a, &ctx, err)) < 0)
		return rc;
	struct vn_cli_progress prog;
	vn_cli_progress_init(&prog);
	ua->o.progress = vn_cli_progress_up(&prog);
	rc = vn_testbed_up(&ctx, &ua->o, &r, err);
	vn_cli_progress_done(&prog);
	vn_testbed_ctx_clear(&ctx);
	if (rc < 0)
		return rc;
	up_print(&r);
	rc = r.fidelity_ok ? VN_EXIT_OK : VN_EXIT_ASSERT;
	if (!r.fidelity_ok)
		fprintf(stderr,
			"vnuma up: the guest does NOT match %s (see above); it is left running for inspection\n",
			ua->o.topology);
	vn_up_result_clear(&r);
	return rc;
}

static int cmd_up(int argc, char **argv, struct vn_error *err)
{
	struct up_args ua = {0};
	int rc = parse_argv(argc, argv, &ua, err);

	if (rc == 0)
		rc = up(&ua, err);
	else if (rc > 0)
		rc = ua.a.exit;
	vn_strv_free(ua.with);
	vn_strv_free(ua.share);
	vn_strv_free(ua.files);
	return rc;
}

/* The options down, list and status share (--all: down only); 0, or -1 when the command ends with a->exit. */
static int guest_opts_parse(struct vn_cli_args *a, const struct vn_cmd *cmd, int argc, char **argv, bool *all, int min,
			    int max, struct vn_error *err)
{
	int c;

	vn_cli_args_init(a, cmd, argc, argv);
	while ((c = vn_cli_next(a, err)) > 0)
		*all = c == 'A';
	return c < 0 ? -1 : vn_cli_operands(a, min, max, err);
}

static const char *or_q(const char *s)
{
	return s ? s : "?";
}

static int cmd_down(int argc, char **argv, struct vn_error *err)
{
	struct vn_cli_args args;
	struct vn_testbed_ctx ctx;
	bool all = false;
	unsigned n = 0;
	int rc;

	if (guest_opts_parse(&args, &vn_cmd_down, argc, argv, &all, 0, 1, err) < 0)
		return args.exit;
	if (all == (optind < argc))
		return vn_input_error(err, "down takes one NAME or --all");
	if (!all && (rc = vn_guest_name_check(argv[optind], err)) < 0)
		return rc;
	if ((rc = vn_cli_ctx(&args, &ctx, err)) < 0)
		return rc;
	rc = vn_testbed_down(&ctx, all ? NULL : argv[optind], &n, err);
	if (rc == 0)
		fprintf(stderr, "destroyed %u guest%s\n", n, n == 1 ? "" : "s");
	vn_testbed_ctx_clear(&ctx);
	return rc < 0 ? rc : VN_EXIT_OK;
}

static int cmd_list(int argc, char **argv, struct vn_error *err)
{
	struct vn_cli_args args;
	struct vn_testbed_ctx ctx;
	struct vn_testbed_guest *list = NULL;
	size_t n = 0;
	bool all = false;
	int rc;

	if (guest_opts_parse(&args, &vn_cmd_list, argc, argv, &all, 0, 0, err) < 0)
		return args.exit;
	if ((rc = vn_cli_ctx(&args, &ctx, err)) < 0)
		return rc;
	rc = vn_testbed_guest_list(&ctx, &list, &n, err);
	vn_testbed_ctx_clear(&ctx);
	if (rc < 0)
		return rc;
	printf("%-20s %-8s %-6s %-22s %s\n", "NAME", "STATE", "ACCEL", "TOPOLOGY", "KERNEL");
	for (size_t i = 0; i < n; i++)
		printf("%-20s %-8s %-6s %-22s %s\n", list[i].name, list[i].state, or_q(list[i].accel),
		       or_q(list[i].topology_name), or_q(list[i].kernel));
	vn_testbed_guest_list_free(list, n);
	return VN_EXIT_OK;
}

static int cmd_status(int argc, char **argv, struct vn_error *err)
{
	struct vn_cli_args args;
	struct vn_testbed_ctx ctx;
	struct vn_testbed_guest *list = NULL;
	const struct vn_testbed_guest *d = NULL;
	size_t n = 0;
	bool all = false;
	int rc;

	if (guest_opts_parse(&args, &vn_cmd_status, argc, argv, &all, 1, 1, err) < 0)
		return args.exit;
	const char *name = argv[optind];
	if ((rc = vn_guest_name_check(name, err)) < 0 || (rc = vn_cli_ctx(&args, &ctx, err)) < 0)
		return rc;
	if ((rc = vn_testbed_guest_list(&ctx, &list, &n, err)) < 0) {
		vn_testbed_ctx_clear(&ctx);
		return rc;
	}
	for (size_t i = 0; i < n && !d; i++)
		if (strcmp(name, list[i].name) == 0)
			d = &list[i];
	if (!d) {
		vn_testbed_guest_list_free(list, n);
		vn_testbed_ctx_clear(&ctx);
		return vn_input_error(err, "no guest named '%s' (see 'vnuma list')", name);
	}
	printf("name:      %s\nstate:     %s\naccel:     %s\ntopology:  %s (%s)\nkernel:    %s\n"
	       "identity:  %s\nguest dir: %s\n",
	       d->name, d->state, or_q(d->accel), or_q(d->topology_name), or_q(d->topology_path), or_q(d->kernel),
	       or_q(d->kernel_id), or_q(d->guest_dir));
	/* A paused or crashed guest's agent does not answer: no wait for it. */
	if (strcmp(d->state, "running") == 0) {
		_cleanup_agent_ struct vn_agent *a = NULL;
		struct vn_error e = {0};
		_cleanup_free_ char *up = NULL;
		size_t len;
		if (vn_testbed_agent(&ctx, d->name, VN_AGENT_CONTROL_MS, &a, &e) == 0 &&
		    vn_agent_read_file(a, "/proc/uptime", VN_AGENT_CONTROL_MS, &up, &len, &e) == 0)
			printf("uptime:    %.0f s\n", atof(up));
		else
			printf("uptime:    ? (agent: %s)\n", e.msg);
		vn_error_clear(&e);
	}
	vn_testbed_guest_list_free(list, n);
	vn_testbed_ctx_clear(&ctx);
	return VN_EXIT_OK;
}

static const struct vn_cli_opt up_opts[] = {
	{"name", 'n', true, "N", VN_VAL_NONE, "the guest's name (default: the topology's, NAME-2, ...)"},
	{"kernel", 'k', true, "K", VN_VAL_KERNEL,
	 "'stock' (Debian's linux-image, default), a recipe NAME\n"
	 "(kernels/NAME.json, built on first use) or a bzImage path"},
	{"modules", 'M', false, "DIR", VN_VAL_DIR, "modules tree for --kernel (default /lib/modules/<release>)"},
	{"append", 'a', true, "ARGS", VN_VAL_NONE, "extra kernel command line"},
	{"with", 'W', false, "PKG,...", VN_VAL_NONE,
	 "add these Debian packages installed on the host to the guest\n"
	 "image, programs and libraries (bash-static, grep, ...)"},
	{"image", 'I', false, "NAME", VN_VAL_NONE,
	 "a guest image recipe (guest-images/NAME.json, built on first\n"
	 "use): a disk recipe boots its root from a qcow2 overlay on /dev/vda"},
	{"share", 'H', false, "DIR[:GDIR][:ro|rw]", VN_VAL_DIR,
	 "mount host directory DIR in the guest at GDIR (default\n"
	 "/mnt/host/<basename>), read-only unless rw; virtio-9p,\n"
	 "up to 8 (docs/scenarios.md, docs/security.md)"},
	{"file", 'F', false, "PATH[:GPATH]", VN_VAL_NONE,
	 "copy host file PATH into the guest at GPATH (default\n"
	 "/root/<basename>), checksummed as vnuma cp does; up to 32"},
	{"kernel-model", 'm', false, "M", VN_VAL_MODEL,
	 "fallback-order model to check the guest against\n(default: the era of the guest's release):"},
	{"timeout", 't', true, "S", VN_VAL_NONE, "boot deadline in seconds, or 10m (at most 24h; default 180)"},
	{"arch", 'X', false, "ARCH", VN_VAL_NONE,
	 "the guest's architecture: x86_64 (default: the host's), arm64\n"
	 "(virt) or ppc64le (pseries), under TCG with Debian's stock\n"
	 "kernel of that architecture or a source recipe cross-built\n"
	 "for it (docs/arches.md)"},
	{"cold", 'c', false, NULL, VN_VAL_NONE,
	 "boot, even where a booted snapshot of this guest could be restored\n"
	 "(the first boot of a topology, kernel and command line saves one)"},
	{"node-memory", 'N', false, "SIZE", VN_VAL_NONE,
	 "every node with memory gets SIZE (128M or more, e.g. 1G) instead\n"
	 "of the topology's 256M; memory-less nodes stay so (docs/topologies.md)"},
	{"virtual-time", 'V', false, NULL, VN_VAL_NONE,
	 "guest time counts instructions (QEMU -icount, TCG only):\n"
	 "what the guest times no longer depends on the host's load;\n"
	 "the guest idles a few seconds first, until its clock leads\n"
	 "the host's and a guest second is 1e9 instructions, shared by\n"
	 "every vCPU: where threads run costs little or nothing (docs/noise.md)"},
	VN_CLI_OPT_END,
};

const struct vn_cmd vn_cmd_up = {
	.name = "up",
	.fn = cmd_up,
	.summary = "boot a topology, wait for the guest agent, check fidelity",
	.synopsis = "TOPOLOGY [OPTIONS]",
	.description = "Boots TOPOLOGY (a file, or the name of a shipped topology such as 8node-snc)\n"
		       "and waits until the guest agent answers, then checks that the guest sees the\n"
		       "nodes, distances, CPUs and fallback lists asked for. Prints the guest's name on\n"
		       "stdout. Exit 1 when the guest does not match (it stays up to look at), 3 when\n"
		       "it cannot boot (the console tail is printed).",
	.opts = up_opts,
	.common = VN_CLI_GUEST,
	.operand = VN_VAL_TOPOLOGY,
};

static const struct vn_cli_opt down_opts[] = {
	{"all", 'A', false, NULL, VN_VAL_NONE, "every vnuma guest in the state directory"},
	VN_CLI_OPT_END,
};

const struct vn_cmd vn_cmd_down = {
	.name = "down",
	.fn = cmd_down,
	.summary = "destroy a guest (or --all), leaving nothing behind",
	.synopsis = "NAME | --all",
	.description = "Destroys the guest and deletes its directory; no QEMU process is left.",
	.opts = down_opts,
	.common = VN_CLI_GUEST,
	.operand = VN_VAL_GUEST,
};

const struct vn_cmd vn_cmd_list = {
	.name = "list",
	.fn = cmd_list,
	.summary = "list vnuma guests",
	.synopsis = "",
	.description = "One line per guest: name, state, accelerator, topology, kernel.",
	.common = VN_CLI_GUEST,
};

const struct vn_cmd vn_cmd_status = {
	.name = "status",
	.fn = cmd_status,
	.summary = "one guest's topology, kernel, accelerator and uptime",
	.synopsis = "NAME",
	.common = VN_CLI_GUEST,
	.operand = VN_VAL_GUEST,
};
