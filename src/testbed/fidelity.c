/*
 * The testbed must never silently run on a shape other than the one asked
 * for: after boot, read back what the guest kernel built and compare.
 */
#include <stdio.h>
#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "testbed/agent-session.h"
#include "testbed/fidelity.h"

#include "topology/arch.h"
#include "topology/tiers.h"
#include "util/alloc.h"
#include "util/cleanup.h"
#include "util/strbuf.h"
#include "virt/domain-xml.h"

#define SYSNODE "/sys/devices/system/node"

static int read_guest(struct vn_agent *a, const char *path, char **out, struct vn_error *err)
{
	size_t len;

	return vn_agent_read_file(a, path, VN_AGENT_REPLY_MS, out, &len, err);
}

/* Returns 1 when the guest file is missing (reported as a mismatch, not an error). */
static int read_node_file(struct vn_agent *a, unsigned node, const char *file, char **out, struct vn_error *err)
{
	char path[128];
	struct vn_error e = {0};

	snprintf(path, sizeof(path), SYSNODE "/node%u/%s", node, file);
	if (read_guest(a, path, out, &e) < 0) {
		if (e.kind == VN_ERR_INFRA && e.code == -ETIMEDOUT) {
			*err = e;
			return e.code;
		}
		vn_error_clear(&e);
		return 1;
	}
	return 0;
}

static void check_shape(struct vn_agent *a, const struct vn_topology *t, struct vn_strbuf *bad, int *rc,
			struct vn_error *err)
{
	_cleanup_free_ char *possible = NULL, *has_mem = NULL;
	struct vn_cpuset guest_nodes, mem_nodes;
	struct vn_error e = {0};

	if ((*rc = read_guest(a, SYSNODE "/possible", &possible, err)) < 0)
		return;
	possible[strcspn(possible, "\n")] = '\0';
	if (vn_cpulist_parse(possible, &guest_nodes, &e) < 0 || vn_cpuset_count(&guest_nodes) != t->nnodes ||
	    vn_cpuset_last(&guest_nodes) != (int)t->nnodes - 1)
		vn_strbuf_printf(bad, "nodes: expected 0-%u, guest has %s\n", t->nnodes - 1, possible);
	vn_error_clear(&e);
	if ((*rc = read_guest(a, SYSNODE "/has_memory", &has_mem, err)) < 0)
		return;
	has_mem[strcspn(has_mem, "\n")] = '\0';
	vn_cpulist_parse(has_mem, &mem_nodes, &e);
	vn_error_clear(&e);

	for (unsigned i = 0; i < t->nnodes; i++) {
		const struct vn_node *n = &t->nodes[i];
		_cleanup_free_ char *dist = NULL, *cpus = NULL;

		if ((*rc = read_node_file(a, i, "distance", &dist, err)) < 0)
			return;
		if (*rc == 1) {
			vn_strbuf_printf(bad, "node %u: missing in the guest (no " SYSNODE "/node%u)\n", i, i);
			*rc = 0;
			continue;
		}
		struct vn_strbuf want = VN_STRBUF_INIT;
		for (unsigned j = 0; j < t->nnodes; j++)
			vn_strbuf_printf(&want, "%s%u", j ? " " : "", t->distance[i][j]);
		dist[strcspn(dist, "\n")] = '\0';
		if (strcmp(dist, want.s) != 0)
			vn_strbuf_printf(bad, "node %u distances: expected %s, guest has %s\n", i, want.s, dist);
		vn_strbuf_free(&want);

		if ((*rc = read_node_file(a, i, "cpulist", &cpus, err)) < 0)
			return;
		struct vn_cpuset got = {0};
		if (*rc == 0) {
			cpus[strcspn(cpus, "\n")] = '\0';
			vn_cpulist_parse(cpus, &got, &e);
			vn_error_clear(&e);
		}
		*rc = 0;
		/* Hot-pluggable vCPUs are absent until plugged: sysfs lists only the present ones. */
		struct vn_cpuset boot = vn_node_boot_cpus(n);
		if (memcmp(&got, &boot, sizeof(got)) != 0) {
			_cleanup_free_ char *w = vn_cpulist_format(&boot), *g = vn_cpulist_format(&got);
			vn_strbuf_printf(bad, "node %u cpus: expected '%s', guest has '%s'\n", i, w, g);
		}
		if (vn_node_has_memory(n) != vn_cpuset_has(&mem_nodes, i))
			vn_strbuf_printf(bad, "node %u memory: expected %s, guest %s\n", i,
					 vn_node_has_memory(n) ? "memory" : "a memory-less node",
					 vn_cpuset_has(&mem_nodes, i) ? "gives it memory" : "has none");
	}
}

