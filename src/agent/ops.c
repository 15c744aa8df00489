/* Small synchronous requests: hello, read, write (whole files, or chunks of big ones for vnuma cp), wake. */
#include "agent/agent-priv.h"
#include "agent/protocol.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <linux/random.h>
#ifndef RNDRESEEDCRNG
#define RNDRESEEDCRNG _IO('R', 0x07) /* 4.17; older headers lack it */
#endif
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <unistd.h>

void vn_agentd_op_hello(struct vn_agentd *d, struct json_object *id, struct json_object *req)
{
	struct json_object *r = vn_agentd_reply_new(id, true);
	struct json_object *ops = json_object_new_array();
	static const char *const op_names[] = {"hello", "exec",   "stdin",  "signal",   "resize",
					       "read",  "write",  "stat",   "readdir",  "mkdir",
					       "chmod", "rename", "remove", "poweroff", "wake"};
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

const char *vn_agentd_get_path(struct vn_agentd *d, struct json_object *id, struct json_object *req, const char *key,
			       const char *op)
{
	struct json_object *v;

	if (!json_object_object_get_ex(req, key, &v) || !json_object_is_type(v, json_type_string) ||
	    !*json_object_get_string(v)) {
		vn_agentd_reply_error(d, id, EINVAL, "%s: \"%s\" must be a non-empty string", op, key);
		return NULL;
	}
	return json_object_get_string(v);
}

int vn_agentd_get_u64(struct vn_agentd *d, struct json_object *id, struct json_object *req, const char *key,
		      const char *op, uint64_t max, uint64_t *out)
{
	struct json_object *v;

	if (!json_object_object_get_ex(req, key, &v))
		return 0;
	if (!json_object_is_type(v, json_type_int) || json_object_get_int64(v) < 0 ||
	    (uint64_t)json_object_get_int64(v) > max) {
		vn_agentd_reply_error(d, id, EINVAL, "%s: \"%s\" must be an integer 0..%llu", op, key,
				      (unsigned long long)max);
		return -1;
	}
	*out = (uint64_t)json_object_get_int64(v);
	return 1;
}

int vn_agentd_get_mode(struct json_object *req, mode_t *mode)
{
	struct json_object *v;

	if (!json_object_object_get_ex(req, "mode", &v))
		return 0;
	/* JSON has no octal, so accept both 420 and "0644". */
	if (json_object_is_type(v, json_type_string))
		*mode = (mode_t)strtoul(json_object_get_string(v), NULL, 8);
	else
		*mode = (mode_t)json_object_get_int(v);
	*mode &= 07777;
	return 1;
}

static void reply_data(struct vn_agentd *d, struct json_object *id, const char *data, size_t len, int eof)
{
	struct json_object *r;
	char *b64 = malloc(vn_base64_encoded_len(len) + 1);
	size_t blen;

	if (!b64)
		abort();
	blen = vn_base64_encode(data, len, b64);
	r = vn_agentd_reply_new(id, true);
	json_object_object_add(r, "data", json_object_new_string_len(b64, (int)blen));
	if (eof >= 0)
		json_object_object_add(r, "eof", json_object_new_boolean(eof));
	free(b64);
	vn_agentd_send(d, r);
}

/* One chunk of a big file (vnuma cp): at most length bytes from offset; eof once it reached the end. */
static void read_chunk(struct vn_agentd *d, struct json_object *id, const char *path, int fd, uint64_t off,
		       uint64_t length)
{
	char *buf = malloc(length ? length : 1);
	size_t got = 0;

	if (!buf)
		abort();
	while (got < length) {
		ssize_t n = pread(fd, buf + got, length - got, (off_t)(off + got));

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			int e = errno;
			vn_agentd_reply_error(d, id, e, "%s: %s", path, strerror(e));
			free(buf);
			return;
		}
		if (n == 0)
			break;
		got += (size_t)n;
	}
	reply_data(d, id, buf, got, got < length);
	free(buf);
}

