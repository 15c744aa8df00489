#!/bin/bash
# Integration: the guest userland the kernel's own tests need (issue 46), on
# 2node under TCG: the kernel's config at /boot/config-RELEASE, nobody and
# nogroup, numactl's memhog/migratepages/migspeed, df /, a /tmp tmpfs, and
# the kernel's whole modules tree on demand: opening /dev/loop-control loads
# loop, modprobe ext4 works (the host's tree over 9p, which up mounts once
# its snapshot is saved); then --node-memory 512M boots 2node with 512M
# nodes. Two boots, about two minutes.
#   guestland.sh VNUMA_BINARY [SOURCE_DIR]
set -u
vnuma=$1
src=${2:-$(cd "$(dirname "$0")/../.." && pwd)}
export VNUMA_ACCEL=${VNUMA_ACCEL:-tcg}
# Warm on: the share must not stop up saving its snapshot (QEMU saves no guest with a mounted 9p export).
export VNUMA_WARM_CACHE_MAX=${VNUMA_WARM_CACHE_MAX:-4G}
. "$src/tests/integration/lib.sh"
it_state guestland

t0=$(date +%s.%N)
name=$("$vnuma" up "$src/topologies/2node.xml" --timeout 240 2>"$w/up.err")
rc=$?
echo "# up: exit $rc in $(echo "$(date +%s.%N) - $t0" | bc) s"
check "2node boots" test "$rc" = 0 || { tail -25 "$w/up.err" | sed 's/^/#   /'; finish; exit; }
check "up saved the guest's snapshot, then mounted the modules tree" grep -q "saved.*snapshot" "$w/up.err"
grep -E "saved|modules|agent answered" "$w/up.err" | sed 's/^/#   /'
g() { "$vnuma" exec "$name" -- sh -c "$1"; }
check "the kernel's config is /boot/config-\$(uname -r)" g 'grep -q "^CONFIG_NUMA=y" /boot/config-$(uname -r)'
check "nobody is in /etc/passwd" g 'grep -q "^nobody:x:65534:65534:" /etc/passwd'
check "nogroup is in /etc/group" g 'grep -q "^nogroup:x:65534:" /etc/group'
check "memhog runs" g 'memhog 1m >/dev/null'
check "migratepages moves a process between nodes" g 'sleep 30 & migratepages $! 0 1'
check "migspeed is there" g 'test -x /usr/bin/migspeed'
check "df / works" g 'df / >/dev/null'
check "df / and df /tmp say sizes" g 'df -k / /tmp | awk "NR > 1 && \$2 > 0 { n++ } END { exit n != 2 }"'
check "/tmp is a tmpfs" g 'grep -q " /tmp tmpfs " /proc/mounts'
check "the host's modules tree is mounted over 9p" g 'grep -q " /lib/modules/$(uname -r) 9p " /proc/mounts'
check "LTP's modules.dep is readable before any modprobe" g 'grep -q "/loop.ko:" /lib/modules/$(uname -r)/modules.dep'
check "loop is not loaded at boot" g '! test -e /sys/module/loop'
check "/dev/loop-control is a character device" g 'test -c /dev/loop-control'
check "opening /dev/loop-control loads loop" g 'losetup -f >/dev/null; test -e /sys/module/loop'
check "modprobe ext4 works" g 'modprobe ext4 && grep -q ext4 /proc/filesystems'
check "modprobe of a module not in the initramfs (dummy)" g 'modprobe dummy && test -e /sys/module/dummy'
check "modprobe loop, after loop-control loaded it" g 'modprobe loop'
"$vnuma" down "$name" >/dev/null 2>&1
check "down leaves no QEMU" no_qemu_left

# --node-memory: the same shape with 512M nodes, its fidelity checked on the booted sizes.
t0=$(date +%s.%N)
name=$("$vnuma" up "$src/topologies/2node.xml" --node-memory 512M --timeout 240 2>"$w/up2.err")
rc=$?
echo "# up --node-memory 512M: exit $rc in $(echo "$(date +%s.%N) - $t0" | bc) s"
check "2node --node-memory 512M boots, fidelity ok" test "$rc" = 0
node_mb() { "$vnuma" exec "$name" -- sh -c "awk '/MemTotal/ { print int(\$4 / 1024) }' /sys/devices/system/node/node$1/meminfo"; }
for n in 0 1; do
	mb=$(node_mb $n)
	check "node $n has about 512M ($mb MiB)" test "${mb:-0}" -gt 400 -a "${mb:-0}" -le 512
done
check "the guest dir's topology copy says 512M" grep -q 'memory="512M"' "$VNUMA_STATE_DIR"/guests/"$name"/topology.xml
"$vnuma" down "$name" >/dev/null 2>&1
check "down leaves no QEMU" no_qemu_left
finish
