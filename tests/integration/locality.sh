#!/bin/bash
# Integration: locality accounting (issue 27, docs/locality.md) under TCG. On
# 2 and 4 nodes, stream on node 0's CPUs with its memory bound to the last
# node has a high user remote fraction, and bound to node 0 a low one (the
# locality assertion judges node 0's CPUs' accesses during the step: the sampler and the
# agent run elsewhere, from memory the scheduler may have moved them away
# from); each boot's map proof passed on every node;
# the matrix adds up to the accesses counted; samples.jsonl carries a matrix
# per sample. The second run of each shape restores the first one's booted
# snapshot (issue 28): its map is proven again, and its counts are its own.
# No guest or QEMU is left. Two boots and two restores, about 3 min.
#   locality.sh VNUMA_BINARY [SOURCE_DIR]
set -u
vnuma=$1
src=${2:-$(cd "$(dirname "$0")/../.." && pwd)}
export VNUMA_WARM_CACHE_MAX=8G
. "$src/tests/integration/lib.sh"
it_state locality

run_one() { # NAME TOPOLOGY MEMNODE OP VALUE BOOT
	cat >"$w/$1.json" <<JSON
{"name": "locality-$1", "topology": "$src/topologies/$2.xml", "locality": true, "timeout_s": 400,
 "steps": [{"name": "stream", "workload": "stream",
            "placement": {"policy": "membind", "cpu_nodes": [0], "nodes": [$3]},
            "args": ["--size", "32M", "--iterations", "10"]}],
 "assertions": [{"type": "locality", "step": "stream", "measure": "remote_fraction.user", "cpu_node": 0, "op": "$4", "value": $5}]}
JSON
	"$vnuma" run "$w/$1.json" -o "$w/$1" >"$w/$1.log" 2>&1
	rc=$?
	check "$1: stream on node 0's CPUs, memory on node $3: node 0's user remote fraction $4 $5 (exit 0)" test "$rc" = 0 ||
		tail -8 "$w/$1.log" | sed 's/^/#   /'
	sed 's/^/# /' "$w/$1/locality-proof.txt" 2>/dev/null
	out=$(python3 - "$w/$1" "$2" <<'PY' 2>&1
import json, sys
d = sys.argv[1]
m = json.load(open(d + "/result.json"))["metrics"]
n = {"2node": 2, "4node-amd": 4}[sys.argv[2]]
cells = [m["locality.matrix.cpu%d.mem%d" % (i, j)] for i in range(n) for j in range(n)]
assert "locality.step.stream.remote_fraction.user" in m, "the lone step's own figures"
assert sum(cells) == m["locality.accesses"], "matrix sum %d != accesses %d" % (sum(cells), m["locality.accesses"])
samples = [json.loads(l) for l in open(d + "/samples.jsonl")]
assert samples and all(len(s["locality"]["matrix"]) == n for s in samples), "a matrix per sample"
print("step: user remote %.4f, on node 0's CPUs %.4f; node 0's CPUs: " % (m["locality.step.stream.remote_fraction.user"], m["locality.step.stream.cpu0.remote_fraction.user"]) + " ".join("mem%d=%d" % (j, m["locality.matrix.cpu0.mem%d" % j]) for j in range(n)) +
      "; all CPUs' user remote fraction %.4f, accesses %d, model %.3f s, %d samples" % (
      m["locality.remote_fraction.user"], m["locality.accesses"], m["locality.model_s"], len(samples)))
PY
)
	check "$1: the matrix adds up, one per sample" test $? = 0
	echo "# $out"
	check "$1: every node's map proven" test "$(grep -c '^node .* bound' "$w/$1/locality-proof.txt" 2>/dev/null)" = "$n"
	check "$1: the guest was $6" test "$(python3 -c 'import json, sys; print(json.load(open(sys.argv[1]))["boot"])' "$w/$1/result.json" 2>&1)" = "$6"
}

n=2
# The issue's bounds. Stream must run long enough (here 10 iterations over
# 32M, about 5 s with the plugin) for its accesses to outweigh the in-guest
# sampler's, which runs on node 0's CPUs too at times (docs/locality.md).
# The first run of a shape boots and saves it (result.json: "cold"), the second restores it.
run_one remote-2node 2node 1 ">=" 0.95 cold
run_one local-2node 2node 0 "<=" 0.05 restored
n=4
run_one remote-4node 4node-amd 3 ">=" 0.95 cold
run_one local-4node 4node-amd 0 "<=" 0.05 restored
check "no guest left" no_domain_left
check "no QEMU left" no_qemu_left
finish
