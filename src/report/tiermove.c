/* tiermove's result line, typed (tiermove.h). */
#include "report/tiermove.h"

#include <dirent.h>
#include <json-c/json.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "util/alloc.h"
#include "util/cleanup.h"
#include "util/file.h"
#include "util/json.h"

const char *const vn_tm_counters[VN_TM_NCOUNTERS] = {"pgdemote_kswapd", "pgdemote_direct", "pgpromote_success",
						     "pgpromote_candidate", "numa_pages_migrated"};

/* A step's output a page reads at most: tiermove's line with 64 phases of samples is well below it. */
#define TM_FILE_MAX (8u << 20)

/* "memory_tier<id>" -> id, or -1. */
static int tier_id(const char *key)
{
	char *end;
	if (strncmp(key, "memory_tier", 11) != 0 || key[11] < '0' || key[11] > '9')
		return -1;
	long v = strtol(key + 11, &end, 10);
	return *end || v < 0 || v > 1023 ? -1 : (int)v;
}

static void read_tiers(json_object *o, struct vn_tiermove *tm)
{
	json_object_object_foreach(o, key, v)
	{
		int id = tier_id(key);
		if (id < 0 || !json_object_is_type(v, json_type_array) || tm->ntiers == VN_TM_TIERS_MAX)
			continue;
		struct vn_tm_tier *t = &tm->tiers[tm->ntiers++];
		t->id = id;
		for (size_t i = 0; i < json_object_array_length(v); i++) {
			json_object *n = json_object_array_get_idx(v, i);
			int64_t node = json_object_is_type(n, json_type_int) ? json_object_get_int64(n) : -1;
			if (node >= 0 && node < VN_MAX_NODES)
				t->nodes[node] = true;
		}
	}
}

/* A sample's pages per tier (an object of memory_tier<id>: count) in tiers[] order. */
static void per_tier(const struct vn_tiermove *tm, json_object *o, double *out)
{
	for (unsigned i = 0; i < VN_TM_TIERS_MAX; i++)
		out[i] = NAN;
	if (!o)
		return;
	json_object_object_foreach(o, key, v)
	{
		int id = tier_id(key);
		for (unsigned i = 0; id >= 0 && i < tm->ntiers; i++)
			if (tm->tiers[i].id == id && json_object_is_type(v, json_type_int) &&
			    json_object_get_int64(v) >= 0)
				out[i] = (double)json_object_get_int64(v);
	}
}

static void read_phase(json_object *ph, unsigned k, struct vn_tiermove *tm, size_t *cap)
{
	struct vn_tm_phase *p = &tm->phases[tm->nphases++];
	json_object *vm = vn_json_member(ph, "vmstat", json_type_object), *smp;
	int64_t idx;

	p->phase = vn_json_has_int64(ph, "phase", &idx) && idx >= 0 && idx < VN_TM_PHASES_MAX ? (unsigned)idx : k;
	if (!vn_json_has_finite(ph, "touches_per_s", &p->touches_per_s))
		p->touches_per_s = NAN;
	for (unsigned c = 0; c < VN_TM_NCOUNTERS; c++) {
		int64_t v;
		p->vmstat[c] = vm && vn_json_has_int64(vm, vn_tm_counters[c], &v) ? (double)v : NAN;
	}
	if (!(smp = vn_json_member(ph, "samples", json_type_array)))
		return;
	for (size_t i = 0; i < json_object_array_length(smp) && tm->nsamples < VN_TM_SAMPLES_MAX; i++) {
		json_object *s = json_object_array_get_idx(smp, i);
		double t;
		if (!json_object_is_type(s, json_type_object) || !vn_json_has_finite(s, "t", &t))
			continue;
		if (tm->nsamples == *cap) {
			*cap = *cap ? 2 * *cap : 64;
			tm->samples = vn_xreallocarray(tm->samples, *cap, sizeof(*tm->samples));
		}
		struct vn_tm_sample *o = &tm->samples[tm->nsamples++];
		o->t = t;
		o->phase = p->phase;
		per_tier(tm, vn_json_member(s, "hot_pages_per_tier", json_type_object), o->hot);
		per_tier(tm, vn_json_member(s, "pages_per_tier", json_type_object), o->all);
	}
}

