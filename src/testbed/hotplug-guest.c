/*
 * vnuma hotplug: the libvirt half (the request checked against the
 * topology, DIMMs plugged or unplugged, vCPUs plugged) in a child process,
 * as up and down do theirs; the guest half (memory blocks and CPUs onlined
 * or offlined through sysfs) as one shell script of ours, run by whoever
 * holds the agent connection: `vnuma hotplug` its own, a scenario its run's.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "testbed/hotplug-guest.h"
#include "testbed/agent-session.h"
#include "testbed/testbed-priv.h"
#include "util/alloc.h"
#include "util/cleanup.h"
#include "util/isolate.h"
#include "util/state.h"
#include "util/strbuf.h"

enum hp_op { HP_PLAN, HP_DETACH };

struct hp_call {
	const struct vn_testbed_ctx *ctx;
	const struct vn_hotplug_req *q;
	enum hp_op op;
	struct vn_hotplug_plan *plan;
};

/* The plan crosses back from the child as text: "cpus LIST", "dimm ALIAS NODE BYTES BASE" lines. */
static char *plan_text(const struct vn_hotplug_plan *p)
{
	struct vn_strbuf b = VN_STRBUF_INIT;
	_cleanup_free_ char *cpus = vn_cpulist_format(&p->cpus);

	vn_strbuf_printf(&b, "cpus %s\n", *cpus ? cpus : "-");
	for (size_t i = 0; i < p->ndimms; i++)
		vn_strbuf_printf(&b, "dimm %s %u %" PRIu64 " %" PRIu64 "\n", p->dimms[i].alias, p->dimms[i].node,
				 p->dimms[i].bytes, p->dimms[i].base);
	if (p->loc_hi)
		vn_strbuf_printf(&b, "locrange %" PRIu64 " %" PRIu64 "\n", p->loc_lo, p->loc_hi);
	else if (p->loc_why[0])
		vn_strbuf_printf(&b, "locwhy %s\n", p->loc_why);
	return vn_strbuf_steal(&b);
}

static bool alias_ok(const char *s)
{
	for (; *s; s++)
		if (!((*s >= 'a' && *s <= 'z') || (*s >= '0' && *s <= '9') || *s == '-' || *s == '_'))
			return false;
	return true;
}

/* From our own child: trusted in content, still checked so a bug cannot overrun. */
static void plan_parse(const char *text, struct vn_hotplug_plan *p)
{
	char line[512];

	for (const char *s = text; s && *s;) {
		size_t len = strcspn(s, "\n");
		struct vn_domain_dimm d = {0};
		char cpus[200];
		if (len < sizeof(line)) {
			memcpy(line, s, len);
			line[len] = '\0';
			struct vn_error e = {0};
			if (sscanf(line, "cpus %199s", cpus) == 1 && strcmp(cpus, "-") != 0)
				vn_cpulist_parse(cpus, &p->cpus, &e);
			else if (p->ndimms < VN_DOMAIN_DIMMS_MAX &&
				 sscanf(line, "dimm %63s %u %" SCNu64 " %" SCNu64, d.alias, &d.node, &d.bytes,
					&d.base) == 4 &&
				 alias_ok(d.alias))
				p->dimms[p->ndimms++] = d;
			else if (sscanf(line, "locrange %" SCNu64 " %" SCNu64, &p->loc_lo, &p->loc_hi) != 2 &&
				 strncmp(line, "locwhy ", 7) == 0)
				vn_excerpt(line + 7, strlen(line + 7), sizeof(p->loc_why) - 4, p->loc_why);
			vn_error_clear(&e);
		}
		s += len + (s[len] == '\n');
	}
}

