# Shared by the shell tests: source it, then `check DESCRIPTION COMMAND...`
# for each expectation and `finish` last (prints the tally, fails on any FAIL).
# VN_TEST_VERBOSE=1 also prints "ok - ..." lines. A failed check returns 1,
# so `check ... || show LOG` prints why.
pass=0 fail=0
check() {
	local d=$1
	shift
	if "$@"; then
		pass=$((pass + 1))
		[ "${VN_TEST_VERBOSE:-0}" = 1 ] && echo "ok - $d"
		return 0
	else
		fail=$((fail + 1))
		echo "FAIL - $d"
		return 1
	fi
}
# The exit code of a command, its output discarded.
rc() {
	"$@" >/dev/null 2>&1
	echo $?
}
finish() {
	echo "$pass passed, $fail failed"
	[ "$fail" = 0 ]
}
