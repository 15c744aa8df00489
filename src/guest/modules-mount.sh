#!/bin/sh
# vnuma guest: mounts the kernel's whole modules tree, shared read-only by the
# host over 9p (tag vnuma-modules), on /lib/modules/RELEASE, so that modprobe
# (busybox's, also the kernel's request_module helper) finds every module.
# The host runs it through the agent once up's snapshot is saved: QEMU
# refuses to save a guest while its 9p export is mounted. The initramfs's own
# modules (boot's, and those that mount the share) stay loaded underneath.
d=/lib/modules/$(uname -r)
grep -q " $d 9p " /proc/mounts && exit 0
while read -r m; do
	# Loaded already (a second call) or built in: the mount says what is missing.
	[ -n "$m" ] && insmod "$m" 2>/dev/null
done </etc/vnuma/modules-share
mkdir -p "$d"
exec mount -t 9p -o ro,trans=virtio,version=9p2000.L,cache=loose vnuma-modules "$d"
