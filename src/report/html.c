/* report.html: the frame, escaping and the SVG charts both pages draw with. */
#include "report/html.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "report/html-priv.h"
#include "report/result.h"
#include "util/alloc.h"
#include "util/cleanup.h"
#include "util/dir.h"
#include "util/file.h"
#include "util/json.h"
#include "util/strbuf.h"

void vn_html_text(struct vn_strbuf *b, const char *raw)
{
	_cleanup_free_ char *s = raw ? vn_text_dup(raw, SIZE_MAX, VN_TEXT_LINES) : NULL;
	size_t n = s ? strlen(s) : 0;
	bool cut = n > VN_HTML_MAX_TEXT;

	if (cut) {
		n = VN_HTML_MAX_TEXT;
		/* Not in the middle of a UTF-8 sequence. */
		while (n > 0 && ((unsigned char)s[n] & 0xC0) == 0x80)
			n--;
	}
	for (size_t i = 0; i < n; i++) {
		unsigned char c = (unsigned char)s[i];
		const char *rep = NULL;
		switch (c) {
		case '&': rep = "&amp;"; break;
		case '<': rep = "&lt;"; break;
		case '>': rep = "&gt;"; break;
		case '"': rep = "&quot;"; break;
		case '\'': rep = "&#39;"; break;
		default: break;
		}
		if (rep)
			vn_strbuf_append(b, rep, strlen(rep));
		else
			vn_strbuf_append(b, s + i, 1);
	}
	if (cut)
		vn_strbuf_printf(b, "\u2026 (%zu bytes)", strlen(s));
}

void vn_html_num(struct vn_strbuf *b, double v)
{
	if (!isfinite(v))
		vn_strbuf_append(b, "-", 1);
	else
		vn_strbuf_printf(b, "%.4g", v);
}

void vn_html_heat_color(double frac, char out[8])
{
	frac = frac > 0 ? frac < 1 ? frac : 1 : 0;
	int r = (int)lround(239 + (8 - 239) * frac), g = (int)lround(243 + (48 - 243) * frac),
	    bl = (int)lround(255 + (107 - 255) * frac);
	snprintf(out, 8, "#%02x%02x%02x", r, g, bl);
}

void vn_html_heatmap(struct vn_strbuf *b, const struct vn_html_heatmap *h)
{
	unsigned n = h->n;
	int px = n <= 16 ? h->px : (int)(576 / n) < 6 ? 6 : (int)(576 / n), off = 40, size = off + px * (int)n + 8;

	vn_strbuf_printf(b,
			 "<svg class=\"heatmap\" xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\" "
			 "viewBox=\"0 0 %d %d\" role=\"img\">",
			 size, size, size, size);
	if (h->corner) {
		vn_strbuf_printf(b, "<text x=\"4\" y=\"12\">");
		vn_html_text(b, h->corner);
		vn_strbuf_printf(b, "</text>");
	}
	for (unsigned i = 0; i < n && px >= 12; i++) {
		unsigned id = h->ids ? h->ids[i] : i;
		int c = off + px * (int)i + px / 2;
		vn_strbuf_printf(b, "<text x=\"%d\" y=\"%d\" text-anchor=\"middle\">%u</text>", c, off - 8, id);
		vn_strbuf_printf(b, "<text x=\"%d\" y=\"%d\" text-anchor=\"end\">%u</text>", off - 8, c + 4, id);
	}
	for (unsigned i = 0; i < n; i++)
		for (unsigned j = 0; j < n; j++)
			h->cell(b, h->ctx, i, j, off + px * (int)j, off + px * (int)i, px);
	vn_strbuf_printf(b, "</svg>\n");
}

json_object *vn_html_parse_line(const char *line, size_t n)
{
	json_tokener *tok = json_tokener_new_ex(16);
	json_object *o;

	if (!tok)
		vn_oom();
	json_tokener_set_flags(tok, JSON_TOKENER_STRICT);
	o = json_tokener_parse_ex(tok, line, (int)n);
	if (o && (json_tokener_get_error(tok) != json_tokener_success || json_tokener_get_parse_end(tok) != n ||
		  !json_object_is_type(o, json_type_object))) {
		json_object_put(o);
		o = NULL;
	}
	json_tokener_free(tok);
	return o;
}

