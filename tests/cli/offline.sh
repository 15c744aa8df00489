#!/bin/bash
# The offline CLI (no VM): output formats and exit codes users and scripts rely on.
#   offline.sh VNUMA_BINARY SOURCE_DIR
set -u
vnuma=$1
src=$2
. "$(dirname "$0")/../lib.sh"

check "--version" sh -c "'$vnuma' --version | grep -q '^vnuma [0-9]'"
check "--help lists every command" sh -c "'$vnuma' --help | grep -q '^  run ' && '$vnuma' --help | grep -q '^  kernel '"
check "unknown command exits 2" test "$(rc "$vnuma" frobnicate)" = 2
check "no command exits 2" test "$(rc "$vnuma")" = 2
for c in up down list status exec shell collect run compare report scenario topo kernel doctor; do
	check "$c --help exits 0" test "$(rc "$vnuma" $c --help)" = 0
done
# A command group runs its subcommand; anything else is bad input that says what there is.
check "group without a subcommand exits 2" test "$(rc "$vnuma" topo)" = 2
check "group without a subcommand prints its usage" sh -c "'$vnuma' topo 2>&1 >/dev/null | grep -q '^usage: vnuma topo validate'"
check "unknown subcommand exits 2" test "$(rc "$vnuma" kernel frobnicate)" = 2
check "unknown subcommand names the subcommands" sh -c "'$vnuma' kernel frobnicate 2>&1 | grep -qx \"vnuma kernel: unknown kernel subcommand 'frobnicate' (build, list, selftests)\""
check "subcommand --help exits 0" test "$(rc "$vnuma" image inject --help)" = 0

# topo show: numactl -H shape.
out=$("$vnuma" topo show "$src/topologies/4node-cxl.xml" 2>/dev/null)
check "show: node count" grep -q '^available: 4 nodes (0-3)' <<<"$out"
check "show: CPU-less node marked" grep -q '^node 2 size: .*(CPU-less)' <<<"$out"
check "show: distance row" grep -Eq '^ +3: +24 +14 +26 +10$' <<<"$out"
check "show: hmat" grep -q 'latency' <<<"$out"

# topo fallback: byte-exact kernel format (trailing space) and JSON.
check "fallback: kernel line format" sh -c "'$vnuma' topo fallback '$src/topologies/4node-amd.xml' | grep -qx 'Fallback order for Node 3: 3 2 1 0 '"
check "fallback: pre-5.15 model" sh -c "'$vnuma' topo fallback '$src/topologies/4node-amd.xml' --kernel-model pre-5.15 | grep -qx 'Fallback order for Node 3: 3 2 0 1 '"
check "fallback: aliases" sh -c "'$vnuma' topo fallback '$src/topologies/4node-amd.xml' --kernel-model reset | grep -q '3 2 0 1'"
check "fallback --json" sh -c "'$vnuma' topo fallback '$src/topologies/4node-amd.xml' --json | tr -d ' \n' | grep -q '\"node\":3,\"order\":\[3,2,1,0\]'"
check "fallback: unknown model exits 2" test "$(rc "$vnuma" topo fallback "$src/topologies/4node-amd.xml" --kernel-model 9.9)" = 2

# topo random: a seed names a topology; every one validates.
check "random is deterministic" sh -c "[ \"\$('$vnuma' topo random --seed 42)\" = \"\$('$vnuma' topo random --seed 42)\" ]"
tmp=$(mktemp -d)
for s in $(seq 1 40); do
	"$vnuma" topo random --seed "$s" --nodes 2-12 >"$tmp/r$s.xml"
done
check "40 random topologies validate" sh -c "'$vnuma' topo validate $tmp/r*.xml >/dev/null 2>&1"
rm -rf "$tmp"
check "validate: a bad file exits 2 naming FILE:LINE" sh -c "'$vnuma' topo validate '$src/tests/topology-bad/dup-node-id.xml' 2>&1 >/dev/null | grep -q '^dup-node-id.xml:3: \|/dup-node-id.xml:3: '"

