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

#include "util/cleanup.h"
#include "virt/virt-priv.h"

/* A KVM guest that dies this soon after starting never really worked. */
#define KVM_PROOF_MS 2000

static long now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000L + ts.tv_nsec / 1000000L;
}

static struct vn_virt_domain *domain_new(struct vn_virt *v, virDomainPtr dom, const char *name)
{
	struct vn_virt_domain *d = calloc(1, sizeof(*d));

	if (!d)
		abort();
	d->v = v;
	d->dom = dom;
	d->name = strdup(name);
	if (asprintf(&d->guest_dir, "%s/guests/%s", v->state_dir, name) < 0 ||
	    asprintf(&d->console_log, "%s/console.log", d->guest_dir) < 0)
		abort();
	return d;
}

void vn_virt_domain_free(struct vn_virt_domain *d)
{
	if (!d)
		return;
	if (d->dom)
		virDomainFree(d->dom);
	free(d->name);
	free(d->guest_dir);
	free(d->console_log);
	free(d);
}

const char *vn_virt_domain_name(const struct vn_virt_domain *d)
{
	return d->name;
}

enum vn_accel vn_virt_domain_accel(const struct vn_virt_domain *d)
{
	return d->accel;
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

static void attach_log_tail(struct vn_error *err, const char *log)
{
	_cleanup_free_ char *tail = NULL;
	struct vn_error ignored = {0};

	if (vn_console_log_tail(log, 30, &tail, &ignored) == 0 && tail && *tail)
		vn_error_set_detail(err, tail);
}

static bool still_running(virDomainPtr dom)
{
	int state = 0, reason = 0;

	return virDomainGetState(dom, &state, &reason, 0) == 0 && state == VIR_DOMAIN_RUNNING;
}

/* Define and start one attempt; on failure nothing stays defined. */
static int define_and_start(struct vn_virt *v, const struct vn_topology *t, const struct vn_domain_opts *o,
			    const char *dir, bool prove_kvm, virDomainPtr *out, struct vn_error *err)
{
	_cleanup_free_ char *xml = NULL;
	char path[4096];
	int rc;

	if ((rc = vn_domain_xml_build(t, o, &xml, err)) < 0)
		return rc;
	snprintf(path, sizeof(path), "%s/domain.xml", dir);
	if ((rc = write_text(path, xml, err)) < 0)
		return rc;
	/* VALIDATE: a schema error names the element, where a QEMU failure later would not. */
	virDomainPtr dom = virDomainDefineXMLFlags(v->conn, xml, VIR_DOMAIN_DEFINE_VALIDATE);
	if (!dom)
		return vn_virt_error(err, "cannot define domain '%s'", o->name);
	if (virDomainCreate(dom) < 0) {
		rc = vn_virt_error(err, "cannot start domain '%s' (%s)", o->name, vn_accel_name(o->accel));
		goto cleanup;
	}
	if (prove_kvm) {
		for (long end = now_ms() + KVM_PROOF_MS; now_ms() < end;) {
			if (!still_running(dom))
				break;
			usleep(100 * 1000);
		}
		if (!still_running(dom)) {
			rc = vn_infra_error(err, -EIO, "domain '%s' died within %d ms under KVM", o->name,
					    KVM_PROOF_MS);
			goto cleanup;
		}
	}
	*out = dom;
	return 0;
cleanup:
	if (still_running(dom))
		virDomainDestroy(dom);
	virDomainUndefine(dom);
	virDomainFree(dom);
	return rc;
}

int vn_virt_domain_create(struct vn_virt *v, const struct vn_topology *t, const struct vn_domain_opts *o,
			  struct vn_virt_domain **out, struct vn_error *err)
{
	_cleanup_free_ char *dir = NULL;
	_cleanup_free_ char *log = NULL;
	_cleanup_free_ char *sock = NULL;
	struct vn_domain_opts opts = *o;
	virDomainPtr dom = NULL;
	bool proven = true;
	int rc;

