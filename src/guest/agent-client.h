/*
 * Host side of the guest agent protocol (docs/agent-protocol.md): talks to
 * vnuma-agent over the unix socket QEMU exposes for the virtio-serial
 * channel. This is the one place that decodes what the guest sends (JSON
 * lines, ids, stream/final, base64): every field is type-checked and every
 * line bounded, and a message that breaks the protocol is a VN_ERR_INFRA
 * error (-EBADMSG) naming the guest. Every call takes a deadline; a timeout
 * is VN_ERR_INFRA/-ETIMEDOUT, and Ctrl-C (util/interrupt.h) ends any wait
 * with VN_ERR_INFRA/-EINTR. A connection is not thread-safe. Commands and
 * files have headers of their own (agent-exec.h, agent-file.h).
 */
#pragma once

#include "agent/protocol.h"
#include "util/cleanup.h"
#include "util/error.h"

#include <json-c/json.h>
#include <stdbool.h>
#include <stdint.h>

/*
 * How long one request to a running agent may take, in ms: a reply that takes
 * longer means a stuck guest. A loaded TCG guest answers in well under 1 s.
 */
#define VN_AGENT_REPLY_MS 10000
/* A signal to a command, or a read of a tiny file, where waiting long helps nobody. */
#define VN_AGENT_CONTROL_MS 5000
/* vn_agent_exec()'s start of its command: the agent may be busy starting others. */
#define VN_AGENT_EXEC_START_MS 30000

struct vn_agent;

/*
 * Connects to QEMU's end of the channel, retrying while the socket does not
 * exist or refuses (the domain is still starting) until timeout_ms passes.
 * Connecting says nothing about the guest: use vn_agent_hello() for that.
 */
int vn_agent_connect(const char *socket_path, int timeout_ms, struct vn_agent **out, struct vn_error *err);
/* Wraps an open stream fd (tests: one end of a socketpair); takes ownership on success. */
int vn_agent_from_fd(int fd, struct vn_agent **out, struct vn_error *err);
/*
 * Which guest errors name: "guest NAME". vn_agent_connect() derives NAME from
 * a socket path STATE/guests/NAME/agent.sock (else the path itself).
 */
void vn_agent_set_guest(struct vn_agent *a, const char *name);

/*
 * While execs run, waits for their events send a hello every every_ms and
 * end with an infrastructure error when it is answered by another agent pid
 * (the agent was killed and respawned: its commands are gone, but the
 * channel never closes) or not at all for timeout_ms. Defaults 5 s / 60 s;
 * every_ms 0 turns it off. Needs the agent's pid from vn_agent_hello().
 */
void vn_agent_set_liveness(struct vn_agent *a, int every_ms, int timeout_ms);
const char *vn_agent_guest(const struct vn_agent *a); /* "guest NAME" */

/*
 * What the connection cannot see by itself: whether the guest behind it
 * still runs (a guest that powered off or panicked may leave its channel
 * open and silent). fn is called at least every VN_AGENT_WATCH_MS during
 * every wait on the connection, and at once when it closes; a negative
 * return, with err filled, ends the wait with that error, and fn should keep
 * saying so when called again. free_fn(data) runs at close (free_fn may be NULL).
 */
#define VN_AGENT_WATCH_MS 1000
typedef int (*vn_agent_watch_fn)(void *data, struct vn_error *err);
void vn_agent_set_watch(struct vn_agent *a, vn_agent_watch_fn fn, void *data, void (*free_fn)(void *));
/* Whether the watch has ended a wait: the guest is gone. */
bool vn_agent_watch_fired(const struct vn_agent *a);
void vn_agent_close(struct vn_agent *a);
VN_DEFINE_CLEANUP(struct vn_agent *, vn_agent_close);
#define _cleanup_agent_ _cleanup_(vn_agent_closep)

/*
 * Waits until the guest agent answers. The socket is up as soon as QEMU
 * starts but the agent only seconds later, so hello is resent every
 * resend interval (1 s) until a reply to any of them arrives. reply (optional)
 * receives the agent's answer: kernel, version, machine, uptime_s, agent, ops
 * (only id, ok and error are checked here: check the type of any other field read).
 */
int vn_agent_hello(struct vn_agent *a, int timeout_ms, struct json_object **reply, struct vn_error *err);

/*
 * A guest restored from a snapshot made current: its clock set to
 * realtime_ns (CLOCK_REALTIME, ns) and seed (1..VN_AGENT_WAKE_SEED_MAX
 * bytes, the host's random ones) mixed into its random pool. *step_ns: how
 * far the guest's clock moved (0 when it did not say).
 */
int vn_agent_wake(struct vn_agent *a, int64_t realtime_ns, const void *seed, size_t len, int timeout_ms,
		  int64_t *step_ns, struct vn_error *err);

/*
 * Low level, for ops without a wrapper. vn_agent_call() assigns req's "id",
 * sends it, and returns the final reply (a message without "stream") with
 * that id; other messages are dropped, events of running execs included. An
 * "ok":false reply is an error carrying the agent's message. Replies may be
 * at most 1 MiB (VN_AGENT_LINE_MAX_SMALL). req is consumed in every case.
 */
int vn_agent_call(struct vn_agent *a, struct json_object *req, int timeout_ms, struct json_object **reply,
		  struct vn_error *err);
/* Allocates a fresh request id. */
int64_t vn_agent_next_id(struct vn_agent *a);
