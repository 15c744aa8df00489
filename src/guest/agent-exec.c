/*
 * The asynchronous exec API on one agent connection: start, signal, stdin,
 * typed events (with the liveness probe that notices a killed agent), and
 * vn_agent_exec() on top. The wire and the waiting are agent-client.c's.
 */
#include "guest/agent-client-priv.h"

#include "util/alloc.h"
#include "util/cleanup.h"
#include "util/clock.h"
#include "util/interrupt.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

/*
 * The liveness probe's part of a wait: send a hello when one is due, and
 * judge a probe's answer (m, when it is one: consumed, returns 1). 0: nothing
 * to say; < 0: the agent restarted or went silent.
 */
static int probe(struct vn_agent *a, struct vn_agent_msg *m, struct vn_error *err)
{
	int64_t now = vn_now_ms();

	if (m) {
		if (a->probe_first < 0 || !m->has_id || m->id < a->probe_first || m->id > a->probe_last ||
		    m->kind != VN_AGENT_MSG_FINAL)
			return 0;
		struct json_object *pid = NULL;
		int64_t p = json_object_object_get_ex(m->json, "pid", &pid) && json_object_is_type(pid, json_type_int)
				    ? json_object_get_int64(pid)
				    : 0;
		vn_agent_msg_clear(m);
		if (p != a->agent_pid)
			return vn_infra_error(err, -ECONNRESET,
					      "%s: the agent restarted (pid %lld, now %lld): it was killed or crashed "
					      "inside the guest, and the %zu command(s) it was running are lost",
					      a->guest, (long long)a->agent_pid, (long long)p, a->nexecs);
		a->probe_first = -1;
		a->probe_next = now + a->probe_every_ms;
		return 1;
	}
	if (!a->agent_pid || !a->nexecs || a->probe_every_ms <= 0)
		return 0;
	if (a->probe_first >= 0 && now - a->probe_since >= a->probe_timeout_ms)
		return vn_infra_error(err, -ETIMEDOUT,
				      "%s: the agent has not answered for %d s while %zu command(s) ran (hung, or "
				      "its guest is)",
				      a->guest, a->probe_timeout_ms / 1000, a->nexecs);
	if (a->probe_next == 0)
		a->probe_next = now + a->probe_every_ms;
	if (now < a->probe_next)
		return 0;
	struct json_object *req = json_object_new_object();
	int64_t id = vn_agent_next_id(a);
	json_object_object_add(req, "id", json_object_new_int64(id));
	json_object_object_add(req, "op", json_object_new_string("hello"));
	int rc = vn_agent_send_msg(a, req, now + a->probe_every_ms, err);
	if (rc < 0)
		return vn_error_prefix(err, "agent liveness probe");
	/* Unanswered ones are resent: a restarted agent may have missed what was sent while it was down. */
	if (a->probe_first < 0) {
		a->probe_first = id;
		a->probe_since = now;
	}
	a->probe_last = id;
	a->probe_next = now + a->probe_every_ms;
	return 0;
}

/* ---- asynchronous exec ---- */

int vn_agent_exec_start(struct vn_agent *a, const struct vn_agent_cmd *c, int timeout_ms, int64_t *id,
			struct vn_error *err)
{
	struct json_object *req, *argv;
	int64_t my_id;
	int rc;

