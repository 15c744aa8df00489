#!/bin/sh
# apt-install.sh PACKAGE...: apt-get update, then install, as setup.sh needs it.
#
# An index that fails to download (a Debian mirror mid-sync: "File has
# unexpected size ... Mirror sync in progress?") makes `apt-get update` exit
# 100 although every package may still be installable from the indexes that
# did come, or from the ones already on the machine. So the update is tried a
# few times, and then the install goes ahead; only a failed install is a
# failure, and it names the indexes that were stale.
#   VN_APT_TRIES (default 3), VN_APT_WAIT (seconds between tries, default 20)
set -u
tries=${VN_APT_TRIES:-3}
wait_s=${VN_APT_WAIT:-20}
log=$(mktemp "${TMPDIR:-/tmp}/vnuma-apt.XXXXXX") || exit 3
trap 'rm -f "$log"' EXIT
trap 'rm -f "$log"; exit 130' INT TERM
export DEBIAN_FRONTEND=noninteractive

i=1
updated=0
while :; do
	if apt-get update -q >"$log" 2>&1; then
		cat "$log"
		updated=1
		break
	fi
	cat "$log"
	[ "$i" -ge "$tries" ] && break
	echo "setup: apt-get update failed (try $i of $tries); trying again in $wait_s s" >&2
	sleep "$wait_s"
	i=$((i + 1))
done
# The lines naming what failed, kept for the message if the install fails too.
stale=$(grep -E '^(E|W): Failed to fetch' "$log" | sed 's/^[EW]: Failed to fetch //' | cut -c1-300)
if [ "$updated" = 0 ]; then
	echo "setup: apt-get update failed $tries times; installing from the package lists there are" >&2
fi
if ! apt-get install -y -q --no-install-recommends "$@"; then
	if [ "$updated" = 0 ]; then
		echo "setup: apt-get install failed after apt-get update failed; stale or missing package lists:" >&2
		printf '%s\n' "${stale:-  (apt-get update named none; see its output above)}" | sed 's/^/  /' >&2
	fi
	exit 3
fi
