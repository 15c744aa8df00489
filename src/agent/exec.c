/*
 * "exec": run a program in its own process group, stream its stdout/stderr,
 * feed it host stdin, and report how it ended. Jobs live in the poll loop so
 * several may run at once and other requests are served meanwhile.
 */
#include "agent/agent-priv.h"
#include "agent/protocol.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <grp.h>
#include <sys/ioctl.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <termios.h>
#include <unistd.h>

#define CHUNK 32768

static struct vn_job *job_find(struct vn_agentd *d, int64_t id)
{
	for (size_t i = 0; i < VN_AGENT_MAX_JOBS; i++)
		if (d->jobs[i].used && d->jobs[i].id == id)
			return &d->jobs[i];
	return NULL;
}

static void close_fd(int *fd)
{
	if (*fd >= 0)
		close(*fd);
	*fd = -1;
}

static void job_stream(struct vn_agentd *d, struct vn_job *j, const char *stream, const char *data, size_t n)
{
	struct json_object *m;
	char *b64;
	size_t blen;

	if (j->silent)
		return;
	b64 = malloc(vn_base64_encoded_len(n) + 1);
	if (!b64)
		abort();
	blen = vn_base64_encode(data, n, b64);
	m = json_object_new_object();
	json_object_object_add(m, "id", json_object_new_int64(j->id));
	json_object_object_add(m, "stream", json_object_new_string(stream));
	json_object_object_add(m, "data", json_object_new_string_len(b64, (int)blen));
	free(b64);
	vn_agentd_send(d, m);
}

/* Returns false once the pipe is at EOF (or broken) and closed. */
static bool job_pipe_read(struct vn_agentd *d, struct vn_job *j, int *fd, const char *stream, bool drain)
{
	char buf[CHUNK];

	do {
		ssize_t n = read(*fd, buf, sizeof(buf));

		if (n > 0) {
			job_stream(d, j, stream, buf, (size_t)n);
			continue;
		}
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && errno == EAGAIN)
			return true;
		close_fd(fd);
		return false;
	} while (drain);
	return true;
}

static void job_finish(struct vn_agentd *d, struct vn_job *j)
{
	/*
	 * Everything the child wrote before exiting is in the pipes now; a
	 * background grandchild holding them open must not delay the result.
	 */
	if (j->out_fd >= 0 && job_pipe_read(d, j, &j->out_fd, "stdout", true))
		close_fd(&j->out_fd);
	if (j->err_fd >= 0 && job_pipe_read(d, j, &j->err_fd, "stderr", true))
		close_fd(&j->err_fd);
	close_fd(&j->in_fd);
	close_fd(&j->pty_fd);
	if (!j->silent) {
		struct json_object *id = json_object_new_int64(j->id);
		struct json_object *r;

		if (j->timed_out) {
			char msg[128];

			r = vn_agentd_reply_new(id, false);
			snprintf(msg, sizeof(msg), "timed out after %g s", j->timeout_s);
			json_object_object_add(r, "error", json_object_new_string(msg));
			json_object_object_add(r, "errno", json_object_new_int(ETIMEDOUT));
			json_object_object_add(r, "timed_out", json_object_new_boolean(1));
		} else {
			r = vn_agentd_reply_new(id, true);
		}
		if (WIFEXITED(j->status))
			json_object_object_add(r, "exit_code", json_object_new_int(WEXITSTATUS(j->status)));
		else if (WIFSIGNALED(j->status))
			json_object_object_add(r, "signal", json_object_new_int(WTERMSIG(j->status)));
		json_object_put(id);
		vn_agentd_send(d, r);
	}
	vn_buf_free(&j->in_queue);
	memset(j, 0, sizeof(*j));
}

void vn_agentd_jobs_reap(struct vn_agentd *d)
{
	for (;;) {
		int status;
		pid_t pid = waitpid(-1, &status, WNOHANG);

		if (pid <= 0)
			return;
		for (size_t i = 0; i < VN_AGENT_MAX_JOBS; i++) {
			struct vn_job *j = &d->jobs[i];

			if (j->used && j->pid == pid) {
				j->exited = true;
				j->status = status;
				job_finish(d, j);
				break;
			}
		}
	}
}

