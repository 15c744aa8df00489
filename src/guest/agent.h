/*
 * Host side of the guest agent protocol (docs/agent-protocol.md): talks to
 * vnuma-agent over the unix socket QEMU exposes for the virtio-serial
 * channel. This is the one place that decodes what the guest sends (JSON
 * lines, ids, stream/final, base64): every field is type-checked and every
 * line bounded, and a message that breaks the protocol is a VN_ERR_INFRA
 * error (-EBADMSG) naming the guest. Every call takes a deadline; a timeout
 * is VN_ERR_INFRA/-ETIMEDOUT, and Ctrl-C (util/interrupt.h) ends any wait
 * with VN_ERR_INFRA/-EINTR. A connection is not thread-safe.
 */
#pragma once

#include "agent/protocol.h"
#include "util/cleanup.h"
#include "util/error.h"
#include "util/sha256.h"
#include "util/strbuf.h"

#include <json-c/json.h>
#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
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
 * Asynchronous exec: any number of commands run at once on one connection;
 * their events arrive in the order the guest sends them.
 */
struct vn_agent_cmd {
	const char *const *argv; /* NULL-terminated; no shell unless argv names one */
	const char *const *env;  /* optional "KEY=VALUE" entries added to the agent's environment */
	const char *cwd;         /* optional */
	double timeout_s;        /* the guest kills the process group after this; <= 0: never */
	bool with_stdin;         /* stdin comes from vn_agent_exec_stdin(); false: /dev/null */
	bool as_user;            /* run as uid:gid instead of the agent's root */
	unsigned uid, gid;
	/* A pseudo-terminal in the guest as stdin, stdout and stderr (one stream, stdout), rows x cols. */
	bool tty;
	unsigned rows, cols;
};

/* Sends the exec request; *id names the command in its events and in signal/stdin. */
int vn_agent_exec_start(struct vn_agent *a, const struct vn_agent_cmd *c, int timeout_ms, int64_t *id,
			struct vn_error *err);
/* Signal to the command's process group; ignored by the guest once it ended. */
int vn_agent_exec_signal(struct vn_agent *a, int64_t id, int sig, int timeout_ms, struct vn_error *err);
/* A tty command's new window size; ignored for others and once it ended. */
int vn_agent_exec_resize(struct vn_agent *a, int64_t id, unsigned rows, unsigned cols, int timeout_ms,
			 struct vn_error *err);
/* Queues stdin for the command (data NULL: end of input). */
int vn_agent_exec_stdin(struct vn_agent *a, int64_t id, const void *data, size_t len, int timeout_ms,
			struct vn_error *err);

enum vn_agent_event_kind {
	VN_AGENT_EV_STDOUT = 1,
	VN_AGENT_EV_STDERR,
	VN_AGENT_EV_EXIT, /* the command's final reply; its id is forgotten afterwards */
};

struct vn_agent_event {
	enum vn_agent_event_kind kind;
	int64_t id;
	/* STDOUT/STDERR: decoded bytes (NUL-terminated), valid until the next wait on this connection. */
	const char *data;
	size_t len;
	/* EXIT */
	bool started;      /* false: the guest could not start it (missing, not executable, bad cwd) */
	bool timed_out;    /* the guest killed it at its timeout_s */
	int status;        /* exit code, or 128+N when signal N killed it; -1 when not started */
	int guest_errno;   /* the guest's errno when it failed, else 0 */
	const char *error; /* the guest's message when it failed, else NULL; valid like data */
};

/*
 * The next event of a command started on this connection (messages for other
 * ids are dropped). -ETIMEDOUT when none arrived within timeout_ms (< 0:
 * no limit), -EINTR when interrupted, -EBADMSG for a malformed message.
 */
int vn_agent_exec_wait(struct vn_agent *a, int timeout_ms, struct vn_agent_event *ev, struct vn_error *err);

/* Largest stdout_buf/stderr_buf by default; what the guest sends beyond it is dropped. */
#define VN_AGENT_EXEC_BUF_MAX (64u << 20)

struct vn_agent_exec_opts {
	const char *const *argv;  /* NULL-terminated; no shell unless argv names one */
	const char *const *env;   /* optional "KEY=VALUE" entries added to the agent's environment */
	const char *cwd;          /* optional */
	int stdin_fd;             /* host fd whose contents become the command's stdin; -1: /dev/null */
	int stdout_fd, stderr_fd; /* host fds the streams are copied to; -1: not copied */
	struct vn_strbuf *stdout_buf, *stderr_buf; /* optional: streams also collected here */
	/* Each buffer holds at most this much (0: VN_AGENT_EXEC_BUF_MAX); the rest is dropped. */
	size_t buf_max;
	bool *truncated; /* optional: set to true when a buffer dropped output */
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
	 * When it is &vn_interrupted, Ctrl-C is forwarded instead of ending the wait.
	 */
	volatile sig_atomic_t *forward_signal;
	/* As for vn_agent_cmd: the identity and a terminal (its size from winsize_fd, -1: 24x80). */
	bool as_user;
	unsigned uid, gid;
	bool tty;
	int winsize_fd;
	/* Optional: when *resized becomes non-zero (SIGWINCH), winsize_fd's size is passed on and the flag reset. */
	volatile sig_atomic_t *resized;
};

