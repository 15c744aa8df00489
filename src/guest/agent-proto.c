/*
 * The decoder for what the guest agent sends: every field of every message
 * is type-checked here, once, so nothing above this file ever looks at the
 * guest's JSON unchecked. The guest runs a kernel under test and is not
 * trusted: a message that breaks docs/agent-protocol.md is an error naming
 * the guest, never a crash or a guess.
 */
#include "guest/agent-priv.h"

#include "util/alloc.h"
#include "util/cleanup.h"
#include "util/strbuf.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* How much of an offending line an error message quotes. */
#define EXCERPT 80
/* How much of a failed reply's "error" is kept (the agent's own are one strerror line). */
#define ERROR_MAX 1024

__attribute__((format(printf, 5, 6))) static int malformed(struct vn_error *err, const char *guest, const char *line,
							   size_t len, const char *fmt, ...)
{
	char why[256], excerpt[EXCERPT + 4];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(why, sizeof(why), fmt, ap);
	va_end(ap);
	return vn_infra_error(err, -EBADMSG, "%s: malformed agent message (%s): %s", guest, why,
			      vn_excerpt(line, len, EXCERPT, excerpt));
}

/* An optional integer field within [lo, hi]: 0 absent, 1 present, -1 wrong type or range. */
static int int_field(struct json_object *o, const char *key, int64_t lo, int64_t hi, int64_t *out)
{
	struct json_object *v;

	if (!json_object_object_get_ex(o, key, &v))
		return 0;
	if (!json_object_is_type(v, json_type_int))
		return -1;
	*out = json_object_get_int64(v);
	return *out >= lo && *out <= hi ? 1 : -1;
}

/* An optional boolean: 0 absent, 1 present, -1 not a boolean. */
static int bool_field(struct json_object *o, const char *key, bool *out)
{
	struct json_object *v;

	if (!json_object_object_get_ex(o, key, &v))
		return 0;
	if (!json_object_is_type(v, json_type_boolean))
		return -1;
	*out = json_object_get_boolean(v);
	return 1;
}

static int decode_stream(struct vn_agent_msg *m, const char *guest, const char *line, size_t len, struct vn_error *err)
{
	struct json_object *v;
	const char *s;
	size_t slen;
	long n;

	if (!m->has_id)
		return malformed(err, guest, line, len, "a stream message without an id");
	if (!json_object_object_get_ex(m->json, "stream", &v) || !json_object_is_type(v, json_type_string))
		return malformed(err, guest, line, len, "\"stream\" is not a string");
	s = json_object_get_string(v);
	if (!strcmp(s, "stdout"))
		m->stream = VN_AGENT_EV_STDOUT;
	else if (!strcmp(s, "stderr"))
		m->stream = VN_AGENT_EV_STDERR;
	else
		return malformed(err, guest, line, len, "unknown stream");
	if (!json_object_object_get_ex(m->json, "data", &v) || !json_object_is_type(v, json_type_string))
		return malformed(err, guest, line, len, "\"data\" is not a string");
	slen = (size_t)json_object_get_string_len(v);
	m->data = vn_xmalloc(slen / 4 * 3 + 4);
	n = vn_base64_decode(json_object_get_string(v), slen, m->data);
	if (n < 0)
		return malformed(err, guest, line, len, "\"data\" is not base64");
	m->data[n] = '\0';
	m->len = (size_t)n;
	return 0;
}

