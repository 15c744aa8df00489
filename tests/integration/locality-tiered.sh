#!/bin/bash
# Integration: locality on a tiered shape (issue 47, docs/locality.md,
# "Tiered shapes"). 4node-cxl-tiered boots with its slow nodes' stand-ins
# grown so that each NVDIMM has plugin addresses of its own; the boot proof
# must pass on all four nodes, the CXL ones included (stores bound to node 2
# land in node 2's NVDIMM range). Then stream on node 0's CPUs bound to CXL
# node 2 and to CXL node 3: each step's accesses go to that node's column and
# to memory_tier22, and the model prices them by HMAT (210 and 300 ns).
# No guest or QEMU is left. One boot, about 2-3 min under TCG.
#   locality-tiered.sh VNUMA_BINARY [SOURCE_DIR]
set -u
vnuma=$1
src=${2:-$(cd "$(dirname "$0")/../.." && pwd)}
. "$src/tests/integration/lib.sh"
it_state locality-tiered

step() { # NAME NODE
	echo "{\"name\": \"$1\", \"workload\": \"stream\", \"placement\": {\"policy\": \"membind\", \"cpu_nodes\": [0], \"nodes\": [$2]}, \"args\": [\"--size\", \"32M\", \"--iterations\", \"10\"]}"
}
cat >"$w/tiered.json" <<JSON
{"name": "locality-tiered", "topology": "$src/topologies/4node-cxl-tiered.xml", "locality": true, "timeout_s": 500,
 "sample_interval_s": 10,
 "steps": [$(step cxl-near 2), $(step cxl-far 3)],
 "assertions": [{"type": "locality", "step": "cxl-near", "measure": "remote_fraction.user", "cpu_node": 0, "op": ">=", "value": 0.95}]}
JSON
"$vnuma" run "$w/tiered.json" -o "$w/out" >"$w/run.log" 2>&1
rc=$?
check "stream on node 0's CPUs bound to CXL node 2, then 3: the run passes (exit 0)" test "$rc" = 0 ||
	tail -8 "$w/run.log" | sed 's/^/#   /'
sed 's/^/# /' "$w/out/locality-proof.txt" 2>/dev/null
check "every node's map proven, the slow nodes' too" test "$(grep -c '^node [0-3] bound' "$w/out/locality-proof.txt" 2>/dev/null)" = 4
out=$(python3 - "$w/out" <<'PY' 2>&1
import json, sys
m = json.load(open(sys.argv[1] + "/result.json"))["metrics"]
for name, ns in (("cxl-near", 210), ("cxl-far", 300)):
    p = "locality.step.%s." % name
    share, acc, t = m[p + "memory_tier22.share"], m[p + "memory_tier22.accesses"], m[p + "memory_tier22.model_s"]
    # All CPUs and kinds: the kernel's and the sampler's accesses to DRAM are the rest (0.87-0.92 measured).
    assert share >= 0.8, "%s: memory_tier22 share %.3f" % (name, share)
    assert m[p + "cpu0.remote_fraction.user"] >= 0.95, "%s: cpu0 user remote %.4f" % (name, m[p + "cpu0.remote_fraction.user"])
    # Node 0's CPUs' accesses to that CXL node are nearly all the tier's: its mean is that pair's HMAT latency.
    mean = t / acc * 1e9
    assert abs(mean - ns) <= 0.05 * ns, "%s: memory_tier22 mean %.1f ns, not about %d" % (name, mean, ns)
    print("%s: cpu0 user remote %.4f; memory_tier4 %d accesses %.4f s; memory_tier22 %d accesses (share %.3f) %.4f s, %.1f ns each;" % (
        name, m[p + "cpu0.remote_fraction.user"], m[p + "memory_tier4.accesses"], m[p + "memory_tier4.model_s"], acc, share, t, mean))
print("run matrix, node 0's CPUs: " + " ".join("mem%d=%d" % (j, m["locality.matrix.cpu0.mem%d" % j]) for j in range(4)) +
      "; outside the map %d" % m["locality.accesses_outside"])
PY
)
check "each step's accesses in memory_tier22, priced at its CXL node's HMAT latency" test $? = 0
echo "# $out"
check "no guest left" no_domain_left
check "no QEMU left" no_qemu_left
finish
