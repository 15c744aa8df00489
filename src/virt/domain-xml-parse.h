/* Reading a domain's XML back (as libvirt returns it): our metadata, its DIMMs, vCPUs and disk files. */
#pragma once

#include <stddef.h>
#include <stdint.h>

#include "topology/topology.h"
#include "util/error.h"
#include "virt/domain-xml.h"

/* Parse our <metadata> element (as virDomainGetMetadata returns it). */
int vn_domain_meta_parse(const char *xml, struct vn_domain_meta *out, struct vn_error *err);

/* A DIMM of a live domain, from its XML. */
struct vn_domain_dimm {
	char alias[64];
	unsigned node;
	uint64_t bytes;
	uint64_t base; /* guest physical address QEMU gave it; 0 if not said */
};
#define VN_DOMAIN_DIMMS_MAX 64
/*
 * The DIMMs in a domain's XML, in document order (the order they were
 * plugged), at most VN_DOMAIN_DIMMS_MAX. Returns the count, or a negative errno.
 */
int vn_domain_dimms_parse(const char *xml, struct vn_domain_dimm *out, size_t max, struct vn_error *err);
/* The vCPUs a domain's XML says are enabled (<vcpus><vcpu id= enabled='yes'>); all of them without <vcpus>. */
int vn_domain_vcpus_parse(const char *xml, struct vn_cpuset *enabled, struct vn_error *err);

/* The files behind a domain XML's <disk>s (<source file=>), at most max, malloc'd: the count or a negative errno. */
#define VN_DOMAIN_DISKS_MAX 64
int vn_domain_disk_files(const char *xml, char **out, size_t max, struct vn_error *err);
