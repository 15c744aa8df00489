#!/bin/bash
# Slow: 4node-cxl-tiered on Debian's 6.12 (bookworm-backports, a prebuilt
# recipe from scripts/kernel-backports.sh; docs/kernels.md). 6.12 computes
# kmem's abstract distance from the HMAT, so its CXL nodes land in another
# tier than 6.1's. up must pass its whole check (exit 0): the tiers held to
# the 6.12 tier model (memory_tier50 for the CXL nodes, by HMAT) and every
# fallback build to the 6.12 fallback era, both picked by the guest's
# release. The guest must also build what tests/fixtures/tiers-6.12/4node-cxl-tiered
# recorded before those models existed (tests/fixtures/tiers-6.12/README): the
# tiers, the HMAT's access classes in sysfs, the demotion targets printed as
# kmem onlines each node, and each node's memory. The same shape without
# <hmat> (tiered as 6.1 does) must pass up's whole check too, and so must
# 4node-cxl (CPU-less boot memory, tiered by HMAT on 6.12). Also: no
# virtio_blk loaded (the guest has no disk; 6.12's modules are .ko.xz,
# tests/cli/init-modules.sh), kmem loaded.
# Skipped (77) without the kernel: CI does not download backports.
#   VN_KERNEL_612=RECIPE (default: the recipe kernel-backports.sh wrote in
#   vnuma's default state dir)
#   tiers-6.12.sh VNUMA_BINARY [SOURCE_DIR]
set -u
vnuma=$1
src=${2:-$(cd "$(dirname "$0")/../.." && pwd)}
export VNUMA_ACCEL=tcg
# Before it_state, which points VNUMA_STATE_DIR at the test's own.
if [ -z "${VN_KERNEL_612:-}" ]; then
	if [ -n "${VNUMA_STATE_DIR:-}" ]; then st=$VNUMA_STATE_DIR
	elif [ -n "${XDG_STATE_HOME:-}" ]; then st=$XDG_STATE_HOME/vnuma
	elif [ "$(id -u)" = 0 ]; then st=/var/lib/vnuma
	else st=$HOME/.local/state/vnuma; fi
	VN_KERNEL_612=$st/kernels/debian-6.12.json
fi
[ -f "$VN_KERNEL_612" ] || {
	echo "SKIP: no Debian 6.12 kernel at $VN_KERNEL_612: run scripts/kernel-backports.sh (or set VN_KERNEL_612=RECIPE)"
	exit 77
}
. "$src/tests/integration/lib.sh"
it_state tiers-6.12
data=$src/tests/fixtures/tiers-6.12
want=$data/4node-cxl-tiered
got=$VNUMA_STATE_DIR/got
mkdir -p "$got"

# up612 TOPOLOGY NAME LABEL [UP-OPTION...]: up on 6.12 into $VNUMA_STATE_DIR/NAME.out; up's whole check must pass.
up612() {
	local topo=$1 name=$2 label=$3 rc
	shift 3
	"$vnuma" up "$topo" --kernel "$VN_KERNEL_612" --name "$name" --timeout 600 "$@" \
		>"$VNUMA_STATE_DIR/$name.out" 2>&1
	rc=$?
	check "$label on 6.12: up says ok (exit 0, got $rc)" test "$rc" = 0 ||
		grep -v '^ ' "$VNUMA_STATE_DIR/$name.out" | tail -12
}

up612 "$src/topologies/4node-cxl-tiered.xml" t612 4node-cxl-tiered
check "the guest runs 6.12" grep -q '^guest t612 is up: kernel 6\.12\.' "$VNUMA_STATE_DIR/t612.out"
check "its memory tiers as the 6.12 model says (HMAT: memory_tier50)" \
	grep -q '^memory tiers (model 6\.12, kernel 6\.12\.[^)]*): ok$' "$VNUMA_STATE_DIR/t612.out"
check "fallback lists as the 6.12 model says, boot and each kmem build" \
	grep -q '^fallback order (model 6\.12, boot and each kmem rebuild): ok$' "$VNUMA_STATE_DIR/t612.out"

"$vnuma" exec t612 -- sh -c "$(cat "$data/guest.sh")" </dev/null >"$got/all" 2>&1
for f in memory_tiers access meminfo dmesg; do
	sed -n "s/^$f	//p" "$got/all" >"$got/$f"
done
check "tiers as recorded (memory_tier4: 0-1, memory_tier50: 2-3)" diff "$want/memory_tiers" "$got/memory_tiers"
check "HMAT access classes in sysfs as recorded" diff "$want/access" "$got/access"
check "each node's memory as recorded" diff "$want/meminfo" "$got/meminfo"
demotion() { sed -n 's/^\[ *[0-9.]*\] \(Demotion targets .*\)/\1/p' "$1"; }
check "demotion targets printed as recorded" diff <(demotion "$want/dmesg") <(demotion "$got/dmesg")
"$vnuma" exec t612 -- cat /proc/modules </dev/null >"$got/modules" 2>&1
check "kmem loaded" grep -q '^kmem ' "$got/modules"
check "virtio_blk not loaded (no disk)" sh -c "! grep -q '^virtio_blk ' '$got/modules'"

check "down succeeds" "$vnuma" down t612

up612 "$data/4node-cxl-tiered-nohmat.xml" t612n "4node-cxl-tiered without <hmat>" --cold
check "its fallback lists as the 6.12 model says" \
	grep -q '^fallback order (model 6\.12, boot and each kmem rebuild): ok$' "$VNUMA_STATE_DIR/t612n.out"
check "down succeeds (no <hmat>)" "$vnuma" down t612n
# 4node-cxl: CPU-less nodes with boot memory and an <hmat>, no slow memory. 6.12 tiers them by
# HMAT at late init (6.1 puts all four in one tier): the model says memory_tier50: 2-3.
up612 "$src/topologies/4node-cxl.xml" c612 4node-cxl --cold
check "...its tiers checked by the 6.12 model" \
	grep -q '^memory tiers (model 6\.12, kernel 6\.12\.[^)]*): ok$' "$VNUMA_STATE_DIR/c612.out"
"$vnuma" exec c612 -- cat /sys/devices/virtual/memory_tiering/memory_tier50/nodelist </dev/null >"$got/cxl" 2>&1
check "...the CXL nodes in memory_tier50 (by HMAT, no kmem)" grep -qx '2-3' "$got/cxl"
check "down succeeds (4node-cxl)" "$vnuma" down c612
check "down leaves no QEMU" no_qemu_left
check "down leaves no domain" no_domain_left
finish
