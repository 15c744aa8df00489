/*
 * vnuma hotplug: the libvirt half (DIMMs, vCPUs) in a child process, as up
 * and down do theirs, and the guest half (memory blocks and CPUs onlined or
 * offlined through sysfs) over the agent, which needs no libvirt.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "testbed/testbed-priv.h"
#include "util/alloc.h"
#include "util/cleanup.h"
#include "util/clock.h"
#include "util/isolate.h"
#include "util/strbuf.h"

#define SYSMEM  "/sys/devices/system/memory"
#define SYSCPU  "/sys/devices/system/cpu"
#define POLL_MS 200

enum hp_op { HP_INFO, HP_ATTACH, HP_DETACH, HP_VCPUS };

struct hp_call {
	const struct vn_testbed_ctx *ctx;
	const char *name;
	enum hp_op op;
	unsigned node;
	uint64_t bytes;
	const struct vn_domain_dimm *dimms; /* HP_DETACH */
	size_t ndimms;
	struct vn_cpuset cpus; /* HP_VCPUS */
	bool on;
};

/* Child output: a line per DIMM, "ALIAS NODE BYTES BASE", after the topology path's line (HP_INFO). */
static void dimms_text(struct vn_strbuf *b, const struct vn_domain_dimm *d, size_t n)
{
	for (size_t i = 0; i < n; i++)
		vn_strbuf_printf(b, "%s %u %" PRIu64 " %" PRIu64 "\n", d[i].alias, d[i].node, d[i].bytes, d[i].base);
}

static int hp_child(void *arg, char **out, struct vn_error *err)
{
	struct hp_call *c = arg;
	struct vn_virt *v = NULL;
	struct vn_virt_domain *d = NULL;
	struct vn_domain_dimm dimms[VN_DOMAIN_DIMMS_MAX];
	struct vn_strbuf b = VN_STRBUF_INIT;
	int rc, n;

	if ((rc = vn_virt_open(c->ctx->uri, c->ctx->state_dir, c->ctx->lock_timeout_ms, &v, err)) < 0)
		return rc;
	if ((rc = vn_testbed_lookup(v, c->name, &d, err)) < 0)
		goto cleanup;
	switch (c->op) {
	case HP_INFO: {
		struct vn_domain_meta m;
		if ((rc = vn_virt_domain_metadata(d, &m, err)) < 0)
			goto cleanup;
		vn_strbuf_printf(&b, "%s\n", m.topology_path ? m.topology_path : "");
		vn_domain_meta_clear(&m);
		if ((rc = n = vn_virt_domain_dimms(d, dimms, VN_DOMAIN_DIMMS_MAX, err)) < 0)
			goto cleanup;
		dimms_text(&b, dimms, (size_t)n);
		break;
	}
	case HP_ATTACH:
		if ((rc = vn_virt_domain_attach_dimm(d, c->node, c->bytes, err)) < 0)
			goto cleanup;
		/* The new one is the last: libvirt appends devices in the order they are plugged. */
		if ((rc = n = vn_virt_domain_dimms(d, dimms, VN_DOMAIN_DIMMS_MAX, err)) < 0)
			goto cleanup;
		if (n > 0)
			dimms_text(&b, &dimms[n - 1], 1);
		break;
	case HP_DETACH:
		for (size_t i = 0; i < c->ndimms; i++)
			if ((rc = vn_virt_domain_detach_dimm(d, &c->dimms[i], err)) < 0)
				goto cleanup;
		break;
	case HP_VCPUS:
		for (unsigned cpu = 0; cpu < VN_CPUSET_MAX; cpu++)
			if (vn_cpuset_has(&c->cpus, cpu) && (rc = vn_virt_domain_set_vcpu(d, cpu, c->on, err)) < 0)
				goto cleanup;
		break;
	}
	rc = 0;
cleanup:
	*out = vn_strbuf_steal(&b);
	vn_virt_domain_free(d);
	vn_virt_close(v);
	return rc;
}

