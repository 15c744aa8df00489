#!/bin/bash
# scripts/kernel-backports.sh --deb FILE, offline: a stand-in linux-image
# package (dpkg-deb -b; two of the host's own modules, one needing the other, compressed as 6.12's
# are) becomes STATE/kernels/debian-6.12/root, with the modules.dep.bin that
# the package lacks and vnuma's initramfs needs (depmod), and a prebuilt
# recipe with paths relative to itself that vnuma loads. A second run
# replaces the tree. Bad usage exits 2. The download itself needs the
# network: tests/integration/tiers-6.12.sh's set-up says how it is used.
#   kernel-backports.sh VNUMA_BINARY SOURCE_DIR
set -u
vnuma=$1
src=$2
. "$(dirname "$0")/../lib.sh"
t=$(mktemp -d)
trap 'rm -rf "$t"' EXIT
script=$src/scripts/kernel-backports.sh

host=/lib/modules/$(ls /lib/modules | sort -V | tail -n 1)
rel=6.12.0-1-test
pkg=$t/pkg
mkdir -p "$pkg/DEBIAN" "$pkg/boot" "$pkg/lib/modules/$rel/kernel/drivers/dax" "$pkg/lib/modules/$rel/kernel/drivers/nvdimm"
printf 'Package: linux-image-%s\nVersion: 1\nArchitecture: amd64\nMaintainer: t <t@t>\nDescription: t\n' "$rel" \
	>"$pkg/DEBIAN/control"
echo "not a kernel" >"$pkg/boot/vmlinuz-$rel"
echo "CONFIG_NUMA=y" >"$pkg/boot/config-$rel"
for m in nvdimm/libnvdimm dax/dax_pmem; do
	xz -c "$host/kernel/drivers/$m.ko" >"$pkg/lib/modules/$rel/kernel/drivers/$m.ko.xz"
done
# What Debian's package has beside the modules (and no modules.dep).
: >"$pkg/lib/modules/$rel/modules.order"
: >"$pkg/lib/modules/$rel/modules.builtin"
: >"$pkg/lib/modules/$rel/modules.builtin.modinfo"
dpkg-deb -b -Zxz "$pkg" "$t/linux-image.deb" >/dev/null || { echo "FAIL - dpkg-deb -b"; exit 1; }

check "usage: an unknown option exits 2" test "$(rc "$script" --bogus)" = 2
check "usage: a missing --deb file exits 2" test "$(rc "$script" --deb "$t/none.deb" --state "$t/s")" = 2
check "--deb: unpacked, exit 0" "$script" --deb "$t/linux-image.deb" --state "$t/s"
k=$t/s/kernels
check "modules.dep.bin made by depmod" test -s "$k/debian-6.12/root/lib/modules/$rel/modules.dep.bin"
check "modules.dep: dax_pmem needs libnvdimm" \
	grep -qx "kernel/drivers/dax/dax_pmem.ko.xz: kernel/drivers/nvdimm/libnvdimm.ko.xz" \
	"$k/debian-6.12/root/lib/modules/$rel/modules.dep"
check "the recipe names the image, modules and config, relative to itself" python3 - "$k/debian-6.12.json" "$rel" <<'PY'
import json, os, sys
r = json.load(open(sys.argv[1]))
rel = sys.argv[2]
assert r["type"] == "prebuilt", r
assert r["image"] == "debian-6.12/root/boot/vmlinuz-" + rel, r
assert r["modules"] == "debian-6.12/root/lib/modules/" + rel, r
assert r["config"] == "debian-6.12/root/boot/config-" + rel, r
d = os.path.dirname(sys.argv[1])
for key in ("image", "modules", "config"):
    assert os.path.exists(os.path.join(d, r[key])), key
PY
check "vnuma loads the recipe" sh -c "'$vnuma' kernel build '$k/debian-6.12.json' | grep -qx 'debian-6.12: a prebuilt recipe: nothing to build'"
check "the given .deb is left in place" test -f "$t/linux-image.deb"
touch "$k/debian-6.12/root/stale"
check "a second run: exit 0" "$script" --deb "$t/linux-image.deb" --state "$t/s"
check "a second run replaces the tree" test ! -e "$k/debian-6.12/root/stale"
check "nothing half-made is left" test ! -e "$k/debian-6.12/root.new" -a ! -e "$k/debian-6.12.json.new"
finish
