/* Which vmlinux belongs to a booted kernel (vmlinux.h). */
#include "kernel/vmlinux.h"

#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "kernel/kernel-priv.h"
#include "util/alloc.h"
#include "util/cleanup.h"
#include "util/dir.h"
#include "util/strbuf.h"

/* A build id longer than this is no linker's (ld writes 20 bytes). */
#define BUILD_ID_MAX 64

char *vn_vmlinux_debian_dbg(const char *root, const char *release)
{
	return vn_xasprintf("%s/usr/lib/debug/boot/vmlinux-%s", root, release);
}

static char *hex(const unsigned char *p, size_t n)
{
	char *s = vn_xmalloc(2 * n + 1);

	for (size_t i = 0; i < n; i++)
		snprintf(s + 2 * i, 3, "%02x", p[i]);
	s[2 * n] = '\0';
	return s;
}

/* The first NT_GNU_BUILD_ID note among e's sections. */
static char *elf_note_build_id(Elf *e)
{
	Elf_Scn *scn = NULL;
	GElf_Shdr sh;

	while ((scn = elf_nextscn(e, scn))) {
		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_NOTE)
			continue;
		Elf_Data *d = elf_getdata(scn, NULL);
		size_t off = 0, name, desc;
		GElf_Nhdr nh;
		while (d && (off = gelf_getnote(d, off, &nh, &name, &desc)) > 0)
			if (nh.n_type == NT_GNU_BUILD_ID && nh.n_namesz == 4 &&
			    memcmp((char *)d->d_buf + name, "GNU", 4) == 0 && nh.n_descsz > 0 &&
			    nh.n_descsz <= BUILD_ID_MAX)
				return hex((unsigned char *)d->d_buf + desc, nh.n_descsz);
	}
	return NULL;
}

int vn_elf_build_id(const char *path, char **out, struct vn_error *err)
{
	_cleanup_close_ int fd = open(path, O_RDONLY | O_CLOEXEC);
	Elf *e;

	*out = NULL;
	if (fd < 0)
		return vn_infra_error(err, -errno, "cannot open %s: %s", path, strerror(errno));
	if (elf_version(EV_CURRENT) == EV_NONE || !(e = elf_begin(fd, ELF_C_READ_MMAP, NULL)))
		return vn_input_error(err, "%s is not an ELF file", path);
	if (elf_kind(e) != ELF_K_ELF) {
		elf_end(e);
		return vn_input_error(err, "%s is not an ELF file", path);
	}
	*out = elf_note_build_id(e);
	elf_end(e);
	return 0;
}

/* An ELF file with a symbol table: what gdb needs to name anything. */
static bool has_symbols(const char *path)
{
	_cleanup_close_ int fd = open(path, O_RDONLY | O_CLOEXEC);
	Elf_Scn *scn = NULL;
	GElf_Shdr sh;
	bool found = false;
	Elf *e;

	if (fd < 0 || elf_version(EV_CURRENT) == EV_NONE || !(e = elf_begin(fd, ELF_C_READ_MMAP, NULL)))
		return false;
	while (!found && (scn = elf_nextscn(e, scn)))
		found = gelf_getshdr(scn, &sh) && sh.sh_type == SHT_SYMTAB;
	elf_end(e);
	return found;
}

static char *beside(const char *path, const char *name)
{
	const char *slash = strrchr(path, '/');

	return slash ? vn_xasprintf("%.*s/%s", (int)(slash - path), path, name) : vn_xstrdup(name);
}