static int plan_memory(const struct vn_topology *t, const struct vn_hotplug_req *q, const struct vn_domain_dimm *dimms,
		       size_t n, struct vn_hotplug_plan *p, struct vn_error *err)
{
	const struct vn_node *nd = &t->nodes[q->node];
	const char *file = t->path ? t->path : t->name;
	uint64_t plugged = 0;
	char a[32], b[32], c[32];

	for (size_t i = 0; i < n; i++)
		plugged += dimms[i].node == q->node ? dimms[i].bytes : 0;
	if (q->memory % VN_HOTPLUG_BLOCK_BYTES)
		return vn_input_error(err, "memory %s is not a whole number of 128M memory blocks",
				      vn_size_format(q->memory, a, sizeof(a)));
	if (!q->remove) {
		if (!nd->hotplug_memory)
			return vn_input_error(err, "node %u of %s takes no hotplug memory (give it hotplug=\"SIZE\")",
					      q->node, file);
		if (plugged + q->memory > nd->hotplug_memory)
			return vn_input_error(err, "node %u can take %s more (hotplug=\"%s\" in %s, %s plugged)",
					      q->node, vn_size_format(nd->hotplug_memory - plugged, a, sizeof(a)),
					      vn_size_format(nd->hotplug_memory, b, sizeof(b)), file,
					      vn_size_format(plugged, c, sizeof(c)));
		if (n >= VN_DOMAIN_HOTPLUG_SLOTS)
			return vn_input_error(err, "all %d DIMM slots are taken", VN_DOMAIN_HOTPLUG_SLOTS);
		return 0;
	}
	/* Whole DIMMs, the latest first. */
	uint64_t sum = 0;
	for (size_t i = n; i-- > 0 && sum < q->memory;) {
		if (dimms[i].node != q->node)
			continue;
		p->dimms[p->ndimms++] = dimms[i];
		sum += dimms[i].bytes;
	}
	if (sum != q->memory)
		return vn_input_error(err,
				      "node %u has %s hot-plugged; %s is not a sum of its latest DIMMs (memory is "
				      "removed in whole DIMMs, the latest first)",
				      q->node, vn_size_format(plugged, a, sizeof(a)),
				      vn_size_format(q->memory, b, sizeof(b)));
	return 0;
}

static int plan_cpus(const struct vn_topology *t, const struct vn_hotplug_req *q, const struct vn_cpuset *enabled,
		     struct vn_hotplug_plan *p, struct vn_error *err)
{
	const struct vn_node *nd = &t->nodes[q->node];
	unsigned got = 0, left = 0;

	if (!nd->nhotplug_cpus)
		return vn_input_error(err, "node %u of %s has no hot-pluggable vCPUs (give it hotplug-cpus=\"LIST\")",
				      q->node, t->path ? t->path : t->name);
	for (unsigned cpu = 0; cpu < VN_CPUSET_MAX; cpu++) {
		if (!vn_cpuset_has(&nd->hotplug_cpus, cpu) || vn_cpuset_has(enabled, cpu))
			continue;
		left++;
		if (got < q->cpus) {
			vn_cpuset_set(&p->cpus, cpu);
			got++;
		}
	}
	if (got < q->cpus)
		return vn_input_error(err, "node %u has %u hot-pluggable vCPU%s left to plug, not %u", q->node, left,
				      left == 1 ? "" : "s", q->cpus);
	return 0;
}

/*
 * The topology the guest booted: the copy its up left in the guest dir
 * (boot.c), not the file its metadata names, which may be gone or changed
 * since. A guest up'd by a vnuma without that copy: the file, as then.
 */
static int hp_topology(struct hp_call *c, struct vn_virt_domain *d, struct vn_topology **t, struct vn_error *err)
{
	const char *name = c->q->name;
	_cleanup_free_ char *copy = vn_state_guest_file(c->ctx->state_dir, name, VN_GUEST_TOPOLOGY);
	_cleanup_free_ char *path = NULL;
	struct vn_domain_meta m;
	struct stat sb;
	int rc;

	if (lstat(copy, &sb) == 0 || errno != ENOENT) {
		path = steal_pointer(&copy);
	} else {
		if ((rc = vn_virt_domain_metadata(d, &m, err)) < 0)
			return rc;
		path = steal_pointer(&m.topology_path);
		vn_domain_meta_clear(&m);
		if (!path)
			return vn_input_error(err, "guest '%s' does not say which topology it booted", name);
	}
	if ((rc = vn_topology_load(path, t, err)) < 0)
		return vn_error_prefix(err, "the topology guest '%s' booted", name);
	return 0;
}

