/*
 * Fuzz target for the report's readers of a locality run (html-locality.c):
 * samples.jsonl's per-line matrices, which the page reads from a results dir
 * anyone may have written, and result.json's locality metrics. The input is
 * the samples text, and the result too when it is one JSON object. Nothing
 * may crash, and what is drawn stays within its bounds: a matrix's side within
 * the model's, every count finite and not negative, every fraction in 0..1,
 * at most VN_HTML_MAX_POINTS points. Built like fuzz-topology.c.
 */
#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "report/html.h"
#include "report/html-priv.h"
#include "report/result.h"
#include "topology/limits.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void check_fraction(double f)
{
	if (!isnan(f) && !(f >= 0 && f <= 1))
		abort();
}

static void check_lines(const char *text, double *m)
{
	for (const char *p = text; *p;) {
		size_t n = strcspn(p, "\n");
		unsigned side = 0;
		int rc = vn_html_loc_line(p, n, m, &side);
		if (rc < -1 || rc > 1 || (rc == 1 && (side < 1 || side > VN_MAX_NODES)))
			abort();
		for (size_t k = 0; rc == 1 && k < (size_t)side * side; k++)
			if (!(m[k] >= 0 && isfinite(m[k])))
				abort();
		p += n + (p[n] == '\n');
	}
}

/* The run the page draws when text is one JSON object: its error and its metrics, every number kept. */
static void result_of(const char *text, struct vn_result_run *res)
{
	struct json_object *o = vn_html_parse_line(text, strlen(text)), *m;

	memset(res, 0, sizeof(*res));
	res->complete = true;
	if (!o)
		return;
	if (json_object_is_type(json_object_object_get(o, "error"), json_type_string))
		res->error = strdup(json_object_get_string(json_object_object_get(o, "error")));
	if (json_object_object_get_ex(o, "metrics", &m) && json_object_is_type(m, json_type_object)) {
		json_object_object_foreach(m, key, val)
		{
			if (json_object_is_type(val, json_type_int) || json_object_is_type(val, json_type_double))
				vn_result_metric(res, key, json_object_get_double(val));
		}
	}
	json_object_put(o);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *text = malloc(size + 1);
	double *m = malloc(sizeof(double) * VN_MAX_NODES * VN_MAX_NODES);
	struct vn_strbuf b = VN_STRBUF_INIT;
	struct vn_html_loc l;

	if (!text || !m)
		abort();
	memcpy(text, data, size);
	text[size] = '\0';
	check_lines(text, m);
	struct vn_result_run res;
	result_of(text, &res);
	vn_html_loc_load(&l, &res, text, "proof");
	if (l.npoints > VN_HTML_MAX_POINTS || l.nrows > VN_HTML_LOC_ROWS || l.nnodes > VN_MAX_NODES)
		abort();
	for (unsigned i = 0; i < l.npoints; i++) {
		check_fraction(l.all[i]);
		for (unsigned r = 0; r < l.nrows; r++)
			check_fraction(l.row[r][i]);
	}
	for (unsigned k = 0; k < 3; k++)
		check_fraction(l.remote[k]);
	for (size_t k = 0; k < (size_t)l.nnodes * l.nnodes; k++)
		if (!isnan(l.matrix[k]) && !(l.matrix[k] >= 0 && isfinite(l.matrix[k])))
			abort();
	vn_html_loc_heatmap(&b, &l);
	vn_html_loc_chart(&b, &l, false, 0, 0);
	vn_html_loc_clear(&l);
	vn_result_clear(&res);
	vn_strbuf_free(&b);
	free(m);
	free(text);
	return 0;
}

#ifndef VN_LIBFUZZER
#include "replay-main.h"
#endif
