/* The table drawn: text after the kernel test robot's, and JSON; and the group's compare.{txt,json}. */
#include <assert.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <json-c/json.h>

#include "compare/compare.h"
#include "report/html.h"
#include "util/alloc.h"
#include "util/dir.h"
#include "util/cleanup.h"
#include "util/file.h"
#include "util/json.h"
#include "util/strbuf.h"

/* Column widths: a mean, its "±NNN%", a change. */
#define W_MEAN   12
#define W_SD     6
#define W_CHANGE 10
#define W_DETECT 9
#define W_BASE   (W_MEAN + W_SD)
#define W_OTHER  (W_CHANGE + W_DETECT + 2 + W_MEAN + W_SD)
/* The stddev is shown only from this many percent of the mean (the robot's threshold). */
#define SD_SHOWN_PCT 2
/* A note's lines beneath the table, in columns (the table's rows run to about this). */
#define NOTE_WIDTH 100

/*
 * Like the robot: integers plain, large values in e-notation (1.584e+10),
 * the rest with 2 decimals, and tiny ones with 3 significant digits so
 * they do not read as 0. A row is integers unless a mean below 1000 has
 * a fraction, so that a column never mixes 91 and 97.90, and a counter's
 * 0 stays 0 beside its mean of 51192.67.
 */
static const char *fmt_num(double v, bool integral, char *buf, size_t len)
{
	double a = fabs(v);

	if (v == 0)
		snprintf(buf, len, integral ? "0" : "0.00");
	else if (a >= 1e9)
		snprintf(buf, len, "%.4g", v);
	else if (a >= 1000 || integral)
		snprintf(buf, len, "%.0f", v);
	else if (a >= 0.01)
		snprintf(buf, len, "%.2f", v);
	else
		snprintf(buf, len, "%.3g", v);
	return buf;
}

static bool row_integral(const struct vn_compare *c, const struct vn_compare_row *row)
{
	for (size_t v = 0; v < c->nvariants; v++)
		if (row->cells[v].n && fabs(row->cells[v].mean) < 1000 &&
		    row->cells[v].mean != trunc(row->cells[v].mean))
			return false;
	return true;
}

/* "±NN%", W_SD columns wide, or blanks (n < 2, a 0 mean, or below SD_SHOWN_PCT). */
static void put_sd(struct vn_strbuf *b, const struct vn_compare_cell *cell)
{
	double cv = cell->n >= 2 && cell->mean != 0 ? cell->stddev / fabs(cell->mean) * 100 : 0;

	if (!isfinite(cv))
		vn_strbuf_printf(b, " \u00b1%4s", "-"); /* a spread beyond DBL_MAX, or beside a mean near 0 */
	else if (cv >= SD_SHOWN_PCT)
		vn_strbuf_printf(b, " \u00b1%3.0f%%", cv);
	else
		vn_strbuf_printf(b, "%*s", W_SD, "");
}

static void put_mean(struct vn_strbuf *b, const struct vn_compare_cell *cell, bool integral)
{
	char num[64];

	vn_strbuf_printf(b, "%*s", W_MEAN,
			 cell->n && isfinite(cell->mean) ? fmt_num(cell->mean, integral, num, sizeof(num)) : "-");
	put_sd(b, cell);
}

static void put_change(struct vn_strbuf *b, const struct vn_compare_row *row, const struct vn_compare_cell *cell)
{
	char s[64] = "";

	if (!cell->has_change)
		s[0] = '\0';
	else if (!isfinite(row->absolute || !cell->has_pct ? cell->change_abs : cell->change_pct))
		snprintf(s, sizeof(s), "-"); /* past DBL_MAX */
	else if (row->absolute)
		snprintf(s, sizeof(s), "%+.1f", cell->change_abs == 0 ? 0 : cell->change_abs);
	else if (cell->has_pct)
		snprintf(s, sizeof(s), "%+.1f%%", cell->change_pct == 0 ? 0 : cell->change_pct);
	else
		snprintf(s, sizeof(s), "%s", cell->change_abs > 0 ? "+inf%" : "-inf%");
	vn_strbuf_printf(b, "%*s", W_CHANGE, s);
}

