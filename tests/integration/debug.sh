#!/bin/bash
# Integration: vnuma debug and vnuma dump on one booted 2node guest under TCG
# (issue 49). `debug --print`'s target remote line lets gdb read linux_banner
# and init_uts_ns by address (/proc/kallsyms, no debug info needed), the
# guest runs on after gdb detaches, and Ctrl-C stops the stub (its port
# closes). `dump` writes an ELF core and FILE.json (no .partial left),
# refuses an existing file (exit 2) and a disk too small (a 16 MiB tmpfs,
# root only: exit 3, nothing written). A sysrq panic leaves the guest
# "crashed" (pvpanic, <on_crash>preserve) and its dump is taken; with
# crash, drgn and Debian's -dbg vmlinux installed, crash's bt shows the
# sysrq crash and drgn reads each node's zonelist equal to the model's
# fallback order. `run --dump-on panic` with a step that panics the guest
# (sysrq) keeps the dump in the run's directory. `collect --deep` on the
# crashed guest, on 4node-amd (and against pre-5.15's model: exit 1, node
# 3) and on 4node-cxl-tiered (tiers, demotion) with the -dbg vmlinux; without
# it, exit 3 and the package to install. Nothing left. A few minutes.
#   debug.sh VNUMA_BINARY [SOURCE_DIR]
set -u
vnuma=$1
src=${2:-$(cd "$(dirname "$0")/../.." && pwd)}
export VNUMA_ACCEL=${VNUMA_ACCEL:-tcg}
. "$src/tests/integration/lib.sh"
it_state debug

name=$("$vnuma" up "$src/topologies/2node.xml" --timeout 180 2>"$w/up.err")
rc=$?
check "up 2node" test "$rc" = 0 || { sed 's/^/#   /' "$w/up.err"; finish; exit; }
sym() { "$vnuma" exec "$name" -- grep " $1\$" /proc/kallsyms </dev/null | cut -d' ' -f1; }
banner=$(sym linux_banner)
uts=$(sym init_uts_ns)
check "kallsyms gives linux_banner and init_uts_ns" test -n "$banner" -a -n "$uts"

