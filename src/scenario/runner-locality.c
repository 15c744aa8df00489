/*
 * Locality in a run (docs/locality.md): the plugin's map proven on the booted
 * guest before the steps, the counters read at the start, at each sample
 * (the matrix since the last one, into samples.jsonl) and after the steps.
 * A map that fails its proof ends the run as an infrastructure failure: no
 * locality figure rather than a wrong one.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "report/html.h"
#include "scenario/probe.h"
#include "scenario/runner-priv.h"
#include "testbed/hotplug-guest.h"
#include "testbed/locality.h"
#include "util/alloc.h"
#include "util/cleanup.h"
#include "util/file.h"
#include "util/state.h"

/* The plugin's counters, at the proof's end, at the last sample, at a lone step's start. */
struct loc {
	struct vn_loc_reader *rd;
	struct vn_loc_counts start, last, step;
	char dimm[VN_LOC_MAX_EXTRA][64]; /* the DIMM (libvirt alias) each extra range is for */
};

static bool loc_wanted(const struct run *r)
{
	return r->locality;
}

/* The map proven and the counters read before the "before" snapshot. */
static int loc_start(struct run *r, void *state, struct vn_error *err)
{
	struct loc *l = state;
	const char *guest_dir = r->guest_dir;
	struct vn_loc_map map;
	struct vn_locality_proof proof;
	int rc;

	/* A guest on another host keeps its counters there. */
	if (!guest_dir)
		return vn_infra_error(err, -ENOENT, "locality: guest %s has no local state dir to count into",
				      r->guest);
	_cleanup_free_ char *path = vn_xasprintf("%s/%s", guest_dir, VN_GUEST_LOCALITY);

	vn_testbed_locality_map(r->t, &map);
	if ((rc = vn_loc_open(path, &map, &l->rd, err)) < 0)
		return rc;
	if (r->progress)
		r->progress(r->progress_data, "locality", "proving the address map: memory bound to each node in turn");
	rc = vn_testbed_locality_prove(r->a, l->rd, r->t, vn_run_libdir(r), &proof, err);
	free(r->d->loc_proof);
	r->d->loc_proof = proof.report;
	if (rc < 0)
		return rc;
	vn_loc_counts_init(&l->start, r->t->nnodes);
	vn_loc_counts_init(&l->last, r->t->nnodes);
	if ((rc = vn_loc_read(l->rd, &l->start, err)) < 0)
		return rc;
	/* The first sample's matrix starts where the steps do. */
	uint64_t *ram = l->last.ram;
	memcpy(ram, l->start.ram, (size_t)r->t->nnodes * r->t->nnodes * VN_LOC_NKINDS * sizeof(*ram));
	l->last = l->start;
	l->last.ram = ram;
	return 0;
}

/* "locality":{"accesses":N,"remote_fraction":F,"matrix":[[...],...]}, since the last sample; host-made. */
static void loc_sample(struct run *r, void *state, struct vn_strbuf *head)
{
	struct loc *l = state;
	struct vn_loc_counts now, d;
	struct vn_error err = {0};
	unsigned n = r->t->nnodes;

	vn_loc_counts_init(&now, n);
	vn_loc_counts_init(&d, n);
	if (vn_loc_read(l->rd, &now, &err) == 0 && vn_loc_delta(&now, &l->last, &d, &err) == 0) {
		double f = vn_loc_remote_fraction(&d, VN_LOC_ALL);
		vn_strbuf_printf(head, "\"locality\":{\"accesses\":%llu,",
				 (unsigned long long)vn_loc_sum(&d, VN_LOC_ALL, NULL));
		if (f == f)
			vn_strbuf_printf(head, "\"remote_fraction\":%.6f,", f);
		vn_strbuf_printf(head, "\"matrix\":[");
		for (unsigned i = 0; i < n; i++) {
			vn_strbuf_printf(head, "%s[", i ? "," : "");
			for (unsigned j = 0; j < n; j++) {
				uint64_t s = 0;
				for (unsigned k = 0; k < VN_LOC_NKINDS; k++)
					s += *vn_loc_at(&d, i, j, k);
				vn_strbuf_printf(head, "%s%llu", j ? "," : "", (unsigned long long)s);
			}
			vn_strbuf_printf(head, "]");
		}
		vn_strbuf_printf(head, "]},");
		/* now becomes the last: swap the arrays so neither leaks. */
		struct vn_loc_counts old = l->last;
		l->last = now;
		now = old;
	}
	vn_error_clear(&err);
	vn_loc_counts_clear(&now);
	vn_loc_counts_clear(&d);
}

static void loc_step_begin(struct run *r, void *state, unsigned step)
{
	struct loc *l = state;
	struct vn_error err = {0};

	(void)step;
	vn_loc_counts_clear(&l->step);
	vn_loc_counts_init(&l->step, r->t->nnodes);
	if (vn_loc_read(l->rd, &l->step, &err) < 0)
		vn_loc_counts_clear(&l->step);
	vn_error_clear(&err);
}

