#!/bin/bash
# check-size.sh holds a command to 60 lines: on a tree with one planted
# src/cli/cmd-*.c function it fails at 61 lines and passes at 60, and the
# same 61 lines outside src/cli pass (the 120-line limit).
#   check-size-planted.sh SOURCE_DIR
set -u
src=$1
. "$src/tests/lib.sh"
tmp=$(mktemp -d /tmp/vnuma-size-planted.XXXXXX)
trap 'rm -rf "$tmp"' EXIT

plant() { # FILE LINES: a function of LINES lines, braces included
	mkdir -p "$(dirname "$1")"
	{
		echo "static int planted(void)"
		echo "{"
		for ((i = 0; i < $2 - 2; i++)); do echo "	x();"; done
		echo "}"
	} >"$1"
}
sized() { bash "$src/tests/check-size.sh" "$tmp" >"$tmp.out" 2>&1; }

plant "$tmp/src/cli/cmd-planted.c" 61
check "a 61-line command function fails" eval '! sized && grep -q "cmd-planted.c:2: .* is 61 lines (at most 60)" "$tmp.out"'
plant "$tmp/src/cli/cmd-planted.c" 60
check "a 60-line command function passes" sized
rm "$tmp/src/cli/cmd-planted.c"
plant "$tmp/src/cli/main.c" 61
plant "$tmp/src/util/planted.c" 121
check "outside cmd-*.c, 61 lines pass and 121 fail" eval '! sized && grep -q "planted.c:2: .* is 121 lines (at most 120)" "$tmp.out" && ! grep -q main.c "$tmp.out"'
rm -f "$tmp.out"
finish