"$vnuma" debug "$name" --print >"$w/debug.out" 2>"$w/debug.err" &
dbg=$!
for _ in $(seq 100); do grep -q '^target remote' "$w/debug.out" && break; sleep 0.1; done
target=$(head -1 "$w/debug.out")
port=${target##*:}
check "debug --print: a target remote line on 127.0.0.1" grep -Eq '^target remote 127\.0\.0\.1:[0-9]+$' <<<"$target"
check "...and the gdb command" grep -q "^gdb -q .*'$target'" "$w/debug.out"
timeout 120 gdb -q -batch -ex "$target" -ex "x/s 0x$banner" -ex "x/s 0x$uts" -ex detach >"$w/gdb.out" 2>&1
check "gdb reads linux_banner through it" grep -q '"Linux version ' "$w/gdb.out"
check "...and init_uts_ns (sysname)" grep -q '"Linux"' "$w/gdb.out"
check "the guest runs on after gdb detached" "$vnuma" exec "$name" -- true
kill -INT "$dbg"
wait "$dbg"
check "Ctrl-C ends vnuma debug (exit 0)" test $? = 0
check "...its gdbstub stopped: port $port closed" bash -c "! (exec 3<>/dev/tcp/127.0.0.1/$port) 2>/dev/null"
check "...and said so" grep -q "gdbstub of $name stopped" "$w/debug.err"

"$vnuma" dump "$name" -o "$w/live.vmcore" >"$w/dump.out" 2>"$w/dump.err"
check "dump a running guest" test $? = 0
check "...an ELF core" bash -c "od -An -c -N4 '$w/live.vmcore' | grep -q 'E   L   F'"
check "...its description beside it" grep -q '"format":"elf"' "$w/live.vmcore.json"
check "...no .partial left" test ! -e "$w/live.vmcore.partial"
"$vnuma" dump "$name" -o "$w/live.vmcore" 2>/dev/null
check "a dump over an existing file: exit 2" test $? = 2
if [ "$(id -u)" = 0 ] && mkdir -p "$w/small" && mount -t tmpfs -o size=16m tmpfs "$w/small"; then
	"$vnuma" dump "$name" -o "$w/small/d.vmcore" 2>"$w/small.err"
	check "a dump that would not fit: exit 3" test $? = 3
	check "...said before writing" grep -q "nothing written" "$w/small.err"
	check "...nothing left" test -z "$(ls -A "$w/small")"
	umount "$w/small"
fi

"$vnuma" exec "$name" -- sh -c 'echo c >/proc/sysrq-trigger' </dev/null >/dev/null 2>&1
check "a sysrq panic ends the exec: exit 3" test $? = 3
"$vnuma" dump "$name" -o "$w/panic.vmcore" >/dev/null 2>"$w/pdump.err"
check "dump the panicked guest" test $? = 0
echo "# $(grep -o "\"state\":\"[a-z]*\"" "$w/panic.vmcore.json")"
check "...which is crashed, not reset" grep -q '"state":"crashed"' "$w/panic.vmcore.json"
check "vnuma list shows it crashed" bash -c "'$vnuma' list | grep -Eq '^$name +crashed '"
vmlinux=/usr/lib/debug/boot/vmlinux-$(sed -n 's/.*"release":"\([^"]*\)".*/\1/p' "$w/panic.vmcore.json")
if command -v crash >/dev/null && command -v drgn >/dev/null && [ -f "$vmlinux" ]; then
	printf 'bt\nkmem -n\nquit\n' >"$w/crash.in"
	timeout 300 crash -s "$vmlinux" "$w/panic.vmcore" -i "$w/crash.in" >"$w/crash.out" 2>&1
	check "crash: bt shows the sysrq crash" grep -q 'sysrq_handle_crash' "$w/crash.out"
	check "crash: kmem -n shows both nodes" test "$(grep -c '^  [01] ' "$w/crash.out")" -ge 2
	cat >"$w/zl.py" <<'PY'
from drgn.helpers.linux.nodemask import for_each_online_node
for nid in for_each_online_node(prog):
    refs, order, i = prog["node_data"][nid].node_zonelists[0]._zonerefs, [], 0
    while refs[i].zone:
        n = int(refs[i].zone.zone_pgdat.node_id)
        order += [n] if n not in order else []
        i += 1
    print("Fallback order for Node %d: %s " % (nid, " ".join(map(str, order))))
PY
	DRGN_USE_LIBKDUMPFILE_FOR_ELF=1 timeout 300 drgn -q -c "$w/panic.vmcore" -s "$vmlinux" --no-default-symbols \
		"$w/zl.py" >"$w/drgn.out" 2>&1
	check "drgn: every node's zonelist is the model's fallback order" \
		test "$(cat "$w/drgn.out")" = "$("$vnuma" topo fallback "$src/topologies/2node.xml")"
	mkdir -p "$w/tmp"
	TMPDIR=$w/tmp "$vnuma" collect "$name" --deep >"$w/pdeep.out" 2>"$w/pdeep.err"
	check "collect --deep on the crashed guest: exit 0" test $? = 0
	check "...its zonelists are the model's" grep -q '^zonelists (ZONELIST_FALLBACK, model 5.18): ok$' "$w/pdeep.out"
	check "...its dump removed" test -z "$(ls -A "$w/tmp")"
else
	echo "# skipped crash and drgn: crash, python3-drgn or $vmlinux not installed"
fi
"$vnuma" down "$name" >/dev/null 2>&1
check "down the crashed guest" test $? = 0
check "no QEMU left" no_qemu_left
check "no domain left" no_domain_left

