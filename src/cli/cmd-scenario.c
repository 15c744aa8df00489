/* vnuma scenario validate: check scenarios offline, exactly as run would before booting. */
#include <stdio.h>
#include <string.h>

#include "cli/cli.h"
#include "scenario/runner.h"
#include "util/cleanup.h"

static void scenario_usage(FILE *out)
{
	fprintf(out,
		"usage: vnuma scenario validate FILE...\n\n"
		"Checks each scenario without booting, exactly as 'vnuma run' does before it\n"
		"boots: the schema, the topology file and every node the steps, actions,\n"
		"hugetlb pages and assertions name, the kernel, and the guest name it derives.\n"
		"Prints 'FILE: ok' per good file; a bad one is 'FILE: $.json.path: message' on\n"
		"stderr. Exit 0 when all are good, 2 when any is not.\n");
}

static int scenario_validate(int argc, char **argv, struct vn_error *err)
{
	int bad = 0;

	if (argc < 2)
		return vn_input_error(err, "validate needs at least one FILE (see 'vnuma scenario --help')");
	for (int i = 1; i < argc; i++) {
		_cleanup_scenario_ struct vn_scenario *s = NULL;
		_cleanup_free_ char *topo = NULL;
		struct vn_error e = {0};

		if (vn_scenario_load(argv[i], &s, &e) < 0 || vn_scenario_check(s, &topo, NULL, &e) < 0) {
			fprintf(stderr, "%s\n", e.msg);
			vn_error_clear(&e);
			bad++;
			continue;
		}
		printf("%s: ok\n", argv[i]);
	}
	return bad ? VN_EXIT_INPUT : VN_EXIT_OK;
}

int cmd_scenario(int argc, char **argv, struct vn_error *err)
{
	if (argc < 2) {
		scenario_usage(stderr);
		return VN_EXIT_INPUT;
	}
	if (strcmp(argv[1], "-h") == 0 || strcmp(argv[1], "--help") == 0) {
		scenario_usage(stdout);
		return VN_EXIT_OK;
	}
	if (strcmp(argv[1], "validate") == 0)
		return scenario_validate(argc - 1, argv + 1, err);
	return vn_input_error(err, "unknown subcommand '%s' (see 'vnuma scenario --help')", argv[1]);
}
