/* Serial console: interactive attach over a libvirt stream (the log file: console-log.c). */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <termios.h>
#include <unistd.h>

#include "util/cleanup.h"
#include "util/strbuf.h"
#include "util/alloc.h"
#include "virt/virt-priv.h"

/*
 * Shared between the caller's thread and libvirt's event-loop thread, which
 * runs the stream callback. libvirt may still be inside the callback after
 * virStreamEventRemoveCallback() returns, so the context lives until both
 * sides (the caller, and libvirt through the free callback) let go of it.
 */
struct console {
	atomic_int refs;
	atomic_bool closed;
	int out_fd;
	int wake[2]; /* the callback pokes the caller's poll() when the console closes */
};

static void console_unref(void *opaque)
{
	struct console *c = opaque;

	if (atomic_fetch_sub(&c->refs, 1) != 1)
		return;
	close(c->wake[0]);
	close(c->wake[1]);
	free(c);
}

static int write_all(int fd, const char *buf, size_t len)
{
	while (len > 0) {
		ssize_t n = write(fd, buf, len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && errno == EAGAIN) {
			struct pollfd p = {.fd = fd, .events = POLLOUT};
			poll(&p, 1, 100);
			continue;
		}
		if (n <= 0)
			return -errno;
		buf += n;
		len -= (size_t)n;
	}
	return 0;
}

static void console_close(struct console *c)
{
	if (!atomic_exchange(&c->closed, true)) {
		char x = 'x';
		(void)!write(c->wake[1], &x, 1);
	}
}

static void stream_event(virStreamPtr st, int events, void *opaque)
{
	struct console *c = opaque;
	char buf[4096];

	if (atomic_load(&c->closed))
		return;
	if (events & VIR_STREAM_EVENT_READABLE) {
		for (;;) {
			int n = virStreamRecv(st, buf, sizeof(buf));
			if (n == -2)
				break; /* drained */
			if (n <= 0 || write_all(c->out_fd, buf, (size_t)n) < 0) {
				console_close(c);
				return;
			}
		}
	}
	if (events & (VIR_STREAM_EVENT_HANGUP | VIR_STREAM_EVENT_ERROR))
		console_close(c);
}

struct tty_restore {
	int fd;
	bool saved;
	struct termios old;
};

static void tty_restorep(struct tty_restore *r)
{
	if (r->saved)
		tcsetattr(r->fd, TCSAFLUSH, &r->old);
}

static int stream_send_all(virStreamPtr st, const char *buf, size_t len)
{
	while (len > 0) {
		int n = virStreamSend(st, buf, len);
		if (n == -2) {
			usleep(5000);
			continue;
		}
		if (n < 0)
			return -EIO;
		buf += n;
		len -= (size_t)n;
	}
	return 0;
}

int vn_virt_console_attach(struct vn_virt_domain *d, int in_fd, int out_fd, char escape, struct vn_error *err)
{
	_cleanup_(tty_restorep) struct tty_restore tty = {.fd = in_fd};
	_cleanup_stream_ virStreamPtr st = virStreamNew(d->v->conn, VIR_STREAM_NONBLOCK);
	struct console *c = vn_xcalloc(1, sizeof(*c));
	int rc = 0;

	if (!st) {
		free(c);
		return vn_virt_error(err, "cannot create a console stream");
	}
	if (pipe2(c->wake, O_CLOEXEC | O_NONBLOCK) < 0) {
		free(c);
		return vn_infra_error(err, -errno, "pipe: %s", strerror(errno));
	}
	atomic_init(&c->refs, 1);
	c->out_fd = out_fd;
	/* FORCE: take the console from a previous `vnuma shell` that did not let go. */
	if (virDomainOpenConsole(d->dom, NULL, st, VIR_DOMAIN_CONSOLE_FORCE) < 0) {
		console_unref(c);
		return vn_virt_error(err, "cannot open the console of '%s'", d->name);
	}
	atomic_fetch_add(&c->refs, 1);
	if (virStreamEventAddCallback(st, VIR_STREAM_EVENT_READABLE | VIR_STREAM_EVENT_HANGUP | VIR_STREAM_EVENT_ERROR,
				      stream_event, c, console_unref) < 0) {
		atomic_fetch_sub(&c->refs, 1);
		console_unref(c);
		virStreamAbort(st);
		return vn_virt_error(err, "cannot watch the console of '%s'", d->name);
	}
	if (isatty(in_fd) && tcgetattr(in_fd, &tty.old) == 0) {
		struct termios raw = tty.old;
		cfmakeraw(&raw);
		tty.saved = tcsetattr(in_fd, TCSAFLUSH, &raw) == 0;
	}

	bool input_open = true;
	while (!atomic_load(&c->closed)) {
		struct pollfd p[2] = {{.fd = c->wake[0], .events = POLLIN}, {.fd = in_fd, .events = POLLIN}};
		int np = input_open ? 2 : 1;
		if (poll(p, (nfds_t)np, -1) < 0) {
			if (errno == EINTR)
				continue;
			rc = vn_infra_error(err, -errno, "poll: %s", strerror(errno));
			break;
		}
		if (np < 2 || !(p[1].revents & (POLLIN | POLLHUP | POLLERR)))
			continue;
		char buf[1024];
		ssize_t n = read(in_fd, buf, sizeof(buf));
		if (n < 0 && (errno == EINTR || errno == EAGAIN))
			continue;
		if (n <= 0) {
			input_open = false;
			continue;
		}
		char *esc = memchr(buf, escape, (size_t)n);
		size_t len = esc ? (size_t)(esc - buf) : (size_t)n;
		if (len > 0 && stream_send_all(st, buf, len) < 0 && !atomic_load(&c->closed)) {
			rc = vn_virt_error(err, "cannot write to the console of '%s'", d->name);
			break;
		}
		if (esc)
			break;
	}
	atomic_store(&c->closed, true);
	virStreamEventRemoveCallback(st);
	virStreamAbort(st);
	console_unref(c);
	return rc;
}

bool vn_console_log_shows_kernel(const char *path)
{
	char buf[65536];
	_cleanup_close_ int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);

	if (fd < 0)
		return false;
	/* The first 64 KiB: a kernel's banner is among its first lines. */
	ssize_t n = read(fd, buf, sizeof(buf));
	return n > 0 && vn_console_shows_kernel(buf, (size_t)n);
}
