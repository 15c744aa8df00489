#!/bin/sh
# vnuma guest init (PID 1). It must never exit: PID 1 exiting panics the
# kernel. Everything optional only warns, so a kernel without tracefs or a
# module that fails to load still yields a usable shell.
# The vnuma-init: lines are markers the host matches on the console.

export PATH=/usr/sbin:/usr/bin:/sbin:/bin
export HOME=/root

# The image carries symlinks for the applets vnuma relies on; this adds the
# rest without touching files the image already has (numactl, the agent).
/bin/busybox --install -s 2>/dev/null

warn() { echo "vnuma-init: warning: $*"; }
mnt() { # TYPE DIR [OPTIONS]
	mkdir -p "$2"
	mount -t "$1" ${3:+-o "$3"} "$1" "$2" 2>/dev/null || warn "cannot mount $1 on $2"
}

mnt proc /proc
mnt sysfs /sys
# devtmpfs may already be there when the kernel has DEVTMPFS_MOUNT.
grep -q ' /dev devtmpfs ' /proc/mounts || mnt devtmpfs /dev

cmdline=" $(cat /proc/cmdline) "
# virtio's block and net drivers are loaded only for a guest that has such a
# device (legacy and modern ids): under TCG they cost ~0.1 s of every boot of
# a topology with neither.
virtio_devs=" "
for d in /sys/bus/pci/devices/*; do
	read -r v <"$d/vendor" 2>/dev/null && [ "$v" = 0x1af4 ] && read -r id <"$d/device" && virtio_devs="$virtio_devs$id "
done
has_virtio() { # ID...
	for id; do case "$virtio_devs" in *" $id "*) return 0 ;; esac; done
	return 1
}
[ -e /sys/firmware/acpi/tables/NFIT ] && nvdimm=1 || nvdimm=
# Is the module at PATH (from /etc/vnuma/modules) one this guest's devices
# need? Its name without the suffix: Debian's 6.1 ships plain .ko files,
# its 6.12 (bookworm-backports) .ko.xz, which insmod loads as well.
module_wanted() { # PATH
	case "${1%.ko*}" in
	*/virtio_blk) [ -n "$blk" ] ;;
	*/virtio_net | */net_failover | */failover) [ -n "$net" ] ;;
	*/nvdimm/* | */nfit | */dax/*) [ -n "$nvdimm" ] ;;
	*) true ;;
	esac
}
# The same script is the initramfs's /init and a busybox disk root's /init;
# on the disk, the initramfs has loaded the modules already.
if [ -z "$VNUMA_SWITCHED" ] && [ -f /etc/vnuma/modules ]; then
	has_virtio 0x1001 0x1042 && blk=1 || blk=
	has_virtio 0x1000 0x1041 && net=1 || net=
	while read -r m; do
		[ -n "$m" ] || continue
		module_wanted "$m" || continue
		insmod "$m" || warn "insmod $m failed"
	done </etc/vnuma/modules
fi
echo "vnuma-init: modules loaded"
# Nodes whose opening loads their module (loop-control: loop), as kmod's
# static-nodes makes them under systemd; /sbin/modprobe finds the module.
[ -z "$VNUMA_SWITCHED" ] && [ -f /etc/vnuma/modules.devname ] && while read -r _ name dev; do
	case "$dev" in [cb][0-9]*:[0-9]*) ;; *) continue ;; esac
	maj=${dev%%:*}
	case "$name" in */*) mkdir -p "/dev/${name%/*}" ;; esac # net/tun, mapper/control; not loop-control
	[ -e "/dev/$name" ] || mknod "/dev/$name" "${dev%"${maj#?}:"*}" "${maj#?}" "${dev#*:}" 2>/dev/null
done </etc/vnuma/modules.devname

# Slow memory (docs/tiering.md): each NVDIMM's raw namespace made device-dax
# (an info block, mode ram) and onlined as system RAM by kmem, as ndctl and
# daxctl would, so that 6.1 puts its node in kmem's lower memory tier. Before
# the agent starts, because the host checks the tiers once it answers.
online_slow_memory() {
	nd=/sys/bus/nd
	for ns in $nd/devices/namespace*; do
		[ -e "$ns/../dax_seed" ] || continue
		n=${ns##*/}
		read -r dax <"$ns/../dax_seed"
		echo "$n" >$nd/drivers/nd_pmem/unbind 2>/dev/null
		{ cat /proc/sys/kernel/random/uuid >$nd/devices/$dax/uuid && echo ram >$nd/devices/$dax/mode &&
			echo "$n" >$nd/devices/$dax/namespace && echo "$dax" >$nd/drivers/dax_pmem/bind; } ||
			warn "cannot make $n device-dax"
	done
	for d in /sys/bus/dax/devices/dax*; do
		[ -e "$d" ] || continue
		echo "${d##*/}" >/sys/bus/dax/drivers/device_dax/unbind 2>/dev/null
		echo "${d##*/}" >/sys/bus/dax/drivers/kmem/new_id || warn "kmem cannot take ${d##*/}"
	done
	# Debian's 6.1 leaves hot-added memory offline (no MEMORY_HOTPLUG_DEFAULT_ONLINE).
	for m in /sys/devices/system/memory/memory*; do
		read -r st <"$m/state" && [ "$st" = offline ] && { echo online >"$m/state" || warn "cannot online ${m##*/}"; }
	done
	echo "vnuma-init: slow memory onlined"
}
[ -z "$VNUMA_SWITCHED" ] && [ -n "$nvdimm" ] && online_slow_memory

# vnuma up --image: root=/dev/vda is a disk image. Mount it and hand PID 1 to
# its init (vnuma.init=), /dev moved along, everything else mounted afresh there.
root=${cmdline##* root=}
root=${root%% *}
init=${cmdline##* vnuma.init=}
init=${init%% *}
case "$cmdline" in *" vnuma.init="*) ;; *) init=/sbin/init ;; esac
if [ -z "$VNUMA_SWITCHED" ] && case "$cmdline" in *" root=/dev/"*) true ;; *) false ;; esac; then
	i=0
	while [ ! -b "$root" ] && [ $i -lt 100 ]; do sleep 0.1; i=$((i + 1)); done
	mkdir -p /newroot
	if mount -t ext4 "$root" /newroot; then
		echo "vnuma-init: root $root mounted, switching to $init"
		mkdir -p /newroot/dev /newroot/proc /newroot/sys
		mount --move /dev /newroot/dev
		umount /sys /proc
		VNUMA_SWITCHED=1 exec switch_root /newroot "$init"
	fi
	warn "cannot mount root $root; staying in the initramfs"
