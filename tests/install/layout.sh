#!/bin/bash
# Offline: `cmake --install` into a temporary prefix gives the GNUInstallDirs
# layout, and the installed vnuma finds its data relative to its own location
# (also after the prefix is moved), from a directory outside the source tree.
#   layout.sh CMAKE BUILD_DIR SOURCE_DIR
set -u
cmake=$1 build=$(cd "$2" && pwd) src=$(cd "$3" && pwd)
tmp=$(mktemp -d /tmp/vn-layout.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
. "$(dirname "$0")/../lib.sh"

"$cmake" --install "$build" --prefix "$tmp/prefix" >"$tmp/install.log" 2>&1 || {
	cat "$tmp/install.log"
	exit 1
}
p=$tmp/prefix
check "bin/vnuma" test -x "$p/bin/vnuma"
check "libexec/vnuma/vnuma-core.so, every command but a local exec (src/cli/front.c)" test -f "$p/libexec/vnuma/vnuma-core.so"
# The light front: what exec on a local guest loads is json-c and libc, not libvirt and its ~60 libraries.
# (An ASan+UBSan build adds their runtimes.)
needed=$(objdump -p "$p/bin/vnuma" | awk '/NEEDED/ && $2 !~ /^lib(a|ub)san\./ {print $2}' | sort | tr '\n' ' ')
check "bin/vnuma needs json-c and libc only ($needed)" test "$needed" = "libc.so.6 libjson-c.so.5 "
check "...and vnuma-core.so libvirt" sh -c "objdump -p '$p/libexec/vnuma/vnuma-core.so' | grep -q 'NEEDED.*libvirt.so'"
for f in vnuma-agent vnuma-sample vnuma-trace; do
	check "libexec/vnuma/$f" test -x "$p/libexec/vnuma/$f"
done
wl=$(cd "$build/src/workloads" && ls vnuma-wl-* | sort)
check "every workload is installed ($(echo $wl))" test "$(cd "$p/libexec/vnuma" && ls vnuma-wl-* | sort)" = "$wl"
static() { ! objdump -p "$1" | grep -q NEEDED; }
for f in "$p"/libexec/vnuma/*; do
	# The locality plugin is QEMU's, on the host: a shared object by nature.
	[ "${f##*/}" = vnuma-locality.so ] && continue
	# vnuma's own commands, on the host.
	[ "${f##*/}" = vnuma-core.so ] && continue
	check "${f##*/} is static (the guest has no libraries)" static "$f"
done
exports=$(nm -D --defined-only "$p/libexec/vnuma/vnuma-core.so" 2>/dev/null | awk '{print $3}' | tr '\n' ' ')
check "libexec/vnuma/vnuma-core.so exports vn_cli_main only ($exports)" test "$exports" = "vn_cli_main "
exports=$(nm -D --defined-only "$p/libexec/vnuma/vnuma-locality.so" 2>/dev/null | awk '{print $3}' | sort | tr '\n' ' ')
check "libexec/vnuma/vnuma-locality.so exports QEMU's two entry points only ($exports)" \
	test "$exports" = "qemu_plugin_install qemu_plugin_version "
for d in topologies scenarios kernels; do
	check "share/vnuma/$d equals the source tree's" diff -r "$src/$d" "$p/share/vnuma/$d"
done
check "a recipe's patch dir" test -f "$p/share/vnuma/kernels/fallback-revert/0001-mm-page_alloc-restore-pre-5.15-node_load.patch"
check "man page" grep -q '^\.TH VNUMA 1' "$p/share/man/man1/vnuma.1"
check "bash completion" grep -q '^complete -F _vnuma vnuma' "$p/share/bash-completion/completions/vnuma"

