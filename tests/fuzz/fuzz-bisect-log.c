/*
 * Fuzz target for bisect.log read back (vn_bisect_log_apply): what a second
 * start resumes from and what --replay LOG starts from, a file anyone may
 * have edited or sent. It must apply or be refused as bad input with a
 * message naming the line, never crash; what it applied stays within bounds
 * (marks known, runs at most VN_BISECT_RUNS_MAX, exits 0, 1 or 3, strings
 * cleaned) and the table of it can be printed. Three commits of a range
 * (hashes of 'a', 'b', 'c') are what records may name. Built like
 * fuzz-topology.c.
 */
#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bisect/bisect-priv.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct vn_bisect_commit c[3];
	struct vn_error err = {0};
	static const char good[] = "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa",
			  mid[] = "bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb",
			  bad[] = "cccccccccccccccccccccccccccccccccccccccc",
			  sha[] = "5555555555555555555555555555555555555555555555555555555555555555";

	memset(c, 0, sizeof(c));
	snprintf(c[0].hash, sizeof(c[0].hash), "%s", good);
	snprintf(c[1].hash, sizeof(c[1].hash), "%s", mid);
	snprintf(c[2].hash, sizeof(c[2].hash), "%s", bad);
	/* What the corpus's start records say (tests/fuzz/corpus/bisect-log). */
	struct vn_bisect_log_state st = {.commits = c,
					 .ncommits = 3,
					 .want = {.good = good,
						  .bad = bad,
						  .scenario = "s.json",
						  .scenario_sha256 = sha,
						  .recipe = "",
						  .recipe_sha256 = "",
						  .arch = "x86_64",
						  .flaky = 1,
						  .repeats = 3,
						  .repeats_max = 8,
						  .alpha = 0.05}};
	/* The first byte picks the judgement the start record must name. */
	if (size && (data[0] & 1))
		st.want.metric = "vmstat.numa_pages_migrated";
	snprintf(st.cur_bad, sizeof(st.cur_bad), "%s", bad);
	int rc = vn_bisect_log_apply(&st, (const char *)data, size, "bisect.log", &err);
	if (rc < 0 && (err.kind != VN_ERR_INPUT || !strstr(err.msg, "bisect.log:")))
		abort();
	for (size_t i = 0; i < 3; i++) {
		if (c[i].mark > VN_BISECT_SKIP || c[i].nruns > VN_BISECT_RUNS_MAX)
			abort();
		for (size_t r = 0; r < c[i].nruns; r++)
			if ((c[i].runs[r].exit != 0 && c[i].runs[r].exit != 1 && c[i].runs[r].exit != 3) ||
			    isinf(c[i].runs[r].value))
				abort();
		for (const char *s = c[i].why; s && *s; s++)
			if ((unsigned char)*s < 0x20)
				abort();
	}
	/* What the CLI prints of it. */
	struct vn_bisect_result res = {.ncommits = 3, .commits = c};
	struct vn_bisect_policy p;
	vn_bisect_policy_default(&p);
	p.metric = st.want.metric;
	free(vn_bisect_format_table(&res, &p));
	for (size_t i = 0; i < 3; i++) {
		free(c[i].why);
		free(c[i].subject);
		free(c[i].kernel);
		for (size_t r = 0; r < c[i].nruns; r++)
			free(c[i].runs[r].dir);
		free(c[i].runs);
	}
	vn_error_clear(&err);
	return 0;
}

#ifndef VN_LIBFUZZER
#include "replay-main.h"
#endif
