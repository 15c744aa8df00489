/* vnuma shell: a running guest's serial console on the caller's descriptors (shell.c). */
#pragma once

#include "testbed/testbed.h"

/* Told once the guest is found, before its console is attached: where the caller says how to leave. */
typedef void (*vn_shell_attached_fn)(void *data, const char *name);

/*
 * Attaches in and out to guest name's console until Ctrl-] or the console
 * ends. A name vnuma did not make, or none, is an input error
 * (vn_testbed_lookup); libvirt's errors are infrastructure ones. attached
 * may be NULL.
 */
int vn_testbed_shell(const struct vn_testbed_ctx *ctx, const char *name, int in, int out, vn_shell_attached_fn attached,
		     void *data, struct vn_error *err);
