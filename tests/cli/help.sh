#!/bin/bash
# --help and -h of every command and subcommand: exit 0 with the usage on
# stdout, nothing else run (issue 45: `vnuma bisect --help` went on to load
# a scenario named NULL and died of SIGSEGV). The commands are what
# `vnuma --help` lists, the subcommands what each group's help names, so a
# new one is covered without editing this file.
#   help.sh VNUMA_BINARY SOURCE_DIR
set -u
vnuma=$1
tmp=$(mktemp -d /tmp/vn-help.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
. "$(dirname "$0")/../lib.sh"
export VNUMA_STATE_DIR=$tmp/state # --help must not need one; nothing may be made in a real one

cmds=$("$vnuma" --help | awk '/^commands:/ { on = 1; next } on && /^  [a-z]/ { print $1 } on && /^$/ { on = 0 }')
check "vnuma --help lists commands" test "$(wc -w <<<"$cmds")" -ge 15
check "...bisect among them" grep -qx bisect <<<"$cmds"
for c in $cmds; do
	subs=$("$vnuma" "$c" --help 2>/dev/null | sed -n "s/^$c \([a-z-]*\): .*/\1/p")
	for cmd in "$c" $(for s in $subs; do echo "$c:$s"; done); do
		for h in --help -h; do
			# shellcheck disable=SC2086 # "group:sub" becomes two words
			"$vnuma" ${cmd/:/ } $h >"$tmp/out" 2>"$tmp/err"
			rc=$?
			check "${cmd/:/ } $h exits 0" test "$rc" = 0 || cat "$tmp/err"
			# A subcommand's help is its group's, every subcommand's usage in it.
			check "...prints its usage" grep -Eq "^(usage:)? *vnuma ${cmd/:/ }( |\$)" "$tmp/out"
		done
	done
done
check "subcommands were found (kernel build, topo validate, ...)" \
	sh -c "'$vnuma' kernel --help | grep -q '^kernel build: ' && '$vnuma' topo --help | grep -q '^topo validate: '"
check "no state dir was made" test ! -e "$tmp/state"
finish
