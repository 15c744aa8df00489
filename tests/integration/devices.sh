#!/bin/bash
# Integration: device NUMA locality (issue 16). 4node-io puts a virtio disk on
# node 2 and a user-mode virtio NIC on node 3; the guest must report those
# nodes for them in sysfs, numactl must place by them, `up`'s fidelity check
# must agree, and down must leave nothing (the disk image included). One TCG
# boot, ~20 s.
#   devices.sh VNUMA_BINARY [SOURCE_DIR]
set -u
vnuma=$1
src=${2:-$(cd "$(dirname "$0")/../.." && pwd)}
export VNUMA_ACCEL=tcg
. "$src/tests/integration/lib.sh"
it_state devices

out=$("$vnuma" up "$src/topologies/4node-io.xml" --name io --timeout 180 2>"$VNUMA_STATE_DIR/up.err")
rc=$?
check "4node-io boots, fidelity ok (exit 0)" test "$rc" = 0
check "fidelity checked the devices" grep -q '^devices (PCI numa_node): ok$' "$VNUMA_STATE_DIR/up.err"
img="$VNUMA_STATE_DIR/guests/io/disk-node2-0.img"
check "the disk image is 64M and sparse" sh -c "[ \$(stat -c %s '$img') = 67108864 ] && [ \$(stat -c %b '$img') -lt 1024 ]"

# vendor class numa_node per PCI device; the virtio disk (0x0100xx) and NIC (0x0200xx).
"$vnuma" exec io -- sh -c 'for d in /sys/bus/pci/devices/*; do echo $(cat $d/vendor $d/class $d/numa_node); done' \
	</dev/null >"$VNUMA_STATE_DIR/pci" 2>&1
check "cat numa_node shows 2 and 3" sh -c "'$vnuma' exec io -- sh -c 'cat /sys/bus/pci/devices/*/numa_node' </dev/null |
	sort -u | tr '\n' ' ' | grep -q -- '-1 2 3 '"
check "the virtio disk is on node 2" grep -qx '0x1af4 0x010000 2' "$VNUMA_STATE_DIR/pci"
check "the virtio NIC is on node 3" grep -qx '0x1af4 0x020000 3' "$VNUMA_STATE_DIR/pci"
check "numactl --cpunodebind=file:/dev/vda true succeeds" sh -c "'$vnuma' exec io -- numactl --cpunodebind=file:/dev/vda true </dev/null"
check "file:/dev/vda binds to node 2's CPU" sh -c "'$vnuma' exec io -- numactl --cpunodebind=file:/dev/vda \
	grep Cpus_allowed_list /proc/self/status </dev/null | grep -q '[[:space:]]2$'"
check "netdev:eth0 binds to node 3's CPU" sh -c "'$vnuma' exec io -- numactl --cpunodebind=netdev:eth0 \
	grep Cpus_allowed_list /proc/self/status </dev/null | grep -q '[[:space:]]3$'"

check "down succeeds" "$vnuma" down io
check "down leaves no QEMU" no_qemu_left
check "down leaves no domain" no_domain_left
check "down removes the disk image" test ! -e "$img"
check "down leaves no guest dir" test ! -e "$VNUMA_STATE_DIR/guests/io"
finish
