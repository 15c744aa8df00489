#include "util/strbuf.h"

#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
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

/*
 * The length of the well-formed UTF-8 sequence at p (RFC 3629's table: no
 * overlong form, no surrogate, nothing past U+10FFFF), with its code point;
 * 0 when the bytes there are not one.
 */
static size_t utf8_seq(const unsigned char *p, size_t n, uint32_t *cp)
{
	unsigned char b = p[0];
	size_t len;
	unsigned char lo = 0x80, hi = 0xbf; /* the second byte's range */

	if (b < 0x80) {
		*cp = b;
		return 1;
	}
	if (b >= 0xc2 && b <= 0xdf)
		len = 2, *cp = b & 0x1f;
	else if (b >= 0xe0 && b <= 0xef)
		len = 3, *cp = b & 0x0f, lo = b == 0xe0 ? 0xa0 : 0x80, hi = b == 0xed ? 0x9f : 0xbf;
	else if (b >= 0xf0 && b <= 0xf4)
		len = 4, *cp = b & 0x07, lo = b == 0xf0 ? 0x90 : 0x80, hi = b == 0xf4 ? 0x8f : 0xbf;
	else
		return 0;
	if (n < len || p[1] < lo || p[1] > hi)
		return 0;
	for (size_t i = 1; i < len; i++) {
		if ((p[i] & 0xc0) != 0x80)
			return 0;
		*cp = *cp << 6 | (p[i] & 0x3f);
	}
	return len;
}

static bool text_char_ok(uint32_t cp, unsigned flags)
{
	if (cp == '\n' || cp == '\t')
		return flags & VN_TEXT_LINES;
	/* C0, DEL and C1 (a terminal takes U+009B as CSI); FFFE/FFFF are not XML; bidi overrides reorder the line. */
	return cp >= 0x20 && !(cp >= 0x7f && cp <= 0x9f) && cp != 0xfffe && cp != 0xffff &&
	       !(cp >= 0x202a && cp <= 0x202e) && !(cp >= 0x2066 && cp <= 0x2069);
}

char *vn_text_clean(const char *s, size_t len, size_t max, unsigned flags, char *out)
{
	const unsigned char *p = (const unsigned char *)s;
	size_t i = 0, o = 0;

	while (i < len) {
		uint32_t cp;
		size_t n = utf8_seq(p + i, len - i, &cp);
		if (i + (n ? n : 1) > max)
			break;
		if (n && text_char_ok(cp, flags)) {
			memcpy(out + o, p + i, n);
			o += n;
		} else {
			out[o++] = '?';
		}
		i += n ? n : 1;
	}
	strcpy(out + o, i < len ? "..." : "");
	return out;
}

char *vn_text_dup(const char *s, size_t max, unsigned flags)
{
	size_t len = strlen(s);
	char *out = vn_xmalloc((len < max ? len : max) + 4);

	return vn_text_clean(s, len, max, flags, out);
}

char *vn_excerpt(const char *s, size_t len, size_t max, char *out)
{
	return vn_text_clean(s, len, max, 0, out);
}