void vn_agentd_jobs_kill_all(struct vn_agentd *d, bool silent)
{
	for (size_t i = 0; i < VN_AGENT_MAX_JOBS; i++) {
		struct vn_job *j = &d->jobs[i];

		if (!j->used)
			continue;
		kill(-j->pid, SIGKILL);
		if (silent) {
			j->silent = true;
			/* Nobody will read the output; closing lets writers die of EPIPE too. */
			close_fd(&j->out_fd);
			close_fd(&j->err_fd);
			close_fd(&j->in_fd);
		}
	}
}

bool vn_agentd_jobs_stdin_full(const struct vn_agentd *d)
{
	size_t queued = 0;

	for (size_t i = 0; i < VN_AGENT_MAX_JOBS; i++)
		if (d->jobs[i].used)
			queued += d->jobs[i].in_queue.len - d->jobs[i].in_queue.off;
	return queued > VN_AGENT_STDIN_HIGH;
}

size_t vn_agentd_jobs_pollfds(struct vn_agentd *d, struct pollfd *pfd, size_t max, int64_t *next_deadline)
{
	/* Back-pressure: a host that does not read must not make us buffer without bound. */
	bool read_ok = d->out.len - d->out.off < VN_AGENT_OUT_HIGH;
	int64_t now = vn_agentd_now_ms();
	size_t n = 0;

	for (size_t i = 0; i < VN_AGENT_MAX_JOBS && n + 3 <= max; i++) {
		struct vn_job *j = &d->jobs[i];

		if (!j->used)
			continue;
		if (j->deadline_ms && !j->timed_out) {
			if (now >= j->deadline_ms) {
				kill(-j->pid, SIGKILL);
				j->timed_out = true;
			} else if (!*next_deadline || j->deadline_ms < *next_deadline) {
				*next_deadline = j->deadline_ms;
			}
		}
		if (read_ok && j->out_fd >= 0)
			pfd[n++] = (struct pollfd){.fd = j->out_fd, .events = POLLIN};
		if (read_ok && j->err_fd >= 0)
			pfd[n++] = (struct pollfd){.fd = j->err_fd, .events = POLLIN};
		if (j->in_fd >= 0 && (j->in_queue.len > j->in_queue.off || j->in_eof))
			pfd[n++] = (struct pollfd){.fd = j->in_fd, .events = POLLOUT};
	}
	return n;
}

static void job_stdin_flush(struct vn_job *j)
{
	if (j->in_fd >= 0 && vn_buf_flush(&j->in_queue, j->in_fd) < 0) {
		/* The child closed its stdin: the rest is of no use to it. */
		close_fd(&j->in_fd);
		vn_buf_free(&j->in_queue);
		return;
	}
	if (j->in_eof && j->in_queue.off == j->in_queue.len)
		close_fd(&j->in_fd);
}

void vn_agentd_jobs_handle(struct vn_agentd *d, const struct pollfd *pfd, size_t n)
{
	for (size_t k = 0; k < n; k++) {
		if (!pfd[k].revents)
			continue;
		for (size_t i = 0; i < VN_AGENT_MAX_JOBS; i++) {
			struct vn_job *j = &d->jobs[i];

			if (!j->used)
				continue;
			if (pfd[k].fd == j->out_fd)
				job_pipe_read(d, j, &j->out_fd, "stdout", false);
			else if (pfd[k].fd == j->err_fd)
				job_pipe_read(d, j, &j->err_fd, "stderr", false);
			else if (pfd[k].fd == j->in_fd)
				job_stdin_flush(j);
			else
				continue;
			break;
		}
	}
}