fi
# The initramfs's root is the kernel's rootfs, which df skips ("df /": "can't
# find mount point"): its files are copied into a tmpfs that becomes the root
# (a copy of some 13 MB; switch_root frees the initramfs's own).
if [ -z "$VNUMA_SWITCHED" ]; then
	mkdir -p /newroot
	if mount -t tmpfs -o mode=0755 tmpfs /newroot; then
		copied=1
		for f in /*; do
			case "$f" in
			/newroot) ;;
			/proc | /sys | /dev) mkdir "/newroot$f" ;;
			*) cp -a "$f" /newroot/ || copied= ;;
			esac
		done
		if [ -n "$copied" ]; then
			mount --move /dev /newroot/dev
			umount /sys /proc
			VNUMA_SWITCHED=1 exec switch_root /newroot /init
		fi
		umount /newroot
	fi
	warn "cannot copy the root into a tmpfs; / stays the initramfs (df / fails)"
fi
# A topology's NIC is QEMU's user-mode network (slirp), whose addresses are
# fixed: configured statically, so routes resolve (numactl's ip:ADDR) without
# a DHCP client waiting on boot.
for nic in /sys/class/net/eth*; do
	[ -e "$nic" ] || continue
	ip addr add 10.0.2.15/24 dev "${nic##*/}" 2>/dev/null && ip link set "${nic##*/}" up &&
		ip route add default via 10.0.2.2 2>/dev/null
	break
done
mnt devpts /dev/pts
mnt tmpfs /dev/shm mode=1777
mnt tmpfs /tmp mode=1777
mnt tmpfs /run mode=0755
mnt debugfs /sys/kernel/debug
mnt tracefs /sys/kernel/tracing
mnt cgroup2 /sys/fs/cgroup
# One write per controller: a single unknown name fails the whole write.
for c in cpu cpuset memory; do
	echo "+$c" >/sys/fs/cgroup/cgroup.subtree_control 2>/dev/null || warn "cannot enable cgroup controller $c"
done

hostname vnuma
ip link set lo up 2>/dev/null

case "$cmdline" in
*" vnuma.noagent "*)
	echo "vnuma-init: agent disabled (vnuma.noagent)"
	;;
*)
	if [ -x /usr/bin/vnuma-agent ]; then
		# Respawned so that a crashing agent costs a restart, not the guest.
		(
			while true; do
				/usr/bin/vnuma-agent </dev/null >>/run/vnuma-agent.log 2>&1
				echo "vnuma-init: agent exited ($?), restarting"
				sleep 1
			done
		) &
		echo "vnuma-init: agent started"
	else
		echo "vnuma-init: no agent in image"
	fi
	;;
esac

echo "vnuma-init: ready"
# setsid + cttyhack give the shell the real console as controlling tty, so
# Ctrl-C reaches the foreground job. Logging out starts a fresh shell.
while true; do
	setsid cttyhack sh -l
	sleep 1
done
