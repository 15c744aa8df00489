#!/bin/bash
# Integration: `vnuma hosts check` and artifact uploads (issue 15), against a
# private session libvirtd on 127.0.0.1 (libvirtd.sh), the embedded driver,
# a URI nothing listens on and one that accepts and never answers. No guest
# boots; ~35 s, most of it the embedded driver's first capability probe.
#   hosts.sh VNUMA_BINARY SOURCE_DIR TEST_VIRT_UPLOAD_BINARY
set -u
vnuma=$1
src=${2:-$(cd "$(dirname "$0")/../.." && pwd)}
upload=${3:-$(dirname "$vnuma")/tests/unit/test-virt-upload}
. "$src/tests/integration/lib.sh"
. "$src/tests/integration/libvirtd.sh"
it_state hosts
if ! it_libvirtd_start; then
	check "the private libvirtd starts" false
	finish
	exit
fi
uri=$IT_LIBVIRTD_URI
pool=$IT_LIBVIRTD_POOL
dead="qemu+tcp://127.0.0.1:$(it_free_port)/session"
embed="qemu:///embed?root=$VNUMA_STATE_DIR/embed"
# The row of a host in a table, with the line under it (where a row says why it failed).
row() { grep -A1 -F "$1 " "$2"; }

# A session URI has no default pool dir: the row says to add pool=, and nothing is created.
"$vnuma" hosts check --connect "$uri" >"$w/check0" 2>&1
check "a session URI without pool= is exit 3" test "$?" = 3
check "... and its row says to add pool=DIR" grep -q 'add pool=DIR' "$w/check0"
check "... and no pool was defined" sh -c "! virsh -c '$uri' pool-info vnuma >/dev/null 2>&1"

printf '# the private daemon, the embedded driver, and nobody\n%s 2 pool=%s\n%s   # local\n%s\n' \
	"$uri" "$pool" "$embed" "$dead" >"$w/hosts"
"$vnuma" hosts check --hosts "$w/hosts" --no-probe >"$w/check1" 2>&1
check "one host unreachable: exit 3" test "$?" = 3
cat "$w/check1"
check "the daemon's row is ok, capacity 2 as configured" sh -c "grep -F '$uri ' '$w/check1' | grep -Eq ' ok .* 2 +no '"
check "... with its versions" sh -c "grep -F '$uri ' '$w/check1' | grep -Eq ' [0-9]+\.[0-9]+\.[0-9]+ +[0-9]+\.[0-9]+\.[0-9]+ '"
check "... and its pool created at pool=" sh -c "grep -F '$uri ' '$w/check1' | grep -qF 'created $pool ('"
check "the embedded driver's row is ok, with local files" sh -c "grep -F '$embed ' '$w/check1' | grep ' ok ' | grep -q 'local files'"
check "... its root set up as vnuma's own (QEMU can read it, no virtlogd)" grep -q '^stdio_handler = "file"' "$VNUMA_STATE_DIR/embed/etc/qemu.conf"
check "the dead URI's row says unreachable and why" sh -c "grep -A1 -F '$dead ' '$w/check1' | grep -q 'unreachable: .*Connection refused'"
check "the pool exists on the daemon, autostarted" sh -c "virsh -c '$uri' pool-info vnuma | grep -Eq 'Autostart: +yes'"
check "the pool dir is the one given" test -d "$pool"

# A host that accepts and never answers: a listener on 127.0.0.1 only, which stops by itself after 60 s.
python3 -c '
import socket, sys, time
s = socket.socket()
s.bind(("127.0.0.1", 0))
s.listen(16)
s.settimeout(0.5)
print(s.getsockname()[1], flush=True)
held, end = [], time.time() + 60
while time.time() < end:
    try:
        held.append(s.accept()[0])
    except socket.timeout:
        pass
