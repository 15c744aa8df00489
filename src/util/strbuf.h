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
 * Text from an untrusted source (the guest) quoted for a one-line message: at
 * most max of its len bytes, each byte outside printable ASCII shown as '?',
 * and "..." when cut. out needs max + 4 bytes; returns out.
 */
char *vn_excerpt(const char *s, size_t len, size_t max, char *out);

#define _cleanup_strbuf_ __attribute__((cleanup(vn_strbuf_free)))
