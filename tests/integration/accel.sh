#!/bin/bash
# Integration: the accelerator is proven by a real boot on whatever this host
# has (no /dev/kvm, a /dev/kvm QEMU cannot use, a silent one, or a working
# KVM), and `vnuma doctor` agrees with what `up` then does.
#   accel.sh VNUMA_BINARY [SOURCE_DIR]
set -u
vnuma=$1
src=${2:-$(cd "$(dirname "$0")/../.." && pwd)}
export VNUMA_STATE_DIR=$(mktemp -d /tmp/vnuma-accel.XXXXXX)
unset VNUMA_ACCEL
. "$src/tests/integration/lib.sh"

cleanup() {
	"$vnuma" down --all >/dev/null 2>&1
	rm -rf "$VNUMA_STATE_DIR"
}
trap cleanup EXIT

timed_up() { # ARGS... -> NAME, UP_RC, UP_ERR, UP_S
	local t0=$(date +%s.%N)
	NAME=$("$vnuma" up "$@" 2>"$VNUMA_STATE_DIR/up.err")
	UP_RC=$?
	UP_ERR=$(cat "$VNUMA_STATE_DIR/up.err")
	UP_S=$(echo "$(date +%s.%N) - $t0" | bc)
	echo "# up $*: exit $UP_RC in ${UP_S}s"
	echo "$UP_ERR" | grep -E '^(boot: booting|KVM|guest .* is up)' | sed 's/^/#   /'
}
has_kvm=0
[ -e /dev/kvm ] && has_kvm=1
echo "# /dev/kvm: $([ $has_kvm = 1 ] && echo present || echo absent)"

# 1. An empty state dir: the first up decides, without waiting out the agent timeout.
timed_up 2node --timeout 170
check "first up with an empty state dir exits 0" test "$UP_RC" = 0
check "it names the accelerator and why" sh -c "echo \"\$0\" | grep -Eq 'is up: kernel [^,]+, (KVM \\(proven: kernel printed|TCG \\(no usable KVM: )'" "$UP_ERR"
check "it did not wait out the agent timeout" test "$(echo "$UP_S < 150" | bc)" = 1
check "boot stages are printed one per line off a TTY" sh -c "echo \"\$0\" | grep -q '^boot: defining' && echo \"\$0\" | grep -q '^boot: kernel started' && echo \"\$0\" | grep -q '^boot: agent answered' && echo \"\$0\" | grep -q '^boot: fidelity checked: ok'" "$UP_ERR"
if [ $has_kvm = 0 ]; then
	check "no /dev/kvm: TCG, said so, nothing cached" sh -c "echo \"\$0\" | grep -q 'TCG (no usable KVM: no /dev/kvm)' && [ ! -s '$VNUMA_STATE_DIR/accel.cache' ]" "$UP_ERR"
elif echo "$UP_ERR" | grep -q 'is up: .*TCG'; then
	check "a /dev/kvm that does not work: told before the TCG boot" sh -c "echo \"\$0\" | grep -q '^KVM: .*; using TCG'" "$UP_ERR"
	check "...in one short line, not QEMU's whole text" sh -c "echo \"\$0\" | grep '^KVM: ' | awk 'length > 200 { exit 1 }'" "$UP_ERR"
	check "...and the up summary says it short too" sh -c "echo \"\$0\" | grep 'is up: ' | awk 'length > 300 { exit 1 }'" "$UP_ERR"
	check "...and the TCG verdict is cached with its reason" grep -Eq ' tcg .{10,}' "$VNUMA_STATE_DIR/accel.cache"
else
	check "a working KVM is cached as proven" grep -q ' kvm proven' "$VNUMA_STATE_DIR/accel.cache"
fi
verdict=$(echo "$UP_ERR" | sed -n 's/.*is up: kernel [^,]*, \(KVM\|TCG\).*/\1/p')
"$vnuma" exec "$NAME" -- true
check "the guest answers" test $? = 0
"$vnuma" down "$NAME" >/dev/null 2>&1

# 2. The second up uses what the first one proved, and says it is cached.
timed_up 2node
check "second up exits 0 under the same accelerator" sh -c "echo \"\$0\" | grep -q 'is up: kernel [^,]*, $verdict'" "$UP_ERR"
if [ $has_kvm = 1 ]; then
	check "...and says the verdict was cached" sh -c "echo \"\$0\" | grep -q 'is up: .*cached verdict'" "$UP_ERR"
fi
"$vnuma" down "$NAME" >/dev/null 2>&1

