/*
 * The memory tiers a 6.1 guest builds and the demotion targets it picks,
 * step for step as mm/memory-tiers.c does, so that a tiered topology's
 * expected sysfs and demotion paths are known before it boots.
 */
#include "topology/tiers.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "topology/fallback.h"
#include "util/alloc.h"
#include "util/cleanup.h"
#include "util/strbuf.h"

const struct vn_tier_model_info vn_tier_models[] = {
	{VN_TIER_MODEL_6_1, "6.1", "kmem default", "v6.1, Debian 12's",
	 "memory_tier_init() puts every node with boot memory in the DRAM type (adistance 576, memory_tier4); "
	 "kmem's dax_slowmem_type (5 x 576, memory_tier22) holds the nodes it onlines; "
	 "establish_demotion_targets(); checked against linux-source-6.1 mm/memory-tiers.c",
	 6, 1},
	{VN_TIER_MODEL_6_12, "6.12", "hmat",
	 "v6.12 (read from 6.12.95, bookworm-backports'); picked for later ones too",
	 "every node's abstract distance from the HMAT figures of its initiator, 576 x latency / DRAM's x DRAM's "
	 "bandwidth / its own (mt_perf_to_adistance()), where hmat_set_default_dram_perf() registered the algorithm; "
	 "else 6.1's (576 for boot memory, 2880 for kmem's); establish_demotion_targets() as in 6.1",
	 6, 12},
	{0, NULL, NULL, NULL, NULL, 0, 0},
};

int vn_tier_model_lookup(const char *name, enum vn_tier_model *out, struct vn_error *err)
{
	struct vn_strbuf known = VN_STRBUF_INIT;

	for (const struct vn_tier_model_info *m = vn_tier_models; m->name; m++) {
		bool alias = false;
		size_t n = strlen(name);
		for (const char *p = m->aliases; *p && !alias; p += strcspn(p, " "), p += *p == ' ')
			alias = n && strncmp(p, name, n) == 0 && (p[n] == ' ' || !p[n]);
		if (strcmp(m->name, name) == 0 || alias) {
			*out = m->model;
			vn_strbuf_free(&known);
			return 0;
		}
		vn_strbuf_printf(&known, "%s%s", known.len ? ", " : "", m->name);
	}
	vn_input_error(err, "unknown tier model '%s' (known: %s; docs/tiering.md, \"Kernel versions\")", name, known.s);
	vn_strbuf_free(&known);
	return -EINVAL;
}

const char *vn_tier_model_name(enum vn_tier_model m)
{
	for (const struct vn_tier_model_info *i = vn_tier_models; i->name; i++)
		if (i->model == m)
			return i->name;
	return "?";
}

bool vn_topology_has_slow_memory(const struct vn_topology *t)
{
	for (unsigned n = 0; n < t->nnodes; n++)
		if (vn_node_is_slow(&t->nodes[n]))
			return true;
	return false;
}

/* What a kernel release may hold (the guest's is shown back only in these). */
#define RELEASE_CHARS "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789.+-_~"

int vn_tier_model_for_release(const char *release, enum vn_tier_model *out, struct vn_error *err)
{
	unsigned major, minor;

	if (!vn_kernel_release_version(release, &major, &minor)) {
		char shown[41];
		size_t i = 0;
		for (; i < sizeof(shown) - 1 && release && release[i] && release[i] != '\n'; i++)
			shown[i] = strchr(RELEASE_CHARS, release[i]) ? release[i] : '?';
		shown[i] = 0;
		return vn_input_error(err, "kernel release '%s' is not MAJOR.MINOR...", shown);
	}
	const struct vn_tier_model_info *best = NULL;
	for (const struct vn_tier_model_info *m = vn_tier_models; m->name; m++)
		if (m->major < major || (m->major == major && m->minor <= minor))
			if (!best || m->major > best->major || (m->major == best->major && m->minor > best->minor))
				best = m;
	if (!best)
		return vn_input_error(err, "kernel %u.%u has no memory tiers model (memory tiers came in 6.1)", major,
				      minor);
	*out = best->model;
	return 0;
}

/* node_memory_types[node]: kmem's type for the nodes it onlines, DRAM for every node with boot memory. */
static int adistance(const struct vn_node *n)
{
	return vn_node_is_slow(n) ? VN_MEMTIER_ADISTANCE_DAX : VN_MEMTIER_ADISTANCE_DRAM;
}

