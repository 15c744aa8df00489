#!/bin/sh
# Each FILE.xml here is a malformed topology; FILE.err is the exact one-line
# error vnuma must print for it, with exit code 2. VN_UPDATE_GOLDEN=1 rewrites
# the .err files from the current output. A file named arch-ARCH-*.xml is
# valid but for that architecture: it is validated with --arch ARCH.
set -u
vnuma=$1
dir=$(dirname "$0")
fail=0 n=0
cd "$dir" || exit 1
for xml in *.xml; do
	n=$((n + 1))
	want="${xml%.xml}.err"
	arch=
	case $xml in
	arch-*) arch=${xml#arch-} arch="--arch ${arch%%-*}" ;;
	esac
	# shellcheck disable=SC2086 # $arch is empty or two words
	got=$("$vnuma" topo validate $arch "$xml" 2>&1 >/dev/null)
	rc=$?
	if [ "${VN_UPDATE_GOLDEN:-0}" = 1 ]; then
		printf '%s\n' "$got" >"$want"
		continue
	fi
	if [ "$rc" != 2 ]; then
		echo "FAIL $xml: exit code $rc, expected 2"
		fail=$((fail + 1))
	elif [ "$got" != "$(cat "$want")" ]; then
		echo "FAIL $xml:"
		echo "  want: $(cat "$want")"
		echo "  got:  $got"
		fail=$((fail + 1))
	fi
done
echo "$((n - fail)) passed, $fail failed"
[ "$fail" = 0 ]