# 3. Forced: VNUMA_ACCEL=kvm on a host whose KVM does not work fails fast (exit 3), no fallback.
if [ $has_kvm = 1 ] && [ "$verdict" = TCG ]; then
	t0=$(date +%s)
	VNUMA_ACCEL=kvm "$vnuma" up 2node --timeout 170 >/dev/null 2>"$VNUMA_STATE_DIR/forced.err"
	rc=$?
	check "forced KVM that cannot work exits 3" test $rc = 3
	check "...says it was forced" grep -q 'forced by VNUMA_ACCEL' "$VNUMA_STATE_DIR/forced.err"
	check "...within a minute" test $(($(date +%s) - t0)) -lt 60
	check "...and leaves no QEMU" no_qemu_left
fi
VNUMA_ACCEL=quick "$vnuma" up 2node >/dev/null 2>"$VNUMA_STATE_DIR/bad.err"
check "a bad VNUMA_ACCEL is bad input (exit 2)" test $? = 2

# 4. doctor: one line per check, JSON too, and it agrees with up.
"$vnuma" doctor --json >"$VNUMA_STATE_DIR/doctor.json" 2>"$VNUMA_STATE_DIR/doctor.err"
check "doctor --json exits 0 on a host that boots guests" test $? = 0
check "doctor probed TCG for real" grep -A2 '"name":"tcg-probe"' "$VNUMA_STATE_DIR/doctor.json" | grep -q '"verdict":"ok"'
check "doctor's accelerator is the one up used" grep -qi "\"accelerator\":\"$verdict\"" "$VNUMA_STATE_DIR/doctor.json"
check "doctor leaves no guest dir behind" test -z "$(ls -A "$VNUMA_STATE_DIR/guests")"
check "doctor leaves no QEMU behind" no_qemu_left
"$vnuma" doctor --state-dir /proc/no-such-dir >/dev/null 2>&1
check "doctor on an unusable state dir exits 3" test $? = 3

# 5. A host whose /dev/kvm is no KVM at all (a private mount namespace binds
#    /dev/null over it): QEMU cannot use it, libvirt says so, and up still
#    boots under TCG, says why, and caches nothing (nothing was proven).
if [ "$(id -u)" = 0 ] && [ $has_kvm = 1 ] && command -v unshare >/dev/null; then
	fake=$(mktemp -d /tmp/vnuma-nokvm.XXXXXX)
	unshare -m sh -c "mount --bind /dev/null /dev/kvm && VNUMA_STATE_DIR='$fake' '$vnuma' up 2node --name nokvm >/dev/null 2>'$fake.err'; echo \$? >'$fake.rc'; VNUMA_STATE_DIR='$fake' '$vnuma' down --all >/dev/null 2>&1"
	check "a /dev/kvm that is not KVM: up exits 0 under TCG" test "$(cat "$fake.rc")" = 0
	check "...and names why" grep -q 'is up: .*TCG (no usable KVM: ' "$fake.err"
	check "...and caches no verdict it did not prove" test ! -s "$fake/accel.cache"
	VNUMA_STATE_DIR=$fake check "...and leaves no QEMU" no_qemu_left
	grep 'is up' "$fake.err" | sed 's/^/#   /'
	rm -rf "$fake" "$fake.err" "$fake.rc"
fi

# 6. The boot path is proven like the accelerator: the first up booted the
#    kernel's PVH vmlinux and marked it proven. A PVH vmlinux that halts at
#    its entry (the cached one with its text overwritten by hlt), not yet
#    proven, gets half the deadline, its logs are kept, the bzImage boots, and
#    the stall is remembered so the next up goes straight to the bzImage.
elf=$(ls "$VNUMA_STATE_DIR"/cache/vmlinux/*.elf 2>/dev/null | head -n 1)
check "the first up proved the PVH path of its kernel" test -e "$elf.proven"
if [ -n "$elf" ]; then
	rm -f "$elf.proven"
	off=$(readelf -lW "$elf" | awk '$1 == "LOAD" { print $2; exit }')
	head -c 1048576 /dev/zero | tr '\000' '\364' | dd of="$elf" bs=4096 seek=$((off / 4096)) conv=notrunc status=none
	timed_up 2node --name stall --timeout 90
	check "a PVH boot that stalls: up still exits 0" test "$UP_RC" = 0
	check "...says so and boots the bzImage" sh -c "echo \"\$0\" | grep -q 'PVH, the kernel printed nothing); its logs are in .*; booting the bzImage instead'" "$UP_ERR"
	check "...keeps the stalled attempt's logs" sh -c "ls -d '$VNUMA_STATE_DIR'/failed/stall-* >/dev/null"
	check "...and remembers the stall, with why" grep -q 'PVH, the kernel printed nothing' "$elf.stalled"
	"$vnuma" down stall >/dev/null 2>&1
	timed_up 2node --name after
	check "the next up boots the bzImage straight away" sh -c "echo \"\$0\" | grep -q '^boot: defining: .*kernel [^ ]*\$' && ! echo \"\$0\" | grep -q 'booting the bzImage instead'" "$UP_ERR"
	"$vnuma" down after >/dev/null 2>&1
fi

finish