/* The smallest change the noise could show: "≥12.3%" (points for a percentage), blank when there is none. */
static void put_detect(struct vn_strbuf *b, const struct vn_compare_row *row, const struct vn_compare_cell *cell)
{
	char s[64] = "";

	if (cell->has_detect && (row->absolute || !cell->detect_pct_ok))
		snprintf(s, sizeof(s), "%.3g", cell->detect_abs);
	else if (cell->detect_pct_ok)
		snprintf(s, sizeof(s), cell->detect_pct < 1000 ? "%.1f%%" : "%.0e%%", cell->detect_pct);
	/* The sign is one column of three bytes: padded by hand. */
	int cols = s[0] ? (int)strlen(s) + 1 : 0;
	vn_strbuf_printf(b, "%*s%s%s", cols < W_DETECT ? W_DETECT - cols : 1, "", s[0] ? "\u2265" : "", s);
}

static void put_row(struct vn_strbuf *b, const struct vn_compare *c, const struct vn_compare_row *row)
{
	bool integral = row_integral(c, row);

	vn_strbuf_printf(b, "%s", row->significant ? "* " : "  ");
	put_mean(b, &row->cells[0], integral);
	for (size_t v = 1; v < c->nvariants; v++) {
		put_change(b, row, &row->cells[v]);
		put_detect(b, row, &row->cells[v]);
		vn_strbuf_printf(b, "  ");
		put_mean(b, &row->cells[v], integral);
	}
	vn_strbuf_printf(b, "  %s\n", row->metric);
}

static void put_variant(struct vn_strbuf *b, const struct vn_compare_variant *v, bool base, int width)
{
	const char *sep = "";

	vn_strbuf_printf(b, "%-4s  %-*s ", base ? "base" : "", width, v->name);
	if (v->kernel || v->release) {
		vn_strbuf_printf(b, " kernel %s", v->kernel ? v->kernel : v->release);
		if (v->kernel && v->release)
			vn_strbuf_printf(b, " (%s)", v->release);
		sep = ",";
	}
	if (v->cmdline) {
		vn_strbuf_printf(b, "%s cmdline \"%s\"", sep, v->cmdline);
		sep = ",";
	}
	if (v->sysctls) {
		vn_strbuf_printf(b, "%s sysctls %s", sep, v->sysctls);
		sep = ",";
	}
	if (v->facts) {
		vn_strbuf_printf(b, "%s %s", sep, v->facts);
		sep = ",";
	}
	if (v->complete == v->runs)
		vn_strbuf_printf(b, "%s n=%u\n", *sep ? ";" : "", v->complete);
	else
		vn_strbuf_printf(b, "%s n=%u of %u runs complete\n", *sep ? ";" : "", v->complete, v->runs);
}

static void put_header(struct vn_strbuf *b, const struct vn_compare *c)
{
	int width = 0;

	vn_strbuf_printf(b, "scenario:    %s\n", c->scenario ? c->scenario : "-");
	vn_strbuf_printf(b, "topology:    %s\n", c->topology ? c->topology : "-");
	vn_strbuf_printf(b, "accelerator: %s\n", c->accelerator ? c->accelerator : "-");
	vn_strbuf_printf(b, "time:        %s\n", c->time ? c->time : "-");
	if (c->arch) /* results from before architectures have none */
		vn_strbuf_printf(b, "arch:        %s\n", c->arch);
	vn_strbuf_printf(b, "repeats:     %u\n", c->repeats);
	if (c->incomplete)
		vn_strbuf_printf(
			b, "incomplete:  group.json says the matrix has not ended (still running, or cut short)\n");
	vn_strbuf_printf(b, "\n");
	for (size_t v = 0; v < c->nvariants; v++)
		if ((int)strlen(c->variants[v].name) > width)
			width = (int)strlen(c->variants[v].name);
	for (size_t v = 0; v < c->nvariants; v++)
		put_variant(b, &c->variants[v], v == 0, width);
	vn_strbuf_printf(b, "\n");

	/* The column heads: each variant's name over its columns, as the robot puts the commits. */
	vn_strbuf_printf(b, "  %*s", W_BASE, c->variants[0].name);
	for (size_t v = 1; v < c->nvariants; v++)
		vn_strbuf_printf(b, "  %*s", W_OTHER - 2, c->variants[v].name);
	vn_strbuf_printf(b, "\n  ");
	for (int i = 0; i < W_BASE; i++)
		vn_strbuf_printf(b, "-");
	for (size_t v = 1; v < c->nvariants; v++) {
		vn_strbuf_printf(b, "  ");
		for (int i = 0; i < W_OTHER - 2; i++)
			vn_strbuf_printf(b, "-");
	}
	vn_strbuf_printf(b, "\n  %*s", W_BASE, "%stddev");
	for (size_t v = 1; v < c->nvariants; v++)
		vn_strbuf_printf(b, "%*s%*s%*s", W_CHANGE, "%change", W_DETECT, "detect", W_OTHER - W_CHANGE - W_DETECT,
				 "%stddev");
	vn_strbuf_printf(b, "\n");
}

