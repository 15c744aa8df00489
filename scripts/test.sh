#!/bin/sh
# The whole test suite, as CI runs it:
#   1. set-up and a -Werror build, unit tests (cmocka, corpora, golden files);
#   2. an ASan+UBSan build, unit tests again under the sanitizers;
#   3. integration tests that boot real guests under TCG (label "integration"),
#      among them one real kernel bisection.
# VN_SKIP_INTEGRATION=1 skips step 3 (e.g. on a machine without QEMU).
set -eu

top=$(cd "$(dirname "$0")/.." && pwd)
# setup.sh ends with `vnuma doctor` (real probe boots); without integration tests there may be no QEMU to probe.
# --arches: the arm64 and ppc64le boots are integration tests too (docs/arches.md).
VN_SKIP_DOCTOR=${VN_SKIP_DOCTOR:-${VN_SKIP_INTEGRATION:-0}} VN_CMAKE_ARGS="-DVN_WERROR=ON" "$top/scripts/setup.sh" --arches

echo "== unit tests"
(cd "$top/build" && ctest --output-on-failure -L unit)

echo "== unit tests under ASan+UBSan"
cmake -S "$top" -B "$top/build-asan" -DVN_SANITIZE=ON -DVN_WERROR=ON -DCMAKE_BUILD_TYPE=Debug >/dev/null
cmake --build "$top/build-asan" -j"$(nproc)"
(cd "$top/build-asan" && ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1 \
	ctest --output-on-failure -L unit)

if [ "${VN_SKIP_INTEGRATION:-0}" = 1 ]; then
	echo "== integration tests skipped (VN_SKIP_INTEGRATION=1)"
	exit 0
fi
echo "== integration tests (boot real guests under TCG)"
# -j2: the tests that boot guests hold one lock and run one at a time; beside
# them, integration-bisect-tree builds a kernel at autogroup nice 19 in their idle time.
(cd "$top/build" && ctest -j2 --output-on-failure -L integration)
