/*
 * Host side of the agent protocol. One line of JSON per message; replies are
 * matched by id and anything else (replies to an abandoned request, hellos
 * resent while the guest was booting) is dropped. The socket is non-blocking
 * and every wait is a poll() bounded by the caller's deadline.
 */
#include "guest/agent.h"

#include "util/cleanup.h"

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
/* How long the client waits past the guest-side exec timeout for the verdict. */
#define EXEC_GRACE_MS 10000
/* Slice for noticing forward_signal when the signal did not interrupt poll(). */
#define SIGNAL_POLL_MS 100
/* Host stdin chunk; base64 grows it by a third. */
#define STDIN_CHUNK 49152

struct vn_agent {
	int fd;
	int64_t next_id;
	char *buf;
	size_t off, len, cap; /* unparsed input is buf[off..len) */
};

static int64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* deadline < 0: none. */
static int64_t deadline_after(int timeout_ms)
{
	return timeout_ms < 0 ? -1 : now_ms() + timeout_ms;
}

static int poll_timeout(int64_t deadline, int cap_ms)
{
	int64_t left;

	if (deadline < 0)
		return cap_ms;
	left = deadline - now_ms();
	if (left < 0)
		left = 0;
	if (cap_ms >= 0 && left > cap_ms)
		left = cap_ms;
	return (int)left;
}

static int wait_fd(int fd, short events, int64_t deadline)
{
	for (;;) {
		struct pollfd p = {.fd = fd, .events = events};
		int r = poll(&p, 1, poll_timeout(deadline, -1));

		if (r > 0)
			return 0;
		if (r == 0)
			return -ETIMEDOUT;
		if (errno != EINTR)
			return -errno;
	}
}

static int set_nonblock(int fd)
{
	int fl = fcntl(fd, F_GETFL);

	if (fl < 0 || fcntl(fd, F_SETFL, fl | O_NONBLOCK) < 0)
		return -errno;
	return 0;
}

int vn_agent_from_fd(int fd, struct vn_agent **out, struct vn_error *err)
{
	struct vn_agent *a;
	int rc = set_nonblock(fd);

	if (rc < 0)
		return vn_infra_error(err, rc, "guest agent fd %d: %s", fd, strerror(-rc));
	a = calloc(1, sizeof(*a));
	if (!a)
		return vn_infra_error(err, -ENOMEM, "out of memory");
	a->fd = fd;
	/* Distinct across connections, so a reply meant for a previous client never matches. */
	a->next_id = ((int64_t)(time(NULL) & 0x7fffffff) << 20) | ((int64_t)(getpid() & 0xfff) << 8);
	*out = a;
	return 0;
}

int vn_agent_connect(const char *socket_path, int timeout_ms, struct vn_agent **out, struct vn_error *err)
{
	struct sockaddr_un sa = {.sun_family = AF_UNIX};
	int64_t deadline = deadline_after(timeout_ms);
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
		if (deadline >= 0 && now_ms() >= deadline)
			return vn_infra_error(err, -ETIMEDOUT,
					      "timed out after %d ms waiting for guest agent socket %s (%s)", timeout_ms,
					      socket_path, strerror(-rc));
		poll(NULL, 0, poll_timeout(deadline, 100));
	}
}

void vn_agent_close(struct vn_agent *a)
{
	if (!a)
		return;
	if (a->fd >= 0)
		close(a->fd);
	free(a->buf);
	free(a);
}

int64_t vn_agent_next_id(struct vn_agent *a)
{
	return a->next_id++;
}

static int send_bytes(struct vn_agent *a, const char *s, size_t len, int64_t deadline, struct vn_error *err)
{
	while (len) {
		ssize_t n = write(a->fd, s, len);
		int rc;

		if (n > 0) {
			s += n;
			len -= (size_t)n;
			continue;
		}
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && errno != EAGAIN)
			return vn_infra_error(err, -errno, "sending to the guest agent: %s", strerror(errno));
		rc = wait_fd(a->fd, POLLOUT, deadline);
		if (rc == -ETIMEDOUT)
			return vn_infra_error(err, rc, "timed out waiting to send to the guest agent");
		if (rc < 0)
			return vn_infra_error(err, rc, "poll: %s", strerror(-rc));
	}
	return 0;
}

