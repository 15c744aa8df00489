#!/bin/bash
# Integration: slow memory as a lower memory tier (issue 47, docs/tiering.md).
# 4node-cxl-tiered (2 DRAM nodes, 2 CXL nodes) boots on Debian's 6.1: each CXL
# node's NVDIMM made device-dax and onlined by kmem before the agent starts,
# up's fidelity check compares memory_tier*/nodelist with the tier model, the
# slow nodes hold their 256M, demotion can be switched on, and down leaves
# nothing (the NVDIMM files included). One TCG boot.
#   tiers.sh VNUMA_BINARY [SOURCE_DIR]
set -u
vnuma=$1
src=${2:-$(cd "$(dirname "$0")/../.." && pwd)}
export VNUMA_ACCEL=tcg
. "$src/tests/integration/lib.sh"
it_state tiers

"$vnuma" up "$src/topologies/4node-cxl-tiered.xml" --name cxl --timeout 300 >/dev/null 2>"$VNUMA_STATE_DIR/up.err"
rc=$?
check "4node-cxl-tiered boots, fidelity ok (exit 0)" test "$rc" = 0
check "fidelity checked the memory tiers" grep -q '^memory tiers (model 6\.1, kernel 6\.1\.[^)]*): ok$' "$VNUMA_STATE_DIR/up.err"
check "the NVDIMM files exist, sparse" sh -c "[ \$(stat -c %b '$VNUMA_STATE_DIR/guests/cxl/disk-node2-pmem.img') -lt 1024 ]"

"$vnuma" exec cxl -- sh -c 'cd /sys/devices/virtual/memory_tiering && for t in memory_tier*; do echo "$t: $(cat $t/nodelist)"; done' \
	</dev/null >"$VNUMA_STATE_DIR/tiers" 2>&1
check "DRAM nodes 0-1 in memory_tier4" grep -qx 'memory_tier4: 0-1' "$VNUMA_STATE_DIR/tiers"
check "CXL nodes 2-3 in kmem's memory_tier22" grep -qx 'memory_tier22: 2-3' "$VNUMA_STATE_DIR/tiers"
# The glob lists memory_tier22 before memory_tier4: compared as sets of lines.
check "the guest's tiers are the model's" bash -c "diff <('$vnuma' topo demotion '$src/topologies/4node-cxl-tiered.xml' |
	grep '^memory_tier' | sort) <(sort '$VNUMA_STATE_DIR/tiers')"
check "node 2 holds its 256M online" sh -c "'$vnuma' exec cxl -- cat /sys/devices/system/node/node2/meminfo </dev/null |
	grep -q 'MemTotal: *262144 kB'"
check "node 3 holds its 256M online" sh -c "'$vnuma' exec cxl -- cat /sys/devices/system/node/node3/meminfo </dev/null |
	grep -q 'MemTotal: *262144 kB'"
check "demotion starts off" sh -c "'$vnuma' exec cxl -- cat /sys/kernel/mm/numa/demotion_enabled </dev/null | grep -qx false"
check "demotion_enabled can be set" sh -c "'$vnuma' exec cxl -- sh -c 'echo true >/sys/kernel/mm/numa/demotion_enabled &&
	cat /sys/kernel/mm/numa/demotion_enabled' </dev/null | grep -qx true"

check "down succeeds" "$vnuma" down cxl
check "down leaves no QEMU" no_qemu_left
check "down leaves no domain" no_domain_left
check "down leaves no guest dir (NVDIMM files included)" test ! -e "$VNUMA_STATE_DIR/guests/cxl"
finish
