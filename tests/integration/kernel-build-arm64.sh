#!/bin/bash
# Slow test (ctest -L kernel-build; not in scripts/test.sh): the seed-003
# case on arm64 with kernels cross-built from Debian's linux-source-6.1.
# minimal-numa and fallback-revert for arm64 (one build tree, the revert a
# patch-only rebuild, apart from x86's), a cache hit, an arm64 4node-amd boot
# of the built kernel with the fidelity check, then fallback-4node on the
# revert: node 3's list `3 2 0 1` where the model says `3 2 1 0`, exit 1.
# Exit 77 without the arm64 in-guest programs (scripts/setup.sh --arches).
#   kernel-build-arm64.sh VNUMA_BINARY   (VN_SOURCE_DIR: the repository)
set -u
vnuma=$1
src=${VN_SOURCE_DIR:?}
if [ ! -r /usr/src/linux-source-6.1.tar.xz ]; then
	echo "SKIP: Debian's linux-source-6.1 is not installed" >&2
	exit 0
fi
build=$(dirname "$(realpath "$vnuma")")
if [ ! -x "$build/arch/arm64/vnuma-agent" ]; then
	echo "# skipped: no arm64 in-guest programs in $build/arch (scripts/setup.sh --arches, then rebuild)"
	exit 77
fi
export VNUMA_STATE_DIR=${VN_KERNEL_BUILD_STATE:-$(mktemp -d /tmp/vnuma-kernel-build.XXXXXX)}
export VNUMA_ACCEL=tcg
. "$src/tests/integration/lib.sh"
w=$VNUMA_STATE_DIR/work
mkdir -p "$w"
echo "state: $VNUMA_STATE_DIR"
cache=$VNUMA_STATE_DIR/cache/kernels

t0=$(date +%s)
"$vnuma" kernel build --arch arm64 "$src/kernels/minimal-numa.json" >"$w/b1.out" 2>"$w/b1.err"
check "minimal-numa cross-builds for arm64 (exit 0)" test $? = 0
t1=$(date +%s)
cat "$w/b1.out"
check "...says so" grep -q '^minimal-numa: built .* for arm64' "$w/b1.out"
check "...an arm64 Image" sh -c "file -L \"\$(ls '$cache'/kernels/*/Image | head -1)\" | grep -q 'ARM64\\|aarch64'"
check "...its kernel.json says arm64" grep -q '"arch": *"arm64"' "$cache"/kernels/*/kernel.json
check "a second build is a cache hit" sh -c "'$vnuma' kernel build --arch arm64 '$src/kernels/minimal-numa.json' | grep -q ': cached '"
"$vnuma" kernel build --arch arm64 "$src/kernels/fallback-revert.json" >"$w/b2.out" 2>"$w/b2.err"
check "fallback-revert cross-builds for arm64 (exit 0)" test $? = 0
t2=$(date +%s)
check "...on the same build tree (patch only)" test "$(ls -d "$cache"/work/*/ | wc -l)" = 1
check "kernel list shows both, arm64" test "$("$vnuma" kernel list | grep -c ' arm64 ')" = 2
echo "# arm64 minimal-numa cold: $((t1 - t0)) s; fallback-revert (patch only): $((t2 - t1)) s"

"$vnuma" up "$src/topologies/4node-amd.xml" --arch arm64 --kernel "$src/kernels/minimal-numa.json" --name k64 \
	--timeout 300 >"$w/up.out" 2>"$w/up.err"
check "arm64 4node-amd boots the built kernel, fidelity ok (exit 0)" test $? = 0
sed 's/^/#   /' "$w/up.err"
release=$(sed -n 's/^minimal-numa: built \([^ ]*\) .*/\1/p' "$w/b1.out")
check "...the guest runs it ($release)" sh -c "'$vnuma' exec k64 -- uname -r </dev/null | grep -qx '$release'"
check "...on aarch64" sh -c "'$vnuma' exec k64 -- uname -m </dev/null | grep -qx aarch64"
check "...the SLIT came by device tree" \
	sh -c "'$vnuma' exec k64 -- dmesg </dev/null | grep -q 'OF: NUMA: parsing numa-distance-map-v1'"
check "down k64" "$vnuma" down k64

"$vnuma" run "$src/scenarios/fallback-4node.json" --arch arm64 --kernel "$src/kernels/fallback-revert.json" \
	-o "$w/run" >"$w/run.log" 2>&1
rc=$?
sed 's/^/#   /' "$w/run.log" | grep -v 'libvirt'
check "fallback-4node on the arm64 revert fails as the kernel did (exit 1, not 3)" test "$rc" = 1
check "...node 3 falls back 3 2 0 1" grep -q '3 2 0 1' "$w/run.log"
check "nothing left running" no_qemu_left
check "no domain left" no_domain_left
finish
