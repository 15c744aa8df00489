#!/bin/bash
# `vnuma scenario validate` over every scenario: the shipped ones must all be
# "FILE: ok" (exit 0); each FILE.json here and in check/ must be refused with
# exit 2 and exactly FILE.err's line (the source dir written as @SRC@). check/
# holds scenarios the schema accepts and the pre-boot checks refuse (nodes not
# in the topology, a missing topology or kernel, ...), exactly as run would.
# VN_UPDATE_GOLDEN=1 rewrites the check/*.err files from the current output.
#   run.sh VNUMA_BINARY SOURCE_DIR
set -u
vnuma=$(realpath "$1")
src=$(cd "$2" && pwd)
fail=0 n=0

cd "$src/scenarios" || exit 1
out=$("$vnuma" scenario validate *.json 2>&1)
rc=$?
n=$((n + 1))
if [ "$rc" != 0 ] || [ "$(grep -c ': ok$' <<<"$out")" != "$(ls *.json | wc -l)" ]; then
	echo "FAIL shipped scenarios (exit $rc):"
	echo "$out"
	fail=$((fail + 1))
fi

for dir in "$src/tests/scenario-bad" "$src/tests/scenario-bad/check"; do
	cd "$dir" || exit 1
	for json in *.json; do
		n=$((n + 1))
		want="${json%.json}.err"
		got=$("$vnuma" scenario validate "$json" 2>&1 >/dev/null)
		rc=$?
		got=${got//$src/@SRC@}
		if [ "${VN_UPDATE_GOLDEN:-0}" = 1 ] && [ "$dir" = "$src/tests/scenario-bad/check" ]; then
			printf '%s\n' "$got" >"$want"
			continue
		fi
		if [ "$rc" != 2 ]; then
			echo "FAIL $json: exit code $rc, expected 2"
			fail=$((fail + 1))
		elif [ "$got" != "$(cat "$want")" ]; then
			echo "FAIL $json:"
			echo "  want: $(cat "$want")"
			echo "  got:  $got"
			fail=$((fail + 1))
		fi
	done
done
# Several files: one bad one makes the exit 2, the good ones are still reported ok.
cd "$src" || exit 1
out=$("$vnuma" scenario validate scenarios/memfollow-2node.json tests/scenario-bad/check/node-not-in-topology.json 2>&1)
rc=$?
n=$((n + 1))
if [ "$rc" != 2 ] || ! grep -qx 'scenarios/memfollow-2node.json: ok' <<<"$out" ||
	! grep -q '^tests/scenario-bad/check/node-not-in-topology.json: \$.steps\[0\].placement.nodes\[0\]: ' <<<"$out"; then
	echo "FAIL mixed good and bad files (exit $rc):"
	echo "$out"
	fail=$((fail + 1))
fi
echo "$((n - fail)) passed, $fail failed"
[ "$fail" = 0 ]