static int hp_libvirt(struct hp_call *c, char **out, struct vn_error *err)
{
	if (!vn_virt_uri_is_embedded(c->ctx->uri))
		return hp_child(c, out, err);
	return vn_isolate(hp_child, c, out, err);
}

/* Parse our own child's DIMM lines (still checked: a bug must not overrun). */
static size_t dimms_parse(const char *text, struct vn_domain_dimm *out, size_t max)
{
	size_t n = 0;

	for (const char *p = text; p && *p && n < max;) {
		const char *e = strchr(p, '\n');
		size_t len = e ? (size_t)(e - p) : strlen(p);
		char line[256];
		struct vn_domain_dimm d = {0};

		if (len < sizeof(line)) {
			memcpy(line, p, len);
			line[len] = '\0';
			if (sscanf(line, "%63s %u %" SCNu64 " %" SCNu64, d.alias, &d.node, &d.bytes, &d.base) == 4)
				out[n++] = d;
		}
		p = e ? e + 1 : p + len;
	}
	return n;
}

static int read_guest_text(struct vn_agent *a, const char *path, char **out, struct vn_error *err)
{
	size_t len;
	int rc = vn_agent_read_file(a, path, VN_AGENT_REPLY_MS, out, &len, err);

	if (rc == 0)
		(*out)[strcspn(*out, "\n")] = '\0';
	return rc;
}

static int guest_cpulist(struct vn_agent *a, const char *path, struct vn_cpuset *set, struct vn_error *err)
{
	_cleanup_free_ char *text = NULL;
	int rc = read_guest_text(a, path, &text, err);

	if (rc < 0)
		return rc;
	if (vn_cpulist_parse(text, set, err) < 0)
		return vn_infra_error(err, -EBADMSG, "the guest's %s is not a cpulist: %s", path, err->msg);
	return 0;
}

static int write_guest(struct vn_agent *a, const char *path, const char *value, struct vn_error *err)
{
	int rc = vn_agent_write_file(a, path, value, strlen(value), -1, 0, VN_AGENT_REPLY_MS, err);

	if (rc < 0)
		vn_error_prefix(err, "writing '%s' to the guest's %s", value, path);
	return rc;
}

/* Poll until path exists in the guest; the guest's ACPI handling of a plug takes a moment. */
static int wait_path(struct vn_agent *a, const char *path, bool present, int timeout_ms, struct vn_error *err)
{
	long end = vn_now_ms() + timeout_ms;

	for (;;) {
		struct vn_agent_stat st;
		struct vn_error e = {0};
		int rc = vn_agent_stat(a, path, true, &st, &e);
		if ((rc == 0) == present) {
			vn_error_clear(&e);
			return 0;
		}
		if (rc < 0 && rc != -ENOENT) {
			*err = e;
			return rc;
		}
		vn_error_clear(&e);
		if (vn_now_ms() >= end)
			return vn_infra_error(err, -ETIMEDOUT, "the guest did not %s %s within %d s",
					      present ? "show" : "remove", path, timeout_ms / 1000);
		usleep(POLL_MS * 1000);
	}
}

/* How many times the kernel printed a whole set of fallback lists: each build starts with the lowest node. */
static unsigned count_builds(const char *dmesg)
{
	static const char key[] = "Fallback order for Node ";
	unsigned n = 0;
	long last = -1;

	for (const char *p = strstr(dmesg, key); p; p = strstr(p, key)) {
		p += sizeof(key) - 1;
		long node = strtol(p, NULL, 10);
		n += node <= last || last < 0;
		last = node;
	}
	return n;
}

static int builds_now(struct vn_agent *a, unsigned *n, struct vn_error *err)
{
	static const char *const argv[] = {"dmesg", NULL};
	_cleanup_free_ char *out = NULL;
	int rc = vn_testbed_run(a, argv, 20, &out, err);

	if (rc == 0)
		*n = count_builds(out);
	return rc;
}

