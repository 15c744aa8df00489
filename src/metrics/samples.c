#include "metrics/samples.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "util/cleanup.h"
#include "util/alloc.h"
#include "util/json.h"

/* Where a line came from, so every complaint names it as FILE:LINE. */
struct where {
	const char *name;
	unsigned line;
	struct vn_error *err;
};

#define bad(w, fmt, ...) vn_input_error((w)->err, "%s:%u: " fmt, (w)->name, (w)->line, ##__VA_ARGS__)

static bool is_num(struct json_object *o)
{
	return json_object_is_type(o, json_type_int) || json_object_is_type(o, json_type_double);
}

static int get_num(const struct where *w, struct json_object *o, const char *ctx, const char *key, bool required,
		   double *out)
{
	/* Present, null included: a null is no number, not a missing one. */
	if (!json_object_object_get_ex(o, key, NULL)) {
		if (required)
			return bad(w, "%s: missing \"%s\"", ctx, key);
		return 0;
	}
	if (!vn_json_has_number(o, key, out))
		return bad(w, "%s: \"%s\" is not a number", ctx, key);
	return 0;
}

static int get_typed(const struct where *w, struct json_object *o, const char *ctx, const char *key,
		     enum json_type type, struct json_object **out)
{
	if (!json_object_object_get_ex(o, key, NULL))
		return bad(w, "%s: missing \"%s\"", ctx, key);
	if (!(*out = vn_json_member(o, key, type)))
		return bad(w, "%s: \"%s\" is not %s", ctx, key, type == json_type_object ? "an object" : "an array");
	return 0;
}

/* A node id used as a JSON key ("0") or value; refused beyond the fixed arrays. */
static int node_id(const struct where *w, const char *ctx, const char *text, long *out)
{
	char *end;
	long n = strtol(text, &end, 10);

	if (end == text || *end || n < 0)
		return bad(w, "%s: \"%s\" is not a node id", ctx, text);
	if (n >= VN_MAX_NODES)
		return bad(w, "%s: node %ld is beyond the %d nodes supported", ctx, n, VN_MAX_NODES);
	*out = n;
	return 0;
}

static void see_node(struct vn_sample *s, long n)
{
	if ((unsigned)n + 1 > s->nnodes)
		s->nnodes = (unsigned)n + 1;
}

static void sample_clear(struct vn_sample *s)
{
	for (unsigned i = 0; i < s->nprocs; i++)
		free(s->procs[i].threads);
	free(s->procs);
	json_object_put(s->json);
	memset(s, 0, sizeof(*s));
}

static int parse_proc(const struct where *w, struct json_object *o, struct vn_sample *s, struct vn_sample_proc *p)
{
	struct json_object *v, *mem, *threads;
	const char *comm;
	double pid;
	int r;

	if (!json_object_is_type(o, json_type_object))
		return bad(w, "procs: entry is not an object");
	if ((r = get_num(w, o, "procs", "pid", true, &pid)) < 0)
		return r;
	p->pid = (int)pid;
	if ((comm = vn_json_str(o, "comm")))
		snprintf(p->comm, sizeof(p->comm), "%s", comm);
	if ((r = get_typed(w, o, "procs", "threads", json_type_array, &threads)) < 0)
		return r;
	/* Optional: vnuma-sample --mem-every leaves it out of the lines in between. */
	if (json_object_object_get_ex(o, "mem_kb_per_node", &mem)) {
		if (!json_object_is_type(mem, json_type_object))
			return bad(w, "pid %d: \"mem_kb_per_node\" is not an object", p->pid);
		p->have_mem = true;
	}
	if (p->have_mem) {
		json_object_object_foreach(mem, key, val)
		{
			long n;
			if ((r = node_id(w, "mem_kb_per_node", key, &n)) < 0)
				return r;
			if (!is_num(val))
				return bad(w, "pid %d: mem_kb_per_node \"%s\" is not a number", p->pid, key);
			p->mem_kb[n] = json_object_get_double(val);
			p->mem_kb_total += p->mem_kb[n];
			see_node(s, n);
		}
	}
	size_t nt = json_object_array_length(threads);
	p->threads = vn_xcalloc(nt ? nt : 1, sizeof(*p->threads));
	for (size_t i = 0; i < nt; i++) {
		struct json_object *t = json_object_array_get_idx(threads, i);
		struct vn_sample_thread *th = &p->threads[p->nthreads];
		double tid, cpu = -1, node = -1;
		if (!json_object_is_type(t, json_type_object))
			return bad(w, "pid %d: thread entry is not an object", p->pid);
		if ((r = get_num(w, t, "threads", "tid", true, &tid)) < 0 ||
		    (r = get_num(w, t, "threads", "cpu", true, &cpu)) < 0 ||
		    (r = get_num(w, t, "threads", "node", true, &node)) < 0)
			return r;
		if (node >= VN_MAX_NODES)
			return bad(w, "pid %d: thread %d on node %.0f, beyond the %d nodes supported", p->pid, (int)tid,
				   node, VN_MAX_NODES);
		th->tid = (int)tid;
		th->cpu = (int)cpu;
		th->node = node >= 0 ? (int)node : -1;
		th->state = '?';
		if ((v = vn_json_member(t, "state", json_type_string)) && json_object_get_string_len(v) > 0)
			th->state = json_object_get_string(v)[0];
		if (th->node >= 0) {
			p->threads_on_node[th->node]++;
			see_node(s, th->node);
		}
		p->nthreads++;
	}
	return 0;
}

