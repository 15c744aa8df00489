#!/bin/bash
# `vnuma collect --deep --dump FILE` on a kept dump, its guest gone, offline:
# a stand-in drgn (first in PATH) prints what the real one read from a
# 4node-amd guest (tests/fixtures/deep), so what is checked is vnuma's part:
# the vmlinux taken from FILE.json and handed to drgn with FILE, the
# topology.xml beside FILE (a run's directory) or --topology, the verdict
# and its exit code (0 equal, 1 against pre-5.15's model), and the refusals
# (no dump or no topology: 2; FILE.json naming no vmlinux: 3 with its hint).
# The real drgn on a real kept dump is kernel-build-debug-dump's.
#   deep-dump.sh VNUMA_BINARY SOURCE_DIR
set -u
vnuma=$1
src=$2
tmp=$(mktemp -d /tmp/vn-deep-dump.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
. "$(dirname "$0")/../lib.sh"
export VNUMA_STATE_DIR=$tmp/state TMPDIR=$tmp/tmp
unset VNUMA_URI
mkdir -p "$tmp/bin" "$tmp/run" "$tmp/tmp" "$tmp/elsewhere"

# drgn -q -c CORE -s VMLINUX --no-default-symbols SCRIPT: its argv kept, the recorded reading printed.
cat >"$tmp/bin/drgn" <<EOF
#!/bin/sh
printf '%s\n' "\$@" >"$tmp/drgn.argv"
echo "drgn chatter"
printf 'VNUMA-DEEP %s\n' "\$(cat "$src/tests/fixtures/deep/4node-amd.json")"
EOF
chmod +x "$tmp/bin/drgn"
export PATH=$tmp/bin:$PATH
echo core >"$tmp/run/vmcore"
echo elf >"$tmp/vmlinux"
cp "$src/topologies/4node-amd.xml" "$tmp/run/topology.xml"
printf '{"state":"crashed","kernel":{"release":"6.1.0","vmlinux":"%s"}}\n' "$tmp/vmlinux" >"$tmp/run/vmcore.json"

"$vnuma" collect --deep --dump "$tmp/run/vmcore" -o "$tmp/out" >"$tmp/out.txt" 2>"$tmp/err.txt"
check "a kept dump: exit 0" test $? = 0 || cat "$tmp/out.txt" "$tmp/err.txt"
check "...zonelists ok" grep -q '^zonelists (ZONELIST_FALLBACK, model [^)]*): ok$' "$tmp/out.txt"
check "...drgn read FILE" grep -qx -- "$tmp/run/vmcore" "$tmp/drgn.argv"
check "...with the vmlinux FILE.json names" grep -qx -- "$tmp/vmlinux" "$tmp/drgn.argv"
check "...against the topology beside it" grep -qF "against $tmp/run/topology.xml" "$tmp/err.txt"
check "...deep.json kept" grep -q '"zonelists"' "$tmp/out/deep.json"
check "...the dump left as it was" grep -qx core "$tmp/run/vmcore"
check "...nothing left in TMPDIR" test -z "$(ls -A "$tmp/tmp")"

"$vnuma" collect --deep --dump "$tmp/run/vmcore" --kernel-model pre-5.15 >"$tmp/old.txt" 2>/dev/null
check "held to pre-5.15: exit 1" test $? = 1
check "...node 3 differs" grep -q 'Node 3: model 3 2 0 1, kernel.s zonelist 3 2 1 0' "$tmp/old.txt"

mv "$tmp/run/vmcore" "$tmp/run/vmcore.json" "$tmp/elsewhere/"
check "no such dump: exit 2" test "$(rc "$vnuma" collect --deep --dump "$tmp/run/vmcore")" = 2
"$vnuma" collect --deep --dump "$tmp/elsewhere/vmcore" 2>"$tmp/notopo.err"
check "no topology beside it: exit 2" test $? = 2
check "...asking for --topology" grep -q -- '--topology' "$tmp/notopo.err"
check "--topology given: exit 0" \
	test "$(rc "$vnuma" collect --deep --dump "$tmp/elsewhere/vmcore" --topology "$tmp/run/topology.xml")" = 0
printf '{"kernel":{"vmlinux":null,"hint":"apt-get install linux-image-X-dbg"}}\n' >"$tmp/elsewhere/vmcore.json"
"$vnuma" collect --deep --dump "$tmp/elsewhere/vmcore" --topology "$tmp/run/topology.xml" 2>"$tmp/novm.err"
check "no vmlinux named: exit 3" test $? = 3
check "...with the hint" grep -q 'linux-image-X-dbg' "$tmp/novm.err"
check "--dump without --deep: exit 2" test "$(rc "$vnuma" collect --dump "$tmp/elsewhere/vmcore")" = 2
check "--topology with a guest: exit 2" test "$(rc "$vnuma" collect g --deep --topology "$tmp/run/topology.xml")" = 2
finish