static int memory_blocks(struct vn_agent *a, const struct vn_domain_dimm *d, bool online, const char *how,
			 int timeout_ms, unsigned *count, struct vn_error *err)
{
	_cleanup_free_ char *bs_text = NULL;
	int rc;

	if ((rc = read_guest_text(a, SYSMEM "/block_size_bytes", &bs_text, err)) < 0)
		return rc;
	uint64_t bs = strtoull(bs_text, NULL, 16);
	if (!bs || d->base % bs || d->bytes % bs)
		return vn_infra_error(err, -EBADMSG,
				      "%s at 0x%" PRIx64 " (%" PRIu64 " MiB) is not in whole guest memory blocks of "
				      "0x%" PRIx64 " bytes",
				      d->alias, d->base, d->bytes >> 20, bs);
	for (uint64_t blk = d->base / bs; blk < (d->base + d->bytes) / bs; blk++) {
		char dir[128], state[160];
		_cleanup_free_ char *now = NULL;
		snprintf(dir, sizeof(dir), SYSMEM "/memory%" PRIu64, blk);
		snprintf(state, sizeof(state), "%s/state", dir);
		if ((rc = wait_path(a, state, true, timeout_ms, err)) < 0 ||
		    (rc = read_guest_text(a, state, &now, err)) < 0)
			return rc;
		if ((strcmp(now, "online") == 0) == online)
			continue;
		if ((rc = write_guest(a, state, how, err)) < 0)
			return rc;
		(*count)++;
	}
	return 0;
}

static int node_memtotal(struct vn_agent *a, unsigned node, uint64_t *bytes, struct vn_error *err)
{
	char path[96];
	_cleanup_free_ char *text = NULL;
	size_t len;

	snprintf(path, sizeof(path), "/sys/devices/system/node/node%u/meminfo", node);
	int rc = vn_agent_read_file(a, path, VN_AGENT_REPLY_MS, &text, &len, err);
	if (rc < 0)
		return rc;
	const char *p = strstr(text, "MemTotal:");
	*bytes = p ? strtoull(p + strlen("MemTotal:"), NULL, 10) << 10 : 0;
	return 0;
}

/* The request against the topology and what is plugged already. */
static int plan_memory(const struct vn_topology *t, const struct vn_hotplug_req *q, const struct vn_domain_dimm *dimms,
		       size_t n, struct vn_domain_dimm *take, size_t *ntake, struct vn_error *err)
{
	const struct vn_node *nd = &t->nodes[q->node];
	uint64_t plugged = 0;
	char a[32], b[32], c[32];

	for (size_t i = 0; i < n; i++)
		plugged += dimms[i].node == q->node ? dimms[i].bytes : 0;
	if (q->memory % VN_HOTPLUG_BLOCK_BYTES)
		return vn_input_error(err, "--memory %s is not a whole number of 128M memory blocks",
				      vn_size_format(q->memory, a, sizeof(a)));
	if (!q->remove) {
		if (!nd->hotplug_memory)
			return vn_input_error(err, "node %u of %s takes no hotplug memory (give it hotplug=\"SIZE\")",
					      q->node, t->path ? t->path : t->name);
		if (plugged + q->memory > nd->hotplug_memory)
			return vn_input_error(err, "node %u can take %s more (hotplug=\"%s\" in %s, %s plugged)",
					      q->node, vn_size_format(nd->hotplug_memory - plugged, a, sizeof(a)),
					      vn_size_format(nd->hotplug_memory, b, sizeof(b)),
					      t->path ? t->path : t->name, vn_size_format(plugged, c, sizeof(c)));
		if (n >= VN_DOMAIN_HOTPLUG_SLOTS)
			return vn_input_error(err, "all %d DIMM slots are taken", VN_DOMAIN_HOTPLUG_SLOTS);
		return 0;
	}
	/* Whole DIMMs, the latest first: the order the guest onlined them, the reverse of how it frees them. */
	uint64_t sum = 0;
	*ntake = 0;
	for (size_t i = n; i-- > 0 && sum < q->memory;) {
		if (dimms[i].node != q->node)
			continue;
		take[(*ntake)++] = dimms[i];
		sum += dimms[i].bytes;
	}
	if (sum != q->memory)
		return vn_input_error(err,
				      "node %u has %s hot-plugged; --memory %s is not a sum of its latest DIMMs "
				      "(memory is removed in whole DIMMs, the latest first)",
				      q->node, vn_size_format(plugged, a, sizeof(a)),
				      vn_size_format(q->memory, b, sizeof(b)));
	return 0;
}

