#!/bin/bash
# report.html as a browser draws it: vnuma report on the fixtures
# (tests/fixtures/report/: a run, a group, a locality run), each page
# rendered headless by Chromium to a PNG that must be non-trivial, and every
# <svg> measured in the browser, which must give it a size and a drawn shape. Skips (77) without Chromium.
# VN_REPORT_RUN / VN_REPORT_GROUP: draw these real result dirs instead of the
# fixtures (the matrix test does), with "at least" in place of exact counts.
#   report-browser.sh VNUMA SOURCE_DIR
set -u
vnuma=$1
src=$2
VN_TEST_VERBOSE=1
. "$src/tests/lib.sh"

chromium=$(command -v chromium || command -v chromium-browser || command -v google-chrome || true)
if [ -z "$chromium" ]; then
	echo "SKIP: no chromium installed (Debian: apt-get install chromium; scripts/setup.sh installs it)"
	exit 77
fi

tmp=$(mktemp -d /tmp/vn-report-browser.XXXXXX)
# Chromium forks a zygote and helpers; each browser runs in a session of its own and the whole session goes at exit.
sessions=()
cleanup() {
	for s in "${sessions[@]}"; do
		kill -KILL -- "-$s" 2>/dev/null
	done
	rm -rf "$tmp"
}
trap cleanup EXIT

# browser OUT ARGS...: headless Chromium, its stdout into OUT, at most 25 s.
browser() {
	local out=$1
	shift
	setsid timeout -k 2 25 "$chromium" --headless --no-sandbox --disable-gpu --hide-scrollbars \
		--user-data-dir="$tmp/profile" --no-first-run --disable-extensions "$@" >"$out" 2>>"$tmp/chromium.log" &
	local pid=$!
	sessions+=("$pid")
	wait "$pid"
}

declare -A dirs=([run]=${VN_REPORT_RUN:-$src/tests/fixtures/report/run}
	[group]=${VN_REPORT_GROUP:-$src/tests/fixtures/report/group}
	[locality]=$src/tests/fixtures/report/locality)
real=${VN_REPORT_RUN:+yes}
for page in run group locality; do
	"$vnuma" report "${dirs[$page]}" -o "$tmp/$page.html" 2>"$tmp/err"
	status=$?
	check "vnuma report on the $page fixture exits 0 ($(cat "$tmp/err"))" [ "$status" = 0 ]
done
mkdir "$tmp/empty"
check "vnuma report on a directory that is neither exits 2" [ "$(rc "$vnuma" report "$tmp/empty")" = 2 ]

# A PNG at least 40 kB at the window's size: a blank page of this size is ~16 kB.
png_ok() {
	local f=$1 w=$2 h=$3
	[ -s "$f" ] || return 1
	[ "$(head -c 8 "$f" | od -An -tx1 | tr -d ' \n')" = 89504e470d0a1a0a ] || return 1
	[ "$(stat -c %s "$f")" -gt 40000 ] || return 1
	[ "$(od -An -tu1 -j16 -N8 "$f" | awk '{print $1*16777216+$2*65536+$3*256+$4 "x" $5*16777216+$6*65536+$7*256+$8}')" = "${w}x$h" ]
}
for page in run group locality; do
	browser "$tmp/$page.shot.log" --window-size=1400,2600 --screenshot="$tmp/$page.png" "file://$tmp/$page.html"
	check "$page page rendered to a non-trivial 1400x2600 PNG ($(stat -c %s "$tmp/$page.png" 2>/dev/null) bytes)" \
		png_ok "$tmp/$page.png" 1400 2600
done
[ -n "${VN_REPORT_PNG_DIR:-}" ] && cp "$tmp"/*.png "$VN_REPORT_PNG_DIR"/

# The test's own page (not part of any report): both reports in iframes, every svg measured once they loaded.
cat >"$tmp/measure.html" <<'EOF'
<!DOCTYPE html><html><body>
<iframe id="run" src="run.html" style="width:1400px;height:3000px"></iframe>
<iframe id="group" src="group.html" style="width:1400px;height:3000px"></iframe>
<iframe id="locality" src="locality.html" style="width:1400px;height:3000px"></iframe>
<pre id="out">pending</pre>
<script>
var left = 3, lines = [];
function measure(f) {
	var d = f.contentDocument, svgs = d.querySelectorAll("svg");
	for (var i = 0; i < svgs.length; i++) {
		var r = svgs[i].getBoundingClientRect(), drawn = 0;
		var shapes = svgs[i].querySelectorAll("polyline, polygon, rect, circle, line");
		for (var j = 0; j < shapes.length; j++) {
			var b = shapes[j].getBBox();
			if (b.width > 0 || b.height > 0)
				drawn++;
		}
		lines.push("SVG " + f.id + " " + svgs[i].getAttribute("class") + " " + Math.round(r.width) + " " +
			   Math.round(r.height) + " " + drawn);
	}
	lines.push("SCRIPTS " + f.id + " " + d.querySelectorAll("script").length);
	if (--left === 0)
		document.getElementById("out").textContent = "\n" + lines.join("\n") + "\nDONE";
}
document.getElementById("run").onload = function () { measure(this); };
document.getElementById("group").onload = function () { measure(this); };
document.getElementById("locality").onload = function () { measure(this); };
</script></body></html>
EOF
# --allow-file-access-from-files: file:// pages are each their own origin otherwise, and the iframes would be closed.
browser "$tmp/dom.html" --allow-file-access-from-files --virtual-time-budget=10000 --dump-dom "file://$tmp/measure.html"
grep '^SVG \|^SCRIPTS ' "$tmp/dom.html" >"$tmp/svgs"
check "the measuring page finished" grep -q '^DONE' "$tmp/dom.html"
count() { grep -c "^SVG $1 $2 " "$tmp/svgs"; }
if [ -n "$real" ]; then
	# The distances, and the accesses too when the scenario counts locality (memfollow-balancing-2node does).
	n=$(count run heatmap)
	check "run page: 1 or 2 heatmaps ($n)" [ "$n" -ge 1 -a "$n" -le 2 ]
	# A real run of 2 workload processes: memory of all and of each, counters, running threads.
	check "run page: at least 5 charts ($(count run chart))" [ "$(count run chart)" -ge 5 ]
	check "group page: strip charts ($(count group strip))" [ "$(count group strip)" -ge 1 ]
else
	check "run page: 1 heatmap ($(count run heatmap))" [ "$(count run heatmap)" = 1 ]
	check "run page: 6 charts ($(count run chart))" [ "$(count run chart)" = 6 ]
	check "group page: 4 strip charts ($(count group strip))" [ "$(count group strip)" = 4 ]
fi
# A locality run: the access heatmap beside the distances, the remote fraction beside memory per node.
check "locality page: 2 heatmaps ($(count locality heatmap))" [ "$(count locality heatmap)" = 2 ]
check "locality page: 7 charts ($(count locality chart))" [ "$(count locality chart)" = 7 ]
check "every svg has a size and a drawn shape" \
	[ "$(awk '$1 == "SVG" && ($4 < 100 || $5 < 100 || $6 < 1)' "$tmp/svgs" | wc -l)" = 0 -a -s "$tmp/svgs" ]
check "no script in any page" [ "$(grep -c '^SCRIPTS .* 0$' "$tmp/svgs")" = 3 ]
[ "${VN_TEST_VERBOSE:-0}" = 1 ] && sed 's/^/  /' "$tmp/svgs"
finish
