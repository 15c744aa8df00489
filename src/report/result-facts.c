/*
 * A run's facts as one table (report/result-facts.h), and the walks over
 * it: result.json's writer and reader, and the text the run page and
 * compare show.
 */
#include "report/result-facts.h"

#include <json-c/json.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/alloc.h"
#include "util/cleanup.h"
#include "util/strbuf.h"

/* Far above any guest's vCPUs, any host's CPUs, any matrix's repeats. */
#define COUNT_MAX  (1 << 20)
#define COUNT_WHAT "an integer from 1 to 1048576"

#define AT(r, f, type) ((type *)(void *)((char *)(r) + (f)->offset))
#define M(member)      offsetof(struct vn_result_run, member)

static json_object *version_get(const struct vn_result_run *r)
{
	(void)r;
	/* The reader refuses a version it does not know, instead of misreading a later layout. */
	return json_object_new_int64(VN_RESULT_VERSION);
}

static int version_set(const struct vn_json_reader *rd, json_object *v, const char *path, struct vn_result_run *r)
{
	unsigned version;
	int rc;

	(void)r;
	if ((rc = vn_json_uint(rd, v, path, 1, INT32_MAX, "an integer >= 1", &version)) < 0)
		return rc;
	if (version > VN_RESULT_VERSION)
		return vn_json_bad(rd, path,
				   "%u: written by a newer vnuma (this one reads result.json up to version %u)",
				   version, VN_RESULT_VERSION);
	return 0;
}

/* Derived from the verdicts: checked when read, not kept. */
static json_object *passed_get(const struct vn_result_run *r)
{
	return json_object_new_boolean(r->complete && !vn_result_failures(r) && !vn_result_undecided(r));
}

static int passed_set(const struct vn_json_reader *rd, json_object *v, const char *path, struct vn_result_run *r)
{
	(void)r;
	return vn_json_check_type(rd, v, json_type_boolean, path);
}

/* Figures timed by the guest's clock mean something else in virtual time: compare keeps the two apart. */
static json_object *time_get(const struct vn_result_run *r)
{
	return json_object_new_string(vn_result_virtual_time(r) ? "virtual" : "real");
}

/* A result from before "time" was written ran in real time. */
static int time_set(const struct vn_json_reader *rd, json_object *v, const char *path, struct vn_result_run *r)
{
	static const char *const times[] = {"real", "virtual", NULL};
	int rc, time = 0;

	if ((rc = vn_json_one_of(rd, v, path, times, &time)) < 0)
		return rc;
	r->virtual_time = time == 1;
	return 0;
}

/* A fixed shift (VNUMA_ICOUNT_SHIFT) is not retuned, and is not settled: no lead. */
static bool icount_led(const struct vn_result_run *r)
{
	return r->icount && r->icount_lead_s > 0;
}

static json_object *note_get(const struct vn_result_run *r)
{
	(void)r;
	return json_object_new_string("Under TCG, throughput is not real-hardware performance: assertions judge the "
				      "kernel's decisions (placement, migration, fallback), not absolute bandwidth.");
}

static int note_set(const struct vn_json_reader *rd, json_object *v, const char *path, struct vn_result_run *r)
{
	(void)r;
	return vn_json_check_type(rd, v, json_type_string, path);
}

static char *accel_text(const struct vn_result_run *r)
{
	return r->accel && r->accel_reason ? vn_xasprintf("%s (%s)", r->accel, r->accel_reason)
					   : vn_xstrdup_or_null(r->accel);
}

#define STR(k, m, ...)                                                     \
	{                                                                  \
		.key = k, .type = VN_FACT_STR, .offset = M(m), __VA_ARGS__ \
	}
#define UINT(k, m, ...)                                                     \
	{                                                                   \
		.key = k, .type = VN_FACT_UINT, .offset = M(m), __VA_ARGS__ \
	}
#define NUM(k, m, ...)                                                     \
	{                                                                  \
		.key = k, .type = VN_FACT_NUM, .offset = M(m), __VA_ARGS__ \
	}
#define OWN(k, ...)                                        \
	{                                                  \
		.key = k, .type = VN_FACT_OWN, __VA_ARGS__ \
	}
#define COUNT .min = 1, .max = COUNT_MAX, .what = COUNT_WHAT

