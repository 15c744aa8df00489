# Shared by the integration scripts: tests/lib.sh's checks (every result
# printed: these runs are slow and their logs are read), plus the "nothing of
# ours left" probes. Needs $vnuma and $VNUMA_STATE_DIR.
VN_TEST_VERBOSE=1
. "$(dirname "${BASH_SOURCE[0]}")/../lib.sh"
# QEMU processes of this state dir only (other engineers' and CI jobs' guests are not ours).
qemu_pids() { pgrep -f "qemu-system.*$VNUMA_STATE_DIR"; }
no_qemu_left() { ! qemu_pids >/dev/null; }
vnuma_domains() { "$vnuma" list 2>/dev/null | tail -n +2 | wc -l; }
no_domain_left() { [ "$(vnuma_domains)" = 0 ]; }

# Booted snapshots are off unless a script asks for them (warm.sh): the other
# scripts check what a boot does, and each first boot would pay a save.
export VNUMA_WARM_CACHE_MAX=${VNUMA_WARM_CACHE_MAX-0}

# it_state NAME: a fresh state dir for this script ($VNUMA_STATE_DIR, with a
# work dir $w in it), every guest in it taken down and the dir removed on exit.
it_state() {
	export VNUMA_STATE_DIR
	VNUMA_STATE_DIR=$(mktemp -d "/tmp/vnuma-$1.XXXXXX")
	w=$VNUMA_STATE_DIR/work
	mkdir -p "$w"
	trap it_state_cleanup EXIT
}
it_state_cleanup() {
	"$vnuma" down --all >/dev/null 2>&1
	rm -rf "$VNUMA_STATE_DIR"
}
