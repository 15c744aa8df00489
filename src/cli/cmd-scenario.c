/* vnuma scenario validate: check scenarios offline, exactly as run would before booting. */
#include <stdio.h>
#include <string.h>

#include "cli/args.h"
#include "cli/cli.h"
#include "scenario/runner.h"
#include "util/cleanup.h"

static const struct vn_cmd scenario_validate_cmd;

static int scenario_validate(int argc, char **argv, struct vn_error *err)
{
	int bad = 0;

	if (argc < 2)
		return vn_input_error(err, "validate needs at least one FILE (see 'vnuma scenario --help')");
	if (vn_cli_wants_help(argc, argv)) {
		vn_cli_usage(stdout, &vn_cmd_scenario);
		return VN_EXIT_OK;
	}
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

static const struct vn_cmd scenario_validate_cmd = {
	.name = "validate",
	.fn = scenario_validate,
	.summary = "check scenarios offline, exactly as run does before it boots",
	.synopsis = "FILE...",
	.description = "Checks each scenario without booting, exactly as 'vnuma run' does before it\n"
		       "boots: the schema, the topology file and every node the steps, actions,\n"
		       "hugetlb pages and assertions name, the kernel, and the guest name it derives.\n"
		       "Prints 'FILE: ok' per good file; a bad one is 'FILE: $.json.path: message' on\n"
		       "stderr. Exit 0 when all are good, 2 when any is not.",
	.operand = VN_VAL_SCENARIO,
};

static const struct vn_cmd *const scenario_subs[] = {&scenario_validate_cmd, NULL};

const struct vn_cmd vn_cmd_scenario = {
	.name = "scenario",
	.summary = "offline: validate scenarios exactly as run would, without booting",
	.description = "FILE is a scenario file, or the name of a shipped one (scenarios/NAME.json).",
	.subs = scenario_subs,
};
