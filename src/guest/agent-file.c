/*
 * Files over the agent, for vnuma cp: typed wrappers of the file ops, and
 * chunked streams in both directions with a window of requests in flight.
 * The agent handles requests in arrival order, so VN_AGENT_WINDOW chunks
 * keep the channel busy while each reply travels back, and a remove sent
 * after a failed stream lands after every chunk of it.
 */
#include "guest/agent-client-priv.h"

#include "util/alloc.h"
#include "util/cleanup.h"
#include "util/file.h"
#include "util/strbuf.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* One chunk's reply: 1 MiB through base64 and JSON under TCG takes well under a second. */
#define CHUNK_MS 30000

static struct json_object *path_request(const char *op, const char *path)
{
	struct json_object *req = vn_agent_new_request(op);

	json_object_object_add(req, "path", json_object_new_string(path));
	return req;
}

int vn_agent_stat(struct vn_agent *a, const char *path, bool follow, struct vn_agent_stat *st, struct vn_error *err)
{
	struct json_object *req = path_request("stat", path), *reply = NULL;
	int rc;

	if (follow)
		json_object_object_add(req, "follow", json_object_new_boolean(1));
	rc = vn_agent_call(a, req, VN_AGENT_REPLY_MS, &reply, err);
	if (rc == 0)
		rc = vn_agent_decode_stat(reply, a->guest, st, err);
	json_object_put(reply);
	return rc;
}

int vn_agent_readdir(struct vn_agent *a, const char *path, struct vn_agent_dirent **ents, size_t *n,
		     struct vn_error *err)
{
	struct json_object *reply = NULL;
	int rc = vn_agent_call_max(a, path_request("readdir", path), VN_AGENT_REPLY_MS, VN_AGENT_LINE_MAX_READDIR,
				   &reply, err);

	if (rc == 0)
		rc = vn_agent_decode_dirents(reply, a->guest, ents, n, err);
	json_object_put(reply);
	return rc;
}

static int mode_op(struct vn_agent *a, const char *op, const char *path, unsigned mode, struct vn_error *err)
{
	struct json_object *req = path_request(op, path);

	json_object_object_add(req, "mode", json_object_new_int((int)(mode & 07777)));
	return vn_agent_call(a, req, VN_AGENT_REPLY_MS, NULL, err);
}

int vn_agent_mkdir(struct vn_agent *a, const char *path, unsigned mode, struct vn_error *err)
{
	return mode_op(a, "mkdir", path, mode, err);
}

int vn_agent_chmod(struct vn_agent *a, const char *path, unsigned mode, struct vn_error *err)
{
	return mode_op(a, "chmod", path, mode, err);
}

int vn_agent_rename(struct vn_agent *a, const char *from, const char *to, struct vn_error *err)
{
	struct json_object *req = path_request("rename", from);

	json_object_object_add(req, "to", json_object_new_string(to));
	return vn_agent_call(a, req, VN_AGENT_REPLY_MS, NULL, err);
}

int vn_agent_remove(struct vn_agent *a, const char *path, bool recursive, struct vn_error *err)
{
	struct json_object *req = path_request("remove", path);

	if (recursive)
		json_object_object_add(req, "recursive", json_object_new_boolean(1));
	/* A big tree in a slow guest takes a while to go. */
	return vn_agent_call(a, req, CHUNK_MS, NULL, err);
}

/* The oldest chunk's reply; a full guest disk is said in words, not only as an errno. */
static int chunk_reply(struct vn_agent *a, int64_t id, const char *op, const char *path, size_t max_line,
		       struct json_object **reply, struct vn_error *err)
{
	struct wait w = {.deadline = vn_agent_deadline_after(CHUNK_MS), .max_line = max_line, .extra_fd = -1};
	int rc = vn_agent_reply_wait(a, id, op, &w, CHUNK_MS, reply, err);

	if (rc == -ENOSPC) {
		vn_error_clear(err);
		return vn_infra_error(err, rc,
				      "%s: the guest's file system is full (No space left on device) writing %s",
				      a->guest, path);
	}
	return rc;
}

