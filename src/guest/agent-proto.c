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
	m->data = malloc(slen / 4 * 3 + 4);
	if (!m->data)
		vn_oom();
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
