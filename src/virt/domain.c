/* Guest lifecycle: define + start (with KVM -> TCG fallback), look up, list, destroy. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "agent/protocol.h"
#include "util/cleanup.h"
#include "virt/virt-priv.h"
#include "util/clock.h"
#include "util/alloc.h"
#include "util/state.h"

struct vn_virt_domain *vn_virt_domain_new(struct vn_virt *v, virDomainPtr dom, const char *name)
{
	struct vn_virt_domain *d = vn_xcalloc(1, sizeof(*d));

	d->v = v;
	d->dom = dom;
	d->name = vn_xstrdup(name);
	d->guest_dir = vn_state_guest_dir(v->state_dir, name);
	d->console_log = vn_state_guest_file(v->state_dir, name, VN_GUEST_CONSOLE_LOG);
	return d;
}

void vn_virt_domain_free(struct vn_virt_domain *d)
{
	if (!d)
		return;
	if (d->dom)
		virDomainFree(d->dom);
	vn_free_all(d->name, d->guest_dir, d->console_log, d);
}

enum vn_accel vn_virt_domain_accel(const struct vn_virt_domain *d)
{
	return d->accel;
}

const char *vn_virt_domain_accel_reason(const struct vn_virt_domain *d)
{
	return d->accel_reason;
}

const char *vn_virt_domain_console_log(const struct vn_virt_domain *d)
{
	return d->console_log;
}

static int write_text(const char *path, const char *text, struct vn_error *err)
{
	_cleanup_close_ int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	size_t len = strlen(text);

	if (fd < 0 || write(fd, text, len) != (ssize_t)len)
		return vn_infra_error(err, -EIO, "cannot write %s: %s", path, strerror(errno));
	return 0;
}

int vn_virt_guest_dir_remove(const char *dir, struct vn_error *err)
{
	DIR *d = opendir(dir);

	if (!d)
		return errno == ENOENT ? 0 : vn_infra_error(err, -errno, "cannot open %s: %s", dir, strerror(errno));
	/* Only files live there (socket, log, XML); unlinkat keeps us inside it whatever the names. */
	for (struct dirent *e; (e = readdir(d));)
		if (strcmp(e->d_name, ".") != 0 && strcmp(e->d_name, "..") != 0)
			unlinkat(dirfd(d), e->d_name, 0);
	closedir(d);
	if (rmdir(dir) < 0 && errno != ENOENT)
		return vn_infra_error(err, -errno, "cannot remove %s: %s", dir, strerror(errno));
	return 0;
}

/* A guest that never came up: its console tail into err, its dir into STATE_DIR/failed. */
static void keep_failed_start(struct vn_virt *v, const char *name, const char *log, struct vn_error *err)
{
	_cleanup_free_ char *tail = NULL;
	_cleanup_free_ char *kept = NULL;
	struct vn_error ignored = {0};

	vn_console_log_tail(log, VN_CONSOLE_TAIL_LINES, &tail, &ignored);
	vn_error_clear(&ignored);
	vn_virt_guest_dir_keep(v, name, &kept, &ignored);
	vn_error_clear(&ignored);
	vn_console_failure_detail(err, tail, kept);
}

static bool still_running(virDomainPtr dom)
{
	int state = 0, reason = 0;

	return virDomainGetState(dom, &state, &reason, 0) == 0 && state == VIR_DOMAIN_RUNNING;
}

