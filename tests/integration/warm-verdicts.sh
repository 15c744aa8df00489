#!/bin/bash
# Slow (issue 28): a shipped comparison run cold and restored gives the same
# verdicts. memfollow-balancing-2node (seed 000's comparison, with locality
# counting) --quick, REPEATS (default 3) repeats a variant: once with --cold,
# every run booting; once from an empty snapshot cache, the first run
# booting and saving and every later one restoring. Each assertion's verdict
# must be the same both ways, and pass; the restored matrix must have
# restored every run but the first. Prints each headline metric's mean and
# spread both ways, and the two wall times. About 8 min here.
#   warm-verdicts.sh VNUMA_BINARY [SOURCE_DIR] [REPEATS]
set -u
vnuma=$1
src=${2:-$(cd "$(dirname "$0")/../.." && pwd)}
repeats=${3:-3}
export VNUMA_WARM_CACHE_MAX=8G
. "$src/tests/integration/lib.sh"
it_state warm-verdicts

matrix() { # NAME [ARGS...]
	local name=$1 t0 rc
	shift
	t0=$(date +%s)
	"$vnuma" run memfollow-balancing-2node --quick --repeats "$repeats" "$@" -o "$w/$name" >"$w/$name.log" 2>&1
	rc=$?
	echo "# $name: exit $rc, $(($(date +%s) - t0)) s"
	check "$name: the comparison passed (exit 0)" test "$rc" = 0 || tail -12 "$w/$name.log" | sed 's/^/#   /'
}

matrix cold --cold
matrix restored

out=$(python3 - "$w/cold" "$w/restored" "$repeats" <<'PY' 2>&1
import glob, json, os, sys
cold, warm, repeats = sys.argv[1], sys.argv[2], int(sys.argv[3])
def verdicts(d):
    return {a["name"]: a["verdict"] for a in json.load(open(d + "/group.json"))["assertions"]}
vc, vw = verdicts(cold), verdicts(warm)
assert vc and vc == vw, "verdicts differ: cold %s, restored %s" % (vc, vw)
assert all(v == "pass" for v in vc.values()), "not every verdict passed: %s" % vc
def boots(d):
    return sorted(json.load(open(f))["boot"] for f in glob.glob(d + "/*/*/result.json"))
bc, bw = boots(cold), boots(warm)
assert bc == ["cold"] * (2 * repeats), "the cold matrix: %s" % bc
assert bw.count("restored") == 2 * repeats - 1 and bw.count("cold") == 1, "the restored matrix: %s" % bw
rows = {}
for name, d in (("cold", cold), ("restored", warm)):
    for r in json.load(open(d + "/compare.json"))["rows"]:
        if r["metric"] in ("vmstat.numa_pages_migrated", "locality.step.memfollow.cpu0.remote_fraction.user"):
            for v in r["variants"]:
                rows.setdefault((r["metric"], v["name"]), {})[name] = (v.get("mean"), v.get("stddev"))
for (m, v), x in sorted(rows.items()):
    pct = lambda mean, sd: "±%.2g%%" % (100 * sd / mean) if mean and sd is not None else "±-"
    print("%s %s: " % (m, v) + ", ".join("%s %.4g %s" % (k, x[k][0] or 0, pct(*x[k])) for k in ("cold", "restored") if k in x))
print("verdicts: %s" % vc)
PY
)
rc=$?
echo "$out" | sed 's/^/# /'
check "the same verdicts cold and restored, every run but the first restored" test "$rc" = 0
check "no guest left" no_domain_left
check "no QEMU left" no_qemu_left
finish
