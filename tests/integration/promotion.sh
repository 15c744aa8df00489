#!/bin/bash
# Integration: promotion by NUMA balancing in memory-tiering mode (issue 47,
# docs/tiering.md). scenarios/promotion-4node-cxl.json on Debian's 6.1 under
# TCG: tiermove on node 0's CPUs first-touches 192M on CXL node 2 (then the
# default policy), and each 32M hot window must be >= 80% on DRAM by its
# phase's end, counted as pgpromote_success; then at a 1 MB/s promotion rate
# limit, each phase's pgpromote_success within the kernel's windows
# (promotion_rate). One TCG boot.
#   promotion.sh VNUMA_BINARY [SOURCE_DIR]
set -u
vnuma=$1
src=${2:-$(cd "$(dirname "$0")/../.." && pwd)}
export VNUMA_ACCEL=tcg
. "$src/tests/integration/lib.sh"
it_state promotion
out=$VNUMA_STATE_DIR/results
mkdir -p "$out"

"$vnuma" run "$src/scenarios/promotion-4node-cxl.json" --quick -o "$out/pro" >"$out/pro.log" 2>&1
rc=$?
sed 's/^/#   /' "$out/pro.log"
check "promotion-4node-cxl exits 0" test "$rc" = 0
check "the promotion verdict passed" grep -q "^PASS  hot pages on CXL node 2 are promoted" "$out/pro.log"
res=$(ls "$out"/pro/steps/tiermove.*.out 2>/dev/null | head -1)
check "some hot phase began with pages on node 2 and ended with fewer there" python3 -c "
import json, sys
r = json.loads(open('$res').read().strip().split('\n')[-1])
ok = False
for p in r['phases'][1:]:
    s, e = p['samples'][0]['hot_pages_per_node'], p['samples'][-1]['hot_pages_per_node']
    ok = ok or (s['2'] > 0 and e['2'] < s['2'] and p['vmstat']['pgpromote_success'] > 0)
sys.exit(0 if ok else 1)"
check "promotion_rate passed at 1 MB/s" grep -q "^PASS  promotion stays under kernel.numa_balancing_promote_rate_limit_MBps" "$out/pro.log"
lim=$(ls "$out"/pro/steps/rate-limited.*.out 2>/dev/null | head -1)
check "the rate-limited step ran at 1 MB/s, THP never, and promoted less than its 8192-page windows" python3 -c "
import json, sys
r = json.loads(open('$lim').read().strip().split('\n')[-1])
s = [p['vmstat']['pgpromote_success'] for p in r['phases'][1:]]
ok = r['promote_rate_limit_MBps'] == 1 and r['thp'] == 'never' and 0 < max(s) < 8192
sys.exit(0 if ok else 1)"
check "run leaves no QEMU" no_qemu_left
check "run leaves no domain" no_domain_left
finish
