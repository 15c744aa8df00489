#!/bin/bash
# cpack -G DEB: the package holds the installed tree under /usr, depends on
# every shared library vnuma links and on what it runs, and the vnuma
# unpacked from it works where it lands.
#   package.sh CPACK BUILD_DIR
set -u
cpack=$1 build=$(cd "$2" && pwd)
tmp=$(mktemp -d /tmp/vn-deb.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
. "$(dirname "$0")/../lib.sh"
for t in dpkg-deb dpkg-query objdump; do
	command -v $t >/dev/null || { echo "package.sh: $t is missing (install dpkg / binutils)"; exit 1; }
done

(cd "$tmp" && "$cpack" -G DEB -B "$tmp/out" --config "$build/CPackConfig.cmake") >"$tmp/cpack.log" 2>&1 || {
	cat "$tmp/cpack.log"
	exit 1
}
deb=$(ls "$tmp"/out/vnuma_*.deb 2>/dev/null | head -1)
check "cpack made vnuma_VERSION_ARCH.deb" test -f "$deb"
[ -f "$deb" ] || exit 1
info=$(dpkg-deb -I "$deb")
list=$(dpkg-deb -c "$deb" | awk '{print $6}')
depends=$(dpkg-deb -f "$deb" Depends | tr -d ' ' | tr ',' '\n')
for f in ./usr/bin/vnuma ./usr/libexec/vnuma/vnuma-core.so ./usr/libexec/vnuma/vnuma-agent ./usr/libexec/vnuma/vnuma-sample ./usr/libexec/vnuma/vnuma-trace \
	./usr/libexec/vnuma/vnuma-wl-memfollow ./usr/share/vnuma/topologies/8node-snc.xml \
	./usr/share/vnuma/scenarios/memfollow-2node.json ./usr/share/vnuma/kernels/minimal-numa/numa.config \
	./usr/share/man/man1/vnuma.1 ./usr/share/bash-completion/completions/vnuma; do
	check "package holds $f" grep -qxF "$f" <<<"$list"
done
check "Package: vnuma" grep -q '^ Package: vnuma$' <<<"$info"
check "Architecture is the host's" grep -q "^ Architecture: $(dpkg --print-architecture)$" <<<"$info"
# Every shared library the front or the core needs comes from a package it depends on.
for lib in $(objdump -p "$build/vnuma" "$build/vnuma-core.so" | awk '/NEEDED/ {print $2}' | sort -u); do
	path=$(ldconfig -p | awk -v l="$lib" '$1 == l && /x86-64/ {print $NF; exit}')
	# dpkg knows the path it installed (/lib/... on a merged /usr), not always the resolved one.
	pkg=$( (dpkg-query -S "$path" || dpkg-query -S "$(readlink -f "$path")") 2>/dev/null | head -1 | cut -d: -f1)
	check "NEEDED $lib ($pkg) is in Depends" grep -qxF "$pkg" <<<"$depends"
done
# The field's libraries in place of our own code (SHA-256, ELF, kernel modules, Student's t): linked, so depended on.
for p in libnettle8 libelf1 libkmod2 libgsl27; do
	check "Depends: $p" grep -qxF "$p" <<<"$depends"
done
# What vnuma runs or packs into every guest.
for p in libvirt-daemon-driver-qemu qemu-system-x86 linux-image-amd64 busybox-static numactl; do
	check "Depends: $p" grep -qxF "$p" <<<"$depends"
done
# Every dependency is a real Debian package (installed here by scripts/setup.sh).
for p in $depends $(dpkg-deb -f "$deb" Recommends Suggests | sed 's/^[A-Za-z]*: //' | tr -d ' ' | tr ',' '\n'); do
	check "$p is a known package" sh -c "dpkg-query -W '$p' >/dev/null 2>&1 || apt-cache show '$p' >/dev/null 2>&1"
done
# Unpacked anywhere, the packaged vnuma finds the packaged data.
dpkg-deb -x "$deb" "$tmp/root"
check "unpacked vnuma: topo show NAME" sh -c "cd / && '$tmp/root/usr/bin/vnuma' topo show 8node-snc | grep -q '^available: 8 nodes'"
finish
