#!/bin/bash
# Integration: faults caused for real, under TCG (issue 9). Each must end in
# a clear error with the right exit code, a result that says incomplete, and
# no QEMU or domain left behind.
#   1. a sysctl value with a quote reaches the kernel as bytes, not a shell
#   2. QEMU killed with -9 in the middle of `run`
#   3. the results directory read-only, and full (a 64 KiB tmpfs)
#   4. SIGTERM during `up`, and during `run`
#   5. the agent killed inside the guest in the middle of `run`
#   6. two `run`s at once on one state dir (one embedded libvirt): both pass, side by side
# Needs root (mount) for 3; skips it otherwise. About 2 minutes on 2 cores.
#   faults.sh VNUMA_BINARY [SOURCE_DIR]
set -u
vnuma=$1
src=${2:-$(cd "$(dirname "$0")/../.." && pwd)}
export VNUMA_ACCEL=${VNUMA_ACCEL:-tcg}
export VNUMA_STATE_DIR=$(mktemp -d /tmp/vnuma-fault.XXXXXX)
out=$VNUMA_STATE_DIR/results
mounts=()
. "$src/tests/integration/lib.sh"

cleanup() {
	"$vnuma" down --all >/dev/null 2>&1
	for m in "${mounts[@]}"; do umount "$m" 2>/dev/null; done
	rm -rf "$VNUMA_STATE_DIR"
}
trap cleanup EXIT
wait_for() { # SECONDS COMMAND...: poll every 0.2 s
	local n=$(($1 * 5))
	shift
	for _ in $(seq "$n"); do "$@" && return 0; sleep 0.2; done
	return 1
}
has_samples() { [ -s "$1/samples.jsonl" ]; }
qemu_running() { qemu_pids >/dev/null; }
# fault_when SECONDS FAULT CONDITION...: once CONDITION holds (within SECONDS), eval FAULT, then wait
# for the background vnuma $bg; sets rc and secs (from the fault to its exit), or "never".
fault_when() {
	local max=$1 fault=$2 t0
	shift 2
	if wait_for "$max" "$@"; then
		eval "$fault"
		t0=$(date +%s)
		wait "$bg"
		rc=$?
		secs=$(($(date +%s) - t0))
	else
		kill -TERM "$bg"
		wait "$bg"
		rc=never secs=never
	fi
}
show() { sed 's/^/#   /' "$1" | grep -v 'hostname: vm\|XATTR'; }
mkdir -p "$out"
scn=$src/scenarios/memfollow-2node.json

# 1. Defect 7: the value "q'uote$(echo INJECTED)" must end up in kernel.hostname verbatim.
"$vnuma" run "$src/tests/integration/fixtures/sysctl-quote.json" --quick -o "$out/quote" >"$out/quote.log" 2>&1
rc=$?
echo "# sysctl-quote: exit $rc"
show "$out/quote.log"
check "a sysctl value with a quote: the run exits 0" test "$rc" = 0
check "...and the kernel got the value verbatim" test "$(cat "$out/quote/steps/show.r0.p0.out" 2>/dev/null)" = "q'uote\$(echo INJECTED)"

# 2. QEMU killed with -9 once sampling has begun.
"$vnuma" run "$scn" --quick -o "$out/kill9" >"$out/kill9.log" 2>&1 &
bg=$!
fault_when 150 'sleep 1; kill -9 $(qemu_pids)' has_samples "$out/kill9"
echo "# kill -9 qemu: exit $rc, ${secs}s after the kill"
show "$out/kill9.log"
check "QEMU killed with -9: run exits 3" test "$rc" = 3
check "...within 30 s of the kill (${secs}s)" test "$secs" -le 30
check "...result.json says incomplete" grep -Eq '"complete": *false' "$out/kill9/result.json"
check "...and why" grep -Eq '"error": *"[^"]+' "$out/kill9/result.json"
check "...and keeps what was sampled (samples > 0, samples.jsonl non-empty)" \
	sh -c "grep -Eq '\"samples\": *[1-9]' '$out/kill9/result.json' && [ -s '$out/kill9/samples.jsonl' ]"
check "...junit.xml has the error testcase" grep -q '<error ' "$out/kill9/junit.xml"
check "...no QEMU left" no_qemu_left
check "...no domain left" no_domain_left

