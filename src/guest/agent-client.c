/*
 * Host side of the agent protocol: the connection, the bounded line reader,
 * requests, and the asynchronous exec API that vn_agent_exec() and the
 * scenario runner share. Decoding lives in agent-proto.c. Replies are
 * matched by id and anything else (replies to an abandoned request, hellos
 * resent while the guest was booting) is dropped. The socket is
 * non-blocking; every wait is a poll() of at most SLICE_MS, and every turn
 * of every loop checks the caller's deadline and the interrupt flag, so a
 * guest that floods the channel cannot hold the host past either.
 */
#include "guest/agent-channel.h"
#include "guest/agent-client-priv.h"

#include "util/cleanup.h"
#include "util/interrupt.h"
#include "util/clock.h"
#include "util/alloc.h"
#include "util/state.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

/* How often hello is resent while the guest agent is not up yet. */
#define HELLO_RESEND_MS 1000

/* deadline < 0: none. */
int64_t vn_agent_deadline_after(int timeout_ms)
{
	return timeout_ms < 0 ? -1 : vn_now_ms() + timeout_ms;
}

static int poll_timeout(int64_t deadline, int cap_ms)
{
	int64_t left;

	if (deadline < 0)
		return cap_ms;
	left = deadline - vn_now_ms();
	if (left < 0)
		left = 0;
	if (cap_ms >= 0 && left > cap_ms)
		left = cap_ms;
	return (int)left;
}

bool vn_agent_expired(int64_t deadline)
{
	return deadline >= 0 && vn_now_ms() >= deadline;
}

static int set_nonblock(int fd)
{
	int fl = fcntl(fd, F_GETFL);

	if (fl < 0 || fcntl(fd, F_SETFL, fl | O_NONBLOCK) < 0)
		return -errno;
	return 0;
}

void vn_agent_set_guest(struct vn_agent *a, const char *name)
{
	free(a->guest);
	a->guest = vn_xasprintf("guest %s", name);
}

const char *vn_agent_guest(const struct vn_agent *a)
{
	return a->guest;
}

void vn_agent_set_liveness(struct vn_agent *a, int every_ms, int timeout_ms)
{
	a->probe_every_ms = every_ms;
	a->probe_timeout_ms = timeout_ms;
}

void vn_agent_set_watch(struct vn_agent *a, vn_agent_watch_fn fn, void *data, void (*free_fn)(void *))
{
	if (a->watch_free)
		a->watch_free(a->watch_data);
	a->watch = fn;
	a->watch_data = data;
	a->watch_free = free_fn;
	a->watch_next = 0;
}

bool vn_agent_watch_fired(const struct vn_agent *a)
{
	return a->watch_fired;
}

/* The caller's watch when it is due (or now): its error ends the wait. */
static int watch(struct vn_agent *a, bool now, struct vn_error *err)
{
	int64_t t = vn_now_ms();
	int rc;

	if (!a->watch || (!now && !a->watch_fired && t < a->watch_next))
		return 0;
	a->watch_next = t + VN_AGENT_WATCH_MS;
	if ((rc = a->watch(a->watch_data, err)) < 0)
		a->watch_fired = true;
	return rc;
}

int vn_agent_from_fd(int fd, struct vn_agent **out, struct vn_error *err)
{
	struct vn_agent *a;
	char name[32];
	int rc = set_nonblock(fd);

	if (rc < 0)
		return vn_infra_error(err, rc, "guest agent fd %d: %s", fd, strerror(-rc));
	a = vn_xcalloc(1, sizeof(*a));
	a->fd = fd;
	a->lock_fd = -1;
	a->probe_first = -1;
	vn_agent_set_liveness(a, VN_AGENT_PROBE_EVERY_MS, VN_AGENT_PROBE_TIMEOUT_MS);
	/* Distinct across connections, so a reply meant for a previous client never matches. */
	a->next_id = ((int64_t)(time(NULL) & 0x7fffffff) << 20) | ((int64_t)(getpid() & 0xfff) << 8);
	snprintf(name, sizeof(name), "on fd %d", fd);
	vn_agent_set_guest(a, name);
	*out = a;
	return 0;
}

