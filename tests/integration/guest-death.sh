#!/bin/bash
# Integration: a guest that dies while vnuma talks to it, under TCG. The
# domain is up with no process holding the embedded driver, so QEMU only
# pauses (libvirt's -no-shutdown) and its agent socket stays open and silent:
# the agent connection's watch must notice the death by itself.
#   1. `run`, a step panics the kernel (sysrq c, panic=-1) while the sampler
#      and a long workload run
#   2. `run`, a step powers the guest off (poweroff -f)
#   3. `exec` into an `up` guest that resets itself (sysrq b), then `exec`
#      into the dead guest again
# Each: exit 3 within 60 s of the fault (the old wait was the agent's 5 min),
# naming the guest and the cause, the console tail in the message; a run's
# result says incomplete and the guest's logs are under STATE/failed; no QEMU,
# domain or guest dir is left. Three boots, about a minute on 2 cores.
#   guest-death.sh VNUMA_BINARY [SOURCE_DIR]
set -u
vnuma=$1
src=${2:-$(cd "$(dirname "$0")/../.." && pwd)}
export VNUMA_ACCEL=${VNUMA_ACCEL:-tcg}
. "$src/tests/integration/lib.sh"
it_state death
show() { sed 's/^/#   /' "$1" | head -40; }
no_guest_dir() { [ -z "$(ls -A "$VNUMA_STATE_DIR/guests" 2>/dev/null)" ]; }

# scenario NAME COMMAND: a run whose one step runs COMMAND (a shell line) beside the sampler.
scenario() {
	cat >"$w/$1.json" <<EOF
{
  "name": "$1",
  "topology": "$src/topologies/2node.xml",
  "timeout_s": 600,
  "sample_interval_s": 1,
  "steps": [{"name": "fault", "workload": "cmd", "command": ["sh", "-c", "sleep 4; $2; sleep 600"]}],
  "assertions": [{"type": "distances"}]
}
EOF
}

# run_death NAME COMMAND CAUSE MARKER
run_death() {
	local name=$1 cause=$3 marker=$4 rc t_fault t_end
	scenario "$name" "$2"
	"$vnuma" run "$w/$name.json" -o "$w/$name" >"$w/$name.log" 2>&1
	rc=$?
	t_end=$(date +%s)
	# When the fault happened: the guest's last console line was written then.
	t_fault=$(stat -c %Y "$VNUMA_STATE_DIR"/failed/scn-"$name"-*/console.log 2>/dev/null | head -1)
	secs=$((t_end - ${t_fault:-0}))
	echo "# $name: exit $rc, ${secs}s after the fault"
	show "$w/$name.log"
	check "$name: run exits 3" test "$rc" = 3
	check "...within 60 s of the fault (${secs}s)" test "$secs" -le 60
	check "...naming the guest and the cause" grep -q "guest scn-$name $cause" "$w/$name.log"
	check "...with the console tail" grep -q -- "--- last lines of the console log ---" "$w/$name.log"
	check "...result.json says incomplete" grep -Eq '"complete": *false' "$w/$name/result.json"
	check "...and why" grep -q "$cause" "$w/$name/result.json"
	check "...the run keeps the console" grep -q "$marker" "$w/$name/console.log"
	check "...the guest's logs are kept under STATE/failed" \
		sh -c "grep -q '$marker' '$VNUMA_STATE_DIR'/failed/scn-$name-*/console.log && test -s \"\$(ls -d '$VNUMA_STATE_DIR'/failed/scn-$name-*)/qemu.log\""
	check "...which the message names" grep -q "logs kept in $VNUMA_STATE_DIR/failed/scn-$name-" "$w/$name.log"
	check "...no QEMU left" no_qemu_left
	check "...no domain left" no_domain_left
	check "...no guest dir left" no_guest_dir
}

run_death panic 'echo c > /proc/sysrq-trigger' panicked "Kernel panic - not syncing"
run_death poweroff 'poweroff -f' "powered off" "reboot: Power down"

# 3. exec into a guest that resets itself; the guest stays defined for `down`, as `up` left it.
name=$("$vnuma" up "$src/topologies/2node.xml" --timeout 180 2>"$w/up.err")
rc=$?
check "up 2node" test "$rc" = 0 || { show "$w/up.err"; finish; exit; }
t0=$(date +%s)
"$vnuma" exec "$name" -- sh -c 'sleep 2; echo b > /proc/sysrq-trigger; sleep 600' >"$w/exec.log" 2>&1
rc=$?
secs=$(($(date +%s) - t0 - 2))
echo "# exec, guest reset: exit $rc, ${secs}s after the fault"
show "$w/exec.log"
check "exec into a guest that resets: exits 3" test "$rc" = 3
check "...within 60 s of the fault (${secs}s)" test "$secs" -le 60
check "...naming the guest and the cause" grep -q "guest $name rebooted" "$w/exec.log"
t0=$(date +%s%N)
"$vnuma" exec "$name" -- true >"$w/exec2.log" 2>&1
rc=$?
ms=$((($(date +%s%N) - t0) / 1000000))
check "exec into the dead guest again: exits 3 (${ms} ms)" test "$rc" = 3
check "...at once, not after the agent timeout (${ms} ms)" test "$ms" -le 5000
check "...saying why" grep -q "guest $name rebooted" "$w/exec2.log"
check "down the dead guest" test "$(rc "$vnuma" down "$name")" = 0
check "...no QEMU left" no_qemu_left
check "...no domain left" no_domain_left

finish
