#!/bin/bash
# The shipped kselftest scenario without kselftest from the host: `vnuma
# run` refuses it (exit 2, one line saying what to pass) before anything is
# built, booted or written; so do run --kselftest with two kernels and
# `vnuma kernel selftests` with a bad test name or no such kernel recipe.
# What --kselftest builds is test-selftests' (offline, a fake tree) and
# tests/integration/kselftest.sh's (linux-source-6.1, a boot).
#   kselftest.sh VNUMA_BINARY SOURCE_DIR
set -u
vnuma=$1
src=$2
tmp=$(mktemp -d /tmp/vn-kselftest.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
. "$(dirname "$0")/../lib.sh"
export VNUMA_STATE_DIR=$tmp/state
unset VNUMA_URI

# refused WHAT WANT ARGS...: exit 2, the one line holding WANT, nothing built or written.
refused() {
	local what=$1 want=$2 out code
	shift 2
	out=$(timeout 60 "$vnuma" "$@" 2>&1)
	code=$?
	check "$what: exit 2 (got $code)" test "$code" = 2 || echo "$out"
	check "$what: says why, in one line" test "$(grep -cF -- "$want" <<<"$out"):$(wc -l <<<"$out")" = 1:1 ||
		echo "$out"
	check "$what: nothing built" test ! -e "$VNUMA_STATE_DIR/cache/kernels/selftests"
	check "$what: no output dir" test ! -e "$tmp/out"
}

scn=$src/scenarios/kselftest-mm-4node-amd.json
refused "run without --kselftest" \
	"$scn: step \"migration\" runs /opt/kselftest/vm/migration, and no kselftest is given: pass --kselftest" \
	run -o "$tmp/out" "$scn"
refused "run --kselftest, two kernels" "--kselftest builds one kernel's tests" \
	run -o "$tmp/out" --kselftest --kernel stock --kernel stock "$scn"
refused "selftests, a bad name" "--tests: '../x' is not a test's name" kernel selftests --tests migration,../x
refused "selftests, no such recipe" "kernel nosuch: kselftest is built from a kernel's source tree" \
	kernel selftests --kernel nosuch
finish
