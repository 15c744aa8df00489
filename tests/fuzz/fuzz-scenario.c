/*
 * Fuzz target for the scenario parser, built like fuzz-topology.c: libFuzzer
 * with -DVN_FUZZ=ON, and always a replay main() over the stored corpus.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "scenario/scenario-types.h"
#include "scenario/scenario.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct vn_scenario *s = NULL;
	struct vn_error err = {0};
	char *text = malloc(size + 1);

	if (!text)
		return 0;
	memcpy(text, data, size);
	text[size] = '\0';
	if (vn_scenario_parse(text, "fuzz.json", &s, &err) == 0) {
		/* Whatever parses must survive --quick and being written back. */
		vn_scenario_apply_quick(s);
		free(vn_scenario_to_json(s));
		vn_scenario_free(s);
	} else if (err.kind != VN_ERR_INPUT || !err.msg[0]) {
		abort();
	}
	vn_error_clear(&err);
	free(text);
	return 0;
}

#ifndef VN_LIBFUZZER
#include "replay-main.h"
#endif