const char *vn_html_color(unsigned i)
{
	static const char *const palette[] = {"#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd",
					      "#8c564b", "#e377c2", "#7f7f7f", "#bcbd22", "#17becf"};
	return palette[i % VN_ARRAY_SIZE(palette)];
}

/* A tick step of 1, 2 or 5 times a power of ten giving about target ticks over range. */
static double nice_step(double range, int target)
{
	double raw = range / target, mag = pow(10, floor(log10(raw))), f = raw / mag;

	return (f < 1.5 ? 1 : f < 3 ? 2 : f < 7 ? 5 : 10) * mag;
}

enum { CW = 640, CH = 210, ML = 64, MR = 150, MT = 26, MB = 34, LEGEND_MAX = 12 };

/* Data ranges and the plot area they map to, in pixels. */
struct frame {
	double x0, x1, y0, y1;
	int left, right, top, bottom;
};

static double px(const struct frame *f, double x)
{
	return f->left + (x - f->x0) / (f->x1 - f->x0) * (f->right - f->left);
}

static double py(const struct frame *f, double y)
{
	return f->bottom - (y - f->y0) / (f->y1 - f->y0) * (f->bottom - f->top);
}

/* y0..y1 widened to round numbers around lo..hi; returns the tick step. */
static double y_round(struct frame *f, double lo, double hi)
{
	if (!(hi - lo > 0))
		hi = lo + (fabs(lo) > 0 ? fabs(lo) * 0.1 : 1);
	double step = nice_step(hi - lo, 4);
	f->y0 = floor(lo / step) * step;
	f->y1 = ceil(hi / step) * step;
	if (f->y1 <= f->y0)
		f->y1 = f->y0 + step;
	return step;
}

/* The y range: 0 (or the lowest value) up to a round number above the highest (of the stack's top). */
static double y_range(const struct vn_html_chart *c, struct frame *f)
{
	double lo = 0, hi = 0;

	for (unsigned i = 0; i < c->n; i++) {
		double sum = 0;
		for (unsigned s = 0; s < c->nseries; s++) {
			double v = c->series[s].y[i];
			if (!isfinite(v))
				continue;
			sum = c->stacked ? sum + v : v;
			lo = fmin(lo, sum);
			hi = fmax(hi, sum);
		}
	}
	return y_round(f, lo, hi);
}

static void x_range(const struct vn_html_chart *c, struct frame *f)
{
	f->x0 = c->fixed_x ? c->xmin : INFINITY;
	f->x1 = c->fixed_x ? c->xmax : -INFINITY;
	for (unsigned i = 0; !c->fixed_x && i < c->n; i++) {
		f->x0 = fmin(f->x0, c->x[i]);
		f->x1 = fmax(f->x1, c->x[i]);
	}
	if (!isfinite(f->x0) || !isfinite(f->x1))
		f->x0 = 0, f->x1 = 1;
	if (f->x1 <= f->x0)
		f->x1 = f->x0 + 1;
}

/* <svg ...> with the title at the top left. */
static void svg_begin(struct vn_strbuf *b, const char *class, int w, int h, const char *title)
{
	vn_strbuf_printf(b,
			 "<svg class=\"%s\" xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\" "
			 "viewBox=\"0 0 %d %d\" role=\"img\"><text class=\"title\" x=\"8\" y=\"16\">",
			 class, w, h, w, h);
	vn_html_text(b, title);
	vn_strbuf_printf(b, "</text>");
}

/* Horizontal grid lines with their values, and the y axis. */
static void y_axis(struct vn_strbuf *b, const struct frame *f, double step)
{
	for (double y = f->y0; y <= f->y1 + step / 2; y += step) {
		vn_strbuf_printf(b, "<line class=\"grid\" x1=\"%d\" x2=\"%d\" y1=\"%.1f\" y2=\"%.1f\"/>", f->left,
				 f->right, py(f, y), py(f, y));
		vn_strbuf_printf(b, "<text class=\"tick\" x=\"%d\" y=\"%.1f\" text-anchor=\"end\">", f->left - 4,
				 py(f, y) + 4);
		vn_html_num(b, fabs(y) < step / 1e6 ? 0 : y);
		vn_strbuf_printf(b, "</text>");
	}
	vn_strbuf_printf(b, "<line class=\"axis\" x1=\"%d\" x2=\"%d\" y1=\"%d\" y2=\"%d\"/>", f->left, f->left, f->top,
			 f->bottom);
	vn_strbuf_printf(b, "<line class=\"axis\" x1=\"%d\" x2=\"%d\" y1=\"%d\" y2=\"%d\"/>", f->left, f->right,
			 f->bottom, f->bottom);
}

