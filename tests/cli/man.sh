#!/bin/bash
# vnuma(1) is generated from the command table that --help prints: the built
# page equals `vnuma help --man`, covers every command and every option that
# a --help shows, and renders without warnings.
#   man.sh VNUMA_BINARY MAN_PAGE
set -u
vnuma=$1 page=$2
. "$(dirname "$0")/../lib.sh"

check "the built page is 'vnuma help --man'" cmp -s "$page" <("$vnuma" help --man)
check ".TH header" grep -q '^\.TH VNUMA 1 ' "$page"
for s in NAME SYNOPSIS DESCRIPTION COMMANDS 'EXIT STATUS' ENVIRONMENT FILES; do
	check "section $s" grep -qx "\.SH $s" "$page"
done
cmds=$("$vnuma" --help | sed -n 's/^  \([a-z]\+\)  .*/\1/p')
check "--help lists commands" test "$(wc -w <<<"$cmds")" -ge 10
for c in $cmds; do
	check "man: .SS $c" grep -qx "\.SS $c" "$page"
	# Every long option the command's --help shows is in its section (roff: \-\-name).
	sect=$(awk -v c=".SS $c" '$0 == c { on = 1; next } /^\.S[SH] / { on = 0 } on' "$page")
	for o in $("$vnuma" $c --help | grep -o -- '--[a-z][a-z-]*' | grep -vx -- --help | sort -u); do
		check "man: $c $o" grep -qF -- "$(sed 's/-/\\-/g' <<<"$o")" <<<"$sect"
	done
done
# cp's copy-out policy: the option records say the same in --help and the page.
cpsect=$(awk '$0 == ".SS cp" { on = 1; next } /^\.S[SH] / { on = 0 } on' "$page")
for o in --preserve-mode --max-bytes --max-files; do
	check "cp --help has $o" sh -c "'$vnuma' cp --help | grep -q -- '$o'"
	check "man: cp $o" grep -qF -- "$(sed 's/-/\\-/g' <<<"$o")" <<<"$cpsect"
done
check "cp --help says the umask applies" sh -c "'$vnuma' cp --help | grep -q umask"
check "subcommands get their own entry" sh -c "grep -qx '.B topo fallback' '$page' && grep -qx '.B kernel build' '$page'"
check "the hidden completion helper is not documented" sh -c "! grep -q '^\.SS complete' '$page'"
check "help CMD is CMD --help" cmp -s <("$vnuma" help run) <("$vnuma" run --help)
check "help of an unknown command exits 2" sh -c "'$vnuma' help frobnicate 2>/dev/null; [ \$? = 2 ]"
if command -v groff >/dev/null; then
	warn=$(groff -man -Tutf8 -ww -z "$page" 2>&1)
	check "groff renders it without warnings${warn:+: $warn}" test -z "$warn"
	check "rendered text has the up command's options" sh -c "groff -man -Tutf8 '$page' 2>/dev/null | sed 's/\x1b\[[0-9;]*m//g; s/.\x08//g' | grep -q -- '--kernel-model'"
else
	echo "# groff not installed: rendering not checked"
fi
finish
