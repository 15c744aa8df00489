/* Internals shared by connect.c, domain.c and console.c (and their tests). */
#pragma once

#include <libvirt/libvirt.h>
#include <libvirt/virterror.h>

#include "virt/virt.h"

struct vn_virt {
	virConnectPtr conn;
	char *uri;
	char *state_dir;
};

struct vn_virt_domain {
	struct vn_virt *v; /* borrowed */
	virDomainPtr dom;
	char *name;
	char *guest_dir;
	char *console_log;
	enum vn_accel accel;
};

/* Fill err from libvirt's last error: "what: libvirt's message"; INFRA kind. */
int vn_virt_error(struct vn_error *err, const char *what, ...) __attribute__((format(printf, 2, 3)));

/* Remove a guest dir and what is in it (no recursion beyond one level is ever needed). */
int vn_virt_guest_dir_remove(const char *dir, struct vn_error *err);

/* Record a proven accelerator verdict for this host kernel + QEMU version. */
void vn_virt_accel_remember(struct vn_virt *v, enum vn_accel verdict);