/*
 * Runs a command in the guest (vn_agent_exec_start + wait). *exit_status: its
 * exit code, or 128+N when signal N killed it. A program that cannot be
 * started (missing, not executable, bad cwd) is VN_ERR_INPUT with the guest's
 * errno; the guest-side timeout is VN_ERR_INFRA/-ETIMEDOUT.
 */
int vn_agent_exec(struct vn_agent *a, const struct vn_agent_exec_opts *o, int *exit_status, struct vn_error *err);

/* Reads a whole guest file (up to 64 MiB); *data is NUL-terminated for convenience, caller frees. */
int vn_agent_read_file(struct vn_agent *a, const char *path, int timeout_ms, char **data, size_t *len,
		       struct vn_error *err);
/*
 * The same for n files, with every request in flight at once: one round
 * trip instead of n (a snapshot's twenty small /proc and /sys files).
 * data[i] gets paths[i]'s text; on an error none is kept.
 */
int vn_agent_read_files(struct vn_agent *a, const char *const *paths, size_t n, int timeout_ms, char **data,
			struct vn_error *err);

enum {
	VN_AGENT_WRITE_APPEND = 1 << 0,
};
/* Writes (creates or truncates, or appends) a guest file; mode < 0: 0644 on creation, else set exactly. */
int vn_agent_write_file(struct vn_agent *a, const char *path, const void *data, size_t len, int mode, unsigned flags,
			int timeout_ms, struct vn_error *err);

/* ---- files, for vnuma cp (agent-file.c); every path is the guest's ---- */

enum vn_agent_ftype { VN_AGENT_FILE = 1, VN_AGENT_DIR, VN_AGENT_LINK, VN_AGENT_OTHER };
struct vn_agent_stat {
	enum vn_agent_ftype type;
	unsigned mode; /* permission bits, 07777 */
	uint64_t size;
};
/* lstat(), or stat() with follow. A guest errno comes back as -errno (-ENOENT: missing), an infra error. */
int vn_agent_stat(struct vn_agent *a, const char *path, bool follow, struct vn_agent_stat *st, struct vn_error *err);

struct vn_agent_dirent {
	char *name; /* one checked path component (no '/', not "." or "..", no control characters) */
	struct vn_agent_stat st;
};
/* A directory's entries (without "." and ".."), not followed; free with vn_agent_dirents_free(). */
int vn_agent_readdir(struct vn_agent *a, const char *path, struct vn_agent_dirent **ents, size_t *n,
		     struct vn_error *err);
void vn_agent_dirents_free(struct vn_agent_dirent *e, size_t n);
/* mkdir with exactly mode; chmod; rename; remove (recursive: rm -rf, symlinks not followed). */
int vn_agent_mkdir(struct vn_agent *a, const char *path, unsigned mode, struct vn_error *err);
int vn_agent_chmod(struct vn_agent *a, const char *path, unsigned mode, struct vn_error *err);
int vn_agent_rename(struct vn_agent *a, const char *from, const char *to, struct vn_error *err);
int vn_agent_remove(struct vn_agent *a, const char *path, bool recursive, struct vn_error *err);

/* Chunk size of vn_agent_put()/vn_agent_get(), and how many are in flight at once. */
#define VN_AGENT_CHUNK  (1u << 20)
#define VN_AGENT_WINDOW 4

/* Called after each chunk the guest acknowledged (put) or sent (get) with the bytes so far. */
typedef void (*vn_agent_progress_fn)(void *data, uint64_t bytes);

/*
 * Streams host fd to its EOF into the guest file path (created or truncated;
 * mode set exactly once the last chunk is written), VN_AGENT_WINDOW chunks
 * of VN_AGENT_CHUNK bytes in flight; memory stays bounded by the window.
 * digest: the SHA-256 of the bytes sent; *bytes how many. A full guest
 * filesystem is VN_ERR_INFRA/-ENOSPC saying so.
 */
int vn_agent_put(struct vn_agent *a, int fd, const char *path, unsigned mode, vn_agent_progress_fn progress, void *data,
		 uint8_t digest[VN_SHA256_LEN], uint64_t *bytes, struct vn_error *err);
/*
 * Streams size bytes of the guest file path to host fd, chunked like
 * vn_agent_put(); a file shorter than size is an error (it changed).
 * digest: the SHA-256 of the bytes received.
 */
int vn_agent_get(struct vn_agent *a, const char *path, uint64_t size, int fd, vn_agent_progress_fn progress, void *data,
		 uint8_t digest[VN_SHA256_LEN], struct vn_error *err);
/*
 * The guest's own SHA-256 of each file (busybox sha256sum reading it back in
 * the guest, an implementation apart from the copy's), in batches.
 */
int vn_agent_sha256(struct vn_agent *a, const char *const *paths, size_t n, uint8_t (*digests)[VN_SHA256_LEN],
		    struct vn_error *err);

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
