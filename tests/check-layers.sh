#!/bin/bash
# The layer graph as the code has it, against docs/ARCHITECTURE.md's table.
# Edges come from `#include "LAYER/..."` in src/LAYER/, from the CMake
# targets each src/LAYER/CMakeLists.txt links or compiles, and, given a build
# dir, from the calls: a symbol an object of BUILD/src/LAYER/ leaves undefined
# (nm) that only another layer's objects define. A header included through
# another header makes no include edge of its own, so a call is all that shows
# it. Fails when an edge climbs up the table (a layer may use only layers
# listed before it), and when a row's "uses" column names other layers than
# the code uses.
#   check-layers.sh [SOURCE_DIR [BUILD_DIR]]
set -u
src=${1:-$(cd "$(dirname "$0")/.." && pwd)}
bin=${2:-}
doc=$src/docs/ARCHITECTURE.md
fail=0
bad() { echo "FAIL - $*"; fail=$((fail + 1)); }

# The table: | `layer` | owns | uses |, bottom layer first.
mapfile -t layers < <(sed -n 's/^| `\([a-z]*\)` |.*/\1/p' "$doc")
declare -A rank declared
for i in "${!layers[@]}"; do
	rank[${layers[$i]}]=$i
	uses=$(grep "^| \`${layers[$i]}\` |" "$doc" | awk -F'|' '{print $(NF-1)}' | tr -d '`' | tr ',' ' ')
	declared[${layers[$i]}]=$(for u in $uses; do [ -n "${rank[$u]+x}" ] && [ "$u" != "${layers[$i]}" ] && echo "$u"; done | sort -u | tr '\n' ' ')
done

for d in "$src"/src/*/; do
	l=$(basename "$d")
	[ -n "${rank[$l]+x}" ] || bad "src/$l has no row in docs/ARCHITECTURE.md"
done
for l in "${layers[@]}"; do
	[ -d "$src/src/$l" ] || bad "docs/ARCHITECTURE.md has a row for $l, but there is no src/$l"
done

# Which layer defines each CMake target.
declare -A owner
for l in "${layers[@]}"; do
	f=$src/src/$l/CMakeLists.txt
	[ -f "$f" ] || continue
	for t in $(sed -n 's/^[[:space:]]*add_\(library\|executable\)(\([A-Za-z0-9_-]*\).*/\2/p' "$f"); do
		owner[$t]=$l
	done
done

# The calls: every object CMake built for a layer (BUILD/src/LAYER/CMakeFiles/TARGET.dir/...),
# the symbols it defines and those it leaves for others. An object whose source is gone is stale, not the layer.
declare -A calls
if [ -n "$bin" ]; then
	objs=()
	while IFS= read -r o; do
		rel=${o#"$bin"/src/}
		l=${rel%%/*}
		s=${rel#*/CMakeFiles/*.dir/}
		s=${s%.o}
		[ -n "${rank[$l]+x}" ] && [ -f "$src/src/$l/${s//__\//../}" ] && objs+=("$o")
	done < <(find "$bin/src" -path '*/CMakeFiles/*.dir/*' -name '*.o' 2>/dev/null | sort)
	if [ ${#objs[@]} = 0 ]; then
		bad "no object files under $bin/src: build first (the calls are read from them)"
	else
		# nm -A: "FILE: ADDR T SYM" for a definition, "FILE: U SYM" for a use; FILE's layer is its path under BUILD/src.
		while read -r l u; do
			[ -n "${rank[$u]+x}" ] && calls[$l]+=" $u"
		done < <(nm -A -g "${objs[@]}" 2>/dev/null | awk -v pre="$bin/src/" '
			{ f = substr($1, length(pre) + 1); sub(/\/.*/, "", f); sym = $NF; t = $(NF-1) }
			t == "U" || t == "w" { use[f, sym] = 1; next }
			{ def[sym] = def[sym] " " f; mine[f, sym] = 1 }
			END {
				for (k in use) {
					split(k, p, SUBSEP)
					if ((p[1], p[2]) in mine || !(p[2] in def)) continue
					n = split(def[p[2]], d, " ")
					for (i = 1; i <= n; i++) print p[1], d[i]
				}
			}' | sort -u)
	fi
fi

edges=0
for l in "${layers[@]}"; do
	[ -d "$src/src/$l" ] || continue
	inc=$(grep -rhoE '^#include "[a-z]+/' "$src/src/$l" --include='*.c' --include='*.h' | sed 's/#include "//;s:/$::')
	# Links of the layer's own targets (tests registered there are not the layer), and sources borrowed from other folders.
	f=$src/src/$l/CMakeLists.txt
	lnk=""
	if [ -f "$f" ]; then
		lnk=$(awk '/^[[:space:]]*target_link_libraries\(/ {sub(/^[[:space:]]*target_link_libraries\(/, ""); print}' "$f" |
			while read -r tgt rest; do
				[ "${owner[$tgt]:-}" = "$l" ] || continue
				for w in $rest; do w=${w%)}; [ -n "${owner[$w]:-}" ] && echo "${owner[$w]}"; done
			done)
		lnk="$lnk $(grep -v '^[[:space:]]*#' "$f" | grep -oE '\$\{CMAKE_SOURCE_DIR\}/src/[a-z]+/' | sed 's:.*/src/::;s:/$::')"
	fi
	used=$(for u in $inc $lnk ${calls[$l]:-}; do [ -n "${rank[$u]+x}" ] && [ "$u" != "$l" ] && echo "$u"; done | sort -u | tr '\n' ' ')
	for u in $used; do
		edges=$((edges + 1))
		[ "${rank[$u]}" -lt "${rank[$l]}" ] || bad "$l uses $u, which sits above it in the table (an edge that climbs up)"
	done
	[ "$used" = "${declared[$l]}" ] || bad "$l: the table says it uses '${declared[$l]% }', the code uses '${used% }'"
done
echo "layers: ${#layers[@]}, edges: $edges"
echo "$((${#layers[@]} - fail < 0 ? 0 : ${#layers[@]} - fail)) passed, $fail failed"
[ "$fail" = 0 ]
