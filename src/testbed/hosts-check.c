/* `vnuma hosts check`: each host of a hosts file, checked in a child process of its own. */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "testbed/hosts-check.h"
#include "testbed/remote.h"
#include "testbed/testbed.h"
#include "testbed/up.h"
#include "testbed/testbed-priv.h"
#include "util/alloc.h"
#include "util/json.h"
#include "util/cleanup.h"
#include "util/clock.h"
#include "util/interrupt.h"
#include "util/isolate.h"
#include "virt/storage.h"

static const char *const pool_names[] = {
	[VN_HOST_POOL_UNKNOWN] = "unknown",   [VN_HOST_POOL_REUSED] = "reused", [VN_HOST_POOL_CREATED] = "created",
	[VN_HOST_POOL_LOCAL] = "local files", [VN_HOST_POOL_FAILED] = "failed",
};

const char *vn_testbed_host_pool_name(enum vn_host_pool p)
{
	return (unsigned)p < VN_ARRAY_SIZE(pool_names) ? pool_names[p] : "?";
}

const char *vn_version_format(unsigned long v, char *buf, size_t len)
{
	if (!v)
		snprintf(buf, len, "?");
	else
		snprintf(buf, len, "%lu.%lu.%lu", v / 1000000, v / 1000 % 1000, v % 1000);
	return buf;
}

static unsigned long version_parse(const char *s)
{
	unsigned long a, b, c;

	return s && sscanf(s, "%lu.%lu.%lu", &a, &b, &c) == 3 ? a * 1000000 + b * 1000 + c : 0;
}

static json_object *str_or_null(const char *s)
{
	return s ? json_object_new_string(s) : NULL;
}

json_object *vn_testbed_host_check_json(const struct vn_host_check *h)
{
	json_object *o = json_object_new_object(), *p = json_object_new_object();
	char buf[32];

	json_object_object_add(o, "uri", json_object_new_string(h->uri));
	json_object_object_add(o, "where", str_or_null(h->where));
	json_object_object_add(o, "reachable", json_object_new_boolean(h->reachable));
	json_object_object_add(o, "error", str_or_null(h->error));
	json_object_object_add(o, "hostname", str_or_null(h->hostname));
	json_object_object_add(o, "libvirt",
			       h->libvirt_version
				       ? json_object_new_string(vn_version_format(h->libvirt_version, buf, sizeof(buf)))
				       : NULL);
	json_object_object_add(o, "qemu",
			       h->hypervisor_version ? json_object_new_string(vn_version_format(h->hypervisor_version,
												buf, sizeof(buf)))
						     : NULL);
	json_object_object_add(o, "cpus", json_object_new_int64(h->cpus));
	json_object_object_add(o, "memory_bytes", json_object_new_int64((int64_t)h->memory));
	json_object_object_add(o, "capacity", json_object_new_int64(h->capacity));
	json_object_object_add(o, "capacity_auto", json_object_new_boolean(h->capacity_auto));
	json_object_object_add(o, "kvm_offered", json_object_new_boolean(h->kvm_offered));
	json_object_object_add(o, "accel", str_or_null(h->accel[0] ? h->accel : NULL));
	json_object_object_add(o, "accel_reason", str_or_null(h->accel_reason[0] ? h->accel_reason : NULL));
	json_object_object_add(p, "state", json_object_new_string(vn_testbed_host_pool_name(h->pool)));
	json_object_object_add(p, "path", str_or_null(h->pool_path));
	json_object_object_add(p, "capacity_bytes", json_object_new_int64((int64_t)h->pool_capacity));
	json_object_object_add(p, "available_bytes", json_object_new_int64((int64_t)h->pool_available));
	json_object_object_add(o, "pool", p);
	char secs[32];
	snprintf(secs, sizeof(secs), "%.3f", h->seconds);
	json_object_object_add(o, "seconds", json_object_new_double_s(h->seconds, secs));
	return o;
}