# Input files: only regular files are read; a FIFO (no writer) must not block forever.
tmp=$(mktemp -d)
mkfifo "$tmp/fifo"
check "topo validate FIFO exits 2 at once" test "$(rc timeout 10 "$vnuma" topo validate "$tmp/fifo")" = 2
check "topo validate FIFO names it" sh -c "timeout 10 '$vnuma' topo validate '$tmp/fifo' 2>&1 | grep -q 'fifo: is a FIFO, not a regular file'"
check "run FIFO exits 2 at once" test "$(rc timeout 10 "$vnuma" run --state-dir "$tmp/state" "$tmp/fifo")" = 2
check "scenario validate FIFO exits 2 at once" test "$(rc timeout 10 "$vnuma" scenario validate "$tmp/fifo")" = 2
mkfifo "$tmp/recipe.json"
check "kernel build FIFO recipe exits 2 at once" test "$(rc timeout 10 "$vnuma" kernel build "$tmp/recipe.json")" = 2
check "topo validate DIR exits 2" test "$(rc timeout 10 "$vnuma" topo validate "$tmp")" = 2
rm -rf "$tmp"

# One guest-name rule, checked first: nothing is created, built or opened for a bad name.
tmp=$(mktemp -d)
st="$tmp/state"
badname() { # DESCRIPTION ARGS...: exit 2, "bad guest name", and no state dir made
	local d=$1
	shift
	local out code
	out=$(timeout 20 "$vnuma" "$@" 2>&1 >/dev/null)
	code=$?
	check "$d: exit 2" test "$code" = 2
	check "$d: says bad guest name" grep -q "bad guest name" <<<"$out"
	check "$d: touched nothing" test ! -e "$st"
}
badname "up --name ../x" up --state-dir "$st" --name '../x' "$src/topologies/2node.xml"
badname "up --name .." up --state-dir "$st" --name '..' "$src/topologies/2node.xml"
badname "down .." down --state-dir "$st" ..
badname "status ../x" status --state-dir "$st" ../x
badname "exec ." exec --state-dir "$st" . -- true
badname "exec .." exec --state-dir "$st" .. -- true
badname "collect .." collect --state-dir "$st" -o "$tmp/out" ..
badname "shell -x" shell --state-dir "$st" -- -x
check "collect .. wrote nothing" test ! -e "$tmp/out"