static int send_msg(struct vn_agent *a, struct json_object *msg, int64_t deadline, struct vn_error *err)
{
	size_t len;
	const char *s =
		json_object_to_json_string_length(msg, JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE, &len);
	int rc;

	/* One write for the common small message, so the line is not split needlessly. */
	_cleanup_free_ char *line = malloc(len + 1);
	if (!line)
		abort();
	memcpy(line, s, len);
	line[len] = '\n';
	rc = send_bytes(a, line, len + 1, deadline, err);
	json_object_put(msg);
	return rc;
}

int vn_agent_send(struct vn_agent *a, struct json_object *msg, int timeout_ms, struct vn_error *err)
{
	return send_msg(a, msg, deadline_after(timeout_ms), err);
}

/* Next complete message already buffered, or NULL. */
static struct json_object *take_msg(struct vn_agent *a)
{
	while (a->off < a->len) {
		char *start = a->buf + a->off;
		char *nl = memchr(start, '\n', a->len - a->off);
		struct json_object *o;

		if (!nl)
			break;
		*nl = '\0';
		a->off = (size_t)(nl - a->buf) + 1;
		o = json_tokener_parse(start);
		if (o && json_object_is_type(o, json_type_object))
			return o;
		/* Console noise or a torn line from a previous session: not a message. */
		json_object_put(o);
	}
	if (a->off == a->len)
		a->off = a->len = 0;
	return NULL;
}

/* Reads what is available once; 0 on progress or EAGAIN. */
static int fill(struct vn_agent *a, struct vn_error *err)
{
	ssize_t n;

	if (a->off && a->len == a->cap) {
		memmove(a->buf, a->buf + a->off, a->len - a->off);
		a->len -= a->off;
		a->off = 0;
	}
	if (a->cap - a->len < 65536) {
		size_t cap = a->cap ? a->cap * 2 : 131072;
		char *b = realloc(a->buf, cap);

		if (!b)
			abort();
		a->buf = b;
		a->cap = cap;
	}
	do
		n = read(a->fd, a->buf + a->len, a->cap - a->len);
	while (n < 0 && errno == EINTR);
	if (n > 0) {
		a->len += (size_t)n;
		return 0;
	}
	if (n == 0)
		return vn_infra_error(err, -ECONNRESET, "the guest agent connection was closed (did the guest stop?)");
	if (errno == EAGAIN)
		return 0;
	return vn_infra_error(err, -errno, "reading from the guest agent: %s", strerror(errno));
}

/* -ETIMEDOUT is returned without touching err: the caller knows what it waited for. */
static int recv_msg(struct vn_agent *a, int64_t deadline, struct json_object **msg, struct vn_error *err)
{
	for (;;) {
		int rc;

		*msg = take_msg(a);
		if (*msg)
			return 0;
		rc = wait_fd(a->fd, POLLIN, deadline);
		if (rc == -ETIMEDOUT)
			return rc;
		if (rc < 0)
			return vn_infra_error(err, rc, "poll: %s", strerror(-rc));
		rc = fill(a, err);
		if (rc < 0)
			return rc;
	}
}

int vn_agent_recv(struct vn_agent *a, int timeout_ms, struct json_object **msg, struct vn_error *err)
{
	int rc = recv_msg(a, deadline_after(timeout_ms), msg, err);

	if (rc == -ETIMEDOUT)
		return vn_infra_error(err, rc, "timed out after %d ms waiting for a message from the guest agent",
				      timeout_ms);
	return rc;
}

static int64_t msg_id(struct json_object *m)
{
	struct json_object *v;

	if (!json_object_object_get_ex(m, "id", &v) || !json_object_is_type(v, json_type_int))
		return -1;
	return json_object_get_int64(v);
}

static bool msg_is_final(struct json_object *m)
{
	return !json_object_object_get_ex(m, "stream", NULL);
}

static bool msg_ok(struct json_object *m)
{
	struct json_object *v;

	return json_object_object_get_ex(m, "ok", &v) && json_object_get_boolean(v);
}

static const char *msg_str(struct json_object *m, const char *key)
{
	struct json_object *v;

	if (!json_object_object_get_ex(m, key, &v) || !json_object_is_type(v, json_type_string))
		return NULL;
	return json_object_get_string(v);
}

/* The agent's errno for an ok:false reply, as a negative errno. */
static int msg_errno(struct json_object *m)
{
	struct json_object *v;
	int e;

	if (!json_object_object_get_ex(m, "errno", &v) || (e = json_object_get_int(v)) <= 0)
		return -EIO;
	return -e;
}

