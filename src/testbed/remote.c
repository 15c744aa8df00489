/*
 * Guests on another host (a libvirtd reached over qemu+ssh://, qemu+tcp://,
 * ...), where none of our files are. What boots goes there as volumes of a
 * storage pool, named by content (virt/storage.c), so each is uploaded once
 * per host; the agent and the console come back over libvirt streams
 * (virt/stream.c). A stream lives as long as its connection, so this process
 * holds the connection of each remote guest it booted or reached until the
 * guest is taken down: `run` boots, talks and destroys through one.
 */
#include <errno.h>
#include <fcntl.h>
#include <sys/file.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "agent/protocol.h"
#include "guest/agent.h"
#include "kernel/kernel.h"
#include "testbed/remote.h"
#include "testbed/testbed-priv.h"
#include "util/alloc.h"
#include "util/cleanup.h"
#include "util/interrupt.h"
#include "util/isolate.h"
#include "util/sha256.h"
#include "util/state.h"
#include "virt/storage.h"

struct held {
	char *name;
	struct vn_virt *v;
	struct vn_virt_domain *d;
	struct held *next;
};

/* This process's remote guests; one thread uses the testbed. */
static struct held *held_guests;

static struct held **held_find(const char *name)
{
	struct held **h = &held_guests;

	while (*h && strcmp((*h)->name, name) != 0)
		h = &(*h)->next;
	return h;
}

void vn_testbed_remote_hold(const char *name, struct vn_virt *v, struct vn_virt_domain *d)
{
	struct held *h = vn_xcalloc(1, sizeof(*h));

	h->name = vn_xstrdup(name);
	h->v = v;
	h->d = d;
	h->next = held_guests;
	held_guests = h;
}

struct vn_virt_domain *vn_testbed_remote_held(const char *name)
{
	struct held *h = *held_find(name);

	return h ? h->d : NULL;
}

struct vn_virt *vn_testbed_remote_conn(const char *name)
{
	struct held *h = *held_find(name);

	return h ? h->v : NULL;
}

int vn_testbed_remote_release(const char *name, bool destroy, struct vn_error *err)
{
	struct held **p = held_find(name), *h = *p;
	int rc = 0;

	if (!h)
		return 0;
	*p = h->next;
	if (destroy)
		rc = vn_virt_domain_destroy(h->d, err);
	vn_virt_domain_free(h->d);
	vn_virt_close(h->v);
	free(h->name);
	free(h);
	return rc;
}

void vn_artifact_list_clear(struct vn_artifact_list *l)
{
	for (unsigned i = 0; i < l->n; i++)
		free(l->v[i].volume);
	free(l->v);
	*l = (struct vn_artifact_list){0};
}

int vn_testbed_remote_stage(struct vn_virt *v, const struct vn_testbed_ctx *ctx, const char *local, char **remote,
			    struct vn_artifact_list *log, struct vn_error *err)
{
	bool uploaded = false;
	uint8_t digest[VN_SHA256_LEN];
	char hex[VN_SHA256_HEX_LEN + 1];
	int rc;

	/*
	 * The runs of a matrix that share a new host would each define its pool:
	 * they take turns here (uploads take turns in storage.c, per volume).
	 */
	struct vn_sha256 c;
	vn_sha256_init(&c);
	vn_sha256_update(&c, vn_virt_uri(v), strlen(vn_virt_uri(v)));
	vn_sha256_final(&c, digest);
	vn_sha256_hex(digest, hex);
	_cleanup_free_ char *lock = vn_state_pool_lock(ctx->state_dir, hex);
	_cleanup_close_ int fd = open(lock, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600);
	if (fd < 0)
		return vn_infra_error(err, -errno, "cannot open %s: %s", lock, strerror(errno));
	while (flock(fd, LOCK_EX) < 0)
		if (errno != EINTR || vn_was_interrupted())
			return vn_infra_error(err, -errno, "cannot lock %s: %s", lock, strerror(errno));
	rc = vn_virt_pool_ensure(v, ctx->pool_dir, err);
	flock(fd, LOCK_UN);
	if (rc >= 0)
		rc = vn_virt_volume_upload(v, local, remote, &uploaded, err);
	if (rc < 0)
		return vn_error_prefix(err, "putting %s on %s", local, vn_virt_uri(v));
	const char *base = strrchr(*remote, '/');
	log->v = vn_xreallocarray(log->v, log->n + 1, sizeof(*log->v));
	log->v[log->n++] = (struct vn_artifact){vn_xstrdup(base ? base + 1 : *remote),
						uploaded ? VN_ARTIFACT_UPLOADED : VN_ARTIFACT_REUSED};
	return 0;
}

