/*
 * vnuma collect --deep, offline half (deep.h): drgn's JSON read back, with
 * every member's type and range checked, and held against the model.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <json-c/json.h>

#include "testbed/deep.h"
#include "topology/tiers.h"
#include "util/alloc.h"
#include "util/cleanup.h"
#include "util/json.h"
#include "util/parse.h"
#include "util/strbuf.h"

void vn_deep_free(struct vn_deep *d)
{
	if (!d)
		return;
	free(d->zonelists_absent);
	free(d->distance_absent);
	free(d->tiers_absent);
	free(d->demotion_absent);
	free(d->sched_absent);
	for (unsigned i = 0; i < VN_MAX_NODES; i++)
		for (unsigned j = 0; j < VN_MAX_NODES; j++)
			free(d->level_cpus[i][j]);
	free(d);
}

static bool get_int(struct json_object *v, int64_t min, int64_t max, int64_t *out)
{
	if (!v || !json_object_is_type(v, json_type_int))
		return false;
	*out = json_object_get_int64(v);
	return *out >= min && *out <= max;
}

static bool get_node(struct json_object *v, unsigned *out)
{
	int64_t n;

	if (!get_int(v, 0, VN_MAX_NODES - 1, &n))
		return false;
	*out = (unsigned)n;
	return true;
}

static struct json_object *get_array(struct json_object *o, const char *key, size_t most)
{
	struct json_object *v = key ? vn_json_get(o, key) : o;

	return v && json_object_is_type(v, json_type_array) && json_object_array_length(v) <= most ? v : NULL;
}

/* A node set (array of node ids, no repeats) into set[]. */
static bool get_nodes(struct json_object *a, bool *set)
{
	if (!(a = get_array(a, NULL, VN_MAX_NODES)))
		return false;
	for (size_t i = 0; i < json_object_array_length(a); i++) {
		unsigned n;
		if (!get_node(json_object_array_get_idx(a, i), &n) || set[n])
			return false;
		set[n] = true;
	}
	return true;
}

/* {"absent": why}: the section could not be read; why kept, printable and short. Returns 1 then. */
static int absent(struct json_object *v, char **why)
{
	struct json_object *a = json_object_is_type(v, json_type_object) ? vn_json_get(v, "absent") : NULL;
	char shown[160];

	if (!a || !json_object_is_type(a, json_type_string))
		return 0;
	*why = vn_xstrdup(vn_excerpt(json_object_get_string(a), (size_t)json_object_get_string_len(a), 150, shown));
	return 1;
}

static bool parse_zonelists(struct json_object *v, struct vn_deep *d)
{
	struct json_object *a = get_array(v, NULL, VN_MAX_NODES);

	for (size_t i = 0; a && i < json_object_array_length(a); i++) {
		struct json_object *e = json_object_array_get_idx(a, i), *order = get_array(e, "order", VN_MAX_NODES);
		bool seen[VN_MAX_NODES] = {0};
		unsigned n, m;
		if (!order || !get_node(vn_json_get(e, "node"), &n) || d->zonelists.present[n])
			return false;
		for (size_t k = 0; k < json_object_array_length(order); k++) {
			if (!get_node(json_object_array_get_idx(order, k), &m) || seen[m])
				return false;
			seen[m] = true;
			d->zonelists.order[n][d->zonelists.len[n]++] = (unsigned char)m;
		}
		d->zonelists.present[n] = true;
		if (n + 1 > d->zonelists.nnodes)
			d->zonelists.nnodes = n + 1;
	}
	return a != NULL;
}

static bool parse_distance(struct json_object *v, struct vn_deep *d)
{
	struct json_object *a = get_array(v, NULL, VN_MAX_NODES);
	size_t n = a ? json_object_array_length(a) : 0;

	for (size_t i = 0; i < n; i++) {
		struct json_object *row = get_array(json_object_array_get_idx(a, i), NULL, n);
		if (!row || json_object_array_length(row) != n)
			return false;
		for (size_t j = 0; j < n; j++) {
			int64_t x;
			if (!get_int(json_object_array_get_idx(row, j), 0, 255, &x))
				return false;
			d->distance[i][j] = (unsigned)x;
		}
	}
	d->ndistance = (unsigned)n;
	return a != NULL;
}

