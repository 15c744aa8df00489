/* Commands in the guest through its agent: start, signal, feed and wait for one, or run one whole (agent-exec.c). */
#pragma once

#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "util/error.h"
#include "util/strbuf.h"

struct vn_agent;

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
