#include "topology/fallback.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "topology/tiers.h"
#include "util/strbuf.h"

const struct vn_fallback_model_info vn_fallback_models[] = {
	{VN_FALLBACK_RESET, "pre-5.15", "reset 5.14", "v2.6.23 .. v5.14",
	 "build_zonelists() sets node_load[node] = load for the first node of each distance group, "
	 "overwriting what earlier nodes' lists added (since f0c0b2b808f2 \"change zonelist order\")"},
	{VN_FALLBACK_ACCUMULATE, "5.15", "accumulate", "v5.15 .. v5.17",
	 "54d032ced983 \"mm/page_alloc: use accumulated load when building node fallback list\": "
	 "node_load[node] += load, load counting down from nr_online_nodes"},
	{VN_FALLBACK_SAME_PENALTY, "5.18", "same-penalty current 6.1 default",
	 "v5.18 .. v6.1, Debian 12's 6.1 (6.2 .. 6.11 unchecked)",
	 "\"mm/page_alloc: add same penalty is enough to get round-robin order\": node_load[node] += 1; "
	 "checked against linux-source-6.1 mm/page_alloc.c"},
	{VN_FALLBACK_SKIP_MEMORYLESS, "6.12", "skip-memoryless", "Debian's 6.12 (the change came after v6.1)",
	 "find_next_best_node() takes the local node first only when it is in N_MEMORY, so a node without "
	 "memory is not in its own list; otherwise as 5.18. Checked against linux-source-6.12 "
	 "mm/page_alloc.c and Debian's 6.12.95 booted"},
	{0, NULL, NULL, NULL, NULL},
};

static bool word_in(const char *list, const char *w)
{
	size_t n = strlen(w);

	for (const char *p = list; *p;) {
		const char *e = strchr(p, ' ');
		size_t len = e ? (size_t)(e - p) : strlen(p);
		if (len == n && strncmp(p, w, n) == 0)
			return true;
		if (!e)
			break;
		p = e + 1;
	}
	return false;
}

int vn_fallback_model_lookup(const char *name, enum vn_fallback_model *out, struct vn_error *err)
{
	struct vn_strbuf known = VN_STRBUF_INIT;

	for (const struct vn_fallback_model_info *m = vn_fallback_models; m->name; m++) {
		if (strcmp(m->name, name) == 0 || word_in(m->aliases, name)) {
			*out = m->model;
			vn_strbuf_free(&known);
			return 0;
		}
		vn_strbuf_printf(&known, "%s%s", known.len ? ", " : "", m->name);
	}
	vn_input_error(err, "unknown kernel model '%s' (known: %s)", name, known.s);
	vn_strbuf_free(&known);
	return -EINVAL;
}

const char *vn_fallback_model_name(enum vn_fallback_model m)
{
	for (const struct vn_fallback_model_info *i = vn_fallback_models; i->name; i++)
		if (i->model == m)
			return i->name;
	return "?";
}

/*
 * Releases between 6.1 and 6.12 were not looked at: they are held to 5.18,
 * the last era seen before 6.12, which may be wrong for the later of them.
 */
bool vn_kernel_release_version(const char *release, unsigned *major, unsigned *minor)
{
	unsigned long ma, mi;
	char *end;

	if (!release || release[0] < '0' || release[0] > '9' || (ma = strtoul(release, &end, 10)) > 999 ||
	    *end != '.' || end[1] < '0' || end[1] > '9' || (mi = strtoul(end + 1, &end, 10)) > 999)
		return false;
	*major = (unsigned)ma;
	*minor = (unsigned)mi;
	return true;
}

bool vn_fallback_model_for_release(const char *release, enum vn_fallback_model *out)
{
	unsigned major, minor;

	if (!vn_kernel_release_version(release, &major, &minor))
		return false;
	unsigned v = major * 1000 + minor;
	if (v >= 6012)
		*out = VN_FALLBACK_SKIP_MEMORYLESS;
	else if (v >= 5018)
		*out = VN_FALLBACK_SAME_PENALTY;
	else if (v >= 5015)
		*out = VN_FALLBACK_ACCUMULATE;
	else
		*out = VN_FALLBACK_RESET;
	return true;
}

/* find_next_best_node(), with the kernel's arithmetic kept as it is. */
int vn_fallback_next_best(const struct vn_topology *t, const struct vn_fallback_opts *o,
			  const struct vn_fallback_state *s, unsigned node, bool *used, const long *node_load)
{
	unsigned nr_online = t->nnodes; /* every node vnuma defines has CPUs or memory */
	long min_val = LONG_MAX;
	int best = -1;

	/* 6.12 takes the local node only when it has memory (else the loop below skips it: not in N_MEMORY). */
	if (!used[node] && (o->model != VN_FALLBACK_SKIP_MEMORYLESS || s->memory[node])) {
		used[node] = true;
		return (int)node;
	}
	for (unsigned n = 0; n < t->nnodes; n++) {
		/* for_each_node_state(n, N_MEMORY) */
		if (!s->memory[n] || used[n])
			continue;
		long val = t->distance[node][n];
		val += (n < node);
		if (s->cpus[n])
			val += 1; /* PENALTY_FOR_NODE_WITH_CPUS */
		if (o->model == VN_FALLBACK_SAME_PENALTY || o->model == VN_FALLBACK_SKIP_MEMORYLESS)
			val *= o->max_numnodes;
		else
			val *= (long)nr_online * o->max_numnodes; /* MAX_NODE_LOAD * MAX_NUMNODES */
		val += node_load[n];
		if (val < min_val) {
			min_val = val;
			best = (int)n;
		}
	}
	if (best >= 0)
		used[best] = true;
	return best;
}