static int plan_cpus(const struct vn_topology *t, const struct vn_hotplug_req *q, const struct vn_cpuset *present,
		     struct vn_cpuset *pick, struct vn_error *err)
{
	const struct vn_node *nd = &t->nodes[q->node];
	unsigned got = 0, have = 0;

	memset(pick, 0, sizeof(*pick));
	if (!nd->nhotplug_cpus)
		return vn_input_error(err, "node %u of %s has no hot-pluggable vCPUs (give it hotplug-cpus=\"LIST\")",
				      q->node, t->path ? t->path : t->name);
	/* The lowest absent ones. */
	for (unsigned cpu = 0; cpu < VN_CPUSET_MAX; cpu++) {
		if (!vn_cpuset_has(&nd->hotplug_cpus, cpu) || vn_cpuset_has(present, cpu))
			continue;
		have++;
		if (got < q->cpus) {
			vn_cpuset_set(pick, cpu);
			got++;
		}
	}
	if (got < q->cpus)
		return vn_input_error(err, "node %u has %u hot-pluggable vCPU%s left to plug, not %u", q->node, have,
				      have == 1 ? "" : "s", q->cpus);
	return 0;
}

static int do_memory(struct hp_call *c, struct vn_agent *a, const struct vn_topology *t,
		     const struct vn_domain_dimm *dimms, size_t n, const struct vn_hotplug_req *q,
		     struct vn_hotplug_result *r, struct vn_error *err)
{
	struct vn_domain_dimm take[VN_DOMAIN_DIMMS_MAX];
	size_t ntake = 0;
	int rc;

	if ((rc = plan_memory(t, q, dimms, n, take, &ntake, err)) < 0)
		return rc;
	if (q->remove) {
		for (size_t i = 0; i < ntake; i++)
			if ((rc = memory_blocks(a, &take[i], false, "offline", q->timeout_ms, &r->blocks, err)) < 0)
				return vn_error_prefix(err, "offlining %s", take[i].alias);
		c->op = HP_DETACH;
		c->dimms = take;
		c->ndimms = ntake;
		_cleanup_free_ char *out = NULL;
		return hp_libvirt(c, &out, err);
	}
	_cleanup_free_ char *out = NULL;
	c->op = HP_ATTACH;
	c->bytes = q->memory;
	if ((rc = hp_libvirt(c, &out, err)) < 0)
		return rc;
	struct vn_domain_dimm d;
	if (dimms_parse(out, &d, 1) != 1 || d.node != q->node || d.bytes != q->memory || !d.base)
		return vn_infra_error(err, -EBADMSG, "libvirt did not report the DIMM it plugged into node %u",
				      q->node);
	return memory_blocks(a, &d, true, q->online == VN_ONLINE_KERNEL ? "online_kernel" : "online_movable",
			     q->timeout_ms, &r->blocks, err);
}

static int do_cpus(struct hp_call *c, struct vn_agent *a, const struct vn_topology *t, const struct vn_hotplug_req *q,
		   struct vn_hotplug_result *r, struct vn_error *err)
{
	struct vn_cpuset present;
	_cleanup_free_ char *out = NULL;
	int rc;

