/* Which accelerator a guest runs on, and the host's cached verdicts: the rest of vnuma asks here, never libvirt. */
#pragma once

#include <stdbool.h>
#include <stddef.h>

#include "virt/domain-xml.h"

struct vn_virt;

/*
 * Accelerators are proven by the guest, never assumed: KVM counts only once
 * the guest kernel printed on the console within VN_KVM_PROOF_MS of QEMU's
 * start (a working KVM prints its first line in well under a second; TCG on
 * a 2-core host takes ~5.7 s to print its first, so a silent KVM costs less
 * than one TCG head start). Otherwise the attempt is destroyed and the guest
 * boots under TCG. Verdicts are cached in STATE_DIR/accel.cache per host
 * kernel release + QEMU version, with their reason, once the guest proved
 * them; a cached KVM verdict is still watched and re-probed once if it fails.
 * $VNUMA_ACCEL=tcg|kvm forces a choice (a forced KVM still fails fast).
 */

#define VN_KVM_PROOF_MS     5000
#define VN_TCG_PROOF_MS     60000
#define VN_ACCEL_REASON_MAX 512
#define VN_ACCEL_DETAIL_MAX 4096

/*
 * Several lines of QEMU's (warnings, the error, an assertion) as one: the
 * lines joined with " | ", for a cache line or one of doctor's rows.
 */
void vn_accel_oneline(const char *s, char *out, size_t len);
/*
 * The short reason of an accelerator detail (QEMU's error, whole, or a cached
 * verdict): its cause in at most ~100 printable characters, e.g. "QEMU failed
 * to start under KVM (failed to set MSR 0x10a; nested virtualization?)".
 */
void vn_accel_summarize(const char *detail, char *out, size_t len);

/* STATE_DIR/accel.cache's verdict for this host, for `doctor`: 0, or -ENOENT when there is none. */
int vn_virt_accel_cached(struct vn_virt *v, enum vn_accel *verdict, char *reason, size_t len);
/* The same without a connection: the last verdict for this host kernel, any QEMU version; -ENOENT when none. */
int vn_virt_accel_cached_host(const char *state_dir, enum vn_accel *verdict, char *reason, size_t len);
/* Record a verdict the guest proved, with its reason, for this host kernel + QEMU version. */
void vn_virt_accel_remember(struct vn_virt *v, enum vn_accel verdict, const char *reason);
/* Can this host offer KVM at all (local /dev/kvm usable, libvirt knows a kvm domain type)? why says not. */
bool vn_virt_kvm_offered(struct vn_virt *v, char *why, size_t len);