/*
 * Which nodes the guest puts the topology's devices on. The ones vnuma adds
 * are the only virtio disks (class 0x0100 SCSI-like or 0x0180) and NICs
 * (0x0200) a guest has; the agent's virtio-serial (0x0780) is not counted.
 * Kinds are compared as sorted node lists, which is all the PCI side tells.
 */
#define VIRTIO_VENDOR 0x1af4

static void node_list(struct vn_strbuf *b, const int *nodes, unsigned n)
{
	if (!n)
		vn_strbuf_printf(b, "none");
	for (unsigned i = 0; i < n; i++)
		vn_strbuf_printf(b, "%s%d", i ? " " : "", nodes[i]);
}

static int int_cmp(const void *a, const void *b)
{
	return *(const int *)a - *(const int *)b;
}

static void check_devices(struct vn_agent *a, const struct vn_topology *t, struct vn_strbuf *bad, int *rc,
			  struct vn_error *err)
{
	static const char *const argv[] = {
		"sh", "-c",
		/* Unquoted: the three files' lines become one. */
		"for d in /sys/bus/pci/devices/*; do echo ${d##*/} $(cat $d/vendor $d/class $d/numa_node); done", NULL};
	_cleanup_free_ char *out = NULL;
	int want[2][VN_TOPOLOGY_MAX_DEVICES], got[2][VN_TOPOLOGY_MAX_DEVICES];
	unsigned nwant[2] = {0}, ngot[2] = {0};

	for (unsigned i = 0; i < t->nnodes; i++)
		for (unsigned k = 0; k < t->nodes[i].ndevices; k++) {
			enum vn_device_kind kind = t->nodes[i].devices[k].kind;
			want[kind][nwant[kind]++] = (int)i;
		}
	if ((*rc = vn_testbed_run(a, argv, 20, &out, err)) < 0)
		return;
	for (char *line = out, *next; line && *line; line = next) {
		next = strchr(line, '\n');
		if (next)
			*next++ = '\0';
		char bdf[32];
		unsigned vendor, class;
		int node;
		unsigned dom, bus;
		if (sscanf(line, "%31s %x %x %d", bdf, &vendor, &class, &node) != 4 || vendor != VIRTIO_VENDOR)
			continue;
		/* The topology's devices sit behind the expanders; a root disk (vnuma up --image) on bus 0's ports does not count. */
		if (sscanf(bdf, "%x:%x:", &dom, &bus) == 2 && bus < VN_DOMAIN_PXB_BUSNR)
			continue;
		unsigned base = class >> 8;
		int kind = base == 0x0100 || base == 0x0180 ? VN_DEVICE_DISK : base == 0x0200 ? VN_DEVICE_NIC : -1;
		/* More than declared is a mismatch already; the list need not grow past the cap. */
		if (kind >= 0 && ngot[kind] < VN_TOPOLOGY_MAX_DEVICES)
			got[kind][ngot[kind]++] = node;
		else if (kind >= 0)
			ngot[kind]++;
	}
	for (int kind = VN_DEVICE_DISK; kind <= VN_DEVICE_NIC; kind++) {
		unsigned n = ngot[kind] < VN_TOPOLOGY_MAX_DEVICES ? ngot[kind] : VN_TOPOLOGY_MAX_DEVICES;
		qsort(got[kind], n, sizeof(int), int_cmp);
		if (ngot[kind] == nwant[kind] && memcmp(got[kind], want[kind], n * sizeof(int)) == 0)
			continue;
		vn_strbuf_printf(bad, "%s devices (numa_node): expected ", vn_device_kind_name(kind));
		node_list(bad, want[kind], nwant[kind]);
		vn_strbuf_printf(bad, ", guest has ");
		node_list(bad, got[kind], n);
		vn_strbuf_printf(bad, "%s\n", ngot[kind] > n ? " ..." : "");
	}
}

#define TIERS "/sys/devices/virtual/memory_tiering"
/* One memory_tier per chunk of abstract distance in use: at most one per node (6.12 with HMAT). */
#define TIERS_SEEN_MAX VN_MAX_NODES

/*
 * The guest's memory_tier*\/nodelist against the tier model (a topology
 * with slow memory only). A guest's listing is trusted for nothing: entries
 * that are not memory_tierN are left out, at most TIERS_SEEN_MAX are read.
 */