/* Reads up to len bytes, short only at EOF. */
static ssize_t read_full(int fd, char *buf, size_t len)
{
	size_t got = 0;

	while (got < len) {
		ssize_t n = read(fd, buf + got, len - got);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -errno;
		if (n == 0)
			break;
		got += (size_t)n;
	}
	return (ssize_t)got;
}

int vn_agent_put(struct vn_agent *a, int fd, const char *path, unsigned mode, vn_agent_progress_fn progress, void *data,
		 uint8_t digest[VN_SHA256_LEN], uint64_t *bytes, struct vn_error *err)
{
	_cleanup_free_ char *buf = vn_xmalloc(VN_AGENT_CHUNK);
	int64_t ids[VN_AGENT_WINDOW];
	size_t head = 0, tail = 0;
	uint64_t sent = 0, acked = 0;
	bool eof = false;
	struct vn_sha256 h;
	int rc;

	vn_sha256_init(&h);
	while (!eof || tail < head) {
		if (!eof && head - tail < VN_AGENT_WINDOW) {
			ssize_t n = read_full(fd, buf, VN_AGENT_CHUNK);
			struct json_object *req = path_request("write", path);

			if (n < 0) {
				json_object_put(req);
				return vn_infra_error(err, (int)n, "reading the file for %s: %s", path,
						      strerror((int)-n));
			}
			eof = (size_t)n < VN_AGENT_CHUNK;
			vn_sha256_update(&h, buf, (size_t)n);
			json_object_object_add(req, "data", vn_agent_b64_string(buf, (size_t)n));
			/* The first chunk creates (0600, so the chunks after it can write), the last sets the mode. */
			if (head)
				json_object_object_add(req, "offset", json_object_new_int64((int64_t)sent));
			if (eof || !head)
				json_object_object_add(req, "mode",
						       json_object_new_int(eof ? (int)(mode & 07777) : 0600));
			rc = vn_agent_request_send(a, req, vn_agent_deadline_after(CHUNK_MS),
						   &ids[head % VN_AGENT_WINDOW], err);
			if (rc < 0)
				return rc;
			head++;
			sent += (uint64_t)n;
			continue;
		}
		rc = chunk_reply(a, ids[tail % VN_AGENT_WINDOW], "write", path, VN_AGENT_LINE_MAX_SMALL, NULL, err);
		if (rc < 0)
			return rc;
		tail++;
		acked = tail < head ? acked + VN_AGENT_CHUNK : sent;
		if (progress)
			progress(data, acked);
	}
	vn_sha256_final(&h, digest);
	*bytes = sent;
	return 0;
}

int vn_agent_get(struct vn_agent *a, const char *path, uint64_t size, int fd, vn_agent_progress_fn progress, void *data,
		 uint8_t digest[VN_SHA256_LEN], struct vn_error *err)
{
	_cleanup_free_ char *buf = vn_xmalloc(VN_AGENT_CHUNK + 3);
	int64_t ids[VN_AGENT_WINDOW];
	size_t head = 0, tail = 0;
	uint64_t asked = 0, got = 0;
	struct vn_sha256 h;
	int rc;

	vn_sha256_init(&h);
	while (asked < size || tail < head) {
		if (asked < size && head - tail < VN_AGENT_WINDOW) {
			struct json_object *req = path_request("read", path);
			uint64_t len = size - asked < VN_AGENT_CHUNK ? size - asked : VN_AGENT_CHUNK;

			json_object_object_add(req, "offset", json_object_new_int64((int64_t)asked));
			json_object_object_add(req, "length", json_object_new_int64((int64_t)len));
			rc = vn_agent_request_send(a, req, vn_agent_deadline_after(CHUNK_MS),
						   &ids[head % VN_AGENT_WINDOW], err);
			if (rc < 0)
				return rc;
			head++;
			asked += len;
			continue;
		}
		struct json_object *reply = NULL;
		uint64_t want = size - got < VN_AGENT_CHUNK ? size - got : VN_AGENT_CHUNK;
		size_t n = 0;

		rc = chunk_reply(a, ids[tail % VN_AGENT_WINDOW], "read", path, VN_AGENT_LINE_MAX_CHUNK, &reply, err);
		if (rc == 0)
			rc = vn_agent_decode_chunk(reply, a->guest, (size_t)want, buf, &n, err);
		json_object_put(reply);
		if (rc < 0)
			return rc;
		if (n != want)
			return vn_infra_error(err, -EIO,
					      "%s: %s changed while it was copied (shorter than its %llu bytes)",
					      a->guest, path, (unsigned long long)size);
		if ((rc = vn_write_all(fd, buf, n)) < 0)
			return vn_infra_error(err, rc, "writing the copy of %s: %s", path, strerror(-rc));
		vn_sha256_update(&h, buf, n);
		tail++;
		got += n;
		if (progress)
			progress(data, got);
	}
	vn_sha256_final(&h, digest);
	return 0;
}

