#!/bin/bash
# Slow leak test (ctest label "slow", not run by default): VN_CYCLES (default
# 100) up/down cycles of one guest under TCG. Counts domains, QEMU processes,
# sockets and state-dir files after a first warm-up cycle (which fills the
# initramfs cache) and again after the last; every count must be unchanged,
# and the files must be the same paths.
#   cycles.sh VNUMA_BINARY [SOURCE_DIR]
set -u
vnuma=$1
src=${2:-$(cd "$(dirname "$0")/../.." && pwd)}
cycles=${VN_CYCLES:-100}
export VNUMA_ACCEL=${VNUMA_ACCEL:-tcg}
export VNUMA_STATE_DIR=$(mktemp -d /tmp/vnuma-cycles.XXXXXX)
snap=$(mktemp -d /tmp/vnuma-cycles-snap.XXXXXX)
. "$src/tests/integration/lib.sh"

cleanup() {
	"$vnuma" down --all >/dev/null 2>&1
	rm -rf "$VNUMA_STATE_DIR" "$snap"
}
trap cleanup EXIT
cycle() { # -> 0 when up and down both succeeded
	"$vnuma" up --name leak "$src/topologies/2node.xml" >/dev/null 2>"$snap/up.err" &&
		"$vnuma" down leak >/dev/null 2>"$snap/down.err"
}
count() { # WHAT -> a number
	case $1 in
	domains) vnuma_domains ;;
	qemu) qemu_pids | wc -l ;;
	sockets) find "$VNUMA_STATE_DIR" -type s | wc -l ;;
	files) find "$VNUMA_STATE_DIR" -type f | wc -l ;;
	esac
}
snapshot() { # NAME
	for w in domains qemu sockets files; do count $w >"$snap/$1.$w"; done
	find "$VNUMA_STATE_DIR" \( -type f -o -type s -o -type l \) | sort >"$snap/$1.paths"
}

check "warm-up cycle" cycle
snapshot before
failed=0
t0=$(date +%s)
for i in $(seq "$cycles"); do
	if ! cycle; then
		failed=$((failed + 1))
		echo "# cycle $i failed:"
		sed 's/^/#   /' "$snap/up.err" "$snap/down.err"
		"$vnuma" down --all >/dev/null 2>&1
	fi
done
echo "# $cycles cycles in $(($(date +%s) - t0)) s"
snapshot after
check "all $cycles up/down cycles succeeded ($failed failed)" test "$failed" = 0
for w in domains qemu sockets files; do
	check "$w: $(cat "$snap/before.$w") before, $(cat "$snap/after.$w") after" \
		test "$(cat "$snap/before.$w")" = "$(cat "$snap/after.$w")"
done
check "the same state-dir paths before and after" diff "$snap/before.paths" "$snap/after.paths"
check "no domain and no QEMU left" test "$(cat "$snap/after.domains")$(cat "$snap/after.qemu")" = 00

finish
