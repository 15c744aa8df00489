/* The syntax of --share HOSTDIR[:GUESTDIR][:ro|rw] and --file HOSTPATH[:GUESTPATH] (testbed/share.h), no file system. */
#pragma once

#include <stdbool.h>
#include <stddef.h>

#include "util/error.h"

/* At most this many shares (the guest's mounts and QEMU's fds stay bounded) and files (a handful; trees go through a share). */
#define VN_SHARES_MAX 8
#define VN_FILES_MAX  32

/* A guest path: absolute, not /, no "..", no control character or comma (mount's option separator). */
int vn_guest_path_check(const char *spec, const char *g, struct vn_error *err);
/* A share spec: its host part's length, the guest path (malloc'd) or NULL, and rw. */
int vn_share_split(const char *spec, size_t *hlen, char **guest, bool *rw, struct vn_error *err);
/* A file spec. */
int vn_file_spec_check(const char *spec, struct vn_error *err);
