/* The dispatch table's rows; add a command by adding its line here. */
#pragma once

#define VN_CLI_COMMANDS \
	{"up", cmd_up, "boot a topology, wait for the guest agent, check fidelity"},                 \
	{"list", cmd_list, "list vnuma guests"},                                                       \
	{"status", cmd_status, "one guest's topology, kernel, accelerator and uptime"},                \
	{"down", cmd_down, "destroy a guest (or --all), leaving nothing behind"},                      \
	{"exec", cmd_exec, "run a command in a guest, mirroring its output and exit code"},            \
	{"shell", cmd_shell, "interactive root shell on a guest's console (Ctrl-] leaves)"},           \
	{"collect", cmd_collect, "one snapshot: vmstat, per-node numastat/meminfo, distances, dmesg"}, \
	{"run", cmd_run, "run a scenario: boot, workloads, samples, assertions, result.json/junit.xml"}, \
	{"scenario", cmd_scenario, "offline: validate scenarios exactly as run would, without booting"}, \
	{"topo", cmd_topo, "offline: validate, show a topology, print the model's fallback order"},  \
	{"kernel", cmd_kernel, "build a guest kernel from a recipe (source + patches + config), list the cache"},