# down destroys only what vnuma created (libvirt's test driver ships a foreign "test" domain).
out=$("$vnuma" down --state-dir "$st" --connect test:///default test 2>&1)
check "down of a foreign domain exits 2" test $? = 2
check "down of a foreign domain names it" grep -q "'test' on test:///default is a running domain without vnuma's metadata" <<<"$out"
check "down of a foreign domain destroys nothing" test "$(grep -c destroyed <<<"$out")" = 0
out=$("$vnuma" shell --state-dir "$st" --connect test:///default test </dev/null 2>&1)
check "shell on a foreign domain exits 2" test $? = 2
check "shell on a foreign domain names it" grep -q "'test' on test:///default is a running domain without vnuma's metadata" <<<"$out"
check "down --all skips foreign domains" sh -c "'$vnuma' down --state-dir '$st' --connect test:///default --all 2>&1 | grep -qx 'destroyed 0 guests'"
rm -rf "$tmp"

# The state dir: refused when others can write to it; the embedded driver's lock wait ends on SIGTERM.
tmp=$(mktemp -d)
mkdir -m 0777 "$tmp/open"
chmod 0777 "$tmp/open"
out=$("$vnuma" list --state-dir "$tmp/open" 2>&1)
check "0777 state dir exits 2" test $? = 2
check "0777 state dir is named" grep -q "state directory $tmp/open is writable by everyone (mode 0777)" <<<"$out"
mkdir -p "$tmp/held/libvirt/run/qemu"
# Another vnuma process holding the embed root = an fcntl lock on byte 0 of its driver.pid.
python3 -c 'import fcntl,sys,time; f=open(sys.argv[1],"w"); fcntl.lockf(f, fcntl.LOCK_EX, 1, 0); time.sleep(60)' \
	"$tmp/held/libvirt/run/qemu/driver.pid" &
holder=$!
# Fixed sleeps raced a loaded host (SIGTERM came before vnuma's handler): wait for what each side leaves.
for _ in $(seq 100); do [ -e "$tmp/held/libvirt/run/qemu/driver.pid" ] && break; sleep 0.1; done
sleep 0.3
timeout -s KILL 30 "$vnuma" list --state-dir "$tmp/held" >/dev/null 2>"$tmp/list.err" &
waiter=$!
# driver.queue is made by the connect, after main installed its signal handlers.
for _ in $(seq 200); do [ -e "$tmp/held/driver.queue" ] && break; sleep 0.1; done
sleep 0.5
t0=$(date +%s%N)
kill -TERM "$waiter" 2>/dev/null
pkill -TERM -P "$waiter" 2>/dev/null
wait "$waiter"
code=$?
ms=$((($(date +%s%N) - t0) / 1000000))
check "list waiting for the lock exits 3 on SIGTERM (rc $code)" test "$code" = 3
check "list waiting for the lock exits within 2 s of SIGTERM (${ms} ms)" test "$ms" -lt 2000
check "list waiting for the lock says why" grep -q "interrupted while waiting for the state dir" "$tmp/list.err"
kill "$holder" 2>/dev/null
wait "$holder" 2>/dev/null
rm -rf "$tmp"

# Results: a non-empty -o is refused; result files are replaced atomically, never written through symlinks.
tmp=$(mktemp -d)
mkdir "$tmp/out"
echo '{"complete": true, "passed": true}' >"$tmp/out/result.json"
out=$(timeout 60 "$vnuma" run --state-dir "$tmp/state" -o "$tmp/out" "$src/scenarios/memfollow-2node.json" 2>&1)
check "run into a non-empty -o exits 2" test $? = 2
check "run into a non-empty -o says so" grep -q "results directory $tmp/out is not empty" <<<"$out"
check "run into a non-empty -o leaves it alone" grep -Eq '"passed": *true' "$tmp/out/result.json"
echo precious >"$tmp/victim"
ln -s "$tmp/victim" "$tmp/out/result.json.new"
mv "$tmp/out/result.json.new" "$tmp/out/result.json"
ln -s "$tmp/victim" "$tmp/out/junit.xml"
ln -s "$tmp/victim" "$tmp/out/scenario.json"
# --kernel that does not exist: the run fails before booting, after result.json was first written.
out=$(timeout 60 "$vnuma" run --state-dir "$tmp/state" -o "$tmp/out" --force --kernel "$tmp/no-such-bzImage" \
	"$src/scenarios/memfollow-2node.json" 2>&1)
check "run --force with a bad kernel exits 2" test $? = 2
check "planted symlinks were not followed" test "$(cat "$tmp/victim")" = precious
check "result.json replaced by a regular file" test -f "$tmp/out/result.json" -a ! -L "$tmp/out/result.json"
check "junit.xml replaced by a regular file" test -f "$tmp/out/junit.xml" -a ! -L "$tmp/out/junit.xml"
check "scenario.json replaced by a regular file" test -f "$tmp/out/scenario.json" -a ! -L "$tmp/out/scenario.json"
check "the failed run's result says incomplete" grep -Eq '"complete": *false' "$tmp/out/result.json"
check "the failed run's result says why" grep -q 'no-such-bzImage' "$tmp/out/result.json"
check "junit.xml has the error testcase" grep -q '<error message=' "$tmp/out/junit.xml"
check "no temporary files left" test -z "$(find "$tmp/out" -name '*.tmp.*')"
# vnuma report on that cut-short run (no samples, no snapshots): a page that says so, never written through a symlink.
rm -f "$tmp/out/report.html" # run made one; plant a symlink in its place
ln -s "$tmp/victim" "$tmp/out/report.html"
check "report on the failed run exits 0" test "$(rc "$vnuma" report "$tmp/out")" = 0
check "its report.html says INCOMPLETE and why" grep -q 'INCOMPLETE: .*no-such-bzImage' "$tmp/out/report.html"
check "report.html replaced by a regular file" test -f "$tmp/out/report.html" -a ! -L "$tmp/out/report.html"
check "the planted report.html symlink was not followed" test "$(cat "$tmp/victim")" = precious
check "report -o FILE" test "$(rc "$vnuma" report "$src/tests/fixtures/report/group" -o "$tmp/g.html")" = 0 -a -s "$tmp/g.html"
mkdir "$tmp/neither"
check "report on a directory that is neither a run nor a group exits 2" test "$(rc "$vnuma" report "$tmp/neither")" = 2
check "report without DIR exits 2" test "$(rc "$vnuma" report)" = 2
rm -rf "$tmp"

# compare: the fixtures of tests/unit/test-compare.c (their tables are golden-tested there).
fx=$src/tests/fixtures/compare
check "compare GROUP exits 0" test "$(rc "$vnuma" compare "$fx/numa-ab")" = 0
check "compare marks the significant migration row" sh -c "'$vnuma' compare '$fx/numa-ab' | grep -Eq '^\* .*-100\.0%.* vmstat\.numa_pages_migrated\$'"
check "compare --json is JSON" sh -c "'$vnuma' compare '$fx/numa-ab' --json | python3 -c 'import json,sys; json.load(sys.stdin)'"
check "compare DIR_A DIR_B exits 0" test "$(rc "$vnuma" compare "$fx/run-a" "$fx/run-b")" = 0
check "compare of different topologies exits 2" test "$(rc "$vnuma" compare "$fx/run-a" "$fx/run-4node")" = 2
check "compare names both topologies" sh -c "'$vnuma' compare '$fx/run-a' '$fx/run-4node' 2>&1 | grep -q 'run-4node/result.json: \$.topology: \"4node-amd\", but .*run-a/result.json has \"2node\"'"
check "compare --force exits 0" test "$(rc "$vnuma" compare "$fx/run-a" "$fx/run-4node" --force)" = 0
check "compare of one run exits 2" test "$(rc "$vnuma" compare "$fx/run-a")" = 2
check "compare of no operand exits 2" test "$(rc "$vnuma" compare)" = 2
check "compare of a bad metric exits 2" test "$(rc "$vnuma" compare "$fx/run-a" "$fx/bad-metric")" = 2
tmp=$(mktemp -d)
mkfifo "$tmp/result.json"
check "compare of a FIFO result.json exits 2 at once" test "$(rc timeout 10 "$vnuma" compare "$fx/run-a" "$tmp")" = 2
rm -rf "$tmp"

# Numbers on the command line: one parser per kind (duration, count, size), each option's bounds, exit 2
# naming the option before anything is opened. inf/nan/1e300 were once taken by exec --timeout (nan: no
# limit; the others an undefined conversion), 5x by kernel -j, -1 by topo random --seed.
tmp=$(mktemp -d)
badnum() { # DESCRIPTION MESSAGE ARGS...: exit 2, the message on stderr, and no state dir made
	local d=$1 m=$2
	shift 2
	local out code
	rm -rf "$tmp/state"
	out=$(timeout 20 "$vnuma" "$@" 2>&1 >/dev/null)
	code=$?
	check "$d: exit 2" test "$code" = 2
	check "$d: says $m" grep -qF -- "$m" <<<"$out"
	check "$d: touched nothing" test ! -e "$tmp/state"
}
for t in inf nan -nan 1e300 1e400 0 -1 +5 ' 5' 0x10 5x 2592001 721h; do
	badnum "exec --timeout '$t'" "--timeout: '$t' is" exec --state-dir "$tmp/state" --timeout "$t" g -- true
done
badnum "exec --timeout says the bound" "at most 2592000 s" exec --state-dir "$tmp/state" --timeout 1e300 g -- true
badnum "up --timeout nan" "--timeout: 'nan' is not a duration" up --state-dir "$tmp/state" --timeout nan "$src/topologies/2node.xml"
badnum "up --timeout 25h" "--timeout: '25h' is out of range" up --state-dir "$tmp/state" --timeout 25h "$src/topologies/2node.xml"
badnum "hotplug --timeout inf" "--timeout: 'inf' is not a duration" hotplug --state-dir "$tmp/state" --node 1 --timeout inf g
badnum "hotplug --node 1x" "--node: '1x' is not a number" hotplug --state-dir "$tmp/state" --node 1x g
badnum "hotplug --cpus -1" "--cpus: '-1' is not a number" hotplug --state-dir "$tmp/state" --node 1 --cpus -1 g
badnum "hotplug --memory 0" "--memory: size '0' is out of range" hotplug --state-dir "$tmp/state" --node 1 --memory 0 g
badnum "hotplug --memory 2T" "--memory: size '2T' is out of range 1..1T" hotplug --state-dir "$tmp/state" --node 1 --memory 2T g
badnum "exec --user 1:x" "--user: 'x' is not a number" exec --state-dir "$tmp/state" --user 1:x g -- true
badnum "exec --user 65535" "--user: '65535' is out of range 0..65534" exec --state-dir "$tmp/state" --user 65535 g -- true
badnum "exec --user +1" "--user: '+1' is not a number" exec --state-dir "$tmp/state" --user +1 g -- true
badnum "run --repeats 1e3" "--repeats: '1e3' is not a number" run --state-dir "$tmp/state" --repeats 1e3 "$src/scenarios/memfollow-2node.json"
badnum "run --repeats 1001" "--repeats: '1001' is out of range 1..1000" run --state-dir "$tmp/state" --repeats 1001 "$src/scenarios/memfollow-2node.json"
badnum "kernel build -j 5x" "--jobs: '5x' is not a number" kernel build --state-dir "$tmp/state" -j 5x stock
badnum "kernel build -j 0" "--jobs: '0' is out of range" kernel build --state-dir "$tmp/state" -j 0 stock
badnum "kernel build --rev without a git tree" "--rev v6.1: minimal-numa builds no git tree (linux-source-6.1): give --repo DIR" \
	kernel build --state-dir "$tmp/state" --rev v6.1 minimal-numa
badnum "kernel build --repo of no git tree" "--repo $tmp: not a git tree (no .git in it)" \
	kernel build --state-dir "$tmp/state" --repo "$tmp" minimal-numa
badnum "kernel build --repo with a stock recipe" "stock: a source recipe is needed" \
	kernel build --state-dir "$tmp/state" --repo "$tmp" stock
f4="$src/scenarios/fallback-4node.json"
badnum "bisect --repeats 1" "--repeats: '1' is out of range 2..50" bisect --state-dir "$tmp/state" --repeats 1 --metric x --repo . --good a --bad b "$f4"
badnum "bisect --flaky 0" "--flaky: '0' is out of range 1..50" bisect --state-dir "$tmp/state" --flaky 0 --repo . --good a --bad b "$f4"
badnum "bisect without --repo" "bisect needs --repo DIR, --good REV and --bad REV" bisect --state-dir "$tmp/state" --good a --bad b "$f4"
badnum "bisect --repeats by verdict" "--repeats is for --metric" bisect --state-dir "$tmp/state" --repeats 3 --repo . --good a --bad b "$f4"
badnum "bisect --flaky by metric" "--flaky is for verdicts" bisect --state-dir "$tmp/state" --flaky 3 --metric x --repo . --good a --bad b "$f4"
badnum "bisect --recipe stock" "stock: a source recipe is needed" bisect --state-dir "$tmp/state" --recipe stock --repo . --good a --bad b "$f4"
check "bisect --repo of no git tree says so" sh -c "'$vnuma' bisect --state-dir '$tmp/state2' --repo '$tmp' --good v1 --bad v2 '$f4' 2>&1 | grep -q \"$tmp: not a git tree\""
# A bisection whose skipped commits hide the first bad one is not a verdict on the kernel: exit 3, the candidates listed.
# Replayed from a log (its marks stand, nothing is built or booted), over a four-commit history.
git init -q "$tmp/repo"
for i in 0 1 2 3; do
	echo "$i" >"$tmp/repo/f"
	git -C "$tmp/repo" add f
	git -C "$tmp/repo" -c user.email=t@t -c user.name=t commit -qm "commit $i"
done
mapfile -t hs < <(git -C "$tmp/repo" log --format=%H --reverse)
{
	# The start record of this bisection: the scenario and the default recipe by content (docs/bisect.md).
	echo '{"event":"start","version":2,"repo":"r","good":"'"${hs[0]}"'","bad":"'"${hs[3]}"'","scenario":"s.json","scenario_sha256":"'"$(sha256sum <"$f4" | cut -d' ' -f1)"'","recipe":"minimal-numa.json","recipe_sha256":"'"$(sha256sum <"$src/kernels/minimal-numa.json" | cut -d' ' -f1)"'","metric":null,"flaky":1,"repeats":3,"repeats_max":8,"alpha":0.05,"quick":false,"virtual_time":false,"arch":"'"$(uname -m)"'"}'
	echo '{"event":"mark","commit":"'"${hs[0]}"'","mark":"good","why":"passed"}'
	echo '{"event":"mark","commit":"'"${hs[3]}"'","mark":"bad","why":"an assertion failed"}'
	for i in 1 2; do
		echo '{"event":"build","commit":"'"${hs[$i]}"'","ok":false,"error":"make bzImage failed (exit 2)"}'
		echo '{"event":"mark","commit":"'"${hs[$i]}"'","mark":"skip","why":"does not build"}'
	done
} >"$tmp/bisect.log"
out=$(timeout 60 "$vnuma" bisect --state-dir "$tmp/state3" --repo "$tmp/repo" --good "${hs[0]}" --bad "${hs[3]}" \
	--replay "$tmp/bisect.log" -o "$tmp/bisect" "$f4" 2>&1)
code=$?
check "bisect: skipped commits hiding the first bad one exit 3" test "$code" = 3
check "bisect: ...and list the candidates" grep -q "^  ${hs[2]}" <<<"$out"
check "bisect: ...saying why" grep -q "skipped commits (unbuildable, or could not be judged) hide the first bad commit" <<<"$out"
badnum "topo random --seed -1" "--seed: '-1' is not a number" topo random --seed -1
badnum "topo random --seed 0x10" "--seed: '0x10' is not a number" topo random --seed 0x10
badnum "topo random --nodes 3-4x" "--nodes: '4x' is not a number" topo random --nodes 3-4x
badnum "topo random --nodes 17" "--nodes: '17' is out of range 2..16" topo random --nodes 17
badnum "hosts check --vcpus 1e9" "--vcpus: '1e9' is not a number" hosts check --state-dir "$tmp/state" --vcpus 1e9 --connect qemu:///embed
badnum "hosts check --memory 0" "--memory: size '0' is out of range" hosts check --state-dir "$tmp/state" --memory 0 --connect qemu:///embed
badnum "cp --max-bytes 0" "--max-bytes: size '0' is out of range 1..16T" cp --state-dir "$tmp/state" --max-bytes 0 g:/x "$tmp/x"
badnum "cp --max-bytes 1e3" "--max-bytes: unknown size suffix in '1e3'" cp --state-dir "$tmp/state" --max-bytes 1e3 g:/x "$tmp/x"
badnum "cp --max-files +5" "--max-files: '+5' is not a number" cp --state-dir "$tmp/state" --max-files +5 g:/x "$tmp/x"
badnum "cp --max-files 4294967296" "--max-files: '4294967296' is out of range 1..4294967295" cp --state-dir "$tmp/state" --max-files 4294967296 g:/x "$tmp/x"
check "exec --timeout 10m is a duration (past the options, to the guest lookup)" sh -c "'$vnuma' exec --state-dir '$tmp/state' --timeout 10m g -- true 2>&1 | grep -q \"no guest named 'g'\""
check "topo random --seed 18446744073709551615" test "$(rc "$vnuma" topo random --seed 18446744073709551615)" = 0
rm -rf "$tmp"

# vnuma cache: booted snapshots listed least recently used first, pruned to a size (fake files: no guest).
tmp=$(mktemp -d)
mkdir -p "$tmp/s/cache/warm"
for k in a b c; do
	key=$(printf "$k%.0s" $(seq 64))
	head -c 1048576 /dev/zero | tr '\0' x >"$tmp/s/cache/warm/$key.save"
done
touch -d '3 hours ago' "$tmp/s/cache/warm/$(printf 'a%.0s' $(seq 64)).save"
touch -d '2 hours ago' "$tmp/s/cache/warm/$(printf 'b%.0s' $(seq 64)).save"
out=$("$vnuma" cache list --state-dir "$tmp/s")
check "cache list counts 3 snapshots" grep -q '^3 booted snapshots' <<<"$out"
check "cache list: least recently used first" test "$(grep -o '^  [abc]\{16\}' <<<"$out" | tr -d ' ' | cut -c1 | tr -d '\n')" = abc
check "cache prune --max 2500K removes the oldest" sh -c "'$vnuma' cache prune --state-dir '$tmp/s' --max 2500K | grep -qx 'removed 1 booted snapshot'"
check "...and keeps the others, the pruned one's lock gone with it" test "$(ls "$tmp/s/cache/warm" | tr '\n' ' ' | cut -c1,72)" = "bc"
check "cache prune --all" sh -c "'$vnuma' cache prune --state-dir '$tmp/s' --all | grep -qx 'removed 2 booted snapshots'"
check "cache prune --max lots exits 2" test "$(rc "$vnuma" cache prune --state-dir "$tmp/s" --max lots)" = 2
rm -rf "$tmp"

# Slow memory (memory-kind) validates and is modelled, but no boot emulates it yet: up refuses it
# before anything is built or booted (--kernel names nothing, so nothing could boot either way).
tmp=$(mktemp -d)
cat >"$tmp/tiered.xml" <<'EOF'
<topology name="tiered">
  <node id="0" cpus="0" memory="128M"/>
  <node id="1" cpus="" memory="128M" memory-kind="cxl"/>
</topology>
EOF
check "tiered topology validates" test "$(rc "$vnuma" topo validate "$tmp/tiered.xml")" = 0
check "show: a slow node's memory kind" sh -c "'$vnuma' topo show '$tmp/tiered.xml' | grep -q '^node 1 memory kind: cxl (slow'"
check "demotion: tiers as sysfs lists them" sh -c "'$vnuma' topo demotion '$tmp/tiered.xml' | grep -qx 'memory_tier22: 1'"
check "demotion: a node's targets" sh -c "'$vnuma' topo demotion '$tmp/tiered.xml' | grep -qx 'Node 0: memory_tier4, demotes to 1 (distance 20), else to 1'"
check "demotion --json" sh -c "'$vnuma' topo demotion '$tmp/tiered.xml' --json | tr -d ' \n' | grep -q '\"node\":0,\"tier\":4,\"preferred\":\[1\],\"distance\":20'"
check "demotion: an unmodelled kernel exits 2" test "$(rc "$vnuma" topo demotion "$tmp/tiered.xml" --kernel-model 6.10)" = 2
check "demotion: a flat shape is one tier" sh -c "'$vnuma' topo demotion 4node-cxl | grep -qx 'memory_tier4: 0-3'"
for s in $(seq 1 20); do
	"$vnuma" topo random --slow --seed "$s" --nodes 2-12 >"$tmp/r$s.xml"
done
check "20 random tiered topologies validate" sh -c "'$vnuma' topo validate $tmp/r*.xml >/dev/null 2>&1"
check "random --slow makes slow nodes" sh -c "grep -q 'memory-kind=' '$tmp/r1.xml'"
out=$(timeout 20 "$vnuma" up --arch arm64 --state-dir "$tmp/state" --kernel "$tmp/no-such-bzImage" "$tmp/tiered.xml" 2>&1 >/dev/null)
code=$?
check "up on slow memory, arm64: exit 2" test "$code" = 2
check "up on slow memory, arm64: says why, naming FILE:LINE" grep -q "tiered.xml:3: arm64: node 1 has slow memory" <<<"$out"
rm -rf "$tmp"

finish