	if (!c->argv || !c->argv[0])
		return vn_input_error(err, "exec: empty command");
	for (const char *const *p = c->env; p && *p; p++) {
		const char *eq = strchr(*p, '=');

		if (!eq || eq == *p)
			return vn_input_error(err, "exec: environment entry '%s' is not KEY=VALUE", *p);
	}
	my_id = vn_agent_next_id(a);
	req = vn_agent_new_request("exec");
	argv = json_object_new_array();
	json_object_object_add(req, "id", json_object_new_int64(my_id));
	for (const char *const *p = c->argv; *p; p++)
		json_object_array_add(argv, json_object_new_string(*p));
	json_object_object_add(req, "argv", argv);
	if (c->env) {
		struct json_object *env = json_object_new_object();

		for (const char *const *p = c->env; *p; p++) {
			const char *eq = strchr(*p, '=');
			_cleanup_free_ char *key = vn_xstrndup(*p, (size_t)(eq - *p));

			json_object_object_add(env, key, json_object_new_string(eq + 1));
		}
		json_object_object_add(req, "env", env);
	}
	if (c->cwd)
		json_object_object_add(req, "cwd", json_object_new_string(c->cwd));
	if (c->timeout_s > 0)
		json_object_object_add(req, "timeout_s", json_object_new_double(c->timeout_s));
	if (c->with_stdin)
		json_object_object_add(req, "stdin", json_object_new_boolean(1));
	if (c->as_user) {
		struct json_object *u = json_object_new_object();
		json_object_object_add(u, "uid", json_object_new_int64(c->uid));
		json_object_object_add(u, "gid", json_object_new_int64(c->gid));
		json_object_object_add(req, "user", u);
	}
	if (c->tty) {
		json_object_object_add(req, "tty", json_object_new_boolean(1));
		json_object_object_add(req, "rows", json_object_new_int64(c->rows ? c->rows : 24));
		json_object_object_add(req, "cols", json_object_new_int64(c->cols ? c->cols : 80));
	}
	rc = vn_agent_send_msg(a, req, vn_agent_deadline_after(timeout_ms), err);
	if (rc < 0)
		return vn_error_prefix(err, "agent exec %s", c->argv[0]);
	vn_agent_track(a, my_id);
	*id = my_id;
	return 0;
}

int vn_agent_exec_resize(struct vn_agent *a, int64_t id, unsigned rows, unsigned cols, int timeout_ms,
			 struct vn_error *err)
{
	struct json_object *m = vn_agent_new_request("resize");

	json_object_object_add(m, "id", json_object_new_int64(id));
	json_object_object_add(m, "rows", json_object_new_int64(rows));
	json_object_object_add(m, "cols", json_object_new_int64(cols));
	return vn_agent_send_msg(a, m, vn_agent_deadline_after(timeout_ms), err);
}

/* The size of the terminal on fd (24x80 when it is none). */
static void term_size(int fd, unsigned *rows, unsigned *cols)
{
	struct winsize ws;

	*rows = 24, *cols = 80;
	if (fd >= 0 && ioctl(fd, TIOCGWINSZ, &ws) == 0 && ws.ws_row && ws.ws_col)
		*rows = ws.ws_row, *cols = ws.ws_col;
}

int vn_agent_exec_signal(struct vn_agent *a, int64_t id, int sig, int timeout_ms, struct vn_error *err)
{
	struct json_object *m = vn_agent_new_request("signal");

	json_object_object_add(m, "id", json_object_new_int64(id));
	json_object_object_add(m, "signal", json_object_new_int(sig));
	return vn_agent_send_msg(a, m, vn_agent_deadline_after(timeout_ms), err);
}

int vn_agent_exec_stdin(struct vn_agent *a, int64_t id, const void *data, size_t len, int timeout_ms,
			struct vn_error *err)
{
	struct json_object *m = vn_agent_new_request("stdin");

	json_object_object_add(m, "id", json_object_new_int64(id));
	if (data)
		json_object_object_add(m, "data", vn_agent_b64_string(data, len));
	else
		json_object_object_add(m, "eof", json_object_new_boolean(1));
	return vn_agent_send_msg(a, m, vn_agent_deadline_after(timeout_ms), err);
}

/* An exec's final reply as an EXIT event. */
static int exit_event(struct vn_agent *a, const struct vn_agent_msg *m, struct vn_agent_event *ev, struct vn_error *err)
{
	ev->kind = VN_AGENT_EV_EXIT;
	ev->guest_errno = m->guest_errno;
	ev->error = m->ok ? NULL : m->error;
	ev->timed_out = m->timed_out;
	if (m->ok && !m->has_exit_code && !m->has_signal)
		return vn_infra_error(err, -EBADMSG,
				      "%s: malformed agent message (exec %lld ended with neither exit_code nor signal)",
				      a->guest, (long long)m->id);
	if (m->ok || m->timed_out) {
		ev->started = true;
		ev->status = m->has_exit_code ? m->exit_code : m->has_signal ? 128 + m->signal : 128 + SIGKILL;
	} else {
		ev->started = false;
		ev->status = -1;
	}
	return 0;
}

