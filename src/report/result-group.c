/* group.json's typed value (report/result-group.h): building it, and its one writer. */
#include <json-c/json.h>
#include <stdlib.h>
#include <string.h>

#include "report/result-group.h"
#include "util/alloc.h"
#include "util/cleanup.h"
#include "util/json.h"

void vn_result_group_clear(struct vn_result_group *g)
{
	for (unsigned i = 0; i < g->nvariants; i++) {
		struct vn_result_group_variant *v = &g->variants[i];
		for (unsigned k = 0; k < v->nsysctls; k++)
			vn_free_all(v->sysctls[k].key, v->sysctls[k].value);
		vn_free_all(v->name, v->kernel, v->append, v->sysctls, v->commit, v->mark);
	}
	for (unsigned i = 0; i < g->nruns; i++) {
		struct vn_result_group_run *r = &g->runs[i];
		for (unsigned k = 0; k < r->nattempts; k++)
			vn_free_all(r->attempts[k].host, r->attempts[k].error, r->attempts[k].dir);
		vn_free_all(r->variant, r->dir, r->host, r->attempts);
	}
	for (unsigned i = 0; i < g->nhosts; i++)
		vn_free_all(g->hosts[i].uri, g->hosts[i].state);
	for (unsigned i = 0; i < g->nverdicts; i++)
		vn_free_all(g->verdicts[i].name, g->verdicts[i].observed, g->verdicts[i].expected,
			    g->verdicts[i].detail);
	vn_free_all(g->scenario, g->topology, g->host, g->accel, g->arch, g->started_utc, g->base, g->variants, g->runs,
		    g->hosts, g->verdicts, g->shard.matrix);
	memset(g, 0, sizeof(*g));
}

static char *dup_or_null(const char *s)
{
	return s ? vn_xstrdup(s) : NULL;
}

struct vn_result_group_variant *vn_result_group_add_variant(struct vn_result_group *g, const char *name)
{
	g->variants = vn_xreallocarray(g->variants, g->nvariants + 1, sizeof(*g->variants));
	g->variants[g->nvariants] = (struct vn_result_group_variant){.name = vn_xstrdup(name)};
	return &g->variants[g->nvariants++];
}

struct vn_result_group_run *vn_result_group_add_run(struct vn_result_group *g, const char *variant, unsigned repeat,
						    const char *dir, int exit)
{
	g->runs = vn_xreallocarray(g->runs, g->nruns + 1, sizeof(*g->runs));
	g->runs[g->nruns] = (struct vn_result_group_run){.variant = vn_xstrdup(variant),
							 .repeat = repeat,
							 .dir = vn_xstrdup(dir),
							 .exit = exit,
							 .keys = VN_GROUP_RUN_REPEAT | VN_GROUP_RUN_EXIT};
	return &g->runs[g->nruns++];
}

void vn_result_group_add_host(struct vn_result_group *g, const char *uri, unsigned capacity, unsigned runs,
			      const char *state)
{
	g->hosts = vn_xreallocarray(g->hosts, g->nhosts + 1, sizeof(*g->hosts));
	g->hosts[g->nhosts++] = (struct vn_result_group_host){
		.uri = vn_xstrdup(uri), .state = vn_xstrdup(state), .capacity = capacity, .runs = runs};
	g->keys |= VN_GROUP_HOSTS;
}

void vn_result_group_set_sysctl(struct vn_result_group_variant *v, const char *key, const char *value)
{
	v->keys |= VN_GROUP_VARIANT_SYSCTLS;
	for (unsigned i = 0; i < v->nsysctls; i++)
		if (strcmp(v->sysctls[i].key, key) == 0) {
			free(v->sysctls[i].value);
			v->sysctls[i].value = vn_xstrdup(value);
			return;
		}
	v->sysctls = vn_xreallocarray(v->sysctls, v->nsysctls + 1, sizeof(*v->sysctls));
	v->sysctls[v->nsysctls++] = (struct vn_result_sysctl){vn_xstrdup(key), vn_xstrdup(value)};
}

void vn_result_group_add_attempt(struct vn_result_group_run *r, const char *host, const char *error, const char *dir)
{
	r->attempts = vn_xreallocarray(r->attempts, r->nattempts + 1, sizeof(*r->attempts));
	r->attempts[r->nattempts++] = (struct vn_result_group_attempt){
		.host = vn_xstrdup(host), .error = vn_xstrdup(error), .dir = dup_or_null(dir)};
}

static json_object *variant_json(const struct vn_result_group_variant *v)
{
	json_object *j = json_object_new_object();

	vn_json_add_str(j, "name", v->name);
	if (v->keys & VN_GROUP_VARIANT_KERNEL)
		vn_json_add_str(j, "kernel", v->kernel);
	if (v->keys & VN_GROUP_VARIANT_APPEND)
		vn_json_add_str(j, "append", v->append);
	if (v->keys & VN_GROUP_VARIANT_SYSCTLS) {
		json_object *sc = json_object_new_object();
		for (unsigned k = 0; k < v->nsysctls; k++)
			vn_json_add_str(sc, v->sysctls[k].key, v->sysctls[k].value);
		json_object_object_add(j, "sysctls", sc);
	}
	if (v->commit)
		vn_json_add_str(j, "commit", v->commit);
	if (v->mark)
		vn_json_add_str(j, "mark", v->mark);
	return j;
}