void vn_fallback_state_boot(const struct vn_topology *t, const struct vn_fallback_opts *o, struct vn_fallback_state *s)
{
	memset(s, 0, sizeof(*s));
	for (unsigned n = 0; n < t->nnodes; n++) {
		struct vn_cpuset boot = vn_node_boot_cpus(&t->nodes[n]);
		s->memory[n] = vn_node_has_boot_memory(&t->nodes[n]);
		s->cpus[n] = o->cpus_visible && vn_cpuset_first(&boot) >= 0;
	}
}

void vn_fallback_state_hotplugged(const struct vn_topology *t, struct vn_fallback_state *s)
{
	memset(s, 0, sizeof(*s));
	for (unsigned n = 0; n < t->nnodes; n++) {
		s->memory[n] = vn_node_has_memory(&t->nodes[n]) || t->nodes[n].hotplug_memory > 0;
		s->cpus[n] = vn_node_has_cpus(&t->nodes[n]);
	}
}

char *vn_fallback_state_format(const struct vn_topology *t, const struct vn_fallback_state *s)
{
	struct vn_cpuset mem = {0}, cpus = {0};

	for (unsigned n = 0; n < t->nnodes; n++) {
		if (s->memory[n])
			vn_cpuset_set(&mem, n);
		if (s->cpus[n])
			vn_cpuset_set(&cpus, n);
	}
	char *m = vn_cpulist_format(&mem), *c = vn_cpulist_format(&cpus);
	struct vn_strbuf b = VN_STRBUF_INIT;
	vn_strbuf_printf(&b, "memory on nodes %s, CPUs seen on nodes %s", *m ? m : "none", *c ? c : "none");
	free(m);
	free(c);
	return vn_strbuf_steal(&b);
}

void vn_fallback_compute(const struct vn_topology *t, const struct vn_fallback_opts *o, struct vn_fallback *out)
{
	struct vn_fallback_state s;

	vn_fallback_state_boot(t, o, &s);
	vn_fallback_compute_state(t, o, &s, out);
}

static void build_one(const struct vn_topology *t, const struct vn_fallback_opts *o, const struct vn_fallback_state *s,
		      unsigned local, long *node_load, struct vn_fallback *out);

void vn_fallback_compute_state(const struct vn_topology *t, const struct vn_fallback_opts *o,
			       const struct vn_fallback_state *s, struct vn_fallback *out)
{
	/* __build_all_zonelists() clears node_load once, then builds every node's list. */
	long *node_load = out->node_load;

	memset(out, 0, sizeof(*out));
	out->nnodes = t->nnodes;
	for (unsigned local = 0; local < t->nnodes; local++)
		build_one(t, o, s, local, node_load, out);
}

void vn_fallback_compute_node(const struct vn_topology *t, const struct vn_fallback_opts *o,
			      const struct vn_fallback_state *s, unsigned node, struct vn_fallback *out)
{
	memset(out, 0, sizeof(*out));
	out->nnodes = t->nnodes;
	build_one(t, o, s, node, out->node_load, out);
}

/* One node's list (build_zonelists()), node_load[] as the builds before it in the same pass left it. */
static void build_one(const struct vn_topology *t, const struct vn_fallback_opts *o, const struct vn_fallback_state *s,
		      unsigned local, long *node_load, struct vn_fallback *out)
{
	bool used[VN_MAX_NODES] = {false};
	unsigned prev = local;
	long load = t->nnodes; /* nr_online_nodes */
	int node;

	while ((node = vn_fallback_next_best(t, o, s, local, used, node_load)) >= 0) {
		/* Penalise the first node of each distance group: round-robin between lists. */
		if (t->distance[local][node] != t->distance[local][prev]) {
			switch (o->model) {
			case VN_FALLBACK_RESET: node_load[node] = load; break;
			case VN_FALLBACK_ACCUMULATE: node_load[node] += load; break;
			case VN_FALLBACK_SAME_PENALTY:
			case VN_FALLBACK_SKIP_MEMORYLESS: node_load[node] += 1; break;
			}
		}
		out->order[local][out->len[local]++] = (unsigned char)node;
		prev = (unsigned)node;
		load--;
	}
	out->present[local] = true;
}

void vn_fallback_put_list(struct vn_strbuf *b, const struct vn_fallback *f, unsigned n)
{
	for (unsigned i = 0; i < f->len[n]; i++)
		vn_strbuf_printf(b, " %u", f->order[n][i]);
}

