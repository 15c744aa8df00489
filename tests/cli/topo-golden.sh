#!/bin/bash
# Offline: what `topo show` and `topo fallback` (text and --json) print for
# every shipped topology is the same bytes as tests/golden/topo/NAME.txt
# (stdout then stderr, each command under a "$ vnuma ..." line). The goldens
# were made by the commands before they were split into helpers; a change
# of output is a change of these files, made on purpose.
#   topo-golden.sh VNUMA_BINARY SOURCE_DIR [--update]
set -u
vnuma=$1
src=$2
. "$src/tests/lib.sh"
export VNUMA_STATE_DIR
VNUMA_STATE_DIR=$(mktemp -d /tmp/vnuma-topo-golden.XXXXXX)
trap 'rm -rf "$VNUMA_STATE_DIR"' EXIT

shown() { # NAME
	local args
	for args in "show $1" "fallback $1" "fallback --json $1" "fallback --hotplugged $1" "fallback --json --hotplugged $1"; do
		echo "\$ vnuma topo $args"
		# shellcheck disable=SC2086 # the words are ours
		"$vnuma" topo $args 2>&1
		echo "exit $?"
	done
}

same() { # NAME
	local want=$src/tests/golden/topo/$1.txt
	if [ "${3:-}" = --update ]; then
		shown "$1" >"$want"
	fi
	diff -u "$want" <(shown "$1") || return 1
}

for t in "$src"/topologies/*.xml; do
	name=$(basename "$t" .xml)
	check "topo show/fallback $name: as tests/golden/topo/$name.txt" same "$name" "" "${3:-}"
done
finish