/* STATE/guests/NAME/agent.sock names guest NAME; any other path names itself. */
static void guest_from_socket(struct vn_agent *a, const char *path)
{
	const char *base = strrchr(path, '/');
	const char *dir = base;

	if (base && !strcmp(base, "/" VN_GUEST_AGENT_SOCK)) {
		while (dir > path && dir[-1] != '/')
			dir--;
		if (dir < base) {
			_cleanup_free_ char *name = vn_xstrndup(dir, (size_t)(base - dir));
			vn_agent_set_guest(a, name);
			return;
		}
	}
	vn_agent_set_guest(a, path);
}

static int connect_path(const char *socket_path, int timeout_ms, struct vn_agent **out, struct vn_error *err)
{
	struct sockaddr_un sa = {.sun_family = AF_UNIX};
	int64_t deadline = vn_agent_deadline_after(timeout_ms);
	int rc;

	if (strlen(socket_path) >= sizeof(sa.sun_path))
		return vn_input_error(err, "guest agent socket path too long: %s", socket_path);
	strcpy(sa.sun_path, socket_path);
	for (;;) {
		_cleanup_close_ int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);

		if (fd < 0)
			return vn_infra_error(err, -errno, "socket: %s", strerror(errno));
		if (connect(fd, (struct sockaddr *)&sa, sizeof(sa)) == 0) {
			rc = vn_agent_from_fd(fd, out, err);
			if (rc == 0)
				fd = -1;
			return rc;
		}
		rc = -errno;
		/* The socket appears when QEMU starts; until then these are expected. */
		if (rc != -ENOENT && rc != -ECONNREFUSED && rc != -EAGAIN && rc != -EINTR)
			return vn_infra_error(err, rc, "connecting to guest agent socket %s: %s", socket_path,
					      strerror(-rc));
		if (vn_was_interrupted())
			return vn_infra_error(err, -EINTR, "interrupted while connecting to guest agent socket %s",
					      socket_path);
		if (vn_agent_expired(deadline))
			return vn_infra_error(err, -ETIMEDOUT,
					      "timed out after %d ms waiting for guest agent socket %s (%s)",
					      timeout_ms, socket_path, strerror(-rc));
		poll(NULL, 0, poll_timeout(deadline, SLICE_MS));
	}
}

int vn_agent_connect(const char *socket_path, int timeout_ms, struct vn_agent **out, struct vn_error *err)
{
	const char *base = strrchr(socket_path, '/');
	_cleanup_free_ char *channel = NULL;
	_cleanup_close_ int lock = -1;
	int rc;

	/* A guest's: the first channel no other client holds, so that this one is answered now. */
	if (base && !strcmp(base, "/" VN_GUEST_AGENT_SOCK) &&
	    (lock = vn_agent_channel_claim(socket_path, &channel, err)) < 0)
		return lock;
	if ((rc = connect_path(channel ? channel : socket_path, timeout_ms, out, err)) < 0)
		return rc;
	(*out)->lock_fd = lock;
	lock = -1;
	guest_from_socket(*out, socket_path);
	return 0;
}

void vn_agent_close(struct vn_agent *a)
{
	if (!a)
		return;
	if (a->fd >= 0)
		close(a->fd);
	if (a->lock_fd >= 0)
		close(a->lock_fd);
	if (a->watch_free)
		a->watch_free(a->watch_data);
	vn_agent_msg_clear(&a->last);
	vn_free_all(a->execs, a->buf, a->guest, a);
}

int64_t vn_agent_next_id(struct vn_agent *a)
{
	return a->next_id++;
}

void vn_agent_set_next_id(struct vn_agent *a, int64_t id)
{
	a->next_id = id;
}

void vn_agent_set_line_max(struct vn_agent *a, size_t max)
{
	a->line_max = max;
}

size_t vn_agent_buffer_size(const struct vn_agent *a)
{
	return a->cap;
}

/* ---- the execs this connection started ---- */

void vn_agent_track(struct vn_agent *a, int64_t id)
{
	if (a->nexecs == a->execs_cap) {
		size_t cap = a->execs_cap ? a->execs_cap * 2 : 16;
		a->execs = vn_xreallocarray(a->execs, cap, sizeof(*a->execs));
		a->execs_cap = cap;
	}
	a->execs[a->nexecs++] = id;
}