/* In result.json's order; the page's rows by .page. */
const struct vn_result_fact vn_result_facts[] = {
	OWN("version", .get = version_get, .set = version_set),
	STR("scenario", scenario),
	STR("description", description, .label = "description", .page = 10),
	/* A variant names a directory of its group: a name, as the scenario's schema has it. */
	STR("variant", variant, .flags = VN_FACT_NAME, .dflt = "default", .label = "variant", .page = 20),
	UINT("repeat", repeat, .flags = VN_FACT_ZERO_MIN, COUNT, .label = "repeat", .page = 30),
	STR("host", host),
	STR("started_utc", started_utc, .label = "started", .page = 100),
	NUM("duration_s", duration_s, .range = VN_JSON_NONNEG, .label = "duration", .page = 110, .unit = "s"),
	NUM("boot_s", boot_s, .range = VN_JSON_NONNEG),
	STR("boot", boot),
	STR("snapshot", snapshot),
	{.key = "complete", .type = VN_FACT_BOOL, .offset = M(complete), .flags = VN_FACT_REQUIRED},
	STR("error", error),
	/* What samples.jsonl held when this was written: an incomplete run keeps what it sampled. */
	UINT("samples", samples, .min = 0, .max = UINT32_MAX, .what = "an integer >= 0"),
	OWN("passed", .get = passed_get, .set = passed_set),
	STR("accelerator", accel, .label = "accelerator", .page = 90, .text = accel_text),
	STR("accelerator_reason", accel_reason),
	OWN("time", .get = time_get, .set = time_set),
	STR("icount", icount),
	NUM("icount_lead_s", icount_lead_s, .range = VN_JSON_FINITE, .when = icount_led),
	NUM("icount_lead_min_s", icount_lead_min_s, .range = VN_JSON_FINITE, .when = icount_led),
	/* More vCPUs than host CPUs: in real time they share the host's, and stacking threads costs less (compare). */
	UINT("vcpus", vcpus, .flags = VN_FACT_NONZERO, COUNT),
	UINT("host_cpus", host_cpus, .flags = VN_FACT_NONZERO, COUNT),
	/* The machine's memory, as its CPUs are: a change of kernel compares only on the same sizes. */
	{.key = "node_memory_mib",
	 .type = VN_FACT_NODES,
	 .offset = M(node_memory_mib),
	 .flags = VN_FACT_NONZERO | VN_FACT_COMPARE,
	 .label = "memory per node",
	 .page = 45,
	 .unit = "MiB",
	 .min = 0,
	 .max = UINT32_MAX,
	 .what = "an integer >= 0"},
	/* The model's tiers (topology/tiers.h) of a shape with slow memory; the page draws the guest's beside them. */
	{.key = "memory_tiers",
	 .type = VN_FACT_NODES,
	 .offset = M(memory_tiers),
	 .flags = VN_FACT_NONZERO | VN_FACT_COMPARE,
	 .label = "memory tier per node (model)",
	 .page = 46,
	 .min = 0,
	 .max = 1023,
	 .what = "a memory_tier id in 0..1023 (0: no tier)"},
	STR("arch", arch),
	STR("guest", guest),
	STR("kernel.release", kernel_release, .label = "kernel", .page = 50),
	STR("kernel.version", kernel_version, .label = "kernel version", .page = 60),
	STR("kernel.cmdline", kernel_cmdline, .label = "kernel cmdline", .page = 70),
	STR("kernel.recipe", kernel_recipe, .label = "kernel recipe", .page = 80),
	STR("kernel.config_sha256", kernel_config_sha256),
	{.key = "kernel.patches", .type = VN_FACT_STRV, .offset = M(kernel_patches)},
	STR("topology", topology, .label = "topology", .page = 40),
	STR("fidelity", fidelity),
	STR("sampling_cost", sampling_cost, .label = "sampling cost", .page = 120),
	OWN("note", .get = note_get, .set = note_set),
};
const size_t vn_result_nfacts = VN_ARRAY_SIZE(vn_result_facts);

/* "kernel.release": the object "kernel" of root (made when make), and "release"; else root and the key. */
static json_object *parent(json_object *root, const char *key, bool make, const char **leaf, char *name, size_t len)
{
	const char *dot = strchr(key, '.');
	json_object *o = NULL;

	*leaf = key;
	if (!dot)
		return root;
	snprintf(name, len, "%.*s", (int)(dot - key), key);
	*leaf = dot + 1;
	if (!json_object_object_get_ex(root, name, &o) && make) {
		o = json_object_new_object();
		json_object_object_add(root, name, o);
	}
	return o;
}

