#!/bin/bash
# record.sh VNUMA_BINARY TOPOLOGY KERNEL OUTDIR: boots TOPOLOGY on KERNEL
# (under TCG, guest name "rec"), writes what the kernel built for memory
# tiers into OUTDIR, then downs the guest. How this folder's fixtures were
# made (README); tests/integration/tiers-6.12.sh runs the same guest side.
#   OUTDIR/up.txt           vnuma up's output and exit code (the fidelity verdict)
#   OUTDIR/memory_tiers     memory_tierN: NODELIST, one a line, sorted
#   OUTDIR/access           nodeN/accessK/initiators/{read,write}_{latency,bandwidth}
#                           and the initiator/target links, sorted
#   OUTDIR/meminfo          each node's MemTotal
#   OUTDIR/dmesg            the kernel's lines about HMAT, NFIT/dax/kmem, memory
#                           tiers and demotion, and its fallback lists, as printed
set -u
vnuma=$1 topo=$2 kernel=$3 out=$4
mkdir -p "$out"
export VNUMA_ACCEL=tcg
"$vnuma" up "$topo" --kernel "$kernel" --name rec --timeout 600 >"$out/up.txt" 2>&1
echo "exit $?" >>"$out/up.txt"
# The state dir's paths say nothing about the kernel.
sed -i "s|${VNUMA_STATE_DIR:-/nonexistent}|STATE|g" "$out/up.txt"
"$vnuma" exec rec -- sh -c "$(cat "$(dirname "$0")/guest.sh")" </dev/null >"$out/all" 2>&1
for f in memory_tiers access meminfo dmesg; do
	sed -n "s/^$f	//p" "$out/all" >"$out/$f"
done
rm -f "$out/all"
"$vnuma" down rec >/dev/null
