/*
 * An independent strict reading of UTF-8 for the tests of the sanitizer and
 * of the result files: a sequence is decoded by its lead byte, then refused
 * when it is overlong, a surrogate or past U+10FFFF (glibc's mbrtowc takes
 * U+110000, so it cannot be the judge).
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* true when s[0..len) is valid UTF-8; *controls counts C0 (but \n, \t), DEL and C1 characters in it. */
static inline bool text_check(const char *s, size_t len, unsigned *controls)
{
	const unsigned char *p = (const unsigned char *)s;

	*controls = 0;
	for (size_t i = 0; i < len;) {
		unsigned n = p[i] < 0x80             ? 1
			     : (p[i] & 0xe0) == 0xc0 ? 2
			     : (p[i] & 0xf0) == 0xe0 ? 3
			     : (p[i] & 0xf8) == 0xf0 ? 4
						     : 0;
		static const uint32_t min[] = {0, 0, 0x80, 0x800, 0x10000};
		if (!n || i + n > len)
			return false;
		uint32_t cp = n == 1 ? p[i] : p[i] & (0x7f >> n);
		for (unsigned k = 1; k < n; k++) {
			if ((p[i + k] & 0xc0) != 0x80)
				return false;
			cp = cp << 6 | (p[i + k] & 0x3f);
		}
		if (cp < min[n] || (cp >= 0xd800 && cp <= 0xdfff) || cp > 0x10ffff)
			return false;
		if ((cp < 0x20 && cp != '\n' && cp != '\t') || (cp >= 0x7f && cp <= 0x9f))
			(*controls)++;
		i += n;
	}
	return true;
}