/* Define and start one attempt; on failure nothing stays defined. */
static int define_and_start(struct vn_virt *v, const struct vn_topology *t, const struct vn_domain_opts *o,
			    const char *dir, virDomainPtr *out, struct vn_error *err)
{
	_cleanup_free_ char *xml = NULL, *path = NULL;
	int rc;

	if ((rc = vn_domain_xml_build(t, o, &xml, err)) < 0)
		return rc;
	path = vn_guest_dir_file(dir, VN_GUEST_DOMAIN_XML);
	if ((rc = write_text(path, xml, err)) < 0)
		return rc;
	/* VALIDATE: a schema error names the element, where a QEMU failure later would not. */
	virDomainPtr dom = virDomainDefineXMLFlags(v->conn, xml, VIR_DOMAIN_DEFINE_VALIDATE);
	if (!dom)
		return vn_virt_error(err, "cannot define domain '%s'", o->name);
	/* A local console's keeper reads the FIFO before QEMU opens it: that open would block without a reader. */
	_cleanup_close_ int keeper = -1;
	uint64_t log_max;
	if (!o->streams &&
	    ((rc = vn_console_log_max(&log_max, err)) < 0 ||
	     (rc = vn_console_keeper_start(o->console_pipe, o->console_log, log_max, false, &keeper, err)) < 0)) {
		virDomainUndefine(dom);
		virDomainFree(dom);
		return rc;
	}
	/* A streamed console is opened while the guest is paused, so its log misses not a byte of the boot. */
	if (virDomainCreateWithFlags(dom, o->streams ? VIR_DOMAIN_START_PAUSED : 0) < 0) {
		rc = vn_virt_error(err, "cannot start domain '%s' (%s)", o->name, vn_accel_name(o->accel));
		virDomainUndefine(dom);
		virDomainFree(dom);
		return rc;
	}
	if (o->streams &&
	    ((rc = vn_virt_console_log(dom, o->console_log, err)) < 0 ||
	     (virDomainResume(dom) < 0 && (rc = vn_virt_error(err, "cannot resume '%s'", o->name)) < 0))) {
		virDomainDestroy(dom);
		virDomainUndefine(dom);
		virDomainFree(dom);
		return rc;
	}
	*out = dom;
	return 0;
}

/* The real world behind the accelerator decision (accel.c). */
struct attempt {
	struct vn_virt *v;
	const struct vn_topology *t;
	struct vn_domain_opts *opts;
	const char *dir;
	virDomainPtr dom;
};

static long op_now_ms(void *data)
{
	return vn_now_ms();
}

static void op_sleep_ms(void *data, long ms)
{
	usleep((useconds_t)ms * 1000);
}

static bool op_kvm_offered(void *data, char *why, size_t len)
{
	return vn_virt_kvm_offered(((struct attempt *)data)->v, why, len);
}

static int op_cache_get(void *data, enum vn_accel *verdict, char *reason, size_t len)
{
	return vn_virt_accel_cached(((struct attempt *)data)->v, verdict, reason, len);
}

static void op_cache_put(void *data, enum vn_accel verdict, const char *reason)
{
	vn_virt_accel_remember(((struct attempt *)data)->v, verdict, reason);
}

static int op_start(void *data, enum vn_accel accel, struct vn_error *err)
{
	struct attempt *a = data;

	a->opts->accel = accel;
	return define_and_start(a->v, a->t, a->opts, a->dir, &a->dom, err);
}

static bool op_running(void *data)
{
	return still_running(((struct attempt *)data)->dom);
}

static bool op_progressed(void *data)
{
	return vn_console_log_shows_kernel(((struct attempt *)data)->opts->console_log);
}

static void op_abandon(void *data)
{
	struct attempt *a = data;
	char kept[4096];

	if (!a->dom)
		return;
	if (still_running(a->dom))
		virDomainDestroy(a->dom);
	virDomainUndefine(a->dom);
	virDomainFree(a->dom);
	a->dom = NULL;
	/* The next attempt truncates console.log; keep what the failed one printed, for the failure archive. */
	snprintf(kept, sizeof(kept), "%s.%s-attempt", a->opts->console_log, vn_accel_name(a->opts->accel));
	rename(a->opts->console_log, kept);
}

static void op_notify(void *data, const char *line)
{
	struct attempt *a = data;

	if (a->opts->notify)
		a->opts->notify(a->opts->notify_data, line);
}

int vn_virt_domain_create(struct vn_virt *v, const struct vn_topology *t, const struct vn_domain_opts *o,
			  struct vn_virt_domain **out, struct vn_error *err)
{
	_cleanup_free_ char *dir = NULL;
	_cleanup_free_ char *log = NULL;
	_cleanup_free_ char *sock = NULL;
	_cleanup_free_ char *fifo = NULL;
	struct vn_domain_opts opts = *o;
	int rc;

