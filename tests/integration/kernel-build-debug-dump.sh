#!/bin/bash
# Slow test (ctest -L kernel-build; not in scripts/test.sh; issue 49): a
# recipe kernel with debug info, panicked in a scenario and read from the
# dump the run kept. tiny-numa built with --debug (or found in the cache of
# VN_KERNEL_BUILD_STATE), booted by `vnuma run --dump-on panic` on
# 4node-amd; a cmd step panics it through sysrq. The run exits 3 and keeps
# vmcore and vmcore.json naming the cache entry's vmlinux; crash on it with
# that vmlinux (--no_kmem_cache: tinyconfig's SLOB): `bt` is the sysrq
# panic's, `kmem -n` lists the 4 nodes with their pages;
# `collect --deep --dump` on it (drgn): every section equals the model, and
# each node's zonelist is `vnuma topo fallback`'s order for the shape.
# Needs crash and drgn (a SKIP without). 17 s with the kernel cached; a
# cold debug build is 20-40 min on 2 cores (docs/kernels.md).
#   kernel-build-debug-dump.sh VNUMA_BINARY   (VN_SOURCE_DIR: the repository)
set -u
vnuma=$1
src=${VN_SOURCE_DIR:?}
export VNUMA_ACCEL=${VNUMA_ACCEL:-tcg}
for t in crash drgn; do
	command -v "$t" >/dev/null || { echo "SKIP: $t is not installed" >&2; exit 0; }
done
if [ ! -r /usr/src/linux-source-6.1.tar.xz ]; then
	echo "SKIP: Debian's linux-source-6.1 is not installed" >&2
	exit 0
fi
. "$src/tests/integration/lib.sh"

# The kernel's cache apart from the guests' state dir, which it_state removes.
kstate=${VN_KERNEL_BUILD_STATE:-}
[ -n "$kstate" ] || kstate=$(mktemp -d /tmp/vnuma-kernel-build-dump.XXXXXX)
t0=$(date +%s)
if ! kout=$(VNUMA_STATE_DIR=$kstate "$vnuma" kernel build --debug "$src/kernels/tiny-numa.json"); then
	echo "FAIL - kernel build --debug tiny-numa"
	exit 1
fi
echo "$kout"
echo "# kernel build --debug: $(($(date +%s) - t0)) s"
image=$(echo "$kout" | sed -n 's/^  image: *\([^ ]*\) .*/\1/p')
dir=$(dirname "$image")
it_state kernel-build-debug-dump
[ -n "${VN_KERNEL_BUILD_STATE:-}" ] || trap 'it_state_cleanup; rm -rf "$kstate"' EXIT
check "the debug entry has its vmlinux" test -f "$dir/vmlinux"
for o in CONFIG_PVPANIC_MMIO CONFIG_FW_CFG_SYSFS CONFIG_CRASH_CORE CONFIG_MAGIC_SYSRQ; do
	check "...and $o=y" grep -q "^$o=y\$" "$dir/config"
done

topo=$src/topologies/4node-amd.xml
cat >"$w/panic.json" <<EOF
{
  "name": "debug-panic",
  "topology": "$topo",
  "timeout_s": 900,
  "steps": [{"name": "crash", "workload": "cmd", "command": ["sh", "-c", "sleep 2; echo c > /proc/sysrq-trigger; sleep 600"]}],
  "assertions": [{"type": "distances"}]
}
EOF
t1=$(date +%s)
"$vnuma" run "$w/panic.json" --kernel "$image" -o "$w/run" --dump-on panic >"$w/run.log" 2>&1
rc=$?
echo "# run --dump-on panic: exit $rc in $(($(date +%s) - t1)) s"
check "run --dump-on panic: the sysrq panic exits 3" test "$rc" = 3 || sed 's/^/#   /' "$w/run.log"
check "...the dump kept in the run's directory" test -s "$w/run/vmcore"
check "...the guest crashed (pvpanic), not reset" grep -q '"state":"crashed"' "$w/run/vmcore.json"
tr -d ' \n' <"$w/run/vmcore.json" >"$w/vmcore.json.flat"
check "...vmcore.json names the entry's vmlinux" grep -qF "\"vmlinux\":\"$dir/vmlinux\"" "$w/vmcore.json.flat" ||
	sed 's/^/#   /' "$w/run/vmcore.json"
