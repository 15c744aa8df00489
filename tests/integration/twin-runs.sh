#!/bin/bash
# Two `vnuma run`s at once on one state dir (label slow: it still fails now and
# then, the second run exiting 3; see the session 2 note). Shares faults.sh's set-up. Each must end in
# a clear error with the right exit code, a result that says incomplete, and
# no QEMU or domain left behind.
#   1. a sysctl value with a quote reaches the kernel as bytes, not a shell
#   2. QEMU killed with -9 in the middle of `run`
#   3. the results directory read-only, and full (a 64 KiB tmpfs)
#   4. SIGTERM during `up`, and during `run`
#   5. the agent killed inside the guest in the middle of `run`
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
show() { sed 's/^/#   /' "$1" | grep -v 'libvirt\|hostname: vm\|XATTR'; }
mkdir -p "$out"
scn=$src/scenarios/memfollow-2node.json

# 6. Two runs at once, one state dir: the embedded driver admits one process at a time, so they take turns at it.
"$vnuma" run "$scn" --quick -o "$out/twin-a" >"$out/twin-a.log" 2>&1 &
a=$!
"$vnuma" run "$scn" --quick -o "$out/twin-b" >"$out/twin-b.log" 2>&1 &
b=$!
wait "$a"
rc_a=$?
wait "$b"
rc_b=$?
echo "# two runs at once: exit $rc_a and $rc_b"
[ "$rc_a" = 0 ] || show "$out/twin-a.log"
[ "$rc_b" = 0 ] || show "$out/twin-b.log"
check "two runs at once: the first passes" test "$rc_a" = 0
check "...the second passes" test "$rc_b" = 0
check "...each in its own guest" sh -c "[ \"\$(grep -o '\"guest\": *\"[^\"]*' '$out/twin-a/result.json')\" != \"\$(grep -o '\"guest\": *\"[^\"]*' '$out/twin-b/result.json')\" ]"
check "...no QEMU left" no_qemu_left
check "...no domain left" no_domain_left

finish
