#!/bin/bash
# Integration: a matrix spread over two libvirt endpoints (issue 15): a
# private libvirtd reached over TCP (the remote driver: artifacts as volumes,
# agent and console over streams) and this machine's embedded driver. A
# 2-variant x 2-repeat matrix comes back as one comparable group whose runs
# name both hosts, each artifact uploaded once to the remote one; a disk
# image guest with devices boots there; then a matrix whose libvirtd is
# killed under its first run retries that run on the other host. About 5
# minutes on 2 cores.
#   spread.sh VNUMA_BINARY [SOURCE_DIR]
set -u
vnuma=$1
src=${2:-$(cd "$(dirname "$0")/../.." && pwd)}
export VNUMA_ACCEL=${VNUMA_ACCEL:-tcg}
. "$src/tests/integration/lib.sh"
. "$src/tests/integration/libvirtd.sh"
it_state spread
it_libvirtd_start || { echo "Bail out! no private libvirtd"; exit 1; }
printf '# the private daemon, one guest at a time\n%s 1 pool=%s\nqemu:///embed 1  # this machine\n' \
	"$IT_LIBVIRTD_URI" "$IT_LIBVIRTD_POOL" >"$w/hosts"
# The shipped comparison counts locality, which a remote host's QEMU cannot (its counters are a file in the local
# state dir): refused before anything boots. The spread runs it without, and without the assertion on it.
"$vnuma" run "$src/scenarios/memfollow-balancing-2node.json" --quick --hosts "$w/hosts" -o "$w/refused" >/dev/null 2>"$w/err"
rc=$?
check "locality with a remote host: exit 2 ($rc)" test "$rc" = 2
check "...naming the host" grep -qF "not on $IT_LIBVIRTD_URI" "$w/err"
check "...booting nothing" test ! -e "$w/refused"
scn=$w/memfollow-balancing-2node.json
python3 - "$src/scenarios/memfollow-balancing-2node.json" "$scn" <<'EOF'
import json, sys
s = json.load(open(sys.argv[1]))
s.pop("locality")
s["assertions"] = [a for a in s["assertions"] if not a.get("metric", "").startswith("locality.")]
json.dump(s, open(sys.argv[2], "w"), indent=1)
EOF

