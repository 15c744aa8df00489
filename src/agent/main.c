/*
 * vnuma-agent: runs inside the guest, serves the host over a virtio-serial
 * port. It is started (and respawned) by the initramfs init, is not PID 1,
 * and must survive the host coming and going: virtio-serial reports "no host
 * connected" as EOF/POLLHUP, which here means "wait", never "exit".
 */
#include "agent/agent-priv.h"
#include "agent/protocol.h"

#include <dirent.h>
#include <json-c/linkhash.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/reboot.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

/* A "write" carries up to 64 MiB of base64 (~86 MiB); anything longer is junk. */
#define LINE_MAX_BYTES (100u << 20)
/*
 * How often to look at a port with no host, or for a port that is not there
 * yet. A host connecting, or writing, wakes us at once through SIGIO
 * (port_open); this is the fallback for a kernel that does not send it.
 */
#define RETRY_MS 100
/* Buffers bigger than this (a vnuma cp's chunks) are given back when the host goes. */
#define BUF_KEEP (256u << 10)
/* The agent's nice in a guest (favour()): ahead of the tests it runs, at 0. */
#define AGENT_NICE -10

static struct vn_agentd *the_agent; /* for the SIGCHLD handler's pipe only */

int64_t vn_agentd_now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

void vn_agentd_log(const char *fmt, ...)
{
	va_list ap;

	fputs("vnuma-agent: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

void vn_buf_append(struct vn_buf *b, const void *p, size_t n)
{
	if (b->off && b->off == b->len)
		b->off = b->len = 0;
	if (b->len + n > b->cap) {
		/* Reclaim consumed space before growing. */
		if (b->off) {
			memmove(b->s, b->s + b->off, b->len - b->off);
			b->len -= b->off;
			b->off = 0;
		}
		size_t cap = b->cap ? b->cap : 4096;
		while (cap < b->len + n)
			cap *= 2;
		if (cap != b->cap) {
			char *s = realloc(b->s, cap);
			if (!s)
				abort();
			b->s = s;
			b->cap = cap;
		}
	}
	memcpy(b->s + b->len, p, n);
	b->len += n;
}

void vn_buf_consume(struct vn_buf *b, size_t n)
{
	b->off += n;
	if (b->off >= b->len)
		b->off = b->len = 0;
}

/* An empty buffer's memory back to the guest when it is big: a memory-heavy test must not find the agent holding it. */
static void buf_trim(struct vn_buf *b)
{
	if (b->off == b->len && b->cap > BUF_KEEP)
		vn_buf_free(b);
}

void vn_buf_free(struct vn_buf *b)
{
	free(b->s);
	memset(b, 0, sizeof(*b));
}

int vn_buf_flush(struct vn_buf *b, int fd)
{
	while (b->off < b->len) {
		ssize_t n = write(fd, b->s + b->off, b->len - b->off);

		if (n > 0)
			vn_buf_consume(b, (size_t)n);
		else if (n < 0 && errno == EINTR)
			continue;
		else if (n < 0 && errno == EAGAIN)
			return 0;
		else
			return n < 0 ? -errno : -EPIPE;
	}
	return 0;
}

void vn_agentd_send(struct vn_agentd *d, struct json_object *obj)
{
	size_t len;
	const char *s =
		json_object_to_json_string_length(obj, JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE, &len);

	/* Nobody is listening in fd mode after EOF; in device mode the host may come back. */
	if (d->fd >= 0) {
		vn_buf_append(&d->out, s, len);
		vn_buf_append(&d->out, "\n", 1);
	}
	json_object_put(obj);
}

struct json_object *vn_agentd_reply_new(struct json_object *id, bool ok)
{
	struct json_object *r = json_object_new_object();

	json_object_object_add(r, "id", json_object_get(id));
	json_object_object_add(r, "ok", json_object_new_boolean(ok));
	return r;
}

void vn_agentd_reply_error(struct vn_agentd *d, struct json_object *id, int errnum, const char *fmt, ...)
{
	char msg[1024];
	va_list ap;
	struct json_object *r = vn_agentd_reply_new(id, false);

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	json_object_object_add(r, "error", json_object_new_string(msg));
	if (errnum)
		json_object_object_add(r, "errno", json_object_new_int(errnum));
	vn_agentd_send(d, r);
}

static void op_poweroff(struct vn_agentd *d, struct json_object *id, struct json_object *req)
{
	vn_agentd_send(d, vn_agentd_reply_new(id, true));
	d->poweroff = true;
}

static const struct {
	const char *name;
	void (*fn)(struct vn_agentd *d, struct json_object *id, struct json_object *req);
} ops[] = {
	{"hello", vn_agentd_op_hello},   {"exec", vn_agentd_op_exec},       {"stdin", vn_agentd_op_stdin},
	{"signal", vn_agentd_op_signal}, {"read", vn_agentd_op_read},       {"write", vn_agentd_op_write},
	{"stat", vn_agentd_op_stat},     {"readdir", vn_agentd_op_readdir}, {"mkdir", vn_agentd_op_mkdir},
	{"chmod", vn_agentd_op_chmod},   {"rename", vn_agentd_op_rename},   {"remove", vn_agentd_op_remove},
	{"resize", vn_agentd_op_resize}, {"poweroff", op_poweroff},         {"wake", vn_agentd_op_wake},
};

static void dispatch_line(struct vn_agentd *d, const char *line, size_t len)
{
	struct json_tokener *tok = json_tokener_new();
	struct json_object *req, *id = NULL, *op;

	if (!tok)
		abort();
	req = json_tokener_parse_ex(tok, line, (int)len);
	if (req && json_tokener_get_error(tok) == json_tokener_success) {
		for (size_t i = json_tokener_get_parse_end(tok); i < len; i++) {
			if (!strchr(" \t\r", line[i])) {
				json_object_put(req);
				req = NULL;
				break;
			}
		}
	}
	if (!req || json_tokener_get_error(tok) != json_tokener_success) {
		enum json_tokener_error e = json_tokener_get_error(tok);

		vn_agentd_reply_error(d, NULL, EINVAL, "malformed JSON: %s",
				      e == json_tokener_success || e == json_tokener_continue
					      ? "incomplete or trailing data"
					      : json_tokener_error_desc(e));
		goto cleanup;
	}
	if (!json_object_is_type(req, json_type_object)) {
		vn_agentd_reply_error(d, NULL, EINVAL, "request is not a JSON object");
		goto cleanup;
	}
	if (!json_object_object_get_ex(req, "id", &id) || !json_object_is_type(id, json_type_int)) {
		vn_agentd_reply_error(d, NULL, EINVAL, "request has no integer \"id\"");
		goto cleanup;
	}
	if (!json_object_object_get_ex(req, "op", &op) || !json_object_is_type(op, json_type_string)) {
		vn_agentd_reply_error(d, id, EINVAL, "request has no string \"op\"");
		goto cleanup;
	}
	for (size_t i = 0; i < sizeof(ops) / sizeof(ops[0]); i++) {
		if (!strcmp(ops[i].name, json_object_get_string(op))) {
			ops[i].fn(d, id, req);
			goto cleanup;
		}
	}
	vn_agentd_reply_error(d, id, ENOSYS, "unknown op \"%s\"", json_object_get_string(op));
cleanup:
	json_object_put(req);
	json_tokener_free(tok);
}

/*
 * d->in_scan remembers how far the buffered partial line was searched for
 * '\n', so a 1.4 MB chunked write arriving in 4 KiB reads is scanned once,
 * not once per read (which under TCG cost more than everything else).
 */
static void process_input(struct vn_agentd *d)
{
	while (d->in.off < d->in.len) {
		char *start = d->in.s + d->in.off;
		size_t avail = d->in.len - d->in.off;
		size_t from = d->in_scan < avail ? d->in_scan : 0;
		char *nl = memchr(start + from, '\n', avail - from);

		if (!nl) {
			d->in_scan = avail;
			if (avail > LINE_MAX_BYTES) {
				vn_agentd_reply_error(d, NULL, E2BIG, "request line longer than %u bytes",
						      LINE_MAX_BYTES);
				d->in_discard = true;
				vn_buf_consume(&d->in, avail);
				d->in_scan = 0;
			}
			return;
		}
		d->in_scan = 0;
		size_t len = (size_t)(nl - start);
		if (len && start[len - 1] == '\r')
			len--;
		if (d->in_discard)
			d->in_discard = false;
		else if (len)
			dispatch_line(d, start, len);
		vn_buf_consume(&d->in, (size_t)(nl - start) + 1);
	}
}

/*
 * SIGIO while no host is connected: virtio_console signals a host connecting
 * (VIRTIO_CONSOLE_PORT_OPEN) and data arriving, while poll() cannot wait for
 * either with no host (it reports POLLHUP at once). Without it a new host
 * waited up to RETRY_MS for its first hello, most of an idle exec's time.
 * Off while a host is there: a signal per buffer would slow a vnuma cp.
 */
static void port_async(struct vn_agentd *d, bool on)
{
	int fl = fcntl(d->fd, F_GETFL);

	if (fl < 0 || (on && fcntl(d->fd, F_SETOWN, getpid()) < 0) ||
	    fcntl(d->fd, F_SETFL, on ? fl | O_ASYNC : fl & ~O_ASYNC) < 0)
		vn_agentd_log("SIGIO on the port: %s", strerror(errno));
}

/* The host went away: nothing it started may outlive the session. */
static void host_gone(struct vn_agentd *d)
{
	bool was_up = !d->hung_up;

	if (was_up && !d->fd_mode)
		vn_agentd_log("host disconnected");
	d->hung_up = true;
	vn_agentd_jobs_kill_all(d, true);
	d->in.off = d->in.len = 0;
	d->in_scan = 0;
	d->out.off = d->out.len = 0;
	d->in_discard = false;
	buf_trim(&d->in);
	buf_trim(&d->out);
	if (d->fd_mode) {
		d->quit = true;
		return;
	}
	d->retry_at_ms = vn_agentd_now_ms() + RETRY_MS;
	if (d->fd >= 0 && was_up) {
		struct pollfd p = {.fd = d->fd, .events = POLLIN};

		port_async(d, true);
		/* A host back before SIGIO was on: its data waits, and no signal will come for it. */
		if (poll(&p, 1, 0) == 1 && (p.revents & (POLLIN | POLLHUP | POLLERR)) == POLLIN)
			d->retry_at_ms = 0;
	}
}

static void port_lost(struct vn_agentd *d, const char *why)
{
	vn_agentd_log("agent port: %s", why);
	host_gone(d);
	if (d->fd >= 0 && !d->fd_mode) {
		close(d->fd);
		d->fd = -1;
	}
}

/* hup: the port said the host is gone, so read even when throttled, to notice. */
static void port_read(struct vn_agentd *d, bool hup)
{
	char buf[65536];

	for (;;) {
		ssize_t n;

		/* A host streaming stdin faster than the command eats it waits in QEMU, not in our RAM. */
		if (!hup && vn_agentd_jobs_stdin_full(d))
			return;
		n = read(d->fd, buf, sizeof(buf));

		if (n > 0) {
			if (d->hung_up && !d->fd_mode) {
				vn_agentd_log("host connected");
				port_async(d, false);
			}
			d->hung_up = false;
			vn_buf_append(&d->in, buf, (size_t)n);
			process_input(d);
			if (d->quit || d->fd < 0)
				return;
			continue;
		}
		if (n == 0) {
			host_gone(d);
		} else if (errno == EINTR) {
			continue;
		} else if (errno != EAGAIN) {
			port_lost(d, strerror(errno));
		}
		return;
	}
}

static void port_flush(struct vn_agentd *d)
{
	int rc;

	if (d->fd < 0 || (rc = vn_buf_flush(&d->out, d->fd)) == 0)
		return;
	/* EPIPE on the test socket, ENODEV/EIO if the port vanished. */
	if (d->fd_mode)
		host_gone(d);
	else
		port_lost(d, strerror(-rc));
}

static int read_small_file(const char *path, char *buf, size_t size)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	ssize_t n;

	if (fd < 0)
		return -errno;
	n = read(fd, buf, size - 1);
	close(fd);
	if (n < 0)
		return -errno;
	buf[n] = '\0';
	buf[strcspn(buf, "\n")] = '\0';
	return 0;
}

/*
 * Finds /dev/vportNpM for our port name via sysfs. There is no udev in the
 * guest, so the /dev/virtio-ports/ symlinks usually do not exist, and without
 * devtmpfs the node itself may be missing: then create it from sysfs "dev".
 */
static int port_open(const char *device, const char *port_name)
{
	static const char sysdir[] = "/sys/class/virtio-ports";
	char path[512], val[256];
	DIR *dir;
	struct dirent *de;
	int fd = -1;

	if (device)
		return open(device, O_RDWR | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
	snprintf(path, sizeof(path), "/dev/virtio-ports/%s", port_name);
	fd = open(path, O_RDWR | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
	if (fd >= 0)
		return fd;
	dir = opendir(sysdir);
	if (!dir)
		return -1;
	errno = ENOENT;
	while ((de = readdir(dir))) {
		unsigned maj, min;

		if (de->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "%s/%s/name", sysdir, de->d_name);
		if (read_small_file(path, val, sizeof(val)) < 0 || strcmp(val, port_name))
			continue;
		snprintf(path, sizeof(path), "/dev/%s", de->d_name);
		fd = open(path, O_RDWR | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
		if (fd < 0 && errno == ENOENT) {
			char devfile[512];

			snprintf(devfile, sizeof(devfile), "%s/%s/dev", sysdir, de->d_name);
			if (read_small_file(devfile, val, sizeof(val)) == 0 && sscanf(val, "%u:%u", &maj, &min) == 2 &&
			    mknod(path, S_IFCHR | 0600, makedev(maj, min)) == 0)
				fd = open(path, O_RDWR | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
		}
		break;
	}
	int saved = errno;
	closedir(dir);
	errno = saved;
	return fd;
}

static void on_signal(int sig)
{
	int saved = errno;

	if (the_agent && write(the_agent->sigchld_wr, sig == SIGIO ? "i" : "c", 1) < 0) {
		/* The pipe is full: a wakeup is already pending. */
	}
	errno = saved;
}

static int setup_signals(struct vn_agentd *d)
{
	int p[2];
	struct sigaction sa = {.sa_handler = on_signal, .sa_flags = SA_RESTART | SA_NOCLDSTOP};

	if (pipe2(p, O_CLOEXEC | O_NONBLOCK) < 0)
		return -errno;
	d->sigchld_rd = p[0];
	d->sigchld_wr = p[1];
	the_agent = d;
	sigemptyset(&sa.sa_mask);
	if (sigaction(SIGCHLD, &sa, NULL) < 0 || sigaction(SIGIO, &sa, NULL) < 0)
		return -errno;
	/* A host that disappears mid-write must not kill us; nor must a dead child's stdin. */
	signal(SIGPIPE, SIG_IGN);
	/* The init script's terminal, if any, is not ours to be stopped by. */
	signal(SIGHUP, SIG_IGN);
	return 0;
}

static void do_poweroff(struct vn_agentd *d)
{
	/* Let the reply reach the host before the machine goes away. */
	int64_t until = vn_agentd_now_ms() + 2000;

	while (d->fd >= 0 && d->out.off < d->out.len && vn_agentd_now_ms() < until) {
		struct pollfd p = {.fd = d->fd, .events = POLLOUT};

		poll(&p, 1, 100);
		port_flush(d);
	}
	if (d->fd_mode) {
		d->quit = true;
		return;
	}
	vn_agentd_jobs_kill_all(d, true);
	vn_agentd_log("powering off");
	sync();
	if (reboot(RB_POWER_OFF) < 0)
		vn_agentd_log("reboot(RB_POWER_OFF): %s", strerror(errno));
	d->poweroff = false;
}

/*
 * A guest busy with a memory-heavy test (LTP's move_pages12: huge pages
 * reserved, migrated and freed on every CPU) must still answer the host
 * within its hello timeout. The agent is woken ahead of the test (nice), its
 * pages stay resident (a static binary on a disk root is page cache that
 * reclaim would drop and a wakeup fault back in), and the OOM killer picks
 * the test, never the agent and with it every session. Commands get none of
 * this (vn_agentd_unfavour). Failures only cost robustness, so only logged.
 */
static bool favour(void)
{
	int fd;

	if (setpriority(PRIO_PROCESS, 0, AGENT_NICE) < 0)
		vn_agentd_log("nice %d: %s", AGENT_NICE, strerror(errno));
	/* What is mapped now, then every page as it is first touched (MCL_ONFAULT: a big mmap cannot fail on it). */
	if (mlockall(MCL_CURRENT) < 0 || mlockall(MCL_CURRENT | MCL_FUTURE | MCL_ONFAULT) < 0)
		vn_agentd_log("mlockall: %s", strerror(errno));
	fd = open("/proc/self/oom_score_adj", O_WRONLY | O_CLOEXEC);
	if (fd < 0 || write(fd, "-1000", 5) != 5)
		vn_agentd_log("oom_score_adj: %s", strerror(errno));
	if (fd >= 0)
		close(fd);
	return true;
}

static int run(struct vn_agentd *d)
{
	struct pollfd pfd[2 + 3 * VN_AGENT_MAX_JOBS];
	bool warned_missing = false;

	while (!d->quit) {
		int64_t now = vn_agentd_now_ms();
		int64_t next = 0;
		size_t n = 0;
		int port_idx = -1, timeout;

		if (d->poweroff) {
			do_poweroff(d);
			continue;
		}
		if (!d->fd_mode && d->fd < 0 && now >= d->retry_at_ms) {
			d->fd = port_open(d->device, d->port_name);
			if (d->fd < 0) {
				if (!warned_missing)
					vn_agentd_log("waiting for port %s: %s", d->device ? d->device : d->port_name,
						      strerror(errno));
				warned_missing = true;
				d->retry_at_ms = now + RETRY_MS;
			} else {
				vn_agentd_log("serving on %s", d->device ? d->device : d->port_name);
				warned_missing = false;
				d->hung_up = true;
				port_async(d, true);
			}
		}
		pfd[n++] = (struct pollfd){.fd = d->sigchld_rd, .events = POLLIN};
		if (d->fd >= 0 && (d->fd_mode || now >= d->retry_at_ms)) {
			port_idx = (int)n;
			pfd[n++] = (struct pollfd){.fd = d->fd,
						   .events = (vn_agentd_jobs_stdin_full(d) ? 0 : POLLIN) |
							     (d->out.off < d->out.len ? POLLOUT : 0)};
		} else if (!d->fd_mode) {
			next = d->retry_at_ms;
		}
		size_t jobs_start = n;
		int64_t job_deadline = 0;
		n += vn_agentd_jobs_pollfds(d, pfd + n, sizeof(pfd) / sizeof(pfd[0]) - n, &job_deadline);
		if (job_deadline && (!next || job_deadline < next))
			next = job_deadline;
		timeout = next ? (int)(next > now ? next - now : 0) : -1;

		if (poll(pfd, n, timeout) < 0) {
			if (errno == EINTR)
				continue;
			vn_agentd_log("poll: %s", strerror(errno));
			return 1;
		}
		if (pfd[0].revents) {
			char buf[64];
			ssize_t got;

			while ((got = read(d->sigchld_rd, buf, sizeof(buf))) > 0)
				if (memchr(buf, 'i', (size_t)got))
					d->retry_at_ms = 0;
			vn_agentd_jobs_reap(d);
		}
		/* Children first, so output produced before an exit precedes its final reply. */
		vn_agentd_jobs_handle(d, pfd + jobs_start, n - jobs_start);
		if (port_idx >= 0 && d->fd == pfd[port_idx].fd) {
			short re = pfd[port_idx].revents;

			if (re & POLLNVAL) {
				port_lost(d, "invalid fd");
			} else {
				if (re & (POLLIN | POLLHUP | POLLERR))
					port_read(d, re & (POLLHUP | POLLERR));
			}
		}
		port_flush(d);
	}
	port_flush(d);
	vn_buf_free(&d->in);
	vn_buf_free(&d->out);
	return 0;
}

static void usage(FILE *f)
{
	fprintf(f,
		"usage: vnuma-agent [--device PATH | --fd N]...\n"
		"Serves the vnuma host over the virtio-serial ports " VN_AGENT_PORT_PREFIX
		"0 to %d, one process each.\n"
		"  --device PATH  use this character device instead of looking the ports up (repeatable)\n"
		"  --fd N         use an open fd (tests; repeatable); EOF on it ends its process\n",
		VN_AGENT_NPORTS - 1);
}

/* One channel to a host: an open fd (tests), a device path, or a port to look up. */
struct endpoint {
	int fd;
	const char *device;
	char port_name[32];
};

static int serve(const struct endpoint *e)
{
	struct vn_agentd d = {
		.fd = e->fd, .fd_mode = e->fd >= 0, .device = e->device, .sigchld_rd = -1, .sigchld_wr = -1};

	snprintf(d.port_name, sizeof(d.port_name), "%s", e->port_name);
	if (setup_signals(&d) < 0) {
		fprintf(stderr, "vnuma-agent: signals: %s\n", strerror(errno));
		return 1;
	}
	/* Not for a test's agent (--fd): it would lock and renice the host's. mlockall does not pass through fork. */
	if (!d.fd_mode)
		d.favoured = favour();
	return run(&d);
}

static volatile sig_atomic_t stop_sig;

static void on_stop(int sig)
{
	stop_sig = sig;
}

static pid_t spawn_endpoint(const struct endpoint *eps, size_t n, size_t i)
{
	pid_t pid = fork();

	if (pid == 0) {
		/* Only its own fd: another's held here would keep that host's socket open after its server ends. */
		for (size_t j = 0; j < n; j++)
			if (j != i && eps[j].fd >= 0)
				close(eps[j].fd);
		signal(SIGTERM, SIG_DFL);
		signal(SIGINT, SIG_DFL);
		_exit(serve(&eps[i]));
	}
	if (pid < 0)
		vn_agentd_log("fork: %s", strerror(errno));
	return pid;
}

/*
 * Several channels: a process each, so that jobs, buffers and what a host
 * leaving kills are per channel by construction, and one channel's blocking
 * moment (a fork, a big write) never delays another host's hello. Device
 * mode respawns a server that dies, as init respawns us; fd mode (tests)
 * ends when all have.
 */
static int supervise(const struct endpoint *eps, size_t n)
{
	pid_t pids[VN_AGENT_NPORTS];
	bool respawn = eps[0].fd < 0;
	struct sigaction sa = {.sa_handler = on_stop};
	size_t live = 0;
	int worst = 0;

	sigemptyset(&sa.sa_mask);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);
	signal(SIGPIPE, SIG_IGN);
	signal(SIGHUP, SIG_IGN);
	for (size_t i = 0; i < n; i++)
		if ((pids[i] = spawn_endpoint(eps, n, i)) > 0)
			live++;
	while (live) {
		int status;

		/* Before waiting too: a stop that came during a respawn's sleep interrupts no waitpid. */
		if (stop_sig) {
			for (size_t i = 0; i < n; i++)
				if (pids[i] > 0)
					kill(pids[i], SIGTERM);
			stop_sig = 0;
			respawn = false;
		}
		pid_t pid = waitpid(-1, &status, 0);
		if (pid < 0) {
			if (errno != EINTR)
				break;
			continue;
		}
		for (size_t i = 0; i < n; i++) {
			if (pids[i] != pid)
				continue;
			int code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);

			pids[i] = -1;
			live--;
			worst = code > worst ? code : worst;
			if (respawn) {
				vn_agentd_log("%s: server exited (%d), restarting",
					      eps[i].device ? eps[i].device : eps[i].port_name, code);
				sleep(1);
				if ((pids[i] = spawn_endpoint(eps, n, i)) > 0)
					live++;
			}
		}
	}
	return worst;
}

static int add_fd(struct endpoint *e, const char *arg)
{
	char *end;
	long v = strtol(arg, &end, 10);

	if (*end || v < 0 || v > 1 << 20) {
		fprintf(stderr, "vnuma-agent: bad --fd '%s'\n", arg);
		return -1;
	}
	int fl = fcntl((int)v, F_GETFL);

	if (fl < 0 || fcntl((int)v, F_SETFL, fl | O_NONBLOCK) < 0 || fcntl((int)v, F_SETFD, FD_CLOEXEC) < 0) {
		fprintf(stderr, "vnuma-agent: --fd %ld: %s\n", v, strerror(errno));
		return -1;
	}
	e->fd = (int)v;
	return 0;
}

int main(int argc, char **argv)
{
	static const struct option longopts[] = {
		{"device", required_argument, NULL, 'd'},
		{"fd", required_argument, NULL, 'f'},
		{"help", no_argument, NULL, 'h'},
		{"version", no_argument, NULL, 'V'},
		{0},
	};
	struct endpoint eps[VN_AGENT_NPORTS];
	size_t n = 0, nfd = 0;
	int c;

	while ((c = getopt_long(argc, argv, "d:f:hV", longopts, NULL)) != -1) {
		if ((c == 'd' || c == 'f') && n == VN_AGENT_NPORTS) {
			fprintf(stderr, "vnuma-agent: at most %d channels\n", VN_AGENT_NPORTS);
			return 2;
		}
		switch (c) {
		case 'd': eps[n++] = (struct endpoint){.fd = -1, .device = optarg}; break;
		case 'f':
			eps[n] = (struct endpoint){.fd = -1};
			if (add_fd(&eps[n++], optarg) < 0)
				return 2;
			nfd++;
			break;
		case 'h': usage(stdout); return 0;
		case 'V': printf("vnuma-agent %s (protocol %d)\n", VN_AGENT_VERSION, VN_AGENT_PROTOCOL); return 0;
		default: usage(stderr); return 2;
		}
	}
	if (optind < argc || (nfd && nfd != n)) {
		usage(stderr);
		return 2;
	}
	for (; !n || (!nfd && !eps[0].device && n < VN_AGENT_NPORTS); n++) {
		eps[n] = (struct endpoint){.fd = -1};
		snprintf(eps[n].port_name, sizeof(eps[n].port_name), VN_AGENT_PORT_PREFIX "%zu", n);
	}
	/*
	 * json-c seeds its default string hash from /dev/urandom on the first
	 * key hashed; early in boot that read waits in the kernel until the
	 * CRNG is ready, about a second under TCG (256 timer ticks of jitter
	 * entropy), so the boot's first hello waited for it. The seed guards
	 * against hash flooding by untrusted input; the agent's only peer is
	 * the host that runs it.
	 */
	json_global_set_string_hash(JSON_C_STR_HASH_PERLLIKE);
	/* A bare initramfs may not set PATH, and exec'd argv[0] is looked up in it. */
	setenv("PATH", "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin", 0);
	if (n == 1)
		return serve(&eps[0]);
	/* The supervisor too stays out of the OOM killer's way and ahead of the tests; its servers favour themselves. */
	if (!nfd)
		favour();
	return supervise(eps, n);
}
