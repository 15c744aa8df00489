/*
 * The scenario's tracepoints: the in-guest vnuma-trace started before the
 * first step, its stream checked and turned into RESULTS/trace.jsonl, and
 * its counts into metrics (docs/tracing.md). What the guest sends is
 * bounded here (a line, the file, the number of each thing) and parsed by
 * metrics/trace.c; a message of the wrong shape is counted and dropped.
 */
#include <errno.h>
#include <json-c/json.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "metrics/trace.h"
#include "scenario/probe.h"
#include "scenario/runner-priv.h"
#include "util/alloc.h"
#include "util/cleanup.h"
#include "util/clock.h"
#include "util/interrupt.h"
#include "util/json.h"

/* One message of the guest's: a format file escaped as JSON is the longest. */
#define TRACE_MSG_MAX (8 * VN_TRACE_FORMAT_MAX)
/* trace.jsonl's events; the header and the end record are written past it. */
#define TRACE_FILE_MAX (128u << 20)
#define TRACE_READY_S  60
#define TRACE_END_S    60
/* The window's vmstat counters kept from the guest's ready and end lines. */
#define TRACE_VMSTAT_MAX 16

struct counter {
	char name[VN_TRACE_NAME_MAX];
	double v;
};

struct vn_run_trace {
	struct exec *e;
	FILE *out;
	size_t out_len;
	struct vn_strbuf line;
	bool skip_line;
	unsigned n; /* the scenario's tracepoints */
	const char *names[VN_SCN_TRACEPOINTS_MAX];
	bool have_format[VN_SCN_TRACEPOINTS_MAX];
	struct vn_trace_format fmt[VN_SCN_TRACEPOINTS_MAX];
	char *fmt_text[VN_SCN_TRACEPOINTS_MAX]; /* as the kernel wrote it, kept in the header */
	char *missing;                          /* the tracepoint the guest said it lacks */
	bool no_tracefs;                        /* ... because the kernel has no tracefs at all */
	char *error;                            /* the first message that broke the protocol's order */
	bool ready, ended;
	char clock[16];
	double t0, t1;
	unsigned nv0, nv1;
	struct counter v0[TRACE_VMSTAT_MAX], v1[TRACE_VMSTAT_MAX];
	uint64_t count[VN_SCN_TRACEPOINTS_MAX], cross[VN_SCN_TRACEPOINTS_MAX];
	int cross_kind[VN_SCN_TRACEPOINTS_MAX]; /* 0: none, 1: cpu pair, 2: nid pair */
	const char *cross_a[VN_SCN_TRACEPOINTS_MAX], *cross_b[VN_SCN_TRACEPOINTS_MAX];
	double sum[VN_SCN_TRACEPOINTS_MAX][VN_TRACE_FIELDS_MAX]; /* nr_* fields */
	uint64_t events, written, malformed, bad_msgs, guest_cut, overrun, dropped;
	bool stats;
	/* What report.html charts of the capture, kept as trace.jsonl is written (traced: it was opened). */
	bool traced;
	struct vn_html_trace page;
};

static void protocol_error(struct vn_run_trace *t, const char *what)
{
	if (!t->error)
		t->error = vn_xstrdup(what);
}

static int index_of(const struct vn_run_trace *t, const char *name)
{
	for (unsigned i = 0; i < t->n; i++)
		if (strcmp(t->names[i], name) == 0)
			return (int)i;
	return -1;
}

/* A non-negative integer member that fits 53 bits (as the guest's counters do). */
static bool count_member(json_object *o, const char *key, uint64_t *out)
{
	int64_t x;
	if (!vn_json_has_int64(o, key, &x) || x < 0 || x > (INT64_C(1) << 53))
		return false;
	*out = (uint64_t)x;
	return true;
}

static void vmstat_keep(json_object *o, struct counter *c, unsigned *n)
{
	json_object *vm = vn_json_member(o, "vmstat", json_type_object);
	if (!vm)
		return;
	json_object_object_foreach(vm, key, v)
	{
		uint64_t x;
		if (*n == TRACE_VMSTAT_MAX || strlen(key) >= sizeof(c->name) || !count_member(vm, key, &x))
			continue;
		snprintf(c[*n].name, sizeof(c->name), "%s", key);
		c[(*n)++].v = (double)x;
	}
}

