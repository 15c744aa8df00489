/* The run's probe list (probe.h): the table, and each of the run's points walked over it. */
#include "scenario/probe.h"

#include <stdlib.h>

#include "util/alloc.h"

/* A new probe is its file and one line here. */
const struct vn_probe_ops *const vn_probes_builtin[] = {
	&vn_probe_locality,
	&vn_probe_trace,
	NULL,
};

int vn_probes_start(struct vn_probes *p, const struct vn_probe_ops *const *table, struct run *r, struct vn_error *err)
{
	unsigned n = 0;

	if (!table)
		table = vn_probes_builtin;
	while (table[n])
		n++;
	p->v = vn_xcalloc(n ? n : 1, sizeof(*p->v));
	p->n = 0;
	for (unsigned i = 0; i < n; i++) {
		const struct vn_probe_ops *o = table[i];
		if (o->wanted && !o->wanted(r))
			continue;
		struct vn_probe *x = &p->v[p->n++];
		x->ops = o;
		x->state = vn_xcalloc(1, o->size ? o->size : 1);
		int rc = o->start ? o->start(r, x->state, err) : 0;
		/* Its free still runs: a start cut short may have opened files, or have a report to leave. */
		x->started = true;
		if (rc < 0)
			return rc;
	}
	return 0;
}

int vn_probes_window(struct vn_probes *p, struct run *r, struct vn_error *err)
{
	for (unsigned i = 0; i < p->n; i++) {
		int rc = p->v[i].ops->window ? p->v[i].ops->window(r, p->v[i].state, err) : 0;
		if (rc < 0)
			return rc;
	}
	return 0;
}

void vn_probes_sample(struct vn_probes *p, struct run *r, struct vn_strbuf *head)
{
	for (unsigned i = 0; i < p->n; i++)
		if (p->v[i].ops->sample)
			p->v[i].ops->sample(r, p->v[i].state, head);
}

void vn_probes_step(struct vn_probes *p, struct run *r, unsigned step, bool end)
{
	for (unsigned i = 0; i < p->n; i++) {
		void (*fn)(struct run *, void *, unsigned) = end ? p->v[i].ops->step_end : p->v[i].ops->step_begin;
		if (fn)
			fn(r, p->v[i].state, step);
	}
}

void vn_probes_hotplug(struct vn_probes *p, struct run *r, const struct vn_hotplug_req *q,
		       const struct vn_hotplug_result *res)
{
	for (unsigned i = 0; i < p->n; i++)
		if (p->v[i].ops->hotplug)
			p->v[i].ops->hotplug(r, p->v[i].state, q, res);
}

int vn_probes_end(struct vn_probes *p, struct run *r, struct vn_error *err)
{
	int first = 0;

	for (unsigned i = p->n; i-- > 0;) {
		struct vn_probe *x = &p->v[i];
		struct vn_error e = {0};
		if (!x->started || x->ended || !x->ops->end)
			continue;
		x->ended = true;
		int rc = x->ops->end(r, x->state, &e);
		/* The first failure is the run's; the others' ends still close their windows. */
		if (rc < 0 && first == 0) {
			first = rc;
			*err = e;
			continue;
		}
		vn_error_clear(&e);
	}
	return first;
}

void vn_probes_metrics(const struct vn_probes *p, const struct run *r, struct vn_result_run *rep)
{
	for (unsigned i = 0; i < p->n; i++)
		if (p->v[i].ops->metrics)
			p->v[i].ops->metrics(r, p->v[i].state, rep);
}

void vn_probes_page(const struct vn_probes *p, const struct run *r, struct vn_html_run_in *in)
{
	for (unsigned i = 0; i < p->n; i++)
		if (p->v[i].ops->page)
			p->v[i].ops->page(r, p->v[i].state, in);
}

void vn_probes_free(struct vn_probes *p, struct run *r)
{
	for (unsigned i = p->n; i-- > 0;) {
		if (p->v[i].started && p->v[i].ops->free)
			p->v[i].ops->free(r, p->v[i].state);
		free(p->v[i].state);
	}
	free(p->v);
	p->v = NULL;
	p->n = 0;
}