static void x_axis(struct vn_strbuf *b, const struct vn_html_chart *c, const struct frame *f)
{
	double step = nice_step(f->x1 - f->x0, 6);

	/* A run's first sample is at t = 0.0001: that is still the 0 tick. */
	for (double x = ceil((f->x0 - step / 100) / step) * step; x <= f->x1 + step / 1e6; x += step) {
		double at = px(f, fmax(x, f->x0));
		vn_strbuf_printf(b, "<line class=\"axis\" x1=\"%.1f\" x2=\"%.1f\" y1=\"%d\" y2=\"%d\"/>", at, at,
				 f->bottom, f->bottom + 4);
		vn_strbuf_printf(b, "<text class=\"tick\" x=\"%.1f\" y=\"%d\" text-anchor=\"middle\">", at,
				 f->bottom + 16);
		vn_html_num(b, fabs(x) < step / 1e6 ? 0 : x);
		vn_strbuf_printf(b, "</text>");
	}
	if (c->xlabel) {
		vn_strbuf_printf(b, "<text class=\"tick\" x=\"%d\" y=\"%d\" text-anchor=\"middle\">",
				 (f->left + f->right) / 2, CH - 4);
		vn_html_text(b, c->xlabel);
		vn_strbuf_printf(b, "</text>");
	}
}

static void legend(struct vn_strbuf *b, const struct vn_html_chart *c)
{
	unsigned shown = c->nseries < LEGEND_MAX ? c->nseries : LEGEND_MAX;

	for (unsigned s = 0; s < shown; s++) {
		int y = MT + 4 + (int)s * 14;
		vn_strbuf_printf(b, "<rect x=\"%d\" y=\"%d\" width=\"10\" height=\"10\" fill=\"%s\"/>", CW - MR + 10, y,
				 c->series[s].color);
		vn_strbuf_printf(b, "<text class=\"tick\" x=\"%d\" y=\"%d\">", CW - MR + 24, y + 9);
		vn_html_text(b, c->series[s].name);
		vn_strbuf_printf(b, "</text>");
	}
	if (shown < c->nseries)
		vn_strbuf_printf(b, "<text class=\"tick\" x=\"%d\" y=\"%d\">+%u more</text>", CW - MR + 10,
				 MT + 13 + (int)shown * 14, c->nseries - shown);
}

/* Series s stacked on the ones below it: the area between their top and its top, as one polygon. */
static void stack_polygon(struct vn_strbuf *b, const struct vn_html_chart *c, const struct frame *f, unsigned s,
			  double *base)
{
	vn_strbuf_printf(b, "<polygon class=\"area\" fill=\"%s\" points=\"", c->series[s].color);
	for (unsigned i = 0; i < c->n; i++) {
		double v = c->series[s].y[i];
		vn_strbuf_printf(b, "%.1f,%.1f ", px(f, c->x[i]), py(f, base[i] + (isfinite(v) ? v : 0)));
	}
	for (unsigned i = c->n; i-- > 0;)
		vn_strbuf_printf(b, "%.1f,%.1f ", px(f, c->x[i]), py(f, base[i]));
	vn_strbuf_printf(b, "\"/>");
	for (unsigned i = 0; i < c->n; i++)
		base[i] += isfinite(c->series[s].y[i]) ? c->series[s].y[i] : 0;
}

static void line(struct vn_strbuf *b, const struct vn_html_chart *c, const struct frame *f, unsigned s)
{
	/* Dashes from the second series on, so lines that coincide (two counters that move together) both show. */
	static const char *const dash[] = {"", " stroke-dasharray=\"7 4\"", " stroke-dasharray=\"2 3\""};
	vn_strbuf_printf(b, "<polyline class=\"line\" stroke=\"%s\"%s points=\"", c->series[s].color,
			 dash[s % VN_ARRAY_SIZE(dash)]);
	for (unsigned i = 0; i < c->n; i++)
		if (isfinite(c->series[s].y[i]))
			vn_strbuf_printf(b, "%.1f,%.1f ", px(f, c->x[i]), py(f, c->series[s].y[i]));
	vn_strbuf_printf(b, "\"/>");
}