/* Which of an event's fields say a task moved from one node to another, if any. */
static void find_cross(struct vn_run_trace *t, unsigned k)
{
	static const char *const pairs[][2] = {
		{"orig_cpu", "dest_cpu"}, {"src_cpu", "dst_cpu"}, {"src_nid", "dst_nid"}};
	const struct vn_trace_format *f = &t->fmt[k];

	for (unsigned p = 0; p < 3 && !t->cross_kind[k]; p++) {
		bool a = false, b = false;
		for (unsigned i = 0; i < f->nfields; i++) {
			a |= strcmp(f->fields[i].name, pairs[p][0]) == 0 && f->fields[i].numeric;
			b |= strcmp(f->fields[i].name, pairs[p][1]) == 0 && f->fields[i].numeric;
		}
		if (a && b) {
			t->cross_kind[k] = p < 2 ? 1 : 2;
			t->cross_a[k] = pairs[p][0];
			t->cross_b[k] = pairs[p][1];
		}
	}
}

static void on_format(struct vn_run_trace *t, json_object *o)
{
	const char *name = vn_json_str(o, "format"), *text = vn_json_str(o, "text");
	int k = name ? index_of(t, name) : -1;
	struct vn_error pe = {0};

	if (t->ready || k < 0 || !text || t->have_format[k]) {
		protocol_error(t, "a format line out of order, or for an event not asked for");
		return;
	}
	if (vn_trace_format_parse(text, strlen(text), &t->fmt[k], &pe) < 0) {
		_cleanup_free_ char *m = vn_xasprintf("the format of %s: %s", name, pe.msg);
		protocol_error(t, m);
		vn_error_clear(&pe);
		return;
	}
	if (strcmp(t->fmt[k].name, strchr(t->names[k], ':') + 1) != 0) {
		_cleanup_free_ char *m = vn_xasprintf("the format of %s names event %s", name, t->fmt[k].name);
		protocol_error(t, m);
		return;
	}
	t->have_format[k] = true;
	t->fmt_text[k] = vn_xstrdup(text);
	find_cross(t, (unsigned)k);
}

/* Microseconds, as the trace clock prints them, not a double's noise. */
static json_object *seconds(double s)
{
	return vn_json_new_double_fixed(s, 6);
}

static void write_header(struct vn_run_trace *t)
{
	json_object *h = json_object_new_object(), *evs = json_object_new_array();

	json_object_object_add(h, "type", json_object_new_string("header"));
	json_object_object_add(h, "version", json_object_new_int(1));
	json_object_object_add(h, "clock", json_object_new_string(t->clock));
	json_object_object_add(h, "t0", seconds(t->t0));
	for (unsigned k = 0; k < t->n; k++) {
		json_object *e = json_object_new_object(), *fs = json_object_new_array();
		json_object_object_add(e, "event", json_object_new_string(t->names[k]));
		json_object_object_add(e, "id", json_object_new_int64(t->fmt[k].id));
		for (unsigned i = 0; i < t->fmt[k].nfields; i++) {
			const struct vn_trace_field *fl = &t->fmt[k].fields[i];
			json_object *f = json_object_new_object();
			json_object_object_add(f, "name", json_object_new_string(fl->name));
			json_object_object_add(f, "type", json_object_new_string(fl->type));
			json_object_object_add(f, "size", json_object_new_int64(fl->size));
			json_object_object_add(f, "signed", json_object_new_boolean(fl->is_signed));
			json_object_object_add(f, "numeric", json_object_new_boolean(fl->numeric));
			json_object_object_add(f, "printed", json_object_new_string(fl->printed));
			json_object_array_add(fs, f);
		}
		json_object_object_add(e, "fields", fs);
		json_object_object_add(e, "format", json_object_new_string(t->fmt_text[k]));
		json_object_array_add(evs, e);
	}
	json_object_object_add(h, "events", evs);
	for (unsigned k = 0; k < t->n && k < VN_HTML_TRACE_NAMES_MAX; k++)
		snprintf(t->page.names[k], sizeof(t->page.names[k]), "%s", t->names[k]);
	t->page.nnames = t->n < VN_HTML_TRACE_NAMES_MAX ? t->n : VN_HTML_TRACE_NAMES_MAX;
	fprintf(t->out, "%s\n", json_object_to_json_string_ext(h, JSON_C_TO_STRING_PLAIN));
	fflush(t->out);
	json_object_put(h);
}

