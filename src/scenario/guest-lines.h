/*
 * The lines our own helper scripts print in the guest, parsed into types.
 * The guest is hostile even when the script is ours: every line is bounded
 * and checked, and one that does not parse is a failure to observe
 * (VN_ERR_INFRA, naming the guest and the line, cleaned), never a 0.
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>

#include "util/error.h"

/* Longer than any line these scripts print: a longer one is not theirs. */
#define VN_GUEST_LINE_MAX 512

/* A move action's line: "pid PID" for each process moved, then /proc/uptime ("SECONDS IDLE"). */
struct vn_guest_move_line {
	bool is_pid;
	int pid;       /* is_pid: > 0 */
	double uptime; /* else: seconds, finite, >= 0 */
};
int vn_guest_move_line_parse(const char *guest, const char *line, struct vn_guest_move_line *out, struct vn_error *err);

/* The pidfile listing's line: "STEP.INDEX.pid PID". */
struct vn_guest_pidfile_line {
	char step[256];
	unsigned index;
	int pid; /* > 0 */
};
int vn_guest_pidfile_line_parse(const char *guest, const char *line, struct vn_guest_pidfile_line *out,
				struct vn_error *err);
