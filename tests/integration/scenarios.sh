#!/bin/bash
# Integration: runs shipped scenarios for real under TCG with --quick, and
# checks the exit codes and the results directory CI relies on.
#   scenarios.sh VNUMA_BINARY [SOURCE_DIR]
set -u
vnuma=$1
src=${2:-$(cd "$(dirname "$0")/../.." && pwd)}
. "$src/tests/integration/lib.sh"
it_state scn
out=$VNUMA_STATE_DIR/results
run() { # NAME SCENARIO [ARGS...] -> RC, output in $out/NAME.log
	local name=$1
	shift
	"$vnuma" run "$@" -o "$out/$name" >"$out/$name.log" 2>&1
	RC=$?
	echo "# run $name: exit $RC"
	sed 's/^/#   /' "$out/$name.log" | grep -v 'libvirt\|hostname: vm\|XATTR'
}
mkdir -p "$out"

# 1. Fallback lists and where node 3's memory lands under membind 0,1.
run fallback "$src/scenarios/fallback-4node.json" --quick
check "fallback-4node exits 0" test "$RC" = 0
check "fallback-4node writes result.json and junit.xml" test -s "$out/fallback/result.json" -a -s "$out/fallback/junit.xml"
check "junit.xml has one testcase per assertion and no failure" \
	sh -c "[ \$(grep -c '<testcase' '$out/fallback/junit.xml') -ge 3 ] && ! grep -q '<failure' '$out/fallback/junit.xml'"
check "result.json records kernel identity and accelerator" \
	sh -c "grep -q '\"release\"' '$out/fallback/result.json' && grep -q '\"accelerator\"' '$out/fallback/result.json' && grep -q '\"cmdline\": *\"[^\"]*console=ttyS0' '$out/fallback/result.json'"
check "samples.jsonl has samples" sh -c "[ \$(wc -l < '$out/fallback/samples.jsonl') -ge 1 ]"
check "before/ and after/ snapshots" test -s "$out/fallback/before/vmstat" -a -s "$out/fallback/after/vmstat"
check "fallback run leaves no QEMU" no_qemu_left

# 2. The same scenario judged against the pre-5.15 model must fail (exit 1), naming node 3.
sed 's/"model": *"[^"]*"/"model": "pre-5.15"/' "$src/scenarios/fallback-4node.json" >"$VNUMA_STATE_DIR/fallback-old.json"
sed -i "s#\"topology\": *\"[^\"]*\"#\"topology\": \"$src/topologies/4node-amd.xml\"#" "$VNUMA_STATE_DIR/fallback-old.json"
run fallback-old "$VNUMA_STATE_DIR/fallback-old.json" --quick
check "a kernel that disagrees with the asserted model exits 1" test "$RC" = 1
check "...and the failure names node 3" grep -q "Node 3: expected 3 2 0 1, kernel printed 3 2 1 0" "$out/fallback-old.log"
check "...and junit.xml carries a failure" grep -q "<failure" "$out/fallback-old/junit.xml"

