/* Memory and vCPUs plugged into a running guest's nodes, through libvirt's device API. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/alloc.h"
#include "util/cleanup.h"
#include "virt/virt-priv.h"

int vn_virt_domain_attach_dimm(struct vn_virt_domain *d, unsigned node, uint64_t bytes, struct vn_error *err)
{
	_cleanup_free_ char *xml = vn_domain_dimm_xml(node, bytes);

	if (virDomainAttachDeviceFlags(d->dom, xml, VIR_DOMAIN_AFFECT_LIVE) < 0)
		return vn_virt_error(err, "cannot plug %" PRIu64 " MiB into node %u of '%s'", bytes >> 20, node,
				     d->name);
	return 0;
}

int vn_virt_domain_dimms(struct vn_virt_domain *d, struct vn_domain_dimm *out, size_t max, struct vn_error *err)
{
	_cleanup_free_ char *xml = virDomainGetXMLDesc(d->dom, 0);

	if (!xml)
		return vn_virt_error(err, "cannot read the domain XML of '%s'", d->name);
	return vn_domain_dimms_parse(xml, out, max, err);
}

int vn_virt_domain_detach_dimm(struct vn_virt_domain *d, const struct vn_domain_dimm *dimm, struct vn_error *err)
{
	/* The alias picks the one device; libvirt then waits for QEMU's DEVICE_DELETED. */
	_cleanup_free_ char *xml = vn_xasprintf("<memory model='dimm'>\n  <target>\n    <size unit='KiB'>%" PRIu64
						"</size>\n    <node>%u</node>\n  </target>\n  <alias name='%s'/>\n"
						"</memory>\n",
						dimm->bytes >> 10, dimm->node, dimm->alias);

	if (virDomainDetachDeviceFlags(d->dom, xml, VIR_DOMAIN_AFFECT_LIVE) < 0)
		return vn_virt_error(err, "cannot unplug %s (%" PRIu64 " MiB on node %u) from '%s'", dimm->alias,
				     dimm->bytes >> 20, dimm->node, d->name);
	return 0;
}

int vn_virt_domain_set_vcpu(struct vn_virt_domain *d, unsigned cpu, bool on, struct vn_error *err)
{
	char map[16];

	snprintf(map, sizeof(map), "%u", cpu);
	if (virDomainSetVcpu(d->dom, map, on ? 1 : 0, VIR_DOMAIN_AFFECT_LIVE) < 0)
		return vn_virt_error(err, "cannot %s vCPU %u of '%s'", on ? "plug" : "unplug", cpu, d->name);
	return 0;
}

int vn_virt_domain_vcpus(struct vn_virt_domain *d, struct vn_cpuset *enabled, struct vn_error *err)
{
	_cleanup_free_ char *xml = virDomainGetXMLDesc(d->dom, 0);

	if (!xml)
		return vn_virt_error(err, "cannot read the domain XML of '%s'", d->name);
	return vn_domain_vcpus_parse(xml, enabled, err);
}