/* In the child: look the guest and its topology up, check the request, make the additions. */
static int hp_plan(struct hp_call *c, struct vn_virt_domain *d, struct vn_error *err)
{
	const struct vn_hotplug_req *q = c->q;
	struct vn_hotplug_plan *p = c->plan;
	struct vn_domain_dimm dimms[VN_DOMAIN_DIMMS_MAX];
	_cleanup_topology_ struct vn_topology *t = NULL;
	int rc, n;

	if ((rc = hp_topology(c, d, &t, err)) < 0)
		return rc;
	if (q->node >= t->nnodes)
		return vn_input_error(err, "node %u does not exist (%s has nodes 0-%u)", q->node, t->path,
				      t->nnodes - 1);
	if (!q->memory) {
		struct vn_cpuset enabled;
		if ((rc = vn_virt_domain_vcpus(d, &enabled, err)) < 0 || (rc = plan_cpus(t, q, &enabled, p, err)) < 0)
			return rc;
		for (unsigned cpu = 0; cpu < VN_CPUSET_MAX; cpu++)
			if (vn_cpuset_has(&p->cpus, cpu) && (rc = vn_virt_domain_set_vcpu(d, cpu, true, err)) < 0)
				return rc;
		return 0;
	}
	if ((rc = n = vn_virt_domain_dimms(d, dimms, VN_DOMAIN_DIMMS_MAX, err)) < 0 ||
	    (rc = plan_memory(t, q, dimms, (size_t)n, p, err)) < 0 || q->remove)
		return rc;
	if ((rc = vn_virt_domain_attach_dimm(d, q->node, q->memory, err)) < 0 ||
	    (rc = n = vn_virt_domain_dimms(d, dimms, VN_DOMAIN_DIMMS_MAX, err)) < 0)
		return rc;
	/* libvirt appends devices in the order they are plugged: the new one is the last. */
	if (n == 0 || dimms[n - 1].node != q->node || dimms[n - 1].bytes != q->memory || !dimms[n - 1].base)
		return vn_infra_error(err, -EBADMSG, "libvirt does not report the DIMM it plugged into node %u",
				      q->node);
	p->dimms[p->ndimms++] = dimms[n - 1];
	/* Not knowing where it lies fails no hotplug: its accesses stay unmapped, with this reason. */
	struct vn_error e = {0};
	if (q->locality && vn_virt_domain_dimm_plugin_range(d, &dimms[n - 1], &p->loc_lo, &p->loc_hi, &e) < 0) {
		p->loc_lo = p->loc_hi = 0;
		/* One line: the plan crosses back from the child as lines. */
		vn_excerpt(e.msg, strlen(e.msg), sizeof(p->loc_why) - 4, p->loc_why);
	}
	vn_error_clear(&e);
	return 0;
}

static int hp_child(void *arg, char **out, struct vn_error *err)
{
	struct hp_call *c = arg;
	struct vn_virt *v = NULL;
	struct vn_virt_domain *d = NULL;
	int rc;

	if ((rc = vn_virt_open_within(c->ctx->uri, c->ctx->state_dir, c->ctx->lock_timeout_ms,
				      c->ctx->connect_timeout_ms, &v, err)) < 0)
		return rc;
	if ((rc = vn_testbed_lookup(v, c->q->name, &d, err)) == 0) {
		if (c->op == HP_PLAN)
			rc = hp_plan(c, d, err);
		for (size_t i = 0; c->op == HP_DETACH && rc == 0 && i < c->plan->ndimms; i++)
			rc = vn_virt_domain_detach_dimm(d, &c->plan->dimms[i], err);
	}
	*out = plan_text(c->plan);
	vn_virt_domain_free(d);
	vn_virt_close(v);
	return rc;
}

static int hp_libvirt(struct hp_call *c, struct vn_error *err)
{
	_cleanup_free_ char *out = NULL;

	if (!vn_virt_uri_is_embedded(c->ctx->uri))
		return hp_child(c, &out, err);
	struct vn_hotplug_plan *p = c->plan;
	struct vn_isolate_limits lim = vn_testbed_libvirt_limits(c->ctx, VN_TESTBED_LIBVIRT_MS);
	int rc = vn_isolate(hp_child, c, &lim, &out, err);
	if (c->op == HP_PLAN) {
		memset(p, 0, sizeof(*p));
		plan_parse(out, p);
	}
	return rc;
}

