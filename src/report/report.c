#include "report/report.h"
#include "report/kcidb.h"
#include "report/result-suite.h"

#include <errno.h>
#include <json-c/json.h>
#include <libxml/xmlwriter.h>
#include <stdio.h>
#include <stdlib.h>
#include <math.h>
#include <stdint.h>
#include <string.h>
#include <unistd.h>

#include "util/alloc.h"
#include "util/cleanup.h"
#include "util/file.h"
#include "util/json.h"
#include "util/strbuf.h"

static int write_json(const struct vn_result_run *r, const char *dir, struct vn_error *err)
{
	_cleanup_free_ char *path = vn_xasprintf("%s/result.json", dir);
	_cleanup_free_ char *text = vn_result_text(r);

	/* Atomic: a reader (or a crash) sees the previous complete file or this one, never half of either. */
	return vn_file_write_text(path, text, err);
}

/* junit.xml holds only XML 1.0 characters: every string we did not write ourselves goes through the sanitizer. */
static void put_attr(xmlTextWriterPtr w, const char *name, const char *value)
{
	_cleanup_free_ char *v = vn_text_dup(value, SIZE_MAX, VN_TEXT_LINES);

	xmlTextWriterWriteAttribute(w, BAD_CAST name, BAD_CAST v);
}

static void put_text(xmlTextWriterPtr w, const char *text)
{
	_cleanup_free_ char *t = vn_text_dup(text, SIZE_MAX, VN_TEXT_LINES);

	xmlTextWriterWriteString(w, BAD_CAST t);
}

/* A suite's tests, one <testcase> each (docs/suites.md): an xfail is a skip in CI's eyes, an xpass a pass that says so. */
static void write_tests(xmlTextWriterPtr w, const struct vn_result_run *r)
{
	for (unsigned i = 0; i < r->ntests; i++) {
		const struct vn_result_test *t = &r->tests[i];
		_cleanup_free_ char *cls = vn_xasprintf("%s.%s", r->scenario ? r->scenario : "vnuma", t->step);
		static const char *const elem[] = {[VN_TEST_FAIL] = "failure",
						   [VN_TEST_SKIP] = "skipped",
						   [VN_TEST_XFAIL] = "skipped",
						   [VN_TEST_ERROR] = "error",
						   [VN_TEST_TIMEOUT] = "error"};
		xmlTextWriterStartElement(w, BAD_CAST "testcase");
		put_attr(w, "classname", cls);
		put_attr(w, "name", t->name);
		if (t->verdict != VN_TEST_PASS && t->verdict != VN_TEST_XPASS) {
			_cleanup_free_ char *msg = NULL;
			if (t->verdict == VN_TEST_XFAIL)
				msg = vn_xasprintf("known failure: %s", t->known    ? t->known
									: t->reason ? t->reason
										    : "");
			else if (t->verdict == VN_TEST_TIMEOUT)
				msg = vn_xasprintf("timed out%s%s", t->reason ? ": " : "", t->reason ? t->reason : "");
			else
				msg = vn_xstrdup(t->reason ? t->reason : vn_test_verdict_word(t->verdict));
			xmlTextWriterStartElement(w, BAD_CAST elem[t->verdict]);
			put_attr(w, "message", msg);
			if (t->detail && t->verdict != VN_TEST_SKIP && t->verdict != VN_TEST_XFAIL)
				put_text(w, t->detail);
			xmlTextWriterEndElement(w);
		}
		if (t->verdict == VN_TEST_XPASS) {
			_cleanup_free_ char *out = vn_xasprintf("unexpected pass: listed as a known failure (%s)\n",
								t->known ? t->known : "");
			xmlTextWriterStartElement(w, BAD_CAST "system-out");
			put_text(w, out);
			xmlTextWriterEndElement(w);
		}
		xmlTextWriterEndElement(w);
	}
}

VN_DEFINE_CLEANUP(xmlTextWriterPtr, xmlFreeTextWriter);
VN_DEFINE_CLEANUP(xmlBufferPtr, xmlBufferFree);

