#!/bin/bash
# Integration: a hot-plugged DIMM joins the locality map (issue 27). One TCG
# boot of 4node-amd-hotplug with locality: the boot map proven on nodes 0-2
# (node 3 is memory-less at boot), a 256M DIMM plugged into node 3, its
# plugin range asked of QEMU's monitor and proven by a membind touch, then
# stream on node 0's CPUs bound to node 3: its accesses land on node 3's
# column. Without the map update they would be unmapped and the checks below
# fail. Booted snapshots are on: the guest the run gets is the one restored
# from the boot's save (as every later run's would be), so the DIMM goes into
# a restored QEMU. About 1-2 min.
#   locality-hotplug.sh VNUMA_BINARY [SOURCE_DIR]
set -u
vnuma=$1
src=${2:-$(cd "$(dirname "$0")/../.." && pwd)}
export VNUMA_ACCEL=tcg VNUMA_WARM_CACHE_MAX=8G
. "$src/tests/integration/lib.sh"
it_state locality-hotplug
w=$VNUMA_STATE_DIR

cat >"$w/scn.json" <<JSON
{"name": "locality-hotplug", "topology": "$src/topologies/4node-amd-hotplug.xml", "locality": true, "timeout_s": 400,
 "steps": [{"name": "plug", "hotplug": {"node": 3, "memory": "256M", "online": "movable"}},
           {"name": "touch", "workload": "stream", "placement": {"policy": "membind", "cpu_nodes": [0], "nodes": [3]},
            "args": ["--size", "8M", "--iterations", "3"]}],
 "assertions": [{"type": "locality", "step": "touch", "measure": "remote_fraction.user", "cpu_node": 0, "op": ">=", "value": 0.9}]}
JSON
"$vnuma" run "$w/scn.json" -o "$w/res" >"$w/run.log" 2>&1
rc=$?
check "the run with a DIMM plugged under locality passes (exit 0)" test "$rc" = 0 ||
	tail -8 "$w/run.log" | sed 's/^/#   /'
sed 's/^/# /' "$w/res/locality-proof.txt" 2>/dev/null
check "the guest it ran on was restored from its boot's snapshot" grep -q 'saved: snapshot .*, restored in' "$w/run.log"
check "the boot map is proven on nodes 0-2" test "$(grep -c '^node .* bound' "$w/res/locality-proof.txt" 2>/dev/null)" = 3
check "the DIMM's range is proven (its own slots took the stores)" grep -q '^dimm0 (node 3, 0x[0-9a-f]*-0x[0-9a-f]*, .*) bound: user stores in its range=' "$w/res/locality-proof.txt"
check "...and no line says it is not counted" test "$(grep -c 'not counted' "$w/res/locality-proof.txt")" = 0
out=$(python3 - "$w/res" <<'PY' 2>&1
import json, sys
m = json.load(open(sys.argv[1] + "/result.json"))["metrics"]
assert m["locality.dimms_counted"] == 1 and m["locality.dimms_unmapped"] == 0, "dimms counted %s, unmapped %s" % (
    m["locality.dimms_counted"], m["locality.dimms_unmapped"])
row = [m["locality.matrix.cpu0.mem%d" % j] for j in range(4)]
# stream's 3 x 8M arrays, 3 iterations, written and read from node 0's CPUs into node 3's DIMM.
assert row[3] >= 5000000, "node 0's CPUs -> node 3: %d accesses" % row[3]
cells = [m["locality.matrix.cpu%d.mem%d" % (i, j)] for i in range(4) for j in range(4)]
assert sum(cells) == m["locality.accesses"], "matrix sum %d != accesses %d" % (sum(cells), m["locality.accesses"])
print("node 0's CPUs: " + " ".join("mem%d=%d" % (j, row[j]) for j in range(4)) +
      "; step touch user remote %.4f" % m["locality.step.touch.remote_fraction.user"])
PY
)
check "the membind touch lands on node 3's column, and the DIMM is counted in result.json" test $? = 0
echo "# $out"
check "the run leaves no QEMU" no_qemu_left
check "the run leaves no domain" no_domain_left
finish