/* vn_agent_next_msg() until an event of one of our execs: its codes, plus 0 with *ev filled. */
static int take_event(struct vn_agent *a, const struct wait *w, struct vn_agent_event *ev, struct vn_error *err)
{
	vn_agent_msg_clear(&a->last);
	for (;;) {
		struct vn_agent_msg *m = &a->last;
		int rc;

		if ((rc = probe(a, NULL, err)) < 0)
			return rc;
		/* Come back for the next probe even while nothing arrives. */
		struct wait slice = *w;
		int64_t due = a->agent_pid && a->nexecs && a->probe_every_ms > 0 ? vn_now_ms() + a->probe_every_ms : -1;
		if (due >= 0 && (slice.deadline < 0 || due < slice.deadline))
			slice.deadline = due;
		rc = vn_agent_next_msg(a, &slice, m, err);
		if (rc == -ETIMEDOUT && slice.deadline != w->deadline)
			continue;
		if (rc != 0)
			return rc;
		if ((rc = probe(a, m, err)) != 0) {
			if (rc < 0)
				return rc;
			continue;
		}
		if (!m->has_id || !vn_agent_tracked(a, m->id)) {
			vn_agent_msg_clear(m);
			continue;
		}
		memset(ev, 0, sizeof(*ev));
		ev->id = m->id;
		if (m->kind == VN_AGENT_MSG_STREAM) {
			ev->kind = m->stream;
			ev->data = m->data;
			ev->len = m->len;
			return 0;
		}
		vn_agent_untrack(a, m->id);
		return exit_event(a, m, ev, err);
	}
}

int vn_agent_exec_wait(struct vn_agent *a, int timeout_ms, struct vn_agent_event *ev, struct vn_error *err)
{
	struct wait w = {
		.deadline = vn_agent_deadline_after(timeout_ms), .max_line = VN_AGENT_LINE_MAX_SMALL, .extra_fd = -1};
	int rc = take_event(a, &w, ev, err);

	return rc < 0 ? vn_agent_wait_failed(a, rc, timeout_ms, "an event from the guest's commands", err) : rc;
}

/* Copies to a host fd; a reader that went away (EPIPE) stops the copying, not the command. */
static void copy_out(int *fd, const char *s, size_t len)
{
	while (*fd >= 0 && len) {
		ssize_t n = write(*fd, s, len);

		if (n > 0) {
			s += n;
			len -= (size_t)n;
		} else if (n < 0 && errno == EINTR) {
			continue;
		} else if (n < 0 && errno == EAGAIN) {
			struct pollfd p = {.fd = *fd, .events = POLLOUT};
			poll(&p, 1, SLICE_MS);
		} else {
			*fd = -1;
		}
	}
}

/* Appends at most up to max bytes in all; true when some had to be dropped. */
static bool append_bounded(struct vn_strbuf *b, const char *s, size_t len, size_t max)
{
	size_t room = b->len < max ? max - b->len : 0;

	vn_strbuf_append(b, s, len < room ? len : room);
	return len > room;
}

static int exec_verdict(const struct vn_agent *a, const struct vn_agent_event *ev, const struct vn_agent_exec_opts *o,
			int *exit_status, struct vn_error *err)
{
	if (ev->timed_out)
		return vn_infra_error(err, -ETIMEDOUT, "%s: %s timed out after %g s and was killed", a->guest,
				      o->argv[0], o->timeout_s);
	if (!ev->started)
		/* The agent could not start it: a wrong command line, so the user's input. */
		return vn_error_set(err, VN_ERR_INPUT, ev->guest_errno ? -ev->guest_errno : -EIO, "guest: %s",
				    ev->error);
	*exit_status = ev->status;
	return 0;
}

