#!/bin/bash
# Slow test (ctest -L kernel-build; not in scripts/test.sh): a real bisection.
# Makes a git history of Debian's linux-source-6.1: the tree as the base, then
# 12 commits that each touch one mm/ or kernel/ file, one of them, at a
# position picked at random, applying seed 003's fallback-revert patch, the
# next one breaking the build and the one after that mending it, and another
# one, also at random, raising the NUMA balancing scan delay's default from
# 1 s to 10 min. Then:
#   1. vnuma bisect scenarios/fallback-4node.json names exactly the patch's
#      commit; it is stopped (Ctrl-C) after its second decision and started
#      again, and goes on without rebuilding or rerunning what was done;
#   2. bisecting from the commit before the patch to the mended one tests the
#      unbuildable commit first (git's pick), skips it, reports it, and still
#      names the patch's commit;
#   3. by metric, with repeats: memfollow-2node without its scan delay sysctl
#      migrates no pages within its run from the delay's commit on; bisect
#      --metric vmstat.numa_pages_migrated names that commit;
#   4. the user's checkout, index and HEAD are as they were.
#   bisect.sh VNUMA_BINARY   (VN_SOURCE_DIR: the repository; VN_BISECT_POS, VN_BISECT_SPOS: the positions, else random)
set -u
vnuma=$1
src=${VN_SOURCE_DIR:?}
if [ ! -r /usr/src/linux-source-6.1.tar.xz ]; then
	echo "SKIP: Debian's linux-source-6.1 is not installed" >&2
	exit 0
fi
export VNUMA_STATE_DIR=${VN_KERNEL_BUILD_STATE:-$(mktemp -d /tmp/vnuma-bisect.XXXXXX)}
export VNUMA_ACCEL=tcg
. "$src/tests/integration/lib.sh"
echo "state: $VNUMA_STATE_DIR"
w=$VNUMA_STATE_DIR/bisect-test
mkdir -p "$w"
repo=$w/linux
g() { git -C "$repo" -c user.name=vnuma-test -c user.email=test@vnuma "$@"; }

# The history. Files each commit touches: .c files of the tinyconfig build, so a step recompiles one file.
files=(mm/vmstat.c mm/mmzone.c kernel/sched/core.c mm/memory.c mm/mempolicy.c kernel/fork.c mm/mmap.c
	mm/page_alloc.c mm/slub.c kernel/exit.c mm/rmap.c mm/util.c)
pos=${VN_BISECT_POS:-$((RANDOM % 9 + 2))} # 2..10: the patch, then the breakage at pos+1 and the fix at pos+2 <= 12
spos=${VN_BISECT_SPOS:-}
while [ -z "$spos" ] || { [ "$spos" -ge "$pos" ] && [ "$spos" -le "$((pos + 2))" ]; }; do
	spos=$((RANDOM % 12 + 1))
done
if [ ! -d "$repo/.git" ]; then
	mkdir -p "$repo"
	tar -xf /usr/src/linux-source-6.1.tar.xz -C "$repo" --strip-components=1
	g init -q .
	g add -A -f . # Debian's .gitignore ignores everything at the top level
	g commit -q -m "linux-source-6.1 as Debian ships it"
	for i in $(seq 1 12); do
		f=${files[$((i - 1))]}
		if [ "$i" = "$pos" ]; then
			g apply "$src/kernels/fallback-revert/0001-mm-page_alloc-restore-pre-5.15-node_load.patch"
			g commit -q -a -m "mm/page_alloc: restore the pre-5.15 node_load penalty (planted)"
			continue
		fi
		if [ "$i" = "$spos" ]; then
			sed -i 's/^unsigned int sysctl_numa_balancing_scan_delay = 1000;/unsigned int sysctl_numa_balancing_scan_delay = 600000;/' \
				"$repo/kernel/sched/fair.c"
			g commit -q -a -m "sched/numa: scan delay default 1 s -> 10 min (planted)"
			continue
		fi
		if [ "$i" = "$((pos + 1))" ]; then
			echo '#error "vnuma bisect test: this commit does not build"' >>"$repo/$f"
			g commit -q -a -m "$f: a commit that does not build (planted)"
			continue
		fi
		if [ "$i" = "$((pos + 2))" ]; then
			sed -i '$d' "$repo/${files[$((i - 2))]}"
			g commit -q -a -m "${files[$((i - 2))]}: mend the build"
			continue
		fi
		echo "/* vnuma bisect test: commit $i */" >>"$repo/$f"
		g commit -q -a -m "$f: an unrelated change $i"
	done
fi
planted=$(g log --format=%H -1 --grep='node_load penalty')
mended=$(g rev-list --reverse --ancestry-path "$planted..HEAD" | sed -n 2p)
delayed=$(g log --format=%H -1 --grep='scan delay default')
base=$(g rev-list --max-parents=0 HEAD)
head_before=$(g rev-parse HEAD)
status_before=$(g status --porcelain | md5sum)
echo "planted: the revert at position $pos ($planted), the scan delay at $spos ($delayed)"