/*
 * Every cell is a test of its own: among many, some come out significant by
 * chance alone, even between identical kernels (docs/noise.md: two variants
 * of one kernel, 91% apart, marked). Said beneath the table, with how many
 * chance would give; a `change` assertion names its metric beforehand and
 * is not one of many.
 */
static char *note_chance(const struct vn_compare *c)
{
	size_t tested = 0, marked = 0;

	for (size_t i = 0; i < c->nrows; i++)
		for (size_t v = 1; v < c->nvariants; v++) {
			tested += c->rows[i].cells[v].has_p;
			marked += c->rows[i].cells[v].significant;
		}
	if (tested < 2)
		return NULL;
	return vn_xasprintf("%zu of %zu tests marked; about %.1f would be by chance alone at p < %.2f, between "
			    "identical kernels too: a marked row is a lead to follow, a scenario's change assertion "
			    "the verdict.",
			    marked, tested, (double)tested * VN_COMPARE_ALPHA, VN_COMPARE_ALPHA);
}

/*
 * Under -icount every vCPU runs on one stream of instructions: a vCPU that
 * idles gives its turn to the others, so two threads stacked on one vCPU
 * go as fast as on two (docs/noise.md). A rate in virtual time cannot show
 * what placement costs, which real time does.
 */
bool vn_compare_virtual_time(const struct vn_compare *c)
{
	return c->time && strstr(c->time, "virtual");
}

static char *note_virtual_time(const struct vn_compare *c)
{
	if (!vn_compare_virtual_time(c))
		return NULL;
	return vn_xstrdup("Virtual time: every vCPU runs on one stream of instructions, so where the kernel places a "
			  "thread changes a rate little or not at all (two threads on one vCPU ran as fast as on "
			  "two): what placement costs shows in real time only, on a host with a CPU for every busy "
			  "vCPU (docs/noise.md).");
}

bool vn_compare_shared_cpus(const struct vn_compare *c)
{
	return c->shared_vcpus > c->shared_host_cpus && c->shared_host_cpus;
}

/*
 * Real time hides placement's cost too, where the vCPUs outnumber the host's
 * CPUs: a busy vCPU gets a share of the host's CPUs, and the fewer vCPUs are
 * busy the larger that share, so two threads stacked on one vCPU run faster
 * than half speed (docs/noise.md).
 */
static char *note_shared_cpus(const struct vn_compare *c)
{
	if (!vn_compare_shared_cpus(c))
		return NULL;
	return vn_xasprintf("Real time, %u vCPUs on %u host CPUs: once more than %u vCPUs are busy they share the "
			    "host's CPUs, so threads stacked on one vCPU cost less than on the machine modeled: what "
			    "placement costs shows in full only on a host with a CPU for every busy vCPU "
			    "(docs/noise.md).",
			    c->shared_vcpus, c->shared_host_cpus, c->shared_host_cpus);
}

size_t vn_compare_notes(const struct vn_compare *c, char *notes[VN_COMPARE_NOTES_MAX])
{
	char *(*const each[])(const struct vn_compare *) = {note_chance, note_virtual_time, note_shared_cpus};
	size_t n = 0;

	static_assert(VN_ARRAY_SIZE(each) <= VN_COMPARE_NOTES_MAX, "room for every note");
	for (size_t i = 0; i < VN_ARRAY_SIZE(each); i++)
		if ((notes[n] = each[i](c)))
			n++;
	return n;
}

/* s in lines of at most NOTE_WIDTH columns where its words allow, the later ones indented by two. */
static void put_wrapped(struct vn_strbuf *b, const char *s)
{
	size_t indent = 0;

	while (*s) {
		size_t room = NOTE_WIDTH - indent, len = strlen(s), cut = len;
		if (len > room) {
			cut = room;
			while (cut > 0 && s[cut] != ' ')
				cut--;
			if (cut == 0) /* a word longer than a line: it gets one of its own */
				cut = strcspn(s, " ");
		}
		vn_strbuf_printf(b, "%*s%.*s\n", (int)indent, "", (int)cut, s);
		s += cut;
		s += strspn(s, " ");
		indent = 2;
	}
}

