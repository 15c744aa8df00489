/*
 * Booted snapshots through libvirt's own save and restore: a running guest
 * saved into a file (and so stopped), and a guest started from such a file
 * under a name and guest dir of its own.
 */
#pragma once

#include <stdbool.h>

#include "topology/topology.h"
#include "util/error.h"
#include "virt/domain-xml.h"

struct vn_virt;
struct vn_virt_domain;

/*
 * Save d's memory and devices into path (virDomainSaveFlags): the guest
 * stops and is undefined, its dir stays. Local connections only.
 */
int vn_virt_domain_save(struct vn_virt_domain *d, const char *path, struct vn_error *err);

/*
 * Start a guest named o->name (on o->accel, the saved guest's) from a file
 * vn_virt_domain_save() wrote: the file's XML is given that name, a new
 * uuid, the new guest dir's paths and o->meta (this up's topology path and
 * kernel, not the saving up's) first, in place (the caller keeps
 * others from restoring it meanwhile: a lock), as libvirt checks that a
 * restored guest is the saved machine, name and uuid included. The guest's
 * own files (console FIFO and log, agent socket, disks) are where
 * vn_virt_domain_create() puts them;
 * the console log is kept and appended to. The guest is defined persistent
 * once it runs. On failure nothing of it is defined or runs; err says why
 * (a file that is not a whole save is an infrastructure error naming it).
 */
int vn_virt_domain_restore(struct vn_virt *v, const struct vn_domain_opts *o, const char *path,
			   struct vn_virt_domain **out, struct vn_error *err);

/* The hypervisor's version as libvirt reports it (major * 1000000 + minor * 1000 + micro). */
int vn_virt_hypervisor_version(struct vn_virt *v, unsigned long *version, struct vn_error *err);
