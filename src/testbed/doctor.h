/* vnuma doctor (doctor.c). */
#pragma once

#include <stdbool.h>
#include <stddef.h>

#include "testbed/testbed.h"
#include "virt/virt.h"

/* Can this host run vnuma, and what to fix. */
enum vn_check_verdict { VN_CHECK_OK, VN_CHECK_WARN, VN_CHECK_FAIL, VN_CHECK_SKIP };
struct vn_check {
	char name[32];
	enum vn_check_verdict verdict;
	char detail[VN_ERROR_MSG_MAX / 4];
	char fix[256];  /* for warn / fail: what to do */
	double seconds; /* probes: how long the kernel took to print */
};
#define VN_DOCTOR_MAX_CHECKS 28
struct vn_doctor {
	struct vn_check checks[VN_DOCTOR_MAX_CHECKS];
	size_t n;
	bool can_boot;       /* some accelerator got a kernel to print */
	enum vn_accel accel; /* the one guests will use */
};
/*
 * Run every check: state dir, libvirt-qemu user, QEMU, busybox, numactl, the
 * stock kernel, memory, disk, libvirt and QEMU versions, /dev/kvm, and real
 * KVM and TCG probe boots (proven verdicts go into the accelerator cache).
 * Problems are checks, not errors: err is for the doctor itself failing.
 */
int vn_doctor_run(const struct vn_testbed_ctx *ctx, struct vn_doctor *d, struct vn_error *err);
/* The stock kernel's vmlinux with symbols (root "" for /: Debian's -dbg package), and gdb, crash, drgn: warnings. */
void vn_doctor_check_debug(struct vn_doctor *d, const char *root, const char *release);
/* No check failed and some accelerator boots. */
bool vn_doctor_ok(const struct vn_doctor *d);
const char *vn_check_verdict_name(enum vn_check_verdict v);
