/*
 * A host directory the guest mounts (testbed/share.h): virtio-9p, its tag
 * VN_DOMAIN_SHARE_TAG with the share's index, read-only on the host side
 * unless rw. guest_dir is the mount point, carried for the testbed only.
 */
#pragma once

#include <stdbool.h>

#include "util/host-spec.h"

struct vn_domain_share {
	char *source, *guest_dir;
	bool rw;
};
#define VN_DOMAIN_SHARE_TAG  "vnshare%u"
#define VN_DOMAIN_MAX_SHARES VN_SHARES_MAX