bool vn_agent_tracked(const struct vn_agent *a, int64_t id)
{
	for (size_t i = 0; i < a->nexecs; i++)
		if (a->execs[i] == id)
			return true;
	return false;
}

void vn_agent_untrack(struct vn_agent *a, int64_t id)
{
	for (size_t i = 0; i < a->nexecs; i++)
		if (a->execs[i] == id) {
			a->execs[i] = a->execs[--a->nexecs];
			return;
		}
}

/* ---- sending ---- */

static int send_bytes(struct vn_agent *a, const char *s, size_t len, int64_t deadline, struct vn_error *err)
{
	while (len) {
		ssize_t n = write(a->fd, s, len);
		struct pollfd p = {.fd = a->fd, .events = POLLOUT};

		if (n > 0) {
			s += n;
			len -= (size_t)n;
			continue;
		}
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && errno != EAGAIN)
			return vn_infra_error(err, -errno, "%s: sending to the agent: %s", a->guest, strerror(errno));
		if (vn_was_interrupted())
			return vn_infra_error(err, -EINTR, "%s: interrupted while sending to the agent", a->guest);
		if (vn_agent_expired(deadline))
			return vn_infra_error(err, -ETIMEDOUT, "%s: timed out waiting to send to the agent", a->guest);
		/* A guest that stopped reading because it is gone: say so rather than wait out the deadline. */
		int wrc = watch(a, false, err);
		if (wrc < 0)
			return wrc;
		if (poll(&p, 1, poll_timeout(deadline, SLICE_MS)) < 0 && errno != EINTR)
			return vn_infra_error(err, -errno, "poll: %s", strerror(errno));
	}
	return 0;
}

int vn_agent_send_msg(struct vn_agent *a, struct json_object *msg, int64_t deadline, struct vn_error *err)
{
	size_t len;
	const char *s =
		json_object_to_json_string_length(msg, JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE, &len);
	int rc;

	/* One write for the common small message, so the line is not split needlessly. */
	_cleanup_free_ char *line = vn_xmalloc(len + 1);
	memcpy(line, s, len);
	line[len] = '\n';
	rc = send_bytes(a, line, len + 1, deadline, err);
	json_object_put(msg);
	return rc;
}

int vn_agent_send(struct vn_agent *a, struct json_object *msg, int timeout_ms, struct vn_error *err)
{
	return vn_agent_send_msg(a, msg, vn_agent_deadline_after(timeout_ms), err);
}

/* ---- receiving: bounded lines, one scan of each byte ---- */

/*
 * The next complete line, NUL-terminated in place: 1 with *line set, 0 when
 * none is buffered yet, or an error for a line longer than max (the rest of
 * it is then skipped, so the connection stays usable).
 */
static int next_line(struct vn_agent *a, size_t max, char **line, size_t *n, struct vn_error *err)
{
	for (;;) {
		char *nl = a->scan < a->len ? memchr(a->buf + a->scan, '\n', a->len - a->scan) : NULL;
		size_t start = a->off, end;

		if (!nl) {
			if (a->discard) {
				a->off = a->scan = a->len = 0;
				return 0;
			}
			a->scan = a->len;
			if (a->len - a->off <= max)
				return 0;
			a->discard = true;
			a->off = a->scan = a->len = 0;
			return vn_infra_error(err, -EMSGSIZE, "%s: agent message longer than %zu bytes", a->guest, max);
		}
		end = (size_t)(nl - a->buf);
		a->off = a->scan = end + 1;
		if (a->discard) {
			a->discard = false;
			continue;
		}
		if (end - start > max)
			return vn_infra_error(err, -EMSGSIZE, "%s: agent message longer than %zu bytes", a->guest, max);
		*nl = '\0';
		*line = a->buf + start;
		*n = end - start;
		return 1;
	}
}

