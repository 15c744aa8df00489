#!/bin/bash
# Integration: random tiered shapes booted (issue 47, docs/tiering.md). For each
# seed, `vnuma topo random --slow` (1 to n-1 slow nodes, CPU-less and
# memory-less nodes, random SLITs) boots on Debian's 6.1 under TCG; up's
# fidelity check holds the guest's memory_tier*/nodelist and every kmem
# rebuild's fallback lists to the models, and, with Debian's -dbg vmlinux and
# drgn installed, `collect --deep` holds the kernel's own node_demotion[]
# targets to the demotion model. About 45 s a seed here; label slow.
#   tiers-random.sh VNUMA_BINARY [SOURCE_DIR]    (VN_RANDOM_SEEDS='11 13' to replay)
set -u
vnuma=$1
src=${2:-$(cd "$(dirname "$0")/../.." && pwd)}
export VNUMA_ACCEL=tcg
. "$src/tests/integration/lib.sh"
it_state tiers-random

seeds=${VN_RANDOM_SEEDS:-"11 13 14 19 $(date +%s)"}
echo "# random seeds: $seeds (replay: VN_RANDOM_SEEDS='...')"
for s in $seeds; do
	"$vnuma" topo random --slow --seed "$s" >"$w/r$s.xml"
	desc=$(sed -n 's:.*<description>\(.*\)</description>.*:\1:p' "$w/r$s.xml")
	"$vnuma" up "$w/r$s.xml" --name "r$s" --timeout 600 >/dev/null 2>"$w/r$s.up"
	rc=$?
	check "seed $s ($desc): boots, guest equals the models (exit $rc)" test "$rc" = 0
	[ "$rc" = 0 ] || { sed 's/^/#   /' "$w/r$s.up" | tail -20; "$vnuma" down "r$s" >/dev/null 2>&1; continue; }
	check "...its memory tiers were checked" grep -q '^memory tiers (model 6.1[,)].*: ok$' "$w/r$s.up"
	vmlinux=/usr/lib/debug/boot/vmlinux-$("$vnuma" exec "r$s" -- uname -r </dev/null 2>/dev/null)
	if [ -f "$vmlinux" ] && command -v drgn >/dev/null; then
		mkdir -p "$w/tmp"
		TMPDIR=$w/tmp "$vnuma" collect "r$s" --deep >"$w/r$s.deep" 2>&1
		rc=$?
		check "...collect --deep: the kernel's structures equal the models (exit $rc)" test "$rc" = 0
		check "...its demotion targets were read and match" grep -q '^demotion targets .*: ok$' "$w/r$s.deep"
		[ "$rc" = 0 ] || sed 's/^/#   /' "$w/r$s.deep"
	else
		echo "#   demotion targets not read: $vmlinux or drgn missing (tiers checked at boot)"
	fi
	"$vnuma" down "r$s" >/dev/null 2>&1
done
check "no QEMU left" no_qemu_left
check "no domain left" no_domain_left
finish