static bool parse_tiers(struct json_object *v, struct vn_deep *d)
{
	struct json_object *a = get_array(v, NULL, VN_DEEP_TIERS_MAX);

	for (size_t i = 0; a && i < json_object_array_length(a); i++) {
		struct json_object *e = json_object_array_get_idx(a, i);
		int64_t start;
		if (!get_int(vn_json_get(e, "adistance_start"), 0, INT32_MAX, &start) ||
		    !get_nodes(vn_json_get(e, "nodes"), d->tier_nodes[i]))
			return false;
		d->tier_start[d->ntiers++] = (int)start;
	}
	return a != NULL;
}

static bool parse_demotion(struct json_object *v, struct vn_deep *d)
{
	struct json_object *a = get_array(v, NULL, VN_MAX_NODES);

	for (size_t i = 0; a && i < json_object_array_length(a); i++) {
		struct json_object *e = json_object_array_get_idx(a, i);
		unsigned n;
		if (!get_node(vn_json_get(e, "node"), &n) || d->demotion_read[n] ||
		    !get_nodes(vn_json_get(e, "preferred"), d->preferred[n]))
			return false;
		d->demotion_read[n] = true;
	}
	return a != NULL;
}

static bool parse_level(struct json_object *level, unsigned i, struct vn_deep *d)
{
	for (size_t k = 0; level && k < json_object_array_length(level); k++) {
		struct json_object *e = json_object_array_get_idx(level, k),
				   *cpus = get_array(e, "cpus", VN_CPUSET_MAX);
		struct vn_cpuset set = {0};
		unsigned n;
		if (!cpus || !get_node(vn_json_get(e, "node"), &n) || d->level_cpus[i][n])
			return false;
		for (size_t c = 0; c < json_object_array_length(cpus); c++) {
			int64_t cpu;
			if (!get_int(json_object_array_get_idx(cpus, c), 0, VN_CPUSET_MAX - 1, &cpu))
				return false;
			vn_cpuset_set(&set, (unsigned)cpu);
		}
		d->level_cpus[i][n] = vn_cpulist_format(&set);
	}
	return level != NULL;
}

static bool parse_sched(struct json_object *v, struct vn_deep *d)
{
	struct json_object *dist = get_array(v, "distances", VN_MAX_NODES);
	struct json_object *masks = get_array(v, "masks", VN_MAX_NODES);

	if (!dist || !masks || json_object_array_length(dist) != json_object_array_length(masks))
		return false;
	d->nlevels = (unsigned)json_object_array_length(dist);
	for (unsigned i = 0; i < d->nlevels; i++) {
		int64_t x;
		if (!get_int(json_object_array_get_idx(dist, i), 0, 255, &x) ||
		    !parse_level(get_array(json_object_array_get_idx(masks, i), NULL, VN_MAX_NODES), i, d))
			return false;
		d->level_distance[i] = (unsigned)x;
	}
	return true;
}

/* The JSON after the last marker line, which must stand at a line's start. */
const char *vn_deep_marker_line(const char *output, size_t *len)
{
	const char *found = NULL;

	for (const char *p = output; (p = strstr(p, VN_DEEP_MARKER)); p++)
		if (p == output || p[-1] == '\n')
			found = p + strlen(VN_DEEP_MARKER);
	if (found)
		*len = strcspn(found, "\n");
	return found;
}

static int bad(struct vn_error *err, const char *what, const char *text, size_t len)
{
	char shown[200];

	return vn_infra_error(err, -EBADMSG, "drgn's reading of the dump: %s: '%s'", what,
			      vn_excerpt(text, len, 160, shown));
}

