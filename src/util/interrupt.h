/*
 * Ctrl-C and friends: the CLI installs handlers that only set a flag; every
 * wait loop in the library polls it so it can clean up (destroy a half-booted
 * guest, remove temp files) before the process exits.
 */
#pragma once

#include <signal.h>
#include <stdbool.h>

extern volatile sig_atomic_t vn_interrupted; /* the signal number, or 0 */

/* SIGINT, SIGTERM, SIGHUP set vn_interrupted; SIGPIPE is ignored. */
void vn_interrupt_install(void);

static inline bool vn_was_interrupted(void)
{
	return vn_interrupted != 0;
}