# 3. Memory follows a moved task under automatic NUMA balancing.
run memfollow "$src/scenarios/memfollow-2node.json" --quick
check "memfollow-2node exits 0" test "$RC" = 0
check "pages migrate (numa_pages_migrated grows across samples.jsonl)" sh -c "
	first=\$(head -1 '$out/memfollow/samples.jsonl' | grep -o '\"numa_pages_migrated\":[0-9]*' | cut -d: -f2)
	last=\$(tail -1 '$out/memfollow/samples.jsonl' | grep -o '\"numa_pages_migrated\":[0-9]*' | cut -d: -f2)
	[ -n \"\$first\" ] && [ \"\$last\" -gt \"\$first\" ]"
# The seed scenario counts locality (#27): the map proven on both nodes, the
# matrix in result.json adding up to the total, a remote fraction for node
# 0's CPUs (where half the processes were moved), a matrix per sample.
check "memfollow-2node's locality map is proven on both nodes" test "$(grep -c '^node .* bound' "$out/memfollow/locality-proof.txt" 2>/dev/null)" = 2
check "...its figures add up, with node 0's CPUs' remote fraction and a matrix per sample" python3 - "$out/memfollow" <<'PY'
import json, math, sys
d = sys.argv[1]
m = json.load(open(d + "/result.json"))["metrics"]
cells = [m["locality.matrix.cpu%d.mem%d" % (i, j)] for i in range(2) for j in range(2)]
assert m["locality.accesses"] > 0 and sum(cells) == m["locality.accesses"], cells
f = m["locality.step.memfollow.cpu0.remote_fraction.user"]
assert 0 <= f <= 1, f
samples = [json.loads(l) for l in open(d + "/samples.jsonl")]
assert samples and all(len(s["locality"]["matrix"]) == 2 for s in samples)
print("# memfollow-2node: node 0's CPUs' user remote fraction %.3f, all CPUs' %.3f, %d accesses" % (
    f, m["locality.remote_fraction.user"], m["locality.accesses"]))
PY

# 4. Bad scenarios are exit 2 and boot nothing; an interrupted run is marked incomplete.
"$vnuma" run "$src/tests/scenario-bad/$(ls "$src/tests/scenario-bad" | grep '\.json$' | head -1)" >/dev/null 2>&1
check "a malformed scenario exits 2" test $? = 2
"$vnuma" run "$src/scenarios/memfollow-2node.json" --quick -o "$out/intr" >/dev/null 2>&1 &
rpid=$!
for _ in $(seq 100); do [ -s "$out/intr/samples.jsonl" ] && break; sleep 0.3; done
kill -INT "$rpid"
wait "$rpid"
check "an interrupted run exits 3" test $? = 3
check "...and leaves result.json marked incomplete" grep -Eq '"complete": ?false' "$out/intr/result.json"
check "...and leaves no QEMU" no_qemu_left

# 5. A sampler that dies under the run: the samples were not observed, so exit 3 with the reason, and
# the counter assertion that would fail is not judged (a broken testbed is never a failed kernel).
cat >"$VNUMA_STATE_DIR/sampler-dies.json" <<EOF
{"name": "sampler-dies", "topology": "$src/topologies/2node.xml",
 "steps": [{"name": "kill", "workload": "cmd",
            "command": ["sh", "-c", "sleep 2; kill -9 \$(pidof vnuma-sample)"]}],
 "assertions": [{"type": "counter", "counter": "numa_pages_migrated", "op": ">", "value": 1000000000}]}
EOF
run sampler-dies "$VNUMA_STATE_DIR/sampler-dies.json"
check "a run whose sampler died exits 3" test "$RC" = 3
check "...saying so" grep -q "the sampler ended before the run did" "$out/sampler-dies.log"
check "...result.json incomplete, no verdict" sh -c "grep -Eq '\"complete\": ?false' '$out/sampler-dies/result.json' &&
	grep -q 'the sampler ended' '$out/sampler-dies/result.json' && ! grep -q '\"verdict\"' '$out/sampler-dies/result.json'"
check "...junit.xml an error, not a failure" sh -c "grep -q '<error' '$out/sampler-dies/junit.xml' && ! grep -q '<failure' '$out/sampler-dies/junit.xml'"
check "...and leaves no QEMU" no_qemu_left

# 6. A scenario's "repeats" is a matrix's: --repeats 1 asks for one run, and one run runs its steps once,
# its outputs named as docs/ci.md says (steps/STEP.r0.pI.out).
cat >"$VNUMA_STATE_DIR/once.json" <<EOF
{"name": "once", "topology": "$src/topologies/2node.xml", "repeats": 2,
 "steps": [{"name": "once", "workload": "cmd", "command": ["echo", "ran"]}]}
EOF
run once "$VNUMA_STATE_DIR/once.json" --repeats 1 --quick
check "--repeats 1 of a scenario with repeats 2 exits 0" test "$RC" = 0
check "...one step output, r0's, and no r1" sh -c "[ \$(ls '$out/once/steps' | grep -c '\\.out\$') = 1 ] &&
	test -f '$out/once/steps/once.r0.p0.out' && ! ls '$out/once/steps' | grep -q '\\.r1\\.'"
check "...and the step ran once" sh -c "[ \$(cat '$out/once/steps/'*.out | grep -c '^ran\$') = 1 ]"
check "...and leaves no QEMU" no_qemu_left

finish
