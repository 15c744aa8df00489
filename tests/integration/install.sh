#!/bin/bash
# Integration: an installed vnuma (`cmake --install` into a temporary prefix)
# boots a guest by topology name from a directory outside the source tree,
# with its in-guest programs and data taken from the prefix.
#   install.sh CMAKE BUILD_DIR SOURCE_DIR
set -u
cmake=$1 build=$(cd "$2" && pwd) src=$(cd "$3" && pwd)
tmp=$(mktemp -d /tmp/vn-it-install.XXXXXX)
export VNUMA_STATE_DIR=$tmp/state
export VNUMA_ACCEL=${VNUMA_ACCEL:-tcg}
unset VNUMA_HELPER_DIR VNUMA_KERNELS_DIR
p=$tmp/prefix
VN_TEST_VERBOSE=1
. "$(dirname "$0")/../lib.sh"
cleanup() {
	[ -x "$p/bin/vnuma" ] && "$p/bin/vnuma" down --all >/dev/null 2>&1
	rm -rf "$tmp"
}
trap cleanup EXIT

"$cmake" --install "$build" --prefix "$p" >"$tmp/install.log" 2>&1 || {
	cat "$tmp/install.log"
	exit 1
}
mkdir "$tmp/work"
cd "$tmp/work" || exit 1
case $PWD in "$src"*) echo "install.sh: $PWD is inside the source tree"; exit 1 ;; esac

t0=$(date +%s.%N)
name=$("$p/bin/vnuma" up 2node --timeout 180 2>"$tmp/up.err")
rc=$?
echo "# up 2node: exit $rc in $(echo "$(date +%s.%N) - $t0" | bc) s"
check "installed vnuma: up 2node (a name) exits 0" test "$rc" = 0
[ "$rc" = 0 ] || sed 's/^/#   /' "$tmp/up.err"
check "up printed the guest's name" test "$name" = 2node
check "the topology came from the prefix" sh -c "'$p/bin/vnuma' status '$name' 2>/dev/null | grep -qF '$p/share/vnuma/topologies/2node.xml'"
check "exec NAME -- numactl -H shows 2 nodes" sh -c "'$p/bin/vnuma' exec '$name' -- numactl -H | grep -q 'available: 2 nodes (0-1)'"
# The guest got the installed in-guest programs (packed from PREFIX/libexec/vnuma).
check "the guest has the installed sampler and workloads" sh -c "'$p/bin/vnuma' exec '$name' -- ls /usr/lib/vnuma | grep -q vnuma-wl-memfollow"
check "down NAME" "$p/bin/vnuma" down "$name"
check "down leaves no guest dir" test ! -e "$VNUMA_STATE_DIR/guests/$name"
check "topo validate NAME (installed)" sh -c "'$p/bin/vnuma' topo validate 8node-snc | grep -q '^8node-snc: ok: '"
finish
