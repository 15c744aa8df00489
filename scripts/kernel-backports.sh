#!/bin/sh
# kernel-backports.sh [--deb FILE] [--state DIR]: Debian's newest 6.12 kernel
# from bookworm-backports as a prebuilt recipe (docs/kernels.md, "Debian's
# 6.12 from backports"), for what 6.1 does not have: memory tiers from HMAT
# (docs/tiering.md, "Kernel versions").
#
# Downloads linux-image-6.12.*-amd64-unsigned (the newest there, ~106 MB)
# into STATE/kernels/debian-6.12/, unpacks it (~120 MB; the .deb is removed) (dpkg-deb -x: nothing is
# installed), runs depmod on its modules (the package has no modules.dep:
# its postinst makes it) and writes STATE/kernels/debian-6.12.json:
#   vnuma up topologies/2node.xml --kernel STATE/kernels/debian-6.12.json
# or, with VNUMA_KERNELS_DIR=STATE/kernels, --kernel debian-6.12.
#
# The system's apt sources and lists are left alone: apt runs with its own
# sources, lists and cache under STATE/kernels/debian-6.12/apt (no root
# needed). --deb FILE takes a package already downloaded instead.
# Exit 2 bad usage, 3 a download or unpack that failed.
set -eu

state=${VNUMA_STATE_DIR:-}
deb=
while [ $# -gt 0 ]; do
	case $1 in
	--deb) [ $# -ge 2 ] || { echo "usage: $0 [--deb FILE] [--state DIR]" >&2; exit 2; }; deb=$2; shift 2 ;;
	--state) [ $# -ge 2 ] || { echo "usage: $0 [--deb FILE] [--state DIR]" >&2; exit 2; }; state=$2; shift 2 ;;
	*) echo "usage: $0 [--deb FILE] [--state DIR]" >&2; exit 2 ;;
	esac
done
# vnuma's own default (src/util/state.c).
if [ -z "$state" ]; then
	if [ -n "${XDG_STATE_HOME:-}" ]; then state=$XDG_STATE_HOME/vnuma
	elif [ "$(id -u)" = 0 ]; then state=/var/lib/vnuma
	else state=$HOME/.local/state/vnuma; fi
fi
[ -z "$deb" ] || [ -f "$deb" ] || { echo "kernel-backports: --deb $deb: no such file" >&2; exit 2; }
for t in dpkg-deb depmod; do
	command -v "$t" >/dev/null 2>&1 || [ -x "/sbin/$t" ] || { echo "kernel-backports: $t is missing (apt-get install dpkg kmod)" >&2; exit 3; }
done
PATH=$PATH:/sbin:/usr/sbin

kdir=$state/kernels
dir=$kdir/debian-6.12
mkdir -p "$dir" || exit 3

if [ -z "$deb" ]; then
	apt=$dir/apt
	mkdir -p "$apt/sources" "$apt/lists/partial" "$apt/cache/archives/partial" || exit 3
	cat >"$apt/sources/bpo.sources" <<-EOF
		Types: deb
		URIs: ${VN_DEBIAN_MIRROR:-http://deb.debian.org/debian}
		Suites: bookworm-backports
		Components: main
		Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg
	EOF
	# Only these: the system's sources.list(.d) and lists are neither read nor written.
	set -- -o Dir::Etc::sourcelist=/dev/null -o "Dir::Etc::sourceparts=$apt/sources" \
		-o "Dir::State::Lists=$apt/lists" -o "Dir::Cache=$apt/cache" -o APT::Sandbox::User=root \
		-o APT::Architectures=amd64
	apt-get "$@" -q update || { echo "kernel-backports: apt-get update of bookworm-backports failed" >&2; exit 3; }
	pkg=$(apt-cache "$@" pkgnames linux-image-6.12. |
		grep -E '^linux-image-6\.12\.[0-9]+\+deb12-amd64-unsigned$' | sort -V | tail -n 1)
	[ -n "$pkg" ] || { echo "kernel-backports: bookworm-backports has no linux-image-6.12.*-amd64-unsigned" >&2; exit 3; }
	echo "kernel-backports: downloading $pkg"
	rm -f "$dir"/*.deb
	(cd "$dir" && apt-get "$@" -q download "$pkg") || { echo "kernel-backports: downloading $pkg failed" >&2; exit 3; }
	deb=$(ls "$dir"/"$pkg"_*.deb)
fi

# A fresh tree each time: modules of an older 6.12 left beside would be depmod's too.
root=$dir/root
rm -rf "$root.new"
dpkg-deb -x "$deb" "$root.new" || { echo "kernel-backports: cannot unpack $deb" >&2; exit 3; }
image=$(ls "$root.new"/boot/vmlinuz-* 2>/dev/null | head -n 1)
[ -n "$image" ] || { echo "kernel-backports: $deb has no boot/vmlinuz-*" >&2; exit 3; }
release=${image##*/vmlinuz-}
[ -d "$root.new/lib/modules/$release" ] || { echo "kernel-backports: $deb has no lib/modules/$release" >&2; exit 3; }
depmod -b "$root.new" "$release" || { echo "kernel-backports: depmod failed" >&2; exit 3; }
rm -rf "$root" && mv "$root.new" "$root"
# What was downloaded is unpacked now (~106 MB less); a --deb given is the user's.
[ -z "${pkg:-}" ] || rm -f "$deb"

# Paths relative to the recipe (docs/kernels.md), so the state dir can move.
cat >"$kdir/debian-6.12.json.new" <<-EOF
	{"type": "prebuilt",
	 "description": "Debian's $release from bookworm-backports (${deb##*/}), unpacked by scripts/kernel-backports.sh",
	 "image": "debian-6.12/root/boot/vmlinuz-$release",
	 "modules": "debian-6.12/root/lib/modules/$release",
	 "config": "debian-6.12/root/boot/config-$release"}
EOF
mv "$kdir/debian-6.12.json.new" "$kdir/debian-6.12.json"
echo "kernel-backports: $release: recipe $kdir/debian-6.12.json"
echo "kernel-backports: vnuma up TOPOLOGY --kernel $kdir/debian-6.12.json"