/* A lone step's own figures (docs/locality.md). */
static void loc_step_end(struct run *r, void *state, unsigned step)
{
	struct loc *l = state;
	struct vn_error err = {0};
	unsigned n = r->t->nnodes;

	if (l->step.ram) {
		struct vn_loc_counts now, *d;
		if (!r->d->loc_steps)
			r->d->loc_steps = vn_xcalloc(r->s->nsteps, sizeof(*r->d->loc_steps));
		d = &r->d->loc_steps[step];
		vn_loc_counts_init(&now, n);
		vn_loc_counts_init(d, n);
		/* A step whose counts cannot be read has none: its metrics are missing, the run's stay. */
		if (vn_loc_read(l->rd, &now, &err) < 0 || vn_loc_delta(&now, &l->step, d, &err) < 0)
			vn_loc_counts_clear(d);
		vn_loc_counts_clear(&now);
		vn_loc_counts_clear(&l->step);
	}
	vn_error_clear(&err);
}

static int loc_end(struct run *r, void *state, struct vn_error *err)
{
	struct loc *l = state;
	struct vn_loc_counts now;
	unsigned n = r->t->nnodes;
	int rc;

	vn_loc_counts_init(&now, n);
	vn_loc_counts_init(&r->d->loc, n);
	if ((rc = vn_loc_read(l->rd, &now, err)) == 0 && (rc = vn_loc_delta(&now, &l->start, &r->d->loc, err)) == 0) {
		r->d->loc_lat_ns = vn_xcalloc((size_t)n * n, sizeof(double));
		vn_testbed_locality_latency(r->t, r->d->loc_lat_ns);
		r->d->loc_ntiers =
			vn_testbed_locality_tiers(r->t, r->d->tier_model, r->d->loc_tier_of, r->d->loc_tier_id);
		r->d->loc_have = true;
	}
	vn_loc_counts_clear(&now);
	return rc;
}

static void loc_page(const struct run *r, const void *state, struct vn_html_run_in *in)
{
	(void)state;
	in->loc_proof = r->d->loc_proof;
}

/* The proof's report is kept on every way out: a map that failed its proof says why there. */
static void loc_free(struct run *r, void *state)
{
	struct loc *l = state;

	vn_loc_close(l->rd);
	vn_loc_counts_clear(&l->start);
	vn_loc_counts_clear(&l->last);
	vn_loc_counts_clear(&l->step);
	if (r->d->loc_proof) {
		struct vn_error pe = {0};
		_cleanup_free_ char *pp = vn_run_path(r->dir, "locality-proof.txt");
		vn_file_write_text(pp, r->d->loc_proof, &pe);
		vn_error_clear(&pe);
	}
}

static int sh_run(void *data, const char *script, char **out, struct vn_error *err)
{
	return vn_run_guest_sh(data, script, out, err);
}

/*
 * After the hotplug itself succeeded: what becomes of the DIMM in the map
 * goes into the proof's report (locality-proof.txt) and the counts of
 * DIMMs counted or not (result.json), and never fails the run: a DIMM not
 * proven is counted as unmapped, which the figures show.
 */
static void loc_hotplug(struct run *r, void *state, const struct vn_hotplug_req *q, const struct vn_hotplug_result *res)
{
	struct loc *l = state;
	struct vn_strbuf rep = VN_STRBUF_INIT;
	struct vn_error err = {0};
	if (!q->memory)
		return;
	if (r->d->loc_proof)
		vn_strbuf_printf(&rep, "%s", r->d->loc_proof);
	if (q->remove) {
		for (size_t i = 0; i < res->plan.ndimms; i++)
			for (unsigned e = 0; e < VN_LOC_MAX_EXTRA; e++)
				if (strcmp(l->dimm[e], res->plan.dimms[i].alias) == 0) {
					/* Unplugged: its range may be another DIMM's next. */
					if (vn_loc_extra_retire(l->rd, e, &err) == 0)
						vn_strbuf_printf(
							&rep,
							"%s (node %u): unplugged, its extra range %u left the map\n",
							l->dimm[e], q->node, e);
					vn_error_clear(&err);
					l->dimm[e][0] = '\0';
				}
	} else {
		struct vn_locality_dimm dimm;
		if (vn_testbed_locality_dimm(l->rd, sh_run, r, vn_run_libdir(r), q->node, &res->plan, &rep, &dimm,
					     &err) == 0)
			r->d->loc_dimms_counted++;
		else
			r->d->loc_dimms_unmapped++;
		/* Every slot it took, proven or not, leaves the map with it. */
		for (unsigned i = 0; i < dimm.nslots; i++)
			snprintf(l->dimm[dimm.slots[i]], sizeof(l->dimm[0]), "%s",
				 res->plan.dimms[res->plan.ndimms - 1].alias);
	}
	vn_error_clear(&err);
	free(r->d->loc_proof);
	r->d->loc_proof = vn_strbuf_steal(&rep);
}

/* Accesses by CPU node x memory node from the locality plugin (docs/locality.md), into the run's data. */
const struct vn_probe_ops vn_probe_locality = {
	.name = "locality",
	.size = sizeof(struct loc),
	.wanted = loc_wanted,
	.start = loc_start,
	.sample = loc_sample,
	.step_begin = loc_step_begin,
	.step_end = loc_step_end,
	.hotplug = loc_hotplug,
	.end = loc_end,
	.page = loc_page,
	.free = loc_free,
};
