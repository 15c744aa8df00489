# Shared by the bisection tests: bisect.sh (label kernel-build) and
# bisect-tree.sh + bisect-verdict.sh (integration, in CI). Needs $vnuma, $src,
# $w (a work dir) and $repo (where the history goes).
g() { git -C "$repo" -c user.name=vnuma-test -c user.email=test@vnuma "$@"; }
# Variables bisect_resumed's vnuma runs get (NAME=VALUE each); this shell's git does not.
bisect_env=()

# The user's own work in $repo, which a bisection must leave as it was: an
# uncommitted edit to a tracked file, a staged new file, an untracked file,
# an ignored file and an ignored directory. Debian's .gitignore ignores all
# at the top level (/*) but debian/, so the staged and untracked ones are
# there. dirty_repo makes it (anew: a rerun after a failed one starts from
# the same), dirty_undo removes it, dirty_state prints a fingerprint of the
# checkout: HEAD and its branch, the index file's hash, the dirty files'
# contents, and status with untracked and ignored files. Never the whole
# tree's contents: that is 1.3 GB to read.
dirty_files=(README debian/vnuma-dirt-staged.txt debian/vnuma-dirt-untracked.txt vnuma-dirt.o .vnuma-dirt/out.o)
dirty_repo() {
	dirty_undo
	echo "vnuma bisect test: an uncommitted edit" >>"$repo/README"
	mkdir -p "$repo/debian" "$repo/.vnuma-dirt"
	echo "staged" >"$repo/debian/vnuma-dirt-staged.txt"
	g add debian/vnuma-dirt-staged.txt
	echo "untracked" >"$repo/debian/vnuma-dirt-untracked.txt"
	echo "ignored" >"$repo/vnuma-dirt.o"
	echo "ignored too" >"$repo/.vnuma-dirt/out.o"
	g check-ignore -q vnuma-dirt.o && g check-ignore -q .vnuma-dirt/out.o &&
		! g check-ignore -q debian/vnuma-dirt-untracked.txt
}
dirty_undo() {
	g rm -q --cached --ignore-unmatch debian/vnuma-dirt-staged.txt
	rm -rf "$repo/debian/vnuma-dirt-staged.txt" "$repo/debian/vnuma-dirt-untracked.txt" "$repo/vnuma-dirt.o" \
		"$repo/.vnuma-dirt"
	rmdir "$repo/debian" 2>/dev/null
	g checkout -q -- README
}
# --no-optional-locks: status would refresh the index, and so change the hash this compares.
dirty_state() {
	local f
	g rev-parse HEAD
	g symbolic-ref -q HEAD || echo "HEAD detached"
	sha256sum <"$repo/.git/index"
	for f in "${dirty_files[@]}"; do
		if [ -f "$repo/$f" ]; then echo "$f: $(sha256sum <"$repo/$f")"; else echo "$f: missing"; fi
	done
	g --no-optional-locks status --porcelain --untracked-files=all --ignored | sha256sum
}

# bisect_history: a git history of Debian's linux-source-6.1 in $repo (kept
# if it is there already): the tree as the base, then 12 commits that each
# touch one mm/ or kernel/ file, one of them, at a position picked at random
# ($VN_BISECT_POS), applying seed 003's fallback-revert patch, the next one
# breaking the build and the one after that mending it, and another one, also
# at random ($VN_BISECT_SPOS), raising the NUMA balancing scan delay's default
# from 1 s to 10 min. Sets planted, mended, delayed, base, pos and spos from
# the history itself, so a kept one reads the same.
bisect_history() {
	local files i f
	# Files each commit touches: .c files of the tinyconfig build, so a step recompiles one file.
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
	pos=$(g rev-list --count "$base..$planted")
	spos=$(g rev-list --count "$base..$delayed")
	echo "planted: the revert at position $pos ($planted), the scan delay at $spos ($delayed)"
}

# bisect_resumed [ARGS...]: seed 003's bisection from the base to HEAD by
# verdict (fallback-4node --quick, ARGS added: --recipe), stopped with Ctrl-C
# after its second decision and started again: it must name the planted
# commit without building or running again what it had decided.
bisect_resumed() {
	local scn out log rc pid done_lines decided new h
	scn=$src/scenarios/fallback-4node.json
	out=$w/out1
	log=$w/bisect1.log
	env "${bisect_env[@]}" "$vnuma" bisect "$scn" --quick --repo "$repo" --good "$base" --bad HEAD "$@" \
		-o "$out" >"$log" 2>&1 &
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

	env "${bisect_env[@]}" "$vnuma" bisect "$scn" --quick --repo "$repo" --good "$base" --bad HEAD "$@" \
		-o "$out" >"$log" 2>&1
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

}