void vn_html_chart(struct vn_strbuf *b, const struct vn_html_chart *c)
{
	struct frame f = {.left = ML, .right = CW - MR, .top = MT, .bottom = CH - MB};

	x_range(c, &f);
	double ystep = y_range(c, &f);
	svg_begin(b, "chart", CW, CH, c->title);
	y_axis(b, &f, ystep);
	x_axis(b, c, &f);
	if (c->stacked) {
		_cleanup_free_ double *base = vn_xcalloc(c->n ? c->n : 1, sizeof(*base));
		for (unsigned s = 0; s < c->nseries; s++)
			stack_polygon(b, c, &f, s, base);
	} else {
		for (unsigned s = 0; s < c->nseries; s++)
			line(b, c, &f, s);
	}
	legend(b, c);
	vn_strbuf_printf(b, "</svg>\n");
}

enum { SW = 110 /* pixels per group */, SH = 190, SML = 70, SMT = 28, SMB = 44, SPREAD = 36 };

void vn_html_strip(struct vn_strbuf *b, const struct vn_html_strip *s)
{
	/* Wide enough for a metric's name as its title even with two variants. */
	int w = SML + SW * (int)s->ngroups + 16 < 380 ? 380 : SML + SW * (int)s->ngroups + 16;
	struct frame f = {.left = SML, .right = w - 16, .top = SMT, .bottom = SH - SMB};
	double lo = INFINITY, hi = -INFINITY;

	for (unsigned g = 0; g < s->ngroups; g++)
		for (unsigned i = 0; i < s->count[g]; i++) {
			lo = fmin(lo, s->values[g][i]);
			hi = fmax(hi, s->values[g][i]);
		}
	if (!isfinite(lo))
		lo = hi = 0;
	/* Not from 0: repeats differ in the last digits, and that spread is what the chart is for. */
	double pad = (hi - lo) * 0.08;
	double step = y_round(&f, lo - pad, hi + pad);
	f.x0 = 0, f.x1 = s->ngroups ? s->ngroups : 1;
	svg_begin(b, "strip", w, SH, s->title);
	y_axis(b, &f, step);
	for (unsigned g = 0; g < s->ngroups; g++) {
		double cx = px(&f, g + 0.5), sum = 0;
		unsigned m = s->count[g];
		vn_strbuf_printf(b, "<text class=\"tick\" x=\"%.1f\" y=\"%d\" text-anchor=\"middle\">", cx,
				 f.bottom + 16);
		vn_html_text(b, s->names[g]);
		vn_strbuf_printf(b, "</text>");
		for (unsigned i = 0; i < m; i++) {
			/* Spread sideways, so equal repeats do not hide each other. */
			double dx = m > 1 ? ((double)i / (m - 1) - 0.5) * SPREAD : 0;
			vn_strbuf_printf(b, "<circle class=\"point\" cx=\"%.1f\" cy=\"%.1f\" r=\"4\" fill=\"%s\"/>",
					 cx + dx, py(&f, s->values[g][i]), vn_html_color(g));
			sum += s->values[g][i];
		}
		if (m)
			vn_strbuf_printf(b, "<line class=\"mean\" x1=\"%.1f\" x2=\"%.1f\" y1=\"%.1f\" y2=\"%.1f\"/>",
					 cx - SPREAD / 2 - 8, cx + SPREAD / 2 + 8, py(&f, sum / m), py(&f, sum / m));
	}
	vn_strbuf_printf(b, "<text class=\"tick\" x=\"%d\" y=\"%d\">points: repeats; bar: their mean</text>", SML,
			 SH - 6);
	vn_strbuf_printf(b, "</svg>\n");
}

