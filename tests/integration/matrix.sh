#!/bin/bash
# Integration: a 2-variant x 3-repeat matrix (issue 11): memfollow with NUMA
# balancing on and off, interleaved, into one result group; then compare and
# report read it. numa_pages_migrated must come out significant (balancing
# off migrates nothing). About 3 minutes on 2 cores (6 quick boots).
#   matrix.sh VNUMA_BINARY [SOURCE_DIR]
set -u
vnuma=$1
src=${2:-$(cd "$(dirname "$0")/../.." && pwd)}
export VNUMA_ACCEL=${VNUMA_ACCEL:-tcg}
. "$src/tests/integration/lib.sh"
it_state matrix
g=$VNUMA_STATE_DIR/group

"$vnuma" run "$src/scenarios/memfollow-balancing-2node.json" --quick -o "$g" >"$VNUMA_STATE_DIR/out" 2>"$VNUMA_STATE_DIR/err"
rc=$?
sed 's/^/#   /' "$VNUMA_STATE_DIR/err" | grep -v '^#   boot:'
check "the matrix exits 0" test "$rc" = 0
check "run prints the comparison" grep -q 'vmstat.numa_pages_migrated' "$VNUMA_STATE_DIR/out"
order=$(grep -o '"dir": *"[^"]*"' "$g/group.json" | sed 's/.*"\([^"]*\)"$/\1/' | tr '\n' ' ')
echo "# run order: $order"
check "interleaved: A B A B A B" test "$order" = "balancing-on/1 balancing-off/1 balancing-on/2 balancing-off/2 balancing-on/3 balancing-off/3 "
check "group.json says complete" grep -Eq '"complete": *true' "$g/group.json"
check "the group's change assertion is judged, and holds" sh -c \
	"tr -d ' \n' <'$g/group.json' | grep -q '\"name\":\"balancingoffmigratesatleast90%fewerpages\",\"verdict\":\"pass\"'"
check "run prints it" grep -q 'PASS  balancing off migrates at least 90% fewer pages' "$VNUMA_STATE_DIR/out"
for d in balancing-on/1 balancing-off/3; do
	check "$d: an ordinary run directory with its variant and repeat" sh -c \
		"grep -Eq '\"variant\": *\"${d%/*}\"' '$g/$d/result.json' && grep -Eq '\"repeat\": *${d#*/}' '$g/$d/result.json'"
	check "$d: result.json records vmstat metrics" grep -q '"vmstat.numa_pages_migrated"' "$g/$d/result.json"
	check "$d: its own report.html" grep -q '<svg' "$g/$d/report.html"
done
check "...the off runs set numa_balancing 0" grep -Eq '"kernel.numa_balancing": *"0"' "$g/balancing-off/2/result.json"

table=$("$vnuma" compare "$g")
check "compare exits 0" test $? = 0
echo "$table" | sed 's/^/#   /'
check "compare: numa_pages_migrated marked significant" sh -c "echo \"\$1\" | grep -Eq '^\\* .*vmstat\\.numa_pages_migrated\$'" _ "$table"
check "compare --json: numa_pages_migrated significant" sh -c \
	"'$vnuma' compare --json '$g' | tr -d ' \n' | grep -q '\"metric\":\"vmstat.numa_pages_migrated\",[^{]*\"significant\":true'"
check "compare.txt is what compare prints" sh -c "[ \"\$('$vnuma' compare '$g')\" = \"\$(cat '$g/compare.txt')\" ]"
check "the group's report.html draws the repeats" sh -c "grep -q '<svg' '$g/report.html' && grep -q 'numa_pages_migrated' '$g/report.html'"
check "vnuma report remakes it" "$vnuma" report "$g" -o "$VNUMA_STATE_DIR/again.html"
# The done-when of issue 11: this group's pages in a real browser, per-node memory over time drawn.
VN_REPORT_RUN=$g/balancing-on/1 VN_REPORT_GROUP=$g bash "$src/tests/integration/report-browser.sh" "$vnuma" "$src" \
	>"$VNUMA_STATE_DIR/browser" 2>&1
brc=$?
sed 's/^/#   /' "$VNUMA_STATE_DIR/browser"
if [ "$brc" = 77 ]; then
	echo "# (no chromium: the browser check of this group is skipped)"
else
	check "this group's reports in chromium: every svg drawn" test "$brc" = 0
fi
check "no QEMU left" no_qemu_left
check "no domain left" no_domain_left
finish
