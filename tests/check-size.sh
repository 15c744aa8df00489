#!/bin/bash
# The sizes docs/ARCHITECTURE.md promises a reader: no function in src/ over
# 120 lines (a body from a `{` in column 0 to the next `}` in column 0, as
# clang-format lays every function out), no header over 150 lines. Tables
# are initializers, which never open with `{` in column 0: they are not
# counted. A command (src/cli/cmd-*.c) only parses its arguments and calls
# the layers below: none of its functions is over 60 lines.
#   check-size.sh [SOURCE_DIR]
set -u
src=${1:-$(cd "$(dirname "$0")/.." && pwd)}
fn_max=120
cmd_fn_max=60
hdr_max=150
fail=0

while IFS= read -r f; do
	max=$fn_max
	case ${f#"$src"/} in src/cli/cmd-*.c) max=$cmd_fn_max ;; esac
	out=$(awk -v max="$max" -v file="${f#"$src"/}" '
		/^\{/ { start = FNR; name = prev }
		/^\}/ && start { n = FNR - start + 1; if (n > max) printf "FAIL - %s:%d: %s is %d lines (at most %d)\n", file, start, name, n, max; start = 0 }
		/\(/ { prev = $0 }
	' "$f")
	[ -n "$out" ] && { echo "$out"; fail=$((fail + $(echo "$out" | wc -l))); }
done < <(find "$src/src" -name '*.c' | sort)

while IFS= read -r h; do
	n=$(wc -l <"$h")
	if [ "$n" -gt "$hdr_max" ]; then
		echo "FAIL - ${h#"$src"/}: $n lines (a header holds one room, at most $hdr_max)"
		fail=$((fail + 1))
	fi
done < <(find "$src/src" -name '*.h' | sort)

echo "sizes: functions at most $fn_max lines ($cmd_fn_max in src/cli/cmd-*.c), headers at most $hdr_max: $fail failed"
[ "$fail" = 0 ]
