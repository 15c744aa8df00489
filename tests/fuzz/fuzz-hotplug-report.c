/*
 * Fuzz target for what `vnuma hotplug`'s guest script prints
 * (vn_testbed_hotplug_report): the guest's counts of fallback-list rebuilds,
 * its has_memory lists, the blocks it onlined, each node's cpulist and
 * MemTotal. The guest runs a kernel under test and may print anything there:
 * it must parse or be refused (VN_ERR_INFRA with a message), never crash,
 * and what parsed stays within the model's bounds. The first byte picks the
 * request (its node and whether memory is removed), the rest is the output.
 * Built like fuzz-topology.c.
 */
#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "testbed/hotplug-guest.h"
#include "testbed/testbed-priv.h"
#include "util/parse.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct vn_hotplug_req q = {.name = "fuzz", .timeout_ms = 1000};
	struct vn_hotplug_result r;
	struct vn_error err = {0};

	if (size) {
		q.node = data[0] & 0x7f;
		q.remove = data[0] & 0x80;
		data++, size--;
	}
	char *text = malloc(size + 1);
	if (!text)
		abort();
	memcpy(text, data, size);
	text[size] = '\0';
	memset(&r, 0, sizeof(r));
	int rc = vn_testbed_hotplug_report(text, &q, &r, &err);
	if (rc < 0) {
		if (rc != -EBADMSG || err.kind != VN_ERR_INFRA || !err.msg[0])
			abort();
	} else if (rc != 0 || err.kind != VN_ERR_NONE) {
		abort();
	} else {
		/* What `vnuma hotplug` prints of it. */
		free(vn_cpulist_format(&r.node_cpus));
	}
	vn_error_clear(&err);
	free(text);
	return 0;
}

#ifndef VN_LIBFUZZER
#include "replay-main.h"
#endif