/*
 * The guest half. Block and CPU numbers come from the plan (integers of
 * ours), never from scenario text. It waits for the guest's ACPI handling
 * to make the sysfs entries, and reports the state before and after and how
 * many times the kernel printed its fallback lists (every build starts
 * with node 0's line: the nodes exist from boot).
 */
char *vn_testbed_hotplug_script(const struct vn_hotplug_req *q, const struct vn_hotplug_plan *p)
{
	struct vn_strbuf b = VN_STRBUF_INIT;
	unsigned tries = (unsigned)(q->timeout_ms / 200) + 1;

	vn_strbuf_printf(&b,
			 "set -e; S=/sys/devices/system\n"
			 "builds() { dmesg | grep -c 'Fallback order for Node 0:' || true; }\n"
			 "wait_for() { i=0; while [ ! -e \"$1\" ]; do i=$((i+1)); if [ $i -gt %u ]; then "
			 "echo \"the guest did not show $1 within %d s\" >&2; exit 1; fi; sleep 0.2; done; }\n"
			 "echo builds_before $(builds)\necho mem_before $(cat $S/node/has_memory)\n",
			 tries, q->timeout_ms / 1000);
	if (p->ndimms)
		vn_strbuf_printf(&b, "bs=$((0x$(cat $S/memory/block_size_bytes)))\n");
	for (size_t i = 0; i < p->ndimms; i++) {
		const struct vn_domain_dimm *d = &p->dimms[i];
		const char *how = q->remove                       ? "offline"
				  : q->online == VN_ONLINE_KERNEL ? "online_kernel"
								  : "online_movable";
		vn_strbuf_printf(&b,
				 "b=$((%" PRIu64 " / bs)); e=$(((%" PRIu64 " + %" PRIu64 ") / bs))\n"
				 "while [ $b -lt $e ]; do f=$S/memory/memory$b/state; wait_for $f\n"
				 "  if [ \"$(cat $f)\" %s online ]; then echo %s > $f || { echo \"memory$b: %s "
				 "refused\" >&2; exit 1; }; echo block $b; fi; b=$((b+1)); done\n",
				 d->base, d->base, d->bytes, q->remove ? "=" : "!=", how, how);
	}
	for (unsigned cpu = 0; cpu < VN_CPUSET_MAX; cpu++)
		if (vn_cpuset_has(&p->cpus, cpu))
			vn_strbuf_printf(&b,
					 "f=$S/cpu/cpu%u/online; wait_for $f\n"
					 "[ \"$(cat $f)\" = 1 ] || echo 1 > $f; echo cpu %u\n",
					 cpu, cpu);
	vn_strbuf_printf(&b, "echo builds_after $(builds)\necho mem_after $(cat $S/node/has_memory)\n"
			     "for n in $S/node/node[0-9]*; do echo node ${n##*/node} $(cat $n/cpulist) \"|\" "
			     "$(grep MemTotal $n/meminfo | tr -s ' ' | cut -d' ' -f4); done\n");
	return vn_strbuf_steal(&b);
}

static void nodes_set(const char *list, bool *out)
{
	struct vn_cpuset s;
	struct vn_error e = {0};

	if (vn_cpulist_parse(list, &s, &e) == 0)
		for (unsigned n = 0; n < VN_MAX_NODES; n++)
			out[n] = vn_cpuset_has(&s, n);
	vn_error_clear(&e);
}

/* What the script printed (the guest's words: parsed strictly, values bounded). */
int vn_testbed_hotplug_report(const char *out, const struct vn_hotplug_req *q, struct vn_hotplug_result *r,
			      struct vn_error *err)
{
	bool mem_before[VN_MAX_NODES] = {false}, mem_after[VN_MAX_NODES] = {false};
	unsigned before = 0, after = 0, seen = 0;
	char line[512], list[256], cpus[200];

