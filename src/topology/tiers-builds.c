/*
 * The fallback lists a tiered boot prints. After the boot's build, the
 * guest's init binds every slow node's device-dax to kmem, then onlines
 * the memory blocks (src/guest/init.sh). kmem's add_memory() brings the
 * node online (hotadd_init_pgdat()), which builds that node's own list
 * alone (__build_all_zonelists(self) with the node still offline); each
 * node's first onlined block then rebuilds every list (online_pages(): a
 * zone gains its first pages). So: boot, one single-node build per slow
 * node, one full rebuild per slow node; the last is what the guest
 * allocates by. A kernel that onlines memory as it is added (Debian's
 * 6.12: MEMORY_HOTPLUG_DEFAULT_ONLINE=y) onlines each node within its add,
 * before the next: boot, then per slow node its own build and a rebuild.
 */
#include "topology/tiers.h"

#include <stdio.h>
#include <string.h>

#include "util/alloc.h"
#include "util/cleanup.h"
#include "util/strbuf.h"

/* Slow node s is in build f's lists as memory: some other node's list holds it (its own always does). */
static bool listed(const struct vn_fallback *f, unsigned s)
{
	for (unsigned n = 0; n < f->nnodes; n++)
		for (unsigned i = 0; n != s && f->present[n] && i < f->len[n]; i++)
			if (f->order[n][i] == s)
				return true;
	return false;
}

/* A build of one node's list alone (node 0, always online, starts every full build). */
static int self_node(const struct vn_fallback *f)
{
	for (unsigned n = 0; n < f->nnodes; n++)
		if (f->present[n])
			return n ? (int)n : -1;
	return -1;
}

static bool slow_with_memory(const struct vn_topology *t, unsigned n)
{
	return n < t->nnodes && vn_node_is_slow(&t->nodes[n]) && t->nodes[n].memory;
}

/*
 * The slow node the next build is about: the one got names (the order
 * init.sh meets the devices and blocks in is the kernel's sysfs order, not
 * the model's to choose), else the lowest not yet done.
 */
static int next_slow(const struct vn_topology *t, const struct vn_fallback *got, bool self, const bool *done)
{
	int lowest = -1, g = got && self ? self_node(got) : -1;

	if (g >= 0 && slow_with_memory(t, g) && !done[g])
		return g;
	for (unsigned n = 0; n < t->nnodes; n++) {
		if (!slow_with_memory(t, n) || done[n])
			continue;
		if (got && !self && self_node(got) < 0 && listed(got, n))
			return (int)n;
		if (lowest < 0)
			lowest = (int)n;
	}
	return lowest;
}

/* kmem's add of node slow (self: its own list alone) or its online (every list, slow now with memory). */
static void one_build(const struct vn_topology *t, const struct vn_fallback_opts *o, struct vn_fallback_state *s,
		      bool self, int slow, struct vn_tiers_build *b)
{
	if (!self)
		s->memory[slow] = true;
	_cleanup_free_ char *st = vn_fallback_state_format(t, s);
	snprintf(b->label, sizeof(b->label), "kmem %s node %d (%s)", self ? "adds, its own list only," : "onlines",
		 slow, st);
	if (self)
		vn_fallback_compute_node(t, o, s, (unsigned)slow, &b->f);
	else
		vn_fallback_compute_state(t, o, s, &b->f);
}

static unsigned add_builds(const struct vn_topology *t, const struct vn_fallback_opts *o, struct vn_fallback_state *s,
			   bool self, const struct vn_fallback *got, unsigned ngot, struct vn_tiers_build *out,
			   unsigned n, unsigned max)
{
	bool done[VN_MAX_NODES] = {false};
	int slow;

	while (n < max && (slow = next_slow(t, n < ngot ? &got[n] : NULL, self, done)) >= 0) {
		done[slow] = true;
		one_build(t, o, s, self, slow, &out[n++]);
	}
	return n;
}

/* Memory onlined as it is added: each slow node's add, then at once its online, node after node. */
static unsigned add_online_builds(const struct vn_topology *t, const struct vn_fallback_opts *o,
				  struct vn_fallback_state *s, const struct vn_fallback *got, unsigned ngot,
				  struct vn_tiers_build *out, unsigned n, unsigned max)
{
	bool done[VN_MAX_NODES] = {false};
	int slow;