static bool zero(const struct vn_result_fact *f, const struct vn_result_run *r)
{
	switch (f->type) {
	case VN_FACT_UINT: return *AT(r, f, unsigned) == 0;
	case VN_FACT_STRV: return !*AT(r, f, char **) || !**AT(r, f, char **);
	case VN_FACT_NODES: return AT(r, f, struct vn_result_nodes)->n == 0;
	default: return false;
	}
}

static json_object *value(const struct vn_result_fact *f, const struct vn_result_run *r)
{
	switch (f->type) {
	case VN_FACT_STR: {
		const char *s = *AT(r, f, char *) ? *AT(r, f, char *) : f->dflt;
		return s ? json_object_new_string(s) : NULL;
	}
	case VN_FACT_UINT: {
		unsigned u = *AT(r, f, unsigned);
		return json_object_new_int64(u || !(f->flags & VN_FACT_ZERO_MIN) ? u : (unsigned)f->min);
	}
	case VN_FACT_NUM: return json_object_new_double(*AT(r, f, double));
	case VN_FACT_BOOL: return json_object_new_boolean(*AT(r, f, bool));
	case VN_FACT_STRV: {
		json_object *a = json_object_new_array();
		for (char **p = *AT(r, f, char **); p && *p; p++)
			json_object_array_add(a, json_object_new_string(*p));
		return a;
	}
	case VN_FACT_NODES: {
		const struct vn_result_nodes *n = AT(r, f, struct vn_result_nodes);
		json_object *a = json_object_new_array();
		for (unsigned i = 0; i < n->n; i++)
			json_object_array_add(a, json_object_new_int64(n->v[i]));
		return a;
	}
	case VN_FACT_OWN: return f->get(r);
	}
	return NULL;
}

void vn_result_facts_write(const struct vn_result_run *r, json_object *o)
{
	for (size_t i = 0; i < vn_result_nfacts; i++) {
		const struct vn_result_fact *f = &vn_result_facts[i];
		const char *leaf;
		char name[64];
		if ((f->when && !f->when(r)) || ((f->flags & VN_FACT_NONZERO) && zero(f, r)))
			continue;
		json_object *in = parent(o, f->key, true, &leaf, name, sizeof(name));
		json_object_object_add(in, leaf, value(f, r));
	}
}

static int read_strv(const struct vn_json_reader *rd, json_object *v, const char *path, char ***out)
{
	size_t n = 0;
	int rc;

	if ((rc = vn_json_check_type(rd, v, json_type_array, path)) < 0)
		return rc;
	if (json_object_array_length(v) > VN_RESULT_LIST_MAX)
		return vn_json_bad(rd, path, "%zu members, at most %zu are read", json_object_array_length(v),
				   (size_t)VN_RESULT_LIST_MAX);
	return json_object_array_length(v) ? vn_json_strv_append(rd, v, path, 0, out, &n) : 0;
}

static int read_nodes(const struct vn_json_reader *rd, const struct vn_result_fact *f, json_object *v, const char *path,
		      struct vn_result_nodes *out)
{
	char p[VN_JSON_PATH_MAX];
	int rc;

	if ((rc = vn_json_check_type(rd, v, json_type_array, path)) < 0)
		return rc;
	size_t n = json_object_array_length(v);
	if (n > VN_RESULT_LIST_MAX)
		return vn_json_bad(rd, path, "%zu members, at most %zu are read", n, (size_t)VN_RESULT_LIST_MAX);
	free(out->v);
	*out = (struct vn_result_nodes){0, vn_xcalloc(n ? n : 1, sizeof(*out->v))};
	for (; out->n < n; out->n++)
		if ((rc = vn_json_uint(rd, json_object_array_get_idx(v, out->n), vn_json_path_idx(p, path, out->n),
				       f->min, f->max, f->what, &out->v[out->n])) < 0)
			return rc;
	return 0;
}