/* Reads what is available once; 0 on progress or EAGAIN. The buffer never outgrows max + 2 chunks. */
static int fill(struct vn_agent *a, size_t max, struct vn_error *err)
{
	ssize_t n;

	if (a->off == a->len) {
		a->off = a->scan = a->len = 0;
		if (a->cap > BUF_KEEP && a->cap > max + 2 * READ_CHUNK) {
			free(a->buf);
			a->buf = NULL;
			a->cap = 0;
		}
	}
	if (a->off && a->cap - a->len < READ_CHUNK) {
		memmove(a->buf, a->buf + a->off, a->len - a->off);
		a->len -= a->off;
		a->scan -= a->off;
		a->off = 0;
	}
	if (a->cap - a->len < READ_CHUNK) {
		size_t cap = a->cap ? a->cap * 2 : 2 * READ_CHUNK;

		if (cap > max + 2 * READ_CHUNK)
			cap = max + 2 * READ_CHUNK;
		if (cap < a->len + READ_CHUNK)
			cap = a->len + READ_CHUNK;
		a->buf = vn_xreallocarray(a->buf, cap, 1);
		a->cap = cap;
	}
	do
		n = read(a->fd, a->buf + a->len, a->cap - a->len);
	while (n < 0 && errno == EINTR);
	if (n > 0) {
		a->len += (size_t)n;
		return 0;
	}
	if (n == 0) {
		/* A QEMU that went away closes the channel: the watch may know why. */
		int rc = watch(a, true, err);

		return rc < 0 ? rc
			      : vn_infra_error(err, -ECONNRESET,
					       "%s: the agent connection was closed (did the guest stop?)", a->guest);
	}
	if (errno == EAGAIN)
		return 0;
	return vn_infra_error(err, -errno, "%s: reading from the agent: %s", a->guest, strerror(errno));
}

/*
 * The next well-formed message. Returns 0 with *m filled, 1 when w->extra_fd
 * is readable, and, without touching err, -ETIMEDOUT at the deadline and
 * -EINTR when interrupted or a signal waits to be forwarded. Other errors
 * (a malformed or over-long message, EOF) fill err.
 */
int vn_agent_next_msg(struct vn_agent *a, const struct wait *w, struct vn_agent_msg *m, struct vn_error *err)
{
	size_t max = a->line_max && a->line_max < w->max_line ? a->line_max : w->max_line;

	for (;;) {
		struct pollfd p[2] = {{.fd = a->fd, .events = POLLIN}, {.fd = w->extra_fd, .events = POLLIN}};
		char *line = NULL;
		size_t n = 0;
		int rc;

		if ((w->fwd && *w->fwd) || (w->winch && *w->winch) || vn_was_interrupted())
			return -EINTR;
		if (vn_agent_expired(w->deadline))
			return -ETIMEDOUT;
		/* Checked like the deadline, every turn (it rate-limits itself): a flood cannot hide a death. */
		if ((rc = watch(a, false, err)) < 0)
			return rc;
		rc = next_line(a, max, &line, &n, err);
		if (rc < 0)
			return rc;
		if (rc > 0) {
			rc = vn_agent_msg_decode(line, n, a->guest, m, err);
			if (rc == 1)
				continue; /* not a message: console noise or a torn line */
			return rc;
		}
		rc = poll(p, w->extra_fd >= 0 ? 2 : 1, poll_timeout(w->deadline, SLICE_MS));
		if (rc < 0 && errno != EINTR)
			return vn_infra_error(err, -errno, "poll: %s", strerror(errno));
		if (rc <= 0)
			continue;
		if (p[0].revents && (rc = fill(a, max, err)) < 0)
			return rc;
		if (w->extra_fd >= 0 && p[1].revents)
			return 1;
	}
}

/* Turns vn_agent_next_msg()'s quiet -ETIMEDOUT / -EINTR into errors saying what was awaited. */
int vn_agent_wait_failed(struct vn_agent *a, int rc, int timeout_ms, const char *what, struct vn_error *err)
{
	if (rc == -ETIMEDOUT)
		return vn_infra_error(err, rc, "%s: timed out after %d ms waiting for %s", a->guest, timeout_ms, what);
	if (rc == -EINTR)
		return vn_infra_error(err, rc, "%s: interrupted while waiting for %s", a->guest, what);
	return rc;
}

