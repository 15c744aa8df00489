/* Small synchronous requests: hello, read, write. */
#include "agent/agent-priv.h"
#include "agent/protocol.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <unistd.h>

void vn_agentd_op_hello(struct vn_agentd *d, struct json_object *id, struct json_object *req)
{
	struct json_object *r = vn_agentd_reply_new(id, true);
	struct json_object *ops = json_object_new_array();
	static const char *const op_names[] = {"hello",  "exec", "stdin", "signal",
					       "resize", "read", "write", "poweroff"};
	struct utsname u;
	char buf[128];
	int fd;

	if (uname(&u) == 0) {
		json_object_object_add(r, "kernel", json_object_new_string(u.release));
		json_object_object_add(r, "version", json_object_new_string(u.version));
		json_object_object_add(r, "machine", json_object_new_string(u.machine));
	}
	fd = open("/proc/uptime", O_RDONLY | O_CLOEXEC);
	if (fd >= 0) {
		ssize_t n = read(fd, buf, sizeof(buf) - 1);

		if (n > 0) {
			buf[n] = '\0';
			buf[strcspn(buf, " \n")] = '\0';
			/* Keep /proc's own digits rather than a binary double's 17. */
			json_object_object_add(r, "uptime_s", json_object_new_double_s(strtod(buf, NULL), buf));
		}
		close(fd);
	}
	json_object_object_add(r, "agent", json_object_new_string(VN_AGENT_VERSION));
	json_object_object_add(r, "protocol", json_object_new_int(VN_AGENT_PROTOCOL));
	json_object_object_add(r, "pid", json_object_new_int(getpid()));
	for (size_t i = 0; i < sizeof(op_names) / sizeof(op_names[0]); i++)
		json_object_array_add(ops, json_object_new_string(op_names[i]));
	json_object_object_add(r, "ops", ops);
	vn_agentd_send(d, r);
}

static const char *get_path(struct vn_agentd *d, struct json_object *id, struct json_object *req, const char *op)
{
	struct json_object *v;

	if (!json_object_object_get_ex(req, "path", &v) || !json_object_is_type(v, json_type_string) ||
	    !*json_object_get_string(v)) {
		vn_agentd_reply_error(d, id, EINVAL, "%s: \"path\" must be a non-empty string", op);
		return NULL;
	}
	return json_object_get_string(v);
}

void vn_agentd_op_read(struct vn_agentd *d, struct json_object *id, struct json_object *req)
{
	const char *path = get_path(d, id, req, "read");
	struct vn_buf data = {0};
	struct json_object *r;
	char *b64;
	size_t blen;
	int fd;

	if (!path)
		return;
	/* O_NONBLOCK: a FIFO with no writer must not stall every other request. */
	fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
	if (fd < 0) {
		int e = errno;
		vn_agentd_reply_error(d, id, e, "%s: %s", path, strerror(e));
		return;
	}
	/* /proc and /sys report size 0, so read to EOF rather than trusting st_size. */
	for (;;) {
		char buf[65536];
		ssize_t n = read(fd, buf, sizeof(buf));

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			int e = errno;
			vn_agentd_reply_error(d, id, e, "%s: %s", path, strerror(e));
			goto cleanup;
		}
		if (n == 0)
			break;
		if (data.len + (size_t)n > VN_AGENT_READ_MAX) {
			vn_agentd_reply_error(d, id, EFBIG, "%s: larger than %u MiB", path, VN_AGENT_READ_MAX >> 20);
			goto cleanup;
		}
		vn_buf_append(&data, buf, (size_t)n);
	}
	b64 = malloc(vn_base64_encoded_len(data.len) + 1);
	if (!b64)
		abort();
	blen = vn_base64_encode(data.s, data.len, b64);
	r = vn_agentd_reply_new(id, true);
	json_object_object_add(r, "data", json_object_new_string_len(b64, (int)blen));
	free(b64);
	vn_agentd_send(d, r);
cleanup:
	close(fd);
	vn_buf_free(&data);
}

/* Returns 0 or -errno. */
static int write_file(const char *path, const char *buf, size_t len, mode_t mode, bool set_mode, bool append)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_CLOEXEC | O_NOCTTY | (append ? O_APPEND : O_TRUNC), mode);
	size_t off = 0;
	int rc = 0;

	if (fd < 0)
		return -errno;
	if (set_mode) {
		struct stat st;

		/* open() applies mode only on creation and through the umask; the caller asked for exactly this. */
		if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && fchmod(fd, mode) < 0)
			rc = -errno;
	}
	/* sysfs wants a value in one write(); loop only for genuine short writes. */
	while (rc == 0 && off < len) {
		ssize_t n = write(fd, buf + off, len - off);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			rc = n < 0 ? -errno : -EIO;
		else
			off += (size_t)n;
	}
	if (close(fd) < 0 && rc == 0)
		rc = -errno;
	return rc;
}

void vn_agentd_op_write(struct vn_agentd *d, struct json_object *id, struct json_object *req)
{
	const char *path = get_path(d, id, req, "write");
	struct json_object *v;
	mode_t mode = 0644;
	bool set_mode = false, append = false;
	char *buf;
	long len;
	int rc;

	if (!path)
		return;
	if (!json_object_object_get_ex(req, "data", &v) || !json_object_is_type(v, json_type_string)) {
		vn_agentd_reply_error(d, id, EINVAL, "write: \"data\" must be a base64 string");
		return;
	}
	if (json_object_object_get_ex(req, "append", &v))
		append = json_object_get_boolean(v);
	if (json_object_object_get_ex(req, "mode", &v)) {
		/* JSON has no octal, so accept both 420 and "0644". */
		if (json_object_is_type(v, json_type_string))
			mode = (mode_t)strtoul(json_object_get_string(v), NULL, 8);
		else
			mode = (mode_t)json_object_get_int(v);
		mode &= 07777;
		set_mode = true;
	}
	json_object_object_get_ex(req, "data", &v);
	buf = malloc((size_t)json_object_get_string_len(v) / 4 * 3 + 3);
	if (!buf)
		abort();
	len = vn_base64_decode(json_object_get_string(v), (size_t)json_object_get_string_len(v), buf);
	if (len < 0) {
		vn_agentd_reply_error(d, id, EINVAL, "write: \"data\" is not valid base64");
	} else if ((rc = write_file(path, buf, (size_t)len, mode, set_mode, append)) < 0) {
		vn_agentd_reply_error(d, id, -rc, "%s: %s", path, strerror(-rc));
	} else {
		v = vn_agentd_reply_new(id, true);
		json_object_object_add(v, "written", json_object_new_int64(len));
		vn_agentd_send(d, v);
	}
	free(buf);
}
