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

/* A domain handle of ours around dom (owned from then on), its dir and log where the state dir puts them. */
struct vn_virt_domain *vn_virt_domain_new(struct vn_virt *v, virDomainPtr dom, const char *name);

/* The libvirt streams of storage.c's uploads and console.c's console. */
VN_DEFINE_CLEANUP(virStreamPtr, virStreamFree);
#define _cleanup_stream_ _cleanup_(virStreamFreep)

/* Fill err from libvirt's last error: "what: libvirt's message"; INFRA kind. */
/* libvirt's state of dom by name ("running", "paused", "crashed": QEMU's guest-panicked too); -1: cannot tell. */
int vn_virt_dom_state(virDomainPtr dom, const char **out);
int vn_virt_error(struct vn_error *err, const char *what, ...) __attribute__((format(printf, 2, 3)));

/* The root=DIR of a qemu:///embed?root=DIR URI, unescaped; NULL for other URIs. */
char *vn_virt_embed_root(const char *uri);
/* That root set up as vnuma's own state dir's (its etc/qemu.conf), unless the user wrote its qemu.conf. */
int vn_virt_embed_root_prepare(const char *uri, struct vn_error *err);

/* The console of dom into the local file path (stream.c): for a domain started paused, before it runs. */
int vn_virt_console_log(virDomainPtr dom, const char *path, struct vn_error *err);

/*
 * The console log's cap (console-keep.c): VN_CONSOLE_LOG_MAX, or
 * $VNUMA_CONSOLE_LOG_MAX (a size from 4K to 1G, for tests; exit 2 otherwise).
 */
int vn_console_log_max(uint64_t *max, struct vn_error *err);

/* What every console log is written through: at most max bytes, the last line saying so, then the last words. */
#define VN_CONSOLE_SINK_CARRY 31
struct vn_console_sink {
	int fd;
	uint64_t max, budget, logged; /* budget: max less the full line */
	bool full;
	unsigned late; /* death-marker lines written past the cap */
	size_t carry_len, full_len;
	char carry[VN_CONSOLE_SINK_CARRY];
	char full_line[192];
};
void vn_console_sink_init(struct vn_console_sink *s, int fd, uint64_t max);
/* 0, or -1 when the log cannot be written. Async-signal-safe (the keeper runs it in a forked child). */
int vn_console_sink_write(struct vn_console_sink *s, const char *buf, size_t n);

/*
 * A local guest's console keeper: FIFO made (a new one), log truncated (kept
 * and appended to with keep: a restored guest's), the keeper forked to drain one into the other through a sink. *ctl is to be
 * closed once the domain started or failed to: until then the keeper holds
 * the FIFO open itself, after that it ends when QEMU closes it.
 */
int vn_console_keeper_start(const char *fifo, const char *log, uint64_t max, bool keep, int *ctl, struct vn_error *err);

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

/* A remote guest's connection joined to its watch (vn_virt_watch_connection): how to ask it, and what to call it. */
struct vn_virt_watch;
void vn_virt_watch_link(struct vn_virt_watch *w, struct vn_virt *v, bool (*alive)(struct vn_virt *), const char *uri);

/*
 * save.c, exposed for tests: the XML of a save (libvirt's, as written) made
 * guest o->name's, with uuid and o->meta; NULL when it has no name, uuid or
 * <metadata>. Malloc'd.
 */
char *vn_virt_save_xml_renamed(const char *state_dir, const char *xml, const struct vn_domain_opts *o,
			       const char *uuid);