void vn_html_page_begin(struct vn_strbuf *b, const char *title)
{
	vn_strbuf_printf(b, "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n"
			    /* Nothing may load: no script, no fonts, no images from anywhere. */
			    "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; "
			    "style-src 'unsafe-inline'; img-src data:\">\n<title>");
	vn_html_text(b, title);
	vn_strbuf_printf(
		b,
		"</title>\n<style>\n"
		"body{font:14px/1.45 system-ui,sans-serif;margin:24px;color:#222;max-width:1400px}\n"
		"h1{font-size:21px;margin:0 0 8px}h2{font-size:16px;margin:28px 0 8px;border-bottom:1px solid #ddd}\n"
		"table{border-collapse:collapse;margin:6px 0}td,th{border:1px solid #ccc;padding:3px 8px;"
		"text-align:left;vertical-align:top}th{background:#f3f3f3}\n"
		"td.n{text-align:right;font-variant-numeric:tabular-nums}\n"
		".pass{background:#d9f5d9;color:#075e07;font-weight:bold}"
		".noisy{background:#fff3c4;color:#6b5200;font-weight:bold}"
		".fail{background:#fbd5d5;color:#9b0000;font-weight:bold}\n"
		".banner{display:inline-block;padding:4px 12px;border-radius:4px;margin:4px 0 10px}\n"
		".sig{background:#fff1c2}.note{color:#666}pre{white-space:pre-wrap;margin:0;font-size:12px}\n"
		".charts{display:flex;flex-wrap:wrap;gap:10px 18px}.side{max-width:520px}\n"
		".chip{display:inline-block;min-width:22px;text-align:center;color:#fff;border-radius:3px;"
		"margin:1px 2px;padding:0 3px}\n"
		"svg text{font:11px system-ui,sans-serif;fill:#333}svg text.title{font-size:13px;font-weight:bold}\n"
		"svg .grid{stroke:#e5e5e5}svg .axis{stroke:#888}svg .line{fill:none;stroke-width:2}\n"
		"svg .area{fill-opacity:.85;stroke:none}svg .mean{stroke:#222;stroke-width:2}\n"
		"</style></head><body>\n");
}

void vn_html_page_end(struct vn_strbuf *b)
{
	vn_strbuf_printf(b, "<p class=\"note\">Drawn by vnuma report: one file, no scripts, nothing fetched.</p>\n"
			    "</body></html>\n");
}

void vn_html_note(struct vn_strbuf *b, const char *text)
{
	vn_strbuf_printf(b, "<p class=\"note\">");
	vn_html_text(b, text);
	vn_strbuf_printf(b, "</p>\n");
}

static void cell(struct vn_strbuf *b, const char *text, bool pre)
{
	vn_strbuf_printf(b, pre ? "<td><pre>" : "<td>");
	vn_html_text(b, text ? text : "");
	vn_strbuf_printf(b, pre ? "</pre></td>" : "</td>");
}

static void verdicts_head(struct vn_strbuf *b, size_t n)
{
	if (!n) {
		vn_html_note(b, "No assertions.");
		return;
	}
	vn_strbuf_printf(b, "<table class=\"verdicts\"><tr><th>verdict</th><th>assertion</th><th>observed</th>"
			    "<th>expected</th><th>detail</th></tr>\n");
}

/* One assertion's row; word "pass", "fail" or "too noisy" (NULL: not known). */
static void verdict_row(struct vn_strbuf *b, const char *word, const char *name, const char *observed,
			const char *expected, const char *detail)
{
	bool pass = word && strcmp(word, "pass") == 0, noisy = word && strcmp(word, "too noisy") == 0;

	vn_strbuf_printf(b, "<tr><td class=\"%s\">", pass ? "pass" : noisy ? "noisy" : "fail");
	vn_html_text(b, word ? word : "?");
	vn_strbuf_printf(b, "</td>");
	cell(b, name, false);
	cell(b, observed, false);
	cell(b, expected, false);
	cell(b, detail, true);
	vn_strbuf_printf(b, "</tr>\n");
}

static void verdicts_foot(struct vn_strbuf *b, size_t n)
{
	if (n)
		vn_strbuf_printf(b, "</table>\n");
	if (n > VN_HTML_MAX_VERDICTS)
		vn_strbuf_printf(b, "<p class=\"note\">%zu more assertions in result.json.</p>\n",
				 n - VN_HTML_MAX_VERDICTS);
}

void vn_html_verdicts_run(struct vn_strbuf *b, const struct vn_verdict *v, unsigned n)
{
	verdicts_head(b, n);
	for (unsigned i = 0; i < n && i < VN_HTML_MAX_VERDICTS; i++)
		verdict_row(b, vn_verdict_word(&v[i]), v[i].name, v[i].observed, v[i].expected, v[i].detail);
	verdicts_foot(b, n);
}

int vn_html_read_json(const char *dir, const char *name, size_t max, struct json_object **out, struct vn_error *err)
{
	_cleanup_free_ char *path = vn_xasprintf("%s/%s", dir, name), *text = NULL;
	size_t len;
	int rc;

	if ((rc = vn_file_read(path, max, &text, &len, err)) < 0)
		return rc;
	if (strlen(text) != len)
		return vn_input_error(err, "%s: holds a NUL byte", path);
	return vn_json_parse(text, path, out, err);
}