/* The output's last line, when it is a JSON object saying it is tiermove's result (a workload's result line is its last). */
static json_object *result_line(const char *text, size_t len)
{
	size_t end = len, start;

	while (end > 0 && (text[end - 1] == '\n' || text[end - 1] == '\r'))
		end--;
	for (start = end; start > 0 && text[start - 1] != '\n'; start--)
		;
	if (end == start || text[start] != '{')
		return NULL;
	_cleanup_free_ char *line = vn_xstrndup(text + start, end - start);
	json_object *o = json_tokener_parse(line);
	const char *w = o && json_object_is_type(o, json_type_object) ? vn_json_str(o, "workload") : NULL;
	if (w && strcmp(w, "tiermove") == 0)
		return o;
	json_object_put(o);
	return NULL;
}

int vn_tiermove_parse(const char *text, size_t len, const char *name, struct vn_tiermove *out, struct vn_error *err)
{
	_cleanup_json_ json_object *o = NULL;
	json_object *tiers, *phases;
	size_t cap = 0;

	memset(out, 0, sizeof(*out));
	snprintf(out->name, sizeof(out->name), "%s", name);
	if (!(o = result_line(text, len)))
		return vn_input_error(err, "%s: no tiermove result line", name);
	if ((tiers = vn_json_member(o, "tiers", json_type_object)))
		read_tiers(tiers, out);
	/* Fastest first, as the kernel lists them, whatever order the guest's sysfs gave. */
	for (unsigned i = 1; i < out->ntiers; i++)
		for (unsigned j = i; j > 0 && out->tiers[j - 1].id > out->tiers[j].id; j--) {
			struct vn_tm_tier t = out->tiers[j];
			out->tiers[j] = out->tiers[j - 1];
			out->tiers[j - 1] = t;
		}
	if (!(phases = vn_json_member(o, "phases", json_type_array)))
		return vn_input_error(err, "%s: tiermove's result has no phases", name);
	for (size_t k = 0; k < json_object_array_length(phases) && out->nphases < VN_TM_PHASES_MAX; k++) {
		json_object *ph = json_object_array_get_idx(phases, k);
		if (json_object_is_type(ph, json_type_object))
			read_phase(ph, (unsigned)k, out, &cap);
	}
	return 0;
}

void vn_tiermove_clear(struct vn_tiermove *tm)
{
	free(tm->samples);
	memset(tm, 0, sizeof(*tm));
}

static int by_name(const struct dirent **a, const struct dirent **b)
{
	return strcmp((*a)->d_name, (*b)->d_name);
}

/* A process's output as the runner names it: STEP.r0.pN.out. */
static int is_out(const struct dirent *d)
{
	size_t n = strlen(d->d_name);
	return n > 4 && n < 96 && strcmp(d->d_name + n - 4, ".out") == 0 && strstr(d->d_name, ".r0.p");
}

unsigned vn_tiermove_load_dir(const char *dir, struct vn_tiermove *out, unsigned max)
{
	_cleanup_free_ char *steps = vn_xasprintf("%s/steps", dir);
	struct dirent **names = NULL;
	int n = scandir(steps, &names, is_out, by_name);
	unsigned got = 0;

	for (int i = 0; i < n; i++) {
		_cleanup_free_ char *path = vn_xasprintf("%s/%s", steps, names[i]->d_name), *text = NULL;
		struct vn_error e = {0};
		size_t len;
		if (got < max && vn_file_read(path, TM_FILE_MAX, &text, &len, &e) == 0 &&
		    vn_tiermove_parse(text, len, names[i]->d_name, &out[got], &e) == 0)
			got++;
		else if (got < max)
			vn_tiermove_clear(&out[got]);
		vn_error_clear(&e);
		free(names[i]);
	}
	free(names);
	return got;
}