/* A final reply to our request: an "ok":false one becomes the error; m is consumed or handed out. */
static int take_final(struct json_object *m, const char *op, struct json_object **reply, struct vn_error *err)
{
	if (!msg_ok(m)) {
		const char *e = msg_str(m, "error");
		int rc = vn_infra_error(err, msg_errno(m), "guest agent %s: %s", op, e ? e : "failed");

		json_object_put(m);
		return rc;
	}
	if (reply)
		*reply = m;
	else
		json_object_put(m);
	return 0;
}

int vn_agent_call(struct vn_agent *a, struct json_object *req, int timeout_ms, struct json_object **reply,
		  struct vn_error *err)
{
	int64_t deadline = deadline_after(timeout_ms);
	int64_t id = vn_agent_next_id(a);
	const char *op_s = msg_str(req, "op");
	char op[64];
	int rc;

	snprintf(op, sizeof(op), "%s", op_s ? op_s : "?");
	json_object_object_add(req, "id", json_object_new_int64(id));
	rc = send_msg(a, req, deadline, err);
	if (rc < 0)
		return vn_error_prefix(err, "guest agent %s", op);
	for (;;) {
		struct json_object *m;

		rc = recv_msg(a, deadline, &m, err);
		if (rc == -ETIMEDOUT)
			return vn_infra_error(err, rc, "timed out after %d ms waiting for the guest agent's reply to %s",
					      timeout_ms, op);
		if (rc < 0)
			return vn_error_prefix(err, "guest agent %s", op);
		if (msg_id(m) != id || !msg_is_final(m)) {
			json_object_put(m);
			continue;
		}
		return take_final(m, op, reply, err);
	}
}

int vn_agent_hello(struct vn_agent *a, int timeout_ms, struct json_object **reply, struct vn_error *err)
{
	int64_t deadline = deadline_after(timeout_ms);
	int64_t first_id = -1, last_id = -1, resend_at = 0;

	for (;;) {
		struct json_object *m;
		int64_t slice;
		int rc;

		if (now_ms() >= resend_at) {
			struct json_object *req = json_object_new_object();

			last_id = vn_agent_next_id(a);
			if (first_id < 0)
				first_id = last_id;
			json_object_object_add(req, "id", json_object_new_int64(last_id));
			json_object_object_add(req, "op", json_object_new_string("hello"));
			rc = send_msg(a, req, deadline, err);
			if (rc < 0)
				return vn_error_prefix(err, "guest agent hello");
			resend_at = now_ms() + HELLO_RESEND_MS;
		}
		slice = deadline >= 0 && deadline < resend_at ? deadline : resend_at;
		rc = recv_msg(a, slice, &m, err);
		if (rc == -ETIMEDOUT) {
			if (deadline >= 0 && now_ms() >= deadline)
				return vn_infra_error(err, rc,
						      "timed out after %d ms waiting for the guest agent to answer hello",
						      timeout_ms);
			continue;
		}
		if (rc < 0)
			return vn_error_prefix(err, "guest agent hello");
		/* Any of our hellos will do; earlier ids are leftovers from someone else. */
		if (msg_id(m) < first_id || msg_id(m) > last_id || !msg_is_final(m)) {
			json_object_put(m);
			continue;
		}
		return take_final(m, "hello", reply, err);
	}
}

static struct json_object *new_request(const char *op)
{
	struct json_object *req = json_object_new_object();

	json_object_object_add(req, "op", json_object_new_string(op));
	return req;
}

static struct json_object *b64_string(const void *data, size_t len)
{
	_cleanup_free_ char *b64 = malloc(vn_base64_encoded_len(len) + 1);
	size_t n;

	if (!b64)
		abort();
	n = vn_base64_encode(data, len, b64);
	return json_object_new_string_len(b64, (int)n);
}

/* Decodes m[key] into a fresh NUL-terminated buffer. */
static int b64_field(struct json_object *m, const char *key, char **data, size_t *len)
{
	struct json_object *v;
	size_t slen;
	long n;

	if (!json_object_object_get_ex(m, key, &v) || !json_object_is_type(v, json_type_string))
		return -EBADMSG;
	slen = (size_t)json_object_get_string_len(v);
	_cleanup_free_ char *buf = malloc(slen / 4 * 3 + 4);
	if (!buf)
		abort();
	n = vn_base64_decode(json_object_get_string(v), slen, buf);
	if (n < 0)
		return -EBADMSG;
	buf[n] = '\0';
	*len = (size_t)n;
	*data = steal_pointer(&buf);
	return 0;
}

