#!/bin/bash
# Integration: a guest that prints without end, under TCG. The local console
# log is the console keeper's (QEMU logs into a FIFO it drains): it stops at
# its cap with a line saying so, the guest runs on, and past the cap the
# kernel's last words still reach the log, so the death watch still reads them.
# $VNUMA_CONSOLE_LOG_MAX is 256K here so that the flood takes seconds (the
# default cap is 64 MiB, as for a remote guest's streamed console).
#   1. up; `vnuma shell` works beside the keeper; 1 MB into /dev/console through exec: the log stops at 256K, its
#      last line says so, exec and the agent go on; a second flood adds nothing
#   2. a panic past the cap: exec exits 3 naming it, the log holds its line
#   3. down: no QEMU, no keeper left
# One boot, about a minute on 2 cores.
#   console-cap.sh VNUMA_BINARY [SOURCE_DIR]
set -u
vnuma=$1
src=${2:-$(cd "$(dirname "$0")/../.." && pwd)}
export VNUMA_ACCEL=${VNUMA_ACCEL:-tcg}
. "$src/tests/integration/lib.sh"
it_state console
show() { sed 's/^/#   /' "$1" | head -40; }
export VNUMA_CONSOLE_LOG_MAX=256K
cap=262144
# Processes with the guest's console FIFO open: its keeper (QEMU holds it too, as its writer).
fifo_holders() {
	local p
	for p in /proc/[0-9]*; do
		ls -l "$p/fd" 2>/dev/null | grep -q -- "$1" && echo "${p#/proc/}"
	done
}

name=$("$vnuma" up "$src/topologies/2node.xml" --timeout 180 2>"$w/up.err")
check "up 2node with a 256K console cap" test $? = 0 || { show "$w/up.err"; finish; exit; }
dir=$VNUMA_STATE_DIR/guests/$name
log=$dir/console.log
check "QEMU logs into a FIFO" test -p "$dir/console.pipe"
check "...which a keeper drains into console.log, a regular file" test -f "$log" -a ! -L "$log"
check "the log has the boot" test -s "$log"
check "a keeper outlives up" test -n "$(fifo_holders "$dir/console.pipe")"
echo "# boot log: $(stat -c %s "$log") bytes"
# The console itself is still QEMU's pty: `vnuma shell` reads and writes it beside the keeper.
out=$( (sleep 2; echo 'echo shell-$((6*7))'; sleep 4; printf '\035') | timeout 60 "$vnuma" shell "$name" 2>&1)
check "vnuma shell reaches the guest's console" grep -q shell-42 <<<"$out"
check "...and the log has what the guest printed there" grep -q shell-42 "$log"

flood='yes "flood flood flood flood flood flood flood flood flood flood flood" | head -c 1048576 >/dev/console'
t0=$(date +%s)
"$vnuma" exec --timeout 10m "$name" -- sh -c "$flood" >"$w/flood.log" 2>&1
rc=$?
echo "# 1 MiB flood: exit $rc in $(($(date +%s) - t0)) s; log $(stat -c %s "$log") bytes"
show "$w/flood.log"
check "a 1 MiB flood through /dev/console: exec exits 0" test "$rc" = 0
size=$(stat -c %s "$log")
check "the log stops at the cap ($size <= $cap)" test "$size" -le "$cap"
check "...and reaches it ($size > $cap - 256)" test "$size" -gt $((cap - 256))
check "...its last line says so" sh -c "tail -c 300 '$log' | grep -q 'console log full at 256K; the guest runs on'"
check "the guest runs on: exec" sh -c "'$vnuma' exec '$name' -- echo alive | grep -qx alive"
check "...and its agent reads files" sh -c "'$vnuma' exec '$name' -- cat /proc/uptime | grep -q '^[0-9]'"
"$vnuma" exec --timeout 10m "$name" -- sh -c "$flood" >/dev/null 2>&1
check "a second flood adds nothing" test "$(stat -c %s "$log")" = "$size"

# Past the cap the death watch still sees the kernel's last words.
t0=$(date +%s)
"$vnuma" exec "$name" -- sh -c 'sleep 2; echo c > /proc/sysrq-trigger; sleep 600' >"$w/panic.log" 2>&1
rc=$?
secs=$(($(date +%s) - t0 - 2))
echo "# exec, panic past the cap: exit $rc, ${secs}s after the fault"
show "$w/panic.log"
check "a panic past the cap: exec exits 3" test "$rc" = 3
check "...within 60 s of the fault (${secs}s)" test "$secs" -le 60
check "...naming it" grep -q "guest $name panicked" "$w/panic.log"
check "...its line is in the log, after the cap's" sh -c "tail -c +$((size - 10)) '$log' | grep -q 'Kernel panic - not syncing'"
check "...a few bytes past it at most" test "$(stat -c %s "$log")" -le $((cap + 8 * 258))

check "down" test "$(rc "$vnuma" down "$name")" = 0
check "...no QEMU left" no_qemu_left
sleep 1
check "...no keeper left" test -z "$(fifo_holders "$dir/console.pipe")"

finish