	virDomainPtr old = o->name ? virDomainLookupByName(v->conn, o->name) : NULL;
	if (old) {
		virDomainFree(old);
		return vn_input_error(err, "a guest named '%s' already exists (`vnuma down %s` first)", o->name,
				      o->name);
	}
	/* sockaddr_un.sun_path is 108 bytes; QEMU's own error for a longer path says nothing useful. */
	size_t sun_max = v->remote ? SIZE_MAX : sizeof(((struct sockaddr_un *)0)->sun_path) - 1;
	_cleanup_free_ char *last_sock =
		o->agent_socket ? vn_state_agent_channel(o->agent_socket, VN_AGENT_NPORTS - 1) : NULL;
	size_t sock_len = last_sock ? strlen(last_sock) : vn_state_agent_sock_len(v->state_dir, o->name ? o->name : "");
	if (sock_len > sun_max)
		return vn_input_error(err,
				      "the agent socket path for '%s' would be %zu bytes, more than a unix socket "
				      "allows (%zu); use a shorter state dir or guest name",
				      o->name, sock_len, sun_max);
	if ((rc = vn_virt_guest_dir(v, o->name, &dir, err)) < 0)
		return rc;
	if (!opts.console_log) {
		log = vn_guest_dir_file(dir, VN_GUEST_CONSOLE_LOG);
		opts.console_log = log;
	}
	if (!opts.agent_socket) {
		sock = vn_guest_dir_file(dir, VN_GUEST_AGENT_SOCK);
		opts.agent_socket = sock;
	}
	if (!opts.console_pipe) {
		fifo = vn_guest_dir_file(dir, VN_GUEST_CONSOLE_PIPE);
		opts.console_pipe = fifo;
	}
	opts.meta.guest_dir = dir;
	opts.streams = v->remote;
	if (!opts.disk_dir)
		opts.disk_dir = dir;

	struct attempt at = {.v = v, .t = t, .opts = &opts, .dir = dir};
	const struct vn_accel_ops ops = {
		.data = &at,
		.now_ms = op_now_ms,
		.sleep_ms = op_sleep_ms,
		.kvm_offered = op_kvm_offered,
		.cache_get = op_cache_get,
		.cache_put = op_cache_put,
		.start = op_start,
		.running = op_running,
		.progressed = op_progressed,
		.abandon = op_abandon,
		.notify = op_notify,
	};
	const struct vn_accel_limits lim = {.kvm_proof_ms = VN_KVM_PROOF_MS, .tcg_proof_ms = VN_TCG_PROOF_MS};
	struct vn_accel_verdict verdict;
	if (o->accel == VN_ACCEL_AUTO && o->arch != vn_arch_host()) {
		/* KVM runs only the host's own instruction set: nothing to probe, and no verdict of the host's to cache. */
		verdict = (struct vn_accel_verdict){.accel = VN_ACCEL_TCG};
		snprintf(verdict.reason, sizeof(verdict.reason), "%s guest on an %s host: emulated by TCG",
			 vn_arch_name(o->arch), vn_arch_name(vn_arch_host()));
		rc = op_start(&at, VN_ACCEL_TCG, err);
	} else if (o->accel == VN_ACCEL_AUTO)
		rc = vn_accel_boot(&ops, getenv("VNUMA_ACCEL"), &lim, &verdict, err);
	else {
		verdict = (struct vn_accel_verdict){.accel = o->accel};
		snprintf(verdict.reason, sizeof(verdict.reason), "%s",
			 o->accel_reason ? o->accel_reason : "chosen by the caller");
		rc = op_start(&at, o->accel, err);
	}
	if (rc < 0) {
		struct vn_error ignored = {0};
		if (err->kind != VN_ERR_INPUT)
			keep_failed_start(v, o->name, opts.console_log, err);
		else
			vn_virt_guest_dir_remove(dir, &ignored);
		return rc;
	}
	struct vn_virt_domain *d = vn_virt_domain_new(v, at.dom, o->name);
	d->accel = verdict.accel;
	snprintf(d->accel_reason, sizeof(d->accel_reason), "%s", verdict.reason);
	free(d->console_log);
	d->console_log = vn_xstrdup(opts.console_log);
	*out = d;
	return 0;
}

static void load_meta_bits(struct vn_virt_domain *d)
{
	struct vn_domain_meta m;
	struct vn_error ignored = {0};

	if (vn_virt_domain_metadata(d, &m, &ignored) < 0)
		return;
	d->accel = m.accel && strcmp(m.accel, "kvm") == 0 ? VN_ACCEL_KVM : VN_ACCEL_TCG;
	/* guest_dir stays STATE_DIR/guests/NAME: destroy deletes it, so never trust a path from the XML. */
	vn_domain_meta_clear(&m);
}

