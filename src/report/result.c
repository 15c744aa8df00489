/*
 * One run's result: the typed value, its one writer (result.json's bytes)
 * and its one reader (result-load.c).
 */
#include "report/result.h"
#include "report/result-suite.h"
#include "report/result-facts.h"

#include <json-c/json.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "util/alloc.h"
#include "util/cleanup.h"
#include "util/json.h"
#include "util/strbuf.h"

void vn_result_add(struct vn_result_run *r, const char *name, bool pass, const char *observed, const char *expected,
		   const char *detail)
{
	vn_result_add_observed(r, name, pass, observed, expected, detail, VN_OBSERVED_NONE, NAN);
}

void vn_result_add_observed(struct vn_result_run *r, const char *name, bool pass, const char *observed,
			    const char *expected, const char *detail, enum vn_observed_kind kind, double value)
{
	r->verdicts = vn_xreallocarray(r->verdicts, r->nverdicts + 1, sizeof(*r->verdicts));
	/* What the kernel did is the guest's text, and `vnuma run` prints it as well as writing it. */
	r->verdicts[r->nverdicts++] = (struct vn_verdict){
		.name = vn_text_dup(name, SIZE_MAX, VN_TEXT_LINES),
		.pass = pass,
		.observed = observed ? vn_text_dup(observed, SIZE_MAX, VN_TEXT_LINES) : NULL,
		.expected = expected ? vn_text_dup(expected, SIZE_MAX, VN_TEXT_LINES) : NULL,
		.detail = detail ? vn_text_dup(detail, SIZE_MAX, VN_TEXT_LINES) : NULL,
		.kind = kind,
		.value = value,
	};
}

unsigned vn_result_failures(const struct vn_result_run *r)
{
	unsigned n = 0;

	for (unsigned i = 0; i < r->nverdicts; i++)
		n += !r->verdicts[i].pass && !r->verdicts[i].undecided;
	return n;
}

unsigned vn_result_undecided(const struct vn_result_run *r)
{
	unsigned n = 0;

	for (unsigned i = 0; i < r->nverdicts; i++)
		n += r->verdicts[i].undecided;
	return n;
}

const char *vn_verdict_word(const struct vn_verdict *v)
{
	return v->pass ? "pass" : v->undecided ? "too noisy" : "fail";
}

void vn_result_clear(struct vn_result_run *r)
{
	for (unsigned i = 0; i < r->nverdicts; i++) {
		vn_free_all(r->verdicts[i].name, r->verdicts[i].observed, r->verdicts[i].expected,
			    r->verdicts[i].detail);
	}
	free(r->verdicts);
	vn_result_tests_clear(r);
	vn_result_facts_clear(r);
	for (unsigned i = 0; i < r->nmetrics; i++)
		free(r->metrics[i].name);
	free(r->metrics);
	for (unsigned i = 0; i < r->nsysctls; i++)
		vn_free_all(r->sysctls[i].key, r->sysctls[i].value);
	free(r->sysctls);
	for (unsigned i = 0; i < r->nartifacts; i++)
		free(r->artifacts[i].volume);
	free(r->artifacts);
	vn_strv_free(r->kernel_patches);
	memset(r, 0, sizeof(*r));
}

void vn_result_add_sysctl(struct vn_result_run *r, const char *key, const char *value)
{
	r->sysctls = vn_xreallocarray(r->sysctls, r->nsysctls + 1, sizeof(*r->sysctls));
	r->sysctls[r->nsysctls++] = (struct vn_result_sysctl){vn_xstrdup(key), vn_xstrdup(value)};
}

void vn_result_add_artifact(struct vn_result_run *r, const char *volume, bool uploaded)
{
	r->artifacts = vn_xreallocarray(r->artifacts, r->nartifacts + 1, sizeof(*r->artifacts));
	r->artifacts[r->nartifacts++] = (struct vn_result_artifact){vn_xstrdup(volume), uploaded};
}

void vn_result_metric(struct vn_result_run *r, const char *name, double value)
{
	/* Names come from the guest (vmstat keys, workload fields): their number is bounded like the rest. */
	if (!isfinite(value) || r->nmetrics >= VN_RESULT_METRICS_MAX)
		return;
	r->metrics = vn_xreallocarray(r->metrics, r->nmetrics + 1, sizeof(*r->metrics));
	r->metrics[r->nmetrics++] = (struct vn_metric){vn_xstrdup(name), value};
}

