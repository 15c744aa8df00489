#include "util/isolate.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include "util/alloc.h"
#include "util/cleanup.h"
#include "util/clock.h"
#include "util/file.h"
#include "util/interrupt.h"
#include "util/strbuf.h"

/* What crosses the pipe: this header, then msg, detail and out, each hdr.*_len bytes. */
struct answer {
	int32_t rc, kind, code;
	uint32_t msg_len, detail_len, out_len;
};

/* The child's answer is ours, but it is still bounded: a wild length must not make the parent allocate it. */
#define ANSWER_MAX (64u << 20)

static _Noreturn void child(int fd, vn_isolated_fn fn, void *arg)
{
	struct vn_error e = {0};
	char *out = NULL;

	prctl(PR_SET_PDEATHSIG, SIGTERM);
	int rc = fn(arg, &out, &e);
	struct answer a = {
		.rc = rc,
		.kind = e.kind,
		.code = e.code,
		.msg_len = (uint32_t)strlen(e.msg),
		.detail_len = e.detail ? (uint32_t)strlen(e.detail) : 0,
		.out_len = out ? (uint32_t)strlen(out) : 0,
	};
	int bad = vn_write_all(fd, &a, sizeof(a)) || vn_write_all(fd, e.msg, a.msg_len) ||
		  vn_write_all(fd, e.detail ? e.detail : "", a.detail_len) ||
		  vn_write_all(fd, out ? out : "", a.out_len);
	/* No atexit handlers, no stdio buffers of the parent's flushed twice. */
	fflush(stdout);
	fflush(stderr);
	_exit(bad ? 1 : 0);
}

int vn_isolate_wait_ms(struct vn_isolate_job *job)
{
	int64_t now = vn_now_ms();

	if (vn_interrupted && vn_interrupted != job->passed) {
		job->passed = vn_interrupted;
		kill(job->pid, (int)job->passed);
		if (!job->stop_at_ms)
			job->stop_at_ms = now + job->stop_ms;
	}
	int64_t end = job->stop_at_ms && job->stop_at_ms < job->deadline_ms ? job->stop_at_ms : job->deadline_ms;
	return end <= now ? 0 : end - now > INT_MAX ? INT_MAX : (int)(end - now);
}

/* Whether b holds a whole answer: then a pipe left open (by a grandchild that inherited it) is no hang. */
static bool answer_complete(const struct vn_strbuf *b)
{
	struct answer a;

	if (b->len < sizeof(a))
		return false;
	memcpy(&a, b->s, sizeof(a));
	return sizeof(a) + (size_t)a.msg_len + a.detail_len + a.out_len <= b->len;
}

/*
 * Read all the child sends within its time. 0: it answered (or died),
 * -ETIMEDOUT or -EINTR: it was killed at its deadline or for not stopping
 * after a signal passed on to it.
 */
static int read_answer(struct vn_isolate_job *job, struct vn_strbuf *b)
{
	char buf[8192];

	for (;;) {
		int wait = vn_isolate_wait_ms(job);
		if (wait == 0) {
			/* SIGKILL: a child stuck in a library call never looks at its interrupt flag. */
			kill(job->pid, SIGKILL);
			if (answer_complete(b))
				return 0;
			return job->stop_at_ms && job->stop_at_ms <= job->deadline_ms ? -EINTR : -ETIMEDOUT;
		}
		/* A slice: a signal landing between the flag's check and poll() must not wait out the deadline. */
		struct pollfd p = {.fd = job->fd, .events = POLLIN};
		int n = poll(&p, 1, wait < 200 ? wait : 200);
		if (n < 0 && errno != EINTR)
			return 0;
		if (n <= 0)
			continue;
		ssize_t r = read(job->fd, buf, sizeof(buf));
		if (r < 0 && (errno == EINTR || errno == EAGAIN))
			continue;
		if (r <= 0)
			return 0;
		if (b->len + (size_t)r <= ANSWER_MAX + sizeof(struct answer))
			vn_strbuf_append(b, buf, (size_t)r);
	}
}

