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
#include "util/clock.h"
#include "util/interrupt.h"

extern char **environ;

/*
 * What `git rev-parse --local-env-vars` lists (git 2.39): each names a
 * repository, its index, objects or config, and outranks `git -C DIR`.
 * GIT_CONFIG_KEY_n/GIT_CONFIG_VALUE_n go with GIT_CONFIG_COUNT.
 */
static const char *const git_local_vars[] = {
	"GIT_ALTERNATE_OBJECT_DIRECTORIES",
	"GIT_CONFIG",
	"GIT_CONFIG_PARAMETERS",
	"GIT_CONFIG_COUNT",
	"GIT_OBJECT_DIRECTORY",
	"GIT_DIR",
	"GIT_WORK_TREE",
	"GIT_IMPLICIT_WORK_TREE",
	"GIT_GRAFT_FILE",
	"GIT_INDEX_FILE",
	"GIT_NO_REPLACE_OBJECTS",
	"GIT_REPLACE_REF_BASE",
	"GIT_PREFIX",
	"GIT_INTERNAL_SUPER_PREFIX",
	"GIT_SHALLOW_FILE",
	"GIT_COMMON_DIR",
};

static bool dropped(const char *e)
{
	size_t n = strcspn(e, "=");

	if (strncmp(e, "LC_ALL=", 7) == 0 || strncmp(e, "LANGUAGE=", 9) == 0 ||
	    strncmp(e, "GIT_CONFIG_KEY_", 15) == 0 || strncmp(e, "GIT_CONFIG_VALUE_", 17) == 0)
		return true;
	for (size_t i = 0; i < sizeof(git_local_vars) / sizeof(git_local_vars[0]); i++)
		if (strlen(git_local_vars[i]) == n && strncmp(e, git_local_vars[i], n) == 0)
			return true;
	return false;
}

/* The caller's environment with LC_ALL=C and without git's repository variables; the strings stay environ's. */
static char **child_env(void)
{
	size_t n = 0, j = 0;

	for (char **e = environ; *e; e++)
		n++;
	char **env = vn_xcalloc(n + 2, sizeof(char *));
	for (char **e = environ; *e; e++)
		if (!dropped(*e))
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
	/* A child that never writes a newline must not grow the buffer without end: cut it into lines. */
	if (rest >= VN_SPAWN_LINE_MAX) {
		o->line(o->line_data, start);
		rest = 0;
	}
	memmove(pending->s, start, rest);
	pending->len = rest;
	pending->s[rest] = '\0';
}

/* How long a group stopped at its deadline gets for SIGTERM, then for SIGKILL, before its output is let go. */
#define STOP_GRACE_MS 3000

enum stop { STOP_NONE, STOP_INTERRUPT, STOP_DEADLINE };

/*
 * The child's output into o's sinks until every writer has closed the pipe.
 * Ctrl-C stops the group with SIGTERM (make and the compilers end at once);
 * the deadline with SIGTERM (git removes its lock files), SIGKILL after a
 * grace, and after another the pipe is let go: what still holds it has left
 * the group.
 */
static enum stop pump(int fd, pid_t pid, const struct vn_spawn_opts *o)
{
	_cleanup_strbuf_ struct vn_strbuf pending = VN_STRBUF_INIT;
	int64_t deadline = o->deadline_s ? vn_now_ms() + (int64_t)o->deadline_s * 1000 : 0;
	int log_fd = o->log_fd, signals = 0;
	enum stop stop = STOP_NONE;

	for (;;) {
		struct pollfd p = {.fd = fd, .events = POLLIN};
		char buf[16384];
		int pr = poll(&p, 1, 250);
		if (vn_was_interrupted() && stop == STOP_NONE) {
			kill(-pid, SIGTERM);
			stop = STOP_INTERRUPT;
		}
		if (deadline && stop != STOP_INTERRUPT && vn_now_ms() >= deadline + signals * STOP_GRACE_MS) {
			if (signals == 2)
				break;
			kill(-pid, signals++ ? SIGKILL : SIGTERM);
			stop = STOP_DEADLINE;
		}
		if (pr <= 0)
			continue;
		ssize_t n = read(fd, buf, sizeof(buf));
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
	return stop;
}

int vn_spawn_run(const char *const *argv, const struct vn_spawn_opts *opts, struct vn_error *err)
{
	static const struct vn_spawn_opts none = VN_SPAWN_OPTS_INIT;
	const struct vn_spawn_opts *o = opts ? opts : &none;
	_cleanup_free_ char **env = child_env();
	posix_spawn_file_actions_t fa;
	posix_spawnattr_t at;
	int pfd[2], status = 0, rc;
	enum stop stop;
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
	stop = pump(pfd[0], pid, o);
	close(pfd[0]);
	while (waitpid(pid, &status, 0) < 0)
		if (errno != EINTR)
			return vn_infra_error(err, -errno, "waitpid %s: %s", argv[0], strerror(errno));
	if (stop == STOP_DEADLINE)
		return vn_infra_error(err, -ETIMEDOUT, "%s did not finish in %u s, so it was stopped", argv[0],
				      o->deadline_s);
	if (stop == STOP_INTERRUPT || vn_was_interrupted())
		return vn_infra_error(err, -EINTR, "%s interrupted", argv[0]);
	if (WIFSIGNALED(status))
		return vn_infra_error(err, -ECHILD, "%s killed by signal %d", argv[0], WTERMSIG(status));
	return WEXITSTATUS(status);
}

int vn_spawn_foreground(const char *const *argv, struct vn_error *err)
{
	_cleanup_free_ char **env = child_env();
	int status = 0, rc;
	pid_t pid;

	if ((rc = posix_spawnp(&pid, argv[0], NULL, NULL, (char *const *)argv, env)) != 0)
		return vn_infra_error(err, -rc, "cannot run %s: %s", argv[0], strerror(rc));
	while (waitpid(pid, &status, 0) < 0)
		if (errno != EINTR)
			return vn_infra_error(err, -errno, "waitpid %s: %s", argv[0], strerror(errno));
	/* Ctrl-C at the terminal was the program's (gdb stops its target with it); a SIGTERM stays ours. */
	if (vn_interrupted == SIGINT)
		vn_interrupted = 0;
	if (WIFSIGNALED(status))
		return vn_infra_error(err, -ECHILD, "%s killed by signal %d", argv[0], WTERMSIG(status));
	return WEXITSTATUS(status);
}
