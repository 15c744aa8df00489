#!/bin/bash
# Integration: guest-images/tiny.json built (one appliance launch), found in
# the cache on a second build, booted with `vnuma up --image tiny` on
# 4node-amd under TCG: / is /dev/vda (ext4) over the guest's own qcow2
# overlay, the fidelity check passes, the cached image is never written, and
# down leaves no overlay, guest dir, domain or QEMU; on 4node-io the root
# disk is node 2's and numactl's I/O placements find their nodes; a run on it whose QEMU
# is killed keeps the disk's /var/log in RESULTS/postmortem. About two minutes.
#   image-boot.sh VNUMA_BINARY [SOURCE_DIR]
set -u
vnuma=$1
src=${2:-$(cd "$(dirname "$0")/../.." && pwd)}
export VNUMA_ACCEL=${VNUMA_ACCEL:-tcg}
. "$src/tests/integration/lib.sh"
it_state image-boot

t0=$(date +%s.%N)
"$vnuma" image build "$src/guest-images/tiny.json" >"$w/build.out" 2>"$w/build.err"
rc=$?
echo "# build: $(head -1 "$w/build.out") ($(echo "$(date +%s.%N) - $t0" | bc) s)"
check "image build tiny" test "$rc" = 0 || { sed 's/^/#   /' "$w/build.err"; finish; exit; }
check "...shows its stages" grep -q "image: disk:" "$w/build.err"
img=$(sed -n 's/^  image: \([^ ]*\) .*/\1/p' "$w/build.out")
log=$(sed -n 's/^  log:   //p' "$w/build.out")
check "...a qcow2 in the cache" test "$(head -c 3 "$img")" = QFI
check "...with its build log" test -s "$log"
sum=$(sha256sum <"$img")
"$vnuma" image build tiny >"$w/build2.out" 2>&1
check "a second build is a cache hit" grep -q "tiny: cached disk" "$w/build2.out"
check "image list shows it" sh -c "'$vnuma' image list | grep -q '^tiny .*disk'"

name=$("$vnuma" up "$src/topologies/4node-amd.xml" --image tiny --timeout 180 2>"$w/up.err")
rc=$?
grep -E "^boot: (agent|fidelity)" "$w/up.err" | sed 's/^/# /'
check "up 4node-amd --image tiny" test "$rc" = 0 || { sed 's/^/#   /' "$w/up.err"; finish; exit; }
check "...fidelity ok" grep -q "fidelity checked: ok" "$w/up.err"
mounts=$("$vnuma" exec "$name" -- cat /proc/mounts </dev/null)
echo "$mounts" | grep ' / ' | sed 's/^/# /'
check "/ is /dev/vda, ext4" sh -c "echo '$mounts' | grep -q '^/dev/vda / ext4 rw'"
check "...the agent runs from the disk" test "$("$vnuma" exec "$name" -- sh -c 'echo ok > /root/written && cat /root/written' </dev/null)" = ok
check "...the guest boots its own overlay" test -f "$VNUMA_STATE_DIR/guests/$name/root.qcow2"

"$vnuma" down "$name" >/dev/null 2>&1
check "down" test $? = 0
check "the cached image was never written" test "$(sha256sum <"$img")" = "$sum"
check "no overlay or guest dir left" test ! -e "$VNUMA_STATE_DIR/guests/$name"

# 4node-io marks its node-2 disk root="yes": booted with an image, the root
# disk sits on node 2, and the NIC on node 3 is configured (slirp), so the
# I/O placements of numactl's regress-io find a node: file:/, block:vda,
# netdev:eth0 and ip:8.8.8.8 (a route through eth0).
name=$("$vnuma" up "$src/topologies/4node-io.xml" --image tiny --timeout 180 2>"$w/io.err")
rc=$?
check "up 4node-io --image tiny: the root disk on node 2" test "$rc" = 0 || sed 's/^/#   /' "$w/io.err"
check "...fidelity ok (the root disk is node 2's device)" grep -q "fidelity checked: ok" "$w/io.err"
check ".../ is vda, on node 2" test "$("$vnuma" exec "$name" -- sh -c 'grep -q "^/dev/vda / ext4" /proc/mounts && cat /sys/block/vda/device/../numa_node' </dev/null)" = 2
for spec in file:/ block:vda netdev:eth0 ip:8.8.8.8; do
	check "...numactl --cpunodebind=$spec runs on the device's node" test "$("$vnuma" exec "$name" -- numactl --cpunodebind=$spec sh -c 'grep Cpus_allowed_list /proc/self/status' </dev/null | tr -d '\t')" = "$( [ $spec = file:/ ] || [ $spec = block:vda ] && echo Cpus_allowed_list:2 || echo Cpus_allowed_list:3)"
done
"$vnuma" down "$name" >/dev/null 2>&1

# Post-mortem: a disk guest whose QEMU dies mid-run leaves its /var/log in the result.
(cd "$src" && exec "$vnuma" run "$src/tests/integration/fixtures/image-postmortem.json" -o "$w/pm") >"$w/pm.log" 2>&1 &
bg=$!
for _ in $(seq 600); do grep -qs marked "$w/pm/steps/die.r0.p0.out" && break; sleep 0.2; done
check "the step wrote its log line" grep -qs marked "$w/pm/steps/die.r0.p0.out"
kill -9 $(qemu_pids) 2>/dev/null
wait "$bg"
rc=$?
check "QEMU killed mid-run: run exits 3" test "$rc" = 3 || sed 's/^/#   /' "$w/pm.log"
check "...its /var/log is kept in postmortem/" grep -q "written before the guest died" "$w/pm/postmortem/var/log/vnuma-marker"
check "...under its own name only once whole (no postmortem.partial)" test ! -e "$w/pm/postmortem.partial"
check "...and the overlay kept aside for it is gone" test ! -e "$w/pm/.root.qcow2"
check "no QEMU left" no_qemu_left
check "no domain left" no_domain_left
check "no guest dir left" test -z "$(ls -A "$VNUMA_STATE_DIR/guests" 2>/dev/null)"
finish