int vn_deep_parse(const char *output, struct vn_deep **out, struct vn_error *err)
{
	static const struct {
		const char *key;
		bool (*parse)(struct json_object *, struct vn_deep *);
		size_t absent_at;
	} sections[] = {
		{"zonelists", parse_zonelists, offsetof(struct vn_deep, zonelists_absent)},
		{"distance", parse_distance, offsetof(struct vn_deep, distance_absent)},
		{"tiers", parse_tiers, offsetof(struct vn_deep, tiers_absent)},
		{"demotion", parse_demotion, offsetof(struct vn_deep, demotion_absent)},
		{"sched_numa", parse_sched, offsetof(struct vn_deep, sched_absent)},
	};
	_cleanup_json_ struct json_object *o = NULL;
	_cleanup_free_ char *copy = NULL;
	bool nodes[VN_MAX_NODES] = {0};
	size_t len = 0;
	int64_t version;
	const char *line = vn_deep_marker_line(output, &len);

	*out = NULL;
	if (!line) {
		size_t n = strlen(output), from = n > 400 ? n - 400 : 0;
		return bad(err, "no " VN_DEEP_MARKER "line in its output", output + from, n - from);
	}
	if (len > VN_DEEP_LINE_MAX)
		return bad(err, "its line is over 1 MiB", line, len);
	copy = vn_xstrndup(line, len);
	o = json_tokener_parse(copy);
	if (!o || !json_object_is_type(o, json_type_object) || !get_int(vn_json_get(o, "version"), 1, 1, &version))
		return bad(err, "not the JSON the script prints (version 1)", line, len);
	struct vn_deep *d = vn_xcalloc(1, sizeof(*d));
	struct json_object *v = vn_json_get(o, "nodes");
	/* Online nodes only name what was read; a list that cannot be read leaves none. */
	if (v && !json_object_is_type(v, json_type_object) && !get_nodes(v, nodes))
		goto bad;
	for (unsigned i = 0; i < VN_MAX_NODES; i++)
		if (nodes[i])
			d->nodes[d->nnodes++] = i;
	for (size_t i = 0; i < VN_ARRAY_SIZE(sections); i++) {
		char **why = (char **)(void *)((char *)d + sections[i].absent_at);
		v = vn_json_get(o, sections[i].key);
		if (!v || (!absent(v, why) && !sections[i].parse(v, d)))
			goto bad;
	}
	*out = d;
	return 0;
bad:
	vn_deep_free(d);
	return bad(err, "not the JSON the script prints", line, len);
}

/*
 * The zonelists the model says the kernel holds now: the boot build, or on
 * a tiered shape the last rebuild, once kmem has onlined every slow node
 * (in ascending order: the dump does not say which came first).
 */
static void model_zonelists(const struct vn_topology *t, const struct vn_fallback_opts *fo, struct vn_fallback *want)
{
	if (!vn_topology_has_slow_memory(t)) {
		vn_fallback_compute(t, fo, want);
		return;
	}
	_cleanup_free_ struct vn_tiers_build *b = vn_xcalloc(VN_TIERS_BUILDS_MAX, sizeof(*b));
	unsigned n = vn_tiers_fallback_builds(t, fo, NULL, 0, b, VN_TIERS_BUILDS_MAX);
	*want = b[n - 1].f;
}

static void diff_zonelists(const struct vn_deep *d, const struct vn_fallback *want, struct vn_strbuf *bad)
{
	const struct vn_fallback *got = &d->zonelists;
	unsigned n = want->nnodes > got->nnodes ? want->nnodes : got->nnodes;

	for (unsigned i = 0; i < n; i++) {
		bool w = i < want->nnodes && want->present[i], g = i < got->nnodes && got->present[i];
		if (w == g &&
		    (!w || (want->len[i] == got->len[i] && !memcmp(want->order[i], got->order[i], got->len[i]))))
			continue;
		vn_strbuf_printf(bad, "  Node %u: model", i);
		if (w)
			vn_fallback_put_list(bad, want, i);
		else
			vn_strbuf_printf(bad, " (no list)");
		vn_strbuf_printf(bad, ", kernel's zonelist");
		if (g)
			vn_fallback_put_list(bad, got, i);
		else
			vn_strbuf_printf(bad, " (none)");
		vn_strbuf_printf(bad, "\n");
	}
}

static void put_row(struct vn_strbuf *b, const unsigned *row, unsigned n)
{
	for (unsigned j = 0; j < n; j++)
		vn_strbuf_printf(b, " %u", row[j]);
}

