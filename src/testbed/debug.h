/*
 * vnuma debug and vnuma dump (debug.c, dump.c): QEMU's gdbstub on a
 * running guest, and memory-only dumps of it with the vmlinux they belong
 * to and a description beside them.
 */
#pragma once

#include <stdbool.h>
#include <stdint.h>

#include "kernel/vmlinux.h"
#include "testbed/testbed.h"
#include "util/error.h"
#include "virt/debug.h"

/* Tries at a free port before giving up: another process may take the one we chose before QEMU binds it. */
#define VN_GDBSTUB_TRIES 5

struct vn_gdbstub {
	unsigned port;                      /* QEMU listens on 127.0.0.1:port */
	char *kernel, *kernel_id, *release; /* what the guest booted, from its metadata; NULL: not said */
	struct vn_vmlinux vmlinux;          /* its vmlinux with symbols, or why there is none */
};
void vn_gdbstub_clear(struct vn_gdbstub *g);

/* The release in a guest's kernel identity ("RECIPE RELEASE (builder) #1 ..."), or NULL. */
char *vn_testbed_kernel_release(const char *kernel_id);

/*
 * Start the gdbstub of guest name on a free localhost port, and find the
 * vmlinux of the kernel it booted (debug_root: "" for this host's, a test's
 * tree otherwise). This host's guests only (a remote one: input error).
 */
int vn_testbed_gdbstub_start(const struct vn_testbed_ctx *ctx, const char *name, const char *debug_root,
			     struct vn_gdbstub *g, struct vn_error *err);
/* Stop it again, and resume the guest if gdb left it stopped (*resumed says so). A guest gone is no error. */
int vn_testbed_gdbstub_stop(const struct vn_testbed_ctx *ctx, const char *name, bool *resumed, struct vn_error *err);

/* "target remote 127.0.0.1:PORT" */
char *vn_gdbstub_target(const struct vn_gdbstub *g);
/* gdb's argv for g (NULL-terminated, each string malloc'd): its vmlinux, its gdb scripts, the target. */
char **vn_gdbstub_gdb_argv(const struct vn_gdbstub *g);
