#!/bin/bash
# Integration: the calibration scenario (issue 26), calibrate-5pct-2node
# --quick --virtual-time with its default 5 repeats: the same kernel, one
# variant doing a known 5% more work per round. In virtual time the host's
# load no longer reaches the guest's clock, so the rounds must come out 4-6%
# longer and significant (exit 0), and compare must give each row its
# detectable change. (In real time on a loaded host the same group is too
# noisy to tell, exit 3: test-scenario-assert and test-compare check that
# verdict.) About 5-7 minutes on 2 cores (10 quick boots in virtual time),
# a cold virtual-time boot interrupted while its clock settles, and one that
# never idles, so that its clock never settles (90 s).
#   calibrate.sh VNUMA_BINARY [SOURCE_DIR]
set -u
vnuma=$1
src=${2:-$(cd "$(dirname "$0")/../.." && pwd)}
export VNUMA_ACCEL=${VNUMA_ACCEL:-tcg}
. "$src/tests/integration/lib.sh"
it_state calibrate
g=$VNUMA_STATE_DIR/group

"$vnuma" run "$src/scenarios/calibrate-5pct-2node.json" --quick --virtual-time -o "$g" >"$VNUMA_STATE_DIR/out" 2>"$VNUMA_STATE_DIR/err"
rc=$?
sed 's/^/#   /' "$VNUMA_STATE_DIR/err" | grep -v '^#   boot:'
grep -E '^(PASS|FAIL|NOISY)|observed' "$VNUMA_STATE_DIR/out" | sed 's/^/#   /'
check "the planted 5% comes out 4-6% and significant in virtual time (rc $rc)" test "$rc" = 0
check "...both bounds pass" sh -c "[ \$(grep -c '^PASS' '$VNUMA_STATE_DIR/out') -ge 2 ]"
check "10 runs, 5 of each, all complete" sh -c "[ \$(grep -c '\"exit\": *0' '$g/group.json') = 10 ]"
json=$("$vnuma" compare --json "$g" | tr -d ' \n')
check "the work per round is +5.0%, significant" sh -c \
	"echo \"\$1\" | grep -q '\"metric\":\"spin.work\",[^]]*\"name\":\"plus5\",\"n\":5,[^}]*\"change_pct\":5,[^}]*\"significant\":true'" _ "$json"
check "the rounds' change is significant" sh -c \
	"echo \"\$1\" | grep -q '\"metric\":\"spin.round_s.avg\",[^]]*\"name\":\"plus5\",[^}]*\"significant\":true'" _ "$json"
check "the rounds' detectable change is a figure" sh -c \
	"echo \"\$1\" | grep -q '\"metric\":\"spin.round_s.avg\",[^]]*\"name\":\"plus5\",[^}]*\"detectable_pct\":[0-9]'" _ "$json"
check "compare's table has the detect column" sh -c "'$vnuma' compare '$g' | grep -q 'detect'"
check "...and says what rates in virtual time cannot show" sh -c "'$vnuma' compare '$g' | grep -q 'one stream of instructions'"
check "result.json records virtual time" grep -Eq '"time": *"virtual"' "$g/base/1/result.json"
check "...the guest's vCPUs and its host's CPUs" sh -c "grep -Eq '\"vcpus\": *4,' '$g/base/1/result.json' &&
	grep -Eq '\"host_cpus\": *[1-9]' '$g/base/1/result.json'"
check "...and compare says nothing of shared host CPUs in virtual time" sh -c "! '$vnuma' compare '$g' | grep -q 'host CPUs'"
# Settled (testbed/boot.c): every run began with the guest's clock 1800 s or more ahead of the host's, and
# ended still ahead, so QEMU's shift stayed 0 throughout; unsettled, a restored guest's rounds ran 2-12x slower.
check "the lead is recorded for all 10 runs" sh -c "[ \$(cat '$g'/*/*/result.json | grep -c '\"icount_lead_min_s\"') = 10 ]"
check "every run began 1800 s ahead and stayed ahead" sh -c "cat '$g'/*/*/result.json | tr -d ' ' |
	awk -F'[:,]' '/\"icount_lead_s\"/ { if (\$2 < 1800) bad++ } /\"icount_lead_min_s\"/ { if (\$2 <= 0) bad++ } END { exit bad > 0 }'"
check "the base's rounds/s agree within 0.5%" sh -c \
	"echo \"\$1\" | grep -Eq '\"metric\":\"spin.rounds_per_s\",[^]]*\"name\":\"base\",\"n\":5,\"mean\":[0-9.]+,\"stddev\":(0\\.|[0-9.]+e-)'" _ "$json"

# Ctrl-C while a cold boot's clock settles: exit 3, it says so, and the guest is gone with it.
"$vnuma" up "$src/topologies/2node.xml" --virtual-time --cold --name settle >/dev/null 2>"$VNUMA_STATE_DIR/settle.err" &
upid=$!
for _ in $(seq 1200); do grep -q settling "$VNUMA_STATE_DIR/settle.err" && break; sleep 0.1; done
kill -INT "$upid"
wait "$upid"
settle_rc=$?
sed 's/^/#   /' "$VNUMA_STATE_DIR/settle.err" | tail -n 4
check "Ctrl-C while the clock settles exits 3" test "$settle_rc" = 3
check "...and says it was settling" grep -q "interrupted while guest .*clock settled; destroyed it" "$VNUMA_STATE_DIR/settle.err"
check "no QEMU left" no_qemu_left
check "no domain left" no_domain_left

# A guest that never idles (idle=poll spins in the idle loop) never lets its clock run ahead: settling gives up
# at the boot deadline with exit 3 and the console's tail, not a verdict, and leaves nothing running. One vCPU:
# spinning vCPUs share virtual time's one instruction stream with the boot CPU, and with 2node's four a loaded
# CI host had not booted it in 90 s; one boots in 7.4 s here (about 10 s beside two CPU hogs). The boot gets half the
# deadline where PVH is not yet proven for this kernel (testbed/up.c), and settling the rest.
cat >"$VNUMA_STATE_DIR/1cpu.xml" <<'EOF'
<topology name="1cpu">
  <description>One node, one vCPU.</description>
  <cpu sockets="1" cores="1" threads="1"/>
  <node id="0" cpus="0" memory="256M"/>
  <distances><row node="0">10</row></distances>
</topology>
EOF
"$vnuma" up "$VNUMA_STATE_DIR/1cpu.xml" --virtual-time --cold --append idle=poll --timeout 90 --name busy \
	>/dev/null 2>"$VNUMA_STATE_DIR/busy.err"
busy_rc=$?
grep -v '^\[' "$VNUMA_STATE_DIR/busy.err" | grep -E '^(vnuma|boot: settling)' | sed 's/^/#   /'
check "a guest that never idles: settling times out with exit 3" test "$busy_rc" = 3
check "...says the guest does not idle" grep -q "virtual time: its clock leads the host's by .* the guest does not idle" \
	"$VNUMA_STATE_DIR/busy.err"
check "...with the console's tail" grep -q -- "--- last lines of the console log ---" "$VNUMA_STATE_DIR/busy.err"
check "no QEMU left" no_qemu_left
check "no domain left" no_domain_left
finish