/* One word of a command to paste into a shell: as is when it needs no quoting. */
static void shell_word(struct vn_strbuf *b, const char *w)
{
	if (*w && strspn(w, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789/._+-=:,@") == strlen(w)) {
		vn_strbuf_printf(b, " %s", w);
		return;
	}
	vn_strbuf_printf(b, " '");
	for (const char *p = w; *p; p++)
		vn_strbuf_printf(b, *p == '\'' ? "'\\''" : "%c", *p);
	vn_strbuf_printf(b, "'");
}

char *vn_vmlinux_recipe_hint(const char *image, const char *release)
{
	const char *slash = image ? strrchr(image, '/') : NULL;
	_cleanup_kernel_built_ struct vn_kernel_built *b = NULL;
	_cleanup_free_ char *dir = slash ? vn_xstrndup(image, (size_t)(slash - image)) : NULL;
	_cleanup_strbuf_ struct vn_strbuf cmd = VN_STRBUF_INIT;

	if (!dir || vn_kernel_cache_load(dir, &b) < 0)
		return NULL;
	vn_strbuf_printf(&cmd, "vnuma kernel build --debug");
	if (b->arch != vn_arch_host())
		vn_strbuf_printf(&cmd, " --arch %s", vn_arch_name(b->arch));
	/* A git tree: the same one, and the same commit where the build was of a commit alone (bisect's, --rev's). */
	if (b->commit && b->tree_path) {
		vn_strbuf_printf(&cmd, " --repo");
		shell_word(&cmd, b->tree_path);
		if (b->commit_only)
			vn_strbuf_printf(&cmd, " --rev %s", b->commit);
	}
	shell_word(&cmd, b->recipe_path && *b->recipe_path ? b->recipe_path : b->recipe);
	return vn_xasprintf("no vmlinux with debug info for %s: recipe %s's kernel (%.16s) was built without it; "
			    "build it with debug info: %s, then boot the image it prints (--kernel IMAGE), or set "
			    "\"debug\": true in the recipe and boot the recipe",
			    release      ? release
			    : b->release ? b->release
					 : "?",
			    b->recipe, b->key, cmd.s);
}

int vn_vmlinux_find(const char *root, const char *image, const char *release, struct vn_vmlinux *out,
		    struct vn_error *err)
{
	char *cand[2] = {image ? beside(image, "vmlinux") : NULL,
			 release ? vn_vmlinux_debian_dbg(root, release) : NULL};
	int rc = 0;

	memset(out, 0, sizeof(*out));
	for (size_t i = 0; i < 2 && !out->path; i++)
		if (cand[i] && vn_is_file(cand[i]) && has_symbols(cand[i]))
			out->path = vn_xstrdup(cand[i]);
	free(cand[0]);
	free(cand[1]);
	if (!out->path && (out->hint = vn_vmlinux_recipe_hint(image, release)))
		return 0;
	if (!out->path) {
		out->hint =
			release ? vn_xasprintf("no vmlinux with symbols for %s: for Debian's kernel, "
					       "'apt-get install linux-image-%s-dbg'; for a recipe, build it "
					       "with debug info",
					       release, release)
				: vn_xstrdup("no vmlinux with symbols: the guest does not say which kernel it booted");
		return 0;
	}
	_cleanup_free_ char *py = beside(out->path, "vmlinux-gdb.py");
	if (vn_is_file(py))
		out->gdb_py = steal_pointer(&py);
	if ((rc = vn_elf_build_id(out->path, &out->build_id, err)) < 0)
		vn_vmlinux_clear(out);
	return rc;
}

void vn_vmlinux_clear(struct vn_vmlinux *v)
{
	free(v->path);
	free(v->gdb_py);
	free(v->build_id);
	free(v->hint);
	memset(v, 0, sizeof(*v));
}

/* The VMCOREINFO note's KEY=value line in one PT_NOTE segment's notes, bounded; NULL if absent. */
static char *vmcoreinfo_in(Elf *e, const GElf_Phdr *ph, const char *key)
{
	Elf_Data *d = elf_getdata_rawchunk(e, (int64_t)ph->p_offset, ph->p_filesz, ELF_T_NHDR);
	size_t off = 0, name, desc, klen = strlen(key);
	GElf_Nhdr nh;

	while (d && (off = gelf_getnote(d, off, &nh, &name, &desc)) > 0) {
		if (nh.n_namesz != 11 || memcmp((char *)d->d_buf + name, "VMCOREINFO", 11) != 0)
			continue;
		const char *p = (char *)d->d_buf + desc, *end = p + nh.n_descsz;
		while (p < end) {
			const char *nl = memchr(p, '\n', (size_t)(end - p));
			size_t len = nl ? (size_t)(nl - p) : (size_t)(end - p);
			if (len > klen && memcmp(p, key, klen) == 0 && p[klen] == '=')
				return vn_xstrndup(p + klen + 1, len - klen - 1);
			p += len + 1;
		}
	}
	return NULL;
}

int vn_elf_vmcoreinfo(const char *path, const char *key, char **out, struct vn_error *err)
{
	_cleanup_close_ int fd = open(path, O_RDONLY | O_CLOEXEC);
	size_t n = 0;
	GElf_Phdr ph;
	Elf *e;

	*out = NULL;
	if (fd < 0)
		return vn_infra_error(err, -errno, "cannot open %s: %s", path, strerror(errno));
	if (elf_version(EV_CURRENT) == EV_NONE || !(e = elf_begin(fd, ELF_C_READ_MMAP, NULL)))
		return 0;
	/* A core's notes come first and are few; a dump with thousands of segments is not QEMU's. */
	if (elf_kind(e) == ELF_K_ELF && elf_getphdrnum(e, &n) == 0 && n <= 65536)
		for (size_t i = 0; i < n && !*out; i++)
			if (gelf_getphdr(e, (int)i, &ph) && ph.p_type == PT_NOTE)
				*out = vmcoreinfo_in(e, &ph, key);
	elf_end(e);
	return 0;
}
