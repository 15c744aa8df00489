/*
 * A guest's agent channel and serial console over libvirt streams
 * (virDomainOpenChannel, virDomainOpenConsole), so that a guest on another
 * host is reached the way a local one is: the channel becomes a local
 * socket whose other end is pumped to and from the stream, the console a
 * local log file. Everything above (the agent protocol, panic detection,
 * console tails) keeps reading file descriptors and files.
 *
 * All pumping runs in libvirt's event-loop thread (connect.c), and only
 * there once set up, so a bridge's buffers need no lock. A bridge ends
 * itself when either side does: the stream hangs up or fails (the guest or
 * the host went away) and the local end then reads EOF; the local end is
 * closed and the stream is aborted.
 *
 * A device is opened again only once its previous bridge in this process has
 * ended (live_*): see live_claim.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "util/alloc.h"
#include "util/cleanup.h"
#include "util/clock.h"
#include "util/interrupt.h"
#include "virt/virt-priv.h"

#define BRIDGE_BUF (256 * 1024)

/* How long an open waits for the same device's previous bridge to end before it forces its way in (Ctrl-C: at once). */
#define LIVE_WAIT_S 10

/* A device of a domain with a bridge up in this process: the connection, the domain, the device's name. */
struct live {
	struct live *next;
	virConnectPtr conn;
	unsigned char uuid[VIR_UUID_BUFLEN];
	char *dev;
};

static pthread_mutex_t live_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_once_t live_once = PTHREAD_ONCE_INIT;
static pthread_cond_t live_ended; /* vn_cond_init_monotonic, once */
static struct live *lives;

static void live_init(void)
{
	vn_cond_init_monotonic(&live_ended);
}

struct bridge {
	atomic_int refs; /* ours until set up, then the stream callback's and the handle's */
	virStreamPtr st;
	int fd;    /* our end of the socketpair, or the console log */
	int watch; /* virEventAddHandle on fd; -1 for a log file, which never blocks */
	bool log;
	bool dead;
	struct vn_console_sink sink; /* the console log's cap (console-keep.c) */
	struct live *live;           /* its device's entry, released once its stream is aborted */
	size_t in_len, out_len;      /* stream -> fd, fd -> stream */
	char in[BRIDGE_BUF], out[BRIDGE_BUF];
};

static struct live **live_find(virConnectPtr conn, const unsigned char *uuid, const char *dev)
{
	struct live **l = &lives;

	while (*l && ((*l)->conn != conn || memcmp((*l)->uuid, uuid, VIR_UUID_BUFLEN) || strcmp((*l)->dev, dev)))
		l = &(*l)->next;
	return l;
}

/*
 * Claims dev of dom for a new bridge: waits (at most LIVE_WAIT_S) until this
 * process's previous bridge on it has ended. By then its abort has been
 * answered, so the daemon no longer holds the old stream and the open does
 * not take libvirt's force path. In libvirt 9.0 that path deadlocks the
 * daemon when the old stream's abort runs in its event loop at the same
 * moment (virChrdevOpen holds the devices' lock and wants the stream's; the
 * abort holds the stream's and wants the devices'): the remote daemon then
 * answers nothing, and our event loop waits for it inside bridge_end. That
 * was a run in CI that neither sampled nor failed until its host was killed:
 * closing an agent session and opening the next at once makes exactly that
 * race. A bridge of another process (or one left open) is still forced out
 * after the wait. Returns the entry, which the bridge releases when it goes.
 */
static struct live *live_claim(virDomainPtr dom, const char *dev)
{
	struct live *n = vn_xcalloc(1, sizeof(*n));
	int64_t deadline = vn_now_ms() + LIVE_WAIT_S * 1000;

	n->conn = virDomainGetConnect(dom);
	virDomainGetUUID(dom, n->uuid);
	n->dev = vn_xstrdup(dev ? dev : "");
	pthread_once(&live_once, live_init);
	pthread_mutex_lock(&live_lock);
	/* In slices, so that Ctrl-C ends the wait at once. */
	while (*live_find(n->conn, n->uuid, n->dev) && !vn_was_interrupted() && vn_now_ms() < deadline)
		vn_cond_wait_slice(&live_ended, &live_lock, deadline);
	n->next = lives;
	lives = n;
	pthread_mutex_unlock(&live_lock);
	return n;
}

static void live_release(struct live *n)
{
	pthread_mutex_lock(&live_lock);
	for (struct live **l = &lives; *l; l = &(*l)->next)
		if (*l == n) {
			*l = n->next;
			break;
		}
	pthread_cond_broadcast(&live_ended);
	pthread_mutex_unlock(&live_lock);
	free(n->dev);
	free(n);
}

