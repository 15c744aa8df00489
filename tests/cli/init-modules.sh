#!/bin/bash
# The guest init's module loop (src/guest/init.sh) loads a device's driver
# only for a guest with that device, whether the kernel's modules are plain
# .ko (Debian's 6.1) or .ko.xz (its 6.12 from bookworm-backports, which
# vnuma boots as a prebuilt recipe: scripts/kernel-backports.sh). Before,
# the names were matched with a literal ".ko", so 6.12 loaded virtio_blk,
# virtio_net and the NVDIMM/dax stack into every guest. The loop is run
# as init.sh has it (from the NFIT test to "modules loaded"), under sh, with
# insmod, has_virtio and its files stood in for.
#   init-modules.sh SOURCE_DIR
set -u
src=$1
. "$(dirname "$0")/../lib.sh"
t=$(mktemp -d)
trap 'rm -rf "$t"' EXIT

sed -n '/^\[ -e \/sys\/firmware\/acpi\/tables\/NFIT \]/,/^echo "vnuma-init: modules loaded"/p' \
	"$src/src/guest/init.sh" | sed -e "s|/sys/firmware/acpi/tables/NFIT|$t/NFIT|" \
	-e "s|/etc/vnuma/modules|$t/modules|g" >"$t/loop.sh"
check "init.sh has the module loop" grep -q 'insmod' "$t/loop.sh"

# SUFFIX: .ko or .ko.xz; VIRTIO: the device ids has_virtio finds; NFIT: 1 for an NVDIMM guest.
loaded() { # SUFFIX VIRTIO NFIT
	rm -f "$t/NFIT" "$t/loaded"
	[ "$3" = 1 ] && : >"$t/NFIT"
	for m in drivers/block/virtio_blk drivers/net/virtio_net drivers/net/net_failover net/core/failover \
		drivers/acpi/nfit/nfit drivers/nvdimm/libnvdimm drivers/nvdimm/nd_pmem drivers/dax/kmem \
		drivers/dax/device_dax net/9p/9pnet_virtio fs/9p/9p drivers/firmware/qemu_fw_cfg; do
		echo "/lib/modules/r/kernel/$m$1"
	done >"$t/modules"
	VIRTIO=$2 sh -c '
		has_virtio() { for id; do case " $VIRTIO " in *" $id "*) return 0 ;; esac; done; return 1; }
		insmod() { echo "${1##*/}" >>"'"$t"'/loaded"; }
		warn() { echo "warning: $*" >&2; }
		. "'"$t"'/loop.sh" >/dev/null' || return 1
	sed 's/\.ko.*//' "$t/loaded" | tr '\n' ' '
}

for s in .ko .ko.xz; do
	check "$s: no device: the 9p and fw_cfg modules only" \
		test "$(loaded $s '' 0)" = "9pnet_virtio 9p qemu_fw_cfg "
	check "$s: a virtio disk (modern id): virtio_blk too" \
		test "$(loaded $s 0x1042 0)" = "virtio_blk 9pnet_virtio 9p qemu_fw_cfg "
	check "$s: a virtio NIC (legacy id): virtio_net and its failover" \
		test "$(loaded $s 0x1000 0)" = "virtio_net net_failover failover 9pnet_virtio 9p qemu_fw_cfg "
	check "$s: an NFIT: the NVDIMM and dax modules" \
		test "$(loaded $s '' 1)" = "nfit libnvdimm nd_pmem kmem device_dax 9pnet_virtio 9p qemu_fw_cfg "
done
finish
