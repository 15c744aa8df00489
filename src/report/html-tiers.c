/*
 * A tiered run's memory tiers on its page (docs/tiering.md, "In the
 * report"): each node's tier by the model (result.json's memory_tiers) and
 * by the guest (tiermove's tiers), what each tier's accesses cost in the
 * locality model, the hot window's pages per tier over time, and each
 * phase's demotions and promotions.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "report/html-priv.h"
#include "report/html.h"
#include "report/result.h"
#include "report/tiermove.h"
#include "util/alloc.h"
#include "util/cleanup.h"

/* result.json's metric key, or NAN (the last one recorded wins, as in html-locality.c). */
static double metric(const struct vn_result_run *r, const char *key)
{
	for (unsigned i = r->nmetrics; i-- > 0;)
		if (strcmp(r->metrics[i].name, key) == 0)
			return isfinite(r->metrics[i].value) && r->metrics[i].value >= 0 ? r->metrics[i].value : NAN;
	return NAN;
}

/* The guest's tier of node, from tiermove's first result that reported tiers; -1: none. */
static int guest_tier(const struct vn_html_run_in *in, unsigned node)
{
	for (unsigned f = 0; f < in->ntiermove; f++)
		for (unsigned i = 0; i < in->tiermove[f].ntiers; i++)
			if (in->tiermove[f].tiers[i].nodes[node])
				return in->tiermove[f].tiers[i].id;
	return -1;
}

static void nodes_table(struct vn_strbuf *b, const struct vn_html_run_in *in)
{
	const struct vn_result_nodes *m = &in->result->memory_tiers;
	unsigned n = m->n, differ = 0;
	bool guest = false;

	for (unsigned f = 0; f < in->ntiermove; f++)
		for (unsigned i = 0; i < in->tiermove[f].ntiers; i++)
			for (unsigned k = 0; k < VN_MAX_NODES; k++)
				if (in->tiermove[f].tiers[i].nodes[k]) {
					guest = true;
					n = k + 1 > n ? k + 1 : n;
				}
	vn_strbuf_printf(b, "<table class=\"tiers\" id=\"tier-nodes\"><tr><th>node</th><th>tier (model)</th>"
			    "<th>tier (guest)</th></tr>\n");
	for (unsigned k = 0; k < n; k++) {
		int g = guest_tier(in, k);
		unsigned mt = k < m->n ? m->v[k] : 0;
		differ += m->n && guest && (g < 0 ? 0u : (unsigned)g) != mt;
		vn_strbuf_printf(b, "<tr><td class=\"n\">%u</td>", k);
		if (mt)
			vn_strbuf_printf(b, "<td>memory_tier%u</td>", mt);
		else
			vn_strbuf_printf(b, "<td>-</td>");
		if (g >= 0)
			vn_strbuf_printf(b, "<td>memory_tier%d</td></tr>\n", g);
		else
			vn_strbuf_printf(b, "<td>-</td></tr>\n");
	}
	vn_strbuf_printf(b, "</table>\n");
	vn_html_note(b, !m->n    ? "The model's tiers are not in result.json (a run before they were recorded)."
			: !guest ? "No tiermove step reported the guest's tiers."
			: differ ? "The guest's tiers differ from the model's."
				 : "The guest's tiers (tiermove's, from sysfs) are the model's.");
}

/* What each tier's accesses cost in the locality model (result.json's locality.memory_tier<id>.*). */
static void cost_table(struct vn_strbuf *b, const struct vn_result_run *r, const int *ids, unsigned nids)
{
	bool any = false;

	for (unsigned i = 0; i < nids; i++) {
		char key[64];
		snprintf(key, sizeof(key), "locality.memory_tier%d.model_s", ids[i]);
		if (!isnan(metric(r, key))) {
			any = true;
			break;
		}
	}
	if (!any)
		return;
	vn_strbuf_printf(b, "<table class=\"locality\" id=\"tier-cost\"><tr><th>tier</th><th>accesses</th>"
			    "<th>share</th><th>modeled time, s</th></tr>\n");
	for (unsigned i = 0; i < nids; i++) {
		static const char *const what[] = {"accesses", "share", "model_s"};
		vn_strbuf_printf(b, "<tr><td>memory_tier%d</td>", ids[i]);
		for (unsigned w = 0; w < 3; w++) {
			char key[64];
			snprintf(key, sizeof(key), "locality.memory_tier%d.%s", ids[i], what[w]);
			vn_strbuf_printf(b, "<td class=\"n\">");
			vn_html_num(b, metric(r, key));
			vn_strbuf_printf(b, "</td>");
		}
		vn_strbuf_printf(b, "</tr>\n");
	}
	vn_strbuf_printf(b, "</table>\n");
	vn_html_note(b, "Each tier's accesses by the steps weighted by their node pair's latency: the topology's HMAT "
			"latency where it gives the pair, else 100 ns x SLIT / 10 (docs/locality.md, \"By tier\").");
}