static void diff_distance(const struct vn_deep *d, const struct vn_topology *t, struct vn_strbuf *bad)
{
	if (d->ndistance != t->nnodes) {
		vn_strbuf_printf(bad, "  model %u nodes, kernel's table %u\n", t->nnodes, d->ndistance);
		return;
	}
	for (unsigned i = 0; i < t->nnodes; i++) {
		unsigned want[VN_MAX_NODES];
		for (unsigned j = 0; j < t->nnodes; j++)
			want[j] = t->distance[i][j];
		if (!memcmp(want, d->distance[i], t->nnodes * sizeof(unsigned)))
			continue;
		vn_strbuf_printf(bad, "  node %u: model", i);
		put_row(bad, want, t->nnodes);
		vn_strbuf_printf(bad, ", kernel");
		put_row(bad, d->distance[i], t->nnodes);
		vn_strbuf_printf(bad, "\n");
	}
}

/* The tiers in the sysfs form both sides share (vn_tiers_diff), then each node's demotion targets. */
static void diff_tiers(const struct vn_deep *d, const struct vn_tiers *want, struct vn_strbuf *bad)
{
	struct vn_tier_seen seen[VN_DEEP_TIERS_MAX];
	char *lists[VN_DEEP_TIERS_MAX] = {0};

	for (unsigned i = 0; i < d->ntiers; i++) {
		lists[i] = vn_tiers_nodelist(d->tier_nodes[i], VN_MAX_NODES);
		seen[i] = (struct vn_tier_seen){d->tier_start[i] >> VN_MEMTIER_CHUNK_BITS, lists[i]};
	}
	_cleanup_free_ char *diff = vn_tiers_diff(want, seen, d->ntiers);
	for (unsigned i = 0; i < d->ntiers; i++)
		free(lists[i]);
	if (diff)
		vn_strbuf_printf(bad, "%s%s", diff, diff[strlen(diff) - 1] == '\n' ? "" : "\n");
}

static void diff_demotion(const struct vn_deep *d, const struct vn_tiers *want, struct vn_strbuf *bad)
{
	for (unsigned i = 0; i < VN_MAX_NODES; i++) {
		bool none[VN_MAX_NODES] = {0};
		const bool *w = i < want->nnodes ? want->preferred[i] : none;
		if (!memcmp(w, d->preferred[i], sizeof(none)))
			continue;
		_cleanup_free_ char *ws = vn_tiers_nodelist(w, VN_MAX_NODES);
		_cleanup_free_ char *gs = vn_tiers_nodelist(d->preferred[i], VN_MAX_NODES);
		vn_strbuf_printf(bad, "  Node %u: model demotes to %s, kernel's node_demotion[%u].preferred %s\n", i,
				 *ws ? ws : "none", i, *gs ? gs : "none");
	}
}

/*
 * sched_init_numa() at boot: the distinct distances between nodes with CPUs
 * (N_CPU), ascending, and per level and such node the CPUs of every node
 * within that distance. Hot-pluggable vCPUs are not there at boot.
 */
struct sched_model {
	unsigned nlevels;
	unsigned distance[VN_MAX_NODES];
	bool cpu_node[VN_MAX_NODES];
};

static void model_sched(const struct vn_topology *t, struct sched_model *m)
{
	bool seen[256] = {0};

	memset(m, 0, sizeof(*m));
	for (unsigned i = 0; i < t->nnodes; i++) {
		struct vn_cpuset boot = vn_node_boot_cpus(&t->nodes[i]);
		m->cpu_node[i] = vn_cpuset_first(&boot) >= 0;
	}
	for (unsigned i = 0; i < t->nnodes; i++)
		for (unsigned j = 0; j < t->nnodes; j++)
			if (m->cpu_node[i] && m->cpu_node[j])
				seen[t->distance[i][j] & 255] = true;
	for (unsigned x = 0; x < 256 && m->nlevels < VN_MAX_NODES; x++)
		if (seen[x])
			m->distance[m->nlevels++] = x;
}

static char *model_level_cpus(const struct vn_topology *t, const struct sched_model *m, unsigned level, unsigned node)
{
	struct vn_cpuset set = {0};

	for (unsigned k = 0; k < t->nnodes; k++) {
		if (!m->cpu_node[k] || t->distance[node][k] > m->distance[level])
			continue;
		struct vn_cpuset boot = vn_node_boot_cpus(&t->nodes[k]);
		for (unsigned c = 0; c < VN_CPUSET_MAX; c++)
			if (vn_cpuset_has(&boot, c))
				vn_cpuset_set(&set, c);
	}
	return vn_cpulist_format(&set);
}

