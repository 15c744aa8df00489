/*
 * Fuzz target for the topology parser. Built for libFuzzer with clang
 * (-DVN_FUZZ=ON), and always built with a replay main() so the corpus runs
 * as a regression test in CI under the sanitizers.
 */
#include <dirent.h>
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