int vn_agent_recv(struct vn_agent *a, int timeout_ms, struct json_object **msg, struct vn_error *err)
{
	struct wait w = {
		.deadline = vn_agent_deadline_after(timeout_ms), .max_line = VN_AGENT_LINE_MAX_READ, .extra_fd = -1};
	struct vn_agent_msg m;
	int rc = vn_agent_next_msg(a, &w, &m, err);

	if (rc < 0)
		return vn_agent_wait_failed(a, rc, timeout_ms, "a message from the agent", err);
	*msg = steal_pointer(&m.json);
	vn_agent_msg_clear(&m);
	return 0;
}

/* A final reply to our request: an "ok":false one becomes the error; m is consumed, its json handed out. */
static int take_final(struct vn_agent *a, struct vn_agent_msg *m, const char *op, struct json_object **reply,
		      struct vn_error *err)
{
	int rc = 0;

	if (!m->ok)
		rc = vn_infra_error(err, m->guest_errno ? -m->guest_errno : -EIO, "%s: agent %s: %s", a->guest, op,
				    m->error);
	else if (reply)
		*reply = steal_pointer(&m->json);
	vn_agent_msg_clear(m);
	return rc;
}

static void op_name(struct json_object *req, char *op, size_t size)
{
	struct json_object *v;

	snprintf(op, size, "%s", json_object_object_get_ex(req, "op", &v) ? json_object_get_string(v) : "?");
}

int vn_agent_request_send(struct vn_agent *a, struct json_object *req, int64_t deadline, int64_t *id,
			  struct vn_error *err)
{
	char op[64];
	int rc;

	op_name(req, op, sizeof(op));
	*id = vn_agent_next_id(a);
	json_object_object_add(req, "id", json_object_new_int64(*id));
	rc = vn_agent_send_msg(a, req, deadline, err);
	if (rc < 0)
		return vn_error_prefix(err, "agent %s", op);
	return 0;
}

int vn_agent_reply_wait(struct vn_agent *a, int64_t id, const char *op, const struct wait *w, int timeout_ms,
			struct json_object **reply, struct vn_error *err)
{
	char what[96];

	snprintf(what, sizeof(what), "the agent's reply to %s", op);
	for (;;) {
		struct vn_agent_msg m;
		int rc = vn_agent_next_msg(a, w, &m, err);

		if (rc < 0)
			return vn_agent_wait_failed(a, rc, timeout_ms, what, err);
		if (m.has_id && m.id == id && m.kind == VN_AGENT_MSG_FINAL)
			return take_final(a, &m, op, reply, err);
		/* The end of an exec whose events nobody will take any more. */
		if (m.has_id && m.kind == VN_AGENT_MSG_FINAL)
			vn_agent_untrack(a, m.id);
		vn_agent_msg_clear(&m);
	}
}

int vn_agent_call_max(struct vn_agent *a, struct json_object *req, int timeout_ms, size_t max_line,
		      struct json_object **reply, struct vn_error *err)
{
	struct wait w = {.deadline = vn_agent_deadline_after(timeout_ms), .max_line = max_line, .extra_fd = -1};
	char op[64];
	int64_t id;
	int rc;

	op_name(req, op, sizeof(op));
	rc = vn_agent_request_send(a, req, w.deadline, &id, err);
	if (rc < 0)
		return rc;
	return vn_agent_reply_wait(a, id, op, &w, timeout_ms, reply, err);
}

int vn_agent_call(struct vn_agent *a, struct json_object *req, int timeout_ms, struct json_object **reply,
		  struct vn_error *err)
{
	return vn_agent_call_max(a, req, timeout_ms, VN_AGENT_LINE_MAX_SMALL, reply, err);
}

