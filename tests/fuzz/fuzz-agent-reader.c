/*
 * Fuzz target for the host reader of the agent protocol: arbitrary bytes, as
 * a hostile guest would send them, go through the line reader and the
 * decoder (src/guest/agent-client.c, agent-exec.c, agent-proto.c) the way the scenario
 * runner, vn_agent_exec and vn_agent_read_file consume them. Built for
 * libFuzzer with clang (-DVN_FUZZ=ON), and always with a replay main() so
 * the corpus runs as a regression test.
 *
 * Every final reply that decodes also goes through the file-op decoders
 * (stat, readdir, chunked read), whose names become host paths: each entry
 * name they accept must be one safe path component.
 *
 * The first byte picks the consumer (low 2 bits: exec events, read, sync
 * exec) and, in its high bits, a line cap from 16 bytes to 1 KiB or the
 * default, so over-long lines and the skipping after them are explored too;
 * the rest is what the guest sent, then EOF. Request ids start at 1, so
 * inputs can answer them.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "guest/agent-priv.h"
#include "util/strbuf.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Every rejection is an infrastructure error that names the guest. */
static void check_error(int rc, const struct vn_error *err)
{
	if (rc >= 0)
		return;
	if (err->kind != VN_ERR_INFRA || !strstr(err->msg, "guest fuzz"))
		abort();
}

/* A name the readdir decoder let through must be safe to join to a host path. */
static void check_name(const char *n)
{
	size_t len = strlen(n);

	if (!len || len > 255 || strchr(n, '/') || !strcmp(n, ".") || !strcmp(n, ".."))
		abort();
	for (const unsigned char *c = (const unsigned char *)n; *c; c++)
		if (*c < 0x20 || *c == 0x7f)
			abort();
}

static void decode_file_replies(struct json_object *o)
{
	struct vn_agent_stat st;
	struct vn_agent_dirent *ents = NULL;
	struct vn_error err = {0};
	char buf[64 + 3];
	size_t n = 0, len = 0;
	int rc;

	rc = vn_agent_decode_stat(o, "guest fuzz", &st, &err);
	check_error(rc, &err);
	if (rc == 0 && st.mode > 07777)
		abort();
	vn_error_clear(&err);
	rc = vn_agent_decode_dirents(o, "guest fuzz", &ents, &n, &err);
	check_error(rc, &err);
	for (size_t i = 0; rc == 0 && i < n; i++)
		check_name(ents[i].name);
	if (rc == 0)
		vn_agent_dirents_free(ents, n);
	vn_error_clear(&err);
	rc = vn_agent_decode_chunk(o, "guest fuzz", 64, buf, &len, &err);
	check_error(rc, &err);
	if (rc == 0 && len > 64)
		abort();
	vn_error_clear(&err);
}

/* Each line on its own through the decoder. */
static void decode_lines(const char *s, size_t n)
{
	while (n) {
		const char *nl = memchr(s, '\n', n);
		size_t len = nl ? (size_t)(nl - s) : n;
		struct vn_agent_msg m;
		struct vn_error err = {0};
		int rc = vn_agent_msg_decode(s, len, "guest fuzz", &m, &err);

		check_error(rc, &err);
		if (rc == 0) {
			if (!m.json || (m.kind != VN_AGENT_MSG_STREAM && m.kind != VN_AGENT_MSG_FINAL))
				abort();
			if (m.kind == VN_AGENT_MSG_STREAM && (!m.has_id || !m.data || m.data[m.len] != '\0'))
				abort();
			if (m.kind == VN_AGENT_MSG_FINAL && !m.ok && !m.error)
				abort();
			if (m.kind == VN_AGENT_MSG_FINAL && m.ok)
				decode_file_replies(m.json);
			vn_agent_msg_clear(&m);
		}
		vn_error_clear(&err);
		s += len + (nl != NULL);
		n -= len + (nl != NULL);
	}
}

static void consume_exec_events(struct vn_agent *a)
{
	static const char *const argv[] = {"x", NULL};
	struct vn_agent_cmd c = {.argv = argv};
	int64_t id;

	for (int i = 0; i < 3; i++) {
		struct vn_error err = {0};
		if (vn_agent_exec_start(a, &c, 1000, &id, &err) < 0)
			abort();
	}
	for (int turns = 0; turns < 100000; turns++) {
		struct vn_agent_event ev;
		struct vn_error err = {0};
		int rc = vn_agent_exec_wait(a, 1000, &ev, &err);

		check_error(rc, &err);
		vn_error_clear(&err);
		if (rc == -ECONNRESET || rc == -ETIMEDOUT)
			break;
		if (rc == 0 && ev.kind != VN_AGENT_EV_EXIT && (!ev.data || ev.data[ev.len] != '\0'))
			abort();
		if (rc == 0 && ev.kind == VN_AGENT_EV_EXIT && !ev.started && ev.status != -1)
			abort();
	}
}

static void consume_sync(struct vn_agent *a, int which)
{
	for (int turns = 0; turns < 1000; turns++) {
		struct vn_error err = {0};
		char *data = NULL;
		size_t len;
		int rc;

		if (which == 1) {
			rc = vn_agent_read_file(a, "/proc/vmstat", 1000, &data, &len, &err);
			if (rc == 0 && data[len] != '\0')
				abort();
			free(data);
		} else {
			struct vn_strbuf out = VN_STRBUF_INIT;
			static const char *const argv[] = {"x", NULL};
			struct vn_agent_exec_opts o = {.argv = argv,
						       .stdin_fd = -1,
						       .stdout_fd = -1,
						       .stderr_fd = -1,
						       .stdout_buf = &out,
						       .buf_max = 100,
						       .timeout_s = 1};
			int status;

			rc = vn_agent_exec(a, &o, &status, &err);
			if (out.len > 100)
				abort();
			vn_strbuf_free(&out);
		}
		/* An input error is the guest saying a program could not start: fine. */
		if (rc < 0 && err.kind != VN_ERR_INPUT)
			check_error(rc, &err);
		vn_error_clear(&err);
		if (rc == -ECONNRESET || rc == -ETIMEDOUT)
			break;
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct vn_agent *a = NULL;
	struct vn_error err = {0};
	int sv[2];

	if (size < 1)
		return 0;
	signal(SIGPIPE, SIG_IGN);
	decode_lines((const char *)data + 1, size - 1);
	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) < 0)
		abort();
	/* What fits in the socket is what the guest sent; then EOF. */
	fcntl(sv[1], F_SETFL, O_NONBLOCK);
	for (size_t off = 1; off < size;) {
		ssize_t n = write(sv[1], data + off, size - off);
		if (n <= 0)
			break;
		off += (size_t)n;
	}
	shutdown(sv[1], SHUT_WR);
	if (vn_agent_from_fd(sv[0], &a, &err) < 0)
		abort();
	vn_agent_set_guest(a, "fuzz");
	vn_agent_set_next_id(a, 1);
	if (data[0] >> 5)
		vn_agent_set_line_max(a, (size_t)8 << (data[0] >> 5));
	if (data[0] % 4 == 0 || data[0] % 4 == 3)
		consume_exec_events(a);
	else
		consume_sync(a, data[0] % 4);
	vn_agent_close(a);
	close(sv[1]);
	return 0;
}

#ifndef VN_LIBFUZZER
#include "replay-main.h"
#endif
