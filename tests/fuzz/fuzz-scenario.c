/*
 * Fuzz target for the scenario parser, built like fuzz-topology.c: libFuzzer
 * with -DVN_FUZZ=ON, and always a replay main() over the stored corpus.
 */
#include <dirent.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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
static int replay_file(const char *path)
{
	FILE *f = fopen(path, "rb");
	if (!f) {
		perror(path);
		return 1;
	}
	static uint8_t buf[1 << 20];
	size_t n = fread(buf, 1, sizeof(buf), f);
	fclose(f);
	LLVMFuzzerTestOneInput(buf, n);
	return 0;
}

int main(int argc, char **argv)
{
	int files = 0, rc = 0;

	for (int i = 1; i < argc; i++) {
		DIR *d = opendir(argv[i]);
		if (!d) {
			rc |= replay_file(argv[i]);
			files++;
			continue;
		}
		for (struct dirent *e; (e = readdir(d));) {
			if (e->d_name[0] == '.')
				continue;
			char path[4096];
			snprintf(path, sizeof(path), "%s/%s", argv[i], e->d_name);
			rc |= replay_file(path);
			files++;
		}
		closedir(d);
	}
	printf("replayed %d inputs\n", files);
	return rc || files == 0;
}
#endif
