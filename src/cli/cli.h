/* The thin CLI: argument parsing and printing only; the work is in the layers. */
#pragma once

#include <stdbool.h>

#include "util/error.h"

enum {
	VN_EXIT_OK = 0,
	VN_EXIT_ASSERT = 1, /* an assertion about the kernel failed */
	VN_EXIT_INPUT = 2,  /* bad input */
	VN_EXIT_INFRA = 3,  /* could not boot, libvirt error, timeout */
};

/*
 * A command returns an exit code (>= 0) or a negative errno with err filled;
 * main() prints err once and maps its kind to the exit code.
 */
typedef int (*vn_cmd_fn)(int argc, char **argv, struct vn_error *err);

struct vn_cmd {
	const char *name;
	vn_cmd_fn fn;
	const char *summary;
};

/* One per command group, each in its own cmd-*.c. */
int cmd_topo(int argc, char **argv, struct vn_error *err);
int cmd_up(int argc, char **argv, struct vn_error *err);
int cmd_down(int argc, char **argv, struct vn_error *err);
int cmd_list(int argc, char **argv, struct vn_error *err);
int cmd_status(int argc, char **argv, struct vn_error *err);
int cmd_exec(int argc, char **argv, struct vn_error *err);
int cmd_shell(int argc, char **argv, struct vn_error *err);
int cmd_collect(int argc, char **argv, struct vn_error *err);
int cmd_run(int argc, char **argv, struct vn_error *err);
int cmd_scenario(int argc, char **argv, struct vn_error *err);
int cmd_kernel(int argc, char **argv, struct vn_error *err);

/* Kernel build progress on stderr (a vn_kernel_progress_fn and its state). */
struct vn_cli_progress {
	bool tty, used;
	double t0;
	char stage[32];
	int width;
};
void vn_cli_progress_init(struct vn_cli_progress *p);
void vn_cli_progress(void *data, const char *stage, const char *line);
void vn_cli_progress_done(struct vn_cli_progress *p);
double vn_cli_progress_elapsed(const struct vn_cli_progress *p);

/* --state-dir (getopt code 'S') and --connect ('C'), shared by the guest commands. */
struct vn_cli_common {
	const char *state_dir, *uri;
};
struct vn_testbed_ctx;
int vn_cli_common_opt(int c, const char *arg, struct vn_cli_common *co);
int vn_cli_ctx(const struct vn_cli_common *co, struct vn_testbed_ctx *ctx, struct vn_error *err);

/* True when argv holds -h/--help before any "--". */
int vn_cli_wants_help(int argc, char **argv);
