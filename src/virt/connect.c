/* Connection to libvirt: URI choice, embed root setup, event loop, errors, accelerator probe. */
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>

#include "util/cleanup.h"
#include "util/interrupt.h"
#include "util/name.h"
#include "util/strbuf.h"
#include "virt/virt-priv.h"
#include "util/clock.h"
#include "util/file.h"
#include "util/alloc.h"
#include "util/state.h"

static void silent_error(void *opaque, virErrorPtr e)
{
}

static void *event_loop(void *arg)
{
	for (;;)
		if (virEventRunDefaultImpl() < 0)
			usleep(10000);
	return NULL;
}

static int event_loop_rc;

/*
 * One loop per process, started once and never stopped: libvirt cannot
 * unregister its event implementation, and console streams and the embedded
 * driver's monitor connections need it for the whole process lifetime.
 */
static void event_loop_start(void)
{
	pthread_t th;

	virSetErrorFunc(NULL, silent_error);
	if (virInitialize() < 0 || virEventRegisterDefaultImpl() < 0) {
		event_loop_rc = -EIO; /* e.g. a bad LIBVIRT_LOG_OUTPUTS / LIBVIRT_LOG_FILTERS */
		return;
	}
	if (pthread_create(&th, NULL, event_loop, NULL) != 0) {
		event_loop_rc = -EAGAIN;
		return;
	}
	pthread_detach(th);
}

int vn_virt_error(struct vn_error *err, const char *what, ...)
{
	char ctx[1024];
	va_list ap;
	const char *msg = virGetLastErrorMessage();

	va_start(ap, what);
	vsnprintf(ctx, sizeof(ctx), what, ap);
	va_end(ap);
	return vn_infra_error(err, -EIO, "%s: %s", ctx, msg ? msg : "unknown libvirt error");
}

static int mkdir_private(const char *path, struct vn_error *err)
{
	if (mkdir(path, 0700) < 0 && errno != EEXIST)
		return vn_infra_error(err, -errno, "cannot create %s: %s", path, strerror(errno));
	return 0;
}

/* The first line of a qemu.conf of ours: one without it is the user's. */
#define EMBED_CONF_MARK "# written by vnuma"

/*
 * The embedded driver reads ROOT/etc/qemu.conf (ours alone, checked on each
 * open). Defaults that break here: console logs go through virtlogd (no daemon
 * runs); as root, QEMU would run as libvirt-qemu, and libvirt would chown the
 * kernel, initrd and our 0700 state dir to it and tag them with xattrs
 * (whose stale timestamps it then warns about on stderr from a forked child).
 */
static int embed_root_setup(const char *root, struct vn_error *err)
{
	_cleanup_free_ char *etc = NULL;
	_cleanup_free_ char *conf = NULL;
	char text[1024];
	int rc;

	etc = vn_xasprintf("%s/etc", root);
	conf = vn_xasprintf("%s/qemu.conf", etc);
	if ((rc = mkdir_private(root, err)) < 0 || (rc = mkdir_private(etc, err)) < 0)
		return rc;
	snprintf(text, sizeof(text),
		 "%s; see src/virt/connect.c\n"
		 "stdio_handler = \"file\"\n"
		 "%s",
		 EMBED_CONF_MARK,
		 geteuid() == 0 ? "user = \"root\"\ngroup = \"root\"\ndynamic_ownership = 0\nremember_owner = 0\n"
				: "");
	/*
	 * Rewritten only when it differs, and then atomically: another vnuma's
	 * libvirt may be reading it right now, and an empty qemu.conf means
	 * virtlogd, which does not run.
	 */
	_cleanup_free_ char *old = NULL;
	size_t len = strlen(text), old_len;
	if (vn_file_read(conf, sizeof(text), &old, &old_len, NULL) == 0 && old_len == len &&
	    memcmp(old, text, len) == 0)
		return 0;
	return vn_file_write_atomic(conf, text, len, 0600, err);
}

