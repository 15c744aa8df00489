#!/bin/bash
# A "locality" scenario counts accesses on guests of this host only: the
# plugin writes into this host's state dir. run, a matrix over hosts and
# bisect all refuse another host (exit 2, one line naming the scenario and
# the URI) before anything is built, booted or connected to: the URIs here
# name a host that does not exist, and the state dir stays without kernels.
#   locality-remote.sh VNUMA_BINARY SOURCE_DIR
set -u
vnuma=$1
src=$2
tmp=$(mktemp -d /tmp/vn-locality-remote.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
. "$(dirname "$0")/../lib.sh"
export VNUMA_STATE_DIR=$tmp/state
unset VNUMA_URI

repo=$tmp/repo
git init -q "$repo"
for i in 0 1; do
	echo "$i" >"$repo/f$i"
	git -C "$repo" add -A && git -C "$repo" -c user.name=t -c user.email=t@t commit -qm "commit $i"
done
loc=$src/scenarios/memfollow-2node.json   # "locality": true
plain=$src/scenarios/fallback-4node.json # no locality
far=qemu+ssh://vn-no-such-host.invalid/system
msg() { echo "$1: \"locality\" counts accesses on guests of this host only, not on $2 (docs/locality.md)"; }

# refused CASE SCENARIO URI COMMAND...: exit 2, the one line, nothing built.
refused() {
	local what=$1 scn=$2 uri=$3 out code
	shift 3
	out=$(timeout 60 "$@" 2>&1)
	code=$?
	check "$what: exit 2 (got $code)" test "$code" = 2 || echo "$out"
	check "$what: says why, in one line" test "$(grep -cF ": $(msg "$scn" "$uri")" <<<"$out"):$(wc -l <<<"$out")" = 1:1 ||
		echo "$out"
	check "$what: nothing built" test ! -e "$VNUMA_STATE_DIR/kernels"
	check "$what: no output dir" test ! -e "$tmp/out"
}

refused "bisect --connect REMOTE" "$loc" "$far" "$vnuma" bisect --connect "$far" --repo "$repo" --good HEAD~ --bad HEAD \
	-o "$tmp/out" "$loc"
refused "bisect with VNUMA_URI remote" "$loc" "$far" env VNUMA_URI="$far" "$vnuma" bisect --repo "$repo" \
	--good HEAD~ --bad HEAD -o "$tmp/out" "$loc"
refused "run --connect REMOTE" "$loc" "$far" "$vnuma" run --connect "$far" -o "$tmp/out" "$loc"
refused "run --locality --connect REMOTE" "$plain" "$far" "$vnuma" run --locality --connect "$far" -o "$tmp/out" "$plain"
refused "run over hosts, one remote" "$loc" "$far" "$vnuma" run --connect qemu:///embed --connect "$far" -o "$tmp/out" "$loc"
finish
