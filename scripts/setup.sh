#!/bin/sh
# One-time (idempotent) set-up of a fresh Debian 12 machine: installs every
# package vnuma needs from Debian's archive, then configures and builds.
# Run as root. Re-running only rebuilds what changed.
#
# --arches (or VN_ARCHES=1) also sets up the other guest architectures,
# arm64 and ppc64le (docs/arches.md): Debian's arm64 and ppc64el archives
# added to dpkg (`dpkg --add-architecture`), QEMU for them, the cross
# compilers and their static json-c for the in-guest programs. Their kernels
# and busybox are not installed: `vnuma up --arch` downloads and unpacks them
# into its cache on first use. Not the default: it adds two architectures'
# package lists to every apt-get update and ~600 MB that x86 users never use.
set -eu

arches=${VN_ARCHES:-0}
for a in "$@"; do
	case $a in
	--arches) arches=1 ;;
	*) echo "usage: $0 [--arches]" >&2; exit 2 ;;
	esac
done

top=$(cd "$(dirname "$0")/.." && pwd)
build=${VN_BUILD_DIR:-$top/build}

# chromium: tests/integration/report-browser.sh renders report.html headless (it skips without).
# gdb: vnuma debug; crash, python3-drgn: reading vnuma dump's files (docs/debugging.md).
packages="
	build-essential cmake pkg-config
	libxml2-dev libjson-c-dev libvirt-dev libguestfs-dev libarchive-dev libcmocka-dev
	nettle-dev libelf-dev libkmod-dev libgsl-dev kmod
	libvirt-daemon libvirt-daemon-driver-qemu libvirt-clients
	qemu-system-x86 qemu-utils
	linux-image-amd64 busybox-static numactl libnuma-dev libcap-dev
	libguestfs-tools supermin debootstrap e2fsprogs
	xz-utils libxml2-utils procps bc groff-base clang-format python3
	chromium
	flex bison libelf-dev libssl-dev cpio patch linux-source-6.1 git
	gdb crash python3-drgn
"

# The cross compilers only recommend their C library, and apt-get here installs no recommends.
arch_packages="
	qemu-system-arm qemu-system-ppc gcc-aarch64-linux-gnu gcc-powerpc64le-linux-gnu
	libc6-dev-arm64-cross libc6-dev-ppc64el-cross
	libjson-c-dev:arm64 libjson-c-dev:ppc64el
"
if [ "$arches" = 1 ]; then
	packages="$packages $arch_packages"
	for a in arm64 ppc64el; do
		if ! dpkg --print-foreign-architectures | grep -qx "$a"; then
			[ "$(id -u)" = 0 ] || { echo "setup: --arches: run as root (dpkg --add-architecture $a)" >&2; exit 2; }
			dpkg --add-architecture "$a"
			added_arch=1
		fi
	done
fi

missing=""
for p in $packages; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing="$missing $p"
done
if [ -n "$missing" ]; then
	if [ "$(id -u)" != 0 ]; then
		echo "setup: missing Debian packages:$missing" >&2
		echo "setup: run this script as root to install them" >&2
		exit 2
	fi
	echo "setup: installing:$missing"
	# shellcheck disable=SC2086 # a list of package names
	"$top/scripts/apt-install.sh" $missing || exit 3
	added_arch=0
fi

# An architecture just added needs its package lists even when nothing is
# missing; a stale index is no reason to stop here either (apt-install.sh).
if [ "${added_arch:-0}" = 1 ]; then
	apt-get update -q || echo "setup: apt-get update failed; going on with the package lists there are" >&2
fi
[ "$arches" = 1 ] || echo "setup: arm64 and ppc64le guests (vnuma up --arch): scripts/setup.sh --arches"

# As root, libvirt's embedded QEMU driver refuses to start unless the system
# user libvirt-qemu exists (it checks before reading vnuma's qemu.conf, which
# runs QEMU as root). libvirt-daemon-system would create it, with services
# we don't want; create just the user.
if [ "$(id -u)" = 0 ] && ! getent passwd libvirt-qemu >/dev/null; then
	getent group libvirt-qemu >/dev/null || groupadd -r libvirt-qemu
	useradd -r -g libvirt-qemu -d /var/lib/libvirt -s /usr/sbin/nologin libvirt-qemu
fi

cmake -S "$top" -B "$build" -DCMAKE_BUILD_TYPE=RelWithDebInfo ${VN_CMAKE_ARGS:-} >/dev/null
cmake --build "$build" -j"$(nproc)"
echo "setup: built $build/vnuma"

# Can this host boot guests, and on which accelerator? Real probe boots; the
# proven verdict is cached for the first `vnuma up`. VN_SKIP_DOCTOR=1 skips it
# (a build-only machine without QEMU).
if [ "${VN_SKIP_DOCTOR:-0}" != 1 ]; then
	echo "setup: vnuma doctor"
	if ! "$build/vnuma" doctor; then
		echo "setup: vnuma doctor found a problem (see the FAIL lines and their fixes above)" >&2
		exit 3
	fi
fi