/* From our own child: trusted in content, still type-checked so a bug cannot crash the parent. */
static void from_json(const char *text, struct vn_host_check *h)
{
	json_object *o = json_tokener_parse(text), *p;

	if (!o)
		return;
	h->reachable = vn_json_bool(o, "reachable");
	h->error = vn_xstrdup_or_null(vn_json_str(o, "error"));
	h->hostname = vn_xstrdup_or_null(vn_json_str(o, "hostname"));
	h->libvirt_version = version_parse(vn_json_str(o, "libvirt"));
	h->hypervisor_version = version_parse(vn_json_str(o, "qemu"));
	h->cpus = (unsigned)vn_json_int64(o, "cpus");
	h->memory = (uint64_t)vn_json_int64(o, "memory_bytes");
	h->capacity = (unsigned)vn_json_int64(o, "capacity");
	h->capacity_auto = vn_json_bool(o, "capacity_auto");
	h->kvm_offered = vn_json_bool(o, "kvm_offered");
	const char *accel = vn_json_str(o, "accel"), *reason = vn_json_str(o, "accel_reason");
	snprintf(h->accel, sizeof(h->accel), "%s", accel ? accel : "");
	snprintf(h->accel_reason, sizeof(h->accel_reason), "%s", reason ? reason : "");
	if (json_object_object_get_ex(o, "pool", &p)) {
		const char *state = vn_json_str(p, "state");
		for (size_t i = 0; state && i < VN_ARRAY_SIZE(pool_names); i++)
			if (strcmp(state, pool_names[i]) == 0)
				h->pool = (enum vn_host_pool)i;
		h->pool_path = vn_xstrdup_or_null(vn_json_str(p, "path"));
		h->pool_capacity = (uint64_t)vn_json_int64(p, "capacity_bytes");
		h->pool_available = (uint64_t)vn_json_int64(p, "available_bytes");
	}
	h->seconds = vn_json_double(o, "seconds");
	json_object_put(o);
}

struct check_job {
	const struct vn_testbed_ctx *ctx;
	const struct vn_host *host;
	unsigned vcpus;
	uint64_t memory;
	bool probe;
	struct vn_host_check *row;
};

/* The accelerator, proven by booting there as every guest's is; a host where nothing boots is not usable. */
static void probe(struct check_job *j, struct vn_virt *v)
{
	struct vn_host_check *h = j->row;
	struct vn_testbed_ctx ctx = *j->ctx;
	struct vn_error e = {0};
	enum vn_accel accel;

	if (!j->probe)
		return;
	ctx.uri = h->uri;
	ctx.pool_dir = j->host->pool_dir;
	ctx.connect_timeout_ms = j->host->timeout_ms;
	if (vn_testbed_accel_probe(v, &ctx, &accel, h->accel_reason, sizeof(h->accel_reason), &e) < 0) {
		h->error = vn_xasprintf("the probe boot failed: %s", e.msg);
		vn_error_clear(&e);
		return;
	}
	snprintf(h->accel, sizeof(h->accel), "%s", vn_accel_name(accel));
}

/* The child: fills the row, whatever fails, and hands it back as JSON. */
static void check_host(struct check_job *j, struct vn_virt *v)
{
	struct vn_host_check *h = j->row;
	struct vn_virt_host_info info;
	struct vn_error e = {0};
	int rc;

	if (vn_virt_host_info(v, &info, &e) < 0) {
		h->error = vn_xstrdup(e.msg);
		vn_error_clear(&e);
		return;
	}
	h->hostname = steal_pointer(&info.hostname);
	h->libvirt_version = info.libvirt_version;
	h->hypervisor_version = info.hypervisor_version;
	h->cpus = info.cpus;
	h->memory = info.memory;
	h->kvm_offered = info.kvm_offered;
	h->capacity_auto = j->host->capacity == 0;
	h->capacity = h->capacity_auto ? vn_virt_host_capacity(&info, j->vcpus, j->memory) : j->host->capacity;
	vn_virt_host_info_clear(&info);

	rc = vn_virt_pool_ensure(v, j->host->pool_dir, &e);
	if (rc == -EOPNOTSUPP && e.kind == VN_ERR_NONE) {
		h->pool = VN_HOST_POOL_LOCAL;
		probe(j, v);
		return;
	}
	if (rc < 0) {
		h->pool = VN_HOST_POOL_FAILED;
		h->error = vn_xasprintf("%s: %s", h->where, e.msg);
		vn_error_clear(&e);
		return;
	}
	h->pool = rc == 1 ? VN_HOST_POOL_CREATED : VN_HOST_POOL_REUSED;
	if (vn_virt_host_info(v, &info, &e) < 0) {
		h->pool = VN_HOST_POOL_FAILED;
		h->error = vn_xstrdup(e.msg);
		vn_error_clear(&e);
		return;
	}
	h->pool_path = steal_pointer(&info.pool.path);
	h->pool_capacity = info.pool.capacity;
	h->pool_available = info.pool.available;
	vn_virt_host_info_clear(&info);
	probe(j, v);
}

