/* vnuma cp's internals, for tests. */
#pragma once

#include "guest/copy.h"

#include <stdbool.h>
#include <sys/types.h>

/*
 * The mode a copy out of a guest gets on the host from the guest's mode:
 * never setuid or setgid; the sticky bit kept on a directory only; and,
 * unless preserve, the umask (mask) applied, as cp and tar do for a non-owner
 * (chmod itself bypasses the umask, so the copy applies it).
 */
mode_t vn_copy_host_mode(unsigned mode, bool dir, bool preserve, mode_t mask);
