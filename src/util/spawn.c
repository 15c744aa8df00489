#include "util/spawn.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <stdbool.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "util/alloc.h"
#include "util/cleanup.h"
#include "util/interrupt.h"

extern char **environ;

/* The caller's environment with LC_ALL=C; the strings stay environ's. */
static char **child_env(void)
{
	size_t n = 0, j = 0;

	for (char **e = environ; *e; e++)
		n++;
	char **env = vn_xcalloc(n + 2, sizeof(char *));
	for (char **e = environ; *e; e++)
		if (strncmp(*e, "LC_ALL=", 7) != 0 && strncmp(*e, "LANGUAGE=", 9) != 0)
			env[j++] = *e;
	env[j++] = "LC_ALL=C";
	env[j] = NULL;
	return env;
}

static void emit_lines(struct vn_strbuf *pending, const char *data, size_t n, const struct vn_spawn_opts *o)
{
	if (!o->line)
		return;
	vn_strbuf_append(pending, data, n);
	char *start = pending->s, *nl;
	while ((nl = memchr(start, '\n', pending->len - (size_t)(start - pending->s)))) {
		*nl = '\0';
		o->line(o->line_data, start);
		start = nl + 1;
	}
	size_t rest = pending->len - (size_t)(start - pending->s);
	memmove(pending->s, start, rest);
	pending->len = rest;
	pending->s[rest] = '\0';
}

int vn_spawn_run(const char *const *argv, const struct vn_spawn_opts *opts, struct vn_error *err)
{
	static const struct vn_spawn_opts none = VN_SPAWN_OPTS_INIT;
	const struct vn_spawn_opts *o = opts ? opts : &none;
	_cleanup_free_ char **env = child_env();
	_cleanup_strbuf_ struct vn_strbuf pending = VN_STRBUF_INIT;
	posix_spawn_file_actions_t fa;
	posix_spawnattr_t at;
	int pfd[2], status = 0, rc, log_fd = o->log_fd;
	bool killed = false;
	pid_t pid;

	if (pipe2(pfd, O_CLOEXEC) < 0)
		return vn_infra_error(err, -errno, "pipe: %s", strerror(errno));
	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
	posix_spawn_file_actions_adddup2(&fa, pfd[1], 1);
	posix_spawn_file_actions_adddup2(&fa, pfd[1], 2);
	if (o->cwd)
		posix_spawn_file_actions_addchdir_np(&fa, o->cwd);
	posix_spawnattr_init(&at);
	/* Its own process group, so Ctrl-C can stop make and every compiler under it. */
	posix_spawnattr_setpgroup(&at, 0);
	posix_spawnattr_setflags(&at, POSIX_SPAWN_SETPGROUP);
	rc = posix_spawnp(&pid, argv[0], &fa, &at, (char *const *)argv, env);
	posix_spawn_file_actions_destroy(&fa);
	posix_spawnattr_destroy(&at);
	close(pfd[1]);
	if (rc != 0) {
		close(pfd[0]);
		return vn_infra_error(err, -rc, "cannot run %s: %s", argv[0], strerror(rc));
	}
	for (;;) {
		struct pollfd p = {.fd = pfd[0], .events = POLLIN};
		char buf[16384];
		int pr = poll(&p, 1, 250);
		if (vn_was_interrupted() && !killed) {
			kill(-pid, SIGTERM);
			killed = true;
		}
		if (pr <= 0)
			continue;
		ssize_t n = read(pfd[0], buf, sizeof(buf));
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		if (log_fd >= 0 && write(log_fd, buf, (size_t)n) != n)
			log_fd = -1;
		if (o->capture)
			vn_strbuf_append(o->capture, buf, (size_t)n);
		emit_lines(&pending, buf, (size_t)n, o);
	}
	close(pfd[0]);
	while (waitpid(pid, &status, 0) < 0)
		if (errno != EINTR)
			return vn_infra_error(err, -errno, "waitpid %s: %s", argv[0], strerror(errno));
	if (killed || vn_was_interrupted())
		return vn_infra_error(err, -EINTR, "%s interrupted", argv[0]);
	if (WIFSIGNALED(status))
		return vn_infra_error(err, -ECHILD, "%s killed by signal %d", argv[0], WTERMSIG(status));
	return WEXITSTATUS(status);
}