/* How the child runs besides argv: identity, directory, environment, terminal. */
struct child_opts {
	struct json_object *env;
	const char *cwd;
	long uid, gid; /* -1: root's, as the agent */
	bool unfavour; /* the agent is favoured: the command must not be */
	int tty;       /* the pseudo-terminal's slave, or -1: pipes */
};

void vn_agentd_unfavour(void)
{
	int fd = open("/proc/self/oom_score_adj", O_WRONLY | O_CLOEXEC);

	/* Raising it back needs no privilege; a test that lowers it again may. */
	if (fd >= 0) {
		if (write(fd, "0", 1) < 0) {
			/* Left at -1000: the OOM killer spares the command too, nothing worse. */
		}
		close(fd);
	}
	setpriority(PRIO_PROCESS, 0, 0);
}

/* Child side of fork(): never returns. Failures go to errfd as an errno. */
static void __attribute__((noreturn))
child_exec(char **argv, const struct child_opts *o, int in_fd, int out_fd, int err_fd, int errfd)
{
	struct json_object *env = o->env;
	int e;
	sigset_t none;

	/* A terminal needs a session of its own to be its controlling one; its leader leads a group too. */
	if (o->tty >= 0) {
		if (setsid() < 0 || ioctl(o->tty, TIOCSCTTY, 0) < 0)
			goto fail;
		in_fd = out_fd = err_fd = o->tty;
	} else {
		setpgid(0, 0);
	}
	if (o->unfavour)
		vn_agentd_unfavour();
	sigemptyset(&none);
	sigprocmask(SIG_SETMASK, &none, NULL);
	signal(SIGPIPE, SIG_DFL);
	signal(SIGHUP, SIG_DFL);
	signal(SIGCHLD, SIG_DFL);
	if (dup2(in_fd, 0) < 0 || dup2(out_fd, 1) < 0 || dup2(err_fd, 2) < 0)
		goto fail;
	if (o->gid >= 0 && (setgroups(0, NULL) < 0 || setgid((gid_t)o->gid) < 0))
		goto fail;
	if (o->uid >= 0 && setuid((uid_t)o->uid) < 0)
		goto fail;
	if (o->cwd && chdir(o->cwd) < 0)
		goto fail;
	if (env) {
		json_object_object_foreach(env, k, v)
		{
			if (json_object_is_type(v, json_type_null))
				unsetenv(k);
			else if (setenv(k, json_object_get_string(v), 1) < 0)
				goto fail;
		}
	}
	execvp(argv[0], argv);
fail:
	e = errno;
	if (write(errfd, &e, sizeof(e)) < 0) {
		/* The parent then only sees exit code 127. */
	}
	_exit(127);
}

static int set_nonblock(int fd)
{
	int fl = fcntl(fd, F_GETFL);

	return fl < 0 ? -1 : fcntl(fd, F_SETFL, fl | O_NONBLOCK);
}

/* "user": {"uid": N, "gid": N} (each optional, 0..65534 here: no name lookup in the guest). */
static int parse_user(struct json_object *req, struct child_opts *o)
{
	struct json_object *u, *v;

	o->uid = o->gid = -1;
	if (!json_object_object_get_ex(req, "user", &u))
		return 0;
	if (!json_object_is_type(u, json_type_object))
		return -1;
	if (json_object_object_get_ex(u, "uid", &v)) {
		if (!json_object_is_type(v, json_type_int) || json_object_get_int64(v) < 0 ||
		    json_object_get_int64(v) > 65534)
			return -1;
		o->uid = (long)json_object_get_int64(v);
	}
	if (json_object_object_get_ex(u, "gid", &v)) {
		if (!json_object_is_type(v, json_type_int) || json_object_get_int64(v) < 0 ||
		    json_object_get_int64(v) > 65534)
			return -1;
		o->gid = (long)json_object_get_int64(v);
	}
	return 0;
}

