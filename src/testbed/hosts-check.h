/*
 * `vnuma hosts check`: what each libvirt host of a hosts file offers a matrix
 * (reachable, versions, CPUs and memory, the guests that fit, KVM, the
 * storage pool, which it creates when missing). A host that fails is a row
 * saying why, never an abort of the others.
 */
#pragma once

#include <json-c/json.h>
#include <stdbool.h>
#include <stdint.h>

#include "virt/virt.h"
#include "testbed/testbed.h"
#include "testbed/hosts.h"

/* The guest `hosts check` sizes the auto capacity for when none is given. */
#define VN_HOSTS_CHECK_VCPUS  1
#define VN_HOSTS_CHECK_MEMORY (512ull << 20)

enum vn_host_pool {
	VN_HOST_POOL_UNKNOWN, /* not looked at: the host is unreachable */
	VN_HOST_POOL_REUSED,
	VN_HOST_POOL_CREATED,
	VN_HOST_POOL_LOCAL, /* the embedded driver: no storage driver, local files are used as they are */
	VN_HOST_POOL_FAILED,
};

struct vn_host_check {
	char *uri;
	char *where; /* FILE:LINE of its hosts line, or "--connect" */
	bool reachable;
	char *error; /* why it is unreachable or its pool unusable; NULL when neither */
	char *hostname;
	unsigned long libvirt_version, hypervisor_version; /* major * 1000000 + minor * 1000 + micro; 0: unknown */
	unsigned cpus;
	uint64_t memory;   /* bytes */
	unsigned capacity; /* the hosts line's, or the auto one for the guest checked against */
	bool capacity_auto;
	bool kvm_offered;
	/*
	 * The accelerator guests get there, "kvm" or "tcg", proven by a probe
	 * boot (vn_testbed_accel_probe), and why; "" when not probed (unreachable,
	 * no pool, or no probe asked for).
	 */
	char accel[16];
	char accel_reason[VN_ACCEL_REASON_MAX];
	enum vn_host_pool pool;
	char *pool_path;
	uint64_t pool_capacity, pool_available; /* bytes */
	double seconds;                         /* how long the check of this host took */
};

struct vn_hosts_check {
	struct vn_host_check *v;
	size_t n;
};

/*
 * Check every host, in order, each in a child process of its own (util/isolate.h:
 * an embedded driver's root is then held only during its check, and the
 * caller starts no libvirt threads). guest_vcpus / guest_memory size the auto
 * capacity (0: VN_HOSTS_CHECK_VCPUS / VN_HOSTS_CHECK_MEMORY); probe: prove each
 * usable host's accelerator by a boot there (vn_testbed_accel_probe). Problems are rows,
 * not errors: err is for the check itself failing (interrupted).
 */
int vn_testbed_hosts_check(const struct vn_testbed_ctx *ctx, const struct vn_hosts *hosts, unsigned guest_vcpus,
			   uint64_t guest_memory, bool probe, struct vn_hosts_check *out, struct vn_error *err);
/* Every host reachable and its pool usable (reused, created, or local files). */
bool vn_testbed_hosts_check_ok(const struct vn_hosts_check *c);
void vn_testbed_hosts_check_clear(struct vn_hosts_check *c);
/* One row as JSON (what `hosts check --json` prints per host); a new object. */
json_object *vn_testbed_host_check_json(const struct vn_host_check *h);
const char *vn_testbed_host_pool_name(enum vn_host_pool p);
/* "9.0.0" for 9000000; "?" for 0. buf holds 32 bytes. */
const char *vn_version_format(unsigned long v, char *buf, size_t len);
