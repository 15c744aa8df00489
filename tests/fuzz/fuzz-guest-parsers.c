/*
 * Fuzz target for the parsers of what the guest reports: dmesg's fallback
 * lines (vn_fallback_parse_log), /proc/vmstat, nodeN/numastat and meminfo
 * (vn_metrics_parse_kv), samples.jsonl (vn_samples_parse and the questions
 * the assertions ask of it), tracefs format files and trace_pipe lines
 * (metrics/trace.h), and the cpulist/nodelist files the fidelity
 * check reads. The guest runs a kernel under test: whatever it prints must
 * parse or be refused, never crash. Built like fuzz-topology.c.
 */
#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "metrics/kv.h"
#include "metrics/samples.h"
#include "metrics/trace.h"
#include "topology/fallback.h"
#include "util/parse.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void samples(const char *text)
{
	struct vn_samples s;
	struct vn_error err = {0};

	if (vn_samples_parse(text, "fuzz.jsonl", &s, &err) < 0) {
		if (err.kind == VN_ERR_NONE || !err.msg[0])
			abort();
		vn_error_clear(&err);
		return;
	}
	/* What parsed must be safe for every question an assertion asks. */
	double avg[VN_MAX_NODES], mean, max;
	int pids[2] = {1, 0};
	for (unsigned i = 0; i < s.n; i++) {
		const struct vn_sample *x = &s.v[i];
		if (x->nnodes > VN_MAX_NODES)
			abort();
		for (unsigned node = 0; node < x->nnodes; node++)
			(void)vn_samples_fraction_on_node(x, NULL, 0, node);
		(void)vn_samples_local_fraction(x, NULL, 0);
		(void)vn_samples_local_fraction(x, pids, 2);
		if (x->nprocs)
			(void)vn_sample_proc_find(x, x->procs[0].pid);
	}
	vn_samples_avg_running(&s, avg, VN_MAX_NODES);
	vn_samples_cost(&s, &mean, &max);
	vn_samples_free(&s);
}

/* Debian 6.1's mm_migrate_pages, so that lines have a format to meet when the input is not one. */
static const char migrate_format[] =
	"name: mm_migrate_pages\nID: 608\nformat:\n"
	"\tfield:unsigned short common_type;\toffset:0;\tsize:2;\tsigned:0;\n"
	"\tfield:unsigned long succeeded;\toffset:8;\tsize:8;\tsigned:0;\n"
	"\tfield:unsigned long failed;\toffset:16;\tsize:8;\tsigned:0;\n"
	"\tfield:enum migrate_mode mode;\toffset:48;\tsize:4;\tsigned:0;\n"
	"\tfield:char comm[16];\toffset:52;\tsize:16;\tsigned:1;\n"
	"\nprint fmt: \"nr_succeeded=%lu nr_failed=%lu mode=%s comm=%s\", REC->succeeded, REC->failed, "
	"__print_symbolic(REC->mode, {0, \"MIGRATE_ASYNC\"}), REC->comm\n";

/* The input as a format file, then each of its lines as a trace_pipe line for it and the fixed one. */
static void trace(const uint8_t *data, size_t size)
{
	struct vn_trace_format f[2];
	struct vn_error err = {0};
	unsigned n = 0;

	if (vn_trace_format_parse(migrate_format, sizeof(migrate_format) - 1, &f[n++], &err) < 0)
		abort();
	if (vn_trace_format_parse((const char *)data, size, &f[n], &err) == 0) {
		if (f[n].nfields > VN_TRACE_FIELDS_MAX || !memchr(f[n].name, '\0', sizeof(f[n].name)))
			abort();
		for (unsigned i = 0; i < f[n].nfields; i++)
			if (!f[n].fields[i].printed[0])
				abort();
		n++;
	} else if (!err.msg[0]) {
		abort();
	}
	vn_error_clear(&err);
	for (const uint8_t *line = data, *end = data + size; line < end;) {
		const uint8_t *nl = memchr(line, '\n', (size_t)(end - line));
		size_t len = (size_t)((nl ? nl : end) - line);
		struct vn_trace_event ev;
		if (!memchr(line, '\0', len) && vn_trace_line_parse((const char *)line, len, f, n, &ev, &err) == 0) {
			if (ev.format >= n || !ev.fields || !memchr(ev.comm, '\0', sizeof(ev.comm)))
				abort();
			if (!json_object_to_json_string(ev.fields))
				abort();
			json_object_put(ev.fields);
		}
		vn_error_clear(&err);
		line = nl ? nl + 1 : end;
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *text = malloc(size + 1);
	struct vn_error err = {0};
	struct vn_fallback f;
	struct json_object *kv = NULL;
	struct vn_cpuset set;

	if (!text)
		abort();
	memcpy(text, data, size);
	text[size] = '\0';

	if (vn_fallback_parse_log(text, &f, &err) == 0) {
		if (f.nnodes > VN_MAX_NODES)
			abort();
		for (unsigned n = 0; n < f.nnodes; n++)
			if (f.present[n] && f.len[n] > VN_MAX_NODES)
				abort();
		free(vn_fallback_format(&f));
		free(vn_fallback_diff(&f, &f));
	} else if (!err.msg[0]) {
		abort();
	}
	vn_error_clear(&err);

	if (vn_metrics_parse_kv(text, &kv, &err) == 0) {
		double d;
		json_object_object_foreach(kv, key, v)
		{
			(void)v;
			if (vn_metrics_counter_delta(kv, kv, key, &d) == VN_DELTA_OK && d != 0)
				abort();
		}
		json_object_put(kv);
	}
	vn_error_clear(&err);

	/* nodeN/cpulist, node/possible, node/has_memory: one line. */
	text[strcspn(text, "\n")] = '\0';
	if (vn_cpulist_parse(text, &set, &err) == 0)
		free(vn_cpulist_format(&set));
	vn_error_clear(&err);

	memcpy(text, data, size);
	samples(text);
	free(text);
	trace(data, size);
	return 0;
}

#ifndef VN_LIBFUZZER
#include "replay-main.h"
#endif