int vn_agent_read_file(struct vn_agent *a, const char *path, int timeout_ms, char **data, size_t *len,
		       struct vn_error *err)
{
	struct json_object *req = new_request("read");
	struct json_object *reply = NULL;
	int rc;

	json_object_object_add(req, "path", json_object_new_string(path));
	rc = vn_agent_call(a, req, timeout_ms, &reply, err);
	if (rc < 0)
		return rc;
	rc = b64_field(reply, "data", data, len);
	json_object_put(reply);
	if (rc < 0)
		return vn_infra_error(err, rc, "guest agent read %s: reply has no valid \"data\"", path);
	return 0;
}

int vn_agent_write_file(struct vn_agent *a, const char *path, const void *data, size_t len, int mode,
			unsigned flags, int timeout_ms, struct vn_error *err)
{
	struct json_object *req = new_request("write");

	json_object_object_add(req, "path", json_object_new_string(path));
	json_object_object_add(req, "data", b64_string(data, len));
	if (mode >= 0)
		json_object_object_add(req, "mode", json_object_new_int(mode));
	if (flags & VN_AGENT_WRITE_APPEND)
		json_object_object_add(req, "append", json_object_new_boolean(1));
	return vn_agent_call(a, req, timeout_ms, NULL, err);
}

int vn_agent_poweroff(struct vn_agent *a, int timeout_ms, struct vn_error *err)
{
	return vn_agent_call(a, new_request("poweroff"), timeout_ms, NULL, err);
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
			wait_fd(*fd, POLLOUT, -1);
		} else {
			*fd = -1;
		}
	}
}

static int exec_request(struct vn_agent *a, const struct vn_agent_exec_opts *o, int64_t id, int64_t deadline,
			struct vn_error *err)
{
	struct json_object *req = new_request("exec");
	struct json_object *argv = json_object_new_array();

	json_object_object_add(req, "id", json_object_new_int64(id));
	for (const char *const *p = o->argv; *p; p++)
		json_object_array_add(argv, json_object_new_string(*p));
	json_object_object_add(req, "argv", argv);
	if (o->env) {
		struct json_object *env = json_object_new_object();

		for (const char *const *p = o->env; *p; p++) {
			const char *eq = strchr(*p, '=');

			if (!eq || eq == *p) {
				json_object_put(env);
				json_object_put(req);
				return vn_input_error(err, "exec: environment entry '%s' is not KEY=VALUE", *p);
			}
			char key[256];
			snprintf(key, sizeof(key), "%.*s", (int)(eq - *p), *p);
			json_object_object_add(env, key, json_object_new_string(eq + 1));
		}
		json_object_object_add(req, "env", env);
	}
	if (o->cwd)
		json_object_object_add(req, "cwd", json_object_new_string(o->cwd));
	if (o->timeout_s > 0)
		json_object_object_add(req, "timeout_s", json_object_new_double(o->timeout_s));
	if (o->stdin_fd >= 0)
		json_object_object_add(req, "stdin", json_object_new_boolean(1));
	return send_msg(a, req, deadline, err);
}

static int send_stdin(struct vn_agent *a, int64_t id, const char *data, size_t len, int64_t deadline,
		      struct vn_error *err)
{
	struct json_object *m = json_object_new_object();

	json_object_object_add(m, "id", json_object_new_int64(id));
	json_object_object_add(m, "op", json_object_new_string("stdin"));
	if (data)
		json_object_object_add(m, "data", b64_string(data, len));
	else
		json_object_object_add(m, "eof", json_object_new_boolean(1));
	return send_msg(a, m, deadline, err);
}

static int exec_verdict(struct json_object *m, const struct vn_agent_exec_opts *o, int *exit_status,
			struct vn_error *err)
{
	struct json_object *v;