static json_object *run_json(const struct vn_result_group_run *r)
{
	json_object *j = json_object_new_object();

	vn_json_add_str(j, "variant", r->variant);
	if (r->keys & VN_GROUP_RUN_REPEAT)
		json_object_object_add(j, "repeat", json_object_new_int64(r->repeat));
	vn_json_add_str(j, "dir", r->dir);
	if (r->keys & VN_GROUP_RUN_EXIT)
		json_object_object_add(j, "exit", r->exit >= 0 ? json_object_new_int(r->exit) : NULL);
	if (r->host)
		vn_json_add_str(j, "host", r->host);
	if (r->nattempts) {
		json_object *as = json_object_new_array();
		for (unsigned k = 0; k < r->nattempts; k++) {
			json_object *a = json_object_new_object();
			vn_json_add_str(a, "host", r->attempts[k].host);
			vn_json_add_str(a, "error", r->attempts[k].error);
			vn_json_add_str(a, "dir", r->attempts[k].dir);
			json_object_array_add(as, a);
		}
		json_object_object_add(j, "failed_attempts", as);
	}
	return j;
}

static void add_lists(json_object *o, const struct vn_result_group *g)
{
	json_object *vars = json_object_new_array(), *runs = json_object_new_array();

	for (unsigned i = 0; i < g->nvariants; i++)
		json_object_array_add(vars, variant_json(&g->variants[i]));
	json_object_object_add(o, "variants", vars);
	for (unsigned i = 0; i < g->nruns; i++)
		json_object_array_add(runs, run_json(&g->runs[i]));
	json_object_object_add(o, "runs", runs);
	if (g->keys & VN_GROUP_HOSTS) {
		json_object *hs = json_object_new_array();
		for (unsigned i = 0; i < g->nhosts; i++) {
			json_object *j = json_object_new_object();
			vn_json_add_str(j, "uri", g->hosts[i].uri);
			json_object_object_add(j, "capacity", json_object_new_int64(g->hosts[i].capacity));
			json_object_object_add(j, "runs", json_object_new_int64(g->hosts[i].runs));
			vn_json_add_str(j, "state", g->hosts[i].state);
			json_object_array_add(hs, j);
		}
		json_object_object_add(o, "hosts", hs);
	}
}

char *vn_result_group_text(const struct vn_result_group *g)
{
	_cleanup_json_ json_object *o = json_object_new_object();

	if (g->keys & VN_GROUP_VERSION)
		json_object_object_add(o, "version", json_object_new_int64(g->version));
	vn_json_add_str(o, "scenario", g->scenario);
	vn_json_add_str(o, "topology", g->topology);
	const struct {
		unsigned key;
		const char *name, *value;
	} strs[] = {{VN_GROUP_HOST, "host", g->host},
		    {VN_GROUP_ACCEL, "accelerator", g->accel},
		    {VN_GROUP_ARCH, "arch", g->arch},
		    {VN_GROUP_STARTED, "started_utc", g->started_utc}};
	for (size_t i = 0; i < VN_ARRAY_SIZE(strs); i++)
		if (g->keys & strs[i].key)
			vn_json_add_str(o, strs[i].name, strs[i].value);
	if (g->keys & VN_GROUP_REPEATS)
		json_object_object_add(o, "repeats", json_object_new_int64(g->repeats));
	if (g->keys & VN_GROUP_BASE)
		vn_json_add_str(o, "base", g->base);
	add_lists(o, g);
	if (g->keys & VN_GROUP_COMPLETE)
		json_object_object_add(o, "complete", json_object_new_boolean(g->complete));
	if (g->keys & VN_GROUP_ASSERTIONS) {
		json_object *as = json_object_new_array();
		for (unsigned i = 0; i < g->nverdicts; i++) {
			const struct vn_verdict *v = &g->verdicts[i];
			json_object *j = json_object_new_object();
			vn_json_add_str(j, "name", v->name);
			vn_json_add_str(j, "verdict", vn_verdict_word(v));
			vn_json_add_str(j, "observed", v->observed ? v->observed : "");
			vn_json_add_str(j, "expected", v->expected ? v->expected : "");
			json_object_array_add(as, j);
		}
		json_object_object_add(o, "assertions", as);
	}
	if (g->shard.count) {
		json_object *sh = json_object_new_object();
		json_object_object_add(sh, "index", json_object_new_int64(g->shard.index));
		json_object_object_add(sh, "count", json_object_new_int64(g->shard.count));
		json_object_object_add(sh, "runs", json_object_new_int64(g->shard.runs));
		vn_json_add_str(sh, "matrix", g->shard.matrix);
		json_object_object_add(o, "shard", sh);
	}
	return vn_xasprintf(
		"%s\n", json_object_to_json_string_ext(o, JSON_C_TO_STRING_PRETTY | JSON_C_TO_STRING_NOSLASHESCAPE));
}
