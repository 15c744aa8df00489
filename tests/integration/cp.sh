#!/bin/bash
# Integration: vnuma cp in and out of one booted 2node guest under TCG (issue 16).
# A 50 MB file and a tree with modes go in and come back with the same
# sha256sum; a missing source exits 2; a full guest file system exits 3,
# says so and leaves nothing; world-writable guest modes come out through
# the umask unless --preserve-mode, and a copy over --max-bytes exits 3 and
# leaves nothing; no guest or QEMU is left. About a minute. (A guest that
# lies about its sizes is test-copy's fake agent: no guest needed.)
#   cp.sh VNUMA_BINARY [SOURCE_DIR]
set -u
vnuma=$1
src=${2:-$(cd "$(dirname "$0")/../.." && pwd)}
export VNUMA_ACCEL=${VNUMA_ACCEL:-tcg}
. "$src/tests/integration/lib.sh"
it_state cp
umask 022
mkdir -p "$w/tree/sub/deeper" "$w/back"
head -c 50000000 /dev/urandom >"$w/big"
printf 'run me\n' >"$w/tree/tool" && chmod 0755 "$w/tree/tool"
printf 'secret\n' >"$w/tree/sub/key" && chmod 0600 "$w/tree/sub/key"
head -c 3000000 /dev/urandom >"$w/tree/sub/deeper/blob" && chmod 0640 "$w/tree/sub/deeper/blob"
: >"$w/tree/empty"
chmod 0750 "$w/tree/sub"
modes() { (cd "$1" && find . -printf '%P %m %s\n' | sort); }
sums() { (cd "$1" && find . -type f -print0 | sort -z | xargs -0 sha256sum); }

name=$("$vnuma" up "$src/topologies/2node.xml" --timeout 180 2>"$w/up.err")
rc=$?
check "up 2node" test "$rc" = 0 || { sed 's/^/#   /' "$w/up.err"; finish; exit; }

"$vnuma" cp "$w/big" "$name:/tmp/big" 2>"$w/in.err"
rc=$?
echo "# in:  $(cat "$w/in.err")"
check "cp a 50 MB file in" test "$rc" = 0
check "...the guest's sha256sum equals the host's" test \
	"$("$vnuma" exec "$name" -- sha256sum /tmp/big </dev/null | cut -d' ' -f1)" = "$(sha256sum <"$w/big" | cut -d' ' -f1)"
"$vnuma" cp "$name:/tmp/big" "$w/back/big" 2>"$w/out.err"
rc=$?
echo "# out: $(cat "$w/out.err")"
check "cp it back out" test "$rc" = 0
check "...checksums equal" cmp -s "$w/big" "$w/back/big"

"$vnuma" cp -r "$w/tree" "$name:/root" 2>"$w/tin.err"
check "cp -r a tree in" test $? = 0
"$vnuma" cp -r "$name:/root/tree" "$w/back" 2>"$w/tout.err"
check "cp -r it back out" test $? = 0
check "...modes and sizes kept both ways" test "$(modes "$w/tree")" = "$(modes "$w/back/tree")"
check "...checksums equal" test "$(sums "$w/tree")" = "$(sums "$w/back/tree")"

# World-writable modes in the guest: through the umask on the host unless --preserve-mode.
mkdir -p "$w/ww/spool" && printf 'x\n' >"$w/ww/tool" && printf 'y\n' >"$w/ww/shared"
chmod 0777 "$w/ww" "$w/ww/tool" && chmod 0666 "$w/ww/shared" && chmod 01777 "$w/ww/spool"
"$vnuma" cp -r "$w/ww" "$name:/root" 2>/dev/null
check "cp -r a world-writable tree in" test $? = 0
mkdir -p "$w/dflt" "$w/kept"
"$vnuma" cp -r "$name:/root/ww" "$w/dflt" 2>"$w/ww.err"
check "cp -r it out" test $? = 0
check "...through the umask: 0755, 0644, 01755, 0755" test \
	"$(modes "$w/dflt/ww" | cut -d' ' -f1,2 | tr '\n' ' ')" = " 755 shared 644 spool 1755 tool 755 "
"$vnuma" cp -r --preserve-mode "$name:/root/ww" "$w/kept" 2>/dev/null
check "cp -r --preserve-mode keeps them, the sticky bit too" test \
	"$(modes "$w/kept/ww" | cut -d' ' -f1,2 | tr '\n' ' ')" = " 777 shared 666 spool 1777 tool 777 "
"$vnuma" cp --max-bytes 10M "$name:/tmp/big" "$w/back/capped" 2>"$w/cap.err"
rc=$?
echo "# capped: $(cat "$w/cap.err")"
check "a copy over --max-bytes exits 3" test "$rc" = 3
check "...says so" grep -q -- "--max-bytes" "$w/cap.err"
check "...and leaves nothing" test -z "$(ls -A "$w/back" | grep -v '^big$\|^tree$')"

"$vnuma" cp "$w/nosuch" "$name:/tmp/" 2>"$w/miss.err"
rc=$?
check "a missing host source exits 2" test "$rc" = 2
check "...naming it" grep -q nosuch "$w/miss.err"
"$vnuma" cp "$name:/nosuch" "$w/back/" 2>"$w/miss2.err"
rc=$?
check "a missing guest source exits 2" test "$rc" = 2
check "...naming it" grep -q nosuch "$w/miss2.err"

# A 16 MB tmpfs in the guest cannot hold 50 MB: exit 3, said, and nothing left there.
"$vnuma" exec "$name" -- sh -c 'mkdir -p /mnt/small && mount -t tmpfs -o size=16m tmpfs /mnt/small' </dev/null
"$vnuma" cp "$w/big" "$name:/mnt/small/big" 2>"$w/full.err"
rc=$?
echo "# full: $(cat "$w/full.err")"
check "a full guest file system exits 3" test "$rc" = 3
check "...and says so" grep -q "file system is full" "$w/full.err"
check "...the partial copy is removed" test -z "$("$vnuma" exec "$name" -- ls -A /mnt/small </dev/null)"

"$vnuma" down "$name" >/dev/null 2>&1
check "down" test $? = 0
check "no QEMU left" no_qemu_left
check "no domain left" no_domain_left
finish
