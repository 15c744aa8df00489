#include "util/error.h"

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/alloc.h"
#include "util/strbuf.h"

/*
 * Guest text reaches messages in many ways (a console line, an agent's error,
 * a command's stderr); whatever a caller quoted, the message that leaves
 * here is valid UTF-8 with no escape sequence (util/strbuf.h).
 */
static void clean_msg(struct vn_error *err)
{
	char clean[VN_ERROR_MSG_MAX + 4];

	vn_text_clean(err->msg, strlen(err->msg), sizeof(err->msg) - 1, VN_TEXT_LINES, clean);
	memcpy(err->msg, clean, strlen(clean) + 1);
}

int vn_error_set(struct vn_error *err, enum vn_error_kind kind, int code, const char *fmt, ...)
{
	int rc = code < 0 ? code : -code;

	if (rc == 0)
		rc = -EIO;
	/* The first error is the cause; later ones are consequences. */
	if (!err || err->kind != VN_ERR_NONE)
		return rc;
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(err->msg, sizeof(err->msg), fmt, ap);
	va_end(ap);
	clean_msg(err);
	err->kind = kind;
	err->code = rc;
	return rc;
}

int vn_error_prefix(struct vn_error *err, const char *fmt, ...)
{
	if (!err)
		return -EIO;
	char prefix[1024];
	char old[VN_ERROR_MSG_MAX];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(prefix, sizeof(prefix), fmt, ap);
	va_end(ap);
	memcpy(old, err->msg, sizeof(old));
	/* Truncation is fine: the cause stays at the front of a long chain. */
	size_t n = strlen(prefix);
	if (n > sizeof(err->msg) - 3)
		n = sizeof(err->msg) - 3;
	memcpy(err->msg, prefix, n);
	memcpy(err->msg + n, ": ", 2);
	size_t room = sizeof(err->msg) - n - 3;
	size_t ol = strnlen(old, room);
	memcpy(err->msg + n + 2, old, ol);
	err->msg[n + 2 + ol] = '\0';
	clean_msg(err);
	return err->code ? err->code : -EIO;
}

void vn_error_set_detail(struct vn_error *err, const char *detail)
{
	if (!err || !detail)
		return;
	free(err->detail);
	err->detail = vn_text_dup(detail, SIZE_MAX, VN_TEXT_LINES);
}

void vn_error_clear(struct vn_error *err)
{
	if (!err)
		return;
	free(err->detail);
	memset(err, 0, sizeof(*err));
}