char *vn_virt_embed_root(const char *uri)
{
	static const char prefix[] = "qemu:///embed?";
	struct vn_strbuf b = VN_STRBUF_INIT;

	if (!uri || strncmp(uri, prefix, sizeof(prefix) - 1) != 0)
		return NULL;
	/* root=VALUE among the query's &- or ;-separated parameters, %XX-unescaped as libvirt does. */
	for (const char *p = uri + sizeof(prefix) - 1; *p; p += strcspn(p, "&;"), p += *p != '\0') {
		if (strncmp(p, "root=", 5) != 0)
			continue;
		for (p += 5; *p && *p != '&' && *p != ';'; p++) {
			if (*p == '%' && isxdigit((unsigned char)p[1]) && isxdigit((unsigned char)p[2])) {
				char hex[3] = {p[1], p[2], 0}, c = (char)strtol(hex, NULL, 16);
				if (!c) {
					/* A NUL in a path: not a root we set up. */
					vn_strbuf_free(&b);
					return NULL;
				}
				vn_strbuf_append(&b, &c, 1);
				p += 2;
			} else {
				vn_strbuf_append(&b, p, 1);
			}
		}
		break;
	}
	if (!b.len) {
		vn_strbuf_free(&b);
		return NULL;
	}
	return vn_strbuf_steal(&b);
}

int vn_virt_embed_root_prepare(const char *uri, struct vn_error *err)
{
	_cleanup_free_ char *root = vn_virt_embed_root(uri);

	if (!root)
		return 0;
	/*
	 * A root named in a URI (a hosts file's) is set up as our own is, or
	 * QEMU runs as libvirt-qemu there and cannot read the root's files
	 * (Permission denied on master-key.aes). A qemu.conf of the user's own
	 * is theirs: left as it is.
	 */
	_cleanup_free_ char *conf = vn_xasprintf("%s/etc/qemu.conf", root);
	_cleanup_free_ char *old = NULL;
	size_t len;
	if (vn_file_read(conf, 4096, &old, &len, NULL) == 0) {
		if (strncmp(old, EMBED_CONF_MARK, strlen(EMBED_CONF_MARK)) != 0)
			return 0;
	} else if (access(conf, F_OK) == 0) {
		return 0; /* there, but too big or unreadable for us: not ours either */
	}
	return embed_root_setup(root, err);
}

/*
 * libvirt's embedded driver locks ROOT/run/qemu/driver.pid (fcntl, byte 0)
 * while a process holds the root. A failed virStateInitialize cannot be
 * retried in the same process ("qemu state driver is not active" forever
 * after), so look at the lock first instead of trying and failing.
 */
static bool embed_root_busy(const char *root)
{
	_cleanup_free_ char *pidfile = vn_xasprintf("%s/run/qemu/driver.pid", root);
	_cleanup_close_ int fd = open(pidfile, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return false;
	struct flock fl = {.l_type = F_WRLCK, .l_whence = SEEK_SET, .l_start = 0, .l_len = 1};
	return fcntl(fd, F_GETLK, &fl) == 0 && fl.l_type != F_UNLCK;
}

/*
 * libvirt logs errors to stderr on its own, besides reporting them to us;
 * library code must not print, so its log goes to the state dir unless the
 * user chose otherwise. Read once, when libvirt initializes (virt.h says when).
 */
bool vn_virt_log_setup(const char *state_dir)
{
	if (getenv("LIBVIRT_LOG_OUTPUTS"))
		return false;
	/* Outputs are whitespace-separated; an invalid one makes virInitialize() fail outright. */
	bool plain = !strpbrk(state_dir, " \t\n");
	_cleanup_free_ char *log = plain ? vn_state_libvirt_log(state_dir) : NULL;
	_cleanup_free_ char *outputs = vn_xasprintf("3:file:%s", plain ? log : "/dev/null");
	setenv("LIBVIRT_LOG_OUTPUTS", outputs, 0);
	return true;
}

/* libvirt URI-unescapes query values and splits them at & and ;, so a state dir needs escaping. */
static char *uri_escape(const char *s)
{
	struct vn_strbuf b = VN_STRBUF_INIT;

	for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
		if (isalnum(*p) || strchr("-._~/", *p))
			vn_strbuf_append(&b, (const char *)p, 1);
		else
			vn_strbuf_printf(&b, "%%%02X", *p);
	}
	return vn_strbuf_steal(&b);
}