static int decode_final(struct vn_agent_msg *m, const char *guest, const char *line, size_t len, struct vn_error *err)
{
	struct json_object *v;
	int64_t i = 0;
	int r;

	if (bool_field(m->json, "ok", &m->ok) != 1)
		return malformed(err, guest, line, len, "a reply without a boolean \"ok\"");
	if (json_object_object_get_ex(m->json, "error", &v)) {
		if (!json_object_is_type(v, json_type_string))
			return malformed(err, guest, line, len, "\"error\" is not a string");
		/* Bound for messages and reports: quoted once here, bounded, with no escape sequence of the guest's. */
		char error[ERROR_MAX + 4];
		vn_excerpt(json_object_get_string(v), (size_t)json_object_get_string_len(v), ERROR_MAX, error);
		json_object_set_string(v, error);
		m->error = json_object_get_string(v);
	} else if (!m->ok) {
		return malformed(err, guest, line, len, "a failed reply without \"error\"");
	}
	if ((r = int_field(m->json, "errno", 1, 4095, &i)) < 0)
		return malformed(err, guest, line, len, "\"errno\" is not an errno");
	m->guest_errno = r ? (int)i : 0;
	if (bool_field(m->json, "timed_out", &m->timed_out) < 0)
		return malformed(err, guest, line, len, "\"timed_out\" is not a boolean");
	if ((r = int_field(m->json, "exit_code", 0, 255, &i)) < 0)
		return malformed(err, guest, line, len, "\"exit_code\" is not an exit code");
	m->has_exit_code = r;
	m->exit_code = r ? (int)i : 0;
	if ((r = int_field(m->json, "signal", 1, 127, &i)) < 0)
		return malformed(err, guest, line, len, "\"signal\" is not a signal number");
	m->has_signal = r;
	m->signal = r ? (int)i : 0;
	return 0;
}

int vn_agent_msg_decode(const char *line, size_t len, const char *guest, struct vn_agent_msg *m, struct vn_error *err)
{
	struct json_tokener *tok;
	struct json_object *v;
	size_t end;
	int rc;

	memset(m, 0, sizeof(*m));
	if (len > INT32_MAX)
		return malformed(err, guest, line, len, "longer than 2 GiB");
	tok = json_tokener_new();
	if (!tok)
		vn_oom();
	m->json = json_tokener_parse_ex(tok, line, (int)len);
	end = json_tokener_get_parse_end(tok);
	json_tokener_free(tok);
	if (!m->json || !json_object_is_type(m->json, json_type_object)) {
		/* Not JSON, or JSON but no object: not a message. */
		vn_agent_msg_clear(m);
		return 1;
	}
	/* An object followed by more than whitespace (say, a NUL and more bytes). */
	while (end < len && (line[end] == ' ' || line[end] == '\t' || line[end] == '\r'))
		end++;
	if (end != len)
		rc = malformed(err, guest, line, len, "bytes after the object");
	else if (!json_object_object_get_ex(m->json, "id", &v))
		rc = malformed(err, guest, line, len, "no \"id\"");
	else if (!json_object_is_type(v, json_type_null) && !json_object_is_type(v, json_type_int))
		rc = malformed(err, guest, line, len, "\"id\" is neither an integer nor null");
	else {
		m->has_id = json_object_is_type(v, json_type_int);
		m->id = m->has_id ? json_object_get_int64(v) : -1;
		if (json_object_object_get_ex(m->json, "stream", NULL)) {
			m->kind = VN_AGENT_MSG_STREAM;
			rc = decode_stream(m, guest, line, len, err);
		} else {
			m->kind = VN_AGENT_MSG_FINAL;
			rc = decode_final(m, guest, line, len, err);
		}
	}
	if (rc < 0)
		vn_agent_msg_clear(m);
	return rc;
}

void vn_agent_msg_clear(struct vn_agent_msg *m)
{
	json_object_put(m->json);
	free(m->data);
	memset(m, 0, sizeof(*m));
}

/* A reply's problem, quoted like a message's (the reply is re-serialised: its line is gone). */
static int bad_reply(struct vn_error *err, const char *guest, struct json_object *o, const char *why)
{
	size_t len;
	const char *s = json_object_to_json_string_length(o, JSON_C_TO_STRING_PLAIN, &len);

	return malformed(err, guest, s, len, "%s", why);
}

static const char *const ftypes[] = {
	[VN_AGENT_FILE] = "file", [VN_AGENT_DIR] = "dir", [VN_AGENT_LINK] = "link", [VN_AGENT_OTHER] = "other"};

