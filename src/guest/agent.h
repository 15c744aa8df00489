/*
 * Host side of the guest agent protocol (docs/agent-protocol.md): talks to
 * vnuma-agent over the unix socket QEMU exposes for the virtio-serial
 * channel. Every call takes a deadline; a timeout is VN_ERR_INFRA/-ETIMEDOUT.
 * A connection is not thread-safe and serves one call at a time.
 */
#pragma once

#include "agent/protocol.h"
#include "util/error.h"
#include "util/strbuf.h"

#include <json-c/json.h>
#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* The libvirt <channel> target name; the agent looks for this port. */
#define VN_AGENT_CHANNEL_NAME VN_AGENT_PORT_NAME

struct vn_agent;

/*
 * Connects to QEMU's end of the channel, retrying while the socket does not
 * exist or refuses (the domain is still starting) until timeout_ms passes.
 * Connecting says nothing about the guest: use vn_agent_hello() for that.
 */
int vn_agent_connect(const char *socket_path, int timeout_ms, struct vn_agent **out, struct vn_error *err);
/* Wraps an open stream fd (tests: one end of a socketpair); takes ownership on success. */
int vn_agent_from_fd(int fd, struct vn_agent **out, struct vn_error *err);
void vn_agent_close(struct vn_agent *a);
static inline void vn_agent_closep(struct vn_agent **a)
{
	if (*a)
		vn_agent_close(*a);
}
#define _cleanup_agent_ __attribute__((cleanup(vn_agent_closep)))

/*
 * Waits until the guest agent answers. The socket is up as soon as QEMU
 * starts but the agent only seconds later, so hello is resent every
 * resend interval (1 s) until a reply to any of them arrives. reply (optional)
 * receives the agent's answer: kernel, version, machine, uptime_s, agent, ops.
 */
int vn_agent_hello(struct vn_agent *a, int timeout_ms, struct json_object **reply, struct vn_error *err);

struct vn_agent_exec_opts {
	const char *const *argv;   /* NULL-terminated; no shell unless argv names one */
	const char *const *env;    /* optional "KEY=VALUE" entries added to the agent's environment */
	const char *cwd;           /* optional */
	int stdin_fd;              /* host fd whose contents become the command's stdin; -1: /dev/null */
	int stdout_fd, stderr_fd;  /* host fds the streams are copied to; -1: not copied */
	struct vn_strbuf *stdout_buf, *stderr_buf; /* optional: streams also collected here */
	/*
	 * The guest kills the command's process group after timeout_s (<= 0:
	 * never); the client then waits timeout_s plus a grace period for the
	 * verdict. With no timeout the client waits until the command ends or
	 * the connection drops.
	 */
	double timeout_s;
	/*
	 * Optional, for Ctrl-C: when *forward_signal becomes non-zero (set from a
	 * signal handler) that signal is sent to the command's process group in
	 * the guest and the flag is reset to 0. Polled at least every 100 ms.
	 */
	volatile sig_atomic_t *forward_signal;
};

/*
 * Runs a command in the guest. *exit_status: its exit code, or 128+N when
 * signal N killed it. A program that cannot be started (missing, not
 * executable, bad cwd) is VN_ERR_INPUT with the guest's errno; the guest-side
 * timeout is VN_ERR_INFRA/-ETIMEDOUT.
 */
int vn_agent_exec(struct vn_agent *a, const struct vn_agent_exec_opts *o, int *exit_status, struct vn_error *err);

/* Reads a whole guest file (up to 64 MiB); *data is NUL-terminated for convenience, caller frees. */
int vn_agent_read_file(struct vn_agent *a, const char *path, int timeout_ms, char **data, size_t *len,
		       struct vn_error *err);

enum {
	VN_AGENT_WRITE_APPEND = 1 << 0,
};
/* Writes (creates or truncates, or appends) a guest file; mode < 0: 0644 on creation, else set exactly. */
int vn_agent_write_file(struct vn_agent *a, const char *path, const void *data, size_t len, int mode,
			unsigned flags, int timeout_ms, struct vn_error *err);

/* Asks the guest to sync and power off; returns once the agent acknowledged. */
int vn_agent_poweroff(struct vn_agent *a, int timeout_ms, struct vn_error *err);

/*
 * Low level, for ops without a wrapper (and future streaming ones like
 * "sample"). vn_agent_call() assigns req's "id", sends it, and returns the
 * final reply (a message without "stream") with that id; other messages are
 * dropped. An "ok":false reply is an error carrying the agent's message.
 * req is consumed in every case.
 */
int vn_agent_call(struct vn_agent *a, struct json_object *req, int timeout_ms, struct json_object **reply,
		  struct vn_error *err);
/* Allocates a fresh request id. */
int64_t vn_agent_next_id(struct vn_agent *a);
/* Sends one message as is (consumed), waiting at most timeout_ms for the socket. */
int vn_agent_send(struct vn_agent *a, struct json_object *msg, int timeout_ms, struct vn_error *err);
/* Receives the next message, whatever its id. Lines that are not JSON objects are skipped. */
int vn_agent_recv(struct vn_agent *a, int timeout_ms, struct json_object **msg, struct vn_error *err);