/* "rows"/"cols" of a request, into a window size (absent or out of range: left as it is). */
static void parse_winsize(struct json_object *req, struct winsize *ws)
{
	struct json_object *v;

	if (json_object_object_get_ex(req, "rows", &v) && json_object_is_type(v, json_type_int) &&
	    json_object_get_int(v) > 0 && json_object_get_int(v) < 10000)
		ws->ws_row = (unsigned short)json_object_get_int(v);
	if (json_object_object_get_ex(req, "cols", &v) && json_object_is_type(v, json_type_int) &&
	    json_object_get_int(v) > 0 && json_object_get_int(v) < 10000)
		ws->ws_col = (unsigned short)json_object_get_int(v);
}

/* A pseudo-terminal for "tty": the master (ours) and the slave (the child's). */
static int open_pty(struct json_object *req, int *master, int *slave)
{
	struct winsize ws = {.ws_row = 24, .ws_col = 80};

	*master = posix_openpt(O_RDWR | O_NOCTTY | O_CLOEXEC);
	if (*master < 0 || grantpt(*master) < 0 || unlockpt(*master) < 0)
		return -1;
	const char *name = ptsname(*master);
	if (!name || (*slave = open(name, O_RDWR | O_NOCTTY | O_CLOEXEC)) < 0)
		return -1;
	parse_winsize(req, &ws);
	ioctl(*master, TIOCSWINSZ, &ws);
	return 0;
}

/* An exec request's fields, each type-checked. */
struct exec_req {
	struct json_object *argv, *env;
	size_t argc;
	const char *cwd;
	bool want_stdin, tty;
	double timeout_s;
};

/* Reads req into r (zeroed by the caller) and co's user; replies the error itself and returns -1 when a field is bad. */
static int exec_req_parse(struct vn_agentd *d, struct json_object *id, struct json_object *req, struct exec_req *r,
			  struct child_opts *co)
{
	struct json_object *v;

	if (!json_object_object_get_ex(req, "argv", &r->argv) || !json_object_is_type(r->argv, json_type_array) ||
	    (r->argc = json_object_array_length(r->argv)) == 0) {
		vn_agentd_reply_error(d, id, EINVAL, "exec: \"argv\" must be a non-empty array of strings");
		return -1;
	}
	if (json_object_object_get_ex(req, "env", &r->env) && !json_object_is_type(r->env, json_type_object)) {
		vn_agentd_reply_error(d, id, EINVAL, "exec: \"env\" must be an object");
		return -1;
	}
	if (json_object_object_get_ex(req, "cwd", &v))
		r->cwd = json_object_get_string(v);
	if (json_object_object_get_ex(req, "stdin", &v))
		r->want_stdin = json_object_get_boolean(v);
	if (json_object_object_get_ex(req, "timeout_s", &v))
		r->timeout_s = json_object_get_double(v);
	if (json_object_object_get_ex(req, "tty", &v))
		r->tty = json_object_get_boolean(v);
	if (parse_user(req, co) < 0) {
		vn_agentd_reply_error(d, id, EINVAL, "exec: \"user\" must be {\"uid\": N, \"gid\": N}, 0..65534");
		return -1;
	}
	return 0;
}

/* A free slot for job jid, or NULL with the error replied. */
static struct vn_job *job_slot(struct vn_agentd *d, struct json_object *id, int64_t jid)
{
	if (job_find(d, jid)) {
		vn_agentd_reply_error(d, id, EEXIST, "exec: id %lld is already running", (long long)jid);
		return NULL;
	}
	for (size_t i = 0; i < VN_AGENT_MAX_JOBS; i++)
		if (!d->jobs[i].used)
			return &d->jobs[i];
	vn_agentd_reply_error(d, id, EBUSY, "exec: too many commands running (max %d)", VN_AGENT_MAX_JOBS);
	return NULL;
}