static int check_tiers(struct vn_agent *a, const struct vn_topology *t, enum vn_tier_model m, char **diff,
		       struct vn_error *err)
{
	static const char *const ls[] = {"ls", TIERS, NULL};
	_cleanup_free_ char *names = NULL;
	char *lists[TIERS_SEEN_MAX] = {0};
	struct vn_tier_seen seen[TIERS_SEEN_MAX];
	unsigned n = 0;
	struct vn_tiers want;
	int rc = 0;

	if ((rc = vn_testbed_run(a, ls, 20, &names, err)) < 0)
		return vn_error_prefix(err, "cannot list the guest's memory tiers (%s)", TIERS);
	for (char *save = NULL, *w = strtok_r(names, " \t\n", &save); w && n < TIERS_SEEN_MAX;
	     w = strtok_r(NULL, " \t\n", &save)) {
		char path[128], *end;
		if (strncmp(w, "memory_tier", 11) != 0 || w[11] < '0' || w[11] > '9')
			continue;
		long id = strtol(w + 11, &end, 10);
		if (*end || id > (INT_MAX >> VN_MEMTIER_CHUNK_BITS))
			continue;
		snprintf(path, sizeof(path), TIERS "/memory_tier%ld/nodelist", id);
		if ((rc = read_guest(a, path, &lists[n], err)) < 0) {
			vn_error_prefix(err, "cannot read the guest's %s", path);
			goto cleanup;
		}
		seen[n] = (struct vn_tier_seen){(int)id, lists[n]};
		n++;
	}
	vn_tiers_compute(t, m, &want);
	*diff = vn_tiers_diff(&want, seen, n);
cleanup:
	for (unsigned i = 0; i < TIERS_SEEN_MAX; i++)
		free(lists[i]);
	return rc;
}

/*
 * The tier model of the guest's own kernel, by its osrelease (read once by
 * the caller; NULL with *relerr when it could not be). The text is
 * the guest's: a release that names no model (older than 6.1, or not a
 * release at all) is a mismatch with its reason in *why, not an error.
 */
static int guest_tier_model(const char *rel, const struct vn_error *relerr, enum vn_tier_model *m, char **label,
			    char **why, struct vn_error *err)
{
	struct vn_error e = {0};
	char shown[65];
	size_t i = 0;

	if (!rel)
		return vn_infra_error(err, relerr->code, "cannot read the guest's kernel release: %s", relerr->msg);
	if (vn_tier_model_for_release(rel, m, &e) < 0) {
		*why = vn_xasprintf("  %s\n", e.msg);
		vn_error_clear(&e);
		return 0;
	}
	/* Passed the parse: digits, a dot, digits; the rest is shown only where it is a release's. */
	for (; i < sizeof(shown) - 1 && rel[i] && (isalnum((unsigned char)rel[i]) || strchr(".+-_~", rel[i])); i++)
		shown[i] = rel[i];
	shown[i] = 0;
	*label = vn_xasprintf("model %s, kernel %s", vn_tier_model_name(*m), shown);
	return 0;
}

/*
 * The tiers line: the guest's tiers against its own kernel's model. A
 * topology with slow memory always gets one; one with <hmat> only where
 * the kernel tiers boot memory by HMAT (6.12's model): on 6.1, or a kernel
 * older than any model, such a shape has one tier and nothing to check.
 */
static int report_tiers(struct vn_agent *a, const struct vn_topology *t, const char *rel, const struct vn_error *relerr,
			struct vn_strbuf *rep, bool *ok, struct vn_error *err)
{
	_cleanup_free_ char *tdiff = NULL, *label = NULL, *why = NULL;
	enum vn_tier_model m = VN_TIER_MODEL_DEFAULT;
	bool slow = vn_topology_has_slow_memory(t);
	int rc;

	if (!slow && !t->nhmat)
		return 0;
	if ((rc = guest_tier_model(rel, relerr, &m, &label, &why, err)) < 0)
		return rc;
	if (!slow && (why || m == VN_TIER_MODEL_6_1))
		return 0;
	if (why) {
		vn_strbuf_printf(rep, "memory tiers (no model): MISMATCH\n%s", why);
		*ok = false;
		return 0;
	}
	if ((rc = check_tiers(a, t, m, &tdiff, err)) < 0)
		return rc;
	vn_strbuf_printf(rep, "memory tiers (%s): %s\n", label, tdiff ? "MISMATCH" : "ok");
	if (tdiff)
		vn_strbuf_printf(rep, "%s", tdiff);
	*ok = !tdiff;
	return 0;
}

