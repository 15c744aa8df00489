#!/bin/bash
# A kernel build that fills the disk (issue 45): exit 3 saying the disk is full, no cache entry,
# and once there is room the same build goes through. The build's state is a tiny tmpfs, so it
# needs root (CI runs as root); it exits 77 (skipped) otherwise.
#   disk-full.sh VNUMA_BINARY SOURCE_DIR
set -u
vnuma=$1
src=$2
. "$(dirname "$0")/../lib.sh"

[ "$(id -u)" = 0 ] || { echo "SKIP: mounting a tmpfs needs root"; exit 77; }
tmp=$(mktemp -d /tmp/vn-disk-full-XXXXXX)
state=$tmp/state
mkdir -p "$state"
if ! mount -t tmpfs -o size=4m vn-disk-full "$state"; then
	rm -rf "$tmp"
	echo "SKIP: cannot mount a tmpfs here"
	exit 77
fi
trap 'umount "$state"; rm -rf "$tmp"' EXIT

# A fake kernel tree whose bzImage step first writes 8 MiB, as a real build's objects would.
t=$tmp/tree/linux-fake
mkdir -p "$t/scripts/kconfig" "$t/mm" "$tmp/fake"
printf '%s\n' 'tinyconfig:' '	mkdir -p $(O) && : > $(O)/.config' \
	'olddefconfig:' '	cat required.config >> $(O)/.config' \
	'bzImage:' '	dd if=/dev/zero of=$(O)/objects bs=1M count=8 status=none' \
	'	mkdir -p $(O)/arch/x86/boot && cat bzImage.in mm/x.c > $(O)/arch/x86/boot/bzImage' \
	'.PHONY: tinyconfig olddefconfig bzImage' >"$t/Makefile"
printf '%s\n' 'base=$4' 'shift 4' 'for f in $*; do cat $f >> $base || exit 1; done' >"$t/scripts/kconfig/merge_config.sh"
echo 'int x;' >"$t/mm/x.c"
# Every option vnuma requires of a kernel, on any architecture.
grep -o '"CONFIG_[A-Z0-9_]*"' "$src/src/kernel/config.c" | tr -d '"' | sort -u | sed 's/$/=y/' >"$t/required.config"
# x86's boot header: "HdrS" at 0x202, the version string at 0x20e's 0x100 + 0x200.
head -c 1024 /dev/zero >"$t/bzImage.in"
put() { printf "$2" | dd of="$t/bzImage.in" bs=1 seek=$(($1)) conv=notrunc status=none; }
put 0x202 'HdrS'
put 0x20f '\001'
put 0x300 '6.1.0-fake (vnuma@test) #1\000'
tar -cf "$tmp/fake.tar" -C "$tmp/tree" linux-fake
echo 'CONFIG_NUMA=y' >"$tmp/fake/numa.config"
echo '{"type": "source", "tree": "fake.tar", "config": {"base": "tinyconfig", "fragments": ["numa.config"]}}' \
	>"$tmp/fake.json"

build() { VNUMA_STATE_DIR=$state "$vnuma" kernel build -j 1 "$tmp/fake.json" >"$tmp/out" 2>&1; echo $?; }
entries() { ls "$state/cache/kernels/kernels" 2>/dev/null | grep -cv '^failed-'; }

check "a build that fills the disk exits 3" test "$(build)" = 3 || cat "$tmp/out"
check "...saying the disk is full" grep -q 'the disk is full' "$tmp/out" || cat "$tmp/out"
check "...and caches nothing" test "$(entries)" = 0
mount -o remount,size=64m "$state"
check "with room, the same build goes through" test "$(build)" = 0 || cat "$tmp/out"
check "...into the cache" test "$(entries)" = 1
finish
