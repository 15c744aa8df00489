#include "guest/elf-deps.h"

#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "util/alloc.h"
#include "util/cleanup.h"

/* The other architectures' multiarch folders too: lib_fits() passes over a library of another machine. */
static const char *const lib_dirs[] = {
	VN_ELF_LIB_DIR,
	"/usr/lib/" VN_ELF_MULTIARCH,
	"/lib/aarch64-linux-gnu",
	"/usr/lib/aarch64-linux-gnu",
	"/lib/powerpc64le-linux-gnu",
	"/usr/lib/powerpc64le-linux-gnu",
	"/lib64",
	"/usr/lib64",
	"/lib",
	"/usr/lib",
};

VN_DEFINE_CLEANUP(Elf *, elf_end);

void vn_elf_deps_free(struct vn_elf_deps *d)
{
	free(d->interp);
	vn_strvfreep(&d->needed);
	free(d->runpath);
	memset(d, 0, sizeof(*d));
}

static char *strtab_get(const char *tab, uint64_t size, uint64_t off)
{
	if (off >= size)
		return NULL;
	return vn_xstrndup(tab + off, size - off);
}

/* Bytes [off, off + len) of the file, or NULL where libelf finds them outside it. */
static const char *chunk(Elf *e, uint64_t off, uint64_t len)
{
	Elf_Data *data = elf_getdata_rawchunk(e, (int64_t)off, (size_t)len, ELF_T_BYTE);

	return data && data->d_size == len ? data->d_buf : NULL;
}

/* The file offset of virtual address va: the PT_LOAD that maps it from the file. */
static uint64_t file_offset(Elf *e, size_t phnum, uint64_t va)
{
	GElf_Phdr ph;

	for (size_t i = 0; i < phnum; i++)
		if (gelf_getphdr(e, (int)i, &ph) && ph.p_type == PT_LOAD && va >= ph.p_vaddr &&
		    va - ph.p_vaddr < ph.p_filesz)
			return ph.p_offset + (va - ph.p_vaddr);
	return UINT64_MAX;
}

/*
 * libelf reads the headers in either class and byte order. The dynamic
 * section is found through the program headers, as ld.so finds it, so that
 * a file whose section headers were stripped reads the same.
 */