static void on_ready(struct vn_run_trace *t, json_object *o)
{
	const char *clock = vn_json_str(o, "clock");

	for (unsigned k = 0; k < t->n; k++)
		if (!t->have_format[k]) {
			protocol_error(t, "ready before every event's format");
			return;
		}
	if (t->ready || !clock || strlen(clock) >= sizeof(t->clock) || !vn_json_has_finite(o, "t0", &t->t0)) {
		protocol_error(t, "a ready line out of order or of the wrong shape");
		return;
	}
	snprintf(t->clock, sizeof(t->clock), "%s", clock);
	vmstat_keep(o, t->v0, &t->nv0);
	t->ready = true;
	write_header(t);
}

static int node_of_cpu(const struct vn_topology *topo, int64_t cpu)
{
	for (unsigned n = 0; cpu >= 0 && cpu < VN_CPUSET_MAX && n < topo->nnodes; n++)
		if (vn_cpuset_has(&topo->nodes[n].cpus, (unsigned)cpu))
			return (int)n;
	return -1;
}

static void on_line(struct run *r, struct vn_run_trace *t, const char *line, size_t len)
{
	struct vn_trace_event ev;
	struct vn_error pe = {0};

	if (!t->ready || t->ended) {
		protocol_error(t, "a trace line outside the capture");
		return;
	}
	if (vn_trace_line_parse(line, len, t->fmt, t->n, &ev, &pe) < 0) {
		t->malformed++;
		vn_error_clear(&pe);
		return;
	}
	unsigned k = ev.format;
	const struct vn_trace_format *f = &t->fmt[k];
	t->events++;
	t->count[k]++;
	for (unsigned i = 0; i < f->nfields; i++) {
		int64_t x;
		if (strncmp(f->fields[i].printed, "nr_", 3) == 0 && vn_json_has_int64(ev.fields, f->fields[i].name, &x))
			t->sum[k][i] += (double)x;
	}
	int64_t a = -1, b = -1;
	bool moved = false;
	if (t->cross_kind[k] && vn_json_has_int64(ev.fields, t->cross_a[k], &a) &&
	    vn_json_has_int64(ev.fields, t->cross_b[k], &b)) {
		if (t->cross_kind[k] == 1) {
			a = node_of_cpu(r->t, a);
			b = node_of_cpu(r->t, b);
		}
		/* A node id the guest made up is no node. */
		a = a >= 0 && a < (int64_t)r->t->nnodes ? a : -1;
		b = b >= 0 && b < (int64_t)r->t->nnodes ? b : -1;
		moved = true;
		if (a >= 0 && b >= 0 && a != b)
			t->cross[k]++;
	}
	if (t->out_len < TRACE_FILE_MAX) {
		json_object *o = json_object_new_object();
		json_object_object_add(o, "t", seconds(ev.ts - t->t0));
		json_object_object_add(o, "ts", seconds(ev.ts));
		json_object_object_add(o, "cpu", json_object_new_int64(ev.cpu));
		json_object_object_add(o, "node", json_object_new_int(node_of_cpu(r->t, ev.cpu)));
		if (moved) {
			json_object_object_add(o, "from_node", json_object_new_int((int)a));
			json_object_object_add(o, "to_node", json_object_new_int((int)b));
		}
		json_object_object_add(o, "event", json_object_new_string(t->names[k]));
		json_object_object_add(o, "comm", json_object_new_string(ev.comm));
		json_object_object_add(o, "pid", json_object_new_int(ev.pid));
		json_object_object_add(o, "fields", ev.fields);
		ev.fields = NULL;
		const char *s = json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN);
		size_t n = strlen(s);
		fwrite(s, 1, n, t->out);
		fputc('\n', t->out);
		t->out_len += n + 1;
		t->written++;
		/* The page's copy of the event, its time as the line prints it. */
		t->page.moves[k] |= moved;
		vn_html_trace_add(&t->page, round((ev.ts - t->t0) * 1e6) / 1e6, k, a >= 0 && b >= 0 && a != b);
		json_object_put(o);
	}
	json_object_put(ev.fields);
}

