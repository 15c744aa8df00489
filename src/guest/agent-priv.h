/*
 * Internals of the host side of the agent protocol, for the unit tests and
 * the fuzz harness: the decoder that turns one line from the guest into a
 * type-checked message. Nothing outside src/guest/ and tests/ includes this.
 */
#pragma once

#include "guest/agent-client.h"
#include "guest/agent-exec.h"
#include "guest/agent-file.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/*
 * Longest line accepted while waiting for a reply that carries no file data
 * (hello, write, poweroff, exec streams of at most 32 KiB and verdicts).
 */
#define VN_AGENT_LINE_MAX_SMALL (1u << 20)
/* While waiting for a "read" reply: a whole file of VN_AGENT_READ_MAX bytes in base64. */
#define VN_AGENT_LINE_MAX_READ (vn_base64_encoded_len(VN_AGENT_READ_MAX) + 65536)

enum vn_agent_msg_kind {
	VN_AGENT_MSG_STREAM = 1, /* has a "stream" key */
	VN_AGENT_MSG_FINAL,      /* the one final reply to a request */
};

struct vn_agent_msg {
	struct json_object *json; /* the whole object; owned */
	bool has_id;              /* false: "id": null, the agent's answer to a line it could not parse */
	int64_t id;
	enum vn_agent_msg_kind kind;
	/* VN_AGENT_MSG_STREAM */
	enum vn_agent_event_kind stream; /* VN_AGENT_EV_STDOUT or VN_AGENT_EV_STDERR */
	char *data;                      /* decoded "data", NUL-terminated; owned */
	size_t len;
	/* VN_AGENT_MSG_FINAL */
	bool ok;
	const char *error; /* "error" (borrowed from json), NULL when absent */
	int guest_errno;   /* "errno", 0 when absent */
	bool timed_out;
	bool has_exit_code, has_signal;
	int exit_code, signal;
};

/*
 * Decodes one line (without its '\n'; need not be NUL-terminated). Returns 0
 * with *m filled; 1 when the line is not a JSON object at all (console noise,
 * or a line torn when a previous host disconnected: skipped); or, for an
 * object that breaks the protocol, -EBADMSG as a VN_ERR_INFRA error that
 * starts with guest (e.g. "guest 4node: malformed agent message: ...").
 */
int vn_agent_msg_decode(const char *line, size_t len, const char *guest, struct vn_agent_msg *m, struct vn_error *err);
void vn_agent_msg_clear(struct vn_agent_msg *m);

/* While waiting for a chunked "read" reply: VN_AGENT_CHUNK_MAX bytes in base64. */
#define VN_AGENT_LINE_MAX_CHUNK (vn_base64_encoded_len(VN_AGENT_CHUNK_MAX) + 65536)
/* While waiting for a "readdir" reply: VN_AGENT_READDIR_MAX entries of a 255-byte name. */
#define VN_AGENT_LINE_MAX_READDIR (VN_AGENT_READDIR_MAX * 384u)

/*
 * The replies of the file ops (stat, readdir, chunked read), type-checked
 * like every other message: a reply that breaks the protocol is -EBADMSG
 * naming the guest and what. stat: "type" one of file/dir/link/other,
 * "mode" 0..07777, "size" >= 0.
 */
int vn_agent_decode_stat(struct json_object *o, const char *guest, struct vn_agent_stat *st, struct vn_error *err);
/*
 * readdir: "entries" an array of at most VN_AGENT_READDIR_MAX stat objects
 * with a "name" that is one path component: 1..255 bytes, not "." or "..",
 * no '/' and no control character (the names become host paths).
 */
int vn_agent_decode_dirents(struct json_object *o, const char *guest, struct vn_agent_dirent **ents, size_t *n,
			    struct vn_error *err);
/* A chunked read: "data" base64 of at most max bytes, decoded into buf (max + 3 bytes); "eof" a boolean. */
int vn_agent_decode_chunk(struct json_object *o, const char *guest, size_t max, char *buf, size_t *len,
			  struct vn_error *err);

/*
 * Tests: the wire below vn_agent_call. Sends one message as is (consumed),
 * waiting at most timeout_ms for the socket; receives the next message,
 * whatever its id, type-checked like every other (a malformed one is
 * -EBADMSG; lines that are not JSON objects are skipped).
 */
int vn_agent_send(struct vn_agent *a, struct json_object *msg, int timeout_ms, struct vn_error *err);
int vn_agent_recv(struct vn_agent *a, int timeout_ms, struct json_object **msg, struct vn_error *err);
/* Tests: the agent's poweroff op (vnuma destroys its guests rather than asking them), acknowledged. */
int vn_agent_poweroff(struct vn_agent *a, int timeout_ms, struct vn_error *err);

/* Tests and the fuzz harness: make the next request ids predictable. */
void vn_agent_set_next_id(struct vn_agent *a, int64_t id);
/* Tests: how much memory the input buffer holds now (its capacity). */
size_t vn_agent_buffer_size(const struct vn_agent *a);
/* Tests and the fuzz harness: lower every line cap to max (0: the defaults). */
void vn_agent_set_line_max(struct vn_agent *a, size_t max);
