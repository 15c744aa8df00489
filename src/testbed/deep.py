# vnuma collect --deep: what the dumped kernel built, read by drgn from its
# memory, printed as one JSON line after the marker "VNUMA-DEEP ".
# Run as: drgn -q -c VMCORE -s VMLINUX --no-default-symbols deep.py
# (drgn gives `prog`). The dump is the guest's memory: every loop is bounded
# and every section that cannot be read becomes {"absent": why}, so a
# kernel without memory tiers (before 6.1) or a corrupt list still gives the
# other sections. vnuma checks the JSON's shape itself.
import json

from drgn import FaultError
from drgn.helpers.linux.cpumask import for_each_cpu
from drgn.helpers.linux.list import list_for_each_entry
from drgn.helpers.linux.nodemask import for_each_node_mask, for_each_online_node

MAX_NODES = 128      # vnuma's VN_MAX_NODES
MAX_ZONEREFS = 8192  # MAX_NUMNODES (1024) * MAX_NR_ZONES, rounded up
MAX_TIERS = 64
MAX_CPUS = 4096


def bounded(it, most):
    out = []
    for x in it:
        if len(out) == most:
            raise ValueError("more than %d entries" % most)
        out.append(int(x))
    return out


def section(fn):
    try:
        return fn()
    except (LookupError, FaultError, ValueError) as e:
        return {"absent": "%s: %s" % (type(e).__name__, str(e)[:200])}


def nodes():
    return bounded(for_each_online_node(prog), MAX_NODES)


def zonelists():
    out = []
    for nid in nodes():
        pgdat = prog["node_data"][nid]
        if not pgdat:
            continue
        refs, order = pgdat.node_zonelists[0]._zonerefs, []
        for i in range(MAX_ZONEREFS + 1):
            if i == MAX_ZONEREFS:
                raise ValueError("node %d: zonelist not terminated" % nid)
            if not refs[i].zone:
                break
            n = int(refs[i].zone.zone_pgdat.node_id)
            if n not in order:
                order.append(n)
        out.append({"node": nid, "order": order})
    return out


def distances():
    # x86's copy of the SLIT (arch/x86/mm/numa.c); other arches keep it elsewhere.
    cnt, table = int(prog["numa_distance_cnt"]), prog["numa_distance"]
    if cnt > MAX_NODES:
        raise ValueError("numa_distance_cnt %d" % cnt)
    return [[int(table[i * cnt + j]) for j in range(cnt)] for i in range(cnt)]


def tiers():
    out = []
    head = prog["memory_tiers"].address_of_()
    for t in list_for_each_entry("struct memory_tier", head, "list"):
        if len(out) == MAX_TIERS:
            raise ValueError("more than %d memory tiers" % MAX_TIERS)
        members = set()
        types = t.memory_types.address_of_()
        for k, mt in enumerate(list_for_each_entry("struct memory_dev_type", types, "tier_sibiling")):
            if k == MAX_TIERS:
                raise ValueError("more than %d memory types in a tier" % MAX_TIERS)
            members.update(bounded(for_each_node_mask(mt.nodes), MAX_NODES))
        out.append({"adistance_start": int(t.adistance_start), "nodes": sorted(members)})
    return out


def demotion():
    table = prog["node_demotion"]
    if not table:
        return {"absent": "node_demotion was never allocated"}
    return [{"node": nid, "preferred": bounded(for_each_node_mask(table[nid].preferred), MAX_NODES)}
            for nid in nodes()]


def sched_numa():
    levels = int(prog["sched_domains_numa_levels"])
    if levels < 0 or levels > MAX_NODES:
        raise ValueError("sched_domains_numa_levels %d" % levels)
    dist, masks = prog["sched_domains_numa_distance"], prog["sched_domains_numa_masks"]
    out = {"distances": [int(dist[i]) for i in range(levels)], "masks": []}
    for i in range(levels):
        level = []
        for nid in nodes():
            m = masks[i][nid]
            if m:
                level.append({"node": nid, "cpus": bounded(for_each_cpu(m), MAX_CPUS)})
        out["masks"].append(level)
    return out


result = {"version": 1}
for name, fn in (("nodes", nodes), ("zonelists", zonelists), ("distance", distances), ("tiers", tiers),
                 ("demotion", demotion), ("sched_numa", sched_numa)):
    result[name] = section(fn)
print("VNUMA-DEEP " + json.dumps(result, separators=(",", ":")))
