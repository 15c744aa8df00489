/*
 * The guest architectures vnuma boots: what differs between them is data
 * (names in Debian, libvirt and the GNU toolchain, the machine, the console),
 * looked up here once, so that no layer switches on an architecture's name.
 */
#pragma once

#include <stdbool.h>

#include "util/error.h"

enum vn_arch {
	VN_ARCH_X86_64,
	VN_ARCH_ARM64,
	VN_ARCH_PPC64LE,
	VN_ARCH_COUNT,
};

struct vn_arch_info {
	const char *name;     /* vnuma's: "x86_64", "arm64", "ppc64le" */
	const char *deb;      /* Debian's: "amd64", "arm64", "ppc64el" */
	const char *libvirt;  /* <type arch=>: "x86_64", "aarch64", "ppc64le" */
	const char *machine;  /* "q35", "virt", "pseries" */
	const char *triplet;  /* GNU multiarch: "aarch64-linux-gnu" */
	const char *console;  /* the kernel's console device for the serial log */
	const char *emulator; /* qemu-system-* binary */
	const char *qemu_deb; /* the Debian package that has it */
	const char *flavour;  /* Debian kernel flavour: linux-image-FLAVOUR */
	int elf_machine;      /* e_machine of its programs */
	const char *karch;    /* the kernel's ARCH=: "x86", "arm64", "powerpc" */
	const char *kimage;   /* the make target of what boots, and where it lands under O= */
	const char *kimage_path;
};

/* vnuma's names, in enum order: what a scenario's "arch" takes. */
#define VN_ARCH_NAMES "x86_64", "arm64", "ppc64le"

const struct vn_arch_info *vn_arch_info(enum vn_arch a);
const char *vn_arch_name(enum vn_arch a);

/* The architecture vnuma itself was built for. */
enum vn_arch vn_arch_host(void);

/*
 * vnuma's name, or Debian's, libvirt's or uname's ("aarch64", "ppc64el",
 * "amd64"); anything else is an input error naming what (an option or a
 * JSON path) and the value.
 */
int vn_arch_parse(const char *s, const char *what, enum vn_arch *out, struct vn_error *err);