bool vn_html_path_ok(const char *rel)
{
	if (!rel || !*rel || rel[0] == '/' || strlen(rel) > 1024)
		return false;
	for (const char *p = rel; *p; p++)
		if (!strchr("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._/-", *p))
			return false;
	for (const char *p = rel; p; p = strchr(p, '/') ? strchr(p, '/') + 1 : NULL)
		if (strncmp(p, "..", 2) == 0 && (p[2] == '/' || p[2] == '\0'))
			return false;
	return true;
}

char *vn_html_pick_lines(const char *text, unsigned max, unsigned *total)
{
	struct vn_strbuf b = VN_STRBUF_INIT;
	unsigned n = 0, line = 0, next = 0, picked = 0;

	for (const char *p = text; *p; n++) {
		const char *nl = strchr(p, '\n');
		p = nl ? nl + 1 : p + strlen(p);
	}
	*total = n;
	if (max < 2)
		max = 2;
	for (const char *p = text; *p; line++) {
		const char *nl = strchr(p, '\n');
		size_t len = nl ? (size_t)(nl - p) + 1 : strlen(p);
		/* The k-th pick is line k*(n-1)/(max-1): evenly spread, the first and the last among them. */
		if (n <= max || line == next) {
			vn_strbuf_append(&b, p, len);
			picked++;
			next = (unsigned)((unsigned long long)picked * (n - 1) / (max - 1));
		} else if (nl) {
			vn_strbuf_append(&b, "\n", 1);
		}
		p += len;
	}
	return vn_strbuf_steal(&b);
}

static bool exists(const char *dir, const char *name)
{
	_cleanup_free_ char *path = vn_xasprintf("%s/%s", dir, name);

	return vn_is_file(path);
}

int vn_report_html_write(const char *dir, const char *out_path, struct vn_error *err)
{
	_cleanup_strbuf_ struct vn_strbuf b = VN_STRBUF_INIT;
	_cleanup_free_ char *def = NULL;
	struct stat st;
	int rc;

	if (stat(dir, &st) < 0)
		return vn_error_set(err, VN_ERR_INPUT, -errno, "%s: %s", dir, strerror(errno));
	if (!S_ISDIR(st.st_mode))
		return vn_input_error(err, "%s: not a directory (a run directory or a result group)", dir);
	if (exists(dir, "group.json"))
		rc = vn_html_group(&b, &(struct vn_html_group_in){.dir = dir}, err);
	else if (exists(dir, "result.json"))
		rc = vn_html_run(&b, dir, err);
	else
		return vn_input_error(
			err, "%s: neither a run directory (no result.json) nor a result group (no group.json)", dir);
	if (rc < 0)
		return rc;
	if (!out_path)
		out_path = def = vn_xasprintf("%s/report.html", dir);
	return vn_file_write_text(out_path, b.s, err);
}

int vn_report_html_write_group(const struct vn_html_group_in *in, const char *out_path, struct vn_error *err)
{
	_cleanup_strbuf_ struct vn_strbuf b = VN_STRBUF_INIT;
	_cleanup_free_ char *def = NULL, *page_dir = NULL;
	struct vn_html_group_in merged = *in;
	int rc;

	if (in->ndirs > 1) {
		/* No slice's directory is the matrix's: the page goes where it is told. */
		if (!out_path)
			return vn_input_error(err, "%s...: the page of several slices needs a file to go to (-o FILE)",
					      in->dirs[0]);
		const char *slash = strrchr(out_path, '/');
		page_dir = slash ? vn_xasprintf("%.*s", (int)(slash == out_path ? 1 : slash - out_path), out_path)
				 : vn_xstrdup(".");
		merged.page_dir = page_dir;
	}
	if ((rc = vn_html_group(&b, &merged, err)) < 0)
		return rc;
	if (!out_path)
		out_path = def = vn_xasprintf("%s/report.html", in->dir);
	return vn_file_write_text(out_path, b.s, err);
}

int vn_report_html_write_run(const struct vn_html_run_in *in, struct vn_error *err)
{
	_cleanup_strbuf_ struct vn_strbuf b = VN_STRBUF_INIT;
	_cleanup_free_ char *path = vn_xasprintf("%s/report.html", in->dir);

	vn_html_run_page(&b, in);
	return vn_file_write_text(path, b.s, err);
}