/* The request's argv as execvp wants it (the strings stay the request's), or NULL with the error replied. */
static char **exec_argv(struct vn_agentd *d, struct json_object *id, const struct exec_req *r)
{
	char **argv = calloc(r->argc + 1, sizeof(*argv));

	if (!argv)
		abort();
	for (size_t i = 0; i < r->argc; i++) {
		struct json_object *a = json_object_array_get_idx(r->argv, i);

		if (!json_object_is_type(a, json_type_string)) {
			vn_agentd_reply_error(d, id, EINVAL, "exec: argv[%zu] is not a string", i);
			free(argv);
			return NULL;
		}
		argv[i] = (char *)json_object_get_string(a);
	}
	return argv;
}

/* The descriptors between the agent and one command; -1 where closed or handed to the job. */
struct exec_fds {
	int in[2], out[2], err[2];
	int ex[2]; /* the child writes errno here when exec fails; close-on-exec says it did not */
	int pty_master, pty_slave;
};

static void exec_fds_close(struct exec_fds *f)
{
	int *all[] = {&f->in[0],  &f->in[1], &f->out[0], &f->out[1],     &f->err[0],
		      &f->err[1], &f->ex[0], &f->ex[1],  &f->pty_master, &f->pty_slave};

	for (size_t i = 0; i < sizeof(all) / sizeof(all[0]); i++)
		close_fd(all[i]);
}

/* The pipes, and the terminal when the request asks for one; replies the error itself. */
static int exec_fds_open(struct vn_agentd *d, struct json_object *id, struct json_object *req, const struct exec_req *r,
			 struct exec_fds *f)
{
	int e;

	if (pipe2(f->out, O_CLOEXEC) < 0 || pipe2(f->err, O_CLOEXEC) < 0 || pipe2(f->ex, O_CLOEXEC) < 0 ||
	    (r->want_stdin ? pipe2(f->in, O_CLOEXEC) : ((f->in[0] = open("/dev/null", O_RDONLY | O_CLOEXEC)))) < 0) {
		e = errno;
		vn_agentd_reply_error(d, id, e, "exec: pipe: %s", strerror(e));
		return -1;
	}
	if (r->tty && open_pty(req, &f->pty_master, &f->pty_slave) < 0) {
		e = errno;
		vn_agentd_reply_error(d, id, e, "exec: pseudo-terminal: %s", strerror(e));
		return -1;
	}
	return 0;
}

/* Forks the command and waits until it has exec'd; -1 with the error replied when it could not. */
static pid_t exec_fork(struct vn_agentd *d, struct json_object *id, char **argv, const struct exec_req *r,
		       const struct child_opts *co, struct exec_fds *f)
{
	int e = 0;
	ssize_t n;
	pid_t pid = fork();

	if (pid < 0) {
		e = errno;
		vn_agentd_reply_error(d, id, e, "exec: fork: %s", strerror(e));
		return -1;
	}
	if (pid == 0)
		child_exec(argv, co, f->in[0], f->out[1], f->err[1], f->ex[1]);
	/*
	 * Both sides set the group so a kill(-pid) right away cannot miss; not
	 * for a terminal's command, whose own setsid() would fail once it leads
	 * a group.
	 */
	if (!r->tty)
		setpgid(pid, pid);
	close_fd(&f->ex[1]);
	do
		n = read(f->ex[0], &e, sizeof(e));
	while (n < 0 && errno == EINTR);
	if (n != sizeof(e))
		return pid;
	/* Reaped by jobs_reap() is impossible here: the pid is not in the table yet. */
	waitpid(pid, NULL, 0);
	if (r->cwd && e == ENOENT)
		vn_agentd_reply_error(d, id, e, "%s: %s (or cwd %s missing)", argv[0], strerror(e), r->cwd);
	else
		vn_agentd_reply_error(d, id, e, "%s: %s", argv[0], strerror(e));
	return -1;
}

