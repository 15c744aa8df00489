#!/bin/bash
# Slow test (ctest -L kernel-build; not in scripts/test.sh): builds the
# minimal-numa and fallback-revert recipes from Debian's linux-source-6.1,
# checks that a second build is a cache hit and that the revert reuses the
# minimal build tree (patch-only rebuild), and prints the times.
# usage: kernel-build.sh PATH/TO/vnuma   (VN_SOURCE_DIR: the repository)
set -euo pipefail

vnuma=$1
cd "${VN_SOURCE_DIR:?}"
if [ ! -r /usr/src/linux-source-6.1.tar.xz ]; then
	echo "SKIP: Debian's linux-source-6.1 is not installed" >&2
	exit 0
fi
# A state directory of its own: the checks below count what one cold run leaves.
export VNUMA_STATE_DIR=${VN_KERNEL_BUILD_STATE:-$(mktemp -d /tmp/vnuma-kernel-build.XXXXXX)}
echo "state: $VNUMA_STATE_DIR"

t0=$(date +%s)
"$vnuma" kernel build kernels/minimal-numa.json
t1=$(date +%s)
"$vnuma" kernel build kernels/minimal-numa.json | tee /dev/stderr | grep -q ': cached '
t2=$(date +%s)
"$vnuma" kernel build kernels/fallback-revert.json
t3=$(date +%s)
"$vnuma" kernel list

cache=$VNUMA_STATE_DIR/cache/kernels
# Both recipes share one (source, config) build tree: the revert only recompiled its file.
[ "$(ls -d "$cache"/work/*/ | wc -l)" = 1 ] || { echo "FAIL: expected one shared build tree" >&2; exit 1; }
grep -q 'load--;' "$cache"/work/*/src/mm/page_alloc.c || { echo "FAIL: revert not applied" >&2; exit 1; }
# The pristine tree stayed pristine (patch broke the hard link).
if grep -q 'load--;' "$cache"/src/*/tree/mm/page_alloc.c; then
	echo "FAIL: the pristine tree was modified through a hard link" >&2
	exit 1
fi
[ "$(ls "$cache"/kernels | grep -vc '^failed-')" -ge 2 ] || { echo "FAIL: expected two cached kernels" >&2; exit 1; }
echo "minimal-numa cold: $((t1 - t0)) s; cache hit: $((t2 - t1)) s; fallback-revert (patch only): $((t3 - t2)) s"
