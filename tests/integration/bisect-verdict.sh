#!/bin/bash
# Integration (in CI): one real bisection, end to end. Over bisect-tree.sh's
# history (seed 003's revert planted at a random position among 12 commits),
# vnuma bisect scenarios/fallback-4node.json --recipe tiny-numa names exactly
# the planted commit. It is stopped (Ctrl-C) after its second decision and
# started again, and goes on without rebuilding or rerunning what was done.
# The base commit's kernel was built cold by bisect-tree.sh; every other
# commit is built here, incrementally, in the same tree. The user's checkout
# is dirty (an edit, a staged file, untracked and ignored files) and
# GIT_DIR/GIT_WORK_TREE name it in vnuma's environment, as a git hook's or a
# linked worktree's would: afterwards HEAD, the index, the edit and the files
# are as they were. ~5-7 min on 2 cores.
#   bisect-verdict.sh VNUMA_BINARY SOURCE_DIR   (VN_BISECT_STATE: the state dir bisect-tree.sh made)
set -u
vnuma=$1
src=$2
export VNUMA_STATE_DIR=${VN_BISECT_STATE:?}
export VNUMA_ACCEL=tcg
. "$src/tests/integration/lib.sh"
trap it_state_cleanup EXIT
w=$VNUMA_STATE_DIR/work
repo=$w/linux
. "$src/tests/integration/bisect-lib.sh"
bisect_history
head_before=$(g rev-parse HEAD)
check "the user's checkout is made dirty" dirty_repo
state_before=$(dirty_state)
bisect_env=("GIT_DIR=$repo/.git" "GIT_WORK_TREE=$repo")
t0=$(date +%s)
bisect_resumed --recipe tiny-numa
echo "# bisection (both parts) took $(($(date +%s) - t0)) s"
check "...the base commit's kernel was bisect-tree.sh's (no build)" \
	grep -q "\"event\":\"build\",\"commit\":\"$base\".*\"build_s\":0\(\.0\)\?[,}]" "$w/out1/bisect.log"
state_after=$(dirty_state)
check "the user's HEAD is where it was" test "$(g rev-parse HEAD)" = "$head_before"
check "...on its branch, and the index, the edit, the staged, untracked and ignored files unchanged" \
	test "$state_after" = "$state_before" || diff <(echo "$state_before") <(echo "$state_after")
dirty_undo
# Issue 45: the finished OUT resumed as another bisection is refused (exit 2) naming what differs, its log untouched.
sum=$(md5sum <"$w/out1/bisect.log")
"$vnuma" bisect "$src/scenarios/memfollow-2node.json" --quick --repo "$repo" --good "$base" --bad HEAD \
	--recipe tiny-numa -o "$w/out1" >"$w/other.log" 2>&1
check "a resume as another scenario exits 2" test $? = 2 || cat "$w/other.log"
check "...naming the one it was started with" \
	grep -q "started with scenario [^ ]*/fallback-4node.json (sha256 [0-9a-f]*), not [^ ]*/memfollow-2node.json" "$w/other.log"
check "...the log untouched" test "$(md5sum <"$w/out1/bisect.log")" = "$sum"
check "nothing is left running" no_qemu_left
finish
