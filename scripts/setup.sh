#!/bin/sh
# One-time (idempotent) set-up of a fresh Debian 12 machine: installs every
# package vnuma needs from Debian's archive, then configures and builds.
# Run as root. Re-running only rebuilds what changed.
set -eu

top=$(cd "$(dirname "$0")/.." && pwd)
build=${VN_BUILD_DIR:-$top/build}

# chromium: tests/integration/report-browser.sh renders report.html headless (it skips without).
packages="
	build-essential cmake pkg-config
	libxml2-dev libjson-c-dev libvirt-dev libguestfs-dev libarchive-dev libcmocka-dev
	nettle-dev libelf-dev libkmod-dev libgsl-dev kmod
	libvirt-daemon libvirt-daemon-driver-qemu libvirt-clients
	qemu-system-x86 qemu-utils
	linux-image-amd64 busybox-static numactl libnuma-dev
	libguestfs-tools supermin debootstrap e2fsprogs
	xz-utils libxml2-utils procps bc groff-base clang-format python3
	chromium
	flex bison libelf-dev libssl-dev cpio patch linux-source-6.1
"

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
	export DEBIAN_FRONTEND=noninteractive
	apt-get update -q
	apt-get install -y -q --no-install-recommends $missing
fi

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