/* find_create_memory_tier(): tiers kept sorted by adistance_start, one per chunk. */
static void place_tiers(const struct vn_topology *t, const struct vn_fallback_state *s, struct vn_tiers *out)
{
	for (unsigned n = 0; n < t->nnodes; n++) {
		out->tier_of[n] = -1;
		if (!s->memory[n])
			continue;
		int start = out->adistance[n] >> VN_MEMTIER_CHUNK_BITS << VN_MEMTIER_CHUNK_BITS;
		unsigned i = 0;
		while (i < out->ntiers && out->tier[i].adistance_start < start)
			i++;
		if (i == out->ntiers || out->tier[i].adistance_start != start) {
			memmove(&out->tier[i + 1], &out->tier[i], (out->ntiers - i) * sizeof(out->tier[0]));
			memset(&out->tier[i], 0, sizeof(out->tier[i]));
			out->tier[i].adistance_start = start;
			out->tier[i].id = start >> VN_MEMTIER_CHUNK_BITS;
			out->ntiers++;
		}
		out->tier[i].nodes[n] = true;
	}
	for (unsigned n = 0; n < t->nnodes; n++)
		for (unsigned i = 0; i < out->ntiers; i++)
			if (out->tier[i].nodes[n])
				out->tier_of[n] = (int)i;
}

/*
 * establish_demotion_targets() for one node: find_next_best_node() over the
 * next lower tier (every other N_MEMORY node marked used), taking nodes
 * while their distance is the first one's. find_next_best_node() ranks by
 * distance plus its own penalties, so the first node taken need not be the
 * nearest: the kernel's choice is modelled, not the ideal one.
 */
static void demotion_targets(const struct vn_topology *t, const struct vn_fallback_state *s,
			     const struct vn_fallback *zl, unsigned node, struct vn_tiers *out)
{
	struct vn_fallback_opts fo = VN_FALLBACK_OPTS_DEFAULT;
	bool used[VN_MAX_NODES] = {false};
	int best = -1, target;

	out->distance[node] = -1;
	if (out->tier_of[node] < 0 || (unsigned)out->tier_of[node] + 1 == out->ntiers)
		return;
	const struct vn_tier *lower = &out->tier[out->tier_of[node] + 1];
	for (unsigned n = 0; n < t->nnodes; n++)
		used[n] = s->memory[n] && !lower->nodes[n];
	while ((target = vn_fallback_next_best(t, &fo, s, node, used, zl->node_load)) >= 0) {
		int d = t->distance[node][target];
		if (best != -1 && d != best)
			break;
		best = d;
		out->preferred[node][target] = true;
		out->npreferred[node]++;
	}
	out->distance[node] = best;
}

void vn_tiers_compute(const struct vn_topology *t, enum vn_tier_model m, struct vn_tiers *out)
{
	struct vn_fallback_opts fo = VN_FALLBACK_OPTS_DEFAULT;
	struct vn_fallback_state s;
	struct vn_fallback zl;

	memset(out, 0, sizeof(*out));
	out->model = m;
	out->nnodes = t->nnodes;
	/* After kmem: every slow node in N_MEMORY, CPUs online (N_CPU); the zonelists rebuilt on its onlining. */
	memset(&s, 0, sizeof(s));
	for (unsigned n = 0; n < t->nnodes; n++) {
		struct vn_cpuset boot = vn_node_boot_cpus(&t->nodes[n]);
		s.memory[n] = vn_node_has_memory(&t->nodes[n]);
		s.cpus[n] = vn_cpuset_first(&boot) >= 0;
	}
	vn_fallback_compute_state(t, &fo, &s, &zl);
	for (unsigned n = 0; n < t->nnodes; n++)
		out->adistance[n] = adistance(&t->nodes[n]);
	if (m == VN_TIER_MODEL_6_12)
		vn_tiers_adistance_6_12(t, s.cpus, out);
	place_tiers(t, &s, out);
	for (unsigned n = 0; n < t->nnodes; n++)
		demotion_targets(t, &s, &zl, n, out);
	/* top_tier_adistance: the slowest tier holding a node with CPUs, and every tier above it. */
	int top = -1;
	for (unsigned i = out->ntiers; i-- > 0 && top < 0;)
		for (unsigned n = 0; n < t->nnodes; n++)
			if (out->tier[i].nodes[n] && s.cpus[n])
				top = (int)i;
	for (int i = 0; i <= top; i++)
		out->tier[i].top = true;
	/* lower_tier_mask: N_MEMORY less this tier and those above. */
	bool lower[VN_MAX_NODES];
	memcpy(lower, s.memory, sizeof(lower));
	for (unsigned i = 0; i < out->ntiers; i++) {
		for (unsigned n = 0; n < t->nnodes; n++)
			lower[n] = lower[n] && !out->tier[i].nodes[n];
		memcpy(out->tier[i].lower, lower, sizeof(lower));
	}
}