static void bridge_unref(void *opaque)
{
	struct bridge *b = opaque;

	if (atomic_fetch_sub(&b->refs, 1) != 1)
		return;
	if (b->fd >= 0)
		close(b->fd);
	if (b->live) /* it never started, or never ended */
		live_release(b->live);
	free(b);
}

static void bridge_end(struct bridge *b)
{
	if (b->dead)
		return;
	b->dead = true;
	/* Removing the callbacks may drop their references at once: b must outlive this function. */
	atomic_fetch_add(&b->refs, 1);
	/* The local side sees EOF now; the fd itself goes with the last reference. */
	if (!b->log)
		shutdown(b->fd, SHUT_RDWR);
	if (b->watch >= 0)
		virEventRemoveHandle(b->watch);
	b->watch = -1;
	virStreamEventRemoveCallback(b->st);
	virStreamAbort(b->st);
	virStreamFree(b->st);
	b->st = NULL;
	/* Answered: the device may be opened again (the last reference may wait for the connection's end). */
	if (b->live)
		live_release(b->live);
	b->live = NULL;
	bridge_unref(b);
}

static void bridge_update(struct bridge *b)
{
	if (b->dead)
		return;
	int sev = (b->in_len < sizeof(b->in) ? VIR_STREAM_EVENT_READABLE : 0) |
		  (b->out_len ? VIR_STREAM_EVENT_WRITABLE : 0) | VIR_STREAM_EVENT_HANGUP | VIR_STREAM_EVENT_ERROR;
	virStreamEventUpdateCallback(b->st, sev);
	if (b->watch >= 0)
		virEventUpdateHandle(b->watch, (b->out_len < sizeof(b->out) ? VIR_EVENT_HANDLE_READABLE : 0) |
						       (b->in_len ? VIR_EVENT_HANDLE_WRITABLE : 0));
}

/* The n bytes sent leave the front of buf, what is still to send moves up. */
static void drop_sent(char *buf, size_t *len, size_t n)
{
	memmove(buf, buf + n, *len - n);
	*len -= n;
}

/* What came from the guest, onward to the local end; 0, or -1 when that end is gone. */
static int flush_in(struct bridge *b)
{
	if (b->log) {
		/* A hostile guest could fill the disk through its console: the sink stops the log at its cap. */
		int rc = vn_console_sink_write(&b->sink, b->in, b->in_len);
		b->in_len = 0;
		return rc;
	}
	while (b->in_len) {
		ssize_t n = send(b->fd, b->in, b->in_len, MSG_DONTWAIT | MSG_NOSIGNAL);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
			return 0;
		if (n <= 0)
			return -1;
		drop_sent(b->in, &b->in_len, (size_t)n);
	}
	return 0;
}

/* What the local end wrote, onward to the guest; 0, or -1 when the stream failed. */
static int flush_out(struct bridge *b)
{
	while (b->out_len) {
		int n = virStreamSend(b->st, b->out, b->out_len);
		if (n == -2)
			return 0;
		if (n <= 0)
			return -1;
		drop_sent(b->out, &b->out_len, (size_t)n);
	}
	return 0;
}

static void on_stream(virStreamPtr st, int events, void *opaque)
{
	struct bridge *b = opaque;

	if (b->dead)
		return;
	if (events & (VIR_STREAM_EVENT_READABLE | VIR_STREAM_EVENT_HANGUP)) {
		while (b->in_len < sizeof(b->in)) {
			int n = virStreamRecv(st, b->in + b->in_len, sizeof(b->in) - b->in_len);
			if (n == -2)
				break;
			if (n <= 0) {
				/* EOF or an error: what arrived still reaches the local end first. */
				flush_in(b);
				bridge_end(b);
				return;
			}
			b->in_len += (size_t)n;
		}
		if (flush_in(b) < 0) {
			bridge_end(b);
			return;
		}
	}
	if (((events & VIR_STREAM_EVENT_WRITABLE) && flush_out(b) < 0) || (events & VIR_STREAM_EVENT_ERROR)) {
		bridge_end(b);
		return;
	}
	bridge_update(b);
}