/* One turn of waiting for another vnuma to let go of the state dir: 0 after a sleep, or why to give up. */
static int wait_turn(const char *sd, long deadline, long delay_ms, struct vn_error *err)
{
	/* usleep() returns early on a signal (no SA_RESTART); the flag ends the wait at once. */
	if (vn_was_interrupted())
		return vn_infra_error(err, -EINTR,
				      "interrupted while waiting for the state dir %s (another vnuma process holds it)",
				      sd);
	if (vn_now_ms() >= deadline)
		return vn_infra_error(
			err, -EBUSY,
			"another vnuma process holds the state dir %s (libvirt's embedded driver admits one "
			"process at a time); wait for it to finish, or use another state dir",
			sd);
	usleep((useconds_t)delay_ms * 1000);
	return 0;
}

/*
 * A connection opened by a thread of its own, for URIs that reach a daemon:
 * a host that accepts and never answers (virConnectOpen has no deadline of
 * its own) then costs only our wait. The thread, if left behind, closes
 * what it opens and frees the call.
 */
struct open_call {
	pthread_mutex_t lock;
	pthread_cond_t cond;
	char *uri;
	virConnectPtr conn;
	char msg[1024];
	bool done, abandoned;
};

static void open_call_free(struct open_call *c)
{
	pthread_cond_destroy(&c->cond);
	pthread_mutex_destroy(&c->lock);
	free(c->uri);
	free(c);
}

static void *open_thread(void *arg)
{
	struct open_call *c = arg;
	virConnectPtr conn = virConnectOpen(c->uri);
	const char *msg = conn ? NULL : virGetLastErrorMessage();

	pthread_mutex_lock(&c->lock);
	snprintf(c->msg, sizeof(c->msg), "%s", msg ? msg : "unknown libvirt error");
	c->conn = conn;
	c->done = true;
	bool abandoned = c->abandoned;
	pthread_cond_signal(&c->cond);
	pthread_mutex_unlock(&c->lock);
	if (abandoned) {
		if (conn)
			virConnectClose(conn);
		open_call_free(c);
	}
	return NULL;
}

/* virConnectOpen(uri) within timeout_ms, or until interrupted; *conn NULL with err filled on failure. */
static int open_within(const char *uri, int timeout_ms, virConnectPtr *conn, struct vn_error *err)
{
	struct open_call *c = vn_xcalloc(1, sizeof(*c));
	pthread_t th;
	int rc = 0;

	*conn = NULL;
	c->uri = vn_xstrdup(uri);
	pthread_mutex_init(&c->lock, NULL);
	vn_cond_init_monotonic(&c->cond);
	if (pthread_create(&th, NULL, open_thread, c) != 0) {
		open_call_free(c);
		return vn_infra_error(err, -EAGAIN, "cannot open %s: no thread to open it in", uri);
	}
	pthread_detach(th);
	int64_t deadline = vn_now_ms() + timeout_ms;
	pthread_mutex_lock(&c->lock);
	while (!c->done) {
		int64_t now = vn_now_ms();
		if (vn_was_interrupted() || now >= deadline) {
			c->abandoned = true;
			pthread_mutex_unlock(&c->lock);
			if (vn_was_interrupted())
				return vn_infra_error(err, -EINTR, "interrupted while connecting to %s", uri);
			return vn_infra_error(err, -ETIMEDOUT,
					      "cannot open %s: no answer within %.1f s (a hosts line's timeout=SECONDS "
					      "sets how long to wait)",
					      uri, timeout_ms / 1000.0);
		}
		vn_cond_wait_slice(&c->cond, &c->lock, deadline);
	}
	pthread_mutex_unlock(&c->lock);
	if (c->conn)
		*conn = c->conn;
	else
		rc = vn_infra_error(err, -EIO, "cannot open %s: %s", uri, c->msg);
	open_call_free(c);
	return rc;
}

