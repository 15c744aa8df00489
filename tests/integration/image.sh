#!/bin/bash
# Integration: vnuma image inject + extract on an ext4 image that vnuma never
# built (mkfs.ext4 -d here), raw and then qcow2: checksums and modes survive
# the round trip; a path missing in the image exits 2 naming it; host-side
# mistakes exit 2 before any appliance starts; nothing is left behind.
# An image with an absolute symlink is extracted without writing through it.
# Five libguestfs appliance launches, about 2 min under TCG.
#   image.sh VNUMA_BINARY [SOURCE_DIR]
set -u
vnuma=$1
src=${2:-$(cd "$(dirname "$0")/../.." && pwd)}
export VNUMA_ACCEL=${VNUMA_ACCEL:-tcg}
. "$src/tests/integration/lib.sh"
it_state image
mkdir -p "$w/seed/etc" "$w/out"
echo "seeded by mkfs.ext4 -d" >"$w/seed/etc/motd"
head -c 3000000 /dev/urandom >"$w/blob"
printf '#!/bin/sh\necho hi\n' >"$w/tool" && chmod 0750 "$w/tool"
truncate -s 64M "$w/disk.img"
check "mkfs.ext4 -d makes a raw image vnuma never saw" mkfs.ext4 -q -L user -d "$w/seed" "$w/disk.img"

t0=$(date +%s.%N)
"$vnuma" image inject "$w/disk.img" --mkdir /opt/data --file "$w/blob:/opt/data/blob" --file "$w/tool:/opt/tool" \
	2>"$w/inject.err"
rc=$?
echo "# inject: $(cat "$w/inject.err") ($(echo "$(date +%s.%N) - $t0" | bc) s)"
check "inject --mkdir and two --file into the raw image" test "$rc" = 0

check "qemu-img converts it to qcow2" qemu-img convert -O qcow2 "$w/disk.img" "$w/disk.qcow2"
t0=$(date +%s.%N)
"$vnuma" image extract "$w/disk.qcow2" /opt /etc/motd -o "$w/out" 2>"$w/extract.err"
rc=$?
echo "# extract: $(cat "$w/extract.err") ($(echo "$(date +%s.%N) - $t0" | bc) s)"
check "extract a tree and a file from the qcow2 image" test "$rc" = 0
check "...the blob's checksum survives" cmp -s "$w/blob" "$w/out/opt/data/blob"
check "...the tool keeps its mode 0750" test "$(stat -c %a "$w/out/opt/tool")" = 750
check "...the seeded file is there" grep -q "mkfs.ext4 -d" "$w/out/etc/motd"

"$vnuma" image extract "$w/disk.qcow2" /etc/motd /no/such/file -o "$w/out2" 2>"$w/miss.err"
rc=$?
echo "# missing: $(cat "$w/miss.err")"
check "a path missing in the image exits 2" test "$rc" = 2
check "...naming it" grep -q /no/such/file "$w/miss.err"
check "...and writes nothing on the host" test ! -e "$w/out2"

# An image holding an absolute symlink, /var/log/d -> a host directory (as a
# guest's /var/log/d -> /etc would): the tree keeps the symlink as a symlink,
# and neither a second PATH of the same extract nor a later extract into the
# same DIR writes through it on the host. Two appliance launches.
victim=$w/victim
mkdir -p "$w/seed2/var/log" "$w/seed2$victim/cron.d" "$victim" "$w/out4"
echo "from the image" >"$w/seed2$victim/cron.d/x"
echo "the image's log" >"$w/seed2/var/log/messages"
ln -s "$victim" "$w/seed2/var/log/d"
truncate -s 64M "$w/links.img"
check "mkfs.ext4 -d makes an image with an absolute symlink" mkfs.ext4 -q -d "$w/seed2" "$w/links.img"
"$vnuma" image extract "$w/links.img" /var/log /var/log/d/cron.d/x -o "$w/out4" 2>"$w/links.err"
rc=$?
echo "# through a symlink of the image: $(cat "$w/links.err")"
check "a PATH through the image's symlink, after the tree that holds it, exits 2" test "$rc" = 2
check "...naming the symlink" grep -q "var/log/d is a symlink, not followed" "$w/links.err"
check "...the tree kept the symlink as a symlink" test "$(readlink "$w/out4/var/log/d")" = "$victim"
check "...and its file" grep -q "the image's log" "$w/out4/var/log/messages"
check "...nothing was written where the symlink points" test -z "$(ls -A "$victim")"
"$vnuma" image extract "$w/links.img" /var/log/d/cron.d -o "$w/out4" 2>"$w/links2.err"
rc=$?
check "a later extract of a tree into the same DIR through it exits 2" test "$rc" = 2
check "...and writes nothing where it points" test -z "$(ls -A "$victim")"

"$vnuma" image inject "$w/disk.img" --file "$w/nosuch:/opt/x" 2>"$w/nosrc.err"
check "a missing host file exits 2 (no appliance)" test $? = 2
"$vnuma" image inject "$w/disk.img" --file "$w/blob:relative" 2>"$w/rel.err"
check "a relative destination exits 2" test $? = 2
"$vnuma" image extract "$w/nosuch.qcow2" /etc -o "$w/out3" 2>"$w/noimg.err"
check "a missing image exits 2" test $? = 2
check "no QEMU left (the appliance is gone)" test -z "$(pgrep -f "qemu-system.*$w/disk" || true)"
check "no temporary extract files left" test -z "$(find /tmp -maxdepth 1 -name 'vnuma-extract-*' -newer "$w/disk.img" 2>/dev/null)"
finish