static void on_end(struct vn_run_trace *t, json_object *o)
{
	json_object *cpus = vn_json_member(o, "cpus", json_type_array);

	if (!t->ready || t->ended || !vn_json_has_finite(o, "t1", &t->t1) || !count_member(o, "cut", &t->guest_cut)) {
		protocol_error(t, "an end line out of order or of the wrong shape");
		return;
	}
	t->ended = true;
	vmstat_keep(o, t->v1, &t->nv1);
	if (cpus && json_object_array_length(cpus) <= VN_CPUSET_MAX) {
		t->stats = true;
		for (size_t i = 0; i < json_object_array_length(cpus); i++) {
			json_object *c = json_object_array_get_idx(cpus, i);
			uint64_t x;
			if (!json_object_is_type(c, json_type_object))
				continue;
			if (count_member(c, "overrun", &x))
				t->overrun += x;
			if (count_member(c, "dropped", &x))
				t->dropped += x;
		}
	}
}

static void message(struct run *r, struct vn_run_trace *t, const char *line, size_t n)
{
	json_tokener *tok = json_tokener_new_ex(8);

	if (!tok)
		vn_oom();
	json_tokener_set_flags(tok, JSON_TOKENER_STRICT | JSON_TOKENER_VALIDATE_UTF8);
	json_object *o = memchr(line, '\0', n) ? NULL : json_tokener_parse_ex(tok, line, (int)n);
	bool whole = o && json_tokener_get_error(tok) == json_tokener_success && json_tokener_get_parse_end(tok) == n &&
		     json_object_is_type(o, json_type_object);
	json_tokener_free(tok);
	const char *l = whole ? vn_json_str(o, "l") : NULL;
	json_object *v;
	if (!whole)
		t->bad_msgs++;
	else if (l)
		on_line(r, t, l, strlen(l));
	else if (json_object_object_get_ex(o, "format", &v))
		on_format(t, o);
	else if (json_object_object_get_ex(o, "ready", &v))
		on_ready(t, o);
	else if (json_object_object_get_ex(o, "end", &v))
		on_end(t, o);
	else if (vn_json_str(o, "missing") && index_of(t, vn_json_str(o, "missing")) >= 0 && !t->missing) {
		t->missing = vn_xstrdup(vn_json_str(o, "missing"));
		t->no_tracefs =
			vn_json_str(o, "why") && strcmp(vn_json_str(o, "why"), "the kernel has no tracefs") == 0;
	} else
		t->bad_msgs++;
	json_object_put(o);
}

/* The tracer's stdout: whole messages, each bounded. */
static void trace_data(struct run *r, struct exec *e, void *data_, const char *data, size_t len)
{
	struct vn_run_trace *t = data_;

	(void)e;

	while (len) {
		const char *nl = memchr(data, '\n', len);
		size_t n = nl ? (size_t)(nl - data) : len;

		if (!t->skip_line && t->line.len + n <= TRACE_MSG_MAX)
			vn_strbuf_append(&t->line, data, n);
		else if (!t->skip_line)
			t->skip_line = true, t->bad_msgs++;
		data += n + (nl != NULL);
		len -= n + (nl != NULL);
		if (!nl)
			break;
		if (!t->skip_line && t->line.len)
			message(r, t, t->line.s, t->line.len);
		t->skip_line = false;
		t->line.len = 0;
	}
	/* A full results disk ends the run, as for the samples. */
	if (t->out && (fflush(t->out) != 0 || ferror(t->out)) && !r->stop) {
		r->stop = true;
		r->stop_reason = vn_xasprintf("cannot write %s/trace.jsonl: %s", r->dir, strerror(errno));
	}
}

static bool trace_wanted(const struct run *r)
{
	return r->s->tracepoints && r->s->tracepoints[0];
}

