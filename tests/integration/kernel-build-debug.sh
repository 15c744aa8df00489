#!/bin/bash
# Slow test (ctest -L kernel-build; not in scripts/test.sh): tiny-numa built
# with --debug from Debian's linux-source-6.1: the entry's vmlinux carries
# DWARF (.debug_info), the gdb scripts are in it as files (vmlinux-gdb.py,
# scripts/gdb/linux/), gdb loads them from there (lx-symbols, lx-dmesg) and
# reads the kernel's types, a second build is a cache hit, and the entry is
# apart from tiny-numa's without debug. Prints the time and the sizes.
#   kernel-build-debug.sh VNUMA_BINARY   (VN_SOURCE_DIR: the repository)
set -euo pipefail

vnuma=$1
cd "${VN_SOURCE_DIR:?}"
if [ ! -r /usr/src/linux-source-6.1.tar.xz ]; then
	echo "SKIP: Debian's linux-source-6.1 is not installed" >&2
	exit 0
fi
export VNUMA_STATE_DIR=${VN_KERNEL_BUILD_STATE:-$(mktemp -d /tmp/vnuma-kernel-build-debug.XXXXXX)}
echo "state: $VNUMA_STATE_DIR"
fail() {
	echo "FAIL: $*" >&2
	exit 1
}

t0=$(date +%s)
out=$("$vnuma" kernel build --debug kernels/tiny-numa.json)
t1=$(date +%s)
echo "$out"
dir=$(dirname "$(echo "$out" | sed -n 's/^  image: *\([^ ]*\) .*/\1/p')")
[ -d "$dir" ] || fail "no cache entry in: $out"
echo "$out" | grep -q "^  vmlinux: $dir/vmlinux (with debug info)" || fail "kernel build does not name the vmlinux"

readelf -S -W "$dir/vmlinux" | grep -q ' \.debug_info ' || fail "$dir/vmlinux has no .debug_info"
for f in vmlinux-gdb.py scripts/gdb/linux/constants.py scripts/gdb/linux/symbols.py scripts/gdb/linux/dmesg.py \
	scripts/gdb/linux/utils.py; do
	[ -f "$dir/$f" ] && [ ! -L "$dir/$f" ] || fail "$dir/$f is not a file of the entry"
done
grep -q '^CONFIG_DEBUG_INFO=y$' "$dir/config" || fail "CONFIG_DEBUG_INFO not in the config"
grep -q '^CONFIG_GDB_SCRIPTS=y$' "$dir/config" || fail "CONFIG_GDB_SCRIPTS not in the config"
grep -q '^# CONFIG_DEBUG_INFO_REDUCED is not set$' "$dir/config" || fail "reduced debug info"
grep -q '"debug":true' <(tr -d ' \n' <"$dir/kernel.json") || fail "kernel.json does not say debug"

# gdb auto-loads the scripts beside the vmlinux (as vnuma debug runs it) and reads the types.
g=$(gdb -q -batch -nx -iex "add-auto-load-safe-path $dir" "$dir/vmlinux" \
	-ex 'help lx-dmesg' -ex 'help lx-symbols' -ex 'print sizeof(struct pglist_data)' 2>&1) || true
echo "$g"
echo "$g" | grep -qi 'kernel log buffer' || fail "lx-dmesg did not load"
echo "$g" | grep -q '^\$1 = [1-9]' || fail "gdb cannot size struct pglist_data"

"$vnuma" kernel build --debug kernels/tiny-numa.json | grep -q ': cached ' || fail "second build is not a cache hit"
"$vnuma" kernel list | tee /dev/stderr | grep -q '^tiny-numa+debug ' || fail "kernel list does not mark debug"
echo "tiny-numa --debug cold: $((t1 - t0)) s; entry $(du -sh "$dir" | cut -f1)," \
	"vmlinux $(du -h "$dir/vmlinux" | cut -f1), bzImage $(du -h "$dir/bzImage" | cut -f1)," \
	"build tree $(du -sh "$VNUMA_STATE_DIR"/cache/kernels/work | cut -f1)"
