#!/bin/bash
# Integration: boots real guests under TCG (KVM where it works) through the
# vnuma CLI, exactly as a user would. Slow (~10-20 s per boot), but the guest
# kernel is the judge of everything vnuma predicts.
#   boot.sh VNUMA_BINARY [SOURCE_DIR]
# VN_RANDOM_SEEDS overrides the seeds (default: three fixed ones plus one
# fresh seed per run, printed so a failure can be replayed).
set -u
vnuma=$1
src=${2:-$(cd "$(dirname "$0")/../.." && pwd)}
. "$src/tests/integration/lib.sh"
it_state it

timed_up() { # TOPOLOGY [ARGS...] -> sets NAME, UP_RC, UP_ERR, UP_S
	local t0=$(date +%s.%N) out
	out=$("$vnuma" up "$@" --timeout 180 2>"$VNUMA_STATE_DIR/up.err")
	UP_RC=$?
	NAME=$out
	UP_ERR=$(cat "$VNUMA_STATE_DIR/up.err")
	UP_S=$(echo "$(date +%s.%N) - $t0" | bc)
	echo "# up $1: exit $UP_RC in ${UP_S}s"
	# A boot that fails unexpectedly is diagnosed from this (its cause and console tail).
	[ "$UP_RC" = 0 ] || echo "$UP_ERR" | tail -n 25 | sed 's/^/#   /'
}

# 1. 2node: up, exec (streams and exit codes), collect, status, down.
timed_up "$src/topologies/2node.xml"
check "2node boots and matches its topology" test "$UP_RC" = 0
check "up's stderr has none of libvirt's own log lines" sh -c "! echo \"\$0\" | grep -Eq ': (info|warning|error) : '" "$UP_ERR"
# As root libvirt always warns (the domain is tainted: high-privileges), and that goes to the state dir.
check "...they are in STATE/libvirt.log" sh -c "[ \$(id -u) != 0 ] || grep -q 'info : libvirt version' '$VNUMA_STATE_DIR/libvirt.log'"
check "exec numactl -H shows 2 nodes" sh -c "'$vnuma' exec '$NAME' -- numactl -H | grep -q 'available: 2 nodes (0-1)'"
# A booted guest is handed over with the host's random bytes credited: an idle TCG guest's own
# entropy would take minutes, and a workload's first random read a second of jitter.
check "the guest's CRNG is ready when up returns" sh -c "'$vnuma' exec '$NAME' -- dmesg | grep -q 'random: crng init done'"
"$vnuma" exec "$NAME" -- sh -c 'echo out; echo err >&2; exit 7' >"$VNUMA_STATE_DIR/o" 2>"$VNUMA_STATE_DIR/e"
check "exec mirrors the exit code" test $? = 7
check "exec streams stdout and stderr apart" sh -c "grep -qx out '$VNUMA_STATE_DIR/o' && grep -qx err '$VNUMA_STATE_DIR/e'"
check "exec -i feeds stdin" sh -c "echo hello | '$vnuma' exec -i '$NAME' -- cat | grep -qx hello"
# Empty output alone would also pass when exec fails: the exit code must be cat's 0.
noin=$(echo hello | "$vnuma" exec "$NAME" -- cat)
check "exec without -i reads /dev/null" test $? = 0 -a -z "$noin"
# Issue 16: inside a shell loop, exec must leave the loop's input alone (ssh -n).
lines=$(printf 'a\nb\nc\n' | while read -r l; do "$vnuma" exec "$NAME" -- echo "$l"; done | tr -d '\n')
check "exec in a 'while read' loop runs for every line ($lines)" test "$lines" = abc
check "exec -e -w -u set the environment, directory and user" sh -c \
	"[ \"\$('$vnuma' exec -e V=42 -w /tmp -u 1000:1001 '$NAME' -- sh -c 'echo \$V \$(pwd) \$(id -u):\$(id -g)')\" = '42 /tmp 1000:1001' ]"
