/*
 * Which of a guest's agent channels a host client takes. QEMU's unix socket
 * for a virtio-serial port accepts one client at a time and a second one's
 * bytes wait unread until the first leaves, so clients that talk to the
 * guest at once (a run, a second shell's exec) each take their own channel,
 * claimed by an flock on the channel's lock file for as long as they are
 * connected: a client that dies frees it with its fds.
 */
#pragma once

#include "util/error.h"

/*
 * Claims the first free channel of the guest whose channel 0 socket is
 * SOCK0 (vn_state_agent_channel()): its socket path in *path and the held
 * lock's fd (>= 0) as the return. A channel whose socket is missing while
 * channel 0's is there is skipped (a guest booted with fewer). When all are
 * held: -EBUSY at once, the error naming the processes that hold them.
 */
int vn_agent_channel_claim(const char *sock0, char **path, struct vn_error *err);