check "...and the dump has the kernel's VMCOREINFO (fw_cfg)" bash -c "readelf -n '$w/run/vmcore' | grep -q VMCOREINFO"
check "no QEMU left" no_qemu_left
check "no domain left" no_domain_left

# crash with the entry's vmlinux: the panic's backtrace, and the nodes' memory. tiny-numa has
# tinyconfig's SLOB, whose caches crash 8.0.2 cannot read (kmem_cache_s_num): --no_kmem_cache.
printf 'sys\nbt\nkmem -n\nquit\n' >"$w/crash.in"
t2=$(date +%s)
timeout 600 crash -s --no_kmem_cache "$dir/vmlinux" "$w/run/vmcore" -i "$w/crash.in" >"$w/crash.out" 2>&1
echo "# crash: exit $? in $(($(date +%s) - t2)) s"
sed -n '/PANIC:/p;/^ #[0-9]/p' "$w/crash.out" | head -12 | sed 's/^/#   /'
check "crash: the panic is sysrq's" grep -q 'PANIC: .*sysrq triggered crash' "$w/crash.out" ||
	sed 's/^/#   /' "$w/crash.out" | tail -30
# tiny-numa is built for size: sysrq_handle_crash is inlined into __handle_sysrq there.
check "crash: bt goes from the write to /proc/sysrq-trigger" grep -q ' write_sysrq_trigger at ' "$w/crash.out"
check "...through sysrq's handler to panic" grep -Eq ' (__handle_sysrq|sysrq_handle_crash)(\.[a-z]+)? at ' "$w/crash.out"
# kmem -n: a "NODE SIZE PGLIST_DATA ..." header per node, then its row: id, pages, pglist_data.
awk '/^NODE +SIZE +PGLIST_DATA/ { getline; if ($2 ~ /^[0-9]+$/ && $2 > 0) print $1 }' "$w/crash.out" |
	tr '\n' ' ' >"$w/kmem-nodes"
echo "# kmem -n nodes: $(cat "$w/kmem-nodes")"
check "crash: kmem -n lists nodes 0 1 2 3" test "$(cat "$w/kmem-nodes")" = "0 1 2 3 "

# drgn with the entry's vmlinux (collect --deep --dump: the vmlinux vmcore.json names, the run's
# topology.xml): every section against the model, and each node's zonelist against topo fallback's.
t3=$(date +%s)
"$vnuma" collect --deep --dump "$w/run/vmcore" -o "$w/deep" >"$w/deep.out" 2>"$w/deep.err"
rc=$?
echo "# collect --deep --dump: exit $rc in $(($(date +%s) - t3)) s"
sed 's/^/#   /' "$w/deep.out" "$w/deep.err"
check "collect --deep --dump: the kernel's structures equal the model (exit 0)" test "$rc" = 0
check "...read with the entry's vmlinux" grep -qF "drgn ($dir/vmlinux)" "$w/deep.err"
python3 - "$w/deep/deep.json" >"$w/kernel.fallback" 2>"$w/py.err" <<'EOF'
import json, sys
for z in json.load(open(sys.argv[1]))["zonelists"]:
    print("Fallback order for Node %d: %s" % (z["node"], " ".join(map(str, z["order"]))))
EOF
check "drgn read the zonelists" test -s "$w/kernel.fallback" || sed 's/^/#   /' "$w/py.err"
"$vnuma" topo fallback "$topo" | sed 's/ *$//' >"$w/model.fallback"
sed 's/^/#   kernel: /' "$w/kernel.fallback"
check "drgn: 4 nodes' zonelists" test "$(wc -l <"$w/kernel.fallback")" = 4
check "drgn: every node's zonelist is the model's fallback order" diff "$w/model.fallback" "$w/kernel.fallback"
finish
