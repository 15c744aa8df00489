#!/bin/bash
# Integration: a guest that prints escape sequences and invalid UTF-8, under
# TCG. The guest is untrusted: whatever its console, its kernel log or its
# agent's error strings hold, vnuma's own messages (stderr) carry no ESC or
# BEL byte and are valid UTF-8, and junit.xml and result.json parse
# (xmllint --noout, Python's json.load). What a command writes to its own
# stdout under `exec` stays raw, as ssh and docker exec leave it.
#   1. `up`; `exec` of a command that prints the bytes: its stdout keeps them
#   2. `exec` of a command the agent cannot start, named with them: the
#      agent's error string carries them back (exit 2)
#   3. `exec` of a command that writes a forged "Kernel panic - not syncing:"
#      line with them to /dev/console: the watch ends it (exit 3), the line
#      and the console tail in the message
#   4. `run` of a scenario whose step writes them to /dev/kmsg and the same
#      forged line to /dev/console: exit 3, the result incomplete with that
#      line as its error, junit.xml and result.json well-formed
# Two boots, about a minute on 2 cores.
#   hostile-text.sh VNUMA_BINARY [SOURCE_DIR]
set -u
vnuma=$1
src=${2:-$(cd "$(dirname "$0")/../.." && pwd)}
export VNUMA_ACCEL=${VNUMA_ACCEL:-tcg}
. "$src/tests/integration/lib.sh"
it_state hostile
show() { sed 's/^/#   /' "$1" | LC_ALL=C tr -d '\033\007' | head -40; }
# The bytes: OSC (window title) ended by BEL, CSI clear screen, C1 CSI, 0xff, an overlong '/', a surrogate.
hostile='\033]0;PWNED\007\033[2J\302\233\377\300\257\355\240\200'
# no_escapes FILE: no ESC or BEL byte in it, and valid UTF-8.
no_escapes() {
	[ "$(LC_ALL=C tr -d -c '\033\007' <"$1" | wc -c)" = 0 ] &&
		python3 -c 'import sys; open(sys.argv[1], "rb").read().decode("utf-8")' "$1"
}
json_ok() { python3 -c 'import json, sys; json.load(open(sys.argv[1]))' "$1"; }

name=$("$vnuma" up "$src/topologies/2node.xml" --timeout 180 2>"$w/up.err")
rc=$?
check "up 2node" test "$rc" = 0
if [ "$rc" != 0 ]; then
	show "$w/up.err"
	finish
	exit
fi

# 1. The command's own stdout is the user's stream: raw.
"$vnuma" exec "$name" -- sh -c "printf '$hostile\n'" >"$w/raw.out" 2>"$w/raw.err"
rc=$?
check "exec printing the bytes: exit 0" test "$rc" = 0
check "...its stdout keeps them raw" sh -c "[ \"\$(LC_ALL=C tr -d -c '\033\007\377' <'$w/raw.out' | wc -c)\" = 4 ]"

# 2. The agent's error string: the command name it could not start.
"$vnuma" exec "$name" -- "$(printf "$hostile")" >"$w/noexec.out" 2>"$w/noexec.err"
rc=$?
echo "# exec of a command named with the bytes: exit $rc"
show "$w/noexec.err"
check "exec of a command that cannot start: exit 2" test "$rc" = 2
check "...the agent's error in the message" grep -q "PWNED" "$w/noexec.err"
check "...with no ESC or BEL byte, as UTF-8" no_escapes "$w/noexec.err"

# 3. A forged panic line on the console, under exec.
"$vnuma" exec "$name" -- sh -c \
	"printf '<1>vnuma-hostile: $hostile\n' >/dev/kmsg; printf 'Kernel panic - not syncing: $hostile\n' >/dev/console; sleep 600" \
	>"$w/panic.out" 2>"$w/panic.err"
rc=$?
echo "# exec, a forged panic line: exit $rc"
show "$w/panic.err"
check "exec, a forged panic line: exit 3" test "$rc" = 3
check "...naming the cause and the line" grep -q "guest $name panicked (console: \"Kernel panic - not syncing: ?]0;PWNED" "$w/panic.err"
check "...with the console tail" grep -q -- "--- last lines of the console log ---" "$w/panic.err"
check "...with no ESC or BEL byte, as UTF-8" no_escapes "$w/panic.err"
check "down" test "$(rc "$vnuma" down "$name")" = 0

# 4. The same under run: the reports CI ingests. In JSON each backslash of $hostile is doubled.
jhostile=$(printf '%s' "$hostile" | sed 's/\\/\\\\/g')
cat >"$w/hostile.json" <<EOF
{
  "name": "hostile",
  "topology": "$src/topologies/2node.xml",
  "timeout_s": 600,
  "steps": [{"name": "print", "workload": "cmd", "command": ["sh", "-c",
    "sleep 2; printf '<1>vnuma-hostile: $jhostile\\\\n' >/dev/kmsg; printf 'Kernel panic - not syncing: $jhostile\\\\n' >/dev/console; sleep 600"]}],
  "assertions": [{"type": "distances"}]
}
EOF
"$vnuma" run "$w/hostile.json" -o "$w/hostile" >"$w/run.out" 2>"$w/run.err"
rc=$?
echo "# run, a forged panic line: exit $rc"
show "$w/run.err"
check "run, a forged panic line: exit 3" test "$rc" = 3
check "...naming the line" grep -q "panicked (console: \"Kernel panic - not syncing: ?]0;PWNED" "$w/run.err"
check "...stderr with no ESC or BEL byte, as UTF-8" no_escapes "$w/run.err"
check "...stdout too" no_escapes "$w/run.out"
check "...the console log kept the bytes (the guest's own record)" \
	sh -c "[ \"\$(LC_ALL=C tr -d -c '\033\007' <'$w/hostile/console.log' | wc -c)\" -gt 0 ]"
check "...junit.xml is well-formed XML" xmllint --noout "$w/hostile/junit.xml"
check "...junit.xml holds no ESC or BEL byte" no_escapes "$w/hostile/junit.xml"
check "...and names the line" grep -q "PWNED" "$w/hostile/junit.xml"
check "...result.json loads in Python" json_ok "$w/hostile/result.json"
check "...result.json holds no ESC or BEL byte" no_escapes "$w/hostile/result.json"
check "...and says incomplete, with the line as why" python3 -c '
import json, sys
r = json.load(open(sys.argv[1]))
sys.exit(not (r["complete"] is False and "PWNED" in r["error"] and not any(c in r["error"] for c in "\x1b\x07\x9b")))' \
	"$w/hostile/result.json"
check "...no QEMU left" no_qemu_left
check "...no domain left" no_domain_left

finish
