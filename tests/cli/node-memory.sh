#!/bin/bash
# Offline: `up --node-memory SIZE` (and run's) refused with exit 2 and one line
# before anything is built or booted: under 128M, more than the host's memory
# in all, or a size the topology's slow nodes cannot take (whole 128M blocks).
#   node-memory.sh VNUMA_BINARY SOURCE_DIR
set -u
vnuma=$1
src=$2
. "$src/tests/lib.sh"
export VNUMA_STATE_DIR
VNUMA_STATE_DIR=$(mktemp -d /tmp/vnuma-nodemem.XXXXXX)
trap 'rm -rf "$VNUMA_STATE_DIR"' EXIT
e=$VNUMA_STATE_DIR/err

refused() { # PATTERN VNUMA_ARGS...
	local pat=$1
	shift
	"$vnuma" "$@" >/dev/null 2>"$e"
	local rc=$?
	[ "$rc" = 2 ] && [ "$(wc -l <"$e")" = 1 ] && grep -q -- "$pat" "$e" || {
		echo "# exit $rc: $(cat "$e")"
		return 1
	}
}
check "up --node-memory 64M: exit 2, too small" refused "under 128M" up 2node --node-memory 64M
check "up --node-memory 1T on 8node-snc: exit 2, more than the host has" refused "more than this host's" \
	up 8node-snc --node-memory 1T
check "up --node-memory 1025M on 4node-cxl-tiered: exit 2, whole 128M blocks" refused "128M memory blocks" \
	up 4node-cxl-tiered --node-memory 1025M
check "up --node-memory 1x: exit 2" refused "node-memory" up 2node --node-memory 1x
check "run --node-memory 100M: exit 2" refused "under 128M" run memfollow-2node --node-memory 100M
check "...having built nothing" sh -c "! ls '$VNUMA_STATE_DIR' | grep -q cache"
finish
