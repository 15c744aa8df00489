# bash completion for vnuma(1): commands, options, shipped topology, scenario
# and kernel recipe names, guest names. The candidates come from
# `vnuma complete`, which reads the same command table as --help and the man page.
_vnuma()
{
	local cur=${COMP_WORDS[COMP_CWORD]} exe=${COMP_WORDS[0]} w
	[[ $exe == "~"* ]] && exe=$HOME${exe:1}
	COMPREPLY=()
	while IFS= read -r w; do
		case $w in
		@files | @dirs)
			compopt -o filenames 2>/dev/null
			local f
			while IFS= read -r f; do
				COMPREPLY+=("$f")
			done < <(compgen "-${w:1:1}" -- "$cur")
			;;
		*) COMPREPLY+=("$w") ;;
		esac
	done < <("$exe" complete "$COMP_CWORD" "${COMP_WORDS[@]}" 2>/dev/null)
}
complete -F _vnuma vnuma