	if ((rc = guest_cpulist(a, SYSCPU "/present", &present, err)) < 0 ||
	    (rc = plan_cpus(t, q, &present, &c->cpus, err)) < 0)
		return rc;
	c->op = HP_VCPUS;
	c->on = true;
	if ((rc = hp_libvirt(c, &out, err)) < 0)
		return rc;
	r->cpus = c->cpus;
	for (unsigned cpu = 0; cpu < VN_CPUSET_MAX; cpu++) {
		if (!vn_cpuset_has(&c->cpus, cpu))
			continue;
		char path[96];
		_cleanup_free_ char *now = NULL;
		snprintf(path, sizeof(path), SYSCPU "/cpu%u/online", cpu);
		if ((rc = wait_path(a, path, true, q->timeout_ms, err)) < 0)
			return rc;
		if ((rc = read_guest_text(a, path, &now, err)) < 0)
			return rc;
		if (strcmp(now, "1") != 0 && (rc = write_guest(a, path, "1", err)) < 0)
			return rc;
	}
	return 0;
}

int vn_testbed_hotplug(const struct vn_testbed_ctx *ctx, const struct vn_hotplug_req *q, struct vn_hotplug_result *r,
		       struct vn_error *err)
{
	struct hp_call c = {.ctx = ctx, .name = q->name, .node = q->node};
	_cleanup_free_ char *info = NULL;
	_cleanup_topology_ struct vn_topology *t = NULL;
	_cleanup_agent_ struct vn_agent *a = NULL;
	struct vn_domain_dimm dimms[VN_DOMAIN_DIMMS_MAX];
	unsigned before = 0, after = 0;
	int rc;

	memset(r, 0, sizeof(*r));
	if (!q->memory == !q->cpus)
		return vn_input_error(err, "hotplug takes --memory SIZE or --cpus N (one of them)");
	/*
	 * Checked on this host (libvirt 9.0, QEMU 7.2, TCG): the guest offlines
	 * the vCPU, libvirt times out waiting for QEMU's unplug, and QEMU then
	 * dies of heap corruption at the next device change. Not offered.
	 */
	if (q->cpus && q->remove)
		return vn_input_error(err, "vCPUs cannot be unplugged (QEMU 7.2 does not survive it here); "
					   "offline them in the guest instead (/sys/devices/system/cpu/cpuN/online)");
	if ((rc = vn_testbed_agent(ctx, q->name, VN_TESTBED_AGENT_MS, &a, err)) < 0)
		return rc;
	c.op = HP_INFO;
	if ((rc = hp_libvirt(&c, &info, err)) < 0)
		return rc;
	size_t first = strcspn(info, "\n");
	if (!first)
		return vn_input_error(err, "guest '%s' does not say which topology it booted", q->name);
	info[first] = '\0';
	if ((rc = vn_topology_load(info, &t, err)) < 0)
		return vn_error_prefix(err, "the topology guest '%s' booted", q->name);
	if (q->node >= t->nnodes)
		return vn_input_error(err, "node %u does not exist (%s has nodes 0-%u)", q->node, info, t->nnodes - 1);
	size_t n = dimms_parse(info + first + 1, dimms, VN_DOMAIN_DIMMS_MAX);

	if ((rc = builds_now(a, &before, err)) < 0)
		return rc;
	rc = q->memory ? do_memory(&c, a, t, dimms, n, q, r, err) : do_cpus(&c, a, t, q, r, err);
	if (rc < 0)
		return rc;
	char path[96];
	snprintf(path, sizeof(path), "/sys/devices/system/node/node%u/cpulist", q->node);
	if ((rc = node_memtotal(a, q->node, &r->node_memtotal, err)) < 0 ||
	    (rc = guest_cpulist(a, path, &r->node_cpus, err)) < 0 || (rc = builds_now(a, &after, err)) < 0)
		return rc;
	r->rebuilds = after > before ? after - before : 0;
	return 0;
}
