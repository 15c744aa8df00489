/*
 * What only QEMU's monitor knows, asked through libvirt's passthrough (which
 * marks the domain "custom-monitor" in libvirt's log): where a plugged DIMM
 * lies in the locality plugin's addresses, and virtual time's clock lead.
 */
#include <stdlib.h>

#include <libvirt/libvirt-qemu.h>

#include "util/alloc.h"
#include "util/cleanup.h"
#include "virt/hmp.h"
#include "virt/virt-priv.h"

static int hmp(struct vn_virt_domain *d, const char *cmd, char **out, struct vn_error *err)
{
	*out = NULL;
	if (virDomainQemuMonitorCommand(d->dom, cmd, out, VIR_DOMAIN_QEMU_MONITOR_COMMAND_HMP) < 0)
		return vn_virt_error(err, "cannot ask QEMU's monitor '%s' of '%s'", cmd, d->name);
	return 0;
}

int vn_virt_domain_dimm_plugin_range(struct vn_virt_domain *d, const struct vn_domain_dimm *dimm, uint64_t *lo,
				     uint64_t *hi, struct vn_error *err)
{
	_cleanup_free_ char *blocks = NULL, *mtree = NULL;
	/* libvirt names a DIMM's backend object "mem" + the device's alias (memdimm0 for dimm0). */
	_cleanup_free_ char *memdev = vn_xasprintf("mem%s", dimm->alias);
	int rc;

	if ((rc = hmp(d, "info ramblock", &blocks, err)) < 0 || (rc = hmp(d, "info mtree", &mtree, err)) < 0)
		return rc;
	return vn_hmp_dimm_plugin_range(blocks, mtree, memdev, dimm->base, lo, hi, err);
}

int vn_virt_domain_icount_lead(struct vn_virt_domain *d, double *lead_s, struct vn_error *err)
{
	_cleanup_free_ char *jit = NULL;
	int rc;

	if ((rc = hmp(d, "info jit", &jit, err)) < 0)
		return rc;
	if ((rc = vn_hmp_icount_lead(jit, lead_s, err)) < 0)
		vn_error_prefix(err, "guest %s", d->name);
	return rc;
}