rm -rf "$w"/out1 "$w"/out2 "$w"/out3 # a kept state dir (VN_KERNEL_BUILD_STATE) keeps builds, not bisections
scn=$src/scenarios/fallback-4node.json
out=$w/out1
log=$w/bisect1.log
"$vnuma" bisect "$scn" --quick --repo "$repo" --good "$base" --bad HEAD -o "$out" >"$log" 2>&1 &
pid=$!
# Stop it after its second decision (the endpoints'), as a user's Ctrl-C would.
for _ in $(seq 1 3600); do
	[ "$(grep -c '"event":"mark"' "$out/bisect.log" 2>/dev/null)" -ge 2 ] && break
	kill -0 "$pid" 2>/dev/null || break
	sleep 1
done
kill -INT "$pid" 2>/dev/null
wait "$pid"
rc=$?
cat "$log"
check "bisect stopped by Ctrl-C exits 3" test "$rc" = 3
check "...its log holds the two endpoint decisions" test "$(grep -c '"event":"mark"' "$out/bisect.log")" -ge 2
check "...and it leaves no QEMU" no_qemu_left
done_lines=$(wc -l <"$out/bisect.log")
decided=$(head -n "$done_lines" "$out/bisect.log" | grep '"event":"mark"' | sed 's/.*"commit":"\([0-9a-f]*\)".*/\1/')

"$vnuma" bisect "$scn" --quick --repo "$repo" --good "$base" --bad HEAD -o "$out" >"$log" 2>&1
rc=$?
cat "$log"
check "bisect started again exits 0 (found)" test "$rc" = 0
check "...it names the planted commit" grep -q "the first bad commit is $planted" "$log"
check "...the table marks it" grep -q "^ *$pos  ${planted:0:12}  bad  .*<- first bad" "$out/bisect.txt"
new=$(tail -n +"$((done_lines + 1))" "$out/bisect.log")
for h in $decided; do
	check "...no run again of ${h:0:12}, decided before the stop" \
		bash -c "! grep -q '\"event\":\"run\",\"commit\":\"$h\"' <<<'$new'"
	check "...and no build again of it" \
		bash -c "! grep '\"event\":\"build\",\"commit\":\"$h\"' <<<'$new' | grep -vq '\"build_s\":0'"
done
check "...report.html and bisect.json are written" test -s "$out/report.html" -a -s "$out/bisect.json"

# Second: from the commit before the patch to the mended one: git picks the unbuildable one first.
out2=$w/out2
"$vnuma" bisect "$scn" --quick --repo "$repo" --good "$planted~1" --bad "$mended" -o "$out2" >"$log" 2>&1
rc=$?
cat "$log"
check "bisect over the unbuildable commit exits 0" test "$rc" = 0
check "...still names the planted commit" grep -q "the first bad commit is $planted" "$log"
check "...and reports the unbuildable one as skipped" grep -q "skip .*does not build (planted) \[does not build: kernel" "$out2/bisect.txt"

# Third: by metric. memfollow-2node leaves the scan delay at the kernel's default here, and counts no locality.
# Not --quick: its 10 s leave minimal-numa no time to scan (no pages migrated on either kernel); 40 s migrate ~25,000.
mscn=$w/memfollow-default-delay.json
grep -v -e '"kernel.numa_balancing_scan_delay_ms"' -e '"locality": true' "$src/scenarios/memfollow-2node.json" |
	sed 's#"topology": *"2node"#"topology": "'"$src"'/topologies/2node.xml"#' >"$mscn"
out3=$w/out3
"$vnuma" bisect "$mscn" --repo "$repo" --good "$base" --bad HEAD --metric vmstat.numa_pages_migrated \
	--repeats 3 -o "$out3" >"$log" 2>&1
rc=$?
cat "$log"
check "bisect by metric exits 0" test "$rc" = 0
check "...names the scan delay's commit" grep -q "the first bad commit is $delayed" "$log"
check "...after the endpoints differed by Welch's test" grep -q '"why":"good .* they differ' "$out3/bisect.log"
check "...with at least 3 runs of each tested commit" \
	bash -c "! grep -q '\"mark\":\"\(good\|bad\)\",\"why\":\"[0-9.e+-]* ± [0-9.e+-]* (n=[12])' '$out3/bisect.log'"

check "the user's HEAD is where it was" test "$(g rev-parse HEAD)" = "$head_before"
check "...and the checkout and index unchanged" test "$(g status --porcelain | md5sum)" = "$status_before"
check "nothing is left running" no_qemu_left
[ -z "${VN_KERNEL_BUILD_STATE:-}" ] && rm -rf "$VNUMA_STATE_DIR"
finish
