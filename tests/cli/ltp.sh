#!/bin/bash
# A shipped LTP scenario without LTP from the host: `vnuma run` refuses it
# (exit 2, one line saying what to build and pass) before anything is built,
# booted or written, as it refuses an --ltp directory that is no LTP
# install. What --ltp does to the scenario (a read-only share, every LTP
# step's directory) is test-scenario-run's test_suite_ltp_given.
#   ltp.sh VNUMA_BINARY SOURCE_DIR
set -u
vnuma=$1
src=$2
tmp=$(mktemp -d /tmp/vn-ltp.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
. "$(dirname "$0")/../lib.sh"
export VNUMA_STATE_DIR=$tmp/state
unset VNUMA_URI

# refused WHAT WANT ARGS...: exit 2, the one line holding WANT, nothing built or written.
refused() {
	local what=$1 want=$2 out code
	shift 2
	out=$(timeout 60 "$vnuma" run -o "$tmp/out" "$@" 2>&1)
	code=$?
	check "$what: exit 2 (got $code)" test "$code" = 2 || echo "$out"
	check "$what: says why, in one line" test "$(grep -cF -- "$want" <<<"$out"):$(wc -l <<<"$out")" = 1:1 ||
		echo "$out"
	check "$what: nothing built" test ! -e "$VNUMA_STATE_DIR/kernels"
	check "$what: no output dir" test ! -e "$tmp/out"
}

for scn in ltp-numa-2node ltp-numa-4node-amd; do
	refused "$scn without --ltp" \
		"$src/scenarios/$scn.json: step \"numa\" runs LTP from /opt/ltp in the guest, and no LTP is given: build LTP" \
		"$src/scenarios/$scn.json"
done
mkdir -p "$tmp/notltp" "$tmp/a:b/testcases/bin"
refused "--ltp, no testcases/bin" "--ltp $tmp/notltp: no testcases/bin there" --ltp "$tmp/notltp" ltp-numa-2node
refused "--ltp, missing" "--ltp $tmp/none: no testcases/bin there" --ltp "$tmp/none" ltp-numa-2node
refused "--ltp, a colon" "a directory whose path holds ':' cannot be shared" --ltp "$tmp/a:b" ltp-numa-2node
finish