int vn_virt_domain_lookup(struct vn_virt *v, const char *name, struct vn_virt_domain **out, struct vn_error *err)
{
	virDomainPtr dom = virDomainLookupByName(v->conn, name);

	if (!dom) {
		virErrorPtr e = virGetLastError();
		if (e && e->code == VIR_ERR_NO_DOMAIN)
			return vn_input_error(err, "no guest named '%s' (see `vnuma list`)", name);
		return vn_virt_error(err, "cannot look up '%s'", name);
	}
	struct vn_virt_domain *d = vn_virt_domain_new(v, dom, name);
	load_meta_bits(d);
	*out = d;
	return 0;
}

int vn_virt_domain_metadata(struct vn_virt_domain *d, struct vn_domain_meta *out, struct vn_error *err)
{
	_cleanup_free_ char *xml = virDomainGetMetadata(d->dom, VIR_DOMAIN_METADATA_ELEMENT, VN_XMLNS, 0);

	if (!xml)
		return vn_virt_error(err, "domain '%s' has no vnuma metadata", d->name);
	return vn_domain_meta_parse(xml, out, err);
}

int vn_virt_domain_is_running(struct vn_virt_domain *d, bool *running, struct vn_error *err)
{
	int state = 0, reason = 0;

	if (virDomainGetState(d->dom, &state, &reason, 0) < 0)
		return vn_virt_error(err, "cannot get the state of '%s'", d->name);
	*running = state == VIR_DOMAIN_RUNNING || state == VIR_DOMAIN_PAUSED || state == VIR_DOMAIN_BLOCKED ||
		   state == VIR_DOMAIN_SHUTDOWN;
	return 0;
}

int vn_virt_domain_wait_shutoff(struct vn_virt_domain *d, int timeout_ms, struct vn_error *err)
{
	long end = vn_now_ms() + timeout_ms;
	bool running = true;
	int rc;

	for (;;) {
		if ((rc = vn_virt_domain_is_running(d, &running, err)) < 0)
			return rc;
		if (!running)
			return 0;
		if (vn_now_ms() >= end)
			return vn_infra_error(err, -ETIMEDOUT, "guest '%s' still running after %d ms", d->name,
					      timeout_ms);
		usleep(100 * 1000);
	}
}

/* At most this many failed guests' logs are kept under STATE_DIR/failed; the oldest go first. */
#define VN_FAILED_KEEP 10

struct kept {
	char *path;
	struct timespec mtime;
};

static int kept_cmp(const void *a, const void *b)
{
	const struct kept *x = a, *y = b;

	if (x->mtime.tv_sec != y->mtime.tv_sec)
		return x->mtime.tv_sec < y->mtime.tv_sec ? 1 : -1;
	return x->mtime.tv_nsec < y->mtime.tv_nsec ? 1 : x->mtime.tv_nsec > y->mtime.tv_nsec ? -1 : 0;
}

static void failed_prune(const char *failed)
{
	DIR *dir = opendir(failed);
	struct kept *k = NULL;
	size_t n = 0, cap = 0;

	if (!dir)
		return;
	for (struct dirent *e; (e = readdir(dir));) {
		struct stat sb;
		if (e->d_name[0] == '.')
			continue;
		char *path = vn_xasprintf("%s/%s", failed, e->d_name);
		if (lstat(path, &sb) < 0 || !S_ISDIR(sb.st_mode)) {
			free(path);
			continue;
		}
		if (n == cap)
			k = vn_xreallocarray(k, cap = cap * 2 + 16, sizeof(*k));
		k[n++] = (struct kept){path, sb.st_mtim};
	}
	closedir(dir);
	qsort(k, n, sizeof(*k), kept_cmp);
	for (size_t i = 0; i < n; i++) {
		struct vn_error ignored = {0};
		if (i >= VN_FAILED_KEEP)
			vn_virt_guest_dir_remove(k[i].path, &ignored);
		free(k[i].path);
	}
	free(k);
}