int vn_testbed_remote_agent(struct vn_virt_domain *d, const char *name, struct vn_agent **out, struct vn_error *err)
{
	int fd = -1;
	int rc = vn_virt_domain_open_channel(d, VN_AGENT_PORT_NAME, &fd, err);

	if (rc < 0)
		return rc;
	if ((rc = vn_agent_from_fd(fd, out, err)) < 0) {
		close(fd);
		return rc;
	}
	vn_agent_set_guest(*out, name);
	return 0;
}

int vn_testbed_remote_lookup(const struct vn_testbed_ctx *ctx, const char *name, struct vn_virt_domain **out,
			     struct vn_error *err)
{
	struct vn_virt *v = NULL;
	struct vn_virt_domain *d = NULL;
	int rc;

	if ((*out = vn_testbed_remote_held(name)))
		return 0;
	if ((rc = vn_virt_open_within(ctx->uri, ctx->state_dir, ctx->lock_timeout_ms, ctx->connect_timeout_ms, &v,
				      err)) < 0)
		return rc;
	if ((rc = vn_testbed_lookup(v, name, &d, err)) < 0) {
		vn_virt_close(v);
		return rc;
	}
	vn_testbed_remote_hold(name, v, d);
	*out = d;
	return 0;
}

struct probe_call {
	const struct vn_testbed_ctx *ctx;
	unsigned vcpus;
	uint64_t memory;
};

static int probe_child(void *arg, char **out, struct vn_error *err)
{
	struct probe_call *p = arg;
	struct vn_virt *v = NULL;
	struct vn_virt_host_info hi = {0};
	int rc;

	if ((rc = vn_virt_open_within(p->ctx->uri, p->ctx->state_dir, p->ctx->lock_timeout_ms,
				      p->ctx->connect_timeout_ms, &v, err)) < 0)
		return rc;
	if ((rc = vn_virt_host_info(v, &hi, err)) == 0)
		*out = vn_xasprintf("%u", vn_virt_host_capacity(&hi, p->vcpus, p->memory));
	vn_virt_host_info_clear(&hi);
	vn_virt_close(v);
	return rc;
}

int vn_testbed_host_probe(const struct vn_testbed_ctx *ctx, unsigned vcpus, uint64_t memory, unsigned *capacity,
			  struct vn_error *err)
{
	struct probe_call p = {ctx, vcpus, memory};
	_cleanup_free_ char *out = NULL;
	/* In a child: a matrix forks its runs, and a process that opened libvirt has its threads. */
	struct vn_isolate_limits lim = {.timeout_ms = vn_testbed_connect_ms(ctx) + VN_TESTBED_LIBVIRT_MS};
	int rc = vn_isolate(probe_child, &p, &lim, &out, err);

	if (rc == 0)
		*capacity = out ? (unsigned)strtoul(out, NULL, 10) : 1;
	return rc;
}

int vn_testbed_qcow2_size(const char *path, uint64_t *size, struct vn_error *err)
{
	_cleanup_close_ int fd = open(path, O_RDONLY | O_CLOEXEC);
	unsigned char h[32];

	/* QCOW2: magic "QFI\xfb", version, backing file offset and size, cluster bits, then the virtual size (BE). */
	if (fd < 0 || pread(fd, h, sizeof(h), 0) != (ssize_t)sizeof(h) || memcmp(h, "QFI\xfb", 4) != 0)
		return vn_infra_error(err, -EINVAL, "%s is not a qcow2 image", path);
	*size = 0;
	for (int i = 24; i < 32; i++)
		*size = *size << 8 | h[i];
	return 0;
}

