#!/bin/bash
# Slow: the fallback-order model against arm64 and ppc64le kernels on random
# SLITs (5-8 nodes, CPU-less nodes among them; no memory-less ones, which
# those guests cannot be given), as boot.sh does for x86: the guest's
# distances must equal the matrix and its fallback lines the model's for
# that architecture's boot-time state (docs/arches.md). 20 seeds per
# architecture by default (~15 s an arm64 boot, ~40 s a ppc64le one, here);
# VN_RANDOM_SEEDS='1 2 3' replays given ones. Exit 77 without the
# cross-built in-guest programs (scripts/setup.sh --arches).
#   arches-random.sh VNUMA_BINARY [SOURCE_DIR]
set -u
vnuma=$1
src=${2:-$(cd "$(dirname "$0")/../.." && pwd)}
. "$src/tests/integration/lib.sh"
build=$(dirname "$(realpath "$vnuma")")
for a in arm64 ppc64le; do
	[ -x "$build/arch/$a/vnuma-agent" ] || { echo "# skipped: no $a in-guest programs (scripts/setup.sh --arches)"; exit 77; }
done
it_state arches-random

seeds=${VN_RANDOM_SEEDS:-$(seq -s ' ' 1 20)}
echo "# random seeds: $seeds (replay: VN_RANDOM_SEEDS='...')"
for a in arm64 ppc64le; do
	for s in $seeds; do
		"$vnuma" topo random --seed "$s" --no-memless >"$w/random-$s.xml"
		desc=$(sed -n 's:.*<description>\(.*\)</description>.*:\1:p' "$w/random-$s.xml")
		"$vnuma" up "$w/random-$s.xml" --arch "$a" --name "r-$a-$s" --timeout 300 >/dev/null 2>"$w/up.err"
		check "$a, random seed $s ($desc): guest equals model and matrix" test "$?" = 0
		grep -E 'MISMATCH|expected|vnuma up' "$w/up.err" | sed 's/^/#   /'
		"$vnuma" down "r-$a-$s" >/dev/null 2>&1
	done
done
check "nothing left running" no_qemu_left
finish