static void on_fd(int watch, int fd, int events, void *opaque)
{
	struct bridge *b = opaque;

	if (b->dead)
		return;
	if ((events & VIR_EVENT_HANDLE_WRITABLE) && flush_in(b) < 0) {
		bridge_end(b);
		return;
	}
	if (events & (VIR_EVENT_HANDLE_READABLE | VIR_EVENT_HANDLE_HANGUP | VIR_EVENT_HANDLE_ERROR)) {
		ssize_t n = 0;
		if (b->out_len < sizeof(b->out))
			n = read(fd, b->out + b->out_len, sizeof(b->out) - b->out_len);
		if (n == 0 || (n < 0 && errno != EAGAIN && errno != EINTR)) {
			/* The local end closed: what it wrote last still goes out, then the stream ends. */
			flush_out(b);
			bridge_end(b);
			return;
		}
		if (n > 0)
			b->out_len += (size_t)n;
		if (flush_out(b) < 0) {
			bridge_end(b);
			return;
		}
	}
	bridge_update(b);
}

typedef int (*open_fn)(virDomainPtr dom, const char *name, virStreamPtr st);

static int open_channel(virDomainPtr dom, const char *name, virStreamPtr st)
{
	/* FORCE: a connection of a process that died without closing it must not lock the agent out. */
	return virDomainOpenChannel(dom, name, st, VIR_DOMAIN_CHANNEL_FORCE);
}

static int open_console(virDomainPtr dom, const char *name, virStreamPtr st)
{
	return virDomainOpenConsole(dom, name, st, VIR_DOMAIN_CONSOLE_FORCE);
}

/* b->fd is set; on failure it is closed with b. */
static int bridge_start(virDomainPtr dom, struct bridge *b, open_fn open, const char *name, const char *what,
			struct vn_error *err)
{
	b->watch = -1;
	atomic_init(&b->refs, 1);
	b->live = live_claim(dom, name);
	b->st = virStreamNew(virDomainGetConnect(dom), VIR_STREAM_NONBLOCK);
	if (!b->st) {
		bridge_unref(b);
		return vn_virt_error(err, "cannot create a stream for the %s of '%s'", what, virDomainGetName(dom));
	}
	if (open(dom, name, b->st) < 0) {
		int rc = vn_virt_error(err, "cannot open the %s of '%s'", what, virDomainGetName(dom));
		virStreamFree(b->st);
		bridge_unref(b);
		return rc;
	}
	/* Both registrations take a reference before either callback can run. */
	atomic_fetch_add(&b->refs, b->log ? 1 : 2);
	if (!b->log && (b->watch = virEventAddHandle(b->fd, VIR_EVENT_HANDLE_READABLE, on_fd, b, bridge_unref)) < 0)
		atomic_fetch_sub(&b->refs, 1);
	if (virStreamEventAddCallback(b->st,
				      VIR_STREAM_EVENT_READABLE | VIR_STREAM_EVENT_HANGUP | VIR_STREAM_EVENT_ERROR,
				      on_stream, b, bridge_unref) < 0) {
		int rc = vn_virt_error(err, "cannot watch the %s of '%s'", what, virDomainGetName(dom));
		atomic_fetch_sub(&b->refs, 1);
		if (b->watch >= 0)
			virEventRemoveHandle(b->watch);
		virStreamAbort(b->st);
		virStreamFree(b->st);
		bridge_unref(b);
		return rc;
	}
	if (!b->log && b->watch < 0) {
		/* The stream is registered: ending it is the loop's business now. */
		bridge_unref(b);
		return vn_infra_error(err, -EIO, "cannot watch the local end of the %s of '%s'", what,
				      virDomainGetName(dom));
	}
	bridge_unref(b);
	return 0;
}

int vn_virt_domain_open_channel(struct vn_virt_domain *d, const char *name, int *fd, struct vn_error *err)
{
	int sv[2];

	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) < 0)
		return vn_infra_error(err, -errno, "socketpair: %s", strerror(errno));
	fcntl(sv[1], F_SETFL, O_NONBLOCK);
	struct bridge *b = vn_xcalloc(1, sizeof(*b));
	b->fd = sv[1];
	int rc = bridge_start(d->dom, b, open_channel, name, "agent channel", err);
	if (rc < 0) {
		close(sv[0]);
		return rc;
	}
	*fd = sv[0];
	return 0;
}

int vn_virt_console_log(virDomainPtr dom, const char *path, struct vn_error *err)
{
	uint64_t max;
	int rc = vn_console_log_max(&max, err);

	if (rc < 0)
		return rc;
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_APPEND | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (fd < 0)
		return vn_infra_error(err, -errno, "cannot create %s: %s", path, strerror(errno));
	struct bridge *b = vn_xcalloc(1, sizeof(*b));
	b->fd = fd;
	b->log = true;
	vn_console_sink_init(&b->sink, fd, max);
	return bridge_start(dom, b, open_console, NULL, "console", err);
}
