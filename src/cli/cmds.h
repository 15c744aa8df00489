/* The dispatch table's rows; add a command by adding its line here. */
#pragma once

#define VN_CLI_COMMANDS \
	{"topo", cmd_topo, "offline: validate, show a topology, print the model's fallback order"},
