#!/bin/bash
# Every C file git tracks is formatted as .clang-format says (clang-format
# --dry-run -Werror): style is checked, not argued about in review. Reformat
# with: git ls-files '*.c' '*.h' | xargs clang-format -i
#   check-format.sh SOURCE_DIR
set -u
src=${1:-$(cd "$(dirname "$0")/.." && pwd)}
cd "$src" || exit 1
if ! command -v clang-format >/dev/null; then
	echo "clang-format missing: install the Debian package clang-format (scripts/setup.sh does)" >&2
	exit 1
fi
bad=0 n=0
while read -r f; do
	n=$((n + 1))
	if ! clang-format --dry-run -Werror "$f" >/dev/null 2>&1; then
		echo "FAIL - $f is not formatted (clang-format -i $f)"
		bad=$((bad + 1))
	fi
done < <(git ls-files '*.c' '*.h' 2>/dev/null || find src tests -name '*.[ch]')
echo "$((n - bad)) passed, $bad failed"
[ "$bad" = 0 ]
