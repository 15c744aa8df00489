/* A host client's agent channel: the first one no other client holds (agent-channel.h). */
#include "guest/agent-channel.h"

#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "agent/protocol.h"
#include "util/alloc.h"
#include "util/cleanup.h"
#include "util/state.h"
#include "util/strbuf.h"

/* How much of a holder's command line its lock file keeps: enough to tell a run from an exec. */
#define HOLDER_MAX 160

/* "pid N (ARGV...)": who holds the lock, for the next client's error. */
static void holder_write(int fd)
{
	char cmd[HOLDER_MAX] = "", line[HOLDER_MAX + 32];
	_cleanup_close_ int c = open("/proc/self/cmdline", O_RDONLY | O_CLOEXEC);
	ssize_t n = c >= 0 ? read(c, cmd, sizeof(cmd) - 1) : -1;

	for (ssize_t i = 0; i < n; i++)
		if (cmd[i] == '\0' || cmd[i] == '\n')
			cmd[i] = ' ';
	while (n > 0 && cmd[n - 1] == ' ')
		n--;
	cmd[n > 0 ? n : 0] = '\0';
	int len = snprintf(line, sizeof(line), "pid %d (%s)", (int)getpid(), cmd);
	/* Only informative: a failed write leaves the next client's error vaguer. */
	if (ftruncate(fd, 0) == 0 && pwrite(fd, line, (size_t)len, 0) < 0)
		return;
}

static void holder_read(const char *lock, struct vn_strbuf *b)
{
	char line[HOLDER_MAX + 32];
	_cleanup_close_ int fd = open(lock, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
	ssize_t n = fd >= 0 ? read(fd, line, sizeof(line) - 1) : -1;

	line[n > 0 ? n : 0] = '\0';
	vn_strbuf_printf(b, "%s%s", b->len ? ", " : "", n > 0 ? line : "an unknown process");
}

int vn_agent_channel_claim(const char *sock0, char **path, struct vn_error *err)
{
	_cleanup_strbuf_ struct vn_strbuf holders = VN_STRBUF_INIT;
	struct stat st;
	bool have0 = stat(sock0, &st) == 0;
	unsigned seen = 0;

	for (unsigned i = 0; i < VN_AGENT_NPORTS; i++) {
		_cleanup_free_ char *sock = vn_state_agent_channel(sock0, i);
		_cleanup_free_ char *lock = vn_state_agent_channel_lock(sock0, i);

		if (i && have0 && stat(sock, &st) != 0)
			continue;
		seen++;
		_cleanup_close_ int fd = open(lock, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600);
		if (fd < 0)
			return vn_infra_error(err, -errno, "cannot open the agent channel lock %s: %s", lock,
					      strerror(errno));
		if (flock(fd, LOCK_EX | LOCK_NB) == 0) {
			int held = fd;

			holder_write(fd);
			*path = sock;
			sock = NULL;
			fd = -1;
			return held;
		}
		if (errno != EWOULDBLOCK)
			return vn_infra_error(err, -errno, "cannot lock %s: %s", lock, strerror(errno));
		holder_read(lock, &holders);
	}
	/* STATE/guests/NAME/agent.sock: the guest's name, as vnuma's user knows it. */
	const char *base = strrchr(sock0, '/'), *dir = base;
	while (dir && dir > sock0 && dir[-1] != '/')
		dir--;
	return vn_infra_error(err, -EBUSY,
			      "no free agent channel of guest '%.*s' (all %u in use, by %s); wait for one of them to "
			      "end, or end it",
			      base ? (int)(base - dir) : (int)strlen(sock0), base ? dir : sock0, seen,
			      holders.len ? holders.s : "processes that do not say");
}
