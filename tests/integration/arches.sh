#!/bin/bash
# Integration: the other architectures (docs/arches.md). One state dir, so
# each architecture's Debian kernel and busybox are downloaded once (~40 s
# each): an arm64 boot of 4node-amd with the fidelity check, a ppc64le boot
# of a 4-node shape whose fallback lists only pseries' boot-time state
# explains (tests/fixtures/arches/cpuless-tie.xml), an arm64 busybox disk
# image built and booted (a Debian one refused), fallback-4node run on
# arm64, and what an architecture cannot be given refused before any boot.
# Exit 77 (skipped) without the cross-built in-guest programs, i.e. on a
# machine set up without `scripts/setup.sh --arches`; CI sets it up with it.
#   arches.sh VNUMA_BINARY [SOURCE_DIR]
set -u
vnuma=$1
src=${2:-$(cd "$(dirname "$0")/../.." && pwd)}
. "$src/tests/integration/lib.sh"
build=$(dirname "$(realpath "$vnuma")")
for a in arm64 ppc64le; do
	if [ ! -x "$build/arch/$a/vnuma-agent" ]; then
		echo "# skipped: no $a in-guest programs in $build/arch (scripts/setup.sh --arches, then rebuild)"
		exit 77
	fi
done
it_state arches

# Refused offline, exit 2, before anything is fetched or booted.
"$vnuma" up "$src/topologies/4node-cxl.xml" --arch arm64 >"$w/cxl.out" 2>&1
check "up --arch arm64 refuses an HMAT topology (exit 2)" test "$?" = 2
check "... naming the file, line and why" grep -q '4node-cxl.xml:[0-9]*: arm64: HMAT is an ACPI table' "$w/cxl.out"
check "... before fetching anything" test ! -e "$VNUMA_STATE_DIR/cache/arches"

t0=$(date +%s)
"$vnuma" up "$src/topologies/4node-amd.xml" --arch arm64 --name a64 --timeout 240 >"$w/a64.out" 2>"$w/a64.err"
check "arm64 4node-amd boots, fidelity ok (exit 0)" test "$?" = 0
sed 's/^/#   /' "$w/a64.err"
echo "# arm64: $(($(date +%s) - t0)) s, first use (download) included"
check "arm64: shape ok" grep -q '^shape (nodes, distances, CPUs, memory): ok$' "$w/a64.err"
check "arm64: fallback order ok" grep -q '^fallback order (model 5.18): ok$' "$w/a64.err"
check "arm64: the guest is aarch64" sh -c "'$vnuma' exec a64 -- uname -m </dev/null | grep -qx aarch64"
check "arm64: the SLIT came by device tree" sh -c "'$vnuma' exec a64 -- dmesg </dev/null | grep -q 'OF: NUMA: parsing numa-distance-map-v1'"
check "arm64: node 3's distances" sh -c "'$vnuma' exec a64 -- cat /sys/devices/system/node/node3/distance </dev/null | grep -qx '32 32 12 10'"
check "arm64: down" "$vnuma" down a64

# A disk image of arm64's own busybox root (libguestfs writes ext4 whatever the root's architecture).
"$vnuma" image build --arch arm64 "$src/guest-images/tiny.json" >"$w/img.out" 2>"$w/img.err"
check "image build --arch arm64 tiny (exit 0)" test "$?" = 0
check "...says arm64" grep -q '^tiny: built disk for arm64' "$w/img.out"
"$vnuma" up "$src/topologies/2node.xml" --arch arm64 --image tiny --name i64 --timeout 240 >"$w/i64.out" 2>"$w/i64.err"
check "arm64 2node boots from it, fidelity ok (exit 0)" test "$?" = 0
check "...its root is the disk" sh -c "'$vnuma' exec i64 -- cat /proc/mounts </dev/null | grep -q '^/dev/vda / ext4'"
check "...its busybox is arm64's" sh -c "'$vnuma' exec i64 -- uname -m </dev/null | grep -qx aarch64"
check "i64: down" "$vnuma" down i64
"$vnuma" image build --arch arm64 "$src/guest-images/debian-12.json" >"$w/deb.out" 2>&1
check "a debootstrap root for arm64 is refused (exit 2)" test "$?" = 2
check "...saying what it needs" grep -q 'second stage runs arm64 programs (needs qemu-user-static and binfmt_misc)' "$w/deb.out"

t0=$(date +%s)
# Snapshots on, as a user has them: a pseries guest must boot without one (a restored one never answers).
VNUMA_WARM_CACHE_MAX=8G "$vnuma" up "$src/tests/fixtures/arches/cpuless-tie.xml" --arch ppc64le --name p64 \
	--timeout 300 >"$w/p64.out" 2>"$w/p64.err"
check "ppc64le cpuless-tie boots, fidelity ok (exit 0)" test "$?" = 0
check "...without a snapshot" sh -c "! grep -q 'snapshot' '$w/p64.err'"
sed 's/^/#   /' "$w/p64.err"
echo "# ppc64le: $(($(date +%s) - t0)) s, first use (download) included"
check "ppc64le: fallback order ok" grep -q '^fallback order (model 5.18): ok$' "$w/p64.err"
check "ppc64le: the kernel's lists are pseries' (0 2 3 1)" \
	sh -c "'$vnuma' exec p64 -- dmesg </dev/null | grep -q 'Fallback order for Node 0: 0 2 3 1'"
check "ppc64le: FORM2 distances (the table is in the device tree)" \
	sh -c "'$vnuma' exec p64 -- ls /proc/device-tree/rtas/ </dev/null | grep -qx 'ibm,numa-distance-table'"
check "ppc64le: down" "$vnuma" down p64

"$vnuma" run "$src/scenarios/fallback-4node.json" --arch arm64 --quick -o "$w/run" >"$w/run.log" 2>&1
check "fallback-4node on arm64 passes (exit 0)" test "$?" = 0
sed 's/^/#   /' "$w/run.log" | grep -v 'libvirt'
check "its scenario.json says arm64" grep -q '"arch": *"arm64"' "$w/run/scenario.json"
check "its result.json says why TCG" grep -q 'arm64 guest on an x86_64 host' "$w/run/result.json"

check "nothing left running" no_qemu_left
check "no domain left" no_domain_left
finish
