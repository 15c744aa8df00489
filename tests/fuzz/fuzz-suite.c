/*
 * Fuzz target for what a test suite prints in the guest (src/suite): the
 * KTAP/TAP parser and LTP's, each over any bytes and every way a process
 * ends, must stay within their limits and leave every string clean: a run
 * of at most VN_SUITE_TESTS_MAX + 1 tests, names and reasons bounded, no
 * control character in a name. The first byte picks how the process ended.
 * Built like fuzz-topology.c; the corpus holds the recorded fixtures too.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "suite/known.h"
#include "suite/suite.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void check(const struct vn_suite_run *run)
{
	if (run->n > VN_SUITE_TESTS_MAX + 1 || run->nnotes > VN_SUITE_NOTES_MAX)
		abort();
	for (size_t i = 0; i < run->n; i++) {
		const struct vn_suite_test *t = &run->tests[i];
		if (!t->name || strlen(t->name) > VN_SUITE_NAME_MAX + 3 || (unsigned)t->verdict > VN_SUITE_TIMEOUT)
			abort();
		if (t->reason && strlen(t->reason) > VN_SUITE_REASON_MAX + 3)
			abort();
		for (const unsigned char *p = (const unsigned char *)t->name; *p; p++)
			if (*p < 0x20 && *p != '\t')
				abort();
	}
	if (vn_suite_run_exit(run) < 0 || vn_suite_run_exit(run) > 3)
		abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const struct vn_suite_exit ends[] = {
		{VN_SUITE_EXITED, 0},   {VN_SUITE_EXITED, 1},    {VN_SUITE_EXITED, 4},        {VN_SUITE_EXITED, 32},
		{VN_SUITE_SIGNALED, 9}, {VN_SUITE_TIMED_OUT, 0}, {VN_SUITE_NOT_STARTED, 127},
	};
	const struct vn_suite_exit *ex = size ? &ends[data[0] % (sizeof(ends) / sizeof(ends[0]))] : NULL;
	const char *out = (const char *)data;
	struct vn_suite_run run = {0};

	vn_suite_ktap_parse(out, size, "fuzz", ex, &run);
	check(&run);
	vn_suite_ltp_parse(out, size, "fuzz", ex, &run);
	check(&run);
	vn_suite_run_free(&run);

	/* And as a known-failure list, applied to nothing much. */
	char *text = malloc(size + 1);
	if (!text)
		abort();
	memcpy(text, data, size);
	text[size] = '\0';
	struct vn_known k = {0};
	struct vn_error err = {0};
	if (vn_known_parse(text, "fuzz.json", &k, &err) == 0)
		vn_known_match(&k, "move_pages04", "6.1.0-28-amd64");
	else if (err.kind != VN_ERR_INPUT)
		abort();
	vn_known_free(&k);
	vn_error_clear(&err);
	free(text);
	return 0;
}

#ifndef VN_LIBFUZZER
#include "replay-main.h"
#endif
