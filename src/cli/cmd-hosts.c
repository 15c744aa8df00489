/* vnuma hosts check: the libvirt hosts a matrix can spread over, one row each. */
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <json-c/json.h>

#include "cli/args.h"
#include "cli/cli.h"
#include "testbed/hosts-check.h"
#include "testbed/testbed.h"
#include "util/parse.h"
#include "testbed/hosts.h"

static const struct vn_cmd hosts_check_cmd;

static void print_json(const struct vn_hosts_check *c)
{
	json_object *o = json_object_new_object(), *a = json_object_new_array();

	for (size_t i = 0; i < c->n; i++)
		json_object_array_add(a, vn_testbed_host_check_json(&c->v[i]));
	json_object_object_add(o, "hosts", a);
	json_object_object_add(o, "ok", json_object_new_boolean(vn_testbed_hosts_check_ok(c)));
	printf("%s\n", json_object_to_json_string_ext(o, JSON_C_TO_STRING_PRETTY | JSON_C_TO_STRING_NOSLASHESCAPE));
	json_object_put(o);
}

static const char *gib(uint64_t bytes, char *buf, size_t len)
{
	snprintf(buf, len, "%.1fG", (double)bytes / (1024.0 * 1024 * 1024));
	return buf;
}

static void print_table(const struct vn_hosts_check *c)
{
	int w = 4;
	unsigned guests = 0, usable = 0;

	for (size_t i = 0; i < c->n; i++)
		if ((int)strlen(c->v[i].uri) > w)
			w = (int)strlen(c->v[i].uri);
	printf("%-*s  %-4s  %-16s %-8s %-8s %4s %7s  %-8s %-11s %-11s %s\n", w, "HOST", "OK", "HOSTNAME", "LIBVIRT",
	       "QEMU", "CPUS", "MEMORY", "GUESTS", "KVM", "ACCEL", "POOL");
	for (size_t i = 0; i < c->n; i++) {
		const struct vn_host_check *h = &c->v[i];
		char lv[32], qv[32], mem[32], cap[32], free_[32];
		bool ok = h->reachable && !h->error;

		if (!h->reachable) {
			printf("%-*s  %-4s  %s\n", w, h->uri, "FAIL", "unreachable");
		} else {
			snprintf(cap, sizeof(cap), "%u%s", h->capacity, h->capacity_auto ? " auto" : "");
			printf("%-*s  %-4s  %-16.16s %-8s %-8s %4u %7s  %-8s %-11s %-11s %s", w, h->uri,
			       ok ? "ok" : "FAIL", h->hostname ? h->hostname : "?",
			       vn_version_format(h->libvirt_version, lv, sizeof(lv)),
			       vn_version_format(h->hypervisor_version, qv, sizeof(qv)), h->cpus,
			       gib(h->memory, mem, sizeof(mem)), cap, h->kvm_offered ? "offered" : "no",
			       h->accel[0] ? h->accel : "-", vn_testbed_host_pool_name(h->pool));
			if (h->pool_path)
				printf(" %s (%s free)", h->pool_path, gib(h->pool_available, free_, sizeof(free_)));
			printf("\n");
		}
		if (h->accel_reason[0])
			printf("%-*s  accelerator %s: %s\n", w, "", h->accel, h->accel_reason);
		if (h->error)
			printf("%-*s  %s\n", w, "", h->error);
		if (ok) {
			usable++;
			guests += h->capacity;
		}
	}
	printf("%u of %zu hosts usable, %u guests at once\n", usable, c->n, guests);
}

