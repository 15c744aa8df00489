/* Growable string for building text output (XML, tables, logs). */
#pragma once

#include <stddef.h>

struct vn_strbuf {
	char *s;
	size_t len, cap;
};

#define VN_STRBUF_INIT     \
	{                  \
		NULL, 0, 0 \
	}

void vn_strbuf_printf(struct vn_strbuf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void vn_strbuf_append(struct vn_strbuf *b, const char *s, size_t n);
/* Returns the string ("" if empty) and resets b; caller frees. */
char *vn_strbuf_steal(struct vn_strbuf *b);
void vn_strbuf_free(struct vn_strbuf *b);

/*
 * The one sanitizer for text from an untrusted source (the guest: its console,
 * its agent's errors, what it reports) before it enters a message, a vn_error
 * or a result file. At most max of s's len bytes, never cut inside a
 * character, then "..." when cut. Valid UTF-8 is kept; a control character
 * (C0 but \n and \t where VN_TEXT_LINES allows them, DEL, and C1: ESC, BEL,
 * CSI, OSC...), NUL, U+FFFE and U+FFFF (not XML characters) and the
 * bidirectional overrides each become one '?', and so does each byte of
 * invalid UTF-8 (a stray continuation byte, an overlong form, a surrogate,
 * past U+10FFFF, a sequence cut short). So what comes out is valid UTF-8,
 * XML 1.0 character data, and holds no escape sequence for a terminal.
 * out needs max + 4 bytes and may not overlap s; returns out.
 */
#define VN_TEXT_LINES 1u /* keep \n and \t: a console tail, a detail block */
char *vn_text_clean(const char *s, size_t len, size_t max, unsigned flags, char *out);
/* The same, malloc'd: all of s (strlen) at most max bytes. */
char *vn_text_dup(const char *s, size_t max, unsigned flags);
/* One line of guest text quoted in a message: vn_text_clean without VN_TEXT_LINES. */
char *vn_excerpt(const char *s, size_t len, size_t max, char *out);

#define _cleanup_strbuf_ __attribute__((cleanup(vn_strbuf_free)))