int vn_agent_hello(struct vn_agent *a, int timeout_ms, struct json_object **reply, struct vn_error *err)
{
	int64_t deadline = vn_agent_deadline_after(timeout_ms);
	int64_t first_id = -1, last_id = -1, resend_at = 0;

	for (;;) {
		struct vn_agent_msg m;
		int rc;

		if (vn_now_ms() >= resend_at) {
			struct json_object *req = json_object_new_object();

			last_id = vn_agent_next_id(a);
			if (first_id < 0)
				first_id = last_id;
			json_object_object_add(req, "id", json_object_new_int64(last_id));
			json_object_object_add(req, "op", json_object_new_string("hello"));
			rc = vn_agent_send_msg(a, req, deadline, err);
			if (rc < 0)
				return vn_error_prefix(err, "agent hello");
			resend_at = vn_now_ms() + HELLO_RESEND_MS;
		}
		struct wait w = {.deadline = deadline >= 0 && deadline < resend_at ? deadline : resend_at,
				 .max_line = VN_AGENT_LINE_MAX_SMALL,
				 .extra_fd = -1};
		rc = vn_agent_next_msg(a, &w, &m, err);
		if (rc == -ETIMEDOUT && !vn_agent_expired(deadline))
			continue;
		if (rc < 0)
			return vn_agent_wait_failed(a, rc, timeout_ms, "the agent to answer hello", err);
		/* Any of our hellos will do; earlier ids are leftovers from someone else. */
		if (!m.has_id || m.id < first_id || m.id > last_id || m.kind != VN_AGENT_MSG_FINAL) {
			vn_agent_msg_clear(&m);
			continue;
		}
		struct json_object *r = NULL, *pid = NULL;
		if ((rc = take_final(a, &m, "hello", &r, err)) < 0)
			return rc;
		if (json_object_object_get_ex(r, "pid", &pid) && json_object_is_type(pid, json_type_int) &&
		    json_object_get_int64(pid) > 0)
			a->agent_pid = json_object_get_int64(pid);
		if (reply)
			*reply = r;
		else
			json_object_put(r);
		return 0;
	}
}

struct json_object *vn_agent_new_request(const char *op)
{
	struct json_object *req = json_object_new_object();

	json_object_object_add(req, "op", json_object_new_string(op));
	return req;
}

struct json_object *vn_agent_b64_string(const void *data, size_t len)
{
	_cleanup_free_ char *b64 = vn_xmalloc(vn_base64_encoded_len(len) + 1);
	size_t n;

	n = vn_base64_encode(data, len, b64);
	return json_object_new_string_len(b64, (int)n);
}

/* A read's reply (consumed): its "data", decoded and NUL-terminated. */
static int read_reply(struct vn_agent *a, const char *path, struct json_object *reply, char **data, size_t *len,
		      struct vn_error *err)
{
	struct json_object *v;
	size_t slen;
	long n;

	if (!json_object_object_get_ex(reply, "data", &v) || !json_object_is_type(v, json_type_string) ||
	    (slen = (size_t)json_object_get_string_len(v)) > vn_base64_encoded_len(VN_AGENT_READ_MAX)) {
		json_object_put(reply);
		return vn_infra_error(err, -EBADMSG, "%s: malformed agent message (read %s: no valid \"data\")",
				      a->guest, path);
	}
	_cleanup_free_ char *buf = vn_xmalloc(slen / 4 * 3 + 4);
	n = vn_base64_decode(json_object_get_string(v), slen, buf);
	json_object_put(reply);
	if (n < 0)
		return vn_infra_error(err, -EBADMSG, "%s: malformed agent message (read %s: \"data\" is not base64)",
				      a->guest, path);
	buf[n] = '\0';
	if (len)
		*len = (size_t)n;
	*data = steal_pointer(&buf);
	return 0;
}

static struct json_object *read_request(const char *path)
{
	struct json_object *req = vn_agent_new_request("read");

	json_object_object_add(req, "path", json_object_new_string(path));
	return req;
}

int vn_agent_read_file(struct vn_agent *a, const char *path, int timeout_ms, char **data, size_t *len,
		       struct vn_error *err)
{
	struct json_object *reply = NULL;
	int rc = vn_agent_call_max(a, read_request(path), timeout_ms, VN_AGENT_LINE_MAX_READ, &reply, err);

	if (rc < 0)
		return vn_error_prefix(err, "reading %s", path);
	return read_reply(a, path, reply, data, len, err);
}