/* Starts vnuma-trace and waits until it captures; a tracepoint the kernel lacks is an input error. */
static int trace_window(struct run *r, void *state, struct vn_error *err)
{
	const struct vn_scenario *s = r->s;
	struct vn_run_trace *t = state;
	_cleanup_free_ char *tracer = vn_xasprintf("%s/vnuma-trace", vn_run_libdir(r));
	const char *argv[3 + 2 * VN_SCN_TRACEPOINTS_MAX + 1] = {tracer};
	unsigned a = 1;
	int rc;

	for (char **p = s->tracepoints; *p && t->n < VN_SCN_TRACEPOINTS_MAX; p++) {
		t->names[t->n++] = *p;
		argv[a++] = "--event";
		argv[a++] = *p;
	}
	if ((rc = vn_run_exec_start(r, EX_TRACER, argv, &t->e, err)) < 0)
		return rc;
	t->e->on_out = trace_data;
	t->e->on_out_data = t;
	if ((rc = vn_run_open_out(r->dir, "trace.jsonl", &t->out, err)) < 0)
		return rc;
	t->traced = true;
	for (double until = vn_now_s() + TRACE_READY_S; !t->ready && !t->error && !t->e->done && !r->stop;) {
		if ((rc = vn_run_pump(r, 100, err)) < 0)
			return rc;
		if (vn_now_s() > until)
			return vn_infra_error(err, -ETIMEDOUT, "%s: vnuma-trace did not enable the tracepoints in %d s",
					      vn_agent_guest(r->a), TRACE_READY_S);
	}
	if (r->stop && !t->ready)
		return vn_infra_error(err, vn_was_interrupted() ? -EINTR : -ETIMEDOUT, "%s",
				      r->stop_reason ? r->stop_reason : "stopped");
	if (t->missing) {
		int i = index_of(t, t->missing);
		return vn_input_error(err, "%s: $.tracepoints[%d]: \"%s\" is not a tracepoint of the booted kernel%s",
				      s->path, i, t->missing,
				      t->no_tracefs ? " (it has no tracefs: built without CONFIG_TRACING?)" : "");
	}
	if (t->error)
		return vn_infra_error(err, -EBADMSG, "%s: vnuma-trace: %s", vn_agent_guest(r->a), t->error);
	if (!t->ready) {
		if (t->e->ebuf.len && t->e->ebuf.s[t->e->ebuf.len - 1] == '\n')
			t->e->ebuf.s[--t->e->ebuf.len] = '\0';
		return vn_infra_error(err, -EIO, "%s: vnuma-trace ended before the capture began (exit %d): %s",
				      vn_agent_guest(r->a), t->e->status,
				      t->e->ebuf.len ? t->e->ebuf.s
				      : t->e->error  ? t->e->error
						     : "no message");
	}
	return 0;
}

static void write_end(struct vn_run_trace *t)
{
	json_object *o = json_object_new_object(), *counts = json_object_new_object();

	json_object_object_add(o, "type", json_object_new_string("end"));
	/* Complete: the guest said it ended, nothing broke the protocol, nothing was dropped on the way. */
	bool complete = t->ended && !t->error;
	json_object_object_add(o, "complete", json_object_new_boolean(complete));
	t->page.ended = true;
	t->page.complete = complete;
	if (t->error)
		json_object_object_add(o, "error", json_object_new_string(t->error));
	for (unsigned k = 0; k < t->n; k++)
		json_object_object_add(counts, t->names[k], json_object_new_int64((int64_t)t->count[k]));
	json_object_object_add(o, "counts", counts);
	json_object_object_add(o, "events", json_object_new_int64((int64_t)t->events));
	json_object_object_add(o, "written", json_object_new_int64((int64_t)t->written));
	json_object_object_add(o, "not_written", json_object_new_int64((int64_t)(t->events - t->written)));
	json_object_object_add(o, "malformed", json_object_new_int64((int64_t)t->malformed));
	json_object_object_add(o, "bad_messages", json_object_new_int64((int64_t)t->bad_msgs));
	json_object_object_add(o, "guest_cut", json_object_new_int64((int64_t)t->guest_cut));
	if (t->stats) {
		json_object_object_add(o, "ring_overrun", json_object_new_int64((int64_t)t->overrun));
		json_object_object_add(o, "ring_dropped", json_object_new_int64((int64_t)t->dropped));
	}
	if (t->ended) {
		json_object *w = json_object_new_object(), *d = json_object_new_object();
		json_object_object_add(w, "t0", seconds(t->t0));
		json_object_object_add(w, "t1", seconds(t->t1));
		for (unsigned i = 0; i < t->nv1; i++)
			for (unsigned j = 0; j < t->nv0; j++)
				if (strcmp(t->v0[j].name, t->v1[i].name) == 0)
					json_object_object_add(
						d, t->v1[i].name,
						json_object_new_int64((int64_t)(t->v1[i].v - t->v0[j].v)));
		json_object_object_add(w, "vmstat_delta", d);
		json_object_object_add(o, "window", w);
	}
	fprintf(t->out, "%s\n", json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN));
	json_object_put(o);
}

