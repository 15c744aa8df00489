#!/bin/bash
# check-layers.sh catches an edge made by a call alone: a fake tree of two
# layers, `low` under `high`, where low calls a function of high's that it
# declares itself (as a header reached through another header would), with no
# include of high's and no CMake link. Only the objects' undefined symbols
# show the edge: without the build dir the check passes, with it it fails.
#   check-layers-calls.sh SOURCE_DIR
set -u
src=$1
. "$(dirname "$0")/lib.sh"
t=$(mktemp -d)
trap 'rm -rf "$t"' EXIT
mkdir -p "$t/docs" "$t/src/low" "$t/src/high" "$t/build/src/low/CMakeFiles/vn_low.dir" \
	"$t/build/src/high/CMakeFiles/vn_high.dir"
cat >"$t/docs/ARCHITECTURE.md" <<'EOF'
| room | what | uses |
| --- | --- | --- |
| `low` | the bottom | libc |
| `high` | the top | low |
EOF
cat >"$t/src/low/base.h" <<'EOF'
int vn_low_base(void);
EOF
cat >"$t/src/high/high.c" <<'EOF'
#include "low/base.h"
int vn_high_thing(void) { return vn_low_base() + 1; }
EOF
cat >"$t/src/low/base.c" <<'EOF'
int vn_low_base(void) { return 41; }
EOF
cat >"$t/src/low/planted.c" <<'EOF'
int vn_high_thing(void);
int vn_low_planted(void) { return vn_high_thing(); }
EOF
for f in high/high low/base low/planted; do
	l=${f%%/*}
	cc -c -o "$t/build/src/$l/CMakeFiles/vn_$l.dir/${f#*/}.c.o" -I"$t/src" "$t/src/$f.c" || exit 1
done
out=$t/out
layers() { bash "$src/tests/check-layers.sh" "$@" >"$out" 2>&1; }

check "the includes and links alone do not see the planted edge" \
	layers "$t" || cat "$out"
layers "$t" "$t/build"
r=$?
check "with the build dir the check fails (exit $r)" test "$r" = 1 || cat "$out"
check "and names the call's edge as one that climbs up" \
	grep -q "FAIL - low uses high, which sits above it" "$out" || cat "$out"
check "and the row that does not say it" grep -q "FAIL - low: the table says it uses '', the code uses 'high'" "$out"
check "high's call down to low is an edge the table has" bash -c "! grep -q 'FAIL - high' '$out'"

# The planted object gone (its source with it): the tree is clean again, the calls still read.
rm "$t/src/low/planted.c"
check "an object whose source is gone is stale, not the layer's" \
	layers "$t" "$t/build" || cat "$out"
check "the calls counted: high uses low" grep -q "edges: 1" "$out"

# A build dir with no objects is an error, not a pass: the calls would go unread.
check "an empty build dir fails" bash -c "! bash '$src/tests/check-layers.sh' '$t' '$t/none' >/dev/null 2>&1"
finish
