/*
 * Fuzz target for result.json read back (vn_result_parse): compare, the
 * page and a matrix's cells read runs that may be anyone's. A file must
 * load or be refused as bad input naming result.json, never crash; what
 * loads is written (vn_result_text) and that text loads again and is
 * written the same, byte for byte. Built like fuzz-topology.c.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "report/result.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct vn_result_run a, b;
	struct vn_error err = {0};
	char *text = malloc(size + 1);

	if (!text)
		abort();
	memcpy(text, data, size);
	text[size] = '\0';
	int rc = vn_result_parse(text, "result.json", &a, &err);
	free(text);
	if (rc < 0) {
		if (err.kind != VN_ERR_INPUT || strncmp(err.msg, "result.json", 11) != 0)
			abort();
		vn_result_clear(&a);
		vn_error_clear(&err);
		return 0;
	}
	char *once = vn_result_text(&a);
	if (vn_result_parse(once, "again", &b, &err) < 0)
		abort();
	char *twice = vn_result_text(&b);
	if (strcmp(once, twice) != 0)
		abort();
	free(once);
	free(twice);
	vn_result_clear(&a);
	vn_result_clear(&b);
	return 0;
}

#ifndef VN_LIBFUZZER
#include "replay-main.h"
#endif