/*
 * A copy of o whose every string, key or value, went through the one
 * sanitizer: much of a report is the guest's text (observations, console
 * lines, vmstat keys, its cmdline), and json-c writes bytes as it got them,
 * so invalid UTF-8 would leave a file no JSON reader takes.
 */
static json_object *clean_tree(json_object *o)
{
	switch (json_object_get_type(o)) {
	case json_type_string: {
		_cleanup_free_ char *s = vn_xmalloc((size_t)json_object_get_string_len(o) + 4);
		vn_text_clean(json_object_get_string(o), (size_t)json_object_get_string_len(o),
			      (size_t)json_object_get_string_len(o), VN_TEXT_LINES, s);
		return json_object_new_string(s);
	}
	case json_type_array: {
		json_object *a = json_object_new_array();
		for (size_t i = 0; i < json_object_array_length(o); i++)
			json_object_array_add(a, clean_tree(json_object_array_get_idx(o, i)));
		return a;
	}
	case json_type_object: {
		json_object *c = json_object_new_object();
		json_object_object_foreach(o, key, val)
		{
			_cleanup_free_ char *k = vn_text_dup(key, SIZE_MAX, 0);
			json_object_object_add(c, k, clean_tree(val));
		}
		return c;
	}
	default: return json_object_get(o);
	}
}

json_object *vn_result_json(const struct vn_result_run *r)
{
	json_object *o = json_object_new_object(), *a = json_object_new_array();

	vn_result_facts_write(r, o);
	for (unsigned i = 0; i < r->nverdicts; i++) {
		const struct vn_verdict *v = &r->verdicts[i];
		json_object *j = json_object_new_object();
		vn_json_add_str(j, "name", v->name);
		json_object_object_add(j, "verdict", json_object_new_string(vn_verdict_word(v)));
		vn_json_add_str(j, "observed", v->observed);
		vn_json_add_str(j, "expected", v->expected);
		vn_json_add_str(j, "detail", v->detail);
		json_object_array_add(a, j);
	}
	json_object_object_add(o, "assertions", a);
	vn_result_tests_json(o, r);
	json_object *sc = json_object_new_object();
	for (unsigned i = 0; i < r->nsysctls; i++)
		json_object_object_add(sc, r->sysctls[i].key, json_object_new_string(r->sysctls[i].value));
	json_object_object_add(o, "sysctls", sc);
	if (r->nartifacts) {
		json_object *ar = json_object_new_array();
		for (unsigned i = 0; i < r->nartifacts; i++) {
			json_object *j = json_object_new_object();
			vn_json_add_str(j, "volume", r->artifacts[i].volume);
			json_object_object_add(j, "uploaded", json_object_new_boolean(r->artifacts[i].uploaded));
			json_object_array_add(ar, j);
		}
		json_object_object_add(o, "artifacts", ar);
	}
	/* Only a finished run has metrics: an incomplete one must not be compared as if it were whole. */
	json_object *m = json_object_new_object();
	for (unsigned i = 0; r->complete && i < r->nmetrics; i++)
		json_object_object_add(m, r->metrics[i].name, json_object_new_double(r->metrics[i].value));
	if (r->complete) {
		json_object_object_add(m, "run.duration_s", json_object_new_double(r->duration_s));
		json_object_object_add(m, "run.boot_s", json_object_new_double(r->boot_s));
	}
	json_object_object_add(o, "metrics", m);
	json_object *clean = clean_tree(o);
	json_object_put(o);
	return clean;
}

char *vn_result_text(const struct vn_result_run *r)
{
	_cleanup_json_ json_object *clean = vn_result_json(r);

	return vn_xasprintf("%s\n", json_object_to_json_string_ext(clean, JSON_C_TO_STRING_PRETTY |
										  JSON_C_TO_STRING_NOSLASHESCAPE));
}

bool vn_result_virtual_time(const struct vn_result_run *r)
{
	return r->icount || r->virtual_time;
}