# run --dump-on panic: a step panics the guest through sysrq; the run (exit 3) keeps its dump.
cat >"$w/panic.json" <<EOF
{
  "name": "panic",
  "topology": "$src/topologies/2node.xml",
  "timeout_s": 600,
  "steps": [{"name": "crash", "workload": "cmd", "command": ["sh", "-c", "sleep 2; echo c > /proc/sysrq-trigger; sleep 600"]}],
  "assertions": [{"type": "distances"}]
}
EOF
"$vnuma" run "$w/panic.json" -o "$w/run" --dump-on panic >"$w/run.log" 2>&1
check "run --dump-on panic: the panic exits 3" test $? = 3
check "...the dump kept in the run's directory" test -s "$w/run/vmcore"
check "...described: the guest crashed" grep -q '"state":"crashed"' "$w/run/vmcore.json"
check "...the progress says so" grep -q "vmcore (the guest died)" "$w/run.log"
if [ -f "$vmlinux" ] && command -v crash >/dev/null; then
	printf 'bt\nquit\n' >"$w/crash2.in"
	timeout 300 crash -s "$vmlinux" "$w/run/vmcore" -i "$w/crash2.in" >"$w/crash2.out" 2>&1
	check "...crash: bt shows the sysrq crash" grep -q 'sysrq_handle_crash' "$w/crash2.out"
fi
check "no QEMU left" no_qemu_left
check "no domain left" no_domain_left

# collect --deep: the kernel's own structures against the model, on 4node-amd (the AMD report's
# node 3) and on the tiered shape (memory tiers, demotion targets). Without the debug vmlinux it
# cannot observe: exit 3 with how to install it.
deep() { # deep TOPOLOGY NAME: up, collect --deep into $w/NAME.*, down
	"$vnuma" up "$src/topologies/$1" --name "$2" --timeout 300 >/dev/null 2>"$w/$2.up" ||
		{ check "up $1" false; sed 's/^/#   /' "$w/$2.up"; return 1; }
	mkdir -p "$w/tmp"
	TMPDIR=$w/tmp "$vnuma" collect "$2" --deep -o "$w/$2.d" >"$w/$2.out" 2>"$w/$2.err"
	echo $? >"$w/$2.rc"
	if [ -f "$vmlinux" ] && command -v drgn >/dev/null; then
		TMPDIR=$w/tmp "$vnuma" collect "$2" --deep --kernel-model pre-5.15 >"$w/$2.old" 2>/dev/null
		echo $? >"$w/$2.oldrc"
	fi
	sed 's/^/#   /' "$w/$2.out"
	"$vnuma" down "$2" >/dev/null 2>&1
}
if [ -f "$vmlinux" ] && command -v drgn >/dev/null; then
	if deep 4node-amd.xml deep4; then
		check "collect --deep 4node-amd: exit 0" test "$(cat "$w/deep4.rc")" = 0
		check "...five sections, all ok" test "$(grep -c ': ok$' "$w/deep4.out")" = 5
		check "...drgn's JSON kept" grep -q '"zonelists":' "$w/deep4.d/deep.json"
		check "...the dumps removed" test -z "$(ls -A "$w/tmp")"
		check "against pre-5.15's model: exit 1" test "$(cat "$w/deep4.oldrc")" = 1
		check "...node 3, both sides" grep -q "Node 3: model 3 2 0 1, kernel's zonelist 3 2 1 0" "$w/deep4.old"
	fi
	if deep 4node-cxl-tiered.xml deept; then
		check "collect --deep 4node-cxl-tiered: exit 0" test "$(cat "$w/deept.rc")" = 0
		check "...memory tiers as the model's" grep -q '^memory tiers (memory_tiers, model 6.1): ok$' "$w/deept.out"
		check "...demotion targets as the model's" grep -q '^demotion targets .*: ok$' "$w/deept.out"
	fi
else
	if deep 2node.xml deep2; then
		check "collect --deep without the debug vmlinux: exit 3" test "$(cat "$w/deep2.rc")" = 3
		check "...says how to install it" grep -q "apt-get install" "$w/deep2.err"
		check "...the dump removed" test -z "$(ls -A "$w/tmp")"
	fi
fi
check "no QEMU left" no_qemu_left
check "no domain left" no_domain_left
finish