static void diff_sched(const struct vn_deep *d, const struct vn_topology *t, struct vn_strbuf *bad)
{
	struct sched_model m;

	model_sched(t, &m);
	if (m.nlevels != d->nlevels || memcmp(m.distance, d->level_distance, m.nlevels * sizeof(unsigned))) {
		vn_strbuf_printf(bad, "  levels (distances): model");
		put_row(bad, m.distance, m.nlevels);
		vn_strbuf_printf(bad, ", kernel's sched_domains_numa_distance");
		put_row(bad, d->level_distance, d->nlevels);
		vn_strbuf_printf(bad, "\n");
		return;
	}
	for (unsigned i = 0; i < m.nlevels; i++)
		for (unsigned n = 0; n < VN_MAX_NODES; n++) {
			_cleanup_free_ char *w = n < t->nnodes && m.cpu_node[n] ? model_level_cpus(t, &m, i, n) : NULL;
			const char *g = d->level_cpus[i][n];
			if ((!w && !g) || (w && g && !strcmp(w, g)))
				continue;
			vn_strbuf_printf(bad, "  level %u (distance %u), node %u: model %s, kernel's mask %s\n", i,
					 m.distance[i], n, w ? w : "(none)", g ? g : "(none)");
		}
}

/* One section's line, and its differences under it. */
static void section(struct vn_strbuf *rep, const char *title, const char *why, struct vn_strbuf *bad, bool *ok,
		    unsigned *observed)
{
	if (why) {
		vn_strbuf_printf(rep, "%s: not observed (%s)\n", title, why);
		return;
	}
	++*observed;
	vn_strbuf_printf(rep, "%s: %s\n", title, bad->len ? "MISMATCH" : "ok");
	if (bad->len) {
		vn_strbuf_append(rep, bad->s, bad->len);
		*ok = false;
	}
	vn_strbuf_free(bad);
}

char *vn_deep_compare(const struct vn_deep *d, const struct vn_topology *t, const struct vn_fallback_opts *fo, bool *ok,
		      unsigned *observed)
{
	struct vn_strbuf rep = VN_STRBUF_INIT, bad = VN_STRBUF_INIT;
	struct vn_fallback want;
	struct vn_tiers tiers;
	char title[160];

	*ok = true;
	*observed = 0;
	if (!d->zonelists_absent) {
		model_zonelists(t, fo, &want);
		diff_zonelists(d, &want, &bad);
	}
	snprintf(title, sizeof(title), "zonelists (ZONELIST_FALLBACK, model %s%s)", vn_fallback_model_name(fo->model),
		 vn_topology_has_slow_memory(t) ? ", after kmem onlined every slow node" : "");
	section(&rep, title, d->zonelists_absent, &bad, ok, observed);
	if (!d->distance_absent)
		diff_distance(d, t, &bad);
	section(&rep, "distances (the kernel's SLIT, numa_distance)", d->distance_absent, &bad, ok, observed);
	vn_tiers_compute(t, VN_TIER_MODEL_DEFAULT, &tiers);
	snprintf(title, sizeof(title), "memory tiers (memory_tiers, model %s)", vn_tier_model_name(tiers.model));
	if (!d->tiers_absent)
		diff_tiers(d, &tiers, &bad);
	section(&rep, title, d->tiers_absent, &bad, ok, observed);
	snprintf(title, sizeof(title), "demotion targets (node_demotion[].preferred, model %s)",
		 vn_tier_model_name(tiers.model));
	if (!d->demotion_absent)
		diff_demotion(d, &tiers, &bad);
	section(&rep, title, d->demotion_absent, &bad, ok, observed);
	if (!d->sched_absent)
		diff_sched(d, t, &bad);
	section(&rep, "sched domains' NUMA levels (sched_domains_numa_distance, _masks)", d->sched_absent, &bad, ok,
		observed);
	return vn_strbuf_steal(&rep);
}
