/*
 * Host files in the guest: shared directories (`--share`, a scenario's
 * "share") mounted over virtio-9p, and single files (`--file`, "files")
 * copied in with `vnuma cp`'s checksummed copy (guest/copy.h). Both are in
 * place before up returns, so before any step runs.
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>

#include "guest/agent-client.h"
#include "util/error.h"
#include "util/host-spec.h"
#include "virt/domain-xml.h"

/* Where a share goes in the guest unless named: this, then the host directory's base name. */
#define VN_SHARE_GUEST_ROOT "/mnt/host"

/*
 * HOSTDIR[:GUESTDIR][:ro|rw] into out (its strings malloc'd): HOSTDIR an
 * existing directory (relative to base_dir when relative and base_dir is
 * given), made absolute and free of symlinks; GUESTDIR absolute, default
 * VN_SHARE_GUEST_ROOT/<basename>; read-only unless rw. Input error naming spec.
 */
int vn_share_parse(const char *spec, const char *base_dir, struct vn_domain_share *out, struct vn_error *err);
/* Every spec of specs (NULL-terminated, may be NULL) parsed; the guest dirs distinct; at most VN_DOMAIN_MAX_SHARES. */
int vn_share_parse_all(const char *const *specs, const char *base_dir, struct vn_domain_share **out, unsigned *n,
		       struct vn_error *err);
void vn_share_free_all(struct vn_domain_share *v, unsigned n);

/*
 * HOSTPATH[:GUESTPATH]: HOSTPATH a regular file (relative to base_dir as
 * above); GUESTPATH absolute, default /root/<basename>. Strings malloc'd.
 */
int vn_file_spec_parse(const char *spec, const char *base_dir, char **host, char **guest, struct vn_error *err);
/* Every spec (NULL-terminated, may be NULL) checked: parsed, at most VN_FILES_MAX. */
int vn_file_specs_check(const char *const *specs, const char *base_dir, struct vn_error *err);

/* The guest mounts each share at its guest dir (ro unless rw); infra error with the guest's stderr. */
int vn_share_mount(struct vn_agent *a, const struct vn_domain_share *v, unsigned n, struct vn_error *err);
/* Each file spec copied into the guest, checksummed (vn_copy_in); its directory made first. */
int vn_files_put(struct vn_agent *a, const char *const *specs, const char *base_dir, struct vn_error *err);
