/* Internals shared by the files of virt (and their tests). */
#pragma once

#include <libvirt/libvirt.h>
#include <libvirt/virterror.h>

#include "util/cleanup.h"
#include "virt/virt.h"

struct vn_virt {
	virConnectPtr conn;
	char *uri;
	char *state_dir;
	bool remote;     /* another host: our files are not there (vn_virt_is_remote) */
	bool pool_ready; /* vn_virt_pool_ensure succeeded on this connection: its daemon knows every volume since */
};

struct vn_virt_domain {
	struct vn_virt *v; /* borrowed */
	virDomainPtr dom;
	char *name;
	char *guest_dir;
	char *console_log;
	enum vn_accel accel;
	char accel_reason[VN_ACCEL_REASON_MAX];
};

/* The libvirt streams of storage.c's uploads and console.c's console. */
VN_DEFINE_CLEANUP(virStreamPtr, virStreamFree);
#define _cleanup_stream_ _cleanup_(virStreamFreep)

/* Fill err from libvirt's last error: "what: libvirt's message"; INFRA kind. */
int vn_virt_error(struct vn_error *err, const char *what, ...) __attribute__((format(printf, 2, 3)));

/* The root=DIR of a qemu:///embed?root=DIR URI, unescaped; NULL for other URIs. */
char *vn_virt_embed_root(const char *uri);
/* That root set up as vnuma's own state dir's (its etc/qemu.conf), unless the user wrote its qemu.conf. */
int vn_virt_embed_root_prepare(const char *uri, struct vn_error *err);

/* The console of dom into the local file path (stream.c): for a domain started paused, before it runs. */
int vn_virt_console_log(virDomainPtr dom, const char *path, struct vn_error *err);

/* Remove a guest dir and what is in it (no recursion beyond one level is ever needed). */
int vn_virt_guest_dir_remove(const char *dir, struct vn_error *err);

/* The accelerator decision (accel.c) and the world it acts on, faked in tests. */
struct vn_accel_ops {
	void *data;
	long (*now_ms)(void *data);
	void (*sleep_ms)(void *data, long ms);
	bool (*kvm_offered)(void *data, char *why, size_t len);
	int (*cache_get)(void *data, enum vn_accel *verdict, char *reason, size_t len); /* 0 or -ENOENT */
	void (*cache_put)(void *data, enum vn_accel verdict, const char *reason);
	int (*start)(void *data, enum vn_accel accel, struct vn_error *err); /* define + start one attempt */
	bool (*running)(void *data);
	bool (*progressed)(void *data);               /* the console shows a kernel */
	void (*abandon)(void *data);                  /* destroy + undefine a failed attempt */
	void (*notify)(void *data, const char *line); /* may be NULL: a fallback worth telling the user */
};
struct vn_accel_limits {
	long kvm_proof_ms, tcg_proof_ms;
};
struct vn_accel_verdict {
	enum vn_accel accel;
	char reason[VN_ACCEL_REASON_MAX]; /* one short line, for the terminal and result.json */
	char detail[VN_ACCEL_DETAIL_MAX]; /* all of it, on one line, as cached */
};
/*
 * Start the guest on the accelerator it can really use; on success it runs
 * (started through ops) and out says which and why. force is $VNUMA_ACCEL.
 */
int vn_accel_boot(const struct vn_accel_ops *ops, const char *force, const struct vn_accel_limits *lim,
		  struct vn_accel_verdict *out, struct vn_error *err);

/*
 * A volume of our pool deleted: only the tests need it, for
 * vn_virt_volume_create replaces a volume left over. Deleting a volume that
 * is not there is not an error.
 */
int vn_virt_volume_delete(struct vn_virt *v, const char *name, struct vn_error *err);