int vn_agent_decode_stat(struct json_object *o, const char *guest, struct vn_agent_stat *st, struct vn_error *err)
{
	struct json_object *v;
	int64_t i;

	memset(st, 0, sizeof(*st));
	if (!json_object_object_get_ex(o, "type", &v) || !json_object_is_type(v, json_type_string))
		return bad_reply(err, guest, o, "\"type\" is not a string");
	for (size_t k = VN_AGENT_FILE; k < VN_ARRAY_SIZE(ftypes); k++)
		if (!strcmp(json_object_get_string(v), ftypes[k]))
			st->type = (enum vn_agent_ftype)k;
	if (!st->type)
		return bad_reply(err, guest, o, "unknown \"type\"");
	if (int_field(o, "mode", 0, 07777, &i) != 1)
		return bad_reply(err, guest, o, "\"mode\" is not a mode");
	st->mode = (unsigned)i;
	if (int_field(o, "size", 0, INT64_MAX, &i) != 1)
		return bad_reply(err, guest, o, "\"size\" is not a size");
	st->size = (uint64_t)i;
	return 0;
}

/* One path component the host may create: the guest names it, so nothing that climbs or hides. */
static bool component_ok(const char *s, size_t len)
{
	if (!len || len > 255 || !strcmp(s, ".") || !strcmp(s, "..") || strlen(s) != len)
		return false;
	for (size_t i = 0; i < len; i++)
		if (s[i] == '/' || (unsigned char)s[i] < 0x20 || s[i] == 0x7f)
			return false;
	return true;
}

void vn_agent_dirents_free(struct vn_agent_dirent *e, size_t n)
{
	for (size_t i = 0; i < n && e; i++)
		free(e[i].name);
	free(e);
}

int vn_agent_decode_dirents(struct json_object *o, const char *guest, struct vn_agent_dirent **ents, size_t *n,
			    struct vn_error *err)
{
	struct json_object *list, *v;
	struct vn_agent_dirent *e;
	size_t count;
	int rc;

	if (!json_object_object_get_ex(o, "entries", &list) || !json_object_is_type(list, json_type_array))
		return bad_reply(err, guest, o, "\"entries\" is not an array");
	count = json_object_array_length(list);
	if (count > VN_AGENT_READDIR_MAX)
		return bad_reply(err, guest, o, "too many \"entries\"");
	e = vn_xcalloc(count ? count : 1, sizeof(*e));
	for (size_t i = 0; i < count; i++) {
		struct json_object *ent = json_object_array_get_idx(list, i);

		if (!json_object_is_type(ent, json_type_object) || !json_object_object_get_ex(ent, "name", &v) ||
		    !json_object_is_type(v, json_type_string) ||
		    !component_ok(json_object_get_string(v), (size_t)json_object_get_string_len(v))) {
			vn_agent_dirents_free(e, count);
			return bad_reply(err, guest, ent ? ent : o, "an entry's \"name\" is not one path component");
		}
		if ((rc = vn_agent_decode_stat(ent, guest, &e[i].st, err)) < 0) {
			vn_agent_dirents_free(e, count);
			return rc;
		}
		e[i].name = vn_xstrdup(json_object_get_string(v));
	}
	*ents = e;
	*n = count;
	return 0;
}

int vn_agent_decode_chunk(struct json_object *o, const char *guest, size_t max, char *buf, size_t *len,
			  struct vn_error *err)
{
	struct json_object *v;
	size_t slen;
	long n;
	bool eof;

	if (!json_object_object_get_ex(o, "data", &v) || !json_object_is_type(v, json_type_string))
		return bad_reply(err, guest, o, "\"data\" is not a string");
	slen = (size_t)json_object_get_string_len(v);
	if (slen > vn_base64_encoded_len(max))
		return bad_reply(err, guest, o, "more \"data\" than asked for");
	if (bool_field(o, "eof", &eof) != 1)
		return bad_reply(err, guest, o, "\"eof\" is not a boolean");
	n = vn_base64_decode(json_object_get_string(v), slen, buf);
	if (n < 0 || (size_t)n > max)
		return bad_reply(err, guest, o, n < 0 ? "\"data\" is not base64" : "more \"data\" than asked for");
	*len = (size_t)n;
	return 0;
}