int vn_agent_read_files(struct vn_agent *a, const char *const *paths, size_t n, int timeout_ms, char **data,
			struct vn_error *err)
{
	struct wait w = {
		.deadline = vn_agent_deadline_after(timeout_ms), .max_line = VN_AGENT_LINE_MAX_READ, .extra_fd = -1};
	_cleanup_free_ int64_t *ids = vn_xcalloc(n, sizeof(*ids));
	size_t left = n;
	int rc = 0;

	memset(data, 0, n * sizeof(*data));
	for (size_t i = 0; i < n && rc == 0; i++)
		if ((rc = vn_agent_request_send(a, read_request(paths[i]), w.deadline, &ids[i], err)) < 0)
			vn_error_prefix(err, "reading %s", paths[i]);
	while (rc == 0 && left) {
		struct vn_agent_msg m;
		size_t i = 0;

		if ((rc = vn_agent_next_msg(a, &w, &m, err)) < 0) {
			rc = vn_agent_wait_failed(a, rc, timeout_ms, "the agent's replies to read", err);
			break;
		}
		while (i < n && !(m.has_id && m.id == ids[i] && !data[i]))
			i++;
		if (i == n || m.kind != VN_AGENT_MSG_FINAL) {
			/* The end of an exec whose events nobody will take any more. */
			if (i == n && m.has_id && m.kind == VN_AGENT_MSG_FINAL)
				vn_agent_untrack(a, m.id);
			vn_agent_msg_clear(&m);
			continue;
		}
		struct json_object *reply = NULL;
		if ((rc = take_final(a, &m, "read", &reply, err)) < 0 ||
		    (rc = read_reply(a, paths[i], reply, &data[i], NULL, err)) < 0) {
			vn_error_prefix(err, "reading %s", paths[i]);
			break;
		}
		left--;
	}
	if (rc < 0)
		for (size_t i = 0; i < n; i++) {
			free(data[i]);
			data[i] = NULL;
		}
	return rc;
}

int vn_agent_write_file(struct vn_agent *a, const char *path, const void *data, size_t len, int mode, unsigned flags,
			int timeout_ms, struct vn_error *err)
{
	struct json_object *req = vn_agent_new_request("write");

	json_object_object_add(req, "path", json_object_new_string(path));
	json_object_object_add(req, "data", vn_agent_b64_string(data, len));
	if (mode >= 0)
		json_object_object_add(req, "mode", json_object_new_int(mode));
	if (flags & VN_AGENT_WRITE_APPEND)
		json_object_object_add(req, "append", json_object_new_boolean(1));
	return vn_agent_call(a, req, timeout_ms, NULL, err);
}

int vn_agent_poweroff(struct vn_agent *a, int timeout_ms, struct vn_error *err)
{
	return vn_agent_call(a, vn_agent_new_request("poweroff"), timeout_ms, NULL, err);
}

int vn_agent_wake(struct vn_agent *a, int64_t realtime_ns, const void *seed, size_t len, int timeout_ms,
		  int64_t *step_ns, struct vn_error *err)
{
	struct json_object *req = vn_agent_new_request("wake"), *reply = NULL, *v = NULL;
	char b64[vn_base64_encoded_len(VN_AGENT_WAKE_SEED_MAX) + 1];

	if (len == 0 || len > VN_AGENT_WAKE_SEED_MAX) {
		json_object_put(req);
		return vn_input_error(err, "a wake's seed is 1..%d bytes, not %zu", VN_AGENT_WAKE_SEED_MAX, len);
	}
	vn_base64_encode(seed, len, b64);
	json_object_object_add(req, "realtime_ns", json_object_new_int64(realtime_ns));
	json_object_object_add(req, "seed", json_object_new_string(b64));
	int rc = vn_agent_call(a, req, timeout_ms, &reply, err);
	if (rc < 0)
		return vn_error_prefix(err, "waking the restored guest");
	/* The guest's word: an integer or nothing, never trusted further than a number to print. */
	*step_ns = json_object_object_get_ex(reply, "step_ns", &v) && json_object_is_type(v, json_type_int)
			   ? json_object_get_int64(v)
			   : 0;
	json_object_put(reply);
	return 0;
}
