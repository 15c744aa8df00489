#!/bin/bash
# Integration, the set-up of integration-bisect (a ctest fixture): the test
# history of bisect-lib.sh and the cold build of its base commit with the
# tiny-numa recipe, by `vnuma kernel build --repo --rev` into the build tree
# bisect then uses. It runs at nice 19 beside the other integration tests
# (scripts/test.sh runs ctest -j2; they hold the "guests" lock, this one
# does not), so that the build's CPU-minutes come out of the time they leave
# idle (42% of two cores, measured over boot, faults and spread) rather than
# adding to CI's. integration-bisect then bisects in the same state dir.
#   bisect-tree.sh VNUMA_BINARY SOURCE_DIR   (VN_BISECT_STATE: the state dir the two share)
set -u
vnuma=$1
src=$2
renice -n 19 $$ >/dev/null
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
"$vnuma" kernel build tiny-numa --repo "$repo" --rev "$base" >"$w/prebuild.log" 2>&1
rc=$?
sed 's/^/#   /' "$w/prebuild.log" | grep -v '^#   kernel: build: ' | tail -n 8
echo "# tiny-numa built cold at nice 19 in $(($(date +%s) - t0)) s"
check "the base commit builds with tiny-numa (rc $rc)" test "$rc" = 0
check "...from the base commit, which kernel.json records" grep -q "\"commit\": *\"$base\"" \
	"$(sed -n 's/^  config: *\(.*\)\/config$/\1/p' "$w/prebuild.log")/kernel.json"
finish