	if (!msg_ok(m)) {
		const char *e = msg_str(m, "error");

		if (json_object_object_get_ex(m, "timed_out", &v) && json_object_get_boolean(v))
			return vn_infra_error(err, -ETIMEDOUT, "guest: %s: timed out after %g s and was killed",
					      o->argv[0], o->timeout_s);
		/* The agent could not start it: a wrong command line, so the user's input. */
		return vn_error_set(err, VN_ERR_INPUT, msg_errno(m), "guest: %s", e ? e : "exec failed");
	}
	if (json_object_object_get_ex(m, "exit_code", &v)) {
		*exit_status = json_object_get_int(v);
		return 0;
	}
	if (json_object_object_get_ex(m, "signal", &v)) {
		*exit_status = 128 + json_object_get_int(v);
		return 0;
	}
	return vn_infra_error(err, -EBADMSG, "guest agent exec: reply has neither exit_code nor signal");
}

int vn_agent_exec(struct vn_agent *a, const struct vn_agent_exec_opts *o, int *exit_status, struct vn_error *err)
{
	int64_t id = vn_agent_next_id(a);
	int64_t deadline = o->timeout_s > 0 ? now_ms() + (int64_t)(o->timeout_s * 1000) + EXEC_GRACE_MS : -1;
	/* Sending stdin needs a bound even when the command has none. */
	int64_t send_deadline;
	int in_fd = o->stdin_fd, out_fd = o->stdout_fd, err_fd = o->stderr_fd;
	int rc;

	if (!o->argv || !o->argv[0])
		return vn_input_error(err, "exec: empty command");
	rc = exec_request(a, o, id, deadline_after(30000), err);
	if (rc < 0)
		return vn_error_prefix(err, "guest agent exec");
	for (;;) {
		struct pollfd p[2] = {{.fd = a->fd, .events = POLLIN}, {.fd = in_fd, .events = POLLIN}};
		struct json_object *m;
		int r;

		while ((m = take_msg(a))) {
			const char *stream = msg_str(m, "stream");

			if (msg_id(m) != id) {
				json_object_put(m);
				continue;
			}
			if (!stream) {
				rc = exec_verdict(m, o, exit_status, err);
				json_object_put(m);
				return rc;
			}
			_cleanup_free_ char *data = NULL;
			size_t len;
			bool is_err = !strcmp(stream, "stderr");

			if (b64_field(m, "data", &data, &len) == 0) {
				copy_out(is_err ? &err_fd : &out_fd, data, len);
				if (is_err ? o->stderr_buf : o->stdout_buf)
					vn_strbuf_append(is_err ? o->stderr_buf : o->stdout_buf, data, len);
			}
			json_object_put(m);
		}
		if (o->forward_signal && *o->forward_signal) {
			struct json_object *s = json_object_new_object();

			json_object_object_add(s, "id", json_object_new_int64(id));
			json_object_object_add(s, "op", json_object_new_string("signal"));
			json_object_object_add(s, "signal", json_object_new_int(*o->forward_signal));
			*o->forward_signal = 0;
			rc = send_msg(a, s, deadline_after(5000), err);
			if (rc < 0)
				return vn_error_prefix(err, "guest agent exec");
		}
		if (deadline >= 0 && now_ms() >= deadline)
			return vn_infra_error(err, -ETIMEDOUT,
					      "timed out after %g s (+%d s grace) waiting for '%s' to finish in the guest",
					      o->timeout_s, EXEC_GRACE_MS / 1000, o->argv[0]);
		r = poll(p, in_fd >= 0 ? 2 : 1, poll_timeout(deadline, o->forward_signal ? SIGNAL_POLL_MS : -1));
		if (r < 0 && errno != EINTR)
			return vn_infra_error(err, -errno, "poll: %s", strerror(errno));
		if (r <= 0)
			continue;
		send_deadline = deadline >= 0 ? deadline : deadline_after(30000);
		if (in_fd >= 0 && p[1].revents) {
			char buf[STDIN_CHUNK];
			ssize_t n = read(in_fd, buf, sizeof(buf));

			if (n < 0 && (errno == EINTR || errno == EAGAIN))
				continue;
			/* A read error ends stdin like EOF would: the command must not wait forever. */
			rc = send_stdin(a, id, n > 0 ? buf : NULL, n > 0 ? (size_t)n : 0, send_deadline, err);
			if (rc < 0)
				return vn_error_prefix(err, "guest agent exec stdin");
			if (n <= 0)
				in_fd = -1;
		}
		if (p[0].revents) {
			rc = fill(a, err);
			if (rc < 0)
				return vn_error_prefix(err, "guest agent exec %s", o->argv[0]);
		}
	}
}