/* The hot window's pages per tier at each sample, every phase on one time axis. */
static void hot_chart(struct vn_strbuf *b, const struct vn_tiermove *tm)
{
	unsigned n = tm->nsamples < VN_HTML_MAX_POINTS ? tm->nsamples : VN_HTML_MAX_POINTS;
	double x[VN_HTML_MAX_POINTS], y[VN_TM_TIERS_MAX][VN_HTML_MAX_POINTS];
	struct vn_html_series s[VN_TM_TIERS_MAX];
	char names[VN_TM_TIERS_MAX][32];

	if (!tm->ntiers || n < 2)
		return;
	for (unsigned p = 0; p < n; p++) {
		/* Evenly picked, first and last kept. */
		const struct vn_tm_sample *smp = &tm->samples[(size_t)p * (tm->nsamples - 1) / (n - 1)];
		x[p] = smp->t;
		for (unsigned i = 0; i < tm->ntiers; i++)
			y[i][p] = smp->hot[i];
	}
	for (unsigned i = 0; i < tm->ntiers; i++) {
		snprintf(names[i], sizeof(names[i]), "memory_tier%d", tm->tiers[i].id);
		s[i] = (struct vn_html_series){.name = names[i], .color = vn_html_color(i), .y = y[i]};
	}
	_cleanup_free_ char *title = vn_xasprintf("hot pages per tier (%s)", tm->name);
	vn_html_chart(b, &(struct vn_html_chart){.title = title,
						 .n = n,
						 .x = x,
						 .xlabel = "s since tiermove began",
						 .nseries = tm->ntiers,
						 .series = s});
}

/* Each phase's demotions and promotions (tiermove's /proc/vmstat deltas) and touch rate. */
static void phase_table(struct vn_strbuf *b, const struct vn_tiermove *tm)
{
	vn_strbuf_printf(b, "<table class=\"tiers\" id=\"tier-phases\"><tr><th>phase</th>");
	for (unsigned i = 0; i < tm->ntiers; i++)
		vn_strbuf_printf(b, "<th>hot pages on memory_tier%d, first &rarr; last sample</th>", tm->tiers[i].id);
	vn_strbuf_printf(b, "<th>touches/s</th>");
	for (unsigned c = 0; c < VN_TM_NCOUNTERS; c++)
		vn_strbuf_printf(b, "<th>%s</th>", vn_tm_counters[c]);
	vn_strbuf_printf(b, "</tr>\n");
	for (unsigned k = 0; k < tm->nphases; k++) {
		const struct vn_tm_phase *p = &tm->phases[k];
		const struct vn_tm_sample *first = NULL, *last = NULL;
		for (unsigned i = 0; i < tm->nsamples; i++)
			if (tm->samples[i].phase == p->phase) {
				first = first ? first : &tm->samples[i];
				last = &tm->samples[i];
			}
		vn_strbuf_printf(b, "<tr><td>%u%s</td>", p->phase, p->phase ? "" : " (first touch)");
		for (unsigned i = 0; i < tm->ntiers; i++) {
			vn_strbuf_printf(b, "<td class=\"n\">");
			vn_html_num(b, first ? first->hot[i] : NAN);
			vn_strbuf_printf(b, " &rarr; ");
			vn_html_num(b, last ? last->hot[i] : NAN);
			vn_strbuf_printf(b, "</td>");
		}
		vn_strbuf_printf(b, "<td class=\"n\">");
		vn_html_num(b, p->touches_per_s);
		for (unsigned c = 0; c < VN_TM_NCOUNTERS; c++) {
			vn_strbuf_printf(b, "</td><td class=\"n\">");
			vn_html_num(b, p->vmstat[c]);
		}
		vn_strbuf_printf(b, "</td></tr>\n");
	}
	vn_strbuf_printf(b, "</table>\n");
}

void vn_html_tiers(struct vn_strbuf *b, const struct vn_html_run_in *in)
{
	const struct vn_result_nodes *m = &in->result->memory_tiers;
	int ids[VN_MAX_NODES];
	unsigned nids = 0;

	if (!m->n && !in->ntiermove)
		return;
	/* The tiers to price: the model's, else the guest's. */
	for (unsigned k = 0; k < m->n; k++) {
		unsigned i = 0;
		while (i < nids && ids[i] != (int)m->v[k])
			i++;
		if (m->v[k] && i == nids && nids < VN_MAX_NODES)
			ids[nids++] = (int)m->v[k];
	}
	for (unsigned i = 0; !nids && in->ntiermove && i < in->tiermove[0].ntiers; i++)
		ids[nids++] = in->tiermove[0].tiers[i].id;
	vn_strbuf_printf(b, "<h2 id=\"tiers\">Memory tiers</h2>\n");
	nodes_table(b, in);
	cost_table(b, in->result, ids, nids);
	for (unsigned f = 0; f < in->ntiermove; f++) {
		vn_strbuf_printf(b, "<h3>");
		vn_html_text(b, in->tiermove[f].name);
		vn_strbuf_printf(b, "</h3>\n");
		hot_chart(b, &in->tiermove[f]);
		phase_table(b, &in->tiermove[f]);
	}
}