char *vn_compare_format_text(const struct vn_compare *c, unsigned flags)
{
	_cleanup_strbuf_ struct vn_strbuf b = VN_STRBUF_INIT;
	/* One variant alone (repeats of one kernel) is there for its means and spreads: every row. */
	bool all = (flags & VN_COMPARE_ALL) || c->nvariants < 2;
	size_t hidden = 0;

	put_header(&b, c);
	for (size_t i = 0; i < c->nrows; i++) {
		if (!c->rows[i].changed && !all) {
			hidden++;
			continue;
		}
		put_row(&b, c, &c->rows[i]);
	}
	vn_strbuf_printf(&b, "\n");
	if (!c->nrows)
		vn_strbuf_printf(&b, "no metrics: no complete run recorded any\n");
	vn_strbuf_printf(&b,
			 "* p < %.2f in Welch's two-sided t-test against the base; \u00b1 the sample stddev in %% of "
			 "the mean (from %d%%);\n  %%change relative to the base, an absolute difference for metrics "
			 "that are percentages;\n  detect: the smallest change these n and stddevs show at p < %.2f "
			 "%.0f%% of the time (Welch)\n",
			 VN_COMPARE_ALPHA, SD_SHOWN_PCT, VN_COMPARE_ALPHA, VN_COMPARE_POWER * 100);
	if (hidden)
		vn_strbuf_printf(&b,
				 "%zu row%s where every variant's mean equals the base's hidden (--all shows them)\n",
				 hidden, hidden == 1 ? "" : "s");
	char *notes[VN_COMPARE_NOTES_MAX];
	for (size_t i = 0, n = vn_compare_notes(c, notes); i < n; i++) {
		put_wrapped(&b, notes[i]);
		free(notes[i]);
	}
	return vn_strbuf_steal(&b);
}

/* 15 significant digits: every counter exactly, and none of binary floating point's noise. */
static json_object *jnum(double v)
{
	return vn_json_new_double_sig(v == 0 ? 0 : v, 15);
}

static json_object *json_variant(const struct vn_compare_variant *v)
{
	json_object *o = json_object_new_object();

	const char *const members[][2] = {{"name", v->name},       {"source", v->source},   {"kernel", v->kernel},
					  {"release", v->release}, {"cmdline", v->cmdline}, {"sysctls", v->sysctls}};

	vn_json_add_strs(o, members, VN_ARRAY_SIZE(members));
	/* Only where a run's facts are shown (result-facts.h): older tables stay as they were. */
	if (v->facts)
		vn_json_add_str(o, "facts", v->facts);
	json_object_object_add(o, "runs", json_object_new_int64(v->runs));
	json_object_object_add(o, "complete", json_object_new_int64(v->complete));
	return o;
}

/* o.key = v, or null where the cell has no such figure (too few runs, no base to change from, past DBL_MAX). */
static void add_num(json_object *o, const char *key, bool present, double v)
{
	json_object_object_add(o, key, present && isfinite(v) ? jnum(v) : NULL);
}

static json_object *json_cell(const char *name, const struct vn_compare_cell *cell)
{
	json_object *o = json_object_new_object();

	vn_json_add_str(o, "name", name);
	json_object_object_add(o, "n", json_object_new_int64(cell->n));
	add_num(o, "mean", cell->n > 0, cell->mean);
	add_num(o, "stddev", cell->n >= 2, cell->stddev);
	add_num(o, "change_pct", cell->has_pct, cell->change_pct);
	add_num(o, "change_abs", cell->has_change, cell->change_abs);
	add_num(o, "p_value", cell->has_p, cell->p_value);
	add_num(o, "detectable_abs", cell->has_detect, cell->detect_abs);
	add_num(o, "detectable_pct", cell->detect_pct_ok, cell->detect_pct);
	json_object_object_add(o, "significant", json_object_new_boolean(cell->significant));
	return o;
}

