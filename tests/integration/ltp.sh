#!/bin/bash
# Slow: LTP's NUMA syscall tests for real, with the user's LTP build.
# `vnuma run ltp-numa-2node --ltp DIR` and ltp-numa-4node-amd, from a fresh
# state, no hand work: each must exit 0 (only the failures that
# scenarios/known/ltp-6.1.json lists), every test of the scenario judged
# (a testcase in junit.xml, a verdict in result.json), none failed, broken
# or timed out. CI has no LTP: without VNUMA_LTP_DIR (LTP's install
# directory, docs/suites.md "Building LTP") the test is skipped.
# VNUMA_LTP_SCENARIOS picks the scenarios (default both). ~2.5 min each
# on this project's 2-core machine.
#   ltp.sh VNUMA_BINARY [SOURCE_DIR]
set -u
vnuma=$1
src=${2:-$(cd "$(dirname "$0")/../.." && pwd)}
export VNUMA_ACCEL=tcg
. "$src/tests/integration/lib.sh"
[ -n "${VNUMA_LTP_DIR:-}" ] || { echo "SKIP: VNUMA_LTP_DIR is not set (LTP's install directory)"; exit 77; }
[ -d "$VNUMA_LTP_DIR/testcases/bin" ] || { echo "FAIL: $VNUMA_LTP_DIR has no testcases/bin"; exit 1; }
it_state ltp

for scn in ${VNUMA_LTP_SCENARIOS:-ltp-numa-2node ltp-numa-4node-amd}; do
	out=$VNUMA_STATE_DIR/$scn
	t0=$(date +%s)
	"$vnuma" run "$src/scenarios/$scn.json" --ltp "$VNUMA_LTP_DIR" -o "$out" \
		>"$VNUMA_STATE_DIR/$scn.out" 2>"$VNUMA_STATE_DIR/$scn.err"
	rc=$?
	echo "$scn took $(($(date +%s) - t0)) s"
	check "$scn: only known failures (exit 0, got $rc)" test "$rc" = 0 || tail -5 "$VNUMA_STATE_DIR/$scn.err"
	# Each test the scenario lists has exactly one verdict, and none is a failure or a broken harness.
	check "$scn: a verdict per test, none failed" python3 - "$src/scenarios/$scn.json" "$out/result.json" <<'PY'
import json, sys
want = [t for s in json.load(open(sys.argv[1]))["steps"] for t in s["suite"]["tests"]]
got = json.load(open(sys.argv[2]))["tests"]
for t in got:
    if t["verdict"] != "pass":
        print("  %s: %s: %s" % (t["name"], t["verdict"], t["reason"]))
assert [t["name"] for t in got] == want, [t["name"] for t in got]
bad = [t["name"] for t in got if t["verdict"] not in ("pass", "skip", "xfail", "xpass")]
assert not bad, bad
PY
	n=$(python3 -c 'import json,sys; print(sum(len(s["suite"]["tests"]) for s in json.load(open(sys.argv[1]))["steps"]))' \
		"$src/scenarios/$scn.json")
	# The tests' testcases and the step's own verdict.
	check "$scn: a testcase per test in junit.xml ($n and the step's)" \
		test "$(grep -c '<testcase' "$out/junit.xml")" -ge $((n + 1))
	"$vnuma" down "$scn" >/dev/null 2>&1
done
check "nothing left" no_qemu_left
finish
