/* report.html for a bisection: the metric (or the verdicts) across the tested commits, in commit order. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "report/html.h"
#include "report/html-priv.h"
#include "util/alloc.h"
#include "util/cleanup.h"
#include "util/file.h"

/* Tested commits drawn and listed: a bisection tests about log2 of its range, so this is never reached in practice. */
#define MAX_COMMITS 200

int vn_report_html_write_bisect(const struct vn_html_bisect *in, struct vn_error *err)
{
	_cleanup_strbuf_ struct vn_strbuf b = VN_STRBUF_INIT;
	unsigned n = in->ncommits < MAX_COMMITS ? in->ncommits : MAX_COMMITS;
	_cleanup_free_ const char **names = vn_xcalloc(n + 1, sizeof(*names));
	_cleanup_free_ unsigned *count = vn_xcalloc(n + 1, sizeof(*count));
	_cleanup_free_ const double **values = vn_xcalloc(n + 1, sizeof(*values));
	_cleanup_free_ char *labels = vn_xcalloc(n + 1, 64);

	vn_html_page_begin(&b, in->title);
	vn_strbuf_printf(&b, "<h1>");
	vn_html_text(&b, in->title);
	vn_strbuf_printf(&b, "</h1>\n");
	vn_html_note(&b, in->outcome ? in->outcome : "");
	if (in->metric) {
		for (unsigned i = 0; i < n; i++) {
			const struct vn_html_bisect_commit *c = &in->commits[i];
			snprintf(labels + 64 * i, 64, "#%u %.8s %s", c->position, c->hash, c->mark);
			names[i] = labels + 64 * i;
			count[i] = c->nvalues;
			values[i] = c->values;
		}
		_cleanup_free_ char *t = vn_xasprintf("%s across the tested commits, in commit order", in->metric);
		struct vn_html_strip s = {.title = t, .ngroups = n, .names = names, .count = count, .values = values};
		vn_html_strip(&b, &s);
	}
	vn_strbuf_printf(&b,
			 "<h2>Tested commits</h2>\n<table class=\"runs\"><tr><th>#</th><th>commit</th>"
			 "<th>mark</th><th>%s</th><th>why</th><th>subject</th></tr>\n",
			 in->metric ? "mean ± sd (n)" : "runs");
	for (unsigned i = 0; i < n; i++) {
		const struct vn_html_bisect_commit *c = &in->commits[i];
		vn_strbuf_printf(&b, "<tr%s><td>%u</td><td><code>", c->first_bad ? " class=\"fail\"" : "", c->position);
		vn_html_text(&b, c->hash);
		vn_strbuf_printf(&b, "</code></td><td>");
		vn_html_text(&b, c->mark);
		vn_strbuf_printf(&b, "%s</td><td>", c->first_bad ? " (first bad)" : "");
		if (in->metric) {
			vn_html_num(&b, c->mean);
			vn_strbuf_printf(&b, " ± ");
			vn_html_num(&b, c->sd);
			vn_strbuf_printf(&b, " (%u)", c->nvalues);
		} else {
			vn_strbuf_printf(&b, "%u passed, %u failed%s", c->passed, c->failed, c->broken ? ", " : "");
			if (c->broken)
				vn_strbuf_printf(&b, "%u could not run", c->broken);
		}
		vn_strbuf_printf(&b, "</td><td>");
		vn_html_text(&b, c->why ? c->why : "");
		vn_strbuf_printf(&b, "</td><td>");
		vn_html_text(&b, c->subject ? c->subject : "");
		vn_strbuf_printf(&b, "</td></tr>\n");
	}
	vn_strbuf_printf(&b, "</table>\n");
	if (in->ncommits > n)
		vn_strbuf_printf(&b, "<p class=\"note\">%u more tested commits are in bisect.json.</p>\n",
				 in->ncommits - n);
	vn_html_page_end(&b);
	return vn_file_write_text(in->path, b.s, err);
}