static int write_junit(const struct vn_result_run *r, const char *dir, struct vn_error *err)
{
	char path[4096], buf[64];
	_cleanup_(xmlBufferFreep) xmlBufferPtr doc = xmlBufferCreate();
	_cleanup_(xmlFreeTextWriterp) xmlTextWriterPtr w = NULL;
	unsigned failures = vn_result_failures(r);

	snprintf(path, sizeof(path), "%s/junit.xml", dir);
	/* Built in memory, then written atomically like result.json. */
	w = doc ? xmlNewTextWriterMemory(doc, 0) : NULL;
	if (!w)
		vn_oom(); /* libxml2 returns NULL here only when it cannot allocate */
	xmlTextWriterSetIndent(w, 1);
	xmlTextWriterStartDocument(w, NULL, "UTF-8", NULL);
	xmlTextWriterStartElement(w, BAD_CAST "testsuite");
	put_attr(w, "name", r->scenario ? r->scenario : "vnuma");
	snprintf(buf, sizeof(buf), "%u", r->nverdicts + r->ntests + (r->complete ? 0 : 1));
	xmlTextWriterWriteAttribute(w, BAD_CAST "tests", BAD_CAST buf);
	snprintf(buf, sizeof(buf), "%u", failures + vn_result_tests_count(r, VN_TEST_FAIL));
	xmlTextWriterWriteAttribute(w, BAD_CAST "failures", BAD_CAST buf);
	snprintf(buf, sizeof(buf), "%u",
		 (r->complete ? 0 : 1) + vn_result_tests_count(r, VN_TEST_ERROR) +
			 vn_result_tests_count(r, VN_TEST_TIMEOUT));
	xmlTextWriterWriteAttribute(w, BAD_CAST "errors", BAD_CAST buf);
	snprintf(buf, sizeof(buf), "%u",
		 vn_result_undecided(r) + vn_result_tests_count(r, VN_TEST_SKIP) +
			 vn_result_tests_count(r, VN_TEST_XFAIL));
	xmlTextWriterWriteAttribute(w, BAD_CAST "skipped", BAD_CAST buf);
	snprintf(buf, sizeof(buf), "%.3f", r->duration_s);
	xmlTextWriterWriteAttribute(w, BAD_CAST "time", BAD_CAST buf);
	if (r->started_utc)
		put_attr(w, "timestamp", r->started_utc);
	for (unsigned i = 0; i < r->nverdicts; i++) {
		const struct vn_verdict *v = &r->verdicts[i];
		xmlTextWriterStartElement(w, BAD_CAST "testcase");
		put_attr(w, "classname", r->scenario ? r->scenario : "vnuma");
		put_attr(w, "name", v->name);
		if (v->undecided) {
			/* Neither a pass nor a failure of the kernel: CI shows it apart. */
			xmlTextWriterStartElement(w, BAD_CAST "skipped");
			put_attr(w, "message", v->observed ? v->observed : "too noisy");
			xmlTextWriterEndElement(w);
		} else if (!v->pass) {
			xmlTextWriterStartElement(w, BAD_CAST "failure");
			char msg[1024];
			snprintf(msg, sizeof(msg), "expected %s, observed %s", v->expected ? v->expected : "?",
				 v->observed ? v->observed : "?");
			put_attr(w, "message", msg);
			if (v->detail)
				put_text(w, v->detail);
			xmlTextWriterEndElement(w);
		}
		xmlTextWriterStartElement(w, BAD_CAST "system-out");
		char out[2048];
		snprintf(out, sizeof(out), "observed: %s\nexpected: %s\n", v->observed ? v->observed : "",
			 v->expected ? v->expected : "");
		put_text(w, out);
		xmlTextWriterEndElement(w);
		xmlTextWriterEndElement(w);
	}
	write_tests(w, r);
	if (!r->complete) {
		/* An incomplete run is an error in CI, not a pass by omission. */
		xmlTextWriterStartElement(w, BAD_CAST "testcase");
		put_attr(w, "classname", r->scenario ? r->scenario : "vnuma");
		xmlTextWriterWriteAttribute(w, BAD_CAST "name", BAD_CAST "run completed");
		xmlTextWriterStartElement(w, BAD_CAST "error");
		put_attr(w, "message", r->error ? r->error : "incomplete");
		xmlTextWriterEndElement(w);
		xmlTextWriterEndElement(w);
	}
	xmlTextWriterEndElement(w);
	if (xmlTextWriterEndDocument(w) < 0)
		return vn_infra_error(err, -EIO, "cannot write %s", path);
	xmlFreeTextWriter(steal_pointer(&w)); /* flushes into doc */
	return vn_file_write_atomic(path, xmlBufferContent(doc), (size_t)xmlBufferLength(doc), 0644, err);
}

/*
 * Only a run with suite tests has one: KCIDB has no words for the assertions
 * on the samples. A run without them takes away an earlier run's (--force
 * into its directory), so no file there speaks for another run.
 */
static int write_kcidb(const struct vn_result_run *r, const char *dir, struct vn_error *err)
{
	_cleanup_free_ char *path = vn_xasprintf("%s/kcidb.json", dir);

	if (!r->ntests) {
		if (unlink(path) < 0 && errno != ENOENT)
			return vn_infra_error(err, -errno, "%s: %s", path, strerror(errno));
		return 0;
	}
	_cleanup_free_ char *text = vn_kcidb_text(r);

	return vn_file_write_text(path, text, err);
}

int vn_report_write(const struct vn_result_run *r, const char *dir, struct vn_error *err)
{
	int rc = write_json(r, dir, err);

	if (rc >= 0)
		rc = write_junit(r, dir, err);
	return rc < 0 ? rc : write_kcidb(r, dir, err);
}