# Field F of every run of group G, one "DIR HOST" (or value) per line.
runs() { python3 -c '
import json, sys
g = json.load(open(sys.argv[1] + "/group.json"))
for r in g["runs"]:
    res = json.load(open(sys.argv[1] + "/" + r["dir"] + "/result.json"))
    print(r["variant"], r.get("host"), res["host"], r["exit"], len(r.get("failed_attempts", [])))' "$1"; }

g=$w/group
"$vnuma" run "$scn" --quick --repeats 2 --hosts "$w/hosts" -o "$g" >"$w/out" 2>"$w/err"
rc=$?
grep -v '^boot:\|^run:' "$w/err" | sed 's/^/#   /'
# The kernel's behaviour under two guests on 2 cores is not what this tests: exit 1 (an assertion) is a run that ran.
check "the spread matrix ran (exit 0 or 1)" test "$rc" -le 1
check "group.json says complete" grep -Eq '"complete": *true' "$g/group.json"
runs "$g" >"$w/runs"
sed 's/^/#   run: /' "$w/runs"
check "four runs, every one ran" test "$(awk '$4 <= 1' "$w/runs" | wc -l)" = 4
check "result.json names the remote host" grep -q "$IT_LIBVIRTD_URI" "$g"/*/*/result.json
check "result.json names the embedded driver" grep -q '"host": *"qemu:///embed?root=' "$g"/*/*/result.json
for v in balancing-on balancing-off; do
	check "$v ran on both hosts (variants are not pinned to hosts)" \
		test "$(awk -v v=$v '$1 == v {print $2}' "$w/runs" | sort -u | wc -l)" = 2
done
python3 - "$g" "$IT_LIBVIRTD_URI" >"$w/uploads" <<'EOF'
import glob, json, sys
ups = {}
for p in glob.glob(sys.argv[1] + "/*/*/result.json"):
    r = json.load(open(p))
    if r["host"] != sys.argv[2]:
        continue
    for a in r.get("artifacts", []):
        ups.setdefault(a["volume"], []).append(a["uploaded"])
for v, u in sorted(ups.items()):
    print(v, sum(u), len(u))
EOF
sed 's/^/#   volume uploaded, used: /' "$w/uploads"
check "the initramfs, kernel and firmware went to the remote host as volumes" test "$(wc -l <"$w/uploads")" = 3
check "...each uploaded once, reused by the next run there" sh -c "awk '\$2 != 1 || \$3 != 2 {bad=1} END {exit bad}' '$w/uploads'"
check "...each volume is in the pool with its .done marker" sh -c \
	"for v in \$(cut -d' ' -f1 '$w/uploads'); do test -s '$IT_LIBVIRTD_POOL'/\$v && test -e '$IT_LIBVIRTD_POOL'/\$v.done || exit 1; done"
check "the group compares" sh -c "'$vnuma' compare '$g' >/dev/null"
check "compare: both variants, 2 runs each" sh -c \
	"'$vnuma' compare --json '$g' | tr -d ' \n' | grep -q '\"runs\":2.*\"runs\":2'"
check "no guest left on the remote host" test -z "$(virsh -c "$IT_LIBVIRTD_URI" list --all --name | tr -d '\n')"

# A disk image and a topology's devices on the other host: the image uploaded, the guest's overlay a volume there.
"$vnuma" up --connect "$IT_LIBVIRTD_URI" "$src/topologies/4node-io.xml" --image tiny >"$w/up-io" 2>&1
check "up 4node-io --image tiny on the remote host" test $? = 0
grep -v '^boot:' "$w/up-io" | tail -n 3 | sed 's/^/#   /'
check "...its overlay is a volume of the pool, named after the guest" test -e "$IT_LIBVIRTD_POOL/4node-io@root.qcow2"
out=$("$vnuma" exec --connect "$IT_LIBVIRTD_URI" 4node-io -- sh -c \
	'cat /sys/block/vda/device/../numa_node; mount | grep -c "^/dev/vda on / "; ip -4 addr show eth0 | grep -c 10.0.2.15')
check "...the root disk on node 2, mounted as /, the NIC up (exec over the channel stream)" test "$(echo $out)" = "2 1 1"
check "vnuma down --connect takes it down" "$vnuma" down --connect "$IT_LIBVIRTD_URI" 4node-io
check "...and its overlay volume with it" test ! -e "$IT_LIBVIRTD_POOL/4node-io@root.qcow2"

# A host that dies under a run: its runs go to the other host, and the group says what happened.
g2=$w/group2
"$vnuma" run "$scn" --quick --repeats 1 --hosts "$w/hosts" -o "$g2" >"$w/out2" 2>"$w/err2" &
pid=$!
# Killed once the remote run's workload is sampled: in the middle of the run, not before it.
remote_sampling() { python3 -c '
import json, os, sys
g = json.load(open(sys.argv[1] + "/group.json"))
d = [r["dir"] for r in g["runs"] if r.get("host") == sys.argv[2]]
sys.exit(0 if d and os.path.getsize(sys.argv[1] + "/" + d[0] + "/samples.jsonl") > 0 else 1)' "$g2" "$IT_LIBVIRTD_URI" 2>/dev/null; }
for i in $(seq 1 900); do
	remote_sampling && break
	sleep 0.2
done
if ! remote_sampling; then
	# Seen once in CI (2026-12-04): the remote run neither sampled nor failed in 180 s, until the kill.
	echo "# the remote run did not sample within 180 s; what the run said, the daemon's view, where vnuma waits:"
	grep -v '^boot:' "$w/err2" | tail -n 5 | sed 's/^/#   /'
	virsh -c "$IT_LIBVIRTD_URI" list --all 2>&1 | sed 's/^/#   remote: /'
	tail -n 10 "$IT_LIBVIRTD_DIR/libvirtd.log" 2>/dev/null | sed 's/^/#   libvirtd.log: /'
	if command -v gdb >/dev/null; then
		for p in $pid $(pgrep -P "$pid"); do
			gdb -p "$p" -batch -ex 'thread apply all bt' 2>/dev/null | grep -E '^(Thread|#[0-9]+ .* in (vir|vn_|qemu|poll|read))' |
				head -n 40 | sed "s/^/#   pid $p: /"
		done
	fi
fi
lvd=$IT_LIBVIRTD_PID
it_libvirtd_kill
ls -l "$g2"/*/1/samples.jsonl 2>&1 | sed 's/^/#   at the kill: /'
check "the private libvirtd is gone" sh -c "! kill -0 $lvd 2>/dev/null && ! virsh -c '$IT_LIBVIRTD_URI' version >/dev/null 2>&1"
echo "# killed the private libvirtd $((i / 5)) s into the matrix, as its run started sampling"
wait $pid
rc=$?
grep -v '^boot:\|^run:' "$w/err2" | sed 's/^/#   /'
# One run a variant: its change assertion may be too noisy to tell (exit 3 saying so, docs/noise.md),
# which is the group's noise, not the killed host.
check "the matrix still ran (exit 0 or 1, or 3 for a too-noisy change alone; rc $rc)" sh -c \
	"[ $rc -le 1 ] || { [ $rc = 3 ] && grep -q 'too noisy to tell' '$w/err2' && grep -q ' 0 could not run)' '$w/err2'; }"
runs "$g2" >"$w/runs2"
sed 's/^/#   run: /' "$w/runs2"
check "both runs ran, on the embedded driver" test "$(awk '$4 <= 1 && $2 == "qemu:///embed"' "$w/runs2" | wc -l)" = 2
check "one run records its failed attempt on the killed host" test "$(awk '$5 == 1' "$w/runs2" | wc -l)" = 1
check "group.json: the killed host failed during the matrix" sh -c \
	"tr -d '\n' <'$g2/group.json' | grep -q 'failed during the matrix'"
check "the attempt's directory was moved aside" sh -c "ls -d '$g2'/attempts/*-1-1"
check "the group compares, no run counted twice" sh -c \
	"'$vnuma' compare --json '$g2' | tr -d ' \n' | grep -q '\"runs\":1.*\"runs\":1' && ! '$vnuma' compare --json '$g2' | tr -d ' \n' | grep -q '\"runs\":2'"
# Only a host that does not answer: no run starts, and the group says why.
printf '%s 1 pool=%s\n' "$IT_LIBVIRTD_URI" "$IT_LIBVIRTD_POOL" >"$w/dead-hosts"
"$vnuma" run "$scn" --quick --repeats 1 --hosts "$w/dead-hosts" -o "$w/group3" >/dev/null 2>"$w/err3"
check "no host answering: exit 3" test $? = 3
check "...saying none answers" grep -q 'none of the 1 hosts answers' "$w/err3"
check "...group.json: unreachable before the first run, no run ended" sh -c \
	"tr -d ' \n' <'$w/group3/group.json' | grep -q 'unreachablebeforethefirstrun' && ! grep -Eq '\"exit\": *[0-9]' '$w/group3/group.json'"
it_libvirtd_stop
check "no QEMU left" no_qemu_left
check "no domain left" no_domain_left
finish
