#!/bin/bash
# Integration: demotion on reclaim checked against the tier model (issue 47,
# docs/tiering.md). scenarios/demotion-4node-cxl.json on Debian's 6.1 under
# TCG: tiermove binds 384M to DRAM node 0 (256M), reclaim demotes what does
# not fit, and every demoted page must be on node 2 (the model's target of
# node 0), none on node 1 or 3; then node 1's only on node 3; then, with
# demotion_enabled false and node 0 below its low watermark, nothing demoted
# (no_demotion). One TCG boot.
#   demotion.sh VNUMA_BINARY [SOURCE_DIR]
set -u
vnuma=$1
src=${2:-$(cd "$(dirname "$0")/../.." && pwd)}
export VNUMA_ACCEL=tcg
. "$src/tests/integration/lib.sh"
it_state demotion
out=$VNUMA_STATE_DIR/results
mkdir -p "$out"

"$vnuma" run "$src/scenarios/demotion-4node-cxl.json" --quick -o "$out/dem" >"$out/dem.log" 2>&1
rc=$?
sed 's/^/#   /' "$out/dem.log"
check "demotion-4node-cxl exits 0" test "$rc" = 0
check "the demotion_targets verdict passed, node 2 only" \
	grep -q "^PASS  pages demoted from node 0 are only on node 2" "$out/dem.log"
check "node 1's demoted pages only on node 3" grep -q "^PASS  pages demoted from node 1 are only on node 3" "$out/dem.log"
res=$(ls "$out"/dem/steps/tiermove.*.out 2>/dev/null | head -1)
check "tiermove saw the guest's two tiers" grep -q '"tiers":{"memory_tier[0-9]*":\[[0-9,]*\],"memory_tier[0-9]*"' "$res"
check "pages were demoted in the first touch (pgdemote_kswapd + pgdemote_direct > 0)" python3 -c "
import json, sys
r = json.loads(open('$res').read().strip().split('\n')[-1])
v = r['phases'][0]['vmstat']
sys.exit(0 if v['pgdemote_kswapd'] + v['pgdemote_direct'] > 0 and r['pages_max_per_node']['2'] > 0 else 1)"
check "nothing on node 1 or 3" python3 -c "
import json, sys
r = json.loads(open('$res').read().strip().split('\n')[-1])
m = r['pages_max_per_node']
sys.exit(0 if m['1'] == 0 and m['3'] == 0 else 1)"
check "no_demotion passed: nothing demoted under reclaim with demotion_enabled false" \
	grep -q "^PASS  nothing is demoted from node 0 under node reclaim while demotion_enabled is false" "$out/dem.log"
on=$(ls "$out"/dem/steps/would-demote.*.out 2>/dev/null | head -1)
off=$(ls "$out"/dem/steps/no-demotion.*.out 2>/dev/null | head -1)
# The same step with demotion on: what no_demotion judges must move, else it could not fail.
check "the same step with demotion on demotes: pgdemote_direct > 0, pages on node 2" python3 -c "
import json, sys
r = json.loads(open('$on').read().strip().split('\n')[-1])
v = r['phases'][0]['vmstat']
sys.exit(0 if r['demotion_enabled'] and v['pgdemote_direct'] > 0 and r['pages_max_per_node']['2'] > 0 else 1)"
check "with demotion off it fell back to node 1, node reclaim failed, nothing on 2-3" python3 -c "
import json, sys
r = json.loads(open('$off').read().strip().split('\n')[-1])
v = r['phases'][0]['vmstat']
m = r['pages_max_per_node']
ok = r['demotion_enabled'] is False and v['zone_reclaim_failed'] > 0 and m['1'] > 0
sys.exit(0 if ok and m['2'] == 0 and m['3'] == 0 else 1)"
check "run leaves no QEMU" no_qemu_left
check "run leaves no domain" no_domain_left
finish
