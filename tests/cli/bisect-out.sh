#!/bin/bash
# vnuma bisect's output directory and log, through the CLI, with no kernel
# built (issue 45; tests/unit/test-bisect.c has the same with fake builds):
# a resume as another bisection, symlinks planted in OUT, a second bisection
# into a busy OUT, and a replayed log whose marks contradict each other are
# all refused before anything is built or run, and OUT is left as it was.
#   bisect-out.sh VNUMA_BINARY SOURCE_DIR
set -u
vnuma=$1
src=$2
tmp=$(mktemp -d /tmp/vn-bisect-out.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
. "$(dirname "$0")/../lib.sh"
export VNUMA_STATE_DIR=$tmp/state

repo=$tmp/repo
g() { git -C "$repo" -c user.name=t -c user.email=t@t "$@"; }
git init -q "$repo"
for i in 0 1 2 3 4 5 6; do
	echo "$i" >"$repo/f$i"
	g add -A && g commit -qm "commit $i"
done
c=() # c[i]: commit i
for i in 0 1 2 3 4 5 6; do c[i]=$(g rev-parse "HEAD~$((6 - i))"); done
scn=$src/scenarios/fallback-4node.json
other=$src/scenarios/memfollow-2node.json
recipe=$src/kernels/minimal-numa.json
sha() { sha256sum "$1" | cut -d' ' -f1; }
# The start record this vnuma writes for bisecting $scn with $recipe by verdict, the defaults otherwise.
start() {
	printf '{"event":"start","version":2,"repo":"%s","good":"%s","bad":"%s","scenario":"%s","scenario_sha256":"%s",' \
		"$repo" "${c[0]}" "${c[6]}" "$scn" "$(sha "$scn")"
	printf '"recipe":"%s","recipe_sha256":"%s","metric":null,"flaky":1,"repeats":3,"repeats_max":8,"alpha":0.05,' \
		"$recipe" "$(sha "$recipe")"
	printf '"quick":false,"virtual_time":false,"arch":"%s"}\n' "$(uname -m)"
}
mark() { printf '{"event":"mark","commit":"%s","mark":"%s","why":"by hand"}\n' "$1" "$2"; }
bisect() { # SCENARIO OUT [ARGS...]: its output in $tmp/log, its exit code in $rc
	local s=$1 o=$2
	shift 2
	"$vnuma" bisect "$s" --repo "$repo" --good "${c[0]}" --bad "${c[6]}" --recipe "$recipe" -o "$o" "$@" >"$tmp/log" 2>&1
	rc=$?
}
untouched() { # DIR: what it held before, byte for byte
	(cd "$1" && find . -type f -o -type l | sort | xargs -r md5sum) >"$tmp/now"
	cmp -s "$tmp/now" "$1.sum"
}
snap() { (cd "$1" && find . -type f -o -type l | sort | xargs -r md5sum) >"$1.sum"; }
nobuild() { ! grep -q 'does not build\|kernel: ' "$tmp/log"; }

# A log of another bisection: refused naming what differs, exit 2, its log untouched.
mkdir "$tmp/out" && { start && mark "${c[6]}" bad && mark "${c[0]}" good; } >"$tmp/out/bisect.log"
snap "$tmp/out"
bisect "$other" "$tmp/out"
check "a resume with another scenario exits 2" test "$rc" = 2 || cat "$tmp/log"
check "...naming the one it was started with, by content" \
	grep -q "bisect.log:1: another bisection's log: it was started with scenario [^ ]*/fallback-4node.json (sha256 $(sha "$scn" | cut -c1-12)), not [^ ]*/memfollow-2node.json (sha256 $(sha "$other" | cut -c1-12)); use another -o or remove it" "$tmp/log"
check "...the log and OUT untouched" untouched "$tmp/out"
check "...nothing built" nobuild
bisect "$scn" "$tmp/out" --flaky 3
check "a resume with another --flaky exits 2" test "$rc" = 2
check "...naming it" grep -q "it was started with --flaky 1, not 3" "$tmp/log"
check "...the log and OUT untouched" untouched "$tmp/out"
bisect "$scn" "$tmp/out" --quick
check "a resume with --quick exits 2" test "$rc" = 2
check "...naming it" grep -q "it was started without --quick, this one with it" "$tmp/log"

# Two bisections into one OUT: the second exits 3 while the first holds it.
flock "$tmp/out" "$vnuma" bisect "$scn" --repo "$repo" --good "${c[0]}" --bad "${c[6]}" --recipe "$recipe" \
	-o "$tmp/out" >"$tmp/log" 2>&1
rc=$?
check "a bisection into a busy OUT exits 3" test "$rc" = 3 || cat "$tmp/log"
check "...saying another bisection is running in it" grep -q "out: another bisection is running in it" "$tmp/log"
check "...OUT untouched" untouched "$tmp/out"

# Symlinks planted in OUT: not followed, nothing made where they point.
mkdir "$tmp/p1" "$tmp/p2" "$tmp/victim" && ln -s "$tmp/elsewhere" "$tmp/p1/bisect.log" &&
	ln -s "$tmp/victim" "$tmp/p2/commits"
bisect "$scn" "$tmp/p1"
check "a symlink at OUT/bisect.log exits 2" test "$rc" = 2 || cat "$tmp/log"
check "...saying so" grep -q "p1/bisect.log is a symlink (not followed)" "$tmp/log"
check "...and makes nothing where it points" test ! -e "$tmp/elsewhere"
check "...nor anything in OUT" test "$(ls -A "$tmp/p1")" = bisect.log
bisect "$scn" "$tmp/p2"
check "a symlink at OUT/commits exits 2" test "$rc" = 2 || cat "$tmp/log"
check "...saying so" grep -q "p2/commits is a symlink" "$tmp/log"
check "...and writes nothing into its target" test -z "$(ls -A "$tmp/victim")"
check "...nor anything in OUT" test "$(ls -A "$tmp/p2")" = commits

# A replayed log edited so that a bad commit comes before a good one: bad input naming the log, not a crash.
{ start && mark "${c[6]}" bad && mark "${c[0]}" good && mark "${c[2]}" bad && mark "${c[4]}" good; } >"$tmp/edited.log"
bisect "$scn" "$tmp/replayed" --replay "$tmp/edited.log"
check "a replayed log whose marks contradict each other exits 2" test "$rc" = 2 || cat "$tmp/log"
check "...naming the log" grep -q "edited.log: its marks contradict each other: ${c[2]:0:12} is marked bad" "$tmp/log"
check "...nothing built" nobuild

check "bisect --help exits 0" test "$(rc "$vnuma" bisect --help)" = 0
finish
