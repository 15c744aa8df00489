#!/bin/bash
# Bash completion, driven the way bash drives it: the completion file is
# sourced, `complete -p vnuma` must name its function, and the function is
# called with COMP_WORDS/COMP_CWORD set; COMPREPLY is what a user would see.
#   completion.sh VNUMA_BINARY COMPLETION_FILE SOURCE_DIR
set -u
vnuma=$1 file=$2 src=$3
tmp=$(mktemp -d /tmp/vn-compl.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
. "$(dirname "$0")/../lib.sh"
# `vnuma` on PATH, as installed.
mkdir "$tmp/bin" && ln -s "$(readlink -f "$vnuma")" "$tmp/bin/vnuma"
export PATH=$tmp/bin:$PATH
export VNUMA_STATE_DIR=$tmp/empty-state # the default one may hold real guests

# shellcheck source=/dev/null
. "$file"
check "complete -p names _vnuma" sh -c "[ \"\$(bash -c '. \"$file\"; complete -p vnuma')\" = 'complete -F _vnuma vnuma' ]"

# comp WORD... : complete the last word; prints COMPREPLY one per line.
comp() {
	COMP_WORDS=("$@")
	COMP_CWORD=$((${#COMP_WORDS[@]} - 1))
	COMP_LINE="$*"
	COMP_POINT=${#COMP_LINE}
	COMPREPLY=()
	_vnuma vnuma "${COMP_WORDS[COMP_CWORD]}" "${COMP_WORDS[COMP_CWORD - 1]}"
	printf '%s\n' "${COMPREPLY[@]}"
}
has() { # WORD COMPLETION-ARGS...
	local w=$1
	shift
	comp "$@" | grep -qxF -- "$w"
}
not() { ! "$@"; }
is() { # EXPECTED(newline-separated) COMPLETION-ARGS...
	local want=$1
	shift
	[ "$(comp "$@" | sort)" = "$(sort <<<"$want")" ]
}

check "commands" is "$(printf '%s\n' bisect cache collect compare cp debug doctor down dump exec help hosts hotplug image kernel list report run scenario shell status topo up)" vnuma ''
check "command prefix" is "$(printf '%s\n' status scenario shell)" vnuma s
check "the hidden helper is not offered" not has complete vnuma c
check "up options" is "$(printf '%s\n' --kernel --kernel-model)" vnuma up --ke
check "up --help" has --help vnuma up --
check "up: shipped topology names" is "$(printf '%s\n' 8node-3level 8node-amd-2socket 8node-snc 8node-snc-cxl)" vnuma up 8
for k in stock minimal-numa fallback-revert; do
	check "up --kernel: $k" has $k vnuma up --kernel ''
done
check "up --kernel-model: model names" is "$(printf '%s\n' 5.15 5.18)" vnuma up 2node --kernel-model 5
check "run: shipped scenario names" is "$(printf '%s\n' memfollow-2node memfollow-balancing-2node memfollow-trace-2node multi-instance-2node multi-instance-2node-kernels multi-instance-4node multi-instance-4node-kernels)" vnuma run m
check "run options" has --quick vnuma run --q
check "topo subcommands" is "$(printf '%s\n' demotion fallback random show validate)" vnuma topo ''
check "topo demotion options" is "$(printf '%s\n' --json)" vnuma topo demotion 4node-cxl --j
check "topo fallback options" is "$(printf '%s\n' --cpus-visible)" vnuma topo fallback 4node-amd --c
check "topo validate: topology names" has 4node-cxl vnuma topo validate 4node-amd 4
check "kernel subcommands" is "$(printf '%s\n' build list selftests)" vnuma kernel ''
check "image subcommands" is "$(printf '%s\n' build extract inject list)" vnuma image ''
check "cache subcommands" is "$(printf '%s\n' list prune)" vnuma cache ''
check "kernel build: recipe names" has minimal-numa vnuma kernel build m
check "help: command names" has collect vnuma help co
check "hosts subcommands" is "check" vnuma hosts ''
check "cp options: the copy-out policy's and limits" is "$(printf '%s\n' --max-bytes --max-files)" vnuma cp --max
check "cp --preserve-mode" has --preserve-mode vnuma cp --pre
check "hosts check options" is "$(printf '%s\n' --hosts)" vnuma hosts check --hos

# File names still complete where a file is allowed.
cd "$src" || exit 1
check "up: a path completes as a file name" has topologies/2node.xml vnuma up topologies/2n
check "collect -o: directories" has "$src/tests" vnuma collect g -o "$src/te"
check "report: DIR completes as a directory" has "$src/tests" vnuma report "$src/te"
check "report options" is "$(printf '%s\n' --output)" vnuma report --o
cd "$tmp" || exit 1
check "no file names for a guest name" is "" vnuma exec x

# Guest names from the state directory.
mkdir -p "$tmp/state/guests/alpha" "$tmp/state/guests/beta" "$tmp/other/guests/gamma"
export VNUMA_STATE_DIR=$tmp/state
check "exec: guest names" is "$(printf '%s\n' alpha beta)" vnuma exec ''
check "down: guest names" is "alpha" vnuma down al
check "status: guest names" has beta vnuma status ''
check "--state-dir on the line wins" is "gamma" vnuma exec --state-dir "$tmp/other" ''
check "exec NAME: then '--'" is "--" vnuma exec alpha ''
check "after '--' nothing is offered" is "" vnuma exec alpha -- n
no_state_dir() {
	VNUMA_STATE_DIR=$tmp/none comp vnuma exec '' >/dev/null
	[ ! -e "$tmp/none" ]
}
check "completion creates no state dir" no_state_dir
check "an unknown command offers nothing" is "" vnuma frobnicate ''

finish
