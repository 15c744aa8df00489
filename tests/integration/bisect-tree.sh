#!/bin/bash
# Integration, the set-up of integration-bisect (a ctest fixture): the test
# history of bisect-lib.sh and the cold build of its base commit with the
# tiny-numa recipe, by `vnuma kernel build --repo --rev` into the build tree
# bisect then uses. It runs beside the other integration tests (scripts/test.sh
# runs ctest -j2; they hold the "guests" lock, this one does not), so that the
# build's CPU-minutes come out of the time they leave idle (42% of two cores,
# measured over boot, faults and spread) rather than adding to CI's.
# integration-bisect then bisects in the same state dir.
#
# A plain `nice 19` is not enough for that: with sched_autogroup (Debian's
# default) the kernel first shares the CPU fairly between sessions, and
# libvirt starts each QEMU in a session of its own, so nice only ranked the
# build against ctest's own processes and it still took about half a core
# from the guests (158 s over a CI run). So the build runs in a session of its
# own whose autogroup is at nice 19, which weighs it 15 against QEMU's 1024.
#   bisect-tree.sh VNUMA_BINARY SOURCE_DIR   (VN_BISECT_STATE: the state dir the two share)
set -u
vnuma=$1
src=$2
renice -n 19 $$ >/dev/null
# Runs "$@" in a new session at autogroup nice 19 (nice 19 alone where the
# kernel has no autogroups). Ctrl-C and ctest's timeout reach this script's
# process group only, so the trap takes the build's group down with it.
idle_run() {
	setsid sh -c 'echo 19 >/proc/self/autogroup 2>/dev/null; exec "$@"' sh "$@" &
	local pid=$!
	trap 'kill -TERM -- -'"$pid"' 2>/dev/null' EXIT
	trap 'kill -TERM -- -'"$pid"' 2>/dev/null; exit 143' INT TERM
	wait "$pid"
	local rc=$?
	trap - EXIT INT TERM
	return "$rc"
}
export VNUMA_STATE_DIR=${VN_BISECT_STATE:?}
. "$src/tests/integration/lib.sh"
rm -rf "$VNUMA_STATE_DIR"
w=$VNUMA_STATE_DIR/work
repo=$w/linux
mkdir -p "$w"
. "$src/tests/integration/bisect-lib.sh"
t0=$(date +%s)
bisect_history
check "the history holds the planted revert" test -n "$planted"
echo "# history made in $(($(date +%s) - t0)) s"
t0=$(date +%s)
idle_run "$vnuma" kernel build tiny-numa --repo "$repo" --rev "$base" >"$w/prebuild.log" 2>&1
rc=$?
sed 's/^/#   /' "$w/prebuild.log" | grep -v '^#   kernel: build: ' | tail -n 8
echo "# tiny-numa built cold at autogroup nice 19 in $(($(date +%s) - t0)) s"
check "the base commit builds with tiny-numa (rc $rc)" test "$rc" = 0
check "...from the base commit, which kernel.json records" grep -q "\"commit\": *\"$base\"" \
	"$(sed -n 's/^  config: *\(.*\)\/config$/\1/p' "$w/prebuild.log")/kernel.json"
finish