	virDomainPtr old = o->name ? virDomainLookupByName(v->conn, o->name) : NULL;
	if (old) {
		virDomainFree(old);
		return vn_input_error(err, "a guest named '%s' already exists (`vnuma down %s` first)", o->name,
				      o->name);
	}
	/* sockaddr_un.sun_path is 108 bytes; QEMU's own error for a longer path says nothing useful. */
	size_t sun_max = sizeof(((struct sockaddr_un *)0)->sun_path) - 1;
	size_t sock_len = o->agent_socket ? strlen(o->agent_socket)
					  : strlen(v->state_dir) + strlen("/guests/") + strlen(o->name ? o->name : "") +
						    strlen("/agent.sock");
	if (sock_len > sun_max)
		return vn_input_error(err, "the agent socket path for '%s' would be %zu bytes, more than a unix socket "
				      "allows (%zu); use a shorter state dir or guest name",
				      o->name, sock_len, sun_max);
	if ((rc = vn_virt_guest_dir(v, o->name, &dir, err)) < 0)
		return rc;
	if (!opts.console_log) {
		if (asprintf(&log, "%s/console.log", dir) < 0)
			return -ENOMEM;
		opts.console_log = log;
	}
	if (!opts.agent_socket) {
		if (asprintf(&sock, "%s/agent.sock", dir) < 0)
			return -ENOMEM;
		opts.agent_socket = sock;
	}
	opts.meta.guest_dir = dir;
	if (opts.accel == VN_ACCEL_AUTO && (rc = vn_virt_accel_probe(v, &opts.accel, &proven, err)) < 0)
		return rc;

	struct vn_error first = {0};
	rc = define_and_start(v, t, &opts, dir, !proven, &dom, &first);
	if (rc < 0 && !proven && first.kind == VN_ERR_INFRA) {
		/*
		 * /dev/kvm is there but does not work (nested virt: `failed to set
		 * MSR`). Cache the verdict only once TCG has booted, so a broken
		 * libvirt does not get blamed on KVM.
		 */
		opts.accel = VN_ACCEL_TCG;
		rc = define_and_start(v, t, &opts, dir, false, &dom, err);
		if (rc == 0)
			vn_virt_accel_remember(v, VN_ACCEL_TCG);
	} else if (rc < 0) {
		vn_error_set(err, first.kind, first.code, "%s", first.msg);
	} else if (!proven) {
		vn_virt_accel_remember(v, VN_ACCEL_KVM);
	}
	vn_error_clear(&first);
	if (rc < 0) {
		attach_log_tail(err, opts.console_log);
		return rc;
	}
	struct vn_virt_domain *d = domain_new(v, dom, o->name);
	d->accel = opts.accel;
	free(d->console_log);
	d->console_log = strdup(opts.console_log);
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

int vn_virt_domain_lookup(struct vn_virt *v, const char *name, struct vn_virt_domain **out,
			  struct vn_error *err)
{
	virDomainPtr dom = virDomainLookupByName(v->conn, name);

	if (!dom) {
		virErrorPtr e = virGetLastError();
		if (e && e->code == VIR_ERR_NO_DOMAIN)
			return vn_input_error(err, "no guest named '%s' (see `vnuma list`)", name);
		return vn_virt_error(err, "cannot look up '%s'", name);
	}
	struct vn_virt_domain *d = domain_new(v, dom, name);
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
	long end = now_ms() + timeout_ms;
	bool running = true;
	int rc;

	for (;;) {
		if ((rc = vn_virt_domain_is_running(d, &running, err)) < 0)
			return rc;
		if (!running)
			return 0;
		if (now_ms() >= end)
			return vn_infra_error(err, -ETIMEDOUT, "guest '%s' still running after %d ms", d->name,
					      timeout_ms);
		usleep(100 * 1000);
	}
}

int vn_virt_domain_destroy(struct vn_virt_domain *d, struct vn_error *err)
{
	bool running = false;
	int rc;

	if ((rc = vn_virt_domain_is_running(d, &running, err)) < 0)
		return rc;
	if (running && virDomainDestroy(d->dom) < 0) {
		/* It may have powered off between our look and the kill. */
		if ((rc = vn_virt_domain_is_running(d, &running, err)) < 0)
			return rc;
		if (running)
			return vn_virt_error(err, "cannot stop guest '%s'", d->name);
	}
	if (virDomainIsPersistent(d->dom) == 1 && virDomainUndefine(d->dom) < 0)
		return vn_virt_error(err, "cannot undefine guest '%s'", d->name);
	return vn_virt_guest_dir_remove(d->guest_dir, err);
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
	struct vn_virt_domain_info *out = calloc((size_t)count + 1, sizeof(*out));
	size_t k = 0;
	for (int i = 0; i < count; i++) {
		_cleanup_free_ char *xml = virDomainGetMetadata(doms[i], VIR_DOMAIN_METADATA_ELEMENT, VN_XMLNS, 0);
		struct vn_error ignored = {0};

		/* Not ours (or not readable as ours): other tools' guests stay invisible. */
		if (xml && vn_domain_meta_parse(xml, &out[k].meta, &ignored) == 0) {
			out[k].name = strdup(virDomainGetName(doms[i]));
			out[k].running = virDomainIsActive(doms[i]) == 1;
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
