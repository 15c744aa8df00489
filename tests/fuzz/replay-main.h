/*
 * The replay main() shared by every fuzz harness when it is built without
 * libFuzzer: each argument is a file or a directory of files (a corpus), and
 * each file goes through LLVMFuzzerTestOneInput() once, in a buffer of its
 * exact size so the sanitizers see any read past the end. Include it last,
 * inside #ifndef VN_LIBFUZZER.
 */
#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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
	uint8_t *exact = malloc(n ? n : 1);
	if (!exact)
		abort();
	memcpy(exact, buf, n);
	LLVMFuzzerTestOneInput(exact, n);
	free(exact);
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