check "exec -t runs the command on a terminal" sh -c "'$vnuma' exec -t '$NAME' -- sh -c 'test -t 0 && test -t 1 && stty size' | tr -d '\r' | grep -qx '24 80'"
"$vnuma" exec "$NAME" -- /no/such/program 2>/dev/null
check "exec of a missing program is bad input (exit 2)" test $? = 2
check "collect writes a snapshot" sh -c "'$vnuma' collect '$NAME' -o '$VNUMA_STATE_DIR/snap' 2>/dev/null &&
	grep -q numa_hit '$VNUMA_STATE_DIR/snap/node1-numastat' && grep -q '\"distance\"' '$VNUMA_STATE_DIR/snap/snapshot.json' &&
	grep -q 'Fallback order' '$VNUMA_STATE_DIR/snap/dmesg'"
check "status reports accelerator and uptime" sh -c "'$vnuma' status '$NAME' 2>/dev/null | grep -q '^uptime: *[0-9]'"
check "down succeeds" "$vnuma" down "$NAME"
check "down leaves no QEMU" no_qemu_left
check "down leaves no guest dir" test ! -e "$VNUMA_STATE_DIR/guests/$NAME"

# 2. The 4-node AMD matrix: node 3 falls back to 1 before 0 on 6.1.
timed_up "$src/topologies/4node-amd.xml"
check "4node-amd boots and matches" test "$UP_RC" = 0
check "4node-amd: kernel prints 3 2 1 0 for node 3" sh -c "'$vnuma' exec '$NAME' -- dmesg | grep -q 'Fallback order for Node 3: 3 2 1 0'"
check "4node-amd: guest distances" sh -c "'$vnuma' exec '$NAME' -- cat /sys/devices/system/node/node3/distance | grep -qx '32 32 12 10'"
"$vnuma" down "$NAME" >/dev/null 2>&1

# 2b. Every boot above went the default way, the kernel's own vmlinux through
#     its PVH entry under qboot; the bzImage under SeaBIOS (VNUMA_BOOT=bzimage,
#     and where a kernel has no PVH entry) must keep working too.
check "the default boots went through the cached PVH vmlinux" sh -c "ls '$VNUMA_STATE_DIR'/cache/vmlinux/*.elf.proven >/dev/null"
VNUMA_BOOT=bzimage timed_up "$src/topologies/4node-amd.xml" --name bz
check "4node-amd boots through the bzImage and matches" test "$UP_RC" = 0
check "...without the PVH vmlinux" sh -c "echo \"\$0\" | grep -q '^boot: defining: .*kernel [^ ]*\$'" "$UP_ERR"
"$vnuma" down bz >/dev/null 2>&1

# 3. The main job's topology: 8 nodes, SNC.
timed_up "$src/topologies/8node-snc.xml"
check "8node-snc boots and matches" test "$UP_RC" = 0
check "8node-snc: numactl -H shows 8 nodes" sh -c "'$vnuma' exec '$NAME' -- numactl -H | grep -q 'available: 8 nodes (0-7)'"
"$vnuma" down "$NAME" >/dev/null 2>&1

# 4. Random matrices of 5-8 nodes, some with CPU-less or memory-less nodes:
#    the guest's fallback lines must equal the model's, its distances the matrix.
seeds=${VN_RANDOM_SEEDS:-"1 3 4 $(date +%s)"}
echo "# random seeds: $seeds (replay: VN_RANDOM_SEEDS='...')"
for s in $seeds; do
	"$vnuma" topo random --seed "$s" >"$VNUMA_STATE_DIR/random-$s.xml"
	timed_up "$VNUMA_STATE_DIR/random-$s.xml"
	desc=$(sed -n 's:.*<description>\(.*\)</description>.*:\1:p' "$VNUMA_STATE_DIR/random-$s.xml")
	check "random seed $s ($desc): guest equals model and matrix" test "$UP_RC" = 0
	[ "$UP_RC" = 0 ] || echo "$UP_ERR" | sed 's/^/#   /'
	"$vnuma" down "$NAME" >/dev/null 2>&1
done

