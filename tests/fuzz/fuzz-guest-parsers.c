/*
 * Fuzz target for the parsers of what the guest reports: dmesg's fallback
 * lines (vn_fallback_parse_log), /proc/vmstat, nodeN/numastat and meminfo
 * (vn_metrics_parse_kv), samples.jsonl (vn_samples_parse and the questions
 * the assertions ask of it), and the cpulist/nodelist files the fidelity
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
	(void)vn_samples_time_to_local(&s, NULL, 0, 0.9);
	vn_samples_avg_running(&s, avg, VN_MAX_NODES);
	vn_samples_cost(&s, &mean, &max);
	vn_samples_free(&s);
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
		json_object_put(vn_metrics_delta(kv, kv));
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
	return 0;
}

#ifndef VN_LIBFUZZER
#include "replay-main.h"
#endif
