#!/bin/bash
# Integration: a suite step in a real guest (docs/suites.md). A KTAP program
# run once per test on 2node: "nodes" checks the guest sees two nodes and
# skips one subtest, "fails" fails by design. The run exits 1 (a test
# failed: the kernel's verdict), with a testcase per test in junit.xml and a
# verdict per test in result.json. One TCG boot.
#   suite.sh VNUMA_BINARY [SOURCE_DIR]
set -u
vnuma=$1
src=${2:-$(cd "$(dirname "$0")/../.." && pwd)}
export VNUMA_ACCEL=tcg
. "$src/tests/integration/lib.sh"
it_state suite

scn=$VNUMA_STATE_DIR/suite-e2e.json
out=$VNUMA_STATE_DIR/out
cat >"$scn" <<JSON
{"name": "suite-e2e", "topology": "$src/topologies/2node.xml", "timeout_s": 600,
 "steps": [{"name": "ktap", "workload": "suite", "suite": {"format": "ktap", "timeout_s": 60,
   "command": ["/bin/sh", "-c",
     "case \$1 in nodes) n=\$(ls -d /sys/devices/system/node/node[0-9]* | wc -l); echo 'TAP version 13'; echo 1..2; if [ \$n -ge 2 ]; then echo \"ok 1 two_nodes # \$n nodes\"; else echo 'not ok 1 two_nodes'; fi; echo 'ok 2 hugetlb # SKIP no hugepages reserved';; fails) echo 'TAP version 13'; echo 1..1; echo '# the kernel said no'; echo 'not ok 1 always';; esac",
     "vnuma-suite"],
   "tests": ["nodes", "fails"]}}]}
JSON
t0=$(date +%s)
"$vnuma" run "$scn" -o "$out" >"$VNUMA_STATE_DIR/run.out" 2>"$VNUMA_STATE_DIR/run.err"
rc=$?
echo "run took $(($(date +%s) - t0)) s"
check "a failed test is exit 1" test "$rc" = 1
# TEST VERDICT [REASON|DETAIL]: result.json's tests list has it.
has_test() {
	python3 - "$out/result.json" "$@" <<'PY'
import json, sys
t = {x["name"]: x for x in json.load(open(sys.argv[1]))["tests"]}[sys.argv[2]]
assert t["verdict"] == sys.argv[3], t
assert len(sys.argv) < 5 or sys.argv[4] in (t["reason"], t["detail"]), t
PY
}
check "the guest saw two nodes" has_test nodes:two_nodes pass
check "a skip keeps its reason" has_test nodes:hugetlb skip "no hugepages reserved"
check "the failed test and its diagnostic" has_test fails:always fail "the kernel said no"
check "junit: a testcase per test" test "$(grep -c '<testcase classname="suite-e2e.ktap"' "$out/junit.xml")" = 3
check "junit: the failure" grep -q -A1 'name="fails:always"' "$out/junit.xml"
check "the output of each test is kept" grep -q 'not ok 1 always' "$out/steps/ktap.fails.out"
check "no guest left" sh -c "! '$vnuma' list 2>/dev/null | grep -q suite-e2e"
check "down leaves no QEMU" no_qemu_left
finish
