#include "report/report.h"

#include <errno.h>
#include <json-c/json.h>
#include <libxml/xmlwriter.h>
#include <stdio.h>
#include <stdlib.h>
#include <math.h>
#include <string.h>

#include "util/alloc.h"
#include "util/cleanup.h"
#include "util/file.h"
#include "util/json.h"

void vn_report_add(struct vn_report *r, const char *name, bool pass, const char *observed, const char *expected,
		   const char *detail)
{
	r->verdicts = vn_xreallocarray(r->verdicts, r->nverdicts + 1, sizeof(*r->verdicts));
	r->verdicts[r->nverdicts++] = (struct vn_verdict){
		.name = vn_xstrdup(name),
		.pass = pass,
		.observed = vn_xstrdup_or_null(observed),
		.expected = vn_xstrdup_or_null(expected),
		.detail = vn_xstrdup_or_null(detail),
	};
}

unsigned vn_report_failures(const struct vn_report *r)
{
	unsigned n = 0;

	for (unsigned i = 0; i < r->nverdicts; i++)
		n += !r->verdicts[i].pass;
	return n;
}

void vn_report_clear(struct vn_report *r)
{
	for (unsigned i = 0; i < r->nverdicts; i++) {
		vn_free_all(r->verdicts[i].name, r->verdicts[i].observed, r->verdicts[i].expected,
			    r->verdicts[i].detail);
	}
	free(r->verdicts);
	char **strs[] = {&r->scenario,       &r->description,
			 &r->started_utc,    &r->error,
			 &r->accel,          &r->kernel_release,
			 &r->kernel_version, &r->kernel_cmdline,
			 &r->kernel_recipe,  &r->kernel_config_sha256,
			 &r->topology,       &r->fidelity,
			 &r->sampling_cost,  &r->kernel_patches,
			 &r->accel_reason,   &r->guest,
			 &r->variant,        &r->host};
	for (size_t i = 0; i < VN_ARRAY_SIZE(strs); i++)
		free(*strs[i]);
	for (unsigned i = 0; i < r->nmetrics; i++)
		free(r->metrics[i].name);
	free(r->metrics);
	vn_strv_free(r->sysctls);
	vn_strv_free(r->artifacts);
	memset(r, 0, sizeof(*r));
}

void vn_report_metric(struct vn_report *r, const char *name, double value)
{
	/* Names come from the guest (vmstat keys, workload fields): their number is bounded like the rest. */
	if (!isfinite(value) || r->nmetrics >= VN_REPORT_METRICS_MAX)
		return;
	r->metrics = vn_xreallocarray(r->metrics, r->nmetrics + 1, sizeof(*r->metrics));
	r->metrics[r->nmetrics++] = (struct vn_metric){vn_xstrdup(name), value};
}

