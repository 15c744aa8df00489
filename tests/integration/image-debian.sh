#!/bin/bash
# Slow (label "slow", not in CI): guest-images/debian-12.json built with
# debootstrap from Debian's archive (needs deb.debian.org; ~6 min here), booted
# on 4node-amd with `vnuma up --image debian-12` under TCG: systemd is PID 1
# on /dev/vda, the agent runs as its service, perf, numastat, trace-cmd,
# stress-ng and java work, the fidelity check passes, down leaves nothing.
#   image-debian.sh VNUMA_BINARY [SOURCE_DIR]
set -u
vnuma=$1
src=${2:-$(cd "$(dirname "$0")/../.." && pwd)}
export VNUMA_ACCEL=${VNUMA_ACCEL:-tcg}
. "$src/tests/integration/lib.sh"
it_state image-debian

t0=$(date +%s)
"$vnuma" image build "$src/guest-images/debian-12.json" >"$w/build.out" 2>"$w/build.err"
rc=$?
echo "# build: $(head -1 "$w/build.out") ($(($(date +%s) - t0)) s)"
check "image build debian-12" test "$rc" = 0 || { sed 's/^/#   /' "$w/build.err" | tail -20; finish; exit; }
check "...a qcow2" sh -c "'$vnuma' image list | grep -q '^debian-12 .*disk .*qcow2'"

name=$("$vnuma" up "$src/topologies/4node-amd.xml" --image debian-12 --timeout 300 2>"$w/up.err")
rc=$?
grep -E "^boot: (agent|fidelity)" "$w/up.err" | sed 's/^/# /'
check "up 4node-amd --image debian-12" test "$rc" = 0 || { sed 's/^/#   /' "$w/up.err" | tail -30; finish; exit; }
x() { "$vnuma" exec "$name" -- "$@" </dev/null; }
check "/ is /dev/vda" sh -c "'$vnuma' exec '$name' -- cat /proc/mounts </dev/null | grep -q '^/dev/vda / ext4'"
check "PID 1 is systemd" test "$(x cat /proc/1/comm)" = systemd
check "the agent is a service" test "$(x systemctl is-active vnuma-agent)" = active
check "perf --version" sh -c "'$vnuma' exec '$name' -- perf --version </dev/null | grep -q '^perf version'"
check "numastat -m shows 4 nodes" sh -c "'$vnuma' exec '$name' -- numastat -m </dev/null 2>/dev/null | grep -q 'Node 3'"
check "trace-cmd" sh -c "'$vnuma' exec '$name' -- trace-cmd --version </dev/null 2>&1 | grep -q 'trace-cmd version'"
check "stress-ng" x stress-ng --version
check "java" x java -version
"$vnuma" down "$name" >/dev/null 2>&1
check "down" test $? = 0
check "no guest dir left" test -z "$(ls -A "$VNUMA_STATE_DIR/guests" 2>/dev/null)"
check "no QEMU left" no_qemu_left
check "no domain left" no_domain_left
finish