int vn_virt_open(const char *uri, const char *state_dir, int timeout_ms, struct vn_virt **out, struct vn_error *err)
{
	return vn_virt_open_within(uri, state_dir, timeout_ms, 0, out, err);
}

int vn_virt_open_within(const char *uri, const char *state_dir, int timeout_ms, int connect_timeout_ms,
			struct vn_virt **out, struct vn_error *err)
{
	static pthread_once_t once = PTHREAD_ONCE_INIT;
	_cleanup_free_ char *root = NULL;
	_cleanup_free_ char *u = NULL;
	_cleanup_free_ char *sd = NULL;
	int rc;

	if (!state_dir)
		return vn_input_error(err, "no state directory given");
	sd = realpath(state_dir, NULL);
	if (!sd) {
		if ((rc = mkdir_private(state_dir, err)) < 0)
			return rc;
		sd = realpath(state_dir, NULL);
		if (!sd)
			return vn_infra_error(err, -errno, "cannot resolve %s: %s", state_dir, strerror(errno));
	}
	vn_virt_log_setup(sd);
	pthread_once(&once, event_loop_start);
	if (event_loop_rc < 0)
		return vn_infra_error(err, event_loop_rc, "cannot start libvirt's event loop");
	if (!uri)
		uri = getenv("VNUMA_URI");
	/* A bare qemu:///embed (a hosts file's way to name this machine) is the state dir's own. */
	if (!uri || !*uri || strcmp(uri, "qemu:///embed") == 0) {
		root = vn_state_embed_root(sd);
		_cleanup_free_ char *eroot = uri_escape(root);
		u = vn_xasprintf("qemu:///embed?root=%s", eroot);
		if ((rc = embed_root_setup(root, err)) < 0)
			return rc;
	} else {
		u = vn_xstrdup(uri);
		if ((rc = vn_virt_embed_root_prepare(u, err)) < 0)
			return rc;
	}

	long deadline = vn_now_ms() + (timeout_ms > 0 ? timeout_ms : 0);
	/*
	 * Between our look at libvirt's lock and virConnectOpen another vnuma can
	 * take the root, and the failed open cannot be retried in this process.
	 * So vnuma processes queue on a lock of their own and look at libvirt's
	 * only for holders outside that queue. libvirt keeps its lock until the
	 * process exits, closed connection or not, so ours is kept as long (the
	 * kernel drops both if we die); long-lived callers open libvirt in a
	 * short-lived child instead (util/isolate.h).
	 */
	static int queue_fd = -1;
	if (root && queue_fd < 0) {
		_cleanup_free_ char *queue = vn_state_driver_queue(sd);
		_cleanup_close_ int fd = open(queue, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600);
		if (fd < 0)
			return vn_infra_error(err, -errno, "cannot open %s: %s", queue, strerror(errno));
		for (long delay = 50; flock(fd, LOCK_EX | LOCK_NB) < 0; delay = delay < 1000 ? delay * 2 : 1000) {
			if (errno != EWOULDBLOCK && errno != EINTR)
				return vn_infra_error(err, -errno, "cannot lock %s: %s", queue, strerror(errno));
			if ((rc = wait_turn(sd, deadline, delay, err)) < 0)
				return rc;
		}
		queue_fd = steal_fd(&fd);
	}
	for (long delay = 50; root && embed_root_busy(root); delay = delay < 1000 ? delay * 2 : 1000) {
		if ((rc = wait_turn(sd, deadline, delay, err)) < 0)
			return rc;
	}
	virConnectPtr conn = NULL;
	if (!vn_virt_uri_is_embedded(u)) {
		if ((rc = open_within(u, connect_timeout_ms > 0 ? connect_timeout_ms : VN_VIRT_CONNECT_TIMEOUT_MS,
				      &conn, err)) < 0)
			return rc;
	} else if (!(conn = virConnectOpen(u))) {
		const char *msg = virGetLastErrorMessage();
		if (root && embed_root_busy(root))
			return vn_infra_error(err, -EBUSY, "another vnuma process took the state dir %s just now", sd);
		if (msg && strstr(msg, "Failed to parse user"))
			return vn_infra_error(err, -EIO,
					      "cannot open %s: %s (libvirt running as root needs its QEMU system "
					      "user: install libvirt-daemon-system or run `useradd -r libvirt-qemu`)",
					      u, msg);
		if (root) {
			/* The real cause of a failed embedded-driver start is only in libvirt's log. */
			_cleanup_free_ char *log = vn_state_libvirt_log(sd);
			return vn_virt_error(err, "cannot open %s (details in %s)", u, log);
		}
		return vn_virt_error(err, "cannot open %s", u);
	}