int vn_elf_read_deps(const char *path, struct vn_elf_deps *d, struct vn_error *err)
{
	_cleanup_close_ int fd = open(path, O_RDONLY | O_CLOEXEC);
	_cleanup_(elf_endp) Elf *e = NULL;
	_cleanup_free_ uint64_t *needed = NULL;
	GElf_Ehdr eh;
	GElf_Phdr ph;
	GElf_Dyn dyn;
	Elf_Data *dyns = NULL;
	uint64_t strtab_va = 0, strsz = 0, runpath = UINT64_MAX;
	size_t phnum, n_needed = 0, n_dyn = 0;

	memset(d, 0, sizeof(*d));
	if (fd < 0)
		return vn_infra_error(err, -errno, "%s: %s", path, strerror(errno));
	if (elf_version(EV_CURRENT) == EV_NONE)
		return vn_infra_error(err, -ENOTSUP, "%s: libelf: %s", path, elf_errmsg(-1));
	e = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	if (!e || elf_kind(e) != ELF_K_ELF || !gelf_getehdr(e, &eh))
		return 0; /* not ELF: a script or data, nothing to resolve */
	d->is_elf = true;
	d->elf_class = eh.e_ident[EI_CLASS];
	d->machine = eh.e_machine;
	if (elf_getphdrnum(e, &phnum) < 0)
		return vn_infra_error(err, -EINVAL, "%s: malformed ELF program headers: %s", path, elf_errmsg(-1));

	for (size_t i = 0; i < phnum; i++) {
		if (!gelf_getphdr(e, (int)i, &ph))
			return vn_infra_error(err, -EINVAL, "%s: truncated ELF program headers: %s", path,
					      elf_errmsg(-1));
		if (ph.p_type == PT_INTERP && !d->interp) {
			const char *s =
				ph.p_filesz && ph.p_filesz <= PATH_MAX ? chunk(e, ph.p_offset, ph.p_filesz) : NULL;
			if (!s)
				return vn_infra_error(err, -EINVAL, "%s: malformed or truncated PT_INTERP", path);
			d->interp = vn_xstrndup(s, ph.p_filesz);
		} else if (ph.p_type == PT_DYNAMIC && !dyns) {
			dyns = elf_getdata_rawchunk(e, (int64_t)ph.p_offset, ph.p_filesz, ELF_T_DYN);
			if (!dyns)
				return vn_infra_error(err, -EINVAL, "%s: truncated PT_DYNAMIC: %s", path,
						      elf_errmsg(-1));
			n_dyn = dyns->d_size / gelf_fsize(e, ELF_T_DYN, 1, EV_CURRENT);
		}
	}
	if (!dyns)
		return 0;

	needed = vn_xmalloc((n_dyn + 1) * sizeof(*needed));
	for (size_t i = 0; i < n_dyn && gelf_getdyn(dyns, (int)i, &dyn) && dyn.d_tag != DT_NULL; i++) {
		switch (dyn.d_tag) {
		case DT_STRTAB: strtab_va = dyn.d_un.d_ptr; break;
		case DT_STRSZ: strsz = dyn.d_un.d_val; break;
		case DT_NEEDED: needed[n_needed++] = dyn.d_un.d_val; break;
		case DT_RUNPATH:
		case DT_RPATH: runpath = dyn.d_un.d_val; break;
		}
	}
	if (n_needed == 0 && runpath == UINT64_MAX)
		return 0;

	/* DT_STRTAB is an address; the PT_LOAD covering it gives the file offset. */
	uint64_t strtab_off = file_offset(e, phnum, strtab_va);
	const char *strtab = strtab_off != UINT64_MAX && strsz > 0 ? chunk(e, strtab_off, strsz) : NULL;
	if (!strtab)
		return vn_infra_error(err, -EINVAL, "%s: cannot locate the dynamic string table", path);

	d->needed = vn_xmalloc((n_needed + 1) * sizeof(char *));
	d->needed[0] = NULL;
	for (size_t i = 0; i < n_needed; i++) {
		char *s = strtab_get(strtab, strsz, needed[i]);
		if (!s)
			return vn_infra_error(err, -EINVAL, "%s: bad DT_NEEDED entry", path);
		d->needed[d->n_needed++] = s;
		d->needed[d->n_needed] = NULL;
	}
	if (runpath != UINT64_MAX)
		d->runpath = strtab_get(strtab, strsz, runpath);
	return 0;
}

/* ld.so passes over a library of another class or machine and looks on; so do we. */
static bool lib_fits(const char *path, const struct vn_elf_deps *of)
{
	struct vn_elf_deps lib;
	struct vn_error e = {0};

	if (access(path, F_OK) != 0)
		return false;
	if (!of || !of->is_elf)
		return true;
	int r = vn_elf_read_deps(path, &lib, &e);
	vn_error_clear(&e);
	bool fits = r == 0 && lib.is_elf && lib.elf_class == of->elf_class && lib.machine == of->machine;
	vn_elf_deps_free(&lib);
	return fits;
}

char *vn_elf_find_lib(const char *name, const struct vn_elf_deps *of, const char *origin, const char *sysroot)
{
	const char *runpath = of ? of->runpath : NULL;
	const char *sr = sysroot ? sysroot : "";
	char buf[PATH_MAX];

	if (strchr(name, '/')) {
		snprintf(buf, sizeof(buf), "%s%s", sr, name);
		return lib_fits(buf, of) ? vn_xstrdup(buf) : NULL;
	}
	if (runpath) {
		_cleanup_free_ char *copy = vn_xstrdup(runpath);
		char *save = NULL;
		for (char *dir = strtok_r(copy, ":", &save); dir; dir = strtok_r(NULL, ":", &save)) {
			if (strncmp(dir, "$ORIGIN", 7) == 0)
				snprintf(buf, sizeof(buf), "%s%s/%s", origin, dir + 7, name);
			else
				snprintf(buf, sizeof(buf), "%s%s/%s", sr, dir, name);
			if (lib_fits(buf, of))
				return vn_xstrdup(buf);
		}
	}
	for (size_t i = 0; i < VN_ARRAY_SIZE(lib_dirs); i++) {
		snprintf(buf, sizeof(buf), "%s%s/%s", sr, lib_dirs[i], name);
		if (lib_fits(buf, of))
			return vn_xstrdup(buf);
	}
	return NULL;
}