static int hosts_check(int argc, char **argv, struct vn_error *err)
{
	_cleanup_(vn_testbed_hosts_clear) struct vn_hosts hosts = {0};
	struct vn_hosts_check res = {0};
	struct vn_testbed_ctx ctx;
	struct vn_cli_args a;
	bool json = false, probe = true;
	unsigned vcpus = 0;
	uint64_t memory = 0, n;
	int c, rc;

	vn_cli_args_init(&a, &hosts_check_cmd, argc, argv);
	while ((c = vn_cli_next(&a, err)) > 0) {
		switch (c) {
		case 'H': rc = vn_testbed_hosts_load(optarg, &hosts, err); break;
		case 'v':
			rc = vn_cli_count(&a, "vcpus", optarg, 1, 4096, &n, err);
			vcpus = (unsigned)n;
			break;
		case 'm': rc = vn_cli_size(&a, "memory", optarg, 1, UINT64_C(1) << 40, &memory, err); break;
		case 'j':
			json = true;
			rc = 0;
			break;
		case 'P':
			probe = false;
			rc = 0;
			break;
		default: rc = 0;
		}
		if (rc < 0)
			return rc;
	}
	if (c < 0 || vn_cli_operands(&a, 0, 0, err) < 0)
		return a.exit;
	/* --connect's hosts after the file's, as run takes them. */
	for (unsigned i = 0; i < a.nuris; i++)
		if ((rc = vn_testbed_hosts_add(&hosts, a.uris[i], err)) < 0)
			return rc;
	if (!hosts.n)
		return vn_input_error(err, "no hosts given (--hosts FILE or --connect URI)");
	if ((rc = vn_cli_ctx(&a, &ctx, err)) < 0)
		return rc;
	rc = vn_testbed_hosts_check(&ctx, &hosts, vcpus, memory, probe, &res, err);
	vn_testbed_ctx_clear(&ctx);
	if (rc < 0) {
		vn_testbed_hosts_check_clear(&res);
		return rc;
	}
	if (json)
		print_json(&res);
	else
		print_table(&res);
	rc = vn_testbed_hosts_check_ok(&res) ? VN_EXIT_OK : VN_EXIT_INFRA;
	vn_testbed_hosts_check_clear(&res);
	return rc;
}

static const struct vn_cli_opt hosts_check_opts[] = {
	{"hosts", 'H', false, "FILE", VN_VAL_FILE,
	 "the hosts file: one libvirt URI per line, then optionally\n"
	 "a capacity (guests at once, or auto), pool=DIR and timeout=SECONDS\n"
	 "(how long its connection may take to open, default 20; docs/hosts.md)"},
	{"vcpus", 'v', false, "N", VN_VAL_NONE, "size the auto capacity for guests of N vCPUs (default 1)"},
	{"memory", 'm', false, "SIZE", VN_VAL_NONE, "... and of SIZE memory (default 512M)"},
	{"no-probe", 'P', false, NULL, VN_VAL_NONE,
	 "no probe boot: ACCEL stays unproven ('-'), and the check takes\n"
	 "seconds instead of a TCG kernel start per host"},
	{"json", 'j', false, NULL, VN_VAL_NONE,
	 "one JSON object: {hosts: [{uri, where, reachable, error, hostname,\n"
	 "libvirt, qemu, cpus, memory_bytes, capacity, capacity_auto,\n"
	 "kvm_offered, accel, accel_reason, pool: {state, path, capacity_bytes,\n"
	 "available_bytes}, seconds}], ok}"},
	VN_CLI_OPT_END,
};

static const struct vn_cmd hosts_check_cmd = {
	.name = "check",
	.fn = hosts_check,
	.summary = "reachability, versions, CPUs, memory, capacity, KVM and the storage pool of each host",
	.synopsis = "--hosts FILE | --connect URI... [--vcpus N] [--memory SIZE] [--no-probe] [--json]",
	.description = "Connects to each host (an unreachable one is a row saying why, the others are\n"
		       "still checked) and reports its libvirt and QEMU versions, CPUs and memory, how\n"
		       "many guests it takes at once (its hosts line's capacity, or what fits: CPUs per\n"
		       "vCPU and 3/4 of its memory), whether it offers KVM, and its storage pool\n"
		       "'vnuma', which is created when missing (POOL says created or reused; the\n"
		       "embedded driver has none and uses local files). ACCEL is the accelerator a\n"
		       "probe boot there proved (the stock kernel on one node: KVM only once it\n"
		       "printed within 5 s, else TCG), as every vnuma boot proves it; the verdict is\n"
		       "cached for that host. Exit 0 when every host is reachable with a usable pool\n"
		       "and boots, 3 otherwise.",
	.opts = hosts_check_opts,
	.common = VN_CLI_GUEST, /* --connect: one more host each (capacity auto, default pool) */
};

static const struct vn_cmd *const hosts_subs[] = {&hosts_check_cmd, NULL};

const struct vn_cmd vn_cmd_hosts = {
	.name = "hosts",
	.summary = "check the libvirt hosts a matrix spreads over (scale-out)",
	.description = "A hosts file names libvirt hosts, local or remote (qemu+ssh://user@host/system),\n"
		       "for runs spread over them; see docs/hosts.md.",
	.subs = hosts_subs,
};