' >"$w/silent.port" &
silent_pid=$!
for _ in $(seq 50); do [ -s "$w/silent.port" ] && break; sleep 0.1; done
silent="qemu+tcp://127.0.0.1:$(cat "$w/silent.port")/system"
printf '%s timeout=2\n' "$silent" >"$w/hosts-silent"
t0=$(date +%s%N)
timeout 30 "$vnuma" hosts check --hosts "$w/hosts-silent" --no-probe >"$w/check-silent" 2>&1
rc=$? ms=$((($(date +%s%N) - t0) / 1000000))
cat "$w/check-silent"
check "a silent host: exit 3, not a hang" test "$rc" = 3
check "... in bounded time (${ms} ms, timeout=2)" test "$ms" -lt 10000
check "... its row unreachable, saying it did not answer" sh -c "grep -A1 -F '$silent ' '$w/check-silent' | grep -q 'unreachable: .*no answer within 2.0 s'"
# A hang here must fail the check, not the test run: a guard kills it after 20 s.
guard() { (sleep 20; kill -KILL "$1") >/dev/null 2>&1 & }
"$vnuma" hosts check --connect "$silent" --no-probe >"$w/check-term" 2>&1 &
p=$!
guard "$p"
g=$!
sleep 1
t0=$(date +%s%N)
kill -TERM "$p"
wait "$p"
rc=$? ms=$((($(date +%s%N) - t0) / 1000000))
kill "$g" 2>/dev/null
check "SIGTERM while a silent host is checked: exit 3" test "$rc" = 3
check "... within 2 s (${ms} ms)" test "$ms" -lt 2000
check "... saying so" grep -q 'interrupted while checking' "$w/check-term"
printf '%s timeout=5s\n' "$silent" >"$w/hosts-bad"
"$vnuma" hosts check --hosts "$w/hosts-bad" >"$w/check-bad" 2>&1
check "a bad timeout= is exit 2" test "$?" = 2
check "... naming the file, the line and the value" grep -qF "$w/hosts-bad:1: bad timeout= '5s'" "$w/check-bad"
kill "$silent_pid" 2>/dev/null
wait "$silent_pid" 2>/dev/null

"$vnuma" hosts check --connect "$uri" --json >"$w/check2.json" 2>&1
check "the daemon alone: exit 0" test "$?" = 0
check "... the pool reused the second time" grep -q '"state":"reused"' "$w/check2.json"
check "... auto capacity for 1 vCPU, 512M: the host's CPUs" grep -q "\"capacity\":$(nproc)," "$w/check2.json"
check "... its accelerator proven by a probe boot there" sh -c "tr -d ' \n' <'$w/check2.json' | grep -Eq '\"accel\":\"(tcg|kvm)\",\"accel_reason\":\"[^\"]+'"
check "... and the probe left no guest there" test -z "$(virsh -c "$uri" list --all --name | tr -d '\n')"
check "... nor its console stream's log" sh -c "! ls '$VNUMA_STATE_DIR'/guests/vnuma-accel-probe-* >/dev/null 2>&1"

# Uploads: content-named, once, complete only with the .done marker.
head -c 3000000 /dev/urandom >"$w/initramfs-test.cpio.gz"
hex=$(sha256sum "$w/initramfs-test.cpio.gz" | cut -d' ' -f1)
vol=$pool/$hex.cpio.gz
up() { "$upload" "$uri" "$VNUMA_STATE_DIR" "$pool" "$1" 2>&1 | tail -n 1; }
check "the first upload sends it" test "$(up "$w/initramfs-test.cpio.gz")" = "uploaded $vol"
check "... its content is the file's" cmp -s "$w/initramfs-test.cpio.gz" "$vol"
check "... and its marker exists" test -e "$vol.done"
check "the second upload reuses it" test "$(up "$w/initramfs-test.cpio.gz")" = "reused $vol"

# An upload cut short leaves a volume without its marker: never reused.
virsh -c "$uri" vol-delete --pool vnuma "$hex.cpio.gz.done" >/dev/null 2>&1
virsh -c "$uri" vol-delete --pool vnuma "$hex.cpio.gz" >/dev/null 2>&1
virsh -c "$uri" vol-create-as vnuma "$hex.cpio.gz" 3000000 --format raw >/dev/null 2>&1
check "a half upload (zeros, no marker) is in place" sh -c "test -e '$vol' && ! cmp -s '$w/initramfs-test.cpio.gz' '$vol'"
check "an unmarked volume is uploaded again" test "$(up "$w/initramfs-test.cpio.gz")" = "uploaded $vol"
check "... and is whole now" cmp -s "$w/initramfs-test.cpio.gz" "$vol"
check "... with its marker" test -e "$vol.done"

