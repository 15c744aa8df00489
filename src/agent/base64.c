#include "agent/protocol.h"

#include <stdint.h>

static const char enc_table[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

size_t vn_base64_encode(const void *in, size_t len, char *out)
{
	const unsigned char *p = in;
	char *o = out;
	size_t i;

	for (i = 0; i + 2 < len; i += 3) {
		uint32_t v = (uint32_t)p[i] << 16 | (uint32_t)p[i + 1] << 8 | p[i + 2];
		*o++ = enc_table[v >> 18 & 63];
		*o++ = enc_table[v >> 12 & 63];
		*o++ = enc_table[v >> 6 & 63];
		*o++ = enc_table[v & 63];
	}
	if (i < len) {
		uint32_t v = (uint32_t)p[i] << 16 | (i + 1 < len ? (uint32_t)p[i + 1] << 8 : 0);
		*o++ = enc_table[v >> 18 & 63];
		*o++ = enc_table[v >> 12 & 63];
		*o++ = i + 1 < len ? enc_table[v >> 6 & 63] : '=';
		*o++ = '=';
	}
	*o = '\0';
	return (size_t)(o - out);
}

static int dec_char(char c)
{
	if (c >= 'A' && c <= 'Z')
		return c - 'A';
	if (c >= 'a' && c <= 'z')
		return c - 'a' + 26;
	if (c >= '0' && c <= '9')
		return c - '0' + 52;
	if (c == '+')
		return 62;
	if (c == '/')
		return 63;
	return -1;
}

long vn_base64_decode(const char *in, size_t len, void *out)
{
	unsigned char *o = out;

	if (len % 4)
		return -1;
	for (size_t i = 0; i < len; i += 4) {
		int pad = 0;
		uint32_t v = 0;

		for (int k = 0; k < 4; k++) {
			int d;

			/* Padding is only legal in the last two positions of the last quantum. */
			if (in[i + k] == '=' && i + 4 == len && k >= 2 && (k == 3 || in[i + 3] == '=')) {
				pad++;
				d = 0;
			} else if ((d = dec_char(in[i + k])) < 0 || pad) {
				return -1;
			}
			v = v << 6 | (uint32_t)d;
		}
		*o++ = (unsigned char)(v >> 16);
		if (pad < 2)
			*o++ = (unsigned char)(v >> 8);
		if (pad < 1)
			*o++ = (unsigned char)v;
	}
	return (long)(o - (unsigned char *)out);
}