/*
 * The host's clock as the runner wrote it, at the head of the line, before
 * the sampler's part: the guest writes the rest, and a "host_t" of its own
 * there is the one a parser that keeps a duplicate key's last value would
 * take (as html-locality.c reads "locality"). NAN without that head.
 */
static double runner_host_t(const char *line, size_t len)
{
	static const char head[] = "{\"host_t\":";
	size_t at = sizeof(head) - 1, k = 0;
	char num[32];

	if (len < at || memcmp(line, head, at) != 0)
		return NAN;
	while (at + k < len && k < sizeof(num) - 1 && line[at + k] && strchr("0123456789.-+eE", line[at + k])) {
		num[k] = line[at + k];
		k++;
	}
	if (!k || at + k >= len || line[at + k] != ',')
		return NAN;
	num[k] = '\0';
	char *end;
	double v = strtod(num, &end);
	return *end || !isfinite(v) ? NAN : v;
}

static int parse_sample(const struct where *w, struct json_object *line, struct vn_sample *s)
{
	struct json_object *nodes, *procs, *running, *cost;
	double seq = 0, host_t = 0;
	int r;

	if (!json_object_is_type(line, json_type_object))
		return bad(w, "a sample is a JSON object");
	/* Checked for its type; its value is taken from the runner's head only (runner_host_t). */
	if ((r = get_num(w, line, "sample", "t", true, &s->t)) < 0 ||
	    (r = get_num(w, line, "sample", "uptime", false, &s->uptime)) < 0 ||
	    (r = get_num(w, line, "sample", "host_t", false, &host_t)) < 0 ||
	    (r = get_num(w, line, "sample", "seq", false, &seq)) < 0 ||
	    (r = get_typed(w, line, "sample", "vmstat", json_type_object, &s->vmstat)) < 0 ||
	    (r = get_typed(w, line, "sample", "nodes", json_type_array, &nodes)) < 0 ||
	    (r = get_typed(w, line, "sample", "procs", json_type_array, &procs)) < 0 ||
	    (r = get_typed(w, line, "sample", "running_per_node", json_type_object, &running)) < 0 ||
	    (r = get_typed(w, line, "sample", "cost", json_type_object, &cost)) < 0 ||
	    (r = get_num(w, cost, "cost", "cpu_s", true, &s->cost_cpu_s)) < 0 ||
	    (r = get_num(w, cost, "cost", "wall_s", false, &s->cost_wall_s)) < 0)
		return r;
	s->seq = (unsigned long)seq;

	for (size_t i = 0; i < json_object_array_length(nodes); i++) {
		struct json_object *n = json_object_array_get_idx(nodes, i), *v;
		double id;
		if (!json_object_is_type(n, json_type_object))
			return bad(w, "nodes: entry is not an object");
		if ((r = get_num(w, n, "nodes", "node", true, &id)) < 0)
			return r;
		if (id < 0 || id >= VN_MAX_NODES)
			return bad(w, "nodes: node %.0f is outside 0..%d", id, VN_MAX_NODES - 1);
		s->node_online[(int)id] = true;
		see_node(s, (long)id);
		if ((v = vn_json_member(n, "numastat", json_type_object)))
			s->numastat[(int)id] = v;
		if ((v = vn_json_member(n, "meminfo", json_type_object)))
			s->meminfo[(int)id] = v;
	}

	json_object_object_foreach(running, key, val)
	{
		long n;
		if ((r = node_id(w, "running_per_node", key, &n)) < 0)
			return r;
		if (!is_num(val))
			return bad(w, "running_per_node \"%s\" is not a number", key);
		s->running_per_node[n] = json_object_get_double(val);
		see_node(s, n);
	}

	size_t np = json_object_array_length(procs);
	s->procs = vn_xcalloc(np ? np : 1, sizeof(*s->procs));
	for (size_t i = 0; i < np; i++) {
		/* Counted before parsing so that sample_clear() frees a half-filled entry. */
		s->nprocs++;
		if ((r = parse_proc(w, json_object_array_get_idx(procs, i), s, &s->procs[i])) < 0)
			return r;
	}
	return 0;
}

static bool blank(const char *p, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (p[i] != ' ' && p[i] != '\t' && p[i] != '\r')
			return false;
	return true;
}