static int check_child(void *arg, char **out, struct vn_error *err)
{
	struct check_job *j = arg;
	struct vn_host_check *h = j->row;
	struct vn_virt *v = NULL;
	struct vn_error e = {0};
	int64_t t0 = vn_now_ms();

	if (vn_virt_open_within(h->uri, j->ctx->state_dir, j->ctx->lock_timeout_ms, j->host->timeout_ms, &v, &e) < 0) {
		h->error = vn_xasprintf("unreachable: %s", e.msg);
		vn_error_clear(&e);
	} else {
		h->reachable = true;
		check_host(j, v);
		vn_virt_close(v);
	}
	h->seconds = (double)(vn_now_ms() - t0) / 1000.0;
	json_object *o = vn_testbed_host_check_json(h);
	*out = vn_xstrdup(json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN));
	json_object_put(o);
	return 0;
}

int vn_testbed_hosts_check(const struct vn_testbed_ctx *ctx, const struct vn_hosts *hosts, unsigned guest_vcpus,
			   uint64_t guest_memory, bool probe, struct vn_hosts_check *out, struct vn_error *err)
{
	*out = (struct vn_hosts_check){.v = vn_xcalloc(hosts->n ? hosts->n : 1, sizeof(*out->v))};
	for (size_t i = 0; i < hosts->n; i++) {
		const struct vn_host *host = &hosts->v[i];
		struct vn_host_check *h = &out->v[out->n++];
		struct vn_error e = {0};
		_cleanup_free_ char *text = NULL;

		h->uri = vn_xstrdup(host->uri);
		h->where = host->file ? vn_xasprintf("%s:%u", host->file, host->line) : vn_xstrdup("--connect");
		struct check_job j = {
			.ctx = ctx,
			.host = host,
			.vcpus = guest_vcpus ? guest_vcpus : VN_HOSTS_CHECK_VCPUS,
			.memory = guest_memory ? guest_memory : VN_HOSTS_CHECK_MEMORY,
			.probe = probe,
			.row = h,
		};
		struct vn_testbed_ctx hctx = *ctx;
		hctx.connect_timeout_ms = host->timeout_ms;
		/* A probe boot is a boot (and, on another host, an upload first); the rest is a few calls. */
		struct vn_isolate_limits lim = vn_testbed_libvirt_limits(
			&hctx, probe ? VN_TESTBED_BOOT_MS + 10 * VN_TESTBED_LIBVIRT_MS : VN_TESTBED_LIBVIRT_MS);
		/* Interrupted, a probe boot destroys its guest first; the rest stops at once or is killed. */
		lim.stop_ms = probe ? VN_TESTBED_STOP_MS : 0;
		int rc = vn_isolate(check_child, &j, &lim, &text, &e);
		if (vn_was_interrupted()) {
			vn_error_clear(&e);
			return vn_infra_error(err, -EINTR, "interrupted while checking %s", host->uri);
		}
		if (rc < 0 || !text) {
			h->error = vn_xasprintf("the check of this host failed: %s", e.msg[0] ? e.msg : strerror(-rc));
			vn_error_clear(&e);
			continue;
		}
		from_json(text, h);
	}
	return 0;
}

bool vn_testbed_hosts_check_ok(const struct vn_hosts_check *c)
{
	for (size_t i = 0; i < c->n; i++) {
		const struct vn_host_check *h = &c->v[i];
		if (!h->reachable || h->error ||
		    (h->pool != VN_HOST_POOL_REUSED && h->pool != VN_HOST_POOL_CREATED &&
		     h->pool != VN_HOST_POOL_LOCAL))
			return false;
	}
	return c->n > 0;
}

void vn_testbed_hosts_check_clear(struct vn_hosts_check *c)
{
	for (size_t i = 0; i < c->n; i++) {
		struct vn_host_check *h = &c->v[i];
		vn_free_all(h->uri, h->where, h->error, h->hostname, h->pool_path);
	}
	free(c->v);
	*c = (struct vn_hosts_check){0};
}