char *vn_tiers_nodelist(const bool *set, unsigned nnodes)
{
	struct vn_cpuset c = {0};

	for (unsigned n = 0; n < nnodes; n++)
		if (set[n])
			vn_cpuset_set(&c, n);
	return vn_cpulist_format(&c);
}

char *vn_tiers_format_sysfs(const struct vn_tiers *tr)
{
	struct vn_strbuf b = VN_STRBUF_INIT;

	for (unsigned i = 0; i < tr->ntiers; i++) {
		_cleanup_free_ char *l = vn_tiers_nodelist(tr->tier[i].nodes, tr->nnodes);
		vn_strbuf_printf(&b, "memory_tier%d: %s\n", tr->tier[i].id, l);
	}
	return vn_strbuf_steal(&b);
}

char *vn_tiers_format(const struct vn_tiers *tr)
{
	struct vn_strbuf b = VN_STRBUF_INIT;
	_cleanup_free_ char *sysfs = vn_tiers_format_sysfs(tr);

	vn_strbuf_printf(&b, "%s", sysfs);
	for (unsigned n = 0; n < tr->nnodes; n++) {
		vn_strbuf_printf(&b, "Node %u: ", n);
		if (tr->tier_of[n] < 0) {
			vn_strbuf_printf(&b, "no memory, in no tier\n");
			continue;
		}
		const struct vn_tier *own = &tr->tier[tr->tier_of[n]];
		_cleanup_free_ char *pref = vn_tiers_nodelist(tr->preferred[n], tr->nnodes);
		_cleanup_free_ char *low = vn_tiers_nodelist(own->lower, tr->nnodes);
		if (!tr->npreferred[n])
			vn_strbuf_printf(&b, "memory_tier%d, lowest tier, demotes nowhere\n", own->id);
		else
			vn_strbuf_printf(&b, "memory_tier%d, demotes to %s (distance %d), else to %s\n", own->id, pref,
					 tr->distance[n], low);
	}
	return vn_strbuf_steal(&b);
}

static int seen_cmp(const void *a, const void *b)
{
	const struct vn_tier_seen *x = a, *y = b;

	return (x->id > y->id) - (x->id < y->id);
}

char *vn_tiers_diff(const struct vn_tiers *want, const struct vn_tier_seen *seen, unsigned nseen)
{
	_cleanup_free_ char *model = vn_tiers_format_sysfs(want);
	_cleanup_free_ struct vn_tier_seen *sorted = vn_xcalloc(nseen ? nseen : 1, sizeof(*sorted));
	struct vn_strbuf got = VN_STRBUF_INIT;

	if (nseen)
		memcpy(sorted, seen, nseen * sizeof(*seen));
	/* Sysfs lists the tiers in directory order; the model, fastest (lowest id) first. */
	qsort(sorted, nseen, sizeof(*sorted), seen_cmp);
	for (unsigned i = 0; i < nseen; i++) {
		size_t len = strcspn(sorted[i].nodelist, "\n");
		while (len && (sorted[i].nodelist[len - 1] == ' ' || sorted[i].nodelist[len - 1] == '\t'))
			len--;
		vn_strbuf_printf(&got, "memory_tier%d: %.*s\n", sorted[i].id, (int)len, sorted[i].nodelist);
	}
	if (strcmp(model, got.s ? got.s : "") == 0) {
		vn_strbuf_free(&got);
		return NULL;
	}
	struct vn_strbuf b = VN_STRBUF_INIT;
	vn_strbuf_printf(&b, "  expected (model %s):\n", vn_tier_model_name(want->model));
	for (char *l = model, *nl; *l; l = nl + 1) {
		nl = strchr(l, '\n');
		vn_strbuf_printf(&b, "    %.*s\n", (int)(nl - l), l);
	}
	vn_strbuf_printf(&b, "  guest:\n");
	for (char *l = got.s, *nl; l && *l; l = nl + 1) {
		nl = strchr(l, '\n');
		vn_strbuf_printf(&b, "    %.*s\n", (int)(nl - l), l);
	}
	if (!nseen)
		vn_strbuf_printf(&b, "    (no memory tiers)\n");
	vn_strbuf_free(&got);
	return vn_strbuf_steal(&b);
}