mkdir "$tmp/elsewhere"
cd "$tmp/elsewhere" || exit 1
out=$("$p/bin/vnuma" topo show 4node-amd 2>&1)
check "topo show NAME from outside the source tree" grep -q '^available: 4 nodes (0-3)' <<<"$out"
check "topo validate NAME" sh -c "'$p/bin/vnuma' topo validate 2node 8node-snc 2>&1 | grep -c ': ok: ' | grep -qx 2"
check "topo fallback NAME" sh -c "'$p/bin/vnuma' topo fallback 4node-amd | grep -qx 'Fallback order for Node 3: 3 2 1 0 '"
# The installed data dir is the prefix's, not the source tree's: a topology
# only the prefix has is found by the installed binary and not by the build's.
cp "$src/topologies/2node.xml" "$p/share/vnuma/topologies/only-installed.xml"
check "a name is looked up in PREFIX/share/vnuma" sh -c "'$p/bin/vnuma' topo show only-installed >/dev/null"
check "...and not by the build tree's vnuma" test "$(rc "$build/vnuma" topo show only-installed)" = 2
err=$("$p/bin/vnuma" topo show no-such-topo 2>&1 >/dev/null)
check "unknown topology name exits 2" test "$(rc "$p/bin/vnuma" topo show no-such-topo)" = 2
check "...naming what was searched" grep -qF "no-such-topo: no such topology (not a file, nor no-such-topo.xml or no-such-topo in ./topologies, $p/share/vnuma/topologies)" <<<"$err"
check "...in one line" test "$(wc -l <<<"$err")" = 1
err=$("$p/bin/vnuma" run no-such-scenario 2>&1 >/dev/null)
check "unknown scenario name exits 2" test "$(rc "$p/bin/vnuma" run no-such-scenario)" = 2
check "...naming the installed scenarios dir" grep -qF "$p/share/vnuma/scenarios" <<<"$err"
err=$("$p/bin/vnuma" kernel build no-such-recipe 2>&1 >/dev/null)
check "unknown recipe exits 2" test "$(rc "$p/bin/vnuma" kernel build no-such-recipe)" = 2
check "...naming the installed kernels dir" grep -qF "$p/share/vnuma/kernels" <<<"$err"
check "a recipe name resolves to the installed recipe" sh -c "'$p/bin/vnuma' kernel build --state-dir '$tmp/state' stock | grep -q 'stock: a stock recipe'"
# ./topologies in the current directory is still searched first.
mkdir topologies && cp "$src/topologies/4node-cxl.xml" topologies/local.xml
check "./topologies is searched" sh -c "'$p/bin/vnuma' topo show local | grep -q '^available: 4 nodes'"

# An installed scenario takes its topology from the installed topologies/,
# before ./topologies: seen offline through the node check that precedes any
# boot (fallback-4node places on node 3; "twin" has 2 nodes).
cp "$src/topologies/2node.xml" "$p/share/vnuma/topologies/twin.xml"
cp "$src/topologies/2node.xml" topologies/twin.xml
sed 's/"topology": "4node-amd"/"topology": "twin"/' "$src/scenarios/fallback-4node.json" >"$p/share/vnuma/scenarios/probe.json"
err=$("$p/bin/vnuma" run probe --state-dir "$tmp/state" 2>&1 >/dev/null)
check "run NAME: an installed scenario's topology comes from the prefix" \
	grep -qF "node 3 does not exist in $p/share/vnuma/topologies/twin.xml" <<<"$err"
err=$("$p/bin/vnuma" run "$p/share/vnuma/scenarios/fallback-4node.json" --state-dir "$tmp/state" --kernel /nonexistent 2>&1 >/dev/null)
check "run FILE: a shipped scenario's topology resolves (the bad --kernel is what fails)" \
	grep -qF "kernel '/nonexistent': no such file or recipe" <<<"$err"

# Relocatable: nothing depends on the prefix it was installed to.
mv "$p" "$tmp/moved"
check "a moved prefix still finds its data" sh -c "'$tmp/moved/bin/vnuma' topo show 4node-amd | grep -q '^available: 4 nodes'"

# A broken install (no vnuma-core.so): every command of the core says which file is missing, exit 3; the front's own
# exec still answers.
rm "$tmp/moved/libexec/vnuma/vnuma-core.so"
err=$("$tmp/moved/bin/vnuma" topo show 4node-amd 2>&1 >/dev/null)
check "without vnuma-core.so: exit 3" test "$(rc "$tmp/moved/bin/vnuma" topo show 4node-amd)" = 3
check "...naming the file" grep -qF "cannot load $tmp/moved/libexec/vnuma/vnuma-core.so" <<<"$err"
check "...exec --help is the front's alone" sh -c "'$tmp/moved/bin/vnuma' exec --help | grep -q '^usage: vnuma exec'"

finish
