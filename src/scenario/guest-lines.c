#include "scenario/guest-lines.h"

#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "util/parse.h"
#include "util/strbuf.h"

/* The one message for a line that is not what our script prints. */
static int bad_line(const char *guest, const char *what, const char *line, const char *why, struct vn_error *err)
{
	char quoted[80 + 4];

	vn_excerpt(line, strlen(line), 80, quoted);
	return vn_infra_error(err, -EPROTO, "guest %s: %s line '%s': %s", guest, what, quoted, why);
}

/* Digits only, as a number in [1, INT_MAX]: no sign, space or base prefix. */
static bool pid_parse(const char *text, size_t len, int *out)
{
	char buf[16];
	uint64_t v;
	struct vn_error e = {0};

	if (len == 0 || len >= sizeof(buf))
		return false;
	memcpy(buf, text, len);
	buf[len] = '\0';
	bool ok = vn_count_parse(buf, 1, INT_MAX, &v, &e) == 0;
	vn_error_clear(&e);
	if (ok)
		*out = (int)v;
	return ok;
}

int vn_guest_move_line_parse(const char *guest, const char *line, struct vn_guest_move_line *out, struct vn_error *err)
{
	const char *what = "move action";
	size_t len = strnlen(line, VN_GUEST_LINE_MAX + 1);

	if (len > VN_GUEST_LINE_MAX)
		return bad_line(guest, what, line, "too long", err);
	*out = (struct vn_guest_move_line){0};
	if (strncmp(line, "pid ", 4) == 0) {
		out->is_pid = true;
		return pid_parse(line + 4, len - 4, &out->pid) ? 0 : bad_line(guest, what, line, "not a pid", err);
	}
	/* /proc/uptime: "SECONDS.HH IDLE.HH"; only the first field is ours to read. */
	size_t n = strspn(line, "0123456789.");
	if (n == 0 || (line[n] != ' ' && line[n] != '\0') || !isdigit((unsigned char)line[0]))
		return bad_line(guest, what, line, "neither 'pid N' nor /proc/uptime", err);
	char buf[VN_GUEST_LINE_MAX + 1], *end;
	memcpy(buf, line, n);
	buf[n] = '\0';
	out->uptime = strtod(buf, &end);
	if (*end || !isfinite(out->uptime))
		return bad_line(guest, what, line, "not an uptime", err);
	return 0;
}

int vn_guest_pidfile_line_parse(const char *guest, const char *line, struct vn_guest_pidfile_line *out,
				struct vn_error *err)
{
	const char *what = "pidfile";
	size_t len = strnlen(line, VN_GUEST_LINE_MAX + 1);
	uint64_t idx;
	struct vn_error e = {0};

	if (len > VN_GUEST_LINE_MAX)
		return bad_line(guest, what, line, "too long", err);
	*out = (struct vn_guest_pidfile_line){0};
	const char *sp = strrchr(line, ' ');
	if (!sp || !pid_parse(sp + 1, len - (size_t)(sp + 1 - line), &out->pid))
		return bad_line(guest, what, line, "no pid after the file name", err);
	/* "STEP.INDEX.pid": a step's name may hold dots, so from the right. */
	size_t flen = (size_t)(sp - line);
	if (flen < 4 || memcmp(sp - 4, ".pid", 4) != 0)
		return bad_line(guest, what, line, "not a STEP.INDEX.pid file", err);
	char file[VN_GUEST_LINE_MAX + 1];
	memcpy(file, line, flen - 4);
	file[flen - 4] = '\0';
	char *dot = strrchr(file, '.');
	if (!dot || dot == file || (size_t)(dot - file) >= sizeof(out->step))
		return bad_line(guest, what, line, "not a STEP.INDEX.pid file", err);
	bool ok = vn_count_parse(dot + 1, 0, UINT_MAX, &idx, &e) == 0;
	vn_error_clear(&e);
	if (!ok)
		return bad_line(guest, what, line, "the index is not a number", err);
	*dot = '\0';
	memcpy(out->step, file, (size_t)(dot - file) + 1);
	out->index = (unsigned)idx;
	return 0;
}