/* libvirt's own log of this domain (the QEMU command line and QEMU's stderr), its last start only. */
static void copy_domain_log(struct vn_virt *v, const char *name, const char *dir)
{
	if (strncmp(v->uri, "qemu:///embed", 13) != 0)
		return; /* a daemon's log is not ours to read */
	_cleanup_free_ char *src = vn_state_embed_qemu_log(v->state_dir, name);
	_cleanup_free_ char *dst = vn_guest_dir_file(dir, VN_GUEST_QEMU_LOG);
	_cleanup_close_ int in = open(src, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
	struct stat sb;
	if (in < 0 || fstat(in, &sb) < 0 || !S_ISREG(sb.st_mode))
		return;
	/* The log grows across boots of one name: the last 1 MiB holds the last start. */
	off_t from = sb.st_size > (1 << 20) ? sb.st_size - (1 << 20) : 0;
	size_t len = (size_t)(sb.st_size - from);
	_cleanup_free_ char *buf = vn_xmalloc(len + 1);
	ssize_t got = pread(in, buf, len, from);
	if (got <= 0)
		return;
	buf[got] = '\0';
	const char *start = buf;
	for (const char *p = buf; (p = strstr(p, ": starting up libvirt version")); p++) {
		const char *bol = p;
		while (bol > buf && bol[-1] != '\n')
			bol--;
		start = bol;
	}
	_cleanup_close_ int out = open(dst, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0600);
	if (out >= 0 && write(out, start, (size_t)(buf + got - start)) < 0)
		unlink(dst);
}

/* A failure archive keeps what explains the failure, not the guest's disks (up to 1 TiB each, once written). */
static void drop_disk_images(const char *dir)
{
	DIR *d = opendir(dir);

	if (!d)
		return;
	for (struct dirent *e; (e = readdir(d));) {
		size_t l = strlen(e->d_name);
		if (strncmp(e->d_name, "disk-node", 9) == 0 && l > 4 && strcmp(e->d_name + l - 4, ".img") == 0)
			unlinkat(dirfd(d), e->d_name, 0);
	}
	closedir(d);
}

int vn_virt_guest_dir_keep(struct vn_virt *v, const char *name, char **kept, struct vn_error *err)
{
	_cleanup_free_ char *src = vn_state_guest_dir(v->state_dir, name);
	_cleanup_free_ char *failed = vn_state_failed_dir(v->state_dir);
	char stamp[32];
	struct tm tm;
	time_t now = time(NULL);

	*kept = NULL;
	if (mkdir(failed, 0700) < 0 && errno != EEXIST)
		return vn_infra_error(err, -errno, "cannot create %s: %s", failed, strerror(errno));
	copy_domain_log(v, name, src);
	_cleanup_free_ char *sock = vn_state_guest_file(v->state_dir, name, VN_GUEST_AGENT_SOCK);
	for (unsigned i = 0; i < VN_AGENT_NPORTS; i++) {
		_cleanup_free_ char *chan = vn_state_agent_channel(sock, i),
				    *lock = vn_state_agent_channel_lock(sock, i);
		unlink(chan);
		unlink(lock);
	}
	/* The console keeper's FIFO, too: a reader of the archive (cat, tar) would block on it. */
	_cleanup_free_ char *fifo = vn_state_guest_file(v->state_dir, name, VN_GUEST_CONSOLE_PIPE);
	unlink(fifo);
	drop_disk_images(src);
	gmtime_r(&now, &tm);
	strftime(stamp, sizeof(stamp), "%Y%m%dT%H%M%SZ", &tm);
	for (int i = 1; i < 100; i++) {
		_cleanup_free_ char *dst = vn_state_failed_entry(v->state_dir, name, stamp, i);
		if (renameat2(AT_FDCWD, src, AT_FDCWD, dst, RENAME_NOREPLACE) == 0) {
			utimensat(AT_FDCWD, dst, NULL, 0); /* prune by when it failed */
			failed_prune(failed);
			*kept = steal_pointer(&dst);
			return 0;
		}
		if (errno != EEXIST)
			return vn_infra_error(err, -errno, "cannot keep %s as %s: %s", src, dst, strerror(errno));
	}
	return vn_infra_error(err, -EEXIST, "cannot keep %s: too many failures of '%s' this second", src, name);
}

/*
 * On another host, a guest's disks are volumes named GUEST@... (testbed's
 * remote.c): found from the domain's own XML, so a guest looked up by a
 * later process loses them too, and only those of this guest's name.
 */
static void drop_guest_volumes(struct vn_virt_domain *d)
{
	_cleanup_free_ char *xml = virDomainGetXMLDesc(d->dom, VIR_DOMAIN_XML_INACTIVE);
	_cleanup_free_ char *prefix = vn_xasprintf("%s@", d->name);
	char *paths[VN_DOMAIN_DISKS_MAX];
	struct vn_error e = {0};
	int n = xml ? vn_domain_disk_files(xml, paths, VN_DOMAIN_DISKS_MAX, &e) : 0;

	for (int i = 0; i < n; i++) {
		const char *base = strrchr(paths[i], '/');
		virStorageVolPtr vol = NULL;
		if (base && strncmp(base + 1, prefix, strlen(prefix)) == 0 &&
		    (vol = virStorageVolLookupByPath(d->v->conn, paths[i]))) {
			virStorageVolDelete(vol, 0);
			virStorageVolFree(vol);
		}
		free(paths[i]);
	}
	vn_error_clear(&e);
}

/*
 * Whether d's QEMU is there to kill: running, and also "crashed", where a
 * panic reported through pvpanic left it paused (<on_crash>preserve).
 */
static int has_process(struct vn_virt_domain *d, bool *alive, struct vn_error *err)
{
	int state = 0, reason = 0, rc;

	if ((rc = vn_virt_domain_is_running(d, alive, err)) < 0)
		return rc;
	if (!*alive && virDomainGetState(d->dom, &state, &reason, 0) == 0)
		*alive = state == VIR_DOMAIN_CRASHED || state == VIR_DOMAIN_PMSUSPENDED;
	return 0;
}

/* Stop and undefine; then keep the guest dir as a failure (kept non-NULL) or remove it. */
static int destroy(struct vn_virt_domain *d, char **kept, struct vn_error *err)
{
	bool running = false;
	int rc;

	if ((rc = has_process(d, &running, err)) < 0)
		return rc;
	if (running && virDomainDestroy(d->dom) < 0) {
		/* It may have powered off between our look and the kill. */
		if ((rc = has_process(d, &running, err)) < 0)
			return rc;
		if (running)
			return vn_virt_error(err, "cannot stop guest '%s'", d->name);
	}
	/* Copy libvirt's log before undefine, while the name still means this domain. */
	if (kept && (rc = vn_virt_guest_dir_keep(d->v, d->name, kept, err)) < 0)
		return rc;
	if (d->v->remote)
		drop_guest_volumes(d);
	if (virDomainIsPersistent(d->dom) == 1 && virDomainUndefine(d->dom) < 0)
		return vn_virt_error(err, "cannot undefine guest '%s'", d->name);
	return kept ? 0 : vn_virt_guest_dir_remove(d->guest_dir, err);
}

int vn_virt_domain_destroy_keep(struct vn_virt_domain *d, char **kept, struct vn_error *err)
{
	*kept = NULL;
	return destroy(d, kept, err);
}

int vn_virt_domain_destroy(struct vn_virt_domain *d, struct vn_error *err)
{
	return destroy(d, NULL, err);
}

static int info_cmp(const void *a, const void *b)
{
	return strcmp(((const struct vn_virt_domain_info *)a)->name, ((const struct vn_virt_domain_info *)b)->name);
}

void vn_virt_domain_info_free(struct vn_virt_domain_info *list, size_t n)
{
	for (size_t i = 0; list && i < n; i++) {
		free(list[i].name);
		vn_domain_meta_clear(&list[i].meta);
	}
	free(list);
}

int vn_virt_domain_list(struct vn_virt *v, struct vn_virt_domain_info **list, size_t *n, struct vn_error *err)
{
	virDomainPtr *doms = NULL;
	int count = virConnectListAllDomains(v->conn, &doms, 0);

	if (count < 0)
		return vn_virt_error(err, "cannot list domains");
	struct vn_virt_domain_info *out = vn_xcalloc((size_t)count + 1, sizeof(*out));
	size_t k = 0;
	for (int i = 0; i < count; i++) {
		_cleanup_free_ char *xml = virDomainGetMetadata(doms[i], VIR_DOMAIN_METADATA_ELEMENT, VN_XMLNS, 0);
		struct vn_error ignored = {0};

		/* Not ours (or not readable as ours): other tools' guests stay invisible. */
		if (xml && vn_domain_meta_parse(xml, &out[k].meta, &ignored) == 0) {
			out[k].name = vn_xstrdup(virDomainGetName(doms[i]));
			out[k].running = virDomainIsActive(doms[i]) == 1;
			/* A panicked guest kept for its dump (on_crash preserve) is active, not running. */
			if (!out[k].running || vn_virt_dom_state(doms[i], &out[k].state) < 0)
				out[k].state = out[k].running ? "unknown" : "stopped";
			k++;
		}
		virDomainFree(doms[i]);
	}
	free(doms);
	qsort(out, k, sizeof(*out), info_cmp);
	*list = out;
	*n = k;
	return 0;
}
