#include "util/strbuf.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/alloc.h"

/* Allocation failure aborts (util/alloc.h). */
static void reserve(struct vn_strbuf *b, size_t extra)
{
	if (b->len + extra + 1 <= b->cap)
		return;
	size_t cap = b->cap ? b->cap : 64;
	while (cap < b->len + extra + 1)
		cap *= 2;
	b->s = vn_xreallocarray(b->s, cap, 1);
	b->cap = cap;
}

void vn_strbuf_append(struct vn_strbuf *b, const char *s, size_t n)
{
	reserve(b, n);
	memcpy(b->s + b->len, s, n);
	b->len += n;
	b->s[b->len] = '\0';
}

void vn_strbuf_printf(struct vn_strbuf *b, const char *fmt, ...)
{
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(NULL, 0, fmt, ap);
	va_end(ap);
	if (n < 0)
		return;
	reserve(b, (size_t)n);
	va_start(ap, fmt);
	vsnprintf(b->s + b->len, (size_t)n + 1, fmt, ap);
	va_end(ap);
	b->len += (size_t)n;
}

char *vn_strbuf_steal(struct vn_strbuf *b)
{
	char *s = b->s ? b->s : vn_xstrdup("");
	b->s = NULL;
	b->len = b->cap = 0;
	return s;
}

void vn_strbuf_free(struct vn_strbuf *b)
{
	free(b->s);
	b->s = NULL;
	b->len = b->cap = 0;
}

char *vn_excerpt(const char *s, size_t len, size_t max, char *out)
{
	size_t n = len < max ? len : max;

	/* No escape sequence, newline or invalid UTF-8 of the guest's reaches a terminal or a log line. */
	for (size_t i = 0; i < n; i++)
		out[i] = s[i] >= 0x20 && s[i] < 0x7f ? s[i] : '?';
	strcpy(out + n, len > n ? "..." : "");
	return out;
}