int vn_samples_parse(const char *jsonl, const char *name, struct vn_samples *out, struct vn_error *err)
{
	_cleanup_(json_tokener_freep) struct json_tokener *tok = json_tokener_new();
	struct vn_samples res = {0};
	unsigned cap = 0;
	struct where w = {.name = name ? name : "samples", .err = err};
	int r = 0;

	memset(out, 0, sizeof(*out));
	if (!tok)
		vn_oom();
	for (const char *line = jsonl; line && *line;) {
		const char *eol = strchr(line, '\n');
		size_t len = eol ? (size_t)(eol - line) : strlen(line);
		const char *this = line;
		line = eol ? eol + 1 : NULL;
		w.line++;
		if (blank(this, len))
			continue;
		if (len > INT32_MAX) {
			r = bad(&w, "line too long");
			goto fail;
		}

		json_tokener_reset(tok);
		struct json_object *o = json_tokener_parse_ex(tok, this, (int)len);
		enum json_tokener_error jerr = json_tokener_get_error(tok);
		size_t used = json_tokener_get_parse_end(tok);
		if (!o || jerr != json_tokener_success || !blank(this + used, len - used)) {
			json_object_put(o);
			if (!eol) {
				res.truncated = true;
				break;
			}
			r = bad(&w, "not one JSON value per line: %s",
				jerr != json_tokener_success && jerr != json_tokener_continue
					? json_tokener_error_desc(jerr)
				: o ? "text after the value"
				    : "unexpected end of line");
			goto fail;
		}

		if (res.n == cap) {
			unsigned ncap = cap ? 2 * cap : 64;
			res.v = vn_xreallocarray(res.v, ncap, sizeof(*res.v));
			cap = ncap;
		}
		struct vn_sample *s = &res.v[res.n++];
		memset(s, 0, sizeof(*s));
		s->json = o;
		if ((r = parse_sample(&w, o, s)) < 0)
			goto fail;
		s->host_t = runner_host_t(this, len);
	}
	*out = res;
	return 0;

fail:
	vn_samples_free(&res);
	return r;
}

void vn_samples_free(struct vn_samples *s)
{
	if (!s)
		return;
	for (unsigned i = 0; i < s->n; i++)
		sample_clear(&s->v[i]);
	free(s->v);
	memset(s, 0, sizeof(*s));
}

double vn_samples_lead_drop(const struct vn_samples *s)
{
	const struct vn_sample *first = NULL;
	double low = 0;

	for (unsigned i = 0; i < s->n; i++) {
		const struct vn_sample *x = &s->v[i];
		if (!isfinite(x->host_t))
			continue;
		if (!first)
			first = x;
		double d = (x->t - first->t) - (x->host_t - first->host_t);
		if (d < low)
			low = d;
	}
	return low;
}

const struct vn_sample_proc *vn_sample_proc_find(const struct vn_sample *s, int pid)
{
	for (unsigned i = 0; i < s->nprocs; i++)
		if (s->procs[i].pid == pid)
			return &s->procs[i];
	return NULL;
}

static bool selected(const struct vn_sample_proc *p, const int *pids, unsigned npids)
{
	if (!npids)
		return true;
	for (unsigned i = 0; i < npids; i++)
		if (pids[i] == p->pid)
			return true;
	return false;
}

double vn_samples_fraction_on_node(const struct vn_sample *s, const int *pids, unsigned npids, unsigned node)
{
	double on = 0, total = 0;

	for (unsigned i = 0; i < s->nprocs; i++) {
		const struct vn_sample_proc *p = &s->procs[i];
		if (!selected(p, pids, npids))
			continue;
		if (node < VN_MAX_NODES)
			on += p->mem_kb[node];
		total += p->mem_kb_total;
	}
	return total > 0 ? on / total : NAN;
}

/* The node most of p's threads were last on; -1 when none maps to a node. */
static int home_node(const struct vn_sample_proc *p)
{
	int best = -1;

	for (int n = 0; n < VN_MAX_NODES; n++)
		if (p->threads_on_node[n] && (best < 0 || p->threads_on_node[n] > p->threads_on_node[best]))
			best = n;
	return best;
}

double vn_samples_local_fraction(const struct vn_sample *s, const int *pids, unsigned npids)
{
	double local = 0, total = 0;

	for (unsigned i = 0; i < s->nprocs; i++) {
		const struct vn_sample_proc *p = &s->procs[i];
		int home = home_node(p);
		if (!selected(p, pids, npids) || home < 0)
			continue;
		local += p->mem_kb[home];
		total += p->mem_kb_total;
	}
	return total > 0 ? local / total : NAN;
}

void vn_samples_avg_running(const struct vn_samples *s, double *avg, unsigned nnodes)
{
	for (unsigned n = 0; n < nnodes; n++) {
		double sum = 0;
		for (unsigned i = 0; n < VN_MAX_NODES && i < s->n; i++)
			sum += s->v[i].running_per_node[n];
		avg[n] = s->n ? sum / s->n : 0;
	}
}

void vn_samples_cost(const struct vn_samples *s, double *mean_cpu_s, double *max_cpu_s)
{
	double sum = 0, max = 0;

	for (unsigned i = 0; i < s->n; i++) {
		sum += s->v[i].cost_cpu_s;
		if (s->v[i].cost_cpu_s > max)
			max = s->v[i].cost_cpu_s;
	}
	if (mean_cpu_s)
		*mean_cpu_s = s->n ? sum / s->n : 0;
	if (max_cpu_s)
		*max_cpu_s = max;
}