void vn_agentd_op_read(struct vn_agentd *d, struct json_object *id, struct json_object *req)
{
	const char *path = vn_agentd_get_path(d, id, req, "path", "read");
	struct vn_buf data = {0};
	uint64_t off = 0, length = VN_AGENT_CHUNK_MAX;
	int chunked, fd;

	if (!path || (chunked = vn_agentd_get_u64(d, id, req, "offset", "read", INT64_MAX, &off)) < 0 ||
	    vn_agentd_get_u64(d, id, req, "length", "read", VN_AGENT_CHUNK_MAX, &length) < 0)
		return;
	/* O_NONBLOCK: a FIFO with no writer must not stall every other request. */
	fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
	if (fd < 0) {
		int e = errno;
		vn_agentd_reply_error(d, id, e, "%s: %s", path, strerror(e));
		return;
	}
	if (chunked) {
		read_chunk(d, id, path, fd, off, length);
		close(fd);
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
	reply_data(d, id, data.s, data.len, -1);
cleanup:
	close(fd);
	vn_buf_free(&data);
}

/*
 * Returns 0 or -errno. With an offset (chunked, vnuma cp) the file must
 * exist already: a chunk that arrives after the host removed a failed copy
 * must not bring it back.
 */
static int write_file(const char *path, const char *buf, size_t len, mode_t mode, bool set_mode, bool append,
		      int64_t at)
{
	int flags = at >= 0 ? 0 : O_CREAT | (append ? O_APPEND : O_TRUNC);
	int fd = open(path, O_WRONLY | O_CLOEXEC | O_NOCTTY | flags, mode);
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
		ssize_t n = at >= 0 ? pwrite(fd, buf + off, len - off, (off_t)(at + (int64_t)off))
				    : write(fd, buf + off, len - off);

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
	const char *path = vn_agentd_get_path(d, id, req, "path", "write");
	struct json_object *v;
	mode_t mode = 0644;
	bool set_mode, append = false;
	uint64_t off = 0;
	char *buf;
	long len;
	int chunked, rc;

	if (!path || (chunked = vn_agentd_get_u64(d, id, req, "offset", "write", INT64_MAX, &off)) < 0)
		return;
	if (!json_object_object_get_ex(req, "data", &v) || !json_object_is_type(v, json_type_string)) {
		vn_agentd_reply_error(d, id, EINVAL, "write: \"data\" must be a base64 string");
		return;
	}
	if (json_object_object_get_ex(req, "append", &v))
		append = json_object_get_boolean(v);
	set_mode = vn_agentd_get_mode(req, &mode);
	json_object_object_get_ex(req, "data", &v);
	buf = malloc((size_t)json_object_get_string_len(v) / 4 * 3 + 3);
	if (!buf)
		abort();
	len = vn_base64_decode(json_object_get_string(v), (size_t)json_object_get_string_len(v), buf);
	if (len < 0) {
		vn_agentd_reply_error(d, id, EINVAL, "write: \"data\" is not valid base64");
	} else if ((rc = write_file(path, buf, (size_t)len, mode, set_mode, append, chunked ? (int64_t)off : -1)) < 0) {
		vn_agentd_reply_error(d, id, -rc, "%s: %s", path, strerror(-rc));
	} else {
		v = vn_agentd_reply_new(id, true);
		json_object_object_add(v, "written", json_object_new_int64(len));
		vn_agentd_send(d, v);
	}
	free(buf);
}

/*
 * A guest restored from a snapshot wakes with the clock and the random pool
 * it was saved with, and a booted one with a CRNG not yet ready: the host's
 * time set, and its random bytes mixed into the pool and credited
 * (RNDADDENTROPY), then the CRNG reseeded from it (RNDRESEEDCRNG), so that
 * two guests restored from one snapshot never share random state. The step
 * is how far the clock moved, for the host to record.
 */
void vn_agentd_op_wake(struct vn_agentd *d, struct json_object *id, struct json_object *req)
{
	struct {
		struct rand_pool_info info;
		char buf[VN_AGENT_WAKE_SEED_MAX];
	} seed;
	struct json_object *v, *r;
	struct timespec before, now;
	uint64_t ns;
	long len;
	int fd;

	if (vn_agentd_get_u64(d, id, req, "realtime_ns", "wake", INT64_MAX, &ns) <= 0) {
		if (!json_object_object_get_ex(req, "realtime_ns", &v))
			vn_agentd_reply_error(d, id, EINVAL, "wake: \"realtime_ns\" is missing");
		return;
	}
	if (!json_object_object_get_ex(req, "seed", &v) || !json_object_is_type(v, json_type_string) ||
	    json_object_get_string_len(v) == 0 ||
	    (size_t)json_object_get_string_len(v) > vn_base64_encoded_len(VN_AGENT_WAKE_SEED_MAX)) {
		vn_agentd_reply_error(d, id, EINVAL, "wake: \"seed\" must be base64 of 1..%d bytes",
				      VN_AGENT_WAKE_SEED_MAX);
		return;
	}
	char *b64 = malloc((size_t)json_object_get_string_len(v) / 4 * 3 + 3);
	if (!b64)
		abort();
	len = vn_base64_decode(json_object_get_string(v), (size_t)json_object_get_string_len(v), b64);
	if (len <= 0 || len > VN_AGENT_WAKE_SEED_MAX) {
		free(b64);
		vn_agentd_reply_error(d, id, EINVAL, "wake: \"seed\" is not valid base64 of 1..%d bytes",
				      VN_AGENT_WAKE_SEED_MAX);
		return;
	}
	memcpy(seed.buf, b64, (size_t)len);
	free(b64);
	seed.info.entropy_count = (int)len * 8;
	seed.info.buf_size = (int)len;
	fd = open("/dev/urandom", O_WRONLY | O_CLOEXEC);
	/*
	 * Mixing into the input pool does not rekey the CRNG that /dev/urandom
	 * reads from until its reseed interval has passed, and a restored
	 * guest's jiffies go on from the snapshot's: without the reseed two
	 * restores read the same bytes for their first seconds. Kernels before
	 * 4.17 have no RNDRESEEDCRNG (EINVAL): there mixing is all there is.
	 */
	if (fd < 0 || ioctl(fd, RNDADDENTROPY, &seed.info) < 0 ||
	    (ioctl(fd, RNDRESEEDCRNG) < 0 && errno != EINVAL && errno != ENOTTY)) {
		int e = errno;
		if (fd >= 0)
			close(fd);
		vn_agentd_reply_error(d, id, e, "wake: cannot seed the random pool: %s", strerror(e));
		return;
	}
	close(fd);
	now = (struct timespec){.tv_sec = (time_t)(ns / 1000000000u), .tv_nsec = (long)(ns % 1000000000u)};
	clock_gettime(CLOCK_REALTIME, &before);
	if (clock_settime(CLOCK_REALTIME, &now) < 0) {
		vn_agentd_reply_error(d, id, errno, "wake: cannot set the clock: %s", strerror(errno));
		return;
	}
	r = vn_agentd_reply_new(id, true);
	json_object_object_add(r, "step_ns",
			       json_object_new_int64(((int64_t)now.tv_sec - before.tv_sec) * 1000000000 +
						     (now.tv_nsec - before.tv_nsec)));
	vn_agentd_send(d, r);
}