/* The running command into slot j, which takes the agent's ends of its descriptors. */
static void job_start(struct vn_job *j, int64_t jid, pid_t pid, struct exec_req *r, struct exec_fds *f)
{
	if (f->pty_master >= 0) {
		/* The terminal is the command's stdin, stdout and stderr: one stream, read from the master. */
		close_fd(&f->out[0]);
		close_fd(&f->in[1]);
		f->out[0] = fcntl(f->pty_master, F_DUPFD_CLOEXEC, 0);
		f->in[1] = fcntl(f->pty_master, F_DUPFD_CLOEXEC, 0);
		r->want_stdin = true;
	}
	*j = (struct vn_job){
		.used = true,
		.id = jid,
		.pid = pid,
		.out_fd = f->out[0],
		.err_fd = f->err[0],
		.in_fd = r->want_stdin ? f->in[1] : -1,
		.pty_fd = f->pty_master,
		.timeout_s = r->timeout_s,
		.deadline_ms = r->timeout_s > 0 ? vn_agentd_now_ms() + (int64_t)(r->timeout_s * 1000) : 0,
	};
	f->out[0] = f->err[0] = f->in[1] = f->pty_master = -1;
	set_nonblock(j->out_fd);
	set_nonblock(j->err_fd);
	if (j->in_fd >= 0)
		set_nonblock(j->in_fd);
}

void vn_agentd_op_exec(struct vn_agentd *d, struct json_object *id, struct json_object *req)
{
	struct exec_req r = {0};
	struct child_opts co = {.tty = -1};
	struct exec_fds f = {{-1, -1}, {-1, -1}, {-1, -1}, {-1, -1}, -1, -1};
	int64_t jid = json_object_get_int64(id);
	struct vn_job *j;
	char **argv;
	pid_t pid;

	if (exec_req_parse(d, id, req, &r, &co) < 0 || !(j = job_slot(d, id, jid)) || !(argv = exec_argv(d, id, &r)))
		return;
	if (exec_fds_open(d, id, req, &r, &f) == 0) {
		co.env = r.env;
		co.cwd = r.cwd;
		co.unfavour = d->favoured;
		co.tty = f.pty_slave;
		if ((pid = exec_fork(d, id, argv, &r, &co, &f)) > 0)
			job_start(j, jid, pid, &r, &f);
	}
	free(argv);
	exec_fds_close(&f);
}

void vn_agentd_op_stdin(struct vn_agentd *d, struct json_object *id, struct json_object *req)
{
	struct vn_job *j = job_find(d, json_object_get_int64(id));
	struct json_object *v;

	/* No reply either way: the exec's id belongs to the exec's own replies. */
	if (!j || j->in_fd < 0)
		return;
	if (json_object_object_get_ex(req, "data", &v) && json_object_is_type(v, json_type_string)) {
		size_t len = (size_t)json_object_get_string_len(v);
		char *buf = malloc(len / 4 * 3 + 3);
		long n;

		if (!buf)
			abort();
		n = vn_base64_decode(json_object_get_string(v), len, buf);
		if (n > 0)
			vn_buf_append(&j->in_queue, buf, (size_t)n);
		free(buf);
	}
	if (json_object_object_get_ex(req, "eof", &v) && json_object_get_boolean(v))
		j->in_eof = true;
	job_stdin_flush(j);
}

void vn_agentd_op_signal(struct vn_agentd *d, struct json_object *id, struct json_object *req)
{
	struct vn_job *j = job_find(d, json_object_get_int64(id));
	struct json_object *v;
	int sig = SIGINT;

	if (json_object_object_get_ex(req, "signal", &v))
		sig = json_object_get_int(v);
	if (j && sig > 0 && sig < 65)
		kill(-j->pid, sig);
}

/* A terminal command's new window size (the kernel tells its foreground group with SIGWINCH). No reply. */
void vn_agentd_op_resize(struct vn_agentd *d, struct json_object *id, struct json_object *req)
{
	struct vn_job *j = job_find(d, json_object_get_int64(id));
	struct winsize ws;

	if (!j || j->pty_fd < 0 || ioctl(j->pty_fd, TIOCGWINSZ, &ws) < 0)
		return;
	parse_winsize(req, &ws);
	ioctl(j->pty_fd, TIOCSWINSZ, &ws);
}