/* As the kernel prints it, trailing space included. */
static void format_line(struct vn_strbuf *b, const struct vn_fallback *f, unsigned n)
{
	vn_strbuf_printf(b, "Fallback order for Node %u:", n);
	vn_fallback_put_list(b, f, n);
	vn_strbuf_printf(b, " ");
}

char *vn_fallback_format(const struct vn_fallback *f)
{
	struct vn_strbuf b = VN_STRBUF_INIT;

	for (unsigned n = 0; n < f->nnodes; n++) {
		if (!f->present[n])
			continue;
		format_line(&b, f, n);
		vn_strbuf_printf(&b, "\n");
	}
	return vn_strbuf_steal(&b);
}

static const char FALLBACK_KEY[] = "Fallback order for Node ";

/*
 * One "Fallback order for Node N: a b c" line, p just after the key: its
 * node and order (len nodes, of which at most VN_MAX_NODES are kept), p
 * moved past it. The log is the guest's: every number is range-checked.
 */
static int parse_line(const char **pp, long *node, unsigned char *order, unsigned *len, struct vn_error *err)
{
	const char *p = *pp;
	char *end;

	*node = strtol(p, &end, 10);
	if (end == p || *end != ':' || *node < 0 || *node >= VN_MAX_NODES) {
		char near[40 + 4];
		return vn_error_set(err, VN_ERR_INFRA, -EBADMSG, "unparseable fallback line near '%s'",
				    vn_excerpt(p, strnlen(p, 64), 40, near));
	}
	p = end + 1;
	*len = 0;
	for (;;) {
		while (*p == ' ')
			p++;
		if (*p < '0' || *p > '9')
			break;
		long v = strtol(p, &end, 10);
		if (v < 0 || v >= VN_MAX_NODES || *len >= VN_MAX_NODES)
			return vn_error_set(err, VN_ERR_INFRA, -EBADMSG, "bad node %ld in fallback line for node %ld",
					    v, *node);
		order[(*len)++] = (unsigned char)v;
		p = end;
	}
	*pp = p;
	return 0;
}

static void set_order(struct vn_fallback *f, long node, const unsigned char *order, unsigned len)
{
	memcpy(f->order[node], order, len);
	f->present[node] = true;
	f->len[node] = len;
	if ((unsigned)node + 1 > f->nnodes)
		f->nnodes = (unsigned)node + 1;
}

int vn_fallback_parse_log(const char *log, struct vn_fallback *out, struct vn_error *err)
{
	unsigned char order[VN_MAX_NODES];
	unsigned len;
	long node;
	int rc;

	memset(out, 0, sizeof(*out));
	for (const char *p = strstr(log, FALLBACK_KEY); p; p = strstr(p, FALLBACK_KEY)) {
		p += sizeof(FALLBACK_KEY) - 1;
		if ((rc = parse_line(&p, &node, order, &len, err)) < 0)
			return rc;
		if (!out->present[node])
			set_order(out, node, order, len);
	}
	return 0;
}

int vn_fallback_parse_builds(const char *log, struct vn_fallback *out, unsigned max, unsigned *n, struct vn_error *err)
{
	unsigned char order[VN_MAX_NODES];
	struct vn_fallback *cur = NULL;
	long node, last = -1;
	unsigned len;
	int rc;

	*n = 0;
	for (const char *p = strstr(log, FALLBACK_KEY); p; p = strstr(p, FALLBACK_KEY)) {
		p += sizeof(FALLBACK_KEY) - 1;
		if ((rc = parse_line(&p, &node, order, &len, err)) < 0)
			return rc;
		/* A build prints its nodes in ascending order: a node that is not above the last starts the next. */
		if (node <= last || last < 0) {
			cur = *n < max ? &out[*n] : NULL;
			if (cur)
				memset(cur, 0, sizeof(*cur));
			(*n)++;
		}
		last = node;
		if (cur)
			set_order(cur, node, order, len);
	}
	return 0;
}

char *vn_fallback_diff(const struct vn_fallback *expected, const struct vn_fallback *actual)
{
	struct vn_strbuf b = VN_STRBUF_INIT;
	unsigned n_max = expected->nnodes > actual->nnodes ? expected->nnodes : actual->nnodes;

	for (unsigned n = 0; n < n_max; n++) {
		bool e = n < expected->nnodes && expected->present[n];
		bool a = n < actual->nnodes && actual->present[n];
		if (!e && !a)
			continue;
		if (e && a && expected->len[n] == actual->len[n] &&
		    memcmp(expected->order[n], actual->order[n], expected->len[n]) == 0)
			continue;
		vn_strbuf_printf(&b, "Node %u: expected", n);
		if (e)
			vn_fallback_put_list(&b, expected, n);
		else
			vn_strbuf_printf(&b, " (no line)");
		vn_strbuf_printf(&b, ", kernel printed");
		if (a)
			vn_fallback_put_list(&b, actual, n);
		else
			vn_strbuf_printf(&b, " (no line)");
		vn_strbuf_printf(&b, "\n");
	}
	if (!b.len)
		return NULL;
	return vn_strbuf_steal(&b);
}
