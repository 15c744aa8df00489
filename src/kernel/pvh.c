/*
 * The fast boot path: a bzImage's own ELF vmlinux, booted through its PVH
 * entry (QEMU loads an ELF kernel with a XEN_ELFNOTE_PHYS32_ENTRY note
 * straight into 32-bit mode: no real-mode setup, no firmware handover, and
 * no in-guest decompression, which under TCG is seconds of XZ). The vmlinux
 * is the payload the bzImage carries; it is extracted once and cached under
 * its bzImage's digest.
 */
#include <archive.h>
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "kernel/kernel.h"
#include "util/alloc.h"
#include "util/cleanup.h"
#include "util/dir.h"
#include "util/file.h"
#include "util/sha256.h"
#include "util/state.h"

/* A vmlinux is tens of MiB; anything that claims more is not one. */
#define VMLINUX_MAX (512u << 20)
#define BZIMAGE_MAX (256u << 20)
#define PVH_NOTE    18 /* XEN_ELFNOTE_PHYS32_ENTRY */

static uint32_t le32(const unsigned char *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

/* The compressed payload of a bzImage (boot protocol 2.08+: payload_offset/length at 0x248). */
static int payload(const unsigned char *img, size_t len, const unsigned char **p, size_t *plen)
{
	if (len < 0x250 || memcmp(img + 0x202, "HdrS", 4) != 0)
		return -EINVAL;
	if ((img[0x206] | img[0x207] << 8) < 0x208)
		return -ENOTSUP;
	size_t setup = ((size_t)(img[0x1f1] ? img[0x1f1] : 4) + 1) * 512;
	size_t off = setup + le32(img + 0x248), n = le32(img + 0x24c);
	if (off > len || n > len - off || n < 16)
		return -EINVAL;
	*p = img + off;
	*plen = n;
	return 0;
}

VN_DEFINE_CLEANUP(struct archive *, archive_read_free);

/* libarchive's raw format with every filter: gzip, xz, lzma, bzip2, lz4 and zstd kernels alike. */
static int decompress(const unsigned char *p, size_t n, char **out, size_t *outlen)
{
	_cleanup_(archive_read_freep) struct archive *a = archive_read_new();
	_cleanup_free_ char *buf = NULL;
	struct archive_entry *e;
	size_t cap = 64u << 20, len = 0;

	archive_read_support_filter_all(a);
	archive_read_support_format_raw(a);
	if (archive_read_open_memory(a, p, n) != ARCHIVE_OK || archive_read_next_header(a, &e) != ARCHIVE_OK)
		return -EBADMSG;
	buf = vn_xmalloc(cap);
	for (;;) {
		if (len == cap) {
			if (cap >= VMLINUX_MAX)
				return -EFBIG;
			cap *= 2;
			buf = vn_xreallocarray(buf, cap, 1);
		}
		la_ssize_t r = archive_read_data(a, buf + len, cap - len);
		if (r < 0)
			return -EBADMSG;
		if (r == 0)
			break;
		len += (size_t)r;
	}
	if (len <= sizeof(Elf64_Ehdr) || memcmp(buf, ELFMAG, SELFMAG) != 0)
		return -EBADMSG;
	*out = steal_pointer(&buf);
	*outlen = len;
	return 0;
}

/*
 * The kernel's build appends the uncompressed size after every compressed
 * stream but gzip's, whose own trailer ends in it: the last 4 bytes are the
 * length to expect either way, and a decoder that refuses those 4 trailing
 * bytes is given the stream without them.
 */
static int unpack(const unsigned char *p, size_t n, char **out, size_t *outlen)
{
	uint32_t want = le32(p + n - 4);

	if (decompress(p, n, out, outlen) < 0 && decompress(p, n - 4, out, outlen) < 0)
		return -EBADMSG;
	if (*outlen == want)
		return 0;
	free(*out);
	*out = NULL;
	return -EBADMSG;
}

VN_DEFINE_CLEANUP(Elf *, elf_end);

/* One PT_NOTE segment: gelf_getnote refuses a note whose sizes run past the segment. */
static bool segment_has_pvh(Elf *e, const GElf_Phdr *ph)
{
	if (ph->p_offset > INT64_MAX)
		return false;
	Elf_Data *d = elf_getdata_rawchunk(e, (int64_t)ph->p_offset, ph->p_filesz,
					   ph->p_align == 8 ? ELF_T_NHDR8 : ELF_T_NHDR);
	GElf_Nhdr nh;
	size_t off = 0, name, desc;

	if (!d)
		return false;
	while ((off = gelf_getnote(d, off, &nh, &name, &desc)) > 0)
		if (nh.n_type == PVH_NOTE && nh.n_namesz == 4 && memcmp((const char *)d->d_buf + name, "Xen", 4) == 0)
			return true;
	return false;
}

bool vn_kernel_elf_has_pvh(const char *elf, size_t len)
{
	GElf_Ehdr eh;
	size_t n;

	if (len < sizeof(Elf64_Ehdr) || elf_version(EV_CURRENT) == EV_NONE)
		return false;
	/* Read only: libelf converts into copies of its own, it does not write the image. */
	_cleanup_(elf_endp) Elf *e = elf_memory((char *)elf, len);
	if (!e || elf_kind(e) != ELF_K_ELF || gelf_getclass(e) != ELFCLASS64 || !gelf_getehdr(e, &eh) ||
	    eh.e_machine != EM_X86_64 || elf_getphdrnum(e, &n) < 0)
		return false;
	for (size_t i = 0; i < n; i++) {
		GElf_Phdr ph;
		/* NULL for a table that runs past the end of the file: not a vmlinux to boot. */
		if (!gelf_getphdr(e, (int)i, &ph))
			return false;
		if (ph.p_type == PT_NOTE && segment_has_pvh(e, &ph))
			return true;
	}
	return false;
}

int vn_kernel_pvh_image(const char *bzimage, const char *cache_dir, char **out, struct vn_error *err)
{
	uint8_t digest[VN_SHA256_LEN];
	char hex[VN_SHA256_HEX_LEN + 1];
	int rc;

	*out = NULL;
	if ((rc = vn_sha256_file_memo(bzimage, cache_dir, digest, err)) < 0)
		return rc;
	_cleanup_free_ char *dir = vn_cache_vmlinux_dir(cache_dir);
	_cleanup_free_ char *path = vn_xasprintf("%s/%s.elf", dir, vn_sha256_hex(digest, hex));
	_cleanup_free_ char *none = vn_xasprintf("%s/%s.none", dir, hex);
	struct stat st;
	/* Cached either way: the vmlinux, or the note that this bzImage has none to give. */
	if (stat(path, &st) == 0 && S_ISREG(st.st_mode)) {
		*out = steal_pointer(&path);
		return 1;
	}
	if (access(none, F_OK) == 0)
		return 0;
	if ((rc = vn_mkdir_p(dir, 0755, err)) < 0)
		return rc;

	_cleanup_free_ char *img = NULL, *elf = NULL;
	size_t len, plen, elen;
	const unsigned char *p;
	if ((rc = vn_file_read(bzimage, BZIMAGE_MAX, &img, &len, err)) < 0)
		return rc;
	bool pvh = payload((unsigned char *)img, len, &p, &plen) == 0 && unpack(p, plen, &elf, &elen) == 0 &&
		   vn_kernel_elf_has_pvh(elf, elen);
	if (!pvh)
		return vn_file_write_atomic(none, "", 0, 0644, err);
	if ((rc = vn_file_write_atomic(path, elf, elen, 0644, err)) < 0)
		return rc;
	*out = steal_pointer(&path);
	return 1;
}