int vn_isolate_start(vn_isolated_fn fn, void *arg, const struct vn_isolate_limits *lim, struct vn_isolate_job *job,
		     struct vn_error *err)
{
	int p[2];

	*job = (struct vn_isolate_job){
		.pid = -1,
		.fd = -1,
		.timeout_ms = lim->timeout_ms > 0 ? lim->timeout_ms : 1,
		.stop_ms = lim->stop_ms > 0 ? lim->stop_ms : VN_ISOLATE_STOP_MS,
	};
	if (pipe2(p, O_CLOEXEC) < 0)
		return vn_infra_error(err, -errno, "cannot create a pipe: %s", strerror(errno));
	fflush(stdout);
	fflush(stderr);
	pid_t pid = fork();
	if (pid < 0) {
		int e = errno;
		close(p[0]);
		close(p[1]);
		return vn_infra_error(err, -e, "cannot fork: %s", strerror(e));
	}
	if (pid == 0) {
		close(p[0]);
		child(p[1], fn, arg);
	}
	close(p[1]);
	job->pid = pid;
	job->fd = p[0];
	job->deadline_ms = vn_now_ms() + job->timeout_ms;
	return 0;
}

int vn_isolate_finish(struct vn_isolate_job *job, char **out, struct vn_error *err)
{
	struct vn_strbuf b = VN_STRBUF_INIT;
	pid_t pid = job->pid;
	int status = 0;

	if (out)
		*out = NULL;
	int killed = read_answer(job, &b);
	close(job->fd);
	job->fd = -1;
	while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
		;
	job->pid = -1;

	struct answer a;
	if (killed == -ETIMEDOUT) {
		vn_strbuf_free(&b);
		return vn_infra_error(err, -ETIMEDOUT, "vnuma's worker process did not answer within %.1f s: killed",
				      job->timeout_ms / 1000.0);
	}
	if (killed == -EINTR) {
		vn_strbuf_free(&b);
		return vn_infra_error(
			err, -EINTR,
			"interrupted: vnuma's worker process did not stop within %.1f s of the signal: killed",
			job->stop_ms / 1000.0);
	}
	if (b.len < sizeof(a)) {
		vn_strbuf_free(&b);
		if (WIFSIGNALED(status))
			return vn_infra_error(err, -ECHILD, "vnuma's worker process died of signal %d",
					      WTERMSIG(status));
		return vn_infra_error(err, -ECHILD, "vnuma's worker process exited (%d) without an answer",
				      WIFEXITED(status) ? WEXITSTATUS(status) : -1);
	}
	memcpy(&a, b.s, sizeof(a));
	size_t need = sizeof(a) + (size_t)a.msg_len + a.detail_len + a.out_len;
	if (a.msg_len >= VN_ERROR_MSG_MAX || need > b.len) {
		vn_strbuf_free(&b);
		return vn_infra_error(err, -EPROTO, "vnuma's worker process sent a cut-off answer");
	}
	const char *s = b.s + sizeof(a);
	if (a.rc < 0) {
		vn_error_set(err, (enum vn_error_kind)a.kind, a.code ? a.code : a.rc, "%.*s", (int)a.msg_len, s);
		if (a.detail_len) {
			_cleanup_free_ char *d = vn_xstrndup(s + a.msg_len, a.detail_len);
			vn_error_set_detail(err, d);
		}
	}
	if (out && a.out_len)
		*out = vn_xstrndup(s + a.msg_len + a.detail_len, a.out_len);
	vn_strbuf_free(&b);
	return a.rc;
}

int vn_isolate(vn_isolated_fn fn, void *arg, const struct vn_isolate_limits *lim, char **out, struct vn_error *err)
{
	struct vn_isolate_job job;
	int rc = vn_isolate_start(fn, arg, lim, &job, err);

	if (out)
		*out = NULL;
	return rc < 0 ? rc : vn_isolate_finish(&job, out, err);
}
