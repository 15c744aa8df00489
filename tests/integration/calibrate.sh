#!/bin/bash
# Integration: the calibration scenario (issue 26), calibrate-5pct-2node
# --quick with its default 5 repeats: the same kernel, one variant doing a
# known 5% more work per round. The work itself must come out +5.0% and
# significant, and compare must give each row its detectable change. Whether
# the rounds' 5% shows depends on the host's noise: the run passes (exit 0)
# or says the group is too noisy to tell (exit 3, "too noisy"), never blames
# the kernel (exit 1). About 3-5 minutes on 2 cores (10 quick boots).
#   calibrate.sh VNUMA_BINARY [SOURCE_DIR]
set -u
vnuma=$1
src=${2:-$(cd "$(dirname "$0")/../.." && pwd)}
export VNUMA_ACCEL=${VNUMA_ACCEL:-tcg}
. "$src/tests/integration/lib.sh"
it_state calibrate
g=$VNUMA_STATE_DIR/group

"$vnuma" run "$src/scenarios/calibrate-5pct-2node.json" --quick -o "$g" >"$VNUMA_STATE_DIR/out" 2>"$VNUMA_STATE_DIR/err"
rc=$?
sed 's/^/#   /' "$VNUMA_STATE_DIR/err" | grep -v '^#   boot:'
grep -E '^(PASS|FAIL|NOISY)|observed' "$VNUMA_STATE_DIR/out" | sed 's/^/#   /'
check "the calibration passes or is too noisy to tell, never a kernel failure (rc $rc)" test "$rc" = 0 -o "$rc" = 3
if [ "$rc" = 3 ]; then
	check "...and says why" grep -q 'too noisy to tell' "$VNUMA_STATE_DIR/err"
	check "...each noisy verdict marked so in group.json" grep -q '"verdict": *"too noisy"' "$g/group.json"
	check "...and in run's output" grep -q '^NOISY' "$VNUMA_STATE_DIR/out"
fi
check "10 runs, 5 of each, all complete" sh -c "[ \$(grep -c '\"exit\": *0' '$g/group.json') = 10 ]"
json=$("$vnuma" compare --json "$g" | tr -d ' \n')
check "the work per round is +5.0%, significant" sh -c \
	"echo \"\$1\" | grep -q '\"metric\":\"spin.work\",[^]]*\"name\":\"plus5\",\"n\":5,[^}]*\"change_pct\":5,[^}]*\"significant\":true'" _ "$json"
check "the rounds' detectable change is a figure" sh -c \
	"echo \"\$1\" | grep -q '\"metric\":\"spin.round_s.avg\",[^]]*\"name\":\"plus5\",[^}]*\"detectable_pct\":[0-9]'" _ "$json"
check "compare's table has the detect column" sh -c "'$vnuma' compare '$g' | grep -q 'detect'"
check "result.json records real time" grep -Eq '"time": *"real"' "$g/base/1/result.json"
check "no QEMU left" no_qemu_left
check "no domain left" no_domain_left
finish
