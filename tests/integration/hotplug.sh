#!/bin/bash
# Integration: run-time topology changes (issue 14). 4node-amd-hotplug boots
# node 3 memory-less with vCPU 4 absent; `vnuma hotplug` adds a DIMM to node
# 3 (the guest onlines it, node 3 gets memory, the kernel rebuilds its
# fallback lists as the model's hotplugged state predicts), plugs vCPU 4 into
# node 3, and takes the DIMM out again. Then the shipped
# fallback-hotplug-4node scenario, with a pre-5.15 fallback assertion added:
# the 5.18 assertions over the boot and the rebuilt lists pass, the pre-5.15
# one fails naming the boot build and rebuild #1. Two TCG boots, ~2 min.
#   hotplug.sh VNUMA_BINARY [SOURCE_DIR]
set -u
vnuma=$1
src=${2:-$(cd "$(dirname "$0")/../.." && pwd)}
export VNUMA_ACCEL=tcg
. "$src/tests/integration/lib.sh"
it_state hotplug
g() { "$vnuma" exec hp -- sh -c "$1" </dev/null; }

"$vnuma" up "$src/topologies/4node-amd-hotplug.xml" --name hp --timeout 180 >/dev/null 2>"$VNUMA_STATE_DIR/up.err"
check "4node-amd-hotplug boots, fidelity ok (exit 0)" test $? = 0
check "node 3 boots memory-less" test "$(g 'cat /sys/devices/system/node/has_memory')" = 0-2
check "vCPU 4 is absent at boot" test "$(g 'cat /sys/devices/system/cpu/present')" = 0-3

out=$("$vnuma" hotplug hp --node 3 --memory 256M 2>&1)
check "hotplug --memory 256M into node 3 (exit 0)" test $? = 0
check "...onlines its 2 memory blocks" grep -q '2 memory blocks onlined' <<<"$out"
check "...and the kernel rebuilt its lists once" grep -q 'rebuilt: 1 time$' <<<"$out"
check "node 3 has memory now" test "$(g 'cat /sys/devices/system/node/has_memory')" = 0-3
check "node 3's meminfo says 256M" grep -q 'MemTotal: *262144 kB' <<<"$(g 'cat /sys/devices/system/node/node3/meminfo')"
check "numactl -H shows it" grep -q '^node 3 size: 256 MB' <<<"$(g 'numactl -H')"
g "dmesg | grep 'Fallback order' | tail -4 | sed 's/^\[[^]]*\] //'" >"$VNUMA_STATE_DIR/rebuilt"
"$vnuma" topo fallback --hotplugged "$src/topologies/4node-amd-hotplug.xml" >"$VNUMA_STATE_DIR/model"
check "the rebuilt lists equal the model's (topo fallback --hotplugged)" diff "$VNUMA_STATE_DIR/model" "$VNUMA_STATE_DIR/rebuilt"
check "the model's rebuilt node 3 list is the fixed one" grep -qx 'Fallback order for Node 3: 3 2 1 0 ' "$VNUMA_STATE_DIR/model"
check "node 3 can take no more than its hotplug= (exit 2)" test "$(rc "$vnuma" hotplug hp --node 3 --memory 512M)" = 2
check "node 0 takes none (exit 2)" test "$(rc "$vnuma" hotplug hp --node 0 --memory 128M)" = 2

check "hotplug --cpus 1 into node 3 (exit 0)" test "$(rc "$vnuma" hotplug hp --node 3 --cpus 1)" = 0
check "vCPU 4 is online in node 3" test "$(g 'cat /sys/devices/system/cpu/cpu4/online /sys/devices/system/node/node3/cpulist' | tr '\n' ' ')" = '1 3-4 '
check "a task runs on it" grep -q '[[:space:]]4$' <<<"$(g 'numactl --physcpubind=4 grep Cpus_allowed_list /proc/self/status')"
check "no vCPU is left to plug (exit 2)" test "$(rc "$vnuma" hotplug hp --node 3 --cpus 1)" = 2
check "vCPU unplug is refused (exit 2)" test "$(rc "$vnuma" hotplug hp --node 3 --cpus 1 --remove)" = 2

check "hotplug --remove the DIMM (exit 0)" test "$(rc "$vnuma" hotplug hp --node 3 --memory 256M --remove)" = 0
check "node 3 is memory-less again" test "$(g 'cat /sys/devices/system/node/has_memory')" = 0-2
check "down succeeds" test "$(rc "$vnuma" down hp)" = 0
check "down leaves no QEMU" no_qemu_left
check "down leaves no domain" no_domain_left

# The scenario, judged by the 5.18 model (its own) and by pre-5.15 too.
scn="$VNUMA_STATE_DIR/fallback-hotplug.json"
sed -e 's#"topology": *"[^"]*"#"topology": "'"$src"'/topologies/4node-amd-hotplug.xml"#' \
	-e 's#{"type": "distances"}#{"type": "distances"}, {"type": "fallback", "model": "pre-5.15", "name": "old model"}#' \
	"$src/scenarios/fallback-hotplug-4node.json" >"$scn"
"$vnuma" run "$scn" -o "$VNUMA_STATE_DIR/res" >"$VNUMA_STATE_DIR/run.log" 2>&1
rc=$?
check "the scenario with a pre-5.15 assertion added exits 1" test "$rc" = 1
log="$VNUMA_STATE_DIR/run.log"
check "...the 5.18 lists, boot and rebuilt, pass" grep -q '^PASS  fallback order matches model 5.18' "$log"
check "...membind 0,1 from node 3 lands on node 1 after the hotplug" grep -q '^PASS  membind 0,1 from node 3 allocates on node 1 after' "$log"
check "...node 3's CPUs use node 3's new memory" grep -q "^PASS  node 3's CPUs allocate from node 3's hot-added memory" "$log"
check "...the pre-5.15 one fails at boot" grep -q 'boot: Node 3: expected 3 2 0 1, kernel printed 3 2 1 0' "$log"
check "...and names the rebuild" grep -q 'rebuild #1 (+512M node 3 in step plug-memory; memory on nodes 0-3, CPUs seen on nodes 0-3): Node 3: expected 3 2 0 1, kernel printed 3 2 1 0' "$log"
check "the run leaves no QEMU" no_qemu_left
check "the run leaves no domain" no_domain_left
finish