/* How many files one sha256sum in the guest reads. */
#define SHA_BATCH 64

static int hex_digest(const char *s, uint8_t out[VN_SHA256_LEN])
{
	for (size_t i = 0; i < VN_SHA256_LEN; i++) {
		unsigned v;

		if (sscanf(s + 2 * i, "%2x", &v) != 1 || !strchr("0123456789abcdef", s[2 * i]) ||
		    !strchr("0123456789abcdef", s[2 * i + 1]))
			return -1;
		out[i] = (uint8_t)v;
	}
	return 0;
}

/* sha256sum prints "HEX  PATH\n" per file, in argument order: match each line exactly. */
static int sha256_batch(struct vn_agent *a, const char *const *paths, size_t n, uint8_t (*digests)[VN_SHA256_LEN],
			struct vn_error *err)
{
	_cleanup_free_ const char **argv = vn_xcalloc(n + 2, sizeof(*argv));
	_cleanup_(vn_strbuf_free) struct vn_strbuf out = {0};
	bool truncated = false;
	size_t pos = 0;
	int status = 0, rc;

	argv[0] = "sha256sum";
	memcpy(argv + 1, paths, n * sizeof(*argv));
	struct vn_agent_exec_opts o = {.argv = argv,
				       .stdin_fd = -1,
				       .stdout_fd = -1,
				       .stderr_fd = -1,
				       .stdout_buf = &out,
				       .buf_max = n * (VN_SHA256_HEX_LEN + 4096 + 3),
				       .truncated = &truncated};
	if ((rc = vn_agent_exec(a, &o, &status, err)) < 0)
		return vn_error_prefix(err, "checksums in the guest");
	for (size_t i = 0; i < n; i++) {
		size_t plen = strlen(paths[i]);

		if (status || truncated || out.len - pos < VN_SHA256_HEX_LEN + 3 + plen ||
		    memcmp(out.s + pos + VN_SHA256_HEX_LEN, "  ", 2) ||
		    memcmp(out.s + pos + VN_SHA256_HEX_LEN + 2, paths[i], plen) ||
		    out.s[pos + VN_SHA256_HEX_LEN + 2 + plen] != '\n' || hex_digest(out.s + pos, digests[i]) < 0)
			return vn_infra_error(err, -EBADMSG,
					      "%s: sha256sum %s in the guest: exit %d, unexpected output", a->guest,
					      paths[i], status);
		pos += VN_SHA256_HEX_LEN + 3 + plen;
	}
	return 0;
}

int vn_agent_sha256(struct vn_agent *a, const char *const *paths, size_t n, uint8_t (*digests)[VN_SHA256_LEN],
		    struct vn_error *err)
{
	for (size_t i = 0; i < n; i += SHA_BATCH) {
		int rc = sha256_batch(a, paths + i, n - i < SHA_BATCH ? n - i : SHA_BATCH, digests + i, err);

		if (rc < 0)
			return rc;
	}
	return 0;
}