# 5. A kernel command line that panics: exit 3 quickly, with the panic text.
timed_up "$src/topologies/2node.xml" --append "rdinit=/nonexistent"
check "panic gives exit 3" test "$UP_RC" = 3
check "panic is reported with the kernel's text" sh -c "echo \"\$0\" | grep -q 'Kernel panic'" "$UP_ERR"
check "panic is detected quickly (<60 s)" test "$(echo "$UP_S < 60" | bc)" = 1
check "a panicked guest leaves no QEMU" no_qemu_left
check "a panicked guest is not left defined" test -z "$("$vnuma" list 2>/dev/null | tail -n +2)"
kept=$(echo "$UP_ERR" | sed -n 's/^logs kept in //p')
check "a failed boot shows the console tail and where its logs are" sh -c "echo \"\$0\" | grep -q 'last lines of the console log' && [ -n '$kept' ]" "$UP_ERR"
check "...kept: console log, domain XML, libvirt's QEMU log" sh -c "grep -q 'Kernel panic' '$kept/console.log' && grep -q '<domain' '$kept/domain.xml' && grep -q 'starting up libvirt' '$kept/qemu.log'"
check "...under STATE/failed/NAME-UTC" sh -c "echo '$kept' | grep -Eq '^$VNUMA_STATE_DIR/failed/2node(-[0-9]+)?-[0-9]{8}T[0-9]{6}Z$'"

# 6. down --all leaves nothing: two guests, one command.
timed_up "$src/topologies/2node.xml"
first=$NAME
timed_up "$src/topologies/2node.xml"
check "a second guest of the same topology gets its own name" test "$first" != "$NAME" -a "$UP_RC" = 0
check "down --all" sh -c "'$vnuma' down --all 2>&1 | grep -q 'destroyed 2 guests'"
check "down --all leaves no QEMU" no_qemu_left
check "down --all leaves no guest dirs or sockets" sh -c "[ -z \"\$(ls -A '$VNUMA_STATE_DIR/guests')\" ] && ! find '$VNUMA_STATE_DIR' -type s | grep -q ."

# 6b. Ctrl-C during a boot destroys the half-booted guest and exits 3.
"$vnuma" up "$src/topologies/2node.xml" --name intr >/dev/null 2>"$VNUMA_STATE_DIR/intr.err" &
upid=$!
for _ in $(seq 50); do pgrep -f "qemu-system.*guest=intr" >/dev/null && break; sleep 0.2; done
sleep 1
kill -INT "$upid"
wait "$upid"
check "Ctrl-C during up exits 3" test $? = 3
check "Ctrl-C during up says so" grep -q interrupted "$VNUMA_STATE_DIR/intr.err"
check "Ctrl-C during up leaves no QEMU" no_qemu_left
check "Ctrl-C during up leaves no guest defined" test -z "$("$vnuma" list 2>/dev/null | tail -n +2)"

# 6c. A name in use is bad input and leaves the running guest alone.
timed_up "$src/topologies/2node.xml" --name taken
"$vnuma" up "$src/topologies/2node.xml" --name taken 2>/dev/null
check "up with a name in use exits 2" test $? = 2
check "...and the first guest still answers" "$vnuma" exec taken -- true
"$vnuma" down taken >/dev/null 2>&1

# 6d. --with: a host package's programs and libraries in the guest image (issue 16): GNU grep's -P.
timed_up "$src/topologies/2node.xml" --name with --with grep
check "up --with grep boots" test "$UP_RC" = 0
check "...and the guest runs GNU grep -P" sh -c "echo abc123 | '$vnuma' exec -i with -- grep -oP '\\d+' | grep -qx 123"
"$vnuma" down with >/dev/null 2>&1
"$vnuma" up "$src/topologies/2node.xml" --with no-such-package >/dev/null 2>"$VNUMA_STATE_DIR/with.err"
check "up --with a package the host lacks exits 2 and names it" sh -c "[ $? = 2 ] && grep -q 'no-such-package' '$VNUMA_STATE_DIR/with.err'"
check "...and starts nothing" no_qemu_left

# 7. Every other shipped topology boots as written (CPU-less nodes, HMAT, dies).
for f in 8node-amd-2socket 4node-snc2 8node-3level 4node-2socket-power8-like 4node-cxl; do
	timed_up "$src/topologies/$f.xml"
	check "$f boots and matches" test "$UP_RC" = 0
	[ "$UP_RC" = 0 ] || echo "$UP_ERR" | sed 's/^/#   /'
	"$vnuma" down "$NAME" >/dev/null 2>&1
done

# 8. Bad input exits 2 and starts nothing.
"$vnuma" up "$src/tests/topology-bad/matrix-bad-diagonal.xml" 2>/dev/null
check "a malformed topology exits 2" test $? = 2
check "...and starts no guest" no_qemu_left

finish