# A remote guest's disk: a qcow2 overlay volume over an uploaded image, replaced when left over, deleted.
qemu-img create -q -f qcow2 "$w/tiny.qcow2" 16M
ivol=$pool/$(sha256sum "$w/tiny.qcow2" | cut -d' ' -f1).qcow2
ov() { "$upload" "$uri" "$VNUMA_STATE_DIR" "$pool" "$w/tiny.qcow2" "$@" 2>&1 | tail -n 1; }
check "an overlay volume over the uploaded image" test "$(ov g1-root.qcow2)" = "overlay $pool/g1-root.qcow2"
check "... backed by it" sh -c "qemu-img info -U '$pool/g1-root.qcow2' | grep -qx 'backing file: $ivol'"
check "... 64M as asked" sh -c "qemu-img info -U '$pool/g1-root.qcow2' | grep -q '^virtual size: 64 MiB'"
check "a leftover of that name is replaced" test "$(ov g1-root.qcow2)" = "overlay $pool/g1-root.qcow2"
check "deleting it (twice: gone is fine)" test "$(ov g1-root.qcow2 delete)" = "deleted"
check "... leaves no file" test ! -e "$pool/g1-root.qcow2"

# Two uploads of one file at once (two vnuma processes, one state dir) take turns: one sends, one reuses.
head -c 4000000 /dev/urandom >"$w/pair.qcow2"
pvol=$pool/$(sha256sum "$w/pair.qcow2" | cut -d' ' -f1).qcow2
up "$w/pair.qcow2" >"$w/pair1" &
up "$w/pair.qcow2" >"$w/pair2"
wait $!
check "two uploads at once: one uploaded, one reused" test "$(cat "$w/pair1" "$w/pair2" | cut -d' ' -f1 | sort | tr '\n' ' ')" = "reused uploaded "
check "... and the volume is whole" cmp -s "$w/pair.qcow2" "$pvol"

# Ctrl-C during an upload: the stream aborted, the volume deleted. The uploader stops itself once
# connected; the signal lands while it is stopped, and the daemon is stopped while the upload
# begins, so the uploader sees the signal before its stream, whatever the machine's speed.
head -c 8000000 /dev/urandom >"$w/big.img"
VN_TEST_UPLOAD_STOP=1 "$upload" "$uri" "$VNUMA_STATE_DIR" "$pool" "$w/big.img" >"$w/big" 2>&1 &
p=$!
for _ in $(seq 100); do case $(ps -o stat= -p "$p") in T*) break ;; esac; sleep 0.1; done
kill -STOP "$IT_LIBVIRTD_PID"
kill -INT "$p"
kill -CONT "$p"
sleep 0.2
kill -CONT "$IT_LIBVIRTD_PID"
wait "$p"
check "an interrupted upload is exit 3" test "$?" = 3
check "... saying so" grep -q 'upload of .*big.img interrupted' "$w/big"
check "... and leaves no volume behind" sh -c "! ls '$pool' | grep -q '\.img'"

# Ctrl-C while the daemon does not answer the open: the wait ends at once, whatever libvirt is doing.
kill -STOP "$IT_LIBVIRTD_PID"
"$upload" "$uri" "$VNUMA_STATE_DIR" "$pool" "$w/big.img" >"$w/big2" 2>&1 &
p=$!
guard "$p"
g=$!
sleep 0.5
t0=$(date +%s%N)
kill -INT "$p"
wait "$p"
rc=$? ms=$((($(date +%s%N) - t0) / 1000000))
kill "$g" 2>/dev/null
kill -CONT "$IT_LIBVIRTD_PID"
check "Ctrl-C during an open the daemon does not answer: exit 3" test "$rc" = 3
check "... within 2 s (${ms} ms)" test "$ms" -lt 2000
check "... saying so" grep -q 'interrupted while connecting to' "$w/big2"

pid=$IT_LIBVIRTD_PID
it_libvirtd_stop
check "the daemon is gone" sh -c "! kill -0 $pid 2>/dev/null"
check "no QEMU of the embedded driver's capability probe is left" no_qemu_left
check "no libvirtd dir is left" test ! -e "${IT_LIBVIRTD_POOL%/pool}"
finish
