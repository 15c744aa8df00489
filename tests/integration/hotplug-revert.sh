#!/bin/bash
# Slow test (ctest -L kernel-build; not in scripts/test.sh): builds the
# fallback-revert-hotplug recipe (a cold build, its own config) and runs
# scenarios/fallback-hotplug-4node.json on it, with a pre-5.15 fallback
# assertion added. The kernel is the judge of the model both ways: the
# scenario must fail exactly as the model predicts (node 3 `3 2 0 1` at boot
# and in rebuild #1, membind 0,1 from node 3 on node 0 before and after the
# hotplug) while the pre-5.15 assertion and node 3's local memory pass.
#   hotplug-revert.sh VNUMA_BINARY   (VN_SOURCE_DIR: the repository)
set -u
vnuma=$1
src=${VN_SOURCE_DIR:?}
if [ ! -r /usr/src/linux-source-6.1.tar.xz ]; then
	echo "SKIP: Debian's linux-source-6.1 is not installed" >&2
	exit 0
fi
export VNUMA_STATE_DIR=${VN_KERNEL_BUILD_STATE:-$(mktemp -d /tmp/vnuma-kernel-build.XXXXXX)}
export VNUMA_ACCEL=tcg
. "$src/tests/integration/lib.sh"
echo "state: $VNUMA_STATE_DIR"

check "fallback-revert-hotplug builds" "$vnuma" kernel build "$src/kernels/fallback-revert-hotplug.json"
scn="$VNUMA_STATE_DIR/fallback-hotplug-revert.json"
sed -e 's#"topology": *"[^"]*"#"topology": "'"$src"'/topologies/4node-amd-hotplug.xml"#' \
	-e 's#{"type": "distances"}#{"type": "distances"}, {"type": "fallback", "model": "pre-5.15", "name": "old model"}#' \
	"$src/scenarios/fallback-hotplug-4node.json" >"$scn"
log="$VNUMA_STATE_DIR/run.log"
"$vnuma" run "$scn" --kernel "$src/kernels/fallback-revert-hotplug.json" -o "$VNUMA_STATE_DIR/res" >"$log" 2>&1
rc=$?
cat "$log"
check "the scenario fails on the reverted kernel (exit 1)" test "$rc" = 1
check "...at boot, node 3 falls back 3 2 0 1" grep -q 'boot: Node 3: expected 3 2 1 0, kernel printed 3 2 0 1' "$log"
check "...and so in the rebuild the hotplug caused" grep -q 'rebuild #1 (+512M node 3 in step plug-memory; .*): Node 3: expected 3 2 1 0, kernel printed 3 2 0 1' "$log"
check "...the pre-5.15 model predicts both builds" grep -q '^PASS  old model' "$log"
check "...membind 0,1 from node 3 misses node 1 before the hotplug" grep -q '^FAIL  membind 0,1 from node 3 allocates on node 1 at boot' "$log"
check "...and after it" grep -q '^FAIL  membind 0,1 from node 3 allocates on node 1 after the hotplug' "$log"
check "...node 3's CPUs still use node 3's new memory" grep -q "^PASS  node 3's CPUs allocate from node 3's hot-added memory" "$log"
check "the run leaves no QEMU" no_qemu_left
[ -z "${VN_KERNEL_BUILD_STATE:-}" ] && rm -rf "$VNUMA_STATE_DIR"
finish
