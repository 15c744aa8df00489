# Shared by the integration scripts that source it: TAP-ish checks and the
# "nothing of ours left" probes. Needs $vnuma and $VNUMA_STATE_DIR.
pass=0 fail=0
ok() { pass=$((pass + 1)); echo "ok - $*"; }
bad() { fail=$((fail + 1)); echo "FAIL - $*"; }
check() { # DESCRIPTION COMMAND...
	local d=$1
	shift
	if "$@"; then ok "$d"; else bad "$d"; fi
}
# QEMU processes of this state dir only (other engineers' and CI jobs' guests are not ours).
qemu_pids() { pgrep -f "qemu-system.*$VNUMA_STATE_DIR"; }
no_qemu_left() { ! qemu_pids >/dev/null; }
vnuma_domains() { "$vnuma" list 2>/dev/null | tail -n +2 | wc -l; }
no_domain_left() { [ "$(vnuma_domains)" = 0 ]; }
# Ends the script with its verdict.
finish() {
	echo "$pass passed, $fail failed"
	[ "$fail" = 0 ]
}
