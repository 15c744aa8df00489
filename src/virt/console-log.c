/* The console log file: its tail, and a failure's detail made of it; no libvirt (cli/front.c links it). */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "util/alloc.h"
#include "util/cleanup.h"
#include "util/strbuf.h"
#include "virt/console.h"

int vn_console_log_tail(const char *path, unsigned nlines, char **out, struct vn_error *err)
{
	_cleanup_close_ int fd = open(path, O_RDONLY | O_CLOEXEC);
	struct stat sb;

	*out = NULL;
	if (fd < 0) {
		if (errno == ENOENT) {
			*out = vn_xstrdup("");
			return 0;
		}
		return vn_infra_error(err, -errno, "cannot read %s: %s", path, strerror(errno));
	}
	if (fstat(fd, &sb) < 0)
		return vn_infra_error(err, -errno, "cannot stat %s: %s", path, strerror(errno));
	/* Consoles can log megabytes; the last 64 KiB hold any useful tail. */
	off_t start = sb.st_size > 65536 ? sb.st_size - 65536 : 0;
	size_t cap = (size_t)(sb.st_size - start);
	_cleanup_free_ char *buf = vn_xmalloc(cap + 1);
	ssize_t n = pread(fd, buf, cap, start);
	if (n < 0)
		return vn_infra_error(err, -errno, "cannot read %s: %s", path, strerror(errno));
	size_t len = (size_t)n;
	while (len > 0 && (buf[len - 1] == '\n' || buf[len - 1] == '\r'))
		len--;
	buf[len] = '\0';
	size_t pos = len;
	unsigned lines = 0;
	while (pos > 0 && lines < nlines) {
		pos--;
		if (buf[pos] == '\n' && ++lines == nlines) {
			pos++;
			break;
		}
	}
	/* Serial consoles end lines with \r\n; keep only \n. */
	size_t kept = 0;
	for (size_t i = pos; i < len; i++)
		if (buf[i] != '\r')
			buf[kept++] = buf[i];
	/* The guest's words, bound for a terminal and for reports: no escape sequence, valid UTF-8. */
	*out = vn_xmalloc(kept + 4);
	vn_text_clean(buf, kept, kept, VN_TEXT_LINES, *out);
	return 0;
}

void vn_console_failure_detail(struct vn_error *err, const char *tail, const char *kept)
{
	_cleanup_free_ char *detail = vn_xasprintf(
		"%s%s%s%s%s%s", tail && *tail ? "--- last lines of the console log ---\n" : "", tail ? tail : "",
		tail && *tail ? "\n" : "", kept ? "logs kept in " : "", kept ? kept : "", kept ? "\n" : "");

	if (*detail)
		vn_error_set_detail(err, detail);
}