	while (n < max && (slow = next_slow(t, n < ngot ? &got[n] : NULL, true, done)) >= 0) {
		done[slow] = true;
		one_build(t, o, s, true, slow, &out[n++]);
		if (n < max)
			one_build(t, o, s, false, slow, &out[n++]);
	}
	return n;
}

unsigned vn_tiers_fallback_builds(const struct vn_topology *t, const struct vn_fallback_opts *o,
				  const struct vn_fallback *got, unsigned ngot, struct vn_tiers_build *out,
				  unsigned max)
{
	struct vn_fallback_state s;

	vn_fallback_state_boot(t, o, &s);
	snprintf(out[0].label, sizeof(out[0].label), "boot");
	vn_fallback_compute_state(t, o, &s, &out[0].f);
	/* Later builds see every boot CPU (long after cpu_init()). */
	for (unsigned i = 0; i < t->nnodes; i++) {
		struct vn_cpuset boot = vn_node_boot_cpus(&t->nodes[i]);
		s.cpus[i] = vn_cpuset_first(&boot) >= 0;
	}
	if (o->online_on_add)
		return add_online_builds(t, o, &s, got, ngot, out, 1, max);
	unsigned n = add_builds(t, o, &s, true, got, ngot, out, 1, max);
	return add_builds(t, o, &s, false, got, ngot, out, n, max);
}

/* Single-node builds printed back to back read as one build: each becomes its own. */
static unsigned split_self_builds(const struct vn_fallback *in, unsigned nin, struct vn_fallback *out, unsigned max)
{
	unsigned n = 0;

	for (unsigned i = 0; i < nin; i++) {
		if (!in[i].present[0] && in[i].nnodes) {
			for (unsigned k = 0; k < in[i].nnodes && n < max; k++) {
				if (!in[i].present[k])
					continue;
				memset(&out[n], 0, sizeof(out[n]));
				out[n].nnodes = k + 1;
				out[n].present[k] = true;
				out[n].len[k] = in[i].len[k];
				memcpy(out[n].order[k], in[i].order[k], in[i].len[k]);
				n++;
			}
		} else if (n < max) {
			out[n++] = in[i];
		}
	}
	return n;
}

int vn_tiers_fallback_check(const char *dmesg, const struct vn_topology *t, const struct vn_fallback_opts *fo,
			    char **diff, struct vn_error *err)
{
	_cleanup_free_ struct vn_fallback *raw = vn_xcalloc(VN_TIERS_BUILDS_MAX, sizeof(*raw));
	_cleanup_free_ struct vn_fallback *got = vn_xcalloc(VN_TIERS_BUILDS_MAX, sizeof(*got));
	_cleanup_free_ struct vn_tiers_build *want = vn_xcalloc(VN_TIERS_BUILDS_MAX, sizeof(*want));
	struct vn_strbuf b = VN_STRBUF_INIT;
	unsigned nraw, ngot, nwant;
	int rc;

	if ((rc = vn_fallback_parse_builds(dmesg, raw, VN_TIERS_BUILDS_MAX, &nraw, err)) < 0)
		return rc;
	ngot = split_self_builds(raw, nraw < VN_TIERS_BUILDS_MAX ? nraw : VN_TIERS_BUILDS_MAX, got,
				 VN_TIERS_BUILDS_MAX);
	nwant = vn_tiers_fallback_builds(t, fo, got, ngot, want, VN_TIERS_BUILDS_MAX);
	if (ngot != nwant)
		vn_strbuf_printf(&b,
				 "the kernel printed %u build%s of its lists, the model expects %u (the boot's, then "
				 "for each slow node kmem's build of its own list and a rebuild of all)\n",
				 ngot, ngot == 1 ? "" : "s", nwant);
	for (unsigned i = 0; i < nwant && i < ngot; i++) {
		_cleanup_free_ char *d = vn_fallback_diff(&want[i].f, &got[i]);
		for (char *save = NULL, *line = d ? strtok_r(d, "\n", &save) : NULL; line;
		     line = strtok_r(NULL, "\n", &save))
			vn_strbuf_printf(&b, "%s: %s\n", want[i].label, line);
	}
	*diff = b.len ? vn_strbuf_steal(&b) : NULL;
	vn_strbuf_free(&b);
	return 0;
}