char *vn_compare_format_json(const struct vn_compare *c)
{
	json_object *o = json_object_new_object(), *vars = json_object_new_array(), *rows = json_object_new_array();

	vn_json_add_str(o, "scenario", c->scenario);
	vn_json_add_str(o, "topology", c->topology);
	vn_json_add_str(o, "accelerator", c->accelerator);
	vn_json_add_str(o, "time", c->time);
	if (c->arch)
		vn_json_add_str(o, "arch", c->arch);
	json_object_object_add(o, "repeats", json_object_new_int64(c->repeats));
	if (vn_compare_shared_cpus(c)) {
		json_object *sh = json_object_new_object();
		json_object_object_add(sh, "vcpus", json_object_new_int64(c->shared_vcpus));
		json_object_object_add(sh, "host_cpus", json_object_new_int64(c->shared_host_cpus));
		json_object_object_add(o, "shared_cpus", sh);
	}
	json_object_object_add(o, "complete", json_object_new_boolean(!c->incomplete));
	json_object_object_add(o, "alpha", jnum(VN_COMPARE_ALPHA));
	json_object_object_add(o, "power", jnum(VN_COMPARE_POWER));
	vn_json_add_str(o, "base", c->variants[0].name);
	for (size_t v = 0; v < c->nvariants; v++)
		json_object_array_add(vars, json_variant(&c->variants[v]));
	json_object_object_add(o, "variants", vars);
	for (size_t i = 0; i < c->nrows; i++) {
		const struct vn_compare_row *row = &c->rows[i];
		json_object *r = json_object_new_object(), *cells = json_object_new_array();
		vn_json_add_str(r, "metric", row->metric);
		json_object_object_add(r, "change", json_object_new_string(row->absolute ? "abs" : "pct"));
		json_object_object_add(r, "significant", json_object_new_boolean(row->significant));
		json_object_object_add(r, "changed", json_object_new_boolean(row->changed));
		for (size_t v = 0; v < c->nvariants; v++)
			json_object_array_add(cells, json_cell(c->variants[v].name, &row->cells[v]));
		json_object_object_add(r, "variants", cells);
		json_object_array_add(rows, r);
	}
	json_object_object_add(o, "rows", rows);
	json_object *jnotes = json_object_new_array();
	char *notes[VN_COMPARE_NOTES_MAX];
	for (size_t i = 0, n = vn_compare_notes(c, notes); i < n; i++) {
		json_object_array_add(jnotes, json_object_new_string(notes[i]));
		free(notes[i]);
	}
	json_object_object_add(o, "notes", jnotes);
	char *s = vn_xasprintf(
		"%s\n", json_object_to_json_string_ext(o, JSON_C_TO_STRING_PRETTY | JSON_C_TO_STRING_NOSLASHESCAPE));
	json_object_put(o);
	return s;
}

int vn_compare_write_group(const char *dir, struct vn_compare **out, struct vn_error *err)
{
	/* A matrix whose runs ended on different accelerators still gets its table; the header names both. */
	const struct vn_compare_opts o = {.force = true};
	_cleanup_compare_ struct vn_compare *c = NULL;
	int rc;

	if ((rc = vn_compare_load(&dir, 1, &o, &c, err)) < 0)
		return rc;
	_cleanup_free_ char *text = vn_compare_format_text(c, 0), *json = vn_compare_format_json(c);
	_cleanup_free_ char *tpath = vn_xasprintf("%s/compare.txt", dir), *jpath = vn_xasprintf("%s/compare.json", dir);
	if ((rc = vn_file_write_text(tpath, text, err)) < 0 || (rc = vn_file_write_text(jpath, json, err)) < 0)
		return rc;
	if (out)
		*out = steal_pointer(&c);
	return 0;
}

int vn_compare_html_write_dirs(const char *const *dirs, size_t n, const char *out_path, const struct vn_compare *cmp,
			       struct vn_error *err)
{
	const struct vn_compare_opts o = {.force = true};
	_cleanup_compare_ struct vn_compare *own = NULL;
	_cleanup_free_ char *group = vn_xasprintf("%s/group.json", dirs[0]);
	char *notes[VN_COMPARE_NOTES_MAX];
	size_t nnotes = 0;
	struct vn_error e = {0};

	if (n == 1 && !vn_is_file(group))
		return vn_report_html_write(dirs[0], out_path, err);
	/* The page is for reading: a group that cannot be compared is drawn without the table, saying why. */
	if (!cmp && vn_compare_load(dirs, n, &o, &own, &e) == 0)
		cmp = own;
	if (cmp)
		nnotes = vn_compare_notes(cmp, notes);
	struct vn_html_group_in in = {.dir = dirs[0],
				      .dirs = dirs,
				      .ndirs = n,
				      .cmp = cmp,
				      .cmp_why = cmp ? NULL : e.msg,
				      .notes = notes,
				      .nnotes = nnotes};
	int rc = vn_report_html_write_group(&in, out_path, err);
	for (size_t i = 0; i < nnotes; i++)
		free(notes[i]);
	vn_error_clear(&e);
	return rc;
}

int vn_compare_html_write(const char *dir, const char *out_path, const struct vn_compare *cmp, struct vn_error *err)
{
	return vn_compare_html_write_dirs(&dir, 1, out_path, cmp, err);
}
