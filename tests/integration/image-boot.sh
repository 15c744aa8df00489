#!/bin/bash
# Integration: guest-images/tiny.json built (one appliance launch), found in
# the cache on a second build, booted with `vnuma up --image tiny` on
# 4node-amd under TCG: / is /dev/vda (ext4) over the guest's own qcow2
# overlay, the fidelity check passes, the cached image is never written, and
# down leaves no overlay, guest dir, domain or QEMU. About a minute.
#   image-boot.sh VNUMA_BINARY [SOURCE_DIR]
set -u
vnuma=$1
src=${2:-$(cd "$(dirname "$0")/../.." && pwd)}
export VNUMA_ACCEL=${VNUMA_ACCEL:-tcg}
export VNUMA_STATE_DIR=$(mktemp -d /tmp/vnuma-image-boot.XXXXXX)
w=$VNUMA_STATE_DIR/work
. "$src/tests/integration/lib.sh"

cleanup() {
	"$vnuma" down --all >/dev/null 2>&1
	rm -rf "$VNUMA_STATE_DIR"
}
trap cleanup EXIT
mkdir -p "$w"

t0=$(date +%s.%N)
"$vnuma" image build "$src/guest-images/tiny.json" >"$w/build.out" 2>"$w/build.err"
rc=$?
echo "# build: $(head -1 "$w/build.out") ($(echo "$(date +%s.%N) - $t0" | bc) s)"
check "image build tiny" test "$rc" = 0 || { sed 's/^/#   /' "$w/build.err"; finish; }
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
check "up 4node-amd --image tiny" test "$rc" = 0 || { sed 's/^/#   /' "$w/up.err"; finish; }
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
check "no QEMU left" no_qemu_left
check "no domain left" no_domain_left
finish
