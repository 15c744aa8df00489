#!/bin/bash
# Slow test (ctest -L kernel-build; not in scripts/test.sh): real bisections
# with minimal-numa, the default recipe, over bisect-lib.sh's history of
# Debian's linux-source-6.1 (seed 003's revert, an unbuildable commit after it
# and a raised scan delay, planted at random). integration-bisect runs the
# first of them in CI with the tiny-numa recipe. Here:
#   1. vnuma bisect scenarios/fallback-4node.json names exactly the patch's
#      commit; it is stopped (Ctrl-C) after its second decision and started
#      again, and goes on without rebuilding or rerunning what was done;
#   2. bisecting from the commit before the patch to the mended one tests the
#      unbuildable commit first (git's pick), skips it, reports it, and still
#      names the patch's commit;
#   3. by metric, with repeats: memfollow-2node without its scan delay sysctl
#      migrates no pages within its run from the delay's commit on; bisect
#      --metric vmstat.numa_pages_migrated names that commit;
#   4. the user's checkout, index and HEAD are as they were.
#   bisect.sh VNUMA_BINARY   (VN_SOURCE_DIR: the repository; VN_BISECT_POS, VN_BISECT_SPOS: the positions, else random)
set -u
vnuma=$1
src=${VN_SOURCE_DIR:?}
if [ ! -r /usr/src/linux-source-6.1.tar.xz ]; then
	echo "SKIP: Debian's linux-source-6.1 is not installed" >&2
	exit 0
fi
export VNUMA_STATE_DIR=${VN_KERNEL_BUILD_STATE:-$(mktemp -d /tmp/vnuma-bisect.XXXXXX)}
export VNUMA_ACCEL=tcg
. "$src/tests/integration/lib.sh"
echo "state: $VNUMA_STATE_DIR"
w=$VNUMA_STATE_DIR/bisect-test
mkdir -p "$w"
repo=$w/linux

. "$src/tests/integration/bisect-lib.sh"
bisect_history
head_before=$(g rev-parse HEAD)
status_before=$(g status --porcelain | md5sum)

rm -rf "$w"/out1 "$w"/out2 "$w"/out3 # a kept state dir (VN_KERNEL_BUILD_STATE) keeps builds, not bisections
bisect_resumed

# Second: from the commit before the patch to the mended one: git picks the unbuildable one first.
scn=$src/scenarios/fallback-4node.json
log=$w/bisect2.log
out2=$w/out2
"$vnuma" bisect "$scn" --quick --repo "$repo" --good "$planted~1" --bad "$mended" -o "$out2" >"$log" 2>&1
rc=$?
cat "$log"
check "bisect over the unbuildable commit exits 0" test "$rc" = 0
check "...still names the planted commit" grep -q "the first bad commit is $planted" "$log"
check "...and reports the unbuildable one as skipped" grep -q "skip .*does not build (planted) \[does not build: kernel" "$out2/bisect.txt"

# Third: by metric. memfollow-2node leaves the scan delay at the kernel's default here, and counts no locality.
# Not --quick: its 10 s leave minimal-numa no time to scan (no pages migrated on either kernel); 40 s migrate ~25,000.
mscn=$w/memfollow-default-delay.json
grep -v -e '"kernel.numa_balancing_scan_delay_ms"' -e '"locality": true' "$src/scenarios/memfollow-2node.json" |
	sed 's#"topology": *"2node"#"topology": "'"$src"'/topologies/2node.xml"#' >"$mscn"
out3=$w/out3
"$vnuma" bisect "$mscn" --repo "$repo" --good "$base" --bad HEAD --metric vmstat.numa_pages_migrated \
	--repeats 3 -o "$out3" >"$log" 2>&1
rc=$?
cat "$log"
check "bisect by metric exits 0" test "$rc" = 0
check "...names the scan delay's commit" grep -q "the first bad commit is $delayed" "$log"
check "...after the endpoints differed by Welch's test" grep -q '"why":"good .* they differ' "$out3/bisect.log"
check "...with at least 3 runs of each tested commit" \
	bash -c "! grep -q '\"mark\":\"\(good\|bad\)\",\"why\":\"[0-9.e+-]* ± [0-9.e+-]* (n=[12])' '$out3/bisect.log'"

check "the user's HEAD is where it was" test "$(g rev-parse HEAD)" = "$head_before"
check "...and the checkout and index unchanged" test "$(g status --porcelain | md5sum)" = "$status_before"
check "nothing is left running" no_qemu_left
[ -z "${VN_KERNEL_BUILD_STATE:-}" ] && rm -rf "$VNUMA_STATE_DIR"
finish
