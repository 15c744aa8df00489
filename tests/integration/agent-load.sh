#!/bin/bash
# Integration: the agent answers under load (issue 46). A 2node guest (4 vCPUs,
# 457 MiB) runs, detached from any host connection, stream on every CPU and a
# loop of anon-cow-rand whose copy-on-write children overrun memory (the OOM
# killer fires again and again); meanwhile 20 `vnuma exec NAME -- true` from
# the host in a row must each exit 0 (none "timed out ... waiting for the
# agent to answer hello"). Prints their median and maximum, checks the load
# was really there (OOM kills, load average, the workloads still running at
# the end) and that nothing is left. Before the load, several hosts at once:
# an exec beside a long one, and a fifth beside four. One boot, about 60 s
# under TCG here.
#   agent-load.sh VNUMA_BINARY [SOURCE_DIR]
set -u
vnuma=$1
src=${2:-$(cd "$(dirname "$0")/../.." && pwd)}
export VNUMA_ACCEL=${VNUMA_ACCEL:-tcg}
. "$src/tests/integration/lib.sh"
it_state agentload
name=agentload
execs=20

"$vnuma" up "$src/topologies/2node.xml" --name "$name" >"$w/up.log" 2>&1 ||
	{ sed 's/^/#   /' "$w/up.log" | tail -20; check "up 2node" false; finish; exit; }

# Hosts at once (issue 46): a long exec holds one agent channel, and another
# exec takes the next and is answered at once, not after its hello's 10 s.
# With all four channels held, one more fails at once (exit 3) naming them.
ms_since() { echo $((($(date +%s%N) - $1) / 1000000)); }
"$vnuma" exec "$name" -- sleep 15 >"$w/long-1.log" 2>&1 &
longs=$!
sleep 2
t0=$(date +%s%N)
"$vnuma" exec "$name" -- true >"$w/beside.log" 2>&1
rc=$?
ms=$(ms_since "$t0")
[ "$rc" = 0 ] || sed 's/^/#   /' "$w/beside.log" | tail -3
check "an exec beside a long exec answers (exit $rc in $ms ms, within 2000)" test "$rc" = 0 -a "$ms" -lt 2000
for i in 2 3 4; do
	"$vnuma" exec "$name" -- sleep 12 >"$w/long-$i.log" 2>&1 &
	longs="$longs $!"
done
sleep 3
t0=$(date +%s%N)
"$vnuma" exec "$name" -- true >"$w/fifth.log" 2>&1
rc=$?
ms=$(ms_since "$t0")
sed 's/^/#   /' "$w/fifth.log" | tail -2
check "a fifth exec with four held fails at once (exit $rc in $ms ms)" test "$rc" = 3 -a "$ms" -lt 2000
check "...naming the channels' holders" grep -q "no free agent channel of guest '$name' (all 4 in use, by pid [0-9]* (.*exec $name -- sleep" "$w/fifth.log"
bad=0
for p in $longs; do wait "$p" || bad=$((bad + 1)); done
check "...the four long execs each exit 0 ($bad did not)" test "$bad" = 0

# Detached (setsid): the agent kills what a host's exec started when that host goes.
load='wl=/usr/lib/vnuma
end=$(($(cut -d. -f1 /proc/uptime) + 120))
"$wl/vnuma-wl-stream" --procs 4 --size 48M --duration 120 >/dev/null 2>&1 &
while [ "$(cut -d. -f1 /proc/uptime)" -lt "$end" ]; do
	"$wl/vnuma-wl-anon-cow-rand" --size 96M --procs 4 --duration 4 >/dev/null 2>&1
done'
"$vnuma" exec "$name" -- sh -c "setsid sh -c '$load' </dev/null >/dev/null 2>&1 &" >"$w/load.log" 2>&1
check "the load starts" test $? = 0
oom_kills() { "$vnuma" exec "$name" -- sh -c 'grep "^oom_kill " /proc/vmstat' 2>/dev/null | cut -d' ' -f2; }
# Until memory has run out once: the execs below are then all made under pressure.
for _ in $(seq 60); do
	[ "$(oom_kills)" -gt 0 ] 2>/dev/null && break
	sleep 0.5
done
kills0=$(oom_kills)
check "the guest ran out of memory before the execs ($kills0 OOM kills)" test "${kills0:-0}" -gt 0

: >"$w/ms"
failed=0
for i in $(seq "$execs"); do
	t0=$(date +%s%N)
	"$vnuma" exec "$name" -- true >"$w/exec-$i.log" 2>&1
	rc=$?
	t1=$(date +%s%N)
	echo $(((t1 - t0) / 1000000)) >>"$w/ms"
	if [ "$rc" != 0 ]; then
		failed=$((failed + 1))
		echo "#   exec $i: exit $rc: $(head -c 300 "$w/exec-$i.log")"
	fi
done
check "$execs execs under load, each exit 0 ($failed failed)" test "$failed" = 0
check "...none waited out its hello" sh -c "! cat '$w'/exec-*.log | grep -q 'waiting for the agent to answer hello'"
sort -n "$w/ms" >"$w/ms.sorted"
median=$(sed -n "$((execs / 2))p" "$w/ms.sorted")
max=$(tail -1 "$w/ms.sorted")
echo "# exec -- true under load, whole process: median ${median} ms, max ${max} ms (all: $(tr '\n' ' ' <"$w/ms"))"

"$vnuma" exec "$name" -- sh -c 'grep "^oom_kill " /proc/vmstat; cat /proc/loadavg; cat /proc/[0-9]*/comm 2>/dev/null | grep -c vnuma-wl-; cut -d" " -f19 /proc/$PPID/stat' >"$w/after" 2>&1
# The sh above is the agent's child: field 19 of its parent's stat is the agent's nice.
echo "# after: oom_kill, loadavg, workloads, agent nice: $(tr '\n' ' ' <"$w/after")"
kills1=$(sed -n 's/^oom_kill //p' "$w/after")
check "memory ran out during the execs too ($kills0 -> $kills1 OOM kills)" test "${kills1:-0}" -gt "${kills0:-0}"
check "...the workloads still run at the end" test "$(sed -n 3p "$w/after")" -gt 0
check "...the agent runs at nice -10 (docs/agent-protocol.md)" test "$(sed -n 4p "$w/after")" = -10
# The 1-minute average trails the load: with four CPU-bound streams from about
# 0.3 it passes 2 some 37 s after the load began, and the execs above can take
# less than that (CI's took about 25 s and read 1.75). So wait for it, bounded.
loadavg=$(sed -n 2p "$w/after" | cut -d' ' -f1)
for _ in $(seq 15); do
	awk -v l="$loadavg" 'BEGIN { exit !(l > 2) }' && break
	sleep 4
	loadavg=$("$vnuma" exec "$name" -- cat /proc/loadavg 2>/dev/null | cut -d' ' -f1)
done
check "...the 1-minute load average passes 2 within a minute ($loadavg)" awk -v l="$loadavg" 'BEGIN { exit !(l > 2) }'

check "down" test "$(rc "$vnuma" down "$name")" = 0
check "...no QEMU left" no_qemu_left
check "...no domain left" no_domain_left
finish
