#!/bin/bash
# Integration: tracepoint capture (issue 14) under TCG. scenarios/memfollow-
# trace-2node.json --quick keeps a complete trace.jsonl whose page migrations
# (mm_migrate_pages, nr_succeeded summed) equal vmstat's pgmigrate_success over
# the capture window, those for reason numa_misplaced its numa_pages_migrated,
# with task migrations across
# nodes and nothing lost; a tracepoint the kernel lacks is exit 2 naming it,
# before any step runs. No guest or QEMU is left. Two boots, about 90 s.
#   trace.sh VNUMA_BINARY [SOURCE_DIR]
set -u
vnuma=$1
src=${2:-$(cd "$(dirname "$0")/../.." && pwd)}
export VNUMA_ACCEL=${VNUMA_ACCEL:-tcg}
. "$src/tests/integration/lib.sh"
it_state trace

# 1. memfollow with its migration events captured.
"$vnuma" run "$src/scenarios/memfollow-trace-2node.json" --quick -o "$w/mf" >"$w/mf.log" 2>&1
rc=$?
check "memfollow-trace-2node --quick exits 0" test "$rc" = 0 || sed 's/^/#   /' "$w/mf.log"
t=$w/mf/trace.jsonl
check "trace.jsonl is there" test -s "$t"
# Every line one JSON object: a header first, events, an end record last.
summary=$(python3 - "$t" "$w/mf/result.json" <<'PY' 2>&1
import json, sys
lines = [json.loads(l) for l in open(sys.argv[1])]
m = json.load(open(sys.argv[2]))["metrics"]
head, end, evs = lines[0], lines[-1], lines[1:-1]
assert head["type"] == "header" and end["type"] == "end", "header / end record"
mig = [e for e in evs if e["event"] == "migrate:mm_migrate_pages"]
succ = sum(e["fields"]["succeeded"] for e in mig)
numa = sum(e["fields"]["succeeded"] for e in mig if e["fields"]["reason"] == "numa_misplaced")
d = end["window"]["vmstat_delta"]
print("events=%d mm_migrate_pages=%d nr_succeeded=%d (numa_misplaced %d) pgmigrate_success=%d numa_pages_migrated=%d "
      "sched_migrate_task.cross_node=%d sched_move_numa=%d sched_stick_numa=%d lost=%d complete=%s" % (
      len(evs), len(mig), succ, numa, d["pgmigrate_success"], d["numa_pages_migrated"],
      m["trace.sched:sched_migrate_task.cross_node"], m["trace.sched:sched_move_numa.count"],
      m["trace.sched:sched_stick_numa.count"], m["trace.lost"], end["complete"]))
assert end["complete"] is True, "end record complete"
assert end["written"] == len(evs) == end["events"], "every event written"
assert all(isinstance(e["fields"]["succeeded"], int) for e in mig), "typed numbers"
assert numa > 0, "NUMA balancing's page migrations traced"
assert m["trace.migrate:mm_migrate_pages.count"] == len(mig), "count metric"
assert m["trace.migrate:mm_migrate_pages.nr_succeeded"] == succ, "nr_succeeded metric"
# Tracing is on before the window's first vmstat read and off after its last:
# every counted migration was traced, and nothing migrates at the edges (no
# workload runs then). migrate_pages() counts pgmigrate_success for every
# reason (compaction too); NUMA balancing adds numa_pages_migrated.
assert succ == d["pgmigrate_success"], "nr_succeeded = pgmigrate_success"
assert numa == d["numa_pages_migrated"], "numa_misplaced nr_succeeded = numa_pages_migrated"
assert m["trace.sched:sched_migrate_task.cross_node"] >= 1, "task migrations across nodes"
assert m["trace.lost"] == 0 and end["ring_overrun"] == 0 and end["ring_dropped"] == 0, "nothing lost"
PY
)
prc=$?
echo "# $summary" | tail -3
check "trace.jsonl: complete, typed, and its page migrations agree with vmstat's window counters" test "$prc" = 0
# The run drew its page from what it held; `vnuma report` draws it from the files: the same page.
cp "$w/mf/report.html" "$w/mf-run.html"
"$vnuma" report "$w/mf" >"$w/report.log" 2>&1
check "report.html drawn by the run (trace chart included) equals vnuma report's from the files" \
	cmp "$w/mf-run.html" "$w/mf/report.html"
check "report.html has the tracepoint chart" grep -q 'id="trace"' "$w/mf-run.html"

# 2. A tracepoint the kernel lacks: exit 2, named, and no step started.
cat >"$w/missing.json" <<JSON
{"name": "trace-missing", "topology": "$src/topologies/2node.xml",
 "tracepoints": ["sched:sched_migrate_task", "sched:no_such_event"],
 "steps": [{"name": "never", "workload": "cmd", "command": ["true"]}]}
JSON
"$vnuma" run "$w/missing.json" --quick -o "$w/missing" >"$w/missing.log" 2>&1
rc=$?
check "a missing tracepoint exits 2" test "$rc" = 2 || sed 's/^/#   /' "$w/missing.log"
grep 'not a tracepoint' "$w/missing.log" | sed 's/^/# /'
check "...naming it" grep -q 'tracepoints\[1\]: "sched:no_such_event" is not a tracepoint of the booted kernel' "$w/missing.log"
check "...before any step started" test -z "$(ls "$w/missing/steps")"
check "no guest left" no_domain_left
check "no QEMU left" no_qemu_left
finish