	struct vn_virt *v = vn_xcalloc(1, sizeof(*v));
	v->conn = conn;
	v->remote = vn_virt_uri_is_remote(u);
	/*
	 * A host that dies or drops off the network must end our streams and
	 * calls, not leave them waiting: libvirt closes a connection whose
	 * keepalives go unanswered (every 5 s, 3 missed).
	 */
	if (v->remote)
		virConnectSetKeepAlive(conn, VN_VIRT_KEEPALIVE_S, VN_VIRT_KEEPALIVE_COUNT);
	v->uri = steal_pointer(&u);
	v->state_dir = steal_pointer(&sd);
	*out = v;
	return 0;
}

void vn_virt_close(struct vn_virt *v)
{
	if (!v)
		return;
	if (v->conn)
		virConnectClose(v->conn);
	free(v->uri);
	free(v->state_dir);
	free(v);
}

bool vn_virt_alive(struct vn_virt *v)
{
	return virConnectIsAlive(v->conn) == 1;
}

bool vn_virt_is_remote(const struct vn_virt *v)
{
	return v->remote;
}

/* Here, not in watch.c: the watch of a local guest then links no libvirt (the light `vnuma exec`, cli/front.c). */
void vn_virt_watch_connection(struct vn_virt_watch *w, struct vn_virt *v)
{
	vn_virt_watch_link(w, v, vn_virt_alive, vn_virt_uri(v));
}

const char *vn_virt_uri(const struct vn_virt *v)
{
	return v->uri;
}

int vn_virt_guest_dir(struct vn_virt *v, const char *name, char **dir, struct vn_error *err)
{
	_cleanup_free_ char *guests = NULL;
	int rc;

	if ((rc = vn_guest_name_check(name, err)) < 0)
		return rc;
	guests = vn_state_guests_dir(v->state_dir);
	if ((rc = mkdir_private(guests, err)) < 0)
		return rc;
	*dir = vn_state_guest_dir(v->state_dir, name);
	if ((rc = mkdir_private(*dir, err)) < 0) {
		free(*dir);
		*dir = NULL;
	}
	return rc;
}

static char *accel_cache_key(struct vn_virt *v)
{
	struct utsname u;
	unsigned long ver = 0;
	uname(&u);
	virConnectGetVersion(v->conn, &ver);
	/* Another host's verdict is its own: keyed by its URI (no spaces in a URI), not by our kernel. */
	return vn_xasprintf("%s qemu-%lu", v->remote ? v->uri : u.release, ver);
}

/*
 * Cache format: one line "KERNEL-RELEASE qemu-VERSION kvm|tcg REASON"; the
 * last matching line wins. Lines from other host kernels / QEMUs are kept so
 * that a dual-boot or a downgrade finds its verdict again.
 */
/* The reason of a cache line after "KEY ", when its verdict is ours to trust. */
static int cache_line(const char *p, enum vn_accel *verdict, char *reason, size_t len)
{
	if (strncmp(p, "kvm", 3) == 0)
		*verdict = VN_ACCEL_KVM;
	else if (strncmp(p, "tcg", 3) == 0)
		*verdict = VN_ACCEL_TCG;
	else
		return -1;
	p += 3;
	p += *p == ' ';
	snprintf(reason, len, "%.*s", (int)strcspn(p, "\n"), p);
	return 0;
}

