#include "guest/elf-deps.h"

#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "util/alloc.h"
#include "util/cleanup.h"

static const char *const lib_dirs[] = {
	VN_ELF_LIB_DIR, "/usr/lib/" VN_ELF_MULTIARCH, "/lib64", "/usr/lib64", "/lib", "/usr/lib",
};

void vn_elf_deps_free(struct vn_elf_deps *d)
{
	free(d->interp);
	vn_strvfreep(&d->needed);
	free(d->runpath);
	memset(d, 0, sizeof(*d));
}

static int pread_all(int fd, void *buf, size_t len, uint64_t off, uint64_t size)
{
	if (off > size || len > size - off)
		return -EINVAL;
	ssize_t n = pread(fd, buf, len, (off_t)off);
	if (n < 0)
		return -errno;
	return (size_t)n == len ? 0 : -EIO;
}

static char *strtab_get(const char *tab, uint64_t size, uint64_t off)
{
	if (off >= size)
		return NULL;
	return vn_xstrndup(tab + off, size - off);
}

int vn_elf_read_deps(const char *path, struct vn_elf_deps *d, struct vn_error *err)
{
	_cleanup_close_ int fd = open(path, O_RDONLY | O_CLOEXEC);
	_cleanup_free_ Elf64_Phdr *ph = NULL;
	_cleanup_free_ Elf64_Dyn *dyn = NULL;
	_cleanup_free_ char *strtab = NULL;
	_cleanup_free_ uint64_t *needed = NULL;
	Elf64_Ehdr eh;
	struct stat st;
	uint64_t strtab_va = 0, strsz = 0, runpath = UINT64_MAX;
	size_t n_needed = 0, n_dyn = 0;
	int r;

	memset(d, 0, sizeof(*d));
	if (fd < 0 || fstat(fd, &st) < 0)
		return vn_infra_error(err, -errno, "%s: %s", path, strerror(errno));
	uint64_t size = (uint64_t)st.st_size;
	if (pread_all(fd, &eh, sizeof(eh), 0, size) < 0 || memcmp(eh.e_ident, ELFMAG, SELFMAG) != 0)
		return 0; /* not ELF: a script or data, nothing to resolve */
	d->is_elf = true;
	if (eh.e_ident[EI_CLASS] != ELFCLASS64 || eh.e_ident[EI_DATA] != ELFDATA2LSB)
		return vn_infra_error(err, -ENOTSUP, "%s: only 64-bit little-endian ELF files are supported", path);
	if (eh.e_phnum == 0)
		return 0;
	if (eh.e_phentsize != sizeof(Elf64_Phdr))
		return vn_infra_error(err, -EINVAL, "%s: malformed ELF program headers", path);
	ph = vn_xmalloc((size_t)eh.e_phnum * sizeof(*ph));
	if (pread_all(fd, ph, (size_t)eh.e_phnum * sizeof(*ph), eh.e_phoff, size) < 0)
		return vn_infra_error(err, -EINVAL, "%s: truncated ELF program headers", path);

	for (unsigned i = 0; i < eh.e_phnum; i++) {
		if (ph[i].p_type == PT_INTERP && !d->interp) {
			if (ph[i].p_filesz == 0 || ph[i].p_filesz > PATH_MAX)
				return vn_infra_error(err, -EINVAL, "%s: malformed PT_INTERP", path);
			char buf[PATH_MAX + 1];
			if (pread_all(fd, buf, ph[i].p_filesz, ph[i].p_offset, size) < 0)
				return vn_infra_error(err, -EINVAL, "%s: truncated PT_INTERP", path);
			buf[ph[i].p_filesz] = '\0';
			d->interp = vn_xstrdup(buf);
		} else if (ph[i].p_type == PT_DYNAMIC && !dyn) {
			n_dyn = ph[i].p_filesz / sizeof(*dyn);
			dyn = vn_xmalloc(n_dyn * sizeof(*dyn) + 1);
			if (pread_all(fd, dyn, n_dyn * sizeof(*dyn), ph[i].p_offset, size) < 0)
				return vn_infra_error(err, -EINVAL, "%s: truncated PT_DYNAMIC", path);
		}
	}
	if (!dyn)
		return 0;

	needed = vn_xmalloc((n_dyn + 1) * sizeof(*needed));
	for (size_t i = 0; i < n_dyn && dyn[i].d_tag != DT_NULL; i++) {
		switch (dyn[i].d_tag) {
		case DT_STRTAB: strtab_va = dyn[i].d_un.d_ptr; break;
		case DT_STRSZ: strsz = dyn[i].d_un.d_val; break;
		case DT_NEEDED: needed[n_needed++] = dyn[i].d_un.d_val; break;
		case DT_RUNPATH:
		case DT_RPATH: runpath = dyn[i].d_un.d_val; break;
		}
	}
	if (n_needed == 0 && runpath == UINT64_MAX)
		return 0;

	/* DT_STRTAB is an address; the PT_LOAD covering it gives the file offset. */
	uint64_t strtab_off = UINT64_MAX;
	for (unsigned i = 0; i < eh.e_phnum; i++)
		if (ph[i].p_type == PT_LOAD && strtab_va >= ph[i].p_vaddr && strtab_va - ph[i].p_vaddr < ph[i].p_filesz)
			strtab_off = ph[i].p_offset + (strtab_va - ph[i].p_vaddr);
	if (strtab_off == UINT64_MAX || strsz == 0 || strsz > size)
		return vn_infra_error(err, -EINVAL, "%s: cannot locate the dynamic string table", path);
	strtab = vn_xmalloc(strsz);
	r = pread_all(fd, strtab, strsz, strtab_off, size);
	if (r < 0)
		return vn_infra_error(err, r, "%s: truncated dynamic string table", path);

	d->needed = vn_xmalloc((n_needed + 1) * sizeof(char *));
	for (size_t i = 0; i < n_needed; i++) {
		char *s = strtab_get(strtab, strsz, needed[i]);
		if (!s)
			return vn_infra_error(err, -EINVAL, "%s: bad DT_NEEDED entry", path);
		d->needed[d->n_needed++] = s;
		d->needed[d->n_needed] = NULL;
	}
	d->needed[d->n_needed] = NULL;
	if (runpath != UINT64_MAX)
		d->runpath = strtab_get(strtab, strsz, runpath);
	return 0;
}

char *vn_elf_find_lib(const char *name, const char *runpath, const char *origin)
{
	char buf[PATH_MAX];

	if (strchr(name, '/'))
		return access(name, F_OK) == 0 ? vn_xstrdup(name) : NULL;
	if (runpath) {
		_cleanup_free_ char *copy = vn_xstrdup(runpath);
		char *save = NULL;
		for (char *dir = strtok_r(copy, ":", &save); dir; dir = strtok_r(NULL, ":", &save)) {
			if (strncmp(dir, "$ORIGIN", 7) == 0)
				snprintf(buf, sizeof(buf), "%s%s/%s", origin, dir + 7, name);
			else
				snprintf(buf, sizeof(buf), "%s/%s", dir, name);
			if (access(buf, F_OK) == 0)
				return vn_xstrdup(buf);
		}
	}
	for (size_t i = 0; i < VN_ARRAY_SIZE(lib_dirs); i++) {
		snprintf(buf, sizeof(buf), "%s/%s", lib_dirs[i], name);
		if (access(buf, F_OK) == 0)
			return vn_xstrdup(buf);
	}
	return NULL;
}