/*
 * The fallback model for the booted kernel: the one given, else its
 * release's era (osrelease, NULL when the guest could not give it: the
 * default); and whether it onlines memory as it is added
 * (auto_online_blocks, a build option, not an era). A file the guest
 * cannot give leaves the default; only a timeout fails.
 */
static int guest_fallback_opts(struct vn_agent *a, const enum vn_fallback_model *model, const char *release,
			       struct vn_fallback_opts *fo, struct vn_error *err)
{
	_cleanup_free_ char *online = NULL;
	struct vn_error e = {0};

	fo->model = model ? *model : VN_FALLBACK_DEFAULT;
	if (!model)
		vn_fallback_model_for_release(release, &fo->model);
	if (read_guest(a, "/sys/devices/system/memory/auto_online_blocks", &online, &e) == 0)
		fo->online_on_add = strncmp(online, "online", 6) == 0;
	if (e.code == -ETIMEDOUT) {
		*err = e;
		return e.code;
	}
	vn_error_clear(&e);
	return 0;
}

int vn_testbed_fidelity(struct vn_agent *a, const struct vn_topology *t, const enum vn_fallback_model *model,
			enum vn_arch arch, bool *ok, char **report, struct vn_error *err)
{
	struct vn_strbuf bad = VN_STRBUF_INIT, rep = VN_STRBUF_INIT;
	_cleanup_free_ char *dmesg = NULL, *diff = NULL, *release = NULL;
	struct vn_error relerr = {0};
	struct vn_fallback_opts fo = VN_FALLBACK_OPTS_DEFAULT;
	struct vn_fallback want, got;
	bool devices_ok = true;
	int rc = 0;

	vn_topology_arch_fallback(arch, &fo);
	check_shape(a, t, &bad, &rc, err);
	if (rc < 0)
		goto cleanup;
	vn_strbuf_printf(&rep, "shape (nodes, distances, CPUs, memory): %s\n", bad.len ? "MISMATCH" : "ok");
	if (bad.len)
		vn_strbuf_append(&rep, bad.s, bad.len);

	if (t->ndevices_total) {
		struct vn_strbuf dev = VN_STRBUF_INIT;
		check_devices(a, t, &dev, &rc, err);
		if (rc == 0) {
			vn_strbuf_printf(&rep, "devices (PCI numa_node): %s\n", dev.len ? "MISMATCH" : "ok");
			if (dev.len)
				vn_strbuf_append(&rep, dev.s, dev.len);
			devices_ok = !dev.len;
		}
		vn_strbuf_free(&dev);
		if (rc < 0)
			goto cleanup;
	}

	static const char *const argv[] = {"dmesg", NULL};
	if ((rc = vn_testbed_run(a, argv, 20, &dmesg, err)) < 0)
		goto cleanup;
	/* One read for both models; a timeout fails here, any other failure only where a model needs it. */
	if (read_guest(a, "/proc/sys/kernel/osrelease", &release, &relerr) < 0 && relerr.code == -ETIMEDOUT) {
		rc = vn_infra_error(err, relerr.code, "%s", relerr.msg);
		goto cleanup;
	}
	if ((rc = guest_fallback_opts(a, model, release, &fo, err)) < 0)
		goto cleanup;
	if (vn_topology_has_slow_memory(t)) {
		if ((rc = vn_tiers_fallback_check(dmesg, t, &fo, &diff, err)) < 0)
			goto cleanup;
	} else {
		if ((rc = vn_fallback_parse_log(dmesg, &got, err)) < 0)
			goto cleanup;
		vn_fallback_compute(t, &fo, &want);
		diff = vn_fallback_diff(&want, &got);
	}
	vn_strbuf_printf(&rep, "fallback order (model %s%s): %s\n", vn_fallback_model_name(fo.model),
			 vn_topology_has_slow_memory(t) ? ", boot and each kmem rebuild" : "",
			 diff ? "MISMATCH" : "ok");
	if (diff)
		vn_strbuf_printf(&rep, "%s", diff);
	bool tiers_ok = true;
	if ((rc = report_tiers(a, t, release, &relerr, &rep, &tiers_ok, err)) < 0)
		goto cleanup;
	*ok = !bad.len && devices_ok && !diff && tiers_ok;
	*report = vn_strbuf_steal(&rep);
cleanup:
	vn_error_clear(&relerr);
	vn_strbuf_free(&bad);
	vn_strbuf_free(&rep);
	return rc;
}
