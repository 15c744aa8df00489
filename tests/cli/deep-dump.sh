#!/bin/bash
# `vnuma collect --deep --dump FILE` on a kept dump, its guest gone, offline:
# a stand-in drgn (first in PATH) prints what the real one read from a
# 4node-amd guest (tests/fixtures/deep), so what is checked is vnuma's part:
# the vmlinux taken from FILE.json and handed to drgn with FILE, the
# topology.xml beside FILE (a run's directory) or --topology, the verdict
# and its exit code (0 equal, 1 against pre-5.15's model), and the refusals
# (no dump or no topology: 2; FILE.json naming no vmlinux: 3 with its hint;
# a vmlinux whose build id is not the one in the dump's VMCOREINFO: 3).
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
# core BUILD_ID: an ELF core whose one note is VMCOREINFO saying BUILD-ID=BUILD_ID, as QEMU writes the kernel's.
core() {
	python3 - "$1" <<'EOF'
import struct, sys
desc = b"OSRELEASE=6.1.0\nBUILD-ID=%s\n" % sys.argv[1].encode()
note = struct.pack("<III", 11, len(desc), 0) + b"VMCOREINFO\0\0" + desc + b"\0" * (-len(desc) % 4)
ehdr = b"\x7fELF\x02\x01\x01" + b"\0" * 9 + struct.pack("<HHIQQQIHHHHHH", 4, 62, 1, 0, 64, 0, 0, 64, 56, 1, 64, 0, 0)
phdr = struct.pack("<IIQQQQQQ", 4, 0, 120, 0, 0, len(note), 0, 4)
sys.stdout.buffer.write(ehdr + phdr + note)
EOF
}
# An ELF with a GNU build id stands for the vmlinux: vnuma itself.
cp "$vnuma" "$tmp/vmlinux"
id=$(readelf -n "$tmp/vmlinux" | sed -n 's/^ *Build ID: *\([0-9a-f]*\)$/\1/p')
check "the stand-in vmlinux has a build id" test -n "$id"
core "$id" >"$tmp/run/vmcore"
cp "$tmp/run/vmcore" "$tmp/run/vmcore.orig"
cp "$src/topologies/4node-amd.xml" "$tmp/run/topology.xml"
printf '{"state":"crashed","kernel":{"release":"6.1.0","vmlinux":"%s"}}\n' "$tmp/vmlinux" >"$tmp/run/vmcore.json"

"$vnuma" collect --deep --dump "$tmp/run/vmcore" -o "$tmp/out" >"$tmp/out.txt" 2>"$tmp/err.txt"
check "a kept dump: exit 0" test $? = 0 || cat "$tmp/out.txt" "$tmp/err.txt"
check "...zonelists ok" grep -q '^zonelists (ZONELIST_FALLBACK, model [^)]*): ok$' "$tmp/out.txt"
check "...drgn read FILE" grep -qx -- "$tmp/run/vmcore" "$tmp/drgn.argv"
check "...with the vmlinux FILE.json names" grep -qx -- "$tmp/vmlinux" "$tmp/drgn.argv"
check "...against the topology beside it" grep -qF "against $tmp/run/topology.xml" "$tmp/err.txt"
check "...deep.json kept" grep -q '"zonelists"' "$tmp/out/deep.json"
check "...the dump left as it was" cmp -s "$tmp/run/vmcore" "$tmp/run/vmcore.orig"
check "...nothing left in TMPDIR" test -z "$(ls -A "$tmp/tmp")"

"$vnuma" collect --deep --dump "$tmp/run/vmcore" --kernel-model pre-5.15 >"$tmp/old.txt" 2>/dev/null
check "held to pre-5.15: exit 1" test $? = 1
check "...node 3 differs" grep -q 'Node 3: model 3 2 0 1, kernel.s zonelist 3 2 1 0' "$tmp/old.txt"

# The vmlinux at the path FILE.json names is another kernel's now (a dump from CI, a rebuilt cache): refused.
core 0123456789abcdef0123456789abcdef01234567 >"$tmp/run/vmcore"
"$vnuma" collect --deep --dump "$tmp/run/vmcore" 2>"$tmp/other.err"
check "another kernel's vmlinux: exit 3" test $? = 3
check "...naming both build ids" grep -q "build id $id, the kernel dumped in .* 0123456789abcdef0123456789abcdef01234567: not its vmlinux" "$tmp/other.err"
cp "$tmp/run/vmcore.orig" "$tmp/run/vmcore"

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
