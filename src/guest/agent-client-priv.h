/*
 * What the connection (agent-client.c) and the exec API (agent-exec.c)
 * share: the connection's state and the bounded, deadline-checked wait for
 * the next decoded message. Nothing outside src/guest/ includes this.
 */
#pragma once

#include "guest/agent-priv.h"

#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* How long the client waits past the guest-side exec timeout for the verdict. */
#define EXEC_GRACE_MS 10000
/* Longest single poll(): the interrupt flag and forwarded signals are seen this often. */
#define SLICE_MS 100
/* While execs run: a hello every 5 s; an agent silent for 60 s (a loaded TCG guest answers in well under 1 s) is lost. */
#define VN_AGENT_PROBE_EVERY_MS   5000
#define VN_AGENT_PROBE_TIMEOUT_MS 60000
/* Host stdin chunk; base64 grows it by a third. */
#define STDIN_CHUNK 49152
/* One read() from the socket. */
#define READ_CHUNK 65536
/* An idle input buffer bigger than this is given back. */
#define BUF_KEEP (1u << 20)

struct vn_agent {
	int fd;
	int lock_fd; /* the channel's lock (agent-channel.h), held while connected; -1: none */
	int64_t next_id;
	char *guest; /* "guest NAME", how errors name the other end */
	char *buf;
	size_t off, scan, len, cap; /* unparsed input is buf[off..len); buf[off..scan) holds no '\n' */
	bool discard;               /* dropping the rest of a line that was too long */
	size_t line_max;            /* tests: a lower cap for every line; 0: none */
	int64_t *execs;             /* ids of the execs started here that have not ended */
	size_t nexecs, execs_cap;
	struct vn_agent_msg last; /* the message behind the last event handed out */
	/*
	 * Liveness while execs run: a killed agent is respawned by the guest's
	 * init and its commands are gone, but the channel never closes, so
	 * nothing would ever answer them. Every probe_every_ms a hello goes out;
	 * an answer from another pid, or none for probe_timeout_ms, ends the wait.
	 */
	int64_t agent_pid;               /* from the first hello answered; 0: unknown */
	int64_t probe_first, probe_last; /* ids of the unanswered probes; probe_first < 0: none */
	int64_t probe_since, probe_next; /* first unanswered probe sent at; next one due at */
	int probe_every_ms, probe_timeout_ms;
	/* The caller's check of the other end (vn_agent_set_watch), due again at watch_next. */
	vn_agent_watch_fn watch;
	void *watch_data;
	void (*watch_free)(void *);
	int64_t watch_next;
	bool watch_fired;
};

/* What one wait for input is bounded by. */
struct wait {
	int64_t deadline; /* < 0: none */
	size_t max_line;
	int extra_fd;                 /* also polled for input (exec's stdin); -1: none */
	volatile sig_atomic_t *fwd;   /* a pending signal to forward ends the wait too */
	volatile sig_atomic_t *winch; /* so does a window size to pass on */
};

/* deadline < 0: none. */
int64_t vn_agent_deadline_after(int timeout_ms);
bool vn_agent_expired(int64_t deadline);
int vn_agent_send_msg(struct vn_agent *a, struct json_object *msg, int64_t deadline, struct vn_error *err);
/* The next decoded message within w: 0, 1 when w->extra_fd is readable, -ETIMEDOUT / -EINTR quietly, or an error. */
int vn_agent_next_msg(struct vn_agent *a, const struct wait *w, struct vn_agent_msg *m, struct vn_error *err);
/* Turns vn_agent_next_msg()'s quiet -ETIMEDOUT / -EINTR into errors saying what was awaited. */
int vn_agent_wait_failed(struct vn_agent *a, int rc, int timeout_ms, const char *what, struct vn_error *err);
/* The execs this connection started and has not seen end. */
void vn_agent_track(struct vn_agent *a, int64_t id);
bool vn_agent_tracked(const struct vn_agent *a, int64_t id);
void vn_agent_untrack(struct vn_agent *a, int64_t id);
/* Gives req the next id and sends it (req consumed); pipelined requests wait for their replies later. */
int vn_agent_request_send(struct vn_agent *a, struct json_object *req, int64_t deadline, int64_t *id,
			  struct vn_error *err);
/* The final reply to request id within w (others dropped); "ok": false is the error. */
int vn_agent_reply_wait(struct vn_agent *a, int64_t id, const char *op, const struct wait *w, int timeout_ms,
			struct json_object **reply, struct vn_error *err);
/* vn_agent_call() with another line cap, for replies that carry data. */
int vn_agent_call_max(struct vn_agent *a, struct json_object *req, int timeout_ms, size_t max_line,
		      struct json_object **reply, struct vn_error *err);
/* {"op": op} with the next id. */
struct json_object *vn_agent_new_request(const char *op);
struct json_object *vn_agent_b64_string(const void *data, size_t len);
