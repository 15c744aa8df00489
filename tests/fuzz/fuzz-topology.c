/*
 * Fuzz target for the topology parser. Built for libFuzzer with clang
 * (-DVN_FUZZ=ON), and always built with a replay main() so the corpus runs
 * as a regression test in CI under the sanitizers.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "topology/fallback.h"
#include "topology/topology.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct vn_topology *t = NULL;
	struct vn_error err = {0};

	if (vn_topology_parse((const char *)data, size, "fuzz.xml", &t, &err) == 0) {
		/* Whatever parses must be safe for everything downstream. */
		struct vn_fallback_opts o = VN_FALLBACK_OPTS_DEFAULT;
		struct vn_fallback f;
		vn_fallback_compute(t, &o, &f);
		free(vn_fallback_format(&f));
		free(vn_topology_warnings(t));
		vn_topology_free(t);
	} else if (err.kind != VN_ERR_INPUT || !err.msg[0]) {
		abort(); /* every rejection must be an input error with a message */
	}
	vn_error_clear(&err);
	return 0;
}

#ifndef VN_LIBFUZZER
#include "replay-main.h"
#endif
