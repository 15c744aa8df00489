/* Progress lines on stderr while a kernel builds or a guest boots (progress.c). */
#pragma once

#include <stdbool.h>
#include <stddef.h>

/* Kernel build progress on stderr (a vn_kernel_progress_fn and its state). */
struct vn_cli_progress {
	bool tty, used;
	double t0;
	char stage[32];
	int width;
	char prefix[160]; /* before each boot status line: the matrix's "run k/n ..." */
	char what[16];    /* what vn_cli_progress's lines are about: "kernel" (default), "image" */
};
void vn_cli_progress_init(struct vn_cli_progress *p);
void vn_cli_progress(void *data, const char *stage, const char *line);
void vn_cli_progress_done(struct vn_cli_progress *p);
/* A vn_up_progress_fn: defining, booting, kernel started, agent answered, fidelity checked. */
void vn_cli_boot_progress(void *data, const char *stage, const char *detail);
double vn_cli_progress_elapsed(const struct vn_cli_progress *p);
struct vn_up_progress;
/* Both printers above, on p, for vnuma up and vnuma run. */
struct vn_up_progress vn_cli_progress_up(struct vn_cli_progress *p);