# 3. The results directory read-only (refused before booting), then full (mid-run).
if [ "$(id -u)" = 0 ]; then
	mkdir -p "$out/ro" "$out/full"
	mount -t tmpfs -o size=64k,ro tmpfs "$out/ro" && mounts+=("$out/ro")
	"$vnuma" run "$scn" --quick -o "$out/ro/r" >"$out/ro.log" 2>&1
	rc=$?
	show "$out/ro.log"
	check "read-only results dir: run exits 3" test "$rc" = 3
	check "...naming the directory and the cause" grep -q "$out/ro/r.*Read-only file system" "$out/ro.log"
	check "...booting nothing" no_qemu_left

	mount -t tmpfs -o size=64k tmpfs "$out/full" && mounts+=("$out/full")
	"$vnuma" run "$scn" --quick -o "$out/full/r" >"$out/full.log" 2>&1
	rc=$?
	echo "# results disk full: exit $rc"
	show "$out/full.log"
	check "full results disk: run exits 3" test "$rc" = 3
	check "...with a clear error" grep -q "No space left on device" "$out/full.log"
	check "...the guest is destroyed (no QEMU)" no_qemu_left
	check "...and no domain left" no_domain_left
	check "...no temporary files left" test -z "$(find "$out/full" -name '*.tmp.*')"
else
	echo "# skipping the read-only/full results dir tests: not root"
fi

# 4a. SIGTERM during up, once QEMU runs.
"$vnuma" up "$src/topologies/2node.xml" >"$out/up.log" 2>&1 &
bg=$!
fault_when 120 'sleep 2; kill -TERM $bg' qemu_running
echo "# SIGTERM during up: exit $rc, ${secs}s after the signal"
show "$out/up.log"
check "SIGTERM during up: exits 3" test "$rc" = 3
check "...within 15 s (${secs}s)" test "$secs" -le 15
check "...no QEMU left" no_qemu_left
check "...no domain left" no_domain_left

# 4b. SIGTERM during run, once sampling has begun.
"$vnuma" run "$scn" --quick -o "$out/term" >"$out/term.log" 2>&1 &
bg=$!
fault_when 150 'kill -TERM $bg' has_samples "$out/term"
echo "# SIGTERM during run: exit $rc, ${secs}s after the signal"
show "$out/term.log"
check "SIGTERM during run: exits 3" test "$rc" = 3
check "...within 30 s (${secs}s)" test "$secs" -le 30
check "...result.json says incomplete" grep -Eq '"complete": *false' "$out/term/result.json"
check "...no QEMU left" no_qemu_left
check "...no domain left" no_domain_left

# 5. The agent killed with -9 inside the guest, by a step of the scenario itself.
t0=$(date +%s)
"$vnuma" run "$src/tests/integration/fixtures/agent-kill.json" -o "$out/agent" >"$out/agent.log" 2>&1
rc=$?
secs=$(($(date +%s) - t0))
echo "# agent killed in the guest: exit $rc after ${secs}s"
show "$out/agent.log"
check "agent killed in the guest: run exits 3" test "$rc" = 3
check "...well before the scenario's 240 s timeout (${secs}s)" test "$secs" -lt 200
check "...result.json says incomplete, and why" sh -c "grep -Eq '\"complete\": *false' '$out/agent/result.json' && grep -Eq '\"error\": *\"[^\"]+' '$out/agent/result.json'"
check "...no QEMU left" no_qemu_left
check "...no domain left" no_domain_left

# 6. Two runs at once, one state dir. The embedded driver holds the state dir
# until the process that opened it exits, so each run boots and destroys its
# guest in a short-lived child: the runs take turns only at those moments,
# their workloads overlap, and other commands get in while they run.
"$vnuma" run "$scn" --quick -o "$out/twin-a" >"$out/twin-a.log" 2>&1 &
a=$!
"$vnuma" run "$scn" --quick -o "$out/twin-b" >"$out/twin-b.log" 2>&1 &
b=$!
both=no list_s=never
for _ in $(seq 600); do
	kill -0 "$a" 2>/dev/null || kill -0 "$b" 2>/dev/null || break
	if [ "$both" = no ] && [ "$(qemu_pids | wc -l)" -ge 2 ]; then
		both=yes
		t0=$(date +%s%N)
		"$vnuma" list >/dev/null 2>&1 && list_s=$((($(date +%s%N) - t0) / 1000000000))
	fi
	sleep 0.5
done
wait "$a"
rc_a=$?
wait "$b"
rc_b=$?
echo "# two runs at once: exit $rc_a and $rc_b; both guests up at once: $both; a list meanwhile took ${list_s} s"
[ "$rc_a" = 0 ] || show "$out/twin-a.log"
[ "$rc_b" = 0 ] || show "$out/twin-b.log"
check "two runs at once: the first passes" test "$rc_a" = 0
check "...the second passes" test "$rc_b" = 0
check "...side by side (both guests up at once)" test "$both" = yes
check "...and a list got in meanwhile, within 60 s" sh -c "[ '$list_s' != never ] && [ '$list_s' -le 60 ]"
check "...each in its own guest" sh -c "[ \"\$(grep -o '\"guest\": *\"[^\"]*' '$out/twin-a/result.json')\" != \"\$(grep -o '\"guest\": *\"[^\"]*' '$out/twin-b/result.json')\" ]"
check "...no QEMU left" no_qemu_left
check "...no domain left" no_domain_left

finish