int vn_testbed_remote_disks(struct vn_boot_attempt *at, struct vn_error *err)
{
	const struct vn_topology *t = at->t;
	int rc;

	at->disk_prefix = vn_xasprintf("%s@", at->name);
	for (unsigned i = 0; i < t->nnodes; i++)
		for (unsigned k = 0; k < t->nodes[i].ndevices; k++) {
			const struct vn_device *dev = &t->nodes[i].devices[k];
			if (dev->kind != VN_DEVICE_DISK || (dev->root && at->root_image))
				continue;
			_cleanup_free_ char *name = vn_xasprintf("%sdisk-node%u-%u.img", at->disk_prefix, i, k);
			_cleanup_free_ char *path = NULL;
			if ((rc = vn_virt_volume_create(at->v, name, dev->size, "raw", NULL, &path, err)) < 0)
				return rc;
			if (!at->disk_dir) {
				char *slash = strrchr(path, '/');
				at->disk_dir = slash ? vn_xstrndup(path, (size_t)(slash - path)) : vn_xstrdup(".");
			}
		}
	if (at->root_image) {
		_cleanup_free_ char *name = vn_xasprintf("%sroot.qcow2", at->disk_prefix);
		if ((rc = vn_virt_volume_create(at->v, name, at->root_image_size, "qcow2", at->root_image,
						&at->root_disk, err)) < 0)
			return rc;
	}
	return 0;
}

/* The accelerator probe: one node, one vCPU, the stock kernel alone (it only has to print). */
static const char accel_probe_topology[] = "<topology name='vnuma-accel-probe'>"
					   "<cpu sockets='1' cores='1' threads='1'/>"
					   "<node id='0' cpus='0' memory='128M'/>"
					   "<distances><row node='0'>10</row></distances>"
					   "</topology>";

int vn_testbed_accel_probe(struct vn_virt *v, const struct vn_testbed_ctx *ctx, enum vn_accel *accel, char *reason,
			   size_t len, struct vn_error *err)
{
	_cleanup_topology_ struct vn_topology *t = NULL;
	_cleanup_kernel_ struct vn_kernel *k = NULL;
	_cleanup_free_ char *kcache = vn_state_kernels_dir(ctx->state_dir), *image = NULL;
	struct vn_artifact_list staged = {0};
	struct vn_kernel_resolve_opts ko = {.cache_dir = kcache};
	struct vn_virt_domain *d = NULL;
	char name[64];
	int rc;

	if ((rc = vn_topology_parse(accel_probe_topology, sizeof(accel_probe_topology) - 1, "accel probe", &t, err)) <
		    0 ||
	    (rc = vn_kernel_resolve_with("stock", NULL, &ko, &k, err)) < 0)
		return rc;
	rc = vn_virt_is_remote(v) ? vn_testbed_remote_stage(v, ctx, k->image, &image, &staged, err) : 0;
	vn_artifact_list_clear(&staged);
	if (rc < 0)
		return rc;
	snprintf(name, sizeof(name), "vnuma-accel-probe-%d", (int)getpid());
	/* AUTO: the same proof every boot gets (virt.h), its verdict cached for this host. */
	struct vn_domain_opts o = {
		.name = name,
		.accel = VN_ACCEL_AUTO,
		.kernel = image ? image : k->image,
		.meta = {.topology_name = t->name, .kernel_id = "accelerator probe"},
	};
	if ((rc = vn_virt_domain_create(v, t, &o, &d, err)) < 0)
		return rc;
	*accel = vn_virt_domain_accel(d);
	snprintf(reason, len, "%s", vn_virt_domain_accel_reason(d));
	rc = vn_virt_domain_destroy(d, err);
	vn_virt_domain_free(d);
	return rc;
}
