/* The dispatch table's rows; add a command by adding its record here (see struct vn_cmd). */
#pragma once

#define VN_CLI_COMMANDS                                                                                         \
	&vn_cmd_up, &vn_cmd_list, &vn_cmd_status, &vn_cmd_down, &vn_cmd_exec, &vn_cmd_cp, &vn_cmd_hotplug,      \
		&vn_cmd_shell, &vn_cmd_collect, &vn_cmd_debug, &vn_cmd_dump, &vn_cmd_run, &vn_cmd_bisect,       \
		&vn_cmd_compare, &vn_cmd_report, &vn_cmd_scenario, &vn_cmd_topo, &vn_cmd_kernel, &vn_cmd_image, \
		&vn_cmd_cache, &vn_cmd_doctor, &vn_cmd_hosts, &vn_cmd_help, &vn_cmd_complete,
