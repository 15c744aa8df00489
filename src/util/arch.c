#include "util/arch.h"

#include <elf.h>
#include <string.h>

static const struct vn_arch_info arches[VN_ARCH_COUNT] = {
	[VN_ARCH_X86_64] = {"x86_64", "amd64", "x86_64", "q35", "x86_64-linux-gnu", "ttyS0", "qemu-system-x86_64",
			    "qemu-system-x86", "amd64", EM_X86_64, "x86", "bzImage", "arch/x86/boot/bzImage"},
	/* PL011 on the virt machine; QEMU boots the uncompressed Image directly. */
	[VN_ARCH_ARM64] = {"arm64", "arm64", "aarch64", "virt", "aarch64-linux-gnu", "ttyAMA0", "qemu-system-aarch64",
			   "qemu-system-arm", "arm64", EM_AARCH64, "arm64", "Image", "arch/arm64/boot/Image"},
	/* pseries' console is the hypervisor's virtual terminal (spapr-vty); SLOF boots the ELF vmlinux. */
	[VN_ARCH_PPC64LE] = {"ppc64le", "ppc64el", "ppc64le", "pseries", "powerpc64le-linux-gnu", "hvc0",
			     "qemu-system-ppc64", "qemu-system-ppc", "powerpc64le", EM_PPC64, "powerpc", "vmlinux",
			     "vmlinux"},
};

const struct vn_arch_info *vn_arch_info(enum vn_arch a)
{
	return &arches[a < VN_ARCH_COUNT ? a : VN_ARCH_X86_64];
}

const char *vn_arch_name(enum vn_arch a)
{
	return vn_arch_info(a)->name;
}

enum vn_arch vn_arch_host(void)
{
#if defined(__aarch64__)
	return VN_ARCH_ARM64;
#elif defined(__powerpc64__) && defined(__LITTLE_ENDIAN__)
	return VN_ARCH_PPC64LE;
#else
	return VN_ARCH_X86_64;
#endif
}

int vn_arch_parse(const char *s, const char *what, enum vn_arch *out, struct vn_error *err)
{
	static const struct {
		const char *alias;
		enum vn_arch a;
	} aliases[] = {{"amd64", VN_ARCH_X86_64}, {"aarch64", VN_ARCH_ARM64}, {"ppc64el", VN_ARCH_PPC64LE}};

	for (int a = 0; s && a < VN_ARCH_COUNT; a++)
		if (strcmp(s, arches[a].name) == 0) {
			*out = (enum vn_arch)a;
			return 0;
		}
	for (size_t i = 0; s && i < sizeof(aliases) / sizeof(aliases[0]); i++)
		if (strcmp(s, aliases[i].alias) == 0) {
			*out = aliases[i].a;
			return 0;
		}
	return vn_input_error(err, "%s: '%s': expected x86_64, arm64 or ppc64le", what, s ? s : "");
}