	for (const char *s = out; *s;) {
		size_t len = strcspn(s, "\n");
		unsigned u, node;
		uint64_t kb;
		if (len < sizeof(line)) {
			memcpy(line, s, len);
			line[len] = '\0';
			if (sscanf(line, "builds_before %u", &u) == 1)
				before = u, seen |= 1;
			else if (sscanf(line, "builds_after %u", &u) == 1)
				after = u, seen |= 2;
			else if (sscanf(line, "mem_before %255s", list) == 1)
				nodes_set(list, mem_before);
			else if (sscanf(line, "mem_after %255s", list) == 1)
				nodes_set(list, mem_after);
			else if (strncmp(line, "block ", 6) == 0)
				r->blocks++;
			else if (sscanf(line, "node %u %199s | %" SCNu64, &node, cpus, &kb) == 3 &&
				 node < VN_MAX_NODES) {
				struct vn_cpuset set = {0};
				struct vn_error e = {0};
				vn_cpulist_parse(cpus, &set, &e);
				vn_error_clear(&e);
				r->seen.cpus[node] = vn_cpuset_first(&set) >= 0;
				if (node == q->node) {
					r->node_cpus = set;
					r->node_memtotal = kb << 10;
				}
			} else if (sscanf(line, "node %u | %" SCNu64, &node, &kb) == 2 && node < VN_MAX_NODES &&
				   node == q->node) {
				r->node_memtotal = kb << 10; /* a node without CPUs */
			}
		}
		s += len + (s[len] == '\n');
	}
	if (seen != 3)
		return vn_infra_error(err, -EBADMSG, "the guest's hotplug script did not report its state");
	r->rebuilds = after > before ? after - before : 0;
	/* On offline the kernel rebuilds before it takes the node out of N_MEMORY. */
	memcpy(r->seen.memory, q->remove ? mem_before : mem_after, sizeof(r->seen.memory));
	return 0;
}

static int run_here(void *data, const char *script, char **out, struct vn_error *err)
{
	const char *argv[] = {"/bin/sh", "-c", script, NULL};

	return vn_testbed_run(data, argv, 600, out, err);
}

int vn_testbed_hotplug(const struct vn_testbed_ctx *ctx, const struct vn_hotplug_req *q, vn_hotplug_sh_fn sh,
		       void *sh_data, struct vn_hotplug_result *r, struct vn_error *err)
{
	struct vn_hotplug_plan plan = {0};
	struct hp_call c = {.ctx = ctx, .q = q, .op = HP_PLAN, .plan = &plan};
	_cleanup_agent_ struct vn_agent *a = NULL;
	_cleanup_free_ char *script = NULL, *out = NULL;
	int rc;

	memset(r, 0, sizeof(*r));
	if (!q->memory == !q->cpus)
		return vn_input_error(err, "hotplug takes memory or vCPUs (one of them)");
	/*
	 * Checked on this host (libvirt 9.0, QEMU 7.2, TCG): the guest offlines
	 * the vCPU, libvirt times out waiting for QEMU's unplug, and QEMU then
	 * dies of heap corruption at the next device change. Not offered.
	 */
	if (q->cpus && q->remove)
		return vn_input_error(err, "vCPUs cannot be unplugged (QEMU 7.2 does not survive it here); "
					   "offline them in the guest instead (/sys/devices/system/cpu/cpuN/online)");
	if (!sh) {
		if ((rc = vn_testbed_agent(ctx, q->name, VN_TESTBED_AGENT_MS, &a, err)) < 0)
			return rc;
		sh = run_here;
		sh_data = a;
	}
	if ((rc = hp_libvirt(&c, err)) < 0)
		return rc;
	script = vn_testbed_hotplug_script(q, &plan);
	if ((rc = sh(sh_data, script, &out, err)) < 0)
		return vn_error_prefix(err, "%s node %u", q->remove ? "unplugging from" : "plugging into", q->node);
	if ((rc = vn_testbed_hotplug_report(out, q, r, err)) < 0)
		return rc;
	r->cpus = plan.cpus;
	r->plan = plan;
	if (q->remove) {
		c.op = HP_DETACH;
		if ((rc = hp_libvirt(&c, err)) < 0)
			return rc;
	}
	return 0;
}
