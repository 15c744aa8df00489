#!/bin/bash
# Offline: `up --image DISK --with PKG` is refused (exit 2, one line) before
# anything is built or booted: the packages would go into the initramfs, which
# the disk's root replaces. Issue 46: it exited 0 with nothing in the root.
#   up-with-image.sh VNUMA_BINARY SOURCE_DIR
set -u
vnuma=$1
src=$2
. "$src/tests/lib.sh"
export VNUMA_STATE_DIR
VNUMA_STATE_DIR=$(mktemp -d /tmp/vnuma-upwith.XXXXXX)
trap 'rm -rf "$VNUMA_STATE_DIR"' EXIT

"$vnuma" up "$src/topologies/2node.xml" --image "$src/guest-images/tiny.json" --with e2fsprogs \
	>"$VNUMA_STATE_DIR/out" 2>"$VNUMA_STATE_DIR/err"
check "up --image tiny --with e2fsprogs exits 2" test $? = 2
check "...with one line" test "$(wc -l <"$VNUMA_STATE_DIR/err")" = 1
check "...naming --with and the recipe's key" grep -q -- '--with e2fsprogs: .*tiny.json.s "with"' "$VNUMA_STATE_DIR/err"
check "...having built nothing" sh -c "! ls '$VNUMA_STATE_DIR' | grep -q cache"
finish