static int write_json(const struct vn_report *r, const char *dir, struct vn_error *err)
{
	json_object *o = json_object_new_object(), *k = json_object_new_object(), *a = json_object_new_array();
	char path[4096];
	int rc = 0;

	vn_json_add_str(o, "scenario", r->scenario);
	vn_json_add_str(o, "description", r->description);
	vn_json_add_str(o, "variant", r->variant ? r->variant : "default");
	json_object_object_add(o, "repeat", json_object_new_int64(r->repeat ? r->repeat : 1));
	vn_json_add_str(o, "host", r->host);
	vn_json_add_str(o, "started_utc", r->started_utc);
	json_object_object_add(o, "duration_s", json_object_new_double(r->duration_s));
	json_object_object_add(o, "boot_s", json_object_new_double(r->boot_s));
	json_object_object_add(o, "complete", json_object_new_boolean(r->complete));
	vn_json_add_str(o, "error", r->error);
	/* What samples.jsonl held when this was written: an incomplete run keeps what it sampled. */
	json_object_object_add(o, "samples", json_object_new_int64(r->samples));
	json_object_object_add(o, "passed", json_object_new_boolean(r->complete && !vn_report_failures(r)));
	vn_json_add_str(o, "accelerator", r->accel);
	vn_json_add_str(o, "accelerator_reason", r->accel_reason);
	vn_json_add_str(o, "guest", r->guest);
	const char *const kernel[][2] = {{"release", r->kernel_release},
					 {"version", r->kernel_version},
					 {"cmdline", r->kernel_cmdline},
					 {"recipe", r->kernel_recipe},
					 {"config_sha256", r->kernel_config_sha256}};
	vn_json_add_strs(k, kernel, VN_ARRAY_SIZE(kernel));
	json_object *patches = json_object_new_array();
	if (r->kernel_patches) {
		_cleanup_free_ char *copy = vn_xstrdup(r->kernel_patches);
		char *save = NULL;
		for (char *p = strtok_r(copy, " ", &save); p; p = strtok_r(NULL, " ", &save))
			json_object_array_add(patches, json_object_new_string(p));
	}
	json_object_object_add(k, "patches", patches);
	json_object_object_add(o, "kernel", k);
	vn_json_add_str(o, "topology", r->topology);
	vn_json_add_str(o, "fidelity", r->fidelity);
	vn_json_add_str(o, "sampling_cost", r->sampling_cost);
	json_object_object_add(o, "note",
			       json_object_new_string("Under TCG, throughput is not real-hardware performance: "
						      "assertions judge the kernel's decisions (placement, migration, "
						      "fallback), not absolute bandwidth."));
	for (unsigned i = 0; i < r->nverdicts; i++) {
		const struct vn_verdict *v = &r->verdicts[i];
		json_object *j = json_object_new_object();
		vn_json_add_str(j, "name", v->name);
		json_object_object_add(j, "verdict", json_object_new_string(v->pass ? "pass" : "fail"));
		vn_json_add_str(j, "observed", v->observed);
		vn_json_add_str(j, "expected", v->expected);
		vn_json_add_str(j, "detail", v->detail);
		json_object_array_add(a, j);
	}
	json_object_object_add(o, "assertions", a);
	json_object *sc = json_object_new_object();
	for (char **p = r->sysctls; p && *p; p++) {
		const char *eq = strchr(*p, '=');
		_cleanup_free_ char *key = eq ? vn_xstrndup(*p, (size_t)(eq - *p)) : vn_xstrdup(*p);
		json_object_object_add(sc, key, json_object_new_string(eq ? eq + 1 : ""));
	}
	json_object_object_add(o, "sysctls", sc);
	if (r->artifacts) {
		json_object *ar = json_object_new_array();
		for (char **p = r->artifacts; *p; p++) {
			const char *sp = strrchr(*p, ' ');
			json_object *j = json_object_new_object();
			_cleanup_free_ char *vol = sp ? vn_xstrndup(*p, (size_t)(sp - *p)) : vn_xstrdup(*p);
			vn_json_add_str(j, "volume", vol);
			json_object_object_add(j, "uploaded",
					       json_object_new_boolean(sp && strcmp(sp + 1, "uploaded") == 0));
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
	snprintf(path, sizeof(path), "%s/result.json", dir);
	/* Atomic: a reader (or a crash) sees the previous complete file or this one, never half of either. */
	const char *text = json_object_to_json_string_ext(o, JSON_C_TO_STRING_PRETTY | JSON_C_TO_STRING_NOSLASHESCAPE);
	_cleanup_free_ char *line = vn_xasprintf("%s\n", text);
	rc = vn_file_write_text(path, line, err);
	json_object_put(o);
	return rc;
}

VN_DEFINE_CLEANUP(xmlTextWriterPtr, xmlFreeTextWriter);
VN_DEFINE_CLEANUP(xmlBufferPtr, xmlBufferFree);

static int write_junit(const struct vn_report *r, const char *dir, struct vn_error *err)
{
	char path[4096], buf[64];
	_cleanup_(xmlBufferFreep) xmlBufferPtr doc = xmlBufferCreate();
	_cleanup_(xmlFreeTextWriterp) xmlTextWriterPtr w = NULL;
	unsigned failures = vn_report_failures(r);

	snprintf(path, sizeof(path), "%s/junit.xml", dir);
	/* Built in memory, then written atomically like result.json. */
	w = doc ? xmlNewTextWriterMemory(doc, 0) : NULL;
	if (!w)
		vn_oom(); /* libxml2 returns NULL here only when it cannot allocate */
	xmlTextWriterSetIndent(w, 1);
	xmlTextWriterStartDocument(w, NULL, "UTF-8", NULL);
	xmlTextWriterStartElement(w, BAD_CAST "testsuite");
	xmlTextWriterWriteAttribute(w, BAD_CAST "name", BAD_CAST(r->scenario ? r->scenario : "vnuma"));
	snprintf(buf, sizeof(buf), "%u", r->nverdicts + (r->complete ? 0 : 1));
	xmlTextWriterWriteAttribute(w, BAD_CAST "tests", BAD_CAST buf);
	snprintf(buf, sizeof(buf), "%u", failures);
	xmlTextWriterWriteAttribute(w, BAD_CAST "failures", BAD_CAST buf);
	xmlTextWriterWriteAttribute(w, BAD_CAST "errors", BAD_CAST(r->complete ? "0" : "1"));
	snprintf(buf, sizeof(buf), "%.3f", r->duration_s);
	xmlTextWriterWriteAttribute(w, BAD_CAST "time", BAD_CAST buf);
	if (r->started_utc)
		xmlTextWriterWriteAttribute(w, BAD_CAST "timestamp", BAD_CAST r->started_utc);
	for (unsigned i = 0; i < r->nverdicts; i++) {
		const struct vn_verdict *v = &r->verdicts[i];
		xmlTextWriterStartElement(w, BAD_CAST "testcase");
		xmlTextWriterWriteAttribute(w, BAD_CAST "classname", BAD_CAST(r->scenario ? r->scenario : "vnuma"));
		xmlTextWriterWriteAttribute(w, BAD_CAST "name", BAD_CAST v->name);
		if (!v->pass) {
			xmlTextWriterStartElement(w, BAD_CAST "failure");
			char msg[1024];
			snprintf(msg, sizeof(msg), "expected %s, observed %s", v->expected ? v->expected : "?",
				 v->observed ? v->observed : "?");
			xmlTextWriterWriteAttribute(w, BAD_CAST "message", BAD_CAST msg);
			if (v->detail)
				xmlTextWriterWriteString(w, BAD_CAST v->detail);
			xmlTextWriterEndElement(w);
		}
		xmlTextWriterStartElement(w, BAD_CAST "system-out");
		char out[2048];
		snprintf(out, sizeof(out), "observed: %s\nexpected: %s\n", v->observed ? v->observed : "",
			 v->expected ? v->expected : "");
		xmlTextWriterWriteString(w, BAD_CAST out);
		xmlTextWriterEndElement(w);
		xmlTextWriterEndElement(w);
	}
	if (!r->complete) {
		/* An incomplete run is an error in CI, not a pass by omission. */
		xmlTextWriterStartElement(w, BAD_CAST "testcase");
		xmlTextWriterWriteAttribute(w, BAD_CAST "classname", BAD_CAST(r->scenario ? r->scenario : "vnuma"));
		xmlTextWriterWriteAttribute(w, BAD_CAST "name", BAD_CAST "run completed");
		xmlTextWriterStartElement(w, BAD_CAST "error");
		xmlTextWriterWriteAttribute(w, BAD_CAST "message", BAD_CAST(r->error ? r->error : "incomplete"));
		xmlTextWriterEndElement(w);
		xmlTextWriterEndElement(w);
	}
	xmlTextWriterEndElement(w);
	if (xmlTextWriterEndDocument(w) < 0)
		return vn_infra_error(err, -EIO, "cannot write %s", path);
	xmlFreeTextWriter(steal_pointer(&w)); /* flushes into doc */
	return vn_file_write_atomic(path, xmlBufferContent(doc), (size_t)xmlBufferLength(doc), 0644, err);
}

int vn_report_write(const struct vn_report *r, const char *dir, struct vn_error *err)
{
	int rc = write_json(r, dir, err);

	return rc < 0 ? rc : write_junit(r, dir, err);
}
