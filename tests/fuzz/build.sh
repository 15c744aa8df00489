#!/bin/bash
# The README's libFuzzer build, as a test: configure with clang and
# -DVN_FUZZ=ON, build everything (the static in-guest programs must link
# uninstrumented), then run each fuzzer briefly over its stored corpus.
#   build.sh SOURCE_DIR        exit 77 (skipped) without clang
set -eu
src=$1
command -v clang >/dev/null || { echo "clang not installed: skipped"; exit 77; }
dir=$(mktemp -d /tmp/vnuma-fuzz-build.XXXXXX)
trap 'rm -rf "$dir"' EXIT
CC=clang cmake -S "$src" -B "$dir" -DVN_FUZZ=ON -DVN_TESTS=OFF >"$dir/configure.log" 2>&1 ||
	{ cat "$dir/configure.log"; exit 1; }
cmake --build "$dir" -j"$(nproc)" >"$dir/build.log" 2>&1 || { tail -40 "$dir/build.log"; exit 1; }
for corpus in "$src"/tests/fuzz/corpus/*/; do
	h=$(basename "$corpus")
	# New inputs go to the first directory: a scratch one, never the stored corpus.
	mkdir "$dir/new-$h"
	"$dir/tests/fuzz/fuzz-$h" -runs=2000 "$dir/new-$h" "$corpus" >"$dir/$h.log" 2>&1 || { tail -40 "$dir/$h.log"; exit 1; }
	echo "ok - fuzz-$h: $(grep -o 'Done [0-9]* runs' "$dir/$h.log")"
done