/* Ends the capture (the guest drains the ring) and writes trace.jsonl's end record. */
static int trace_end(struct run *r, void *state, struct vn_error *err)
{
	struct vn_run_trace *t = state;
	int rc = 0;

	if (!t->e)
		return 0;
	if (!t->e->done)
		vn_run_signal(r, t->e, SIGTERM);
	/* Draining what the ring still holds over a TCG guest's channel takes a while. */
	for (double until = vn_now_s() + TRACE_END_S; !t->e->done && vn_now_s() < until;)
		if ((rc = vn_run_pump(r, 100, err)) < 0)
			break;
	if (!t->e->done)
		vn_run_signal(r, t->e, SIGKILL);
	if (t->out) {
		if (t->ready)
			write_end(t);
		if (fclose(t->out) != 0 && rc == 0)
			rc = vn_infra_error(err, -EIO, "cannot write %s/trace.jsonl: %s", r->dir, strerror(errno));
		t->out = NULL;
	}
	/* Stopped by a timeout or Ctrl-C: that is the run's error, said later, and the end record says incomplete. */
	if (rc == 0 && (!t->ended || t->error) && !r->stop)
		rc = vn_infra_error(err, -EIO, "%s: vnuma-trace did not finish its capture in order (exit %d)%s%s",
				    vn_agent_guest(r->a), t->e->status, t->error ? ": " : "", t->error ? t->error : "");
	return rc;
}

static void trace_metrics(const struct run *r, const void *state, struct vn_result_run *rep)
{
	const struct vn_run_trace *t = state;
	char name[256];

	(void)r;
	if (!t->ready)
		return;
	for (unsigned k = 0; k < t->n; k++) {
		snprintf(name, sizeof(name), "trace.%s.count", t->names[k]);
		vn_result_metric(rep, name, (double)t->count[k]);
		if (t->cross_kind[k]) {
			snprintf(name, sizeof(name), "trace.%s.cross_node", t->names[k]);
			vn_result_metric(rep, name, (double)t->cross[k]);
		}
		for (unsigned i = 0; i < t->fmt[k].nfields; i++)
			if (strncmp(t->fmt[k].fields[i].printed, "nr_", 3) == 0 && t->fmt[k].fields[i].numeric) {
				snprintf(name, sizeof(name), "trace.%s.%s", t->names[k], t->fmt[k].fields[i].printed);
				vn_result_metric(rep, name, t->sum[k][i]);
			}
	}
	vn_result_metric(rep, "trace.lost", (double)(t->overrun + t->dropped + t->guest_cut + t->malformed));
	vn_result_metric(rep, "trace.not_written", (double)(t->events - t->written));
	for (unsigned i = 0; t->ended && i < t->nv1; i++)
		for (unsigned j = 0; j < t->nv0; j++)
			if (strcmp(t->v0[j].name, t->v1[i].name) == 0) {
				snprintf(name, sizeof(name), "trace.window.%s", t->v1[i].name);
				vn_result_metric(rep, name, t->v1[i].v - t->v0[j].v);
			}
}

static void trace_page(const struct run *r, const void *state, struct vn_html_run_in *in)
{
	const struct vn_run_trace *t = state;

	(void)r;
	in->trace = t->traced ? &t->page : NULL;
}

/* What is left; a capture cut short gets an end record saying it is incomplete. */
static void trace_free(struct run *r, void *state)
{
	struct vn_run_trace *t = state;

	(void)r;
	if (t->out) {
		if (t->ready)
			write_end(t);
		fclose(t->out);
	}
	vn_strbuf_free(&t->line);
	free(t->missing);
	free(t->error);
	for (unsigned k = 0; k < t->n; k++)
		free(t->fmt_text[k]);
	vn_html_trace_clear(&t->page);
}

/* The scenario's "tracepoints" into RESULTS/trace.jsonl and trace.* metrics (docs/tracing.md). */
const struct vn_probe_ops vn_probe_trace = {
	.name = "trace",
	.size = sizeof(struct vn_run_trace),
	.wanted = trace_wanted,
	.window = trace_window,
	.end = trace_end,
	.metrics = trace_metrics,
	.page = trace_page,
	.free = trace_free,
};
