#!/bin/bash
# Integration: host files in one booted 2node guest under TCG (issue 46):
# `up --share DIR --file F` mounts DIR read-only over virtio-9p and copies F
# in; a file read through the share and the copied file have the host's
# sha256sum; a write fails, even after the guest remounts the share rw (the
# host side refuses it); after down, no QEMU, domain or file is left.
#   share.sh VNUMA_BINARY [SOURCE_DIR]
set -u
vnuma=$1
src=${2:-$(cd "$(dirname "$0")/../.." && pwd)}
export VNUMA_ACCEL=${VNUMA_ACCEL:-tcg}
. "$src/tests/integration/lib.sh"
it_state share
mkdir -p "$w/dir"
head -c 3000000 /dev/urandom >"$w/dir/blob"
printf 'one file\n' >"$w/one"
sum() { sha256sum <"$1" | cut -d' ' -f1; }

name=$("$vnuma" up "$src/topologies/2node.xml" --share "$w/dir:/mnt/d" --file "$w/one:/root/in/one" \
	--timeout 180 2>"$w/up.err")
rc=$?
check "up 2node --share --file" test "$rc" = 0 || { sed 's/^/#   /' "$w/up.err"; finish; exit; }
check "a file through the share has the host's sha256sum" test \
	"$("$vnuma" exec "$name" -- sha256sum /mnt/d/blob </dev/null | cut -d' ' -f1)" = "$(sum "$w/dir/blob")"
check "the --file copy has the host's sha256sum" test \
	"$("$vnuma" exec "$name" -- sha256sum /root/in/one </dev/null | cut -d' ' -f1)" = "$(sum "$w/one")"
"$vnuma" exec "$name" -- sh -c 'echo x >/mnt/d/new' </dev/null 2>/dev/null
check "a write to the ro share fails" test $? != 0
"$vnuma" exec "$name" -- sh -c 'mount -o remount,rw /mnt/d; echo x >/mnt/d/new' </dev/null 2>/dev/null
check "...even remounted rw in the guest" test $? != 0
check "...and nothing appeared on the host" test ! -e "$w/dir/new"

"$vnuma" down "$name" >/dev/null 2>&1
check "down" test $? = 0
check "no QEMU left" no_qemu_left
check "no domain left" no_domain_left
check "no virtiofsd left" test -z "$(pgrep -x virtiofsd)"
check "the guest dir is gone" test ! -e "$VNUMA_STATE_DIR/guests/$name"
finish