/*
 * Cache format: one line "KERNEL-RELEASE qemu-VERSION kvm|tcg REASON"; the
 * last matching line wins. Lines from other host kernels / QEMUs are kept so
 * that a dual-boot or a downgrade finds its verdict again. REASON is QEMU's
 * whole text, its lines joined by " | " (vn_accel_oneline).
 */
int vn_virt_accel_cached(struct vn_virt *v, enum vn_accel *verdict, char *reason, size_t len)
{
	_cleanup_free_ char *key = accel_cache_key(v);
	_cleanup_free_ char *line = NULL;
	_cleanup_free_ char *path = vn_state_accel_cache(v->state_dir);
	size_t cap = 0;
	int rc = -ENOENT;

	_cleanup_fclose_ FILE *f = fopen(path, "re");
	if (!f)
		return -ENOENT;
	size_t klen = strlen(key);
	while (getline(&line, &cap, f) > 0) {
		if (strncmp(line, key, klen) != 0 || line[klen] != ' ')
			continue;
		if (cache_line(line + klen + 1, verdict, reason, len) == 0)
			rc = 0;
	}
	return rc;
}

/*
 * For work that opens no libvirt connection (libguestfs's appliance): the
 * last verdict proven on this host kernel, whatever QEMU version proved it.
 */
int vn_virt_accel_cached_host(const char *state_dir, enum vn_accel *verdict, char *reason, size_t len)
{
	_cleanup_free_ char *line = NULL;
	_cleanup_free_ char *path = vn_state_accel_cache(state_dir);
	struct utsname u;
	size_t cap = 0;
	int rc = -ENOENT;

	uname(&u);
	_cleanup_fclose_ FILE *f = fopen(path, "re");
	if (!f)
		return -ENOENT;
	size_t klen = strlen(u.release);
	while (getline(&line, &cap, f) > 0) {
		if (strncmp(line, u.release, klen) != 0 || strncmp(line + klen, " qemu-", 6) != 0)
			continue;
		const char *p = strchr(line + klen + 1, ' ');
		if (p && cache_line(p + 1, verdict, reason, len) == 0)
			rc = 0;
	}
	return rc;
}

void vn_virt_accel_remember(struct vn_virt *v, enum vn_accel verdict, const char *reason)
{
	_cleanup_free_ char *path = vn_state_accel_cache(v->state_dir);
	_cleanup_free_ char *key = accel_cache_key(v);

	_cleanup_fclose_ FILE *f = fopen(path, "ae");
	if (!f)
		return;
	char flat[VN_ACCEL_DETAIL_MAX];
	vn_accel_oneline(reason ? reason : "", flat, sizeof(flat));
	fprintf(f, "%s %s %s\n", key, vn_accel_name(verdict), flat);
}

bool vn_virt_kvm_offered(struct vn_virt *v, char *why, size_t len)
{
	/* A remote URI's /dev/kvm is not ours to look at; let its capabilities decide. */
	bool local = !v->remote;

	if (local && access("/dev/kvm", F_OK) < 0) {
		snprintf(why, len, "no /dev/kvm");
		return false;
	}
	if (local && access("/dev/kvm", R_OK | W_OK) < 0) {
		snprintf(why, len, "/dev/kvm is not usable by this user (%s)", strerror(errno));
		return false;
	}
	char *caps = virConnectGetDomainCapabilities(v->conn, NULL, "x86_64", "q35", "kvm", 0);
	if (!caps) {
		const char *msg = virGetLastErrorMessage();
		snprintf(why, len, "libvirt offers no kvm domain type (%s)", msg ? msg : "no capabilities");
		return false;
	}
	free(caps);
	return true;
}

void vn_virt_versions(struct vn_virt *v, unsigned long *libvirt, unsigned long *hypervisor)
{
	*libvirt = *hypervisor = 0;
	if (virConnectGetLibVersion(v->conn, libvirt) < 0)
		*libvirt = 0;
	if (virConnectGetVersion(v->conn, hypervisor) < 0)
		*hypervisor = 0;
}