int vn_agent_exec(struct vn_agent *a, const struct vn_agent_exec_opts *o, int *exit_status, struct vn_error *err)
{
	struct vn_agent_cmd c = {.argv = o->argv,
				 .env = o->env,
				 .cwd = o->cwd,
				 .timeout_s = o->timeout_s,
				 .with_stdin = o->stdin_fd >= 0,
				 .as_user = o->as_user,
				 .uid = o->uid,
				 .gid = o->gid,
				 .tty = o->tty};
	struct wait w = {
		.deadline = o->timeout_s > 0 ? vn_now_ms() + (int64_t)(o->timeout_s * 1000) + EXEC_GRACE_MS : -1,
		.max_line = VN_AGENT_LINE_MAX_SMALL,
		.extra_fd = o->stdin_fd,
		.fwd = o->forward_signal,
		.winch = o->tty ? o->resized : NULL,
	};
	size_t max = o->buf_max ? o->buf_max : VN_AGENT_EXEC_BUF_MAX;
	int out_fd = o->stdout_fd, err_fd = o->stderr_fd;
	int64_t id;
	int rc;

	if (o->tty)
		term_size(o->winsize_fd, &c.rows, &c.cols);
	if ((rc = vn_agent_exec_start(a, &c, VN_AGENT_EXEC_START_MS, &id, err)) < 0)
		return rc;
	for (;;) {
		struct vn_agent_event ev;

		rc = take_event(a, &w, &ev, err);
		if (rc == -EINTR && w.winch && *w.winch) {
			*w.winch = 0;
			term_size(o->winsize_fd, &c.rows, &c.cols);
			if ((rc = vn_agent_exec_resize(a, id, c.rows, c.cols, VN_AGENT_CONTROL_MS, err)) < 0)
				goto fail;
			continue;
		}
		if (rc == -EINTR && o->forward_signal && *o->forward_signal) {
			int sig = *o->forward_signal;

			*o->forward_signal = 0;
			if ((rc = vn_agent_exec_signal(a, id, sig, VN_AGENT_CONTROL_MS, err)) < 0)
				goto fail;
			continue;
		}
		if (rc == -ETIMEDOUT) {
			rc = vn_infra_error(err, rc,
					    "%s: timed out after %g s (+%d s grace) waiting for '%s' to finish",
					    a->guest, o->timeout_s, EXEC_GRACE_MS / 1000, o->argv[0]);
			goto fail;
		}
		if (rc == -EINTR) {
			rc = vn_infra_error(err, rc, "%s: interrupted while '%s' ran", a->guest, o->argv[0]);
			goto fail;
		}
		if (rc < 0)
			goto fail;
		if (rc == 1) {
			char buf[STDIN_CHUNK];
			ssize_t n = read(w.extra_fd, buf, sizeof(buf));

			if (n < 0 && (errno == EINTR || errno == EAGAIN))
				continue;
			/* A read error ends stdin like EOF would: the command must not wait forever. */
			int64_t left = w.deadline >= 0 ? w.deadline - vn_now_ms() : VN_AGENT_EXEC_START_MS;

			rc = vn_agent_exec_stdin(a, id, n > 0 ? buf : NULL, n > 0 ? (size_t)n : 0,
						 left > 0 ? (int)left : 0, err);
			if (rc < 0)
				goto fail;
			if (n <= 0)
				w.extra_fd = -1;
			continue;
		}
		if (ev.kind == VN_AGENT_EV_EXIT)
			return exec_verdict(a, &ev, o, exit_status, err);
		bool is_err = ev.kind == VN_AGENT_EV_STDERR;
		struct vn_strbuf *b = is_err ? o->stderr_buf : o->stdout_buf;

		copy_out(is_err ? &err_fd : &out_fd, ev.data, ev.len);
		if (b && append_bounded(b, ev.data, ev.len, max) && o->truncated)
			*o->truncated = true;
	}
fail:
	/* Whatever it still sends is dropped from now on. */
	vn_agent_untrack(a, id);
	return rc;
}