/* v, o's member leaf at path (o at opath), into r. */
static int read_fact(const struct vn_json_reader *rd, const struct vn_result_fact *f, json_object *o, const char *opath,
		     const char *leaf, json_object *v, const char *path, struct vn_result_run *r)
{
	switch (f->type) {
	case VN_FACT_STR:
		if (f->flags & VN_FACT_NAME)
			return vn_json_get_str(rd, o, opath, leaf, VN_JSON_NAME, AT(r, f, char *));
		if (!json_object_is_type(v, json_type_string))
			return vn_json_expected(rd, path, "a string or null", v);
		free(*AT(r, f, char *));
		*AT(r, f, char *) = vn_xstrdup(json_object_get_string(v));
		return 0;
	case VN_FACT_UINT: return vn_json_uint(rd, v, path, f->min, f->max, f->what, AT(r, f, unsigned));
	case VN_FACT_NUM: return vn_json_num(rd, v, path, f->range, AT(r, f, double));
	case VN_FACT_BOOL: {
		int rc = vn_json_check_type(rd, v, json_type_boolean, path);
		if (rc == 0)
			*AT(r, f, bool) = json_object_get_boolean(v);
		return rc;
	}
	case VN_FACT_STRV: return read_strv(rd, v, path, AT(r, f, char **));
	case VN_FACT_NODES: return read_nodes(rd, f, v, path, AT(r, f, struct vn_result_nodes));
	case VN_FACT_OWN: return f->set(rd, v, path, r);
	}
	return 0;
}

int vn_result_facts_read(const struct vn_json_reader *rd, json_object *root, struct vn_result_run *r)
{
	char path[VN_JSON_PATH_MAX], ppath[VN_JSON_PATH_MAX], name[64];
	int rc;

	for (size_t i = 0; i < vn_result_nfacts; i++) {
		const struct vn_result_fact *f = &vn_result_facts[i];
		const char *leaf;
		json_object *o = parent(root, f->key, false, &leaf, name, sizeof(name));
		if (leaf != f->key) {
			/* An object of facts (kernel) may be null or absent, as its members may. */
			if (!o)
				continue;
			vn_json_path_key(ppath, "$", name);
			if ((rc = vn_json_check_type(rd, o, json_type_object, ppath)) < 0)
				return rc;
		}
		const char *opath = leaf != f->key ? ppath : "$";
		json_object *v = vn_json_get(o, leaf);
		vn_json_path_key(path, opath, leaf);
		if (!v && (f->flags & VN_FACT_REQUIRED))
			return vn_json_missing(rd, opath, leaf);
		if (v && (rc = read_fact(rd, f, o, opath, leaf, v, path, r)) < 0)
			return rc;
	}
	return 0;
}

void vn_result_facts_clear(struct vn_result_run *r)
{
	for (size_t i = 0; i < vn_result_nfacts; i++) {
		const struct vn_result_fact *f = &vn_result_facts[i];
		switch (f->type) {
		case VN_FACT_STR: free(steal_pointer(AT(r, f, char *))); break;
		case VN_FACT_STRV: vn_strv_free(steal_pointer(AT(r, f, char **))); break;
		case VN_FACT_NODES: free(steal_pointer(&AT(r, f, struct vn_result_nodes)->v)); break;
		default: break;
		}
	}
}

char *vn_result_fact_text(const struct vn_result_fact *f, const struct vn_result_run *r)
{
	_cleanup_strbuf_ struct vn_strbuf b = VN_STRBUF_INIT;

	if (f->text)
		return f->text(r);
	if ((f->flags & VN_FACT_NONZERO) && zero(f, r))
		return NULL;
	switch (f->type) {
	case VN_FACT_STR: return vn_xstrdup_or_null(*AT(r, f, char *) ? *AT(r, f, char *) : f->dflt);
	case VN_FACT_UINT: {
		unsigned u = *AT(r, f, unsigned);
		vn_strbuf_printf(&b, "%u", u || !(f->flags & VN_FACT_ZERO_MIN) ? u : (unsigned)f->min);
		break;
	}
	case VN_FACT_NUM: vn_strbuf_printf(&b, "%.1f", *AT(r, f, double)); break;
	case VN_FACT_BOOL: vn_strbuf_printf(&b, "%s", *AT(r, f, bool) ? "yes" : "no"); break;
	case VN_FACT_STRV:
		for (char **p = *AT(r, f, char **); p && *p; p++)
			vn_strbuf_printf(&b, "%s%s", p == *AT(r, f, char **) ? "" : ", ", *p);
		break;
	case VN_FACT_NODES: {
		const struct vn_result_nodes *n = AT(r, f, struct vn_result_nodes);
		for (unsigned i = 0; i < n->n; i++)
			vn_strbuf_printf(&b, "%s%u", i ? ", " : "", n->v[i]);
		break;
	}
	case VN_FACT_OWN: return NULL;
	}
	if (!b.len)
		return NULL;
	if (f->unit)
		vn_strbuf_printf(&b, " %s", f->unit);
	return vn_strbuf_steal(&b);
}
