/*
 * Looking inside a running guest's kernel through libvirt: QEMU's gdbstub
 * (started and stopped through the monitor passthrough, bound to
 * localhost) and memory-only core dumps (virDomainCoreDumpWithFormat).
 */
#pragma once

#include <stdbool.h>
#include <stdint.h>

#include "util/error.h"

struct vn_virt_domain;

/*
 * QEMU's answer to HMP `gdbserver DEV` (as QEMU 7.2's hmp_gdbserver words
 * it): 0 when it listens (or, for "none", stopped), -EADDRINUSE when it could
 * not open DEV (a port taken since we chose it: try another), else an
 * infrastructure error quoting the reply's first line.
 */
int vn_virt_gdbserver_reply(const char *reply, const char *dev, struct vn_error *err);

/*
 * Start QEMU's gdbstub on 127.0.0.1:port (only this host's users reach
 * it), or with port 0 stop it. -EADDRINUSE as above.
 */
int vn_virt_domain_gdbstub(struct vn_virt_domain *d, unsigned port, struct vn_error *err);

/* A port on 127.0.0.1 free now (the kernel's choice for a bind to port 0). */
int vn_virt_free_port(unsigned *port, struct vn_error *err);

/* The formats a memory-only dump is written in: both are read by crash and drgn. */
enum vn_dump_format {
	VN_DUMP_ELF,        /* ELF core: as big as the guest's memory; drgn reads it without libkdumpfile */
	VN_DUMP_KDUMP_ZLIB, /* makedumpfile's kdump-compressed, zlib per page */
};
const char *vn_dump_format_name(enum vn_dump_format f);
int vn_dump_format_parse(const char *s, enum vn_dump_format *out, struct vn_error *err);

/* The guest's memory as libvirt counts it (boot memory and plugged DIMMs): what an ELF dump holds. */
int vn_virt_domain_memory_bytes(struct vn_virt_domain *d, uint64_t *bytes, struct vn_error *err);

/* "running", "paused", "crashed", "shutoff"...: libvirt's state of the guest, for a dump's description. */
int vn_virt_domain_state_name(struct vn_virt_domain *d, const char **out, struct vn_error *err);

/* Resume a guest left paused (a gdb that stopped it and went away), true in *resumed if it was. */
int vn_virt_domain_resume_paused(struct vn_virt_domain *d, bool *resumed, struct vn_error *err);

/*
 * Write a memory-only dump of d to path (libvirt creates it; the guest
 * pauses while QEMU writes and runs on after). Local connections only.
 */
int vn_virt_domain_dump(struct vn_virt_domain *d, const char *path, enum vn_dump_format f, struct vn_error *err);
